package service

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// TestReviewedAroundEqualsWhole: the groups LoadReviewedAround reads from
// the grouping view, by id, by key and by citation, are those of the
// whole report (LoadReviewed), member for member, with the same evidence
// digest a decision records; a citation's member is the report's; what no
// group has is left out.
func TestReviewedAroundEqualsWhole(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "corpus.db")
	pol, err := normalize.LoadPolicy("default")
	if err != nil {
		t.Fatal(err)
	}
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, f := range []string{"../query/testdata/corpus.jsonl", "../../testdata/citations.jsonl"} {
		if _, err := ingest.File(ctx, st, f, filepath.Base(f), ingest.Options{Policy: pol}); err != nil {
			t.Fatal(err)
		}
	}
	opts := query.GroupOptions{MaxShared: 3, MinSize: 1, Review: true}
	whole, err := LoadReviewed(ctx, st, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Report.Groups) < 10 {
		t.Fatalf("%d groups: the corpus should give more", len(whole.Report.Groups))
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	digest := whole.Report.Policy.Digest
	for _, g := range whole.Report.Groups {
		for _, sel := range []string{g.ID, g.Key} {
			r, err := LoadReviewedAround(ctx, st, "", opts, []string{sel, "g-000000000000"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !r.around || len(r.Report.Groups) != 1 {
				t.Fatalf("around %s: from the view %v, %d groups; want the one", sel, r.around, len(r.Report.Groups))
			}
			got := r.Group(g.ID)
			if got == nil || js(got) != js(g) {
				t.Errorf("around %s:\n%s\nwant\n%s", sel, js(got), js(g))
				continue
			}
			if a, b := review.EvidenceOf(got, digest).Digest(), review.EvidenceOf(g, digest).Digest(); a != b {
				t.Errorf("around %s: evidence digest %s, want %s", sel, a, b)
			}
		}
		for _, m := range g.Members {
			r, err := LoadReviewedAround(ctx, st, "", opts, nil, []string{m.CitationID, "no-such-citation"})
			if err != nil {
				t.Fatal(err)
			}
			wg, wm := whole.member(m.CitationID)
			rg, rm := r.member(m.CitationID)
			if rg == nil || rg.ID != wg.ID || js(rm) != js(wm) {
				t.Errorf("around citation %s: group %v, member %s; want %s, %s", m.CitationID, rg, js(rm), wg.ID, js(wm))
			}
		}
	}
}
