package citestore_test

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestListingReadsMemberRecords: the full listing from a view whose rows
// carry member records shows what the records hold, without reading the
// citations: with every record's raw URL edited in place, each listed
// member and each rejected citation shows the edited URL, and check finds
// that the rows differ from what the quads give.
func TestListingReadsMemberRecords(t *testing.T) {
	ctx := context.Background()
	g, s := corpusAndSynthetic(t, 3, 200)
	d := normalize.Default().Digest()
	if _, err := s.RebuildView(ctx, d, 0, nil); err != nil {
		t.Fatal(err)
	}
	report := func() *query.Report {
		t.Helper()
		set, err := query.LoadGroupsFromView(ctx, s, "", query.GroupOptions{}, query.ViewRead{Batch: 7})
		if err != nil || set == nil {
			t.Fatalf("LoadGroupsFromView = %v, %v", set, err)
		}
		rep, err := set.Report(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	before := report()
	if len(before.Groups) == 0 || len(before.Rejected) == 0 {
		t.Fatalf("%d groups and %d rejected citations, want some of each", len(before.Groups), len(before.Rejected))
	}
	const mark = "edited-record:"
	if err := citestore.EditMembers(g, d, func(m *store.Citation) { m.Raw = mark + m.Raw }); err != nil {
		t.Fatal(err)
	}
	after := report()
	members := 0
	for i, gr := range after.Groups {
		for j, m := range gr.Members {
			if want := mark + before.Groups[i].Members[j].RawURL; m.RawURL != want {
				t.Fatalf("group %s member %s: raw URL %q, want the record's %q", gr.ID, m.CitationID, m.RawURL, want)
			}
			members++
		}
	}
	for i, x := range after.Rejected {
		if want := mark + before.Rejected[i].RawURL; x.RawURL != want {
			t.Fatalf("rejected %s: raw URL %q, want the record's %q", x.CitationID, x.RawURL, want)
		}
	}
	if members == 0 {
		t.Fatal("no member listed")
	}
	err := s.Check(ctx)
	if !errors.Is(err, graph.ErrCorrupt) || !strings.Contains(err.Error(), "differs from what the quads give") {
		t.Fatalf("check of a view with edited records: %v, want the rows named as differing", err)
	}
}

// TestSharedValues: SharedValues lists, in its posting map's order, exactly the
// content hashes and text digests that KeysByContent and KeysByDigest
// give two keys or more, on a store with shared and unshared evidence,
// and exactly the keys that RedirectSources and RelationSources give
// sources.
func TestSharedValues(t *testing.T) {
	ctx := context.Background()
	_, s := corpusAndSynthetic(t, 4, 300)
	d := normalize.Default().Digest()
	rows, err := s.RowsAfter(ctx, d, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	seen := map[string]bool{}
	for _, r := range rows {
		for _, e := range r.Evidence {
			for kind, v := range map[string]string{"content": e.Content, "digest": e.Digest} {
				if v == "" || seen[kind+v] {
					continue
				}
				seen[kind+v] = true
				lookup := s.KeysByContent
				if kind == "digest" {
					lookup = s.KeysByDigest
				}
				keys, err := lookup(ctx, d, v)
				if err != nil {
					t.Fatal(err)
				}
				if len(keys) >= 2 {
					want[kind] = append(want[kind], v)
				}
			}
		}
	}
	if len(want["content"]) == 0 || len(seen) <= len(want["content"]) {
		t.Fatalf("%d content hashes shared of %d texts: want some shared and some not", len(want["content"]), len(seen))
	}
	// Redirect targets: of every key and every redirect's key, those with
	// sources.
	norm, err := normalize.New(normalize.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cands := map[string]bool{}
	for _, r := range rows {
		cands[r.Key] = true
		for _, u := range r.Redirects {
			if res, err := norm.Normalize(u); err == nil {
				cands[res.Key] = true
			}
		}
	}
	for _, r := range rows {
		for _, u := range r.Links {
			if res, err := norm.Normalize(u); err == nil {
				cands[res.Key] = true
			}
		}
	}
	for k := range cands {
		for kind, sources := range map[string]func(context.Context, string, string) ([]string, error){"redirect": s.RedirectSources, "relation": s.RelationSources} {
			srcs, err := sources(ctx, d, k)
			if err != nil {
				t.Fatal(err)
			}
			if len(srcs) > 0 {
				want[kind] = append(want[kind], k)
			}
		}
	}
	for _, kind := range []string{"redirect", "relation"} {
		if n := len(want[kind]); n == 0 || n == len(cands) {
			t.Fatalf("%d %s targets of %d keys: want some keys with sources and some without", n, kind, len(cands))
		}
	}
	for _, kind := range []string{"content", "digest", "redirect", "relation"} {
		var got []string
		if err := s.SharedValues(ctx, d, kind, func(v string) error {
			got = append(got, v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// The posting map's order: shorter values first, then bytes.
		slices.SortFunc(want[kind], func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
		if !slices.Equal(got, want[kind]) {
			t.Errorf("SharedValues(%s) = %q, want %q", kind, got, want[kind])
		}
	}
	if err := s.SharedValues(ctx, d, "sim", func(string) error { return nil }); err == nil {
		t.Error("SharedValues(sim): no error")
	}
}

// corpusAndSynthetic returns a new store (closed when the test ends)
// holding the corpus and n synthetic citations of the seed, appended under
// the default policy.
func corpusAndSynthetic(t *testing.T, seed uint64, n int) (*graph.Store, *citestore.Store) {
	t.Helper()
	g, err := graph.Open(filepath.Join(t.TempDir(), "m.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	s := citestore.New(g)
	recs := append(storetest.Corpus(t), storetest.Synthetic(t, synth.Options{Seed: seed, Sites: 5}, n)...)
	if _, err := s.Append(context.Background(), store.Batch{Policy: normalize.Default(), Records: recs}); err != nil {
		t.Fatal(err)
	}
	return g, s
}
