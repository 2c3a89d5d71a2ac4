package render

import (
	"bytes"
	"testing"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// reviewedFixtures are groups and review states with every optional field
// on and off, and strings that need escaping.
func reviewedFixtures() ([]*query.Group, []*review.Status) {
	odd := "a\x00b\x1f\b\n\\ é \xff 日本 \u2029<&>"
	frag := "sec\"tion"
	groups := []*query.Group{
		{},
		{ID: "g-1", Key: odd, Keys: []string{}, Members: []*query.Member{}, Relations: []*query.GroupRelation{}},
		{
			ID: "g-2", Key: "https://a.example/", Keys: []string{"https://a.example/", odd}, Verdict: model.VerdictConflict,
			Members: []*query.Member{
				{CitationID: "c1", RawURL: odd, Fragment: &frag, Key: "k", Reasons: []string{"r1", odd}},
				{CitationID: "c2", RawURL: "https://a.example/", Key: "k"},
			},
			Relations: []*query.GroupRelation{{Type: query.RelCanonical, From: "g-2", To: "g-3", Evidence: odd, Review: true}},
		},
	}
	d := &review.Decision{ID: "r-1", Subject: review.SubjectGroup, Decision: "same", Rationale: odd, Reviewer: "alice", At: "2026-12-04T00:00:00Z", GroupID: "g-2", Citations: []string{"c1", "c2"}}
	statuses := []*review.Status{
		{State: review.StateUnreviewed},
		{State: review.StateDecided, Latest: d, History: []*review.Decision{d}},
		{State: review.StateStale, Latest: d, Changes: []string{"member added: " + odd}, History: []*review.Decision{d, d}},
	}
	return groups, statuses
}

// TestReviewedJSONMatchesEncodingJSON: a streamed group with its review
// state is what encoding/json writes for it, byte for byte.
func TestReviewedJSONMatchesEncodingJSON(t *testing.T) {
	groups, statuses := reviewedFixtures()
	for i, g := range groups {
		for j, s := range statuses {
			for _, prefix := range []string{"", "    "} {
				want := encodingJSON(t, reviewedGroup{g, s}, prefix)
				if got := string(appendReviewedJSON(nil, g, s, prefix)); got != want {
					t.Errorf("group %d, status %d, prefix %q:\n%s\nwant\n%s", i, j, prefix, got, want)
				}
			}
		}
	}
}

// TestReviewedGroupsJSON: a page is the JSON document {"policy",
// "groups", "total", "next"} as encoding/json writes it, with no group
// and with several.
func TestReviewedGroupsJSON(t *testing.T) {
	groups, statuses := reviewedFixtures()
	pol := query.PolicyRef{PolicyRef: model.PolicyRef{Name: "p", Version: "1", Digest: "sha256:00"}}
	status := func(g *query.Group) *review.Status {
		for i, h := range groups {
			if h == g {
				return statuses[i%len(statuses)]
			}
		}
		return nil
	}
	for _, page := range []ReviewedPage{
		{Policy: pol, Groups: nil, Status: status, Total: 0},
		{Policy: pol, Groups: groups[1:], Status: status, Total: 7, Next: "bzM"},
	} {
		gs := []reviewedGroup{}
		for _, g := range page.Groups {
			gs = append(gs, reviewedGroup{g, status(g)})
		}
		want := encodingJSON(t, struct {
			Policy query.PolicyRef `json:"policy"`
			Groups []reviewedGroup `json:"groups"`
			Total  int             `json:"total"`
			Next   string          `json:"next"`
		}{page.Policy, gs, page.Total, page.Next}, "") + "\n"
		var b bytes.Buffer
		if err := ReviewedGroups(&b, "json", page); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("page of %d groups:\n%s\nwant\n%s", len(page.Groups), b.String(), want)
		}
	}
}
