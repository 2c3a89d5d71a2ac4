package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
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

// addEvidence adds an extraction to every retrieval of snap's citations,
// two for some (a re-extraction by a newer extractor), with text digests
// and SimHashes shared across keys and some soft errors, and a passage
// check to every other citation: what a lean read leaves out (extraction
// details, passages) and what it must keep (the current extraction's
// evidence).
func addEvidence(t testing.TB, st *graph.Store, snap *query.Snapshot) {
	t.Helper()
	m, err := citestore.NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	var quads []graph.Quad
	for i, c := range snap.Citations {
		for j, rt := range c.Retrievals {
			for v := range 1 + (i+j)%2 {
				x := model.Extraction{
					Extractor: fmt.Sprintf("x/%d", v+1), MediaType: "text/html", Method: "readability",
					Title: "title " + c.ID, Words: 100 + i, TextDigest: fmt.Sprintf("sha256:%04d", (i+v)/3),
					SimHash: fmt.Sprintf("%016x", uint64((i+v)/3)<<40|uint64(i%3)), Used: "warc:" + c.ID,
				}
				if i%11 == 0 {
					x.SoftError = "not-found"
				}
				var ev graph.Term
				quads, ev = m.ExtractionQuads(quads, graph.IRI(rt.Node), x)
				if i%2 == 0 {
					quads = m.PassageQuads(quads, graph.IRI(c.Node), ev, model.PassageCheck{Found: true, Score: 0.9, Method: "exact", Start: 1, End: 9})
				}
			}
		}
	}
	if _, err := st.Add(quads); err != nil {
		t.Fatal(err)
	}
}

// TestLineageLeanNeighbourhood: a lineage that reads the members of its
// neighbourhood lean (citestore's Members: no answer, engine, passages,
// parsed step log or extraction details) prints exactly what it prints
// reading them whole, for every citation of the example and of a
// synthetic database with redirects, shared content and relations, each
// with extractions and passage checks added.
func TestLineageLeanNeighbourhood(t *testing.T) {
	var b bytes.Buffer
	if err := synth.New(synth.Options{Seed: 3, Sites: 30}).Write(&b, 1200); err != nil {
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
			addEvidence(t, st, snap)
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
