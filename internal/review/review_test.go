package review_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// ingested returns a store holding the JSON Lines in lines.
func ingested(t testing.TB, lines string) *graph.Store {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := graph.Open(filepath.Join(dir, "prov.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(context.Background()); err != nil {
			t.Errorf("check: %v", err)
		}
		st.Close()
	})
	pol, err := normalize.LoadPolicy("default")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), st, in, in, ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	return st
}

const twoMembers = `{"citation_id":"a","engine":"e1","observed_at":"2026-01-01T00:00:00Z","raw_url":"https://example.com/x?utm_source=a"}
{"citation_id":"b","engine":"e2","observed_at":"2026-01-02T00:00:00Z","raw_url":"https://example.com/x"}
`

// groupOf returns the group of citation id.
func groupOf(t testing.TB, st *graph.Store, id string) (*query.Group, query.PolicyRef) {
	t.Helper()
	set, err := query.LoadGroups(context.Background(), citestore.New(st), "", query.GroupOptions{MinSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := set.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			if m.CitationID == id {
				return g, rep.Policy
			}
		}
	}
	t.Fatalf("no group holds %s", id)
	return nil, query.PolicyRef{}
}

func request(g *query.Group, pol query.PolicyRef, decision, reviewer string) review.Request {
	r := review.Request{Decision: decision, Reviewer: reviewer, Rationale: "same page, tracking removed", GroupID: g.ID, GroupKey: g.Key, Evidence: review.EvidenceOf(g, pol.Digest)}
	r.CitationNodes = review.NodesOf(g)
	return r
}

// TestRecordAndLoad: a decision is stored as PROV, read back whole, and a
// second decision on the same citations is a revision of the first.
func TestRecordAndLoad(t *testing.T) {
	ctx := context.Background()
	st := ingested(t, twoMembers)
	g, pol := groupOf(t, st, "a")
	now := time.Date(2026, 12, 1, 10, 0, 0, 5, time.UTC)
	d1, err := review.Record(ctx, st, request(g, pol, review.Same, "alice"), now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d1.ID, "r-") || len(d1.ID) != 14 || d1.Revises != "" {
		t.Errorf("first decision = %+v", d1)
	}
	req := request(g, pol, review.Related, "bob")
	req.Relation = "mirror_of"
	d2, err := review.Record(ctx, st, req, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if d2.Revises != d1.ID {
		t.Errorf("second decision revises %q, want %q", d2.Revises, d1.ID)
	}
	ix, err := review.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 2 {
		t.Fatalf("Load: %d decisions, want 2", ix.Len())
	}
	got := ix.Get(d2.ID)
	if got == nil || got.Reviewer != "bob" || got.Decision != review.Related || got.Relation != "mirror_of" || got.Revises != d1.ID ||
		got.Guideline != review.GuidelineVersion || got.Digest != d2.Digest || !slices.Equal(got.Citations, []string{"a", "b"}) || got.GroupID != g.ID {
		t.Errorf("Load: %+v, want %+v", got, d2)
	}
	s := ix.Status(review.EvidenceOf(g, pol.Digest))
	if s.State != review.StateDecided || s.Latest.ID != d2.ID || len(s.History) != 2 || s.History[1].ID != d1.ID {
		t.Errorf("Status = %+v", s)
	}
	// The PROV shape: the activity used the citations and the evidence, and
	// its association names the reviewer role and the guideline.
	var used []string
	st.Match(ctx, graph.Quad{P: graph.IRI("http://www.w3.org/ns/prov#used")}, func(q graph.Quad) error {
		if strings.Contains(q.S.Value, "/id/review/") {
			used = append(used, q.O.Value)
		}
		return nil
	})
	if len(used) != 6 { // two reviews: two citations and one evidence digest each
		t.Errorf("prov:used %d times, want 6: %v", len(used), used)
	}
	var roles int
	st.Match(ctx, graph.Quad{P: graph.IRI("http://www.w3.org/ns/prov#hadRole")}, func(graph.Quad) error { roles++; return nil })
	if roles != 2 {
		t.Errorf("prov:hadRole %d times, want 2", roles)
	}
}

// TestStale: a decision whose group gained a member is stale, and says so.
func TestStale(t *testing.T) {
	ctx := context.Background()
	st := ingested(t, twoMembers)
	g, pol := groupOf(t, st, "a")
	if _, err := review.Record(ctx, st, request(g, pol, review.Different, "alice"), time.Now()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	more := filepath.Join(dir, "more.jsonl")
	os.WriteFile(more, []byte(`{"citation_id":"c","observed_at":"2026-01-03T00:00:00Z","raw_url":"https://EXAMPLE.com/x"}`+"\n"), 0o600)
	p, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(ctx, st, more, more, ingest.Options{Policy: p}); err != nil {
		t.Fatal(err)
	}
	g2, pol2 := groupOf(t, st, "a")
	ix, _ := review.Load(ctx, st)
	s := ix.Status(review.EvidenceOf(g2, pol2.Digest))
	if s.State != review.StateStale || len(s.Changes) == 0 || !strings.Contains(s.Changes[0], "member c joined") {
		t.Errorf("Status after a new member = %+v, want stale with member c joined", s)
	}
}

// TestRecordRejects: a wrong request writes nothing.
func TestRecordRejects(t *testing.T) {
	ctx := context.Background()
	st := ingested(t, twoMembers)
	g, pol := groupOf(t, st, "a")
	before, _ := st.Count()
	for _, tc := range []struct {
		name string
		edit func(*review.Request)
	}{
		{"unknown decision", func(r *review.Request) { r.Decision = "maybe" }},
		{"related without kind", func(r *review.Request) { r.Decision = review.Related }},
		{"kind without related", func(r *review.Request) { r.Relation = "mirror_of" }},
		{"no reviewer", func(r *review.Request) { r.Reviewer = " " }},
		{"long rationale", func(r *review.Request) { r.Rationale = strings.Repeat("x", review.MaxRationale+1) }},
		{"no members", func(r *review.Request) { r.Evidence.Members, r.CitationNodes = nil, nil }},
	} {
		r := request(g, pol, review.Same, "alice")
		tc.edit(&r)
		if _, err := review.Record(ctx, st, r, time.Now()); !errors.Is(err, review.ErrInvalid) {
			t.Errorf("%s: Record error = %v, want ErrInvalid", tc.name, err)
		}
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("rejected requests wrote %d quads", after-before)
	}
}

// TestChanges lists what changed between two evidences.
func TestChanges(t *testing.T) {
	was := review.Evidence{Verdict: "normalized-compare", Members: []review.MemberEvidence{{CitationID: "a", Key: "k"}, {CitationID: "b", Key: "k"}}}
	now := review.Evidence{Verdict: "conflict", Members: []review.MemberEvidence{{CitationID: "a", Key: "k", Retrievals: []string{"final x hash h"}}}}
	got := review.Changes(was, now)
	want := []string{"member a: new retrieval: final x hash h", "member b left the group ()", "verdict conflict was normalized-compare"}
	if !slices.Equal(got, want) {
		t.Errorf("Changes = %q, want %q", got, want)
	}
	if c := review.Changes(was, was); c != nil {
		t.Errorf("Changes(same) = %q, want none", c)
	}
}
