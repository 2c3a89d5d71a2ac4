package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// corpusStore ingests testdata/corpus.jsonl under the given policies, in
// order, into a fresh store.
func corpusStore(t *testing.T, policies ...string) *graph.Store {
	t.Helper()
	st, err := graph.Open(filepath.Join(t.TempDir(), "q.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, p := range policies {
		pol, err := normalize.LoadPolicy(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ingest.File(context.Background(), st, "testdata/corpus.jsonl", "corpus.jsonl", ingest.Options{Policy: pol}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func groups(t *testing.T, st *graph.Store, policy string) *query.Report {
	t.Helper()
	snap, err := query.Load(context.Background(), citestore.New(st), policy)
	if err != nil {
		t.Fatal(err)
	}
	return query.Groups(snap, query.GroupOptions{})
}

// groupOf returns the group holding a citation.
func groupOf(rep *query.Report, id string) *query.Group {
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			if m.CitationID == id {
				return g
			}
		}
	}
	return nil
}

func together(rep *query.Report, a, b string) bool {
	ga, gb := groupOf(rep, a), groupOf(rep, b)
	return ga != nil && ga == gb
}

func TestGroupRules(t *testing.T) {
	rep := groups(t, corpusStore(t, "default"), "")
	for _, tc := range []struct {
		a, b string
		same bool
		why  string
	}{
		{"case-upper", "case-lower", false, "path case selects a different resource"},
		{"lang-none", "lang-fr", false, "lang selects content"},
		{"enc-slash", "plain-slash", false, "%2F is not a path separator"},
		{"track-1", "track-2", true, "tracking parameter, host case and fragment only"},
		{"conflict-1", "conflict-2", true, "same key, whatever the content says"},
		{"article", "article-amp", false, "an AMP copy is a relation, not a member"},
		{"article", "article-print", false, "a print variant is a relation"},
		{"article", "archived", false, "an archive snapshot is a relation"},
		{"article", "syndicated", false, "a syndicated copy is a separate source"},
		{"article", "xhost", false, "a cross-host redirect never joins"},
		{"moved-old", "moved-new", true, "a same-host redirect joins"},
		{"paywall-0", "paywall-1", false, "a login wall many articles redirect to is not duplicate evidence"},
		{"soft404-0", "soft404-1", false, "an error page's hash shared by many is not duplicate evidence"},
		{"soft404-0", "soft404-dup", true, "same key"},
		{"canon", "canon-target", false, "a canonical declaration never joins"},
	} {
		if got := together(rep, tc.a, tc.b); got != tc.same {
			t.Errorf("%s and %s together = %v, want %v: %s", tc.a, tc.b, got, tc.same, tc.why)
		}
	}
	if g := groupOf(rep, "rejected"); g != nil {
		t.Errorf("a rejected raw URL is in group %s", g.ID)
	}
	if len(rep.Rejected) != 1 || rep.Rejected[0].CitationID != "rejected" || rep.Rejected[0].Code != "userinfo" {
		t.Errorf("rejected = %+v", rep.Rejected)
	}
	verdicts := map[string]string{
		"track-1": model.VerdictIdentityConfirmed,
		// Differing bytes without main texts to compare are no conflict
		// (issue 14): only texts farther apart than the threshold are.
		"conflict-1":  model.VerdictNormalizedCompare,
		"moved-old":   model.VerdictNeedsContentCheck,
		"lang-fr":     model.VerdictNormalizedCompare,
		"soft404-0":   model.VerdictNormalizedCompare, // its hash is a common page's: evidence of nothing
		"paywall-0":   model.VerdictNormalizedCompare,
		"case-upper":  model.VerdictNormalizedCompare,
		"article-amp": model.VerdictNormalizedCompare,
	}
	for id, want := range verdicts {
		if g := groupOf(rep, id); g == nil || g.Verdict != want {
			t.Errorf("verdict of %s's group = %v, want %s", id, g, want)
		}
	}
	rels := map[string]bool{}
	for _, g := range rep.Groups {
		for _, r := range g.Relations {
			rels[r.Type+" from "+g.Members[0].CitationID] = r.Review
		}
	}
	for rel, review := range map[string]bool{
		"format_of from article-amp":            true, // AMP cache host differs
		"format_of from article-print":          false,
		"archive_of from archived":              true,
		"syndication_of from syndicated":        true,
		"cross-host-redirect from xhost":        true,
		"canonical from canon":                  true,
		"shared-redirect-target from paywall-0": false,
	} {
		got, ok := rels[rel]
		if !ok {
			t.Errorf("no relation %q (have %v)", rel, rels)
		} else if got != review {
			t.Errorf("relation %q review = %v, want %v", rel, got, review)
		}
	}
}

// TestGroupsHostRule: under a policy whose host rule folds path case on
// files.example.test, /Users/Alice and /users/alice share a key, and the
// group says a content check is needed.
func TestGroupsHostRule(t *testing.T) {
	st := corpusStore(t, "default", "testdata/hostrules.toml")
	rep := groups(t, st, "test-groups-hostrules@1")
	if !together(rep, "case-upper", "case-lower") {
		t.Fatal("host rule did not join /Users/Alice and /users/alice")
	}
	if g := groupOf(rep, "case-upper"); g.Verdict != model.VerdictNeedsContentCheck {
		t.Errorf("verdict = %s, want %s", g.Verdict, model.VerdictNeedsContentCheck)
	}
	// The default policy's groups are still there and unchanged.
	if together(groups(t, st, "provgraph-default"), "case-upper", "case-lower") {
		t.Error("the default policy's groups changed after a second policy was added")
	}
}

func TestGroupsGolden(t *testing.T) {
	rep := groups(t, corpusStore(t, "default"), "")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		t.Fatal(err)
	}
	// The policy version and digest depend on the Go release.
	got := strings.ReplaceAll(b.String(), rep.Policy.Digest, "DIGEST")
	got = strings.ReplaceAll(got, rep.Policy.Version, "VERSION")
	const golden = "testdata/groups.golden.json"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("groups JSON differs from %s (run with -update and review the diff)", golden)
	}
	// Group ids are stable: the same data gives the same ids.
	again := groups(t, corpusStore(t, "default"), "")
	var ids, ids2 []string
	for _, g := range rep.Groups {
		ids = append(ids, g.ID)
	}
	for _, g := range again.Groups {
		ids2 = append(ids2, g.ID)
	}
	if !slices.Equal(ids, ids2) {
		t.Errorf("group ids differ between two databases with the same data")
	}
}

// TestQueriesChangeNothing: the quads are the same before and after
// loading and grouping.
func TestQueriesChangeNothing(t *testing.T) {
	st := corpusStore(t, "default")
	before := dump(t, st)
	groups(t, st, "")
	if after := dump(t, st); after != before {
		t.Error("running the queries changed the database")
	}
}

func dump(t *testing.T, st *graph.Store) string {
	t.Helper()
	var lines []string
	err := st.Match(context.Background(), graph.Quad{}, func(q graph.Quad) error {
		lines = append(lines, string(graph.AppendNQuad(nil, q)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}

func TestStatsAndExplain(t *testing.T) {
	st := corpusStore(t, "default")
	snap, err := query.Load(context.Background(), citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	rep := query.Groups(snap, query.GroupOptions{})
	s := query.ComputeStats(snap, rep)
	if s.Citations != 31 || s.Rejected != 1 {
		t.Errorf("citations %d, rejected %d; want 31 and 1", s.Citations, s.Rejected)
	}
	keys, err := query.Explain(snap, rep, "keys")
	if err != nil || len(keys) != s.DistinctKeys {
		t.Errorf("explain keys lists %d items (%v), the count says %d", len(keys), err, s.DistinctKeys)
	}
	groups, _ := query.Explain(snap, rep, "groups")
	if len(groups) != s.Groups {
		t.Errorf("explain groups lists %d, the count says %d", len(groups), s.Groups)
	}
	n := 0
	for _, d := range s.Domains {
		n += d.Citations
	}
	if n != s.Citations-s.Rejected-s.Unnormalized {
		t.Errorf("domains count %d citations, want %d", n, s.Citations-s.Rejected)
	}
	ex, _ := query.Explain(snap, rep, "domain:example.test")
	if len(ex) == 0 {
		t.Error("explain domain:example.test lists nothing")
	}
	if _, err := query.Explain(snap, rep, "verdict"); err == nil {
		t.Error("explain verdict without a value: want an error")
	}
	for _, tc := range []struct{ host, want string }{
		{"www.bbc.co.uk", "bbc.co.uk"}, {"a.b.example.com", "example.com"}, {"127.0.0.1", "127.0.0.1"},
		{"[2001:db8::1]", "[2001:db8::1]"}, {"example.com.", "example.com"},
	} {
		if got := query.RegistrableDomain(tc.host); got != tc.want {
			t.Errorf("RegistrableDomain(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}

// TestRenormalizeAndDiff: renormalizing under a second policy keeps the
// first policy's normalizations (its groups are unchanged), a second run
// adds only its own record, and policy-diff names the merge and the rule.
func TestRenormalizeAndDiff(t *testing.T) {
	st := corpusStore(t, "default")
	before := groups(t, st, "provgraph-default")
	pol, err := normalize.LoadPolicy("testdata/hostrules.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Renormalize(context.Background(), st, ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	n1, _ := st.Count()
	again, err := ingest.Renormalize(context.Background(), st, ingest.Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	var runQuads int64
	st.Match(context.Background(), graph.Quad{S: again.Run}, func(graph.Quad) error { runQuads++; return nil })
	if n2, _ := st.Count(); n2-n1 != runQuads {
		t.Errorf("second renormalize added %d quads; only its %d run quads are new", n2-n1, runQuads)
	}
	after := groups(t, st, "provgraph-default")
	if a, b := len(before.Groups), len(after.Groups); a != b {
		t.Errorf("default policy groups changed from %d to %d after renormalizing", a, b)
	}
	a, err := query.Load(context.Background(), citestore.New(st), "provgraph-default")
	if err != nil {
		t.Fatal(err)
	}
	b, err := query.Load(context.Background(), citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Policy.Name != "test-groups-hostrules" {
		t.Errorf("default policy choice = %s, want the newest run's, test-groups-hostrules", b.Policy)
	}
	d := query.DiffPolicies(a, b, query.GroupOptions{})
	var merge *query.GroupDiff
	for i := range d.Changes {
		if d.Changes[i].Kind == "merge" && slices.Equal(d.Changes[i].Citations, []string{"case-lower", "case-upper"}) {
			merge = &d.Changes[i]
		}
	}
	if merge == nil {
		t.Fatalf("no merge of case-upper and case-lower in %+v", d.Changes)
	}
	if !slices.Contains(merge.Rules, "host-path-case (only under B)") {
		t.Errorf("merge rules = %v, want host-path-case named", merge.Rules)
	}
	if len(d.Rules) == 0 {
		t.Error("no policy differences listed")
	}
}

// Regression test for issue 18.4: a run's status is decided from all its
// pg:runStatus values, in any order.
func TestRunStatus(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   string
	}{
		{[]string{"running", "complete"}, query.RunComplete},
		{[]string{"complete", "running"}, query.RunComplete},
		{[]string{"complete"}, query.RunComplete},
		{[]string{"running"}, query.RunRunning},
		{nil, query.RunRunning},
		{[]string{"interrupted", "running"}, query.RunInterrupted},
		{[]string{"running", "interrupted"}, query.RunInterrupted},
	} {
		if got := query.RunStatus(tc.values); got != tc.want {
			t.Errorf("RunStatus(%q) = %q, want %q", tc.values, got, tc.want)
		}
	}
}

// Regression test for issue 18.6: by default (GroupOptions.Review) the
// groups smaller than MinSize that are the source or target of a relation
// that needs review are listed, so that relations between single
// citations are never left out; every listed group is as Groups with
// MinSize 1 gives it, and the counts do not change.
func TestGroupsListReviewRelations(t *testing.T) {
	st := corpusStore(t, "default")
	ctx := context.Background()
	all := groups(t, st, "")
	for _, per := range []int{256, 1} { // one task, and a task per group
		restore := query.SetGroupsPerTask(per)
		set, err := query.LoadGroups(ctx, citestore.New(st), "", query.GroupOptions{MinSize: 2, Review: true})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := set.Report(ctx)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]*query.Group{}
		for _, g := range rep.Groups {
			listed[g.ID] = g
		}
		want, singles := 0, 0
		for _, g := range all.Groups {
			part := len(g.Members) >= 2
			for _, r := range g.Relations {
				part = part || r.Review
			}
			for _, o := range all.Groups {
				for _, r := range o.Relations {
					part = part || (r.Review && r.To == g.ID)
				}
			}
			got := listed[g.ID]
			switch {
			case part && got == nil:
				t.Errorf("group %s (%d members, relations %+v) takes part in a relation that needs review but is not listed", g.ID, len(g.Members), g.Relations)
			case !part && got != nil:
				t.Errorf("group %s is listed, but has %d member and no relation that needs review", g.ID, len(g.Members))
			case part:
				want++
				if len(g.Members) < 2 {
					singles++
				}
				if reportJSON(t, &query.Report{Groups: []*query.Group{got}}) != reportJSON(t, &query.Report{Groups: []*query.Group{g}}) {
					t.Errorf("group %s differs from the one Groups gives", g.ID)
				}
			}
		}
		if len(rep.Groups) != want || singles == 0 {
			t.Errorf("%d groups listed, want %d (%d of them single citations; the corpus must have some)", len(rep.Groups), want, singles)
		}
		for k, n := range all.Counts {
			if rep.Counts[k] != n {
				t.Errorf("count %s = %d, want %d as without the review listing", k, rep.Counts[k], n)
			}
		}
	}
	// Without Review, MinSize alone decides.
	set, err := query.LoadGroups(ctx, citestore.New(st), "", query.GroupOptions{MinSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := set.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		if len(g.Members) < 2 {
			t.Errorf("without Review, group %s of %d member is listed", g.ID, len(g.Members))
		}
	}
}

// TestGroupIDStableAcrossPolicies: after renormalizing under another
// policy, every group whose smallest key is the same under both policies
// keeps its id, and groups whose smallest key differs get another id.
func TestGroupIDStableAcrossPolicies(t *testing.T) {
	st := corpusStore(t, "default")
	pol, err := normalize.LoadPolicy("testdata/hostrules.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Renormalize(context.Background(), st, ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	a := query.Groups(load(t, st, "provgraph-default"), query.GroupOptions{MinSize: 1})
	b := query.Groups(load(t, st, pol.Name()), query.GroupOptions{MinSize: 1})
	if a.Policy.Digest == b.Policy.Digest {
		t.Fatal("the two policies have one digest")
	}
	byKey := map[string]string{}
	for _, g := range a.Groups {
		byKey[g.Key] = g.ID
	}
	same, moved := 0, 0
	for _, g := range b.Groups {
		id, ok := byKey[g.Key]
		switch {
		case ok && id == g.ID:
			same++
		case ok:
			t.Errorf("group of key %q: id %s under %s, %s under %s", g.Key, id, a.Policy, g.ID, b.Policy)
		default:
			moved++
			for _, other := range a.Groups {
				if other.ID == g.ID {
					t.Errorf("group %s of key %q has the id of another key's group %q", g.ID, g.Key, other.Key)
				}
			}
		}
	}
	if same == 0 || moved == 0 {
		t.Errorf("%d groups kept their key and id, %d changed key: the corpus should have both", same, moved)
	}
}

func load(t *testing.T, st *graph.Store, policy string) *query.Snapshot {
	t.Helper()
	snap, err := query.Load(context.Background(), citestore.New(st), policy)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
