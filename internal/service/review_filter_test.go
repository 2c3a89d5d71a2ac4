package service

import (
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/model"
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
