package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCompact: a database ingested in small batches keeps several runs
// per quad index (check counts them); compact merges them, after which
// groups, lineage and an export read the same, check finds the file
// consistent with one run per index, and a second compact finds nothing
// to do. A missing file and a bad --progress are refused.
func TestCompact(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "--batch", "3", "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	quadRuns := regexp.MustCompile(`(\d+) quad-index runs`)
	runs := func() string {
		t.Helper()
		code, out, stderr := run(t, "check", "--db", db, "--progress", "none")
		if code != exitOK {
			t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
		}
		m := quadRuns.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("check names no quad-index runs:\n%s", out)
		}
		return m[1]
	}
	if n := runs(); n == "2" {
		t.Fatalf("ingest in batches of 3 left %s quad-index runs; the test wants more", n)
	}
	read := func() string {
		_, export, _ := run(t, "export", "--db", db, "--format", "nquads")
		return groupsAndLineage(t, db) + export
	}
	before := read()
	code, out, stderr := run(t, "compact", "--db", db, "--progress", "lines")
	if code != exitOK || !regexp.MustCompile(`(?m)^  pos   \d+ runs now in 1: \d+ quads merged$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  osp   \d+ runs now in 1: \d+ quads merged$`).MatchString(out) || !strings.Contains(out, "quad indexes of ") ||
		!regexp.MustCompile(`compact: index pos: runs merged: \d+ tuples to read`).MatchString(stderr) {
		t.Fatalf("compact: exit %d\n%s%s", code, out, stderr)
	}
	if after := read(); after != before {
		t.Errorf("groups, lineage and export after compact differ:\n%s\nbefore:\n%s", after, before)
	}
	if n := runs(); n != "2" {
		t.Errorf("after compact check counts %s quad-index runs, want 2 (one per index)", n)
	}
	code, out, _ = run(t, "compact", "--db", db)
	if code != exitOK || strings.Count(out, "kept in 1 run already") != 2 {
		t.Errorf("a second compact: exit %d, want both indexes kept in one run already\n%s", code, out)
	}
	if code, _, stderr := run(t, "compact", "--db", db, "--progress", "sometimes"); code != exitUsage || !strings.Contains(stderr, `--progress "sometimes"`) {
		t.Errorf("compact --progress sometimes: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if code, _, stderr := run(t, "compact", "--db", missing); code != exitFailure || !strings.Contains(stderr, "none.db") {
		t.Errorf("compact of a missing file: exit %d, want %d naming it\n%s", code, exitFailure, stderr)
	}
}

// TestIngestCompactsIndexes: with the threshold turned down, an ingest in
// small batches ends by compacting the quad indexes (and says so), which
// leaves one run per index; with --no-compact it leaves them and names
// the command instead.
func TestIngestCompactsIndexes(t *testing.T) {
	defer func(n int) { compactIndexRuns = n }(compactIndexRuns)
	compactIndexRuns = 2
	dir := t.TempDir()
	quadRuns := func(db string) string {
		t.Helper()
		code, out, stderr := run(t, "check", "--db", db, "--progress", "none")
		if code != exitOK {
			t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
		}
		m := regexp.MustCompile(`(\d+) quad-index runs`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("check names no quad-index runs:\n%s", out)
		}
		return m[1]
	}
	db := filepath.Join(dir, "auto.db")
	code, _, stderr := run(t, "ingest", "--db", db, "--batch", "3", "../../testdata/citations.jsonl")
	if code != exitOK || !strings.Contains(stderr, "compacting the quad indexes (") || !strings.Contains(stderr, "quad index pos compacted: ") || !strings.Contains(stderr, "quad indexes compacted in ") {
		t.Fatalf("ingest in small batches: exit %d, want the quad indexes compacted\n%s", code, stderr)
	}
	if n := quadRuns(db); n != "2" {
		t.Errorf("after ingest check counts %s quad-index runs, want 2", n)
	}
	kept := filepath.Join(dir, "kept.db")
	code, _, stderr = run(t, "ingest", "--db", kept, "--batch", "3", "--no-compact", "../../testdata/citations.jsonl")
	if code != exitOK || strings.Contains(stderr, "compacting the quad indexes") || !strings.Contains(stderr, "each of which a lookup probes: provgraph compact --db ") {
		t.Fatalf("ingest --no-compact: exit %d, want the compact command named and nothing compacted\n%s", code, stderr)
	}
	if n := quadRuns(kept); n == "2" {
		t.Errorf("after ingest --no-compact check counts %s quad-index runs, want more", n)
	}
	if code, _, stderr := run(t, "check", "--db", kept, "--progress", "none"); code != exitOK || !strings.Contains(stderr, "each of which a lookup probes: provgraph compact --db ") {
		t.Errorf("check of the file left uncompacted: exit %d, want the compact command named\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "check", "--db", db, "--progress", "none"); code != exitOK || strings.Contains(stderr, "provgraph compact") {
		t.Errorf("check of the compacted file: exit %d, want no compact command named\n%s", code, stderr)
	}
	if a, b := groupsAndLineage(t, db), groupsAndLineage(t, kept); a != b {
		t.Errorf("groups and lineage of the compacted file differ from the other's:\n%s\nother:\n%s", a, b)
	}
}
