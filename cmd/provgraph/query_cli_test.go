package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/provgraph/provgraph/internal/vocab"
)

// run runs provgraph in-process and returns its exit status and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestQueriesLeaveDatabaseUnchanged ingests the example, runs every query
// command in every format, and checks that the database file is byte for
// byte what it was: the queries open it read-only.
func TestQueriesLeaveDatabaseUnchanged(t *testing.T) {
	db := filepath.Join(t.TempDir(), "q.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"groups", "--format", "json", "--min-size", "1"}, {"groups"}, {"groups", "--format", "csv"},
		{"stats"}, {"stats", "--format", "json"}, {"stats", "--explain", "keys"},
	} {
		code, out, stderr := run(t, append(args, "--db", db)...)
		if code != 0 || out == "" {
			t.Errorf("provgraph %v: exit %d, stderr %s", args, code, stderr)
		}
		if len(args) > 2 && args[0] == "groups" && args[2] == "json" {
			var rep struct {
				Policy struct{ Name, Digest string }
				Groups []struct {
					ID      string
					Members []struct {
						CitationID string `json:"citation_id"`
					}
				}
				Rejected []struct {
					CitationID string `json:"citation_id"`
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("groups JSON: %v", err)
			}
			if rep.Policy.Name != "provgraph-default" || len(rep.Groups) == 0 || len(rep.Rejected) != 2 {
				t.Errorf("groups JSON = %+v", rep)
			}
		}
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("running the query commands changed the database file")
	}
}

func TestQueryErrors(t *testing.T) {
	if code, _, stderr := run(t, "groups", "--db", filepath.Join(t.TempDir(), "none.db")); code == 0 || !strings.Contains(stderr, "none.db") {
		t.Errorf("groups on a missing database: exit %d, %q", code, stderr)
	}
	db := filepath.Join(t.TempDir(), "q.db")
	run(t, "ingest", "--db", db, "../../testdata/citations.jsonl")
	if code, _, stderr := run(t, "groups", "--db", db, "--policy", "nope@1"); code != exitUsage || !strings.Contains(stderr, "provgraph-default@") {
		t.Errorf("groups --policy nope@1: exit %d, %q (want a usage error listing the policies)", code, stderr)
	}
	if code, _, _ := run(t, "groups", "--db", db, "--verdict", "maybe"); code != exitUsage {
		t.Errorf("groups --verdict maybe: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := run(t, "stats", "--db", db, "--explain", "colors"); code != exitUsage {
		t.Errorf("stats --explain colors: exit %d, want %d", code, exitUsage)
	}
}

// emptyDB returns a database file that holds nothing: no citation and no
// normalization policy.
func emptyDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "empty.db")
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return db
}

// Regression test for issue 18.9: an empty database is valid, so groups and
// stats report zero counts and exit 0; only a --policy the database does
// not hold is a usage error.
func TestQueriesOnEmptyDatabase(t *testing.T) {
	db := emptyDB(t)
	for _, args := range [][]string{
		{"groups"}, {"groups", "--format", "json"}, {"groups", "--format", "csv"},
		{"stats"}, {"stats", "--format", "json"}, {"stats", "--explain", "keys"},
	} {
		code, out, stderr := run(t, append(args, "--db", db)...)
		if code != exitOK || stderr != "" {
			t.Errorf("provgraph %v on an empty database: exit %d, stderr %q; want 0 and nothing", args, code, stderr)
			continue
		}
		switch {
		case len(args) == 3 && args[0] == "groups" && args[2] == "json":
			var rep struct {
				Groups []any
				Counts map[string]int
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("groups JSON: %v\n%s", err, out)
			}
			if rep.Groups == nil || len(rep.Groups) != 0 || rep.Counts["citations"] != 0 || rep.Counts["groups"] != 0 {
				t.Errorf("groups JSON on an empty database = %s", out)
			}
		case len(args) == 3 && args[0] == "stats" && args[2] == "json":
			var s struct{ Citations, Groups int }
			if err := json.Unmarshal([]byte(out), &s); err != nil || s.Citations != 0 || s.Groups != 0 {
				t.Errorf("stats JSON on an empty database = %s (%v)", out, err)
			}
		case args[0] == "stats" && len(args) == 1:
			if !strings.Contains(out, "# policy: none") || !strings.Contains(out, "citations                           0") {
				t.Errorf("stats on an empty database:\n%s", out)
			}
		}
	}
	if code, _, stderr := run(t, "groups", "--db", db, "--policy", "nope@1"); code != exitUsage || !strings.Contains(stderr, "nope@1") {
		t.Errorf("groups --policy nope@1 on an empty database: exit %d, %q; want a usage error", code, stderr)
	}
}

// Regression test for issue 18.9: groups and stats classified every load
// error as a usage error; a read that fails (here: cancelled) is exit 3.
func TestQueryLoadErrorIsNotUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "q.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{{"groups"}} {
		var stdout, stderr bytes.Buffer
		code := Run(ctx, append(args, "--db", db), strings.NewReader(""), &stdout, &stderr)
		if code != exitFailure || strings.Contains(stderr.String(), "for usage") {
			t.Errorf("provgraph %v with its read cancelled: exit %d, %q; want %d without a usage hint", args, code, stderr.String(), exitFailure)
		}
	}
	// Load errors of every query command go through service.QueryError.
	for _, tc := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("graph: read q.db: %w", io.ErrUnexpectedEOF), exitFailure},
		{fmt.Errorf("graph: read q.db: %w", graph.ErrCorrupt), exitCorrupt},
		{fmt.Errorf("%w: %q", query.ErrNoPolicy, "nope@1"), exitUsage},
	} {
		if got := exitCode(service.QueryError(tc.err), "provgraph groups", io.Discard); got != tc.want {
			t.Errorf("exitCode(service.QueryError(%v)) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// addRun records a run of class (vocab.IngestRun or vocab.ResolveRun) with
// the given pg:runStatus values, as an interrupted or finished run leaves
// them.
func addRun(t *testing.T, db, node, class, started string, status ...string) {
	t.Helper()
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := graph.IRI(node)
	q := []graph.Quad{
		{S: run, P: graph.IRI(vocab.RDFType), O: graph.IRI(class)},
		{S: run, P: graph.IRI(vocab.ProvStartedAtTime), O: graph.Literal(started, graph.XSDDateTime)},
	}
	for _, s := range status {
		q = append(q, graph.Quad{S: run, P: graph.IRI(vocab.RunStatus), O: graph.String(s)})
	}
	if _, err := st.Add(q); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// Regression test for issues 18.4 and 18.8: groups, stats and lineage
// warn about runs that never completed, on standard error and in JSON
// (incomplete_runs), and a run with both "running" and "complete" is
// complete.
func TestIncompleteRunsWarned(t *testing.T) {
	db := filepath.Join(t.TempDir(), "q.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	const killed = "https://w3id.org/provgraph/id/ingest/killed"
	addRun(t, db, killed, vocab.IngestRun, "2026-12-01T10:00:00Z", "running")
	addRun(t, db, "https://w3id.org/provgraph/id/resolve/done", vocab.ResolveRun, "2026-12-01T11:00:00Z", "complete", "running")
	addRun(t, db, "https://w3id.org/provgraph/id/resolve/stopped", vocab.ResolveRun, "2026-12-01T12:00:00Z", "running", "interrupted")
	want := []query.Run{
		{Node: killed, Kind: "ingest", StartedAt: "2026-12-01T10:00:00Z", Status: query.RunRunning},
		{Node: "https://w3id.org/provgraph/id/resolve/stopped", Kind: "resolve", StartedAt: "2026-12-01T12:00:00Z", Status: query.RunInterrupted},
	}
	for _, args := range [][]string{
		{"groups"}, {"groups", "--format", "json"}, {"stats"}, {"stats", "--format", "json"},
		{"lineage", "gpt-17-2"}, {"lineage", "--format", "json", "gpt-17-2"},
		// A citation the policy rejected is in no group, read from the
		// grouping view or not; the runs still warn.
		{"lineage", "pplx-002-3"}, {"lineage", "--group-scope", "database", "pplx-002-3"},
	} {
		code, out, stderr := run(t, append(args, "--db", db)...)
		if code != exitOK {
			t.Errorf("provgraph %v: exit %d, %s", args, code, stderr)
			continue
		}
		if !strings.Contains(stderr, "warning: ingest run "+killed+" (started 2026-12-01T10:00:00Z) never recorded its completion") ||
			!strings.Contains(stderr, "resolve/stopped (started 2026-12-01T12:00:00Z) was interrupted") || strings.Contains(stderr, "resolve/done") {
			t.Errorf("provgraph %v: standard error does not name exactly the incomplete runs:\n%s", args, stderr)
		}
		if len(args) == 3 && args[2] == "json" {
			var got struct {
				IncompleteRuns []query.Run `json:"incomplete_runs"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("provgraph %v: %v", args, err)
			}
			if !slices.Equal(got.IncompleteRuns, want) {
				t.Errorf("provgraph %v: incomplete_runs = %+v, want %+v", args, got.IncompleteRuns, want)
			}
		}
		if args[0] == "stats" && len(args) == 1 && !strings.Contains(out, "incomplete runs                     2") {
			t.Errorf("stats table does not count the incomplete runs:\n%s", out)
		}
	}
	// A database whose runs all completed says nothing.
	clean := filepath.Join(t.TempDir(), "clean.db")
	run(t, "ingest", "--db", clean, "../../testdata/citations.jsonl")
	code, out, stderr := run(t, "stats", "--db", clean, "--format", "json")
	if code != exitOK || stderr != "" || !strings.Contains(out, `"incomplete_runs": []`) {
		t.Errorf("stats on a complete database: exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
}

// Regression test for issue 18.6: an AMP page and its origin, an archive
// snapshot and its live page, each cited once, are listed by default (table
// and JSON) with the relation between them; --review-relations=false
// lists by size only.
func TestGroupsListSingleCitationRelations(t *testing.T) {
	db := filepath.Join(t.TempDir(), "q.db")
	in := strings.NewReader(`{"citation_id": "amp", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "https://news-example-com.cdn.ampproject.org/c/s/news.example.com/story"}
{"citation_id": "origin", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "https://news.example.com/story"}
{"citation_id": "snapshot", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "https://web.archive.org/web/20250101000000/https://docs.example.org/page"}
{"citation_id": "live", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "https://docs.example.org/page"}
{"citation_id": "alone", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "https://other.example.net/"}
`)
	var stderr bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", db, "-"}, in, io.Discard, &stderr); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr.String())
	}
	code, out, errs := run(t, "groups", "--db", db)
	if code != 0 {
		t.Fatalf("groups: exit %d %s", code, errs)
	}
	for _, want := range []string{"  amp  ", "  origin  ", "  snapshot  ", "  live  ", "format_of -> g-", "archive_of -> g-", "[review]"} {
		if !strings.Contains(out, want) {
			t.Errorf("groups does not list %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "alone") {
		t.Errorf("groups lists a single citation with no relation:\n%s", out)
	}
	listed := func(args ...string) []string {
		t.Helper()
		code, out, errs := run(t, append([]string{"groups", "--db", db, "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("groups %v: exit %d %s", args, code, errs)
		}
		var rep struct {
			Groups []struct {
				Members []struct {
					CitationID string `json:"citation_id"`
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, g := range rep.Groups {
			for _, m := range g.Members {
				ids = append(ids, m.CitationID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	if got, want := listed(), []string{"amp", "live", "origin", "snapshot"}; !slices.Equal(got, want) {
		t.Errorf("groups --format json lists %v, want %v", got, want)
	}
	if got := listed("--review-relations=false"); len(got) != 0 {
		t.Errorf("groups --review-relations=false lists %v, want none", got)
	}
}

// TestIngestProgressLines: --progress lines reports each phase on
// standard error, where a bar would need a terminal, and ends with the
// run's totals; an unknown --progress is a usage error.
func TestIngestProgressLines(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	code, _, stderr := run(t, "ingest", "--db", db, "--batch", "40", "--progress", "lines", "../../testdata/citations.jsonl")
	if code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	if !strings.Contains(stderr, "ingest: writing: ") || !strings.Contains(stderr, "ingest: done: 15 lines, 571 quads added") {
		t.Errorf("--progress lines wrote:\n%s\nwant a writing line and the done line", stderr)
	}
	code, _, stderr = run(t, "ingest", "--db", db, "--progress", "sometimes", "../../testdata/citations.jsonl")
	if code != exitUsage || !strings.Contains(stderr, `--progress "sometimes"`) {
		t.Errorf("--progress sometimes: exit %d, %s; want a usage error", code, stderr)
	}
}

// TestRenormalizeProgressLines: renormalize --progress lines reports the
// normalizations written, then the grouping view it builds for a policy
// without one, then its totals; an unknown --progress is a usage error
// that writes nothing.
func TestRenormalizeProgressLines(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	code, _, stderr := run(t, "renormalize", "--db", db, "--policy", "lenient", "--progress", "lines")
	if code != 0 {
		t.Fatalf("renormalize: %d %s", code, stderr)
	}
	for _, w := range []string{"renormalize: writing: 15 of 15 citations", "renormalize: writing the grouping view: 15 of 15 citations", "renormalize: done: 15 citations"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("renormalize --progress lines wrote:\n%s\nwant %q", stderr, w)
		}
	}
	code, _, stderr = run(t, "renormalize", "--db", db, "--policy", "default", "--progress", "sometimes")
	if code != exitUsage || !strings.Contains(stderr, `--progress "sometimes"`) {
		t.Errorf("--progress sometimes: exit %d, %s; want a usage error", code, stderr)
	}
}
