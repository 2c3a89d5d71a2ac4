package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/query"
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
	// Load errors of every query command go through loadError.
	for _, tc := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("graph: read q.db: %w", io.ErrUnexpectedEOF), exitFailure},
		{fmt.Errorf("graph: read q.db: %w", graph.ErrCorrupt), exitCorrupt},
		{fmt.Errorf("%w: %q", query.ErrNoPolicy, "nope@1"), exitUsage},
	} {
		if got := exitCode(loadError(tc.err), io.Discard); got != tc.want {
			t.Errorf("exitCode(loadError(%v)) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
