package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
