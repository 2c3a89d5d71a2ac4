package service

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// TestFilterQueuePages: the queue a server pages through (Filter with
// Queue, selected once per order and shared by every request and by
// WithIndex) holds exactly the groups with two members or more and those
// in a relation to review, as source or target, in the order asked, page
// after page; a filter besides the queue still selects from it.
func TestFilterQueuePages(t *testing.T) {
	m := func(ids ...string) []*query.Member {
		var ms []*query.Member
		for _, id := range ids {
			ms = append(ms, &query.Member{CitationID: id, Key: "https://example.org/" + id})
		}
		return ms
	}
	gs := []*query.Group{
		{ID: "g-pair", Verdict: model.VerdictNormalizedCompare, Members: m("a", "b")},
		{ID: "g-source", Verdict: model.VerdictNormalizedCompare, Members: m("c"), Relations: []*query.GroupRelation{{From: "g-source", To: "g-target", Review: true}}},
		{ID: "g-alone", Verdict: model.VerdictNormalizedCompare, Members: m("d")},
		{ID: "g-target", Verdict: model.VerdictNormalizedCompare, Members: m("e")},
		{ID: "g-conflict", Verdict: model.VerdictConflict, Members: m("f", "g", "h")},
		{ID: "g-quiet", Verdict: model.VerdictNormalizedCompare, Members: m("i"), Relations: []*query.GroupRelation{{From: "g-quiet", To: "g-alone"}}},
	}
	r := &Reviewed{Report: &query.Report{Groups: gs}, Index: &review.Index{}, status: map[string]*review.Status{}, byID: map[string]*query.Group{}}
	pages := func(r *Reviewed, f GroupFilter) (ids []string, total int) {
		for {
			p, err := r.Filter(f)
			if err != nil {
				t.Fatal(err)
			}
			total = p.Total
			for _, g := range p.Groups {
				ids = append(ids, g.ID)
			}
			if p.Next == "" {
				return ids, total
			}
			f.Cursor = p.Next
		}
	}
	for _, c := range []struct {
		f    GroupFilter
		want []string
	}{
		{GroupFilter{Queue: true, Sort: "risk", Limit: 2}, []string{"g-conflict", "g-source", "g-pair", "g-target"}},
		{GroupFilter{Queue: true, Limit: 1}, []string{"g-pair", "g-source", "g-target", "g-conflict"}},
		{GroupFilter{Queue: true, Sort: "size", Limit: 3}, []string{"g-conflict", "g-pair", "g-source", "g-target"}},
		{GroupFilter{Queue: true, Sort: "risk", Verdict: model.VerdictNormalizedCompare, Limit: 1}, []string{"g-source", "g-pair", "g-target"}},
		{GroupFilter{Sort: "size"}, []string{"g-conflict", "g-pair", "g-source", "g-alone", "g-target", "g-quiet"}},
	} {
		// Twice on r, once on a copy with other decisions: the queue
		// selected the first time is the one served after.
		for _, rv := range []*Reviewed{r, r, r.WithIndex(&review.Index{})} {
			got, total := pages(rv, c.f)
			if !slices.Equal(got, c.want) || total != len(c.want) {
				t.Errorf("%+v: %v (total %d), want %v", c.f, got, total, c.want)
			}
		}
	}
}

// TestWithDecisionKeepsOtherStates: after a decision, the review states
// already computed of the groups it is not about are kept, those of the
// group it is about are computed again and show it, and a decision about
// a pair keeps every state.
func TestWithDecisionKeepsOtherStates(t *testing.T) {
	ctx := context.Background()
	st, err := graph.Open(filepath.Join(t.TempDir(), "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(ctx, st, "../../testdata/citations.jsonl", "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	r, err := LoadReviewed(ctx, st, "", query.GroupOptions{MinSize: 1, Review: true})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]*review.Status{}
	for _, g := range r.Report.Groups {
		before[g.ID] = r.Status(g)
	}
	const decided = "g-6e48bcc4a04d"
	next := r
	for _, req := range []DecideRequest{
		{GroupID: decided, Decision: review.Same, Reviewer: "alice"},
		{Subject: review.SubjectPair, Citations: []string{"gpt-17-2", "pplx-001-1"}, Decision: review.Different, Reviewer: "alice"},
	} {
		d, err := Decide(ctx, st, next, req, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ix, err := review.Load(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		next = next.WithDecision(ix, d)
	}
	for _, g := range next.Report.Groups {
		s := next.Status(g)
		switch {
		case g.ID == decided && (s == before[g.ID] || s.State != review.StateDecided):
			t.Errorf("%s after its decision: %+v (same status as before: %v), want decided", g.ID, s, s == before[g.ID])
		case g.ID != decided && s != before[g.ID]:
			t.Errorf("%s: its status was computed again after decisions not about it", g.ID)
		}
	}
}
