package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/synth"
)

// wholeReads is a backend that reads every citation whole: it hides
// citestore's Members, so that a lineage reads its neighbourhood with
// Citations.
type wholeReads struct{ store.Reader }

func (w wholeReads) View(ctx context.Context, fn func(store.Reader) error) error {
	return w.Reader.(store.Viewer).View(ctx, func(v store.Reader) error { return fn(wholeReads{v}) })
}

// leanReads counts the citations a lineage reads lean (Members).
type leanReads struct {
	store.Reader
	n *int
}

func (l leanReads) View(ctx context.Context, fn func(store.Reader) error) error {
	return l.Reader.(store.Viewer).View(ctx, func(v store.Reader) error { return fn(leanReads{v, l.n}) })
}

func (l leanReads) Members(ctx context.Context, d string, ids []string) ([]*store.Citation, error) {
	*l.n += len(ids)
	return l.Reader.(interface {
		Members(context.Context, string, []string) ([]*store.Citation, error)
	}).Members(ctx, d, ids)
}

// TestLineageLeanNeighbourhood: a lineage that reads the members of its
// neighbourhood lean (citestore's Members: no answer, engine, passages,
// parsed step log or extraction details) prints exactly what it prints
// reading them whole, for every citation of the example and of a
// synthetic database with redirects, shared content and relations.
func TestLineageLeanNeighbourhood(t *testing.T) {
	var b bytes.Buffer
	if err := synth.New(synth.Options{Seed: 5, Sites: 20}).Write(&b, 400); err != nil {
		t.Fatal(err)
	}
	synthetic := filepath.Join(t.TempDir(), "synth.jsonl")
	if err := os.WriteFile(synthetic, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, file string }{{"example", exampleCitations}, {"synthetic", synthetic}} {
		t.Run(tc.name, func(t *testing.T) {
			st := lineageStore(t, []string{tc.file}, normalize.Default())
			ctx := context.Background()
			snap, err := query.Load(ctx, citestore.New(st), "")
			if err != nil {
				t.Fatal(err)
			}
			lean := 0
			for _, c := range snap.Citations {
				got, err := query.LineageOf(ctx, leanReads{citestore.New(st), &lean}, c.ID, nil)
				if err != nil {
					t.Fatal(err)
				}
				want, err := query.LineageOf(ctx, wholeReads{citestore.New(st)}, c.ID, nil)
				if err != nil {
					t.Fatal(err)
				}
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if !bytes.Equal(g, w) {
					t.Errorf("LineageOf(%q) reading the neighbourhood lean =\n%s\nwant (read whole)\n%s", c.ID, g, w)
				}
			}
			if lean == 0 {
				t.Errorf("no citation was read lean: the test compares nothing")
			}
			t.Logf("%d citations, %d read lean", len(snap.Citations), lean)
		})
	}
}
