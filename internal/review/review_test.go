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
	"github.com/provgraph/provgraph/internal/model"
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

const threeCitations = twoMembers + `{"citation_id":"c","engine":"e1","observed_at":"2026-01-03T00:00:00Z","raw_url":"https://other.example/y"}
`

// reingest ingests lines into st.
func reingest(t testing.TB, st *graph.Store, lines string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "more.jsonl")
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(context.Background(), st, in, in, ingest.Options{Policy: p}); err != nil {
		t.Fatal(err)
	}
}

// fetched records a retrieval, with a content hash, of the raw URLs that
// contain host.
func fetched(t testing.TB, st *graph.Store, host string) {
	t.Helper()
	ctx := context.Background()
	targets, _, err := ingest.ResolveTargets(ctx, st, ingest.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets = slices.DeleteFunc(targets, func(tg ingest.ResolveTarget) bool { return !strings.Contains(tg.URL, host) })
	if len(targets) == 0 {
		t.Fatalf("no target under %s", host)
	}
	fetch := func(_ context.Context, u string) (*model.Retrieval, error) {
		return &model.Retrieval{RetrievedAt: "2026-01-04T00:00:00Z", FinalURL: u, FinalStatus: "200", ContentHash: "sha256:2222222222222222222222222222222222222222222222222222222222222222"}, nil
	}
	if _, err := ingest.Resolve(ctx, st, targets, ingest.ResolveOptions{Fetch: fetch}); err != nil {
		t.Fatal(err)
	}
}

// memberOf returns the group and member of citation id.
func memberOf(t testing.TB, st *graph.Store, id string) (*query.Group, *query.Member, query.PolicyRef) {
	t.Helper()
	g, pol := groupOf(t, st, id)
	for _, m := range g.Members {
		if m.CitationID == id {
			return g, m, pol
		}
	}
	panic("unreachable")
}

// TestPairAndRelationDecisions: decisions about a pair of citations and
// about a relation between two groups are their own subjects. They do
// not change the group's latest decision or review state, each subject
// chains its own revisions, a pair is stale when either citation's
// evidence changes and a relation when either group's does, and Load
// reads the subject back.
func TestPairAndRelationDecisions(t *testing.T) {
	ctx := context.Background()
	st := ingested(t, threeCitations)
	ab, a, pol := memberOf(t, st, "a")
	_, b, _ := memberOf(t, st, "b")
	gc, c, _ := memberOf(t, st, "c")
	if ab == gc {
		t.Fatal("a and c share a group; the test needs two groups")
	}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	group, err := review.Record(ctx, st, request(ab, pol, review.Same, "alice"), now)
	if err != nil {
		t.Fatal(err)
	}
	pairReq := func(decision string, x, y *query.Member) review.Request {
		return review.Request{Subject: review.SubjectPair, Decision: decision, Reviewer: "bob", Rationale: "pair",
			Evidence: review.PairEvidence(x, y, pol.Digest), CitationNodes: []string{review.NodeOf(x), review.NodeOf(y)}}
	}
	relReq := func(decision, kind string, from, to *query.Group) review.Request {
		return review.Request{Subject: review.SubjectRelation, Decision: decision, Relation: kind, Reviewer: "carol",
			GroupID: from.ID, GroupKey: from.Key, RelatedTo: to.ID, RelatedKey: to.Key,
			Evidence: review.RelationEvidence(from, to, pol.Digest), CitationNodes: append(review.NodesOf(from), review.NodesOf(to)...)}
	}
	p1, err := review.Record(ctx, st, pairReq(review.Different, a, b), now.Add(1*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := review.Record(ctx, st, pairReq(review.Same, b, a), now.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := review.Record(ctx, st, pairReq(review.Unsure, a, c), now.Add(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r1, err := review.Record(ctx, st, relReq(review.Related, "mirror_of", ab, gc), now.Add(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := review.Record(ctx, st, relReq(review.Different, "", gc, ab), now.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		d             *review.Decision
		subject       string
		revises       string
		citations     []string
		group, relate string
	}{
		{"first pair", p1, review.SubjectPair, "", []string{"a", "b"}, "", ""},
		{"same pair, other order", p2, review.SubjectPair, p1.ID, []string{"a", "b"}, "", ""},
		{"another pair", pc, review.SubjectPair, "", []string{"a", "c"}, "", ""},
		{"relation", r1, review.SubjectRelation, "", []string{"a", "b", "c"}, ab.ID, gc.ID},
		{"same relation, other direction", r2, review.SubjectRelation, r1.ID, []string{"a", "b", "c"}, gc.ID, ab.ID},
	} {
		if tc.d.Subject != tc.subject || tc.d.Revises != tc.revises || !slices.Equal(tc.d.Citations, tc.citations) || tc.d.GroupID != tc.group || tc.d.RelatedTo != tc.relate {
			t.Errorf("%s: Record = subject %q revises %q citations %q group %q related %q, want %q %q %q %q %q", tc.name,
				tc.d.Subject, tc.d.Revises, tc.d.Citations, tc.d.GroupID, tc.d.RelatedTo, tc.subject, tc.revises, tc.citations, tc.group, tc.relate)
		}
	}
	ix, err := review.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*review.Decision{group, p1, p2, pc, r1, r2} {
		got := ix.Get(d.ID)
		if got == nil || got.Subject != d.Subject || got.Revises != d.Revises || got.RelatedTo != d.RelatedTo || got.RelatedKey != d.RelatedKey || got.Digest != d.Digest {
			t.Errorf("Load(%s) = %+v, want %+v", d.ID, got, d)
		}
	}
	// The group's own state follows its own decision only.
	s := ix.Status(review.EvidenceOf(ab, pol.Digest))
	if s.State != review.StateDecided || s.Latest.ID != group.ID || len(s.History) != 1 {
		t.Errorf("group Status = %+v, want decided by %s alone", s, group.ID)
	}
	if s := ix.Status(review.EvidenceOf(gc, pol.Digest)); s.State != review.StateUnreviewed {
		t.Errorf("Status of c's group = %+v, want unreviewed (only pairs and relations are about it)", s)
	}
	// A later group decision revises the group's, not a pair's.
	g2, err := review.Record(ctx, st, request(ab, pol, review.Unsure, "alice"), now.Add(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if g2.Revises != group.ID {
		t.Errorf("second group decision revises %q, want %q", g2.Revises, group.ID)
	}
	ix, _ = review.Load(ctx, st)
	subjects := ix.Subjects([]string{"a", "b"}, ab.ID)
	var ids []string
	for _, d := range subjects {
		ids = append(ids, d.ID)
	}
	if want := []string{r2.ID, pc.ID, p2.ID}; !slices.Equal(ids, want) {
		t.Errorf("Subjects(a, b, %s) = %q, want the latest of each: %q", ab.ID, ids, want)
	}
	ps := ix.SubjectStatus(p2, review.PairEvidence(a, b, pol.Digest), nil)
	if ps.State != review.StateDecided || ps.Latest.ID != p2.ID || len(ps.History) != 2 || ps.History[1].ID != p1.ID {
		t.Errorf("pair status = %+v, want decided, history p2, p1", ps)
	}
	rs := ix.SubjectStatus(r2, review.RelationEvidence(gc, ab, pol.Digest), nil)
	if rs.State != review.StateDecided || rs.From != gc.ID || rs.To != ab.ID || len(rs.History) != 2 {
		t.Errorf("relation status = %+v, want decided, from %s to %s, two decisions", rs, gc.ID, ab.ID)
	}

	// New evidence: c gets a retrieval; a new citation d joins a and b's
	// group. The pair (a, b) is unchanged; (a, c) and the relation are
	// stale.
	fetched(t, st, "other.example")
	reingest(t, st, `{"citation_id":"d","engine":"e3","observed_at":"2026-01-05T00:00:00Z","raw_url":"https://example.com/x?utm_medium=d"}
`)
	ab, a, pol = memberOf(t, st, "a")
	_, b, _ = memberOf(t, st, "b")
	gc, c, _ = memberOf(t, st, "c")
	if s := ix.SubjectStatus(p2, review.PairEvidence(a, b, pol.Digest), nil); s.State != review.StateDecided {
		t.Errorf("pair (a, b) after d joined their group: %+v, want decided (neither citation changed)", s)
	}
	if s := ix.SubjectStatus(pc, review.PairEvidence(a, c, pol.Digest), nil); s.State != review.StateStale || !slices.ContainsFunc(s.Changes, func(c string) bool { return strings.Contains(c, "member c: new retrieval") }) {
		t.Errorf("pair (a, c) after c's new retrieval: %+v, want stale with c's new retrieval", s)
	}
	if s := ix.SubjectStatus(r2, review.RelationEvidence(gc, ab, pol.Digest), nil); s.State != review.StateStale || !slices.ContainsFunc(s.Changes, func(c string) bool { return strings.Contains(c, "member d joined") }) {
		t.Errorf("relation after d joined a group: %+v, want stale with member d joined", s)
	}
	if s := ix.SubjectStatus(r2, review.Evidence{}, []string{"group g-x is not listed now"}); s.State != review.StateStale || !slices.Equal(s.Changes, []string{"group g-x is not listed now"}) {
		t.Errorf("relation with a group gone: %+v, want stale naming it", s)
	}
}

// TestSubjectRejects: a pair of one citation, a relation of one group and
// an unknown subject are refused and write nothing.
func TestSubjectRejects(t *testing.T) {
	ctx := context.Background()
	st := ingested(t, threeCitations)
	g, a, pol := memberOf(t, st, "a")
	before, _ := st.Count()
	for _, r := range []review.Request{
		{Subject: review.SubjectPair, Decision: review.Same, Reviewer: "x", Evidence: review.PairEvidence(a, a, pol.Digest), CitationNodes: []string{"n1", "n2"}},
		{Subject: review.SubjectRelation, Decision: review.Same, Reviewer: "x", GroupID: g.ID, RelatedTo: g.ID, Evidence: review.EvidenceOf(g, pol.Digest), CitationNodes: review.NodesOf(g)},
		{Subject: "answer", Decision: review.Same, Reviewer: "x", GroupID: g.ID, Evidence: review.EvidenceOf(g, pol.Digest), CitationNodes: review.NodesOf(g)},
		{Subject: review.SubjectGroup, Decision: review.Same, Reviewer: "x", GroupID: g.ID, RelatedTo: "g-other", Evidence: review.EvidenceOf(g, pol.Digest), CitationNodes: review.NodesOf(g)},
	} {
		if _, err := review.Record(ctx, st, r, time.Now()); !errors.Is(err, review.ErrInvalid) {
			t.Errorf("Record(%+v) error = %v, want ErrInvalid", r.Subject, err)
		}
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("rejected requests wrote %d quads", after-before)
	}
}
