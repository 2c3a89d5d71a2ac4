package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// cli runs provgraph in process and returns its exit status and output.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestReviewDecideShowList: a decision recorded with review decide shows
// in review show, review list, groups (with --state), stats and lineage,
// and a revision links to the decision it revises; the database stays
// consistent.
func TestReviewDecideShowList(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	const g = "g-6e48bcc4a04d"
	code, out, stderr := cli(t, "review", "decide", "--db", db, g, "same", "--reviewer", "alice", "--rationale", "same W3C page", "--format", "json")
	if code != exitOK {
		t.Fatalf("decide: exit %d: %s", code, stderr)
	}
	var ds []struct{ ID, Decision, Reviewer, Revises string }
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != 1 || ds[0].Decision != "same" || ds[0].Reviewer != "alice" {
		t.Fatalf("decide printed %s (%v)", out, err)
	}
	first := ds[0].ID
	code, out, stderr = cli(t, "review", "decide", "--db", db, g, "different", "--reviewer", "bob", "--format", "json")
	if code != exitOK {
		t.Fatalf("second decide: exit %d: %s", code, stderr)
	}
	json.Unmarshal([]byte(out), &ds)
	if ds[0].Revises != first {
		t.Errorf("second decision revises %q, want %q", ds[0].Revises, first)
	}
	if _, out, _ := cli(t, "review", "show", "--db", db, g); !strings.Contains(out, "review: decided: different by bob") || !strings.Contains(out, "same by alice") {
		t.Errorf("review show lacks the decision or its history:\n%s", out)
	}
	if _, out, _ := cli(t, "groups", "--db", db, "--state", "decided"); !strings.Contains(out, g) || !strings.Contains(out, "# 1 of 1 groups") {
		t.Errorf("groups --state decided:\n%s", out)
	}
	if _, out, _ := cli(t, "groups", "--db", db, "--state", "unreviewed"); strings.Contains(out, "\n"+g+"  ") {
		t.Errorf("groups --state unreviewed lists the decided group:\n%s", out)
	}
	if _, out, _ := cli(t, "stats", "--db", db); !strings.Contains(out, "splits (different)") || !strings.Contains(out, "decided groups                          1") {
		t.Errorf("stats lacks the review counts:\n%s", out)
	}
	if _, out, _ := cli(t, "stats", "--db", db, "--explain", "review-state:decided"); !strings.Contains(out, "different by bob") || !strings.Contains(out, g) {
		t.Errorf("stats --explain review-state:decided:\n%s", out)
	}
	if _, out, _ := cli(t, "stats", "--db", db, "--explain", "review-state:unreviewed"); strings.Contains(out, g) {
		t.Errorf("stats --explain review-state:unreviewed lists the decided group:\n%s", out)
	}
	var st struct {
		Reviews struct {
			Splits    int `json:"splits"`
			Decisions int `json:"decisions"`
		} `json:"reviews"`
	}
	if _, out, _ := cli(t, "stats", "--db", db, "--format", "json"); json.Unmarshal([]byte(out), &st) != nil || st.Reviews.Splits != 1 || st.Reviews.Decisions != 2 {
		t.Errorf("stats --format json reviews: %+v", st.Reviews)
	}
	if _, out, _ := cli(t, "lineage", "--db", db, "gpt-17-1"); !strings.Contains(out, "decisions about gpt-17-1") {
		t.Errorf("lineage lacks the decisions:\n%s", out)
	}
	if _, out, _ := cli(t, "lineage", "--db", db, "gpt-17-1", "--format", "dot"); !strings.Contains(out, `label="adjudicates"`) || !strings.Contains(out, `reviewer\nbob`) {
		t.Errorf("lineage --format dot lacks the decisions:\n%s", out)
	}
	if code, _, stderr := cli(t, "check", "--db", db); code != exitOK {
		t.Errorf("check after decisions: exit %d: %s", code, stderr)
	}
	// The decisions are stored statements: every export carries them.
	_, out, _ = cli(t, "export", "--db", db, "--format", "nq")
	for _, want := range []string{"<https://w3id.org/provgraph/ns#Adjudication>", "<http://www.w3.org/ns/prov#wasRevisionOf>", `"different"`, `"alice"`, "<https://w3id.org/provgraph/ns#EvidenceDigest>"} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %s", want)
		}
	}
}

// TestGroupsFilterAndCursor: --sort, --limit and --cursor page through the
// groups; --id finds one; --domain and --engine select.
func TestGroupsFilterAndCursor(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	type page struct {
		Total  int
		Next   string
		Groups []struct{ ID string }
	}
	get := func(args ...string) page {
		t.Helper()
		code, out, stderr := cli(t, append([]string{"groups", "--db", db, "--format", "json"}, args...)...)
		if code != exitOK {
			t.Fatalf("groups %v: exit %d: %s", args, code, stderr)
		}
		var p page
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("groups %v: %v\n%s", args, err, out)
		}
		return p
	}
	all := get("--sort", "risk")
	var ids []string
	cursor := ""
	for range 10 {
		args := []string{"--sort", "risk", "--limit", "2"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		p := get(args...)
		for _, g := range p.Groups {
			ids = append(ids, g.ID)
		}
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	if len(ids) != all.Total || len(ids) != len(all.Groups) {
		t.Fatalf("pages gave %d groups, want %d", len(ids), all.Total)
	}
	for i, g := range all.Groups {
		if ids[i] != g.ID {
			t.Errorf("page order %v differs from %v", ids, all.Groups)
			break
		}
	}
	if p := get("--id", "g-f42986996d00"); p.Total != 1 || p.Groups[0].ID != "g-f42986996d00" {
		t.Errorf("--id: %+v", p)
	}
	if p := get("--engine", "nobody"); p.Total != 0 {
		t.Errorf("--engine nobody: %+v", p)
	}
	// --engine and --since select by what a lean read of the citations
	// leaves out: each listed group has a member with that engine, or
	// observed at or after the time, and every such group is listed.
	engines, observed := citationFacts(t, "../../testdata/citations.jsonl")
	whole := getMembers(t, db)
	for _, c := range []struct {
		flag, value string
		has         func(id string) bool
	}{
		{"--engine", "perplexity", func(id string) bool { return engines[id] == "perplexity" }},
		{"--engine", "chatgpt", func(id string) bool { return engines[id] == "chatgpt" }},
		{"--since", "2026-11-03", func(id string) bool { return !observed[id].Before(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)) }},
		// 10:02:11+01:00 is before 10:00 UTC.
		{"--since", "2026-11-02T09:10:00Z", func(id string) bool { return !observed[id].Before(time.Date(2026, 11, 2, 9, 10, 0, 0, time.UTC)) }},
	} {
		var want []string
		for _, g := range whole {
			if slices.ContainsFunc(g.members, c.has) {
				want = append(want, g.id)
			}
		}
		var got []string
		for _, g := range getMembers(t, db, c.flag, c.value) {
			got = append(got, g.id)
		}
		if len(want) == 0 || len(want) == len(whole) || !slices.Equal(got, want) {
			t.Errorf("%s %s listed %v, want %v (of %d groups)", c.flag, c.value, got, want, len(whole))
		}
	}
	if p := get("--domain", "w3.org"); p.Total == 0 {
		t.Errorf("--domain w3.org selects nothing")
	}
	if code, _, stderr := cli(t, "groups", "--db", db, "--cursor", "nonsense"); code != exitUsage || !strings.Contains(stderr, "cursor") {
		t.Errorf("bad cursor: exit %d: %s", code, stderr)
	}
}

// citationFacts returns the engine and observation time of each citation
// of a JSON Lines file.
func citationFacts(t *testing.T, path string) (engine map[string]string, observed map[string]time.Time) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	engine, observed = map[string]string{}, map[string]time.Time{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			ID         string `json:"citation_id"`
			Engine     string `json:"engine"`
			ObservedAt string `json:"observed_at"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339, r.ObservedAt)
		if err != nil {
			t.Fatal(err)
		}
		engine[r.ID], observed[r.ID] = r.Engine, at
	}
	return engine, observed
}

// listedGroup is a listed group's id and its members' citation ids.
type listedGroup struct {
	id      string
	members []string
}

// getMembers lists the groups of db with the extra flags.
func getMembers(t *testing.T, db string, args ...string) []listedGroup {
	t.Helper()
	code, out, stderr := cli(t, append([]string{"groups", "--db", db, "--format", "json"}, args...)...)
	if code != exitOK {
		t.Fatalf("groups %v: exit %d: %s", args, code, stderr)
	}
	var p struct {
		Groups []struct {
			ID      string
			Members []struct {
				CitationID string `json:"citation_id"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("groups %v: %v", args, err)
	}
	var gs []listedGroup
	for _, g := range p.Groups {
		lg := listedGroup{id: g.ID}
		for _, m := range g.Members {
			lg.members = append(lg.members, m.CitationID)
		}
		gs = append(gs, lg)
	}
	return gs
}

// TestReviewedGroupsReadEqual: with decisions stored, groups lists the
// same bytes whether it reads the grouping view (a few keys a batch) or
// scans, in every format, with a filter and a page, and the sorted
// listing (which holds every group) selects the same groups.
func TestReviewedGroupsReadEqual(t *testing.T) {
	t.Setenv("PROVGRAPH_VIEW_BATCH", "3")
	db := filepath.Join(t.TempDir(), "r.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := cli(t, "review", "decide", "--db", db, "g-6e48bcc4a04d", "same", "--reviewer", "alice"); code != exitOK {
		t.Fatal(stderr)
	}
	for _, args := range [][]string{
		{},
		{"--min-size", "1"},
		{"--state", "decided"},
		{"--state", "unreviewed", "--limit", "2"},
		{"--limit", "2", "--cursor", "bzI"},
		{"--engine", "perplexity", "--work-mem", "1GiB"},
		{"--redact-userinfo"},
	} {
		for _, format := range []string{"table", "json", "csv"} {
			run := func(read string) string {
				code, out, stderr := cli(t, append([]string{"groups", "--db", db, "--read", read, "--format", format}, args...)...)
				if code != exitOK {
					t.Fatalf("groups --read %s %v: exit %d: %s", read, args, code, stderr)
				}
				return out
			}
			// --engine cannot be read from the view: auto scans.
			read := "view"
			if slices.Contains(args, "--engine") {
				read = "auto"
			}
			scan, view := run("scan"), run(read)
			if scan != view {
				t.Errorf("groups %v --format %s: the view's listing differs from the scan's:\n%s\nscan:\n%s", args, format, view, scan)
			}
			if format == "table" && !strings.Contains(scan, "review: ") {
				t.Errorf("groups %v: no review state listed:\n%s", args, scan)
			}
		}
		var ids, sorted []string
		for _, g := range getMembers(t, db, args...) {
			ids = append(ids, g.id)
		}
		for _, g := range getMembers(t, db, append([]string{"--sort", "size"}, args...)...) {
			sorted = append(sorted, g.id)
		}
		if !slices.Contains(args, "--limit") {
			slices.Sort(ids)
			slices.Sort(sorted)
			if !slices.Equal(ids, sorted) {
				t.Errorf("groups %v: listed %v, sorted by size %v", args, ids, sorted)
			}
		}
	}
}

// TestReviewDecideWithAndWithoutView: a decision recorded on a database
// that keeps a grouping view (the group read from it) and on its RDF copy,
// which keeps none (every group read), records the same evidence digest,
// and review show gives the same page on both.
func TestReviewDecideWithAndWithoutView(t *testing.T) {
	dir := t.TempDir()
	db, nq, copyDB := filepath.Join(dir, "v.db"), filepath.Join(dir, "v.nq"), filepath.Join(dir, "c.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := cli(t, "export", "--db", db, "--format", "nq", "--output", nq); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := cli(t, "ingest", "--db", copyDB, "--format", "nq", nq); code != exitOK {
		t.Fatal(stderr)
	}
	if _, out, _ := cli(t, "view", "status", "--db", copyDB); !strings.Contains(out, "no grouping view is kept") {
		t.Fatalf("the RDF copy keeps a view:\n%s", out)
	}
	const g, other = "g-6e48bcc4a04d", "g-f42986996d00"
	for _, args := range [][]string{
		{g, "same"},
		{"--pair", "pplx-001-2", "gpt-17-2", "different"},
		{"--between", g, other, "related", "--relation", "other"},
	} {
		var digests []string
		for _, d := range []string{db, copyDB} {
			code, out, stderr := cli(t, append([]string{"review", "decide", "--db", d, "--reviewer", "alice", "--format", "json"}, args...)...)
			if code != exitOK {
				t.Fatalf("decide %v on %s: exit %d: %s", args, filepath.Base(d), code, stderr)
			}
			var ds []struct {
				Digest string `json:"evidence_digest"`
			}
			if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != 1 || ds[0].Digest == "" {
				t.Fatalf("decide %v printed %s (%v)", args, out, err)
			}
			digests = append(digests, ds[0].Digest)
		}
		if digests[0] != digests[1] {
			t.Errorf("decide %v: evidence digest %s with the view, %s without", args, digests[0], digests[1])
		}
	}
	show := func(d string) string {
		code, out, stderr := cli(t, "review", "show", "--db", d, g)
		if code != exitOK {
			t.Fatalf("review show on %s: exit %d: %s", filepath.Base(d), code, stderr)
		}
		// The decisions' times and ids differ between the two files.
		return regexp.MustCompile(`at \S+ \(r-[0-9a-f]+\)`).ReplaceAllString(out, "at T (r-ID)")
	}
	if a, b := show(db), show(copyDB); a != b || !strings.Contains(a, "decided: pair gpt-17-2 pplx-001-2: different") || !strings.Contains(a, "relation "+g+" -> "+other) {
		t.Errorf("review show with the view:\n%s\nwithout:\n%s", a, b)
	}
	if code, _, stderr := cli(t, "review", "decide", "--db", db, "--pair", "pplx-001-2", "no-such", "same", "--reviewer", "a"); code == exitOK || !strings.Contains(stderr, "no-such") {
		t.Errorf("decide about an unknown citation: exit %d: %s", code, stderr)
	}
}

// TestReviewDecidePairAndRelation: review decide --pair and --between
// record decisions about two citations and about a relation between two
// groups; review show lists them apart from the group's own history and
// leaves its state unreviewed, a second decision about the same relation
// in the other direction revises the first, lineage shows them, export
// carries them as pg:PairAdjudication and pg:GroupRelationAdjudication,
// and a wrong subject is refused with its exit status.
func TestReviewDecidePairAndRelation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	const g, other = "g-6e48bcc4a04d", "g-f42986996d00" // other: gpt-17-2, a cross-host redirect to g
	code, out, stderr := cli(t, "review", "decide", "--db", db, "--pair", "pplx-001-2", "gpt-17-2", "same", "--reviewer", "alice", "--format", "json")
	if code != exitOK {
		t.Fatalf("decide --pair: exit %d: %s", code, stderr)
	}
	var ds []struct{ ID, Subject, Revises string }
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != 1 || ds[0].Subject != "pair" {
		t.Fatalf("decide --pair printed %s (%v)", out, err)
	}
	pair := ds[0].ID
	if code, out, stderr = cli(t, "review", "decide", "--db", db, "--between", other, g, "related", "--relation", "mirror_of", "--reviewer", "bob", "--format", "json"); code != exitOK {
		t.Fatalf("decide --between: exit %d: %s", code, stderr)
	}
	json.Unmarshal([]byte(out), &ds)
	rel := ds[0].ID
	if code, out, stderr = cli(t, "review", "decide", "--db", db, "--between", g, other, "different", "--reviewer", "carol", "--format", "json"); code != exitOK {
		t.Fatalf("second decide --between: exit %d: %s", code, stderr)
	}
	json.Unmarshal([]byte(out), &ds)
	if ds[0].Revises != rel {
		t.Errorf("the relation decided again in the other direction revises %q, want %q", ds[0].Revises, rel)
	}
	rel2 := ds[0].ID
	_, out, _ = cli(t, "review", "show", "--db", db, g)
	for _, want := range []string{"review: unreviewed", "pairs and relations decided about", "decided: relation " + g + " -> " + other + ": different by carol", "earlier: relation " + other + " -> " + g + ": related mirror_of by bob", "decided: pair gpt-17-2 pplx-001-2: same by alice"} {
		if !strings.Contains(out, want) {
			t.Errorf("review show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "history (newest first)") {
		t.Errorf("review show gives the group a history of its own:\n%s", out)
	}
	if _, out, _ = cli(t, "lineage", "--db", db, "gpt-17-2"); !strings.Contains(out, pair) || !strings.Contains(out, rel2) {
		t.Errorf("lineage of gpt-17-2 lacks %s or %s:\n%s", pair, rel2, out)
	}
	if _, out, _ = cli(t, "export", "--db", db, "--format", "nt"); !strings.Contains(out, "#PairAdjudication>") || !strings.Contains(out, "#GroupRelationAdjudication>") || !strings.Contains(out, `"`+rel2+`"`) {
		t.Errorf("export lacks the pair and relation decisions")
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--pair", "gpt-17-2", "nope", "same"}, exitRejected},
		{[]string{"--pair", "gpt-17-2", "gpt-17-2", "same"}, exitUsage},
		{[]string{"--pair", "gpt-17-2", "same"}, exitUsage},
		{[]string{"--between", g, "g-000000000000", "same"}, exitRejected},
		{[]string{"--between", g, other, "same", "--related-to", other}, exitUsage},
		{[]string{"--pair", "--between", g, other, "same"}, exitUsage},
	} {
		args := append([]string{"review", "decide", "--db", db, "--reviewer", "x"}, tc.args...)
		if code, _, stderr := cli(t, args...); code != tc.want || stderr == "" {
			t.Errorf("%q: exit %d (%s), want %d", tc.args, code, stderr, tc.want)
		}
	}
	if code, out, stderr := cli(t, "check", "--db", db); code != exitOK {
		t.Errorf("check: exit %d\n%s%s", code, out, stderr)
	}
}

// TestStatsWorkMem: stats counts from the grouping view in any working
// memory, with review decisions, and says the same as a scan; on a copy
// without a view --read view refuses (exit 2, nothing printed, the file
// unchanged), naming view rebuild, and a scan answers the same counts; --explain, which holds every citation, refuses past it.
func TestStatsWorkMem(t *testing.T) {
	dir := t.TempDir()
	db, nq, copyDB := filepath.Join(dir, "s.db"), filepath.Join(dir, "s.nq"), filepath.Join(dir, "c.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := cli(t, "review", "decide", "--db", db, "g-6e48bcc4a04d", "same", "--reviewer", "alice"); code != exitOK {
		t.Fatal(stderr)
	}
	t.Setenv(workMemEnv, "")
	want := map[string]string{}
	for _, format := range []string{"table", "json"} {
		code, out, stderr := cli(t, "stats", "--db", db, "--read", "scan", "--format", format)
		if code != exitOK || !strings.Contains(out, "15") || !strings.Contains(out, "decided") {
			t.Fatalf("stats --read scan --format %s: exit %d\n%s%s", format, code, out, stderr)
		}
		want[format] = out
	}
	for _, c := range []struct {
		args []string
		env  string
	}{
		{[]string{"--work-mem", "16KiB"}, ""},
		{[]string{"--read", "view"}, ""},
		{nil, "32KiB"},
	} {
		t.Setenv(workMemEnv, c.env)
		for _, format := range []string{"table", "json"} {
			code, out, stderr := cli(t, append([]string{"stats", "--db", db, "--format", format}, c.args...)...)
			if code != exitOK || out != want[format] {
				t.Errorf("stats %v --format %s with %s=%q: exit %d\n%s\nwant\n%s%s", c.args, format, workMemEnv, c.env, code, out, want[format], stderr)
			}
		}
	}
	t.Setenv(workMemEnv, "")
	// 15 citations at 3,500 bytes: 51 KiB. (Both explanations read the
	// view unless told to scan.)
	for _, args := range [][]string{
		{"--work-mem", "16KiB", "--explain", "review-state:decided", "--read", "scan"},
		{"--work-mem", "16KiB", "--explain", "keys", "--read", "scan"},
	} {
		code, out, stderr := cli(t, append([]string{"stats", "--db", db}, args...)...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "the 15 citations of "+db) || !strings.Contains(stderr, "stats without --explain") {
			t.Errorf("stats %v: exit %d, stdout %q\n%s", args, code, out, stderr)
		}
	}
	if code, out, stderr := cli(t, "stats", "--db", db, "--explain", "keys", "--work-mem", "64KiB"); code != exitOK || !strings.Contains(out, "# keys under policy") {
		t.Errorf("stats --explain keys --work-mem 64KiB: exit %d\n%s%s", code, out, stderr)
	}

	// A copy without a view.
	if code, _, stderr := cli(t, "export", "--db", db, "--format", "nq", "--output", nq); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := cli(t, "ingest", "--db", copyDB, "--format", "nq", nq); code != exitOK {
		t.Fatal(stderr)
	}
	before, err := os.ReadFile(copyDB)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--read", "view"}, {"--read", "view", "--format", "json"}} {
		code, out, stderr := cli(t, append([]string{"stats", "--db", copyDB}, args...)...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "provgraph view rebuild --db "+copyDB) {
			t.Errorf("stats %v on a copy without a view: exit %d, stdout %q\n%s", args, code, out, stderr)
		}
	}
	if after, err := os.ReadFile(copyDB); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the refused stats changed the file (%v)", err)
	}
	// 16 KiB holds the 15 citations at 400 bytes (groups --read auto).
	for _, args := range [][]string{{"--read", "scan", "--work-mem", "16KiB"}, {"--work-mem", "16KiB"}, nil} {
		code, out, stderr := cli(t, append([]string{"stats", "--db", copyDB}, args...)...)
		if code != exitOK || out != want["table"] {
			t.Errorf("stats %v on a copy without a view: exit %d\n%s\nwant\n%s%s", args, code, out, want["table"], stderr)
		}
	}
}

// TestOrderedListingsBounded: groups --sort and review list, ordered
// from a spool file while the groups are read from the grouping view in
// small batches under the smallest --work-mem, list what a scan lists,
// byte for byte, page by page, with and without decisions; the spool is
// gone afterwards, and review list --decisions lists the decisions.
func TestOrderedListingsBounded(t *testing.T) {
	t.Setenv("PROVGRAPH_VIEW_BATCH", "3")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	db := filepath.Join(t.TempDir(), "o.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	lists := [][]string{
		{"groups", "--sort", "risk"},
		{"groups", "--sort", "size", "--min-size", "1", "--format", "json"},
		{"groups", "--sort", "risk", "--limit", "2", "--cursor", "bzI", "--format", "csv"},
		{"review", "list"},
		{"review", "list", "--limit", "3"},
		{"review", "list", "--sort", "size", "--format", "json"},
	}
	for step := range 2 {
		if step == 1 {
			if code, _, stderr := cli(t, "review", "decide", "--db", db, "g-f42986996d00", "different", "--reviewer", "bob"); code != exitOK {
				t.Fatal(stderr)
			}
		}
		for _, args := range lists {
			code, view, stderr := cli(t, append(args, "--db", db, "--read", "view", "--work-mem", "16KiB")...)
			if code != exitOK {
				t.Fatalf("%v: exit %d\n%s", args, code, stderr)
			}
			_, scan, _ := cli(t, append(args, "--db", db, "--read", "scan")...)
			if view != scan || !strings.Contains(view, "g-f42986996d00") && !slices.Contains(args, "--cursor") {
				t.Errorf("%v (decision stored: %v): from the view\n%s\nscan\n%s", args, step == 1, view, scan)
			}
		}
	}
	code, out, stderr := cli(t, "review", "list", "--db", db, "--decisions")
	if code != exitOK || !strings.Contains(out, "bob") {
		t.Errorf("review list --decisions: exit %d\n%s%s", code, out, stderr)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in $TMPDIR: %v", left)
	}
}

// TestReviewedJSONKeepsReport: once a decision is stored, groups --format
// json still carries the rejected and unnormalized citations, the counts
// and the incomplete runs that it carried before (a consumer of the
// listing reads them the same), from the view and from a scan, with the
// userinfo of rejected raw URLs redacted under --redact-userinfo.
func TestReviewedJSONKeepsReport(t *testing.T) {
	in, err := os.ReadFile("../../testdata/citations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	in = append(in, `{"citation_id":"secret-1","engine":"e","answer_id":"a","position":1,"observed_at":"2026-11-10T10:00:00Z","raw_url":"https://user:hunter2@example.com/x"}`+"\n"...)
	dir := t.TempDir()
	src, db := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "r.db")
	if err := os.WriteFile(src, in, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, "ingest", "--db", db, src); code != exitOK {
		t.Fatal(stderr)
	}
	type rest struct {
		Rejected       []map[string]any `json:"rejected"`
		Unnormalized   []string         `json:"unnormalized"`
		Counts         map[string]int   `json:"counts"`
		IncompleteRuns []any            `json:"incomplete_runs"`
	}
	get := func(args ...string) (rest, string) {
		t.Helper()
		code, out, stderr := cli(t, append([]string{"groups", "--db", db, "--format", "json"}, args...)...)
		if code != exitOK {
			t.Fatalf("groups %v: exit %d: %s", args, code, stderr)
		}
		var r rest
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("groups %v: %v", args, err)
		}
		return r, out
	}
	before, _ := get()
	if len(before.Rejected) < 2 || before.Counts["citations"] != 16 {
		t.Fatalf("before a decision: %d rejected, counts %v", len(before.Rejected), before.Counts)
	}
	if code, _, stderr := cli(t, "review", "decide", "--db", db, "g-6e48bcc4a04d", "same", "--reviewer", "alice"); code != exitOK {
		t.Fatal(stderr)
	}
	for _, read := range []string{"view", "scan"} {
		after, out := get("--read", read)
		if !strings.Contains(out, `"review": {`) || !strings.Contains(out, `"total": `) {
			t.Fatalf("--read %s: not the listing with review state:\n%.500s", read, out)
		}
		if !reflect.DeepEqual(after, before) {
			t.Errorf("--read %s: with a decision %+v, before it %+v", read, after, before)
		}
		if _, out := get("--read", read, "--redact-userinfo"); strings.Contains(out, "hunter2") || !strings.Contains(out, "secret-1") {
			t.Errorf("--read %s --redact-userinfo: the password is shown, or the rejected citation is not listed", read)
		}
	}
}

// TestPolicyDiffReads: policy-diff prints the same whether each policy's
// groups are read by a scan or from the grouping views (--read view, or
// auto past --work-mem), with the sorts' working set at its smallest; a
// database without views answers a scan, and refuses --read view (exit 2,
// nothing printed, naming the command that writes a view).
func TestPolicyDiffReads(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "d.db")
	noView := filepath.Join(dir, "nv.db")
	for _, c := range [][]string{
		{"ingest", "--db", db, "../../testdata/citations.jsonl"},
		{"renormalize", "--db", db, "--policy", "lenient"},
		{"ingest", "--db", noView, "--no-view", "../../testdata/citations.jsonl"},
		{"renormalize", "--db", noView, "--policy", "lenient"},
	} {
		if code, _, stderr := cli(t, c...); code != exitOK {
			t.Fatalf("%v: %s", c, stderr)
		}
	}
	t.Setenv(workMemEnv, "")
	args := []string{"policy-diff", "--db", db, "provgraph-default", "provgraph-lenient"}
	code, want, stderr := cli(t, args...)
	if code != exitOK || !strings.Contains(want, "merges") {
		t.Fatalf("policy-diff: exit %d\n%s%s", code, want, stderr)
	}
	_, wantJSON, _ := cli(t, append(args, "--format", "json")...)
	for _, extra := range [][]string{
		{"--read", "scan"},
		{"--read", "view"},
		{"--work-mem", "16KiB"},
		{"--read", "view", "--work-mem", "16KiB", "--tmp", dir},
	} {
		if code, out, stderr := cli(t, append(args, extra...)...); code != exitOK || out != want {
			t.Errorf("policy-diff %v: exit %d\n%s\nwant\n%s%s", extra, code, out, want, stderr)
		}
		if code, out, stderr := cli(t, append(append(args, "--format", "json"), extra...)...); code != exitOK || out != wantJSON {
			t.Errorf("policy-diff --format json %v: exit %d\n%s\nwant\n%s%s", extra, code, out, wantJSON, stderr)
		}
	}
	nvArgs := []string{"policy-diff", "--db", noView, "provgraph-default", "provgraph-lenient"}
	if code, out, stderr := cli(t, nvArgs...); code != exitOK || out != want {
		t.Errorf("policy-diff without views: exit %d\n%s\nwant\n%s%s", code, out, want, stderr)
	}
	code, out, stderr := cli(t, append(nvArgs, "--read", "view")...)
	if code != exitUsage || out != "" || !strings.Contains(stderr, "view rebuild") {
		t.Errorf("policy-diff --read view without views: exit %d, output %q, stderr %q; want exit 2, nothing, and view rebuild named", code, out, stderr)
	}
	if code, _, stderr := cli(t, append(args, "--tmp", filepath.Join(dir, "missing"))...); code != exitUsage || !strings.Contains(stderr, "--tmp") {
		t.Errorf("policy-diff --tmp missing: exit %d, stderr %q; want exit 2 naming --tmp", code, stderr)
	}
}

// TestLineageDatabaseWorkMem: lineage --group-scope database, which holds
// every citation, gives past --work-mem the group of the grouping view (the
// whole database's; standard error says so) when the database keeps one,
// and refuses without one as policy-diff does (exit 2, nothing printed,
// the estimate and the neighbourhood named); the default scope answers
// whatever --work-mem says, and with room the database scope prints what
// it prints without the flag.
func TestLineageDatabaseWorkMem(t *testing.T) {
	db := filepath.Join(t.TempDir(), "d.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	t.Setenv(workMemEnv, "")
	args := []string{"lineage", "--db", db, "gpt-17-2", "--group-scope", "database"}
	code, want, stderr := cli(t, args...)
	if code != exitOK || !strings.Contains(want, "citation gpt-17-2") {
		t.Fatalf("lineage --group-scope database: exit %d\n%s%s", code, want, stderr)
	}
	if code, out, stderr := cli(t, append(args, "--work-mem", "1GiB")...); code != exitOK || out != want {
		t.Errorf("with --work-mem 1GiB: exit %d\n%s\nwant\n%s%s", code, out, want, stderr)
	}
	if 15*lineageDatabaseBytesPerCitation <= 16<<10 {
		t.Fatalf("15 citations at %d bytes fit in 16 KiB: the test needs a smaller --work-mem", lineageDatabaseBytesPerCitation)
	}
	// Past the working memory, a database with a grouping view gives the
	// group from it: what the neighbourhood read from the view gives.
	neighbourhood := func(db string) string {
		code, out, stderr := cli(t, "lineage", "--db", db, "gpt-17-2")
		if code != exitOK {
			t.Fatalf("lineage: exit %d %s", code, stderr)
		}
		return out
	}
	code, out, stderr := cli(t, append(args, "--work-mem", "16KiB")...)
	if code != exitOK || out != neighbourhood(db) || !strings.Contains(stderr, "the group is read from the grouping view instead") {
		t.Errorf("with --work-mem 16KiB and a view: exit %d, %q\n%s", code, stderr, out)
	}
	// Without a view, it refuses.
	bare := filepath.Join(t.TempDir(), "bare.db")
	if code, _, stderr := cli(t, "ingest", "--db", bare, "--no-view", "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	code, out, stderr = cli(t, "lineage", "--db", bare, "gpt-17-2", "--group-scope", "database", "--work-mem", "16KiB")
	if code != exitUsage || out != "" {
		t.Errorf("with --work-mem 16KiB and no view: exit %d, output %q; want exit 2 and nothing", code, out)
	}
	for _, w := range []string{"lineage --group-scope database holds every citation whole", "15 citations of " + bare, "--work-mem", "answers from the citation's neighbourhood"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("with --work-mem 16KiB: stderr %q, want it to say %q", stderr, w)
		}
	}
	if code, out, stderr := cli(t, "lineage", "--db", db, "gpt-17-2", "--work-mem", "16KiB"); code != exitOK || !strings.Contains(out, "citation gpt-17-2") {
		t.Errorf("lineage (neighbourhood) --work-mem 16KiB: exit %d\n%s%s", code, out, stderr)
	}
}
