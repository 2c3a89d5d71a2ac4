package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatsExplainFromView: the explanations that list groups read them
// from the grouping view (--read view, and --read auto past --work-mem),
// in batches smaller than a group's neighbourhood, and print what a scan
// of every citation prints; --read scan still refuses past --work-mem.
func TestStatsExplainFromView(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	for _, f := range []string{"../../testdata/citations.jsonl", "../../internal/query/testdata/corpus.jsonl"} {
		if code, _, stderr := run(t, "ingest", "--db", db, f); code != 0 {
			t.Fatalf("ingest %s: %d %s", f, code, stderr)
		}
	}
	t.Setenv("PROVGRAPH_VIEW_BATCH", "3")
	listed := 0
	for _, what := range []string{"groups", "rejected", "verdict:identity-confirmed", "verdict:needs-content-check", "relation:canonical", "domain:w3.org", "confirmed:text-digest", "keys", "raw-urls", "resolved-urls", "review-state:unreviewed"} {
		for _, format := range []string{"table", "json"} {
			code, want, stderr := run(t, "stats", "--db", db, "--explain", what, "--format", format, "--read", "scan")
			if code != 0 {
				t.Fatalf("stats --explain %s --read scan: %d %s", what, code, stderr)
			}
			if format == "table" && !strings.Contains(want, ": 0\n") {
				listed++
			}
			for _, args := range [][]string{{"--read", "view"}, {"--work-mem", "16KiB"}} {
				code, got, stderr := run(t, append([]string{"stats", "--db", db, "--explain", what, "--format", format}, args...)...)
				if code != 0 || got != want {
					t.Errorf("stats --explain %s --format %s %v: exit %d %s\n%s\nwant (--read scan)\n%s", what, format, args, code, stderr, got, want)
				}
			}
		}
	}
	if listed < 4 {
		t.Errorf("only %d explanations list a group: the comparison proves little", listed)
	}
	if code, _, stderr := run(t, "stats", "--db", db, "--explain", "keys", "--read", "scan", "--work-mem", "16KiB"); code != exitUsage || !strings.Contains(stderr, "stats --explain holds every citation whole") {
		t.Errorf("stats --explain keys --read scan --work-mem 16KiB: exit %d %s", code, stderr)
	}
}

// TestStatsExplainValuesFromView: --explain keys, raw-urls and
// resolved-urls read from the grouping view and sorted on disk print what
// a scan of every citation prints, redacted alike, and leave nothing in
// --tmp; without a view, --read view exits 2 naming view rebuild, and past
// --work-mem the explanation is refused as before.
func TestStatsExplainValuesFromView(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "v.db")
	in := synthFile(t, 400)
	for _, f := range []string{in, "../../testdata/citations.jsonl"} {
		if code, _, stderr := run(t, "ingest", "--db", db, f); code != 0 {
			t.Fatalf("ingest %s: %d %s", f, code, stderr)
		}
	}
	tmp := t.TempDir()
	redacted := 0
	for _, what := range []string{"keys", "raw-urls", "resolved-urls"} {
		for _, args := range [][]string{{"--format", "table"}, {"--format", "json"}, {"--redact-userinfo"}} {
			code, want, stderr := run(t, append([]string{"stats", "--db", db, "--explain", what, "--read", "scan"}, args...)...)
			if code != 0 || strings.Count(want, "\n") < 20 {
				t.Fatalf("stats --explain %s --read scan %v: exit %d, %d lines %s", what, args, code, strings.Count(want, "\n"), stderr)
			}
			if strings.Contains(want, "***@") {
				redacted++
			}
			code, got, stderr := run(t, append([]string{"stats", "--db", db, "--explain", what, "--read", "view", "--tmp", tmp, "--work-mem", "64KiB"}, args...)...)
			if code != 0 || got != want {
				t.Errorf("stats --explain %s --read view %v: exit %d %s\n%s\nwant (--read scan)\n%s", what, args, code, stderr, got, want)
			}
		}
	}
	if redacted == 0 {
		t.Error("no explanation redacted a userinfo: the redaction is not compared")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("files left in --tmp: %v", left)
	}
	bare := filepath.Join(dir, "bare.db")
	if code, _, stderr := run(t, "ingest", "--db", bare, "--no-view", in); code != 0 {
		t.Fatalf("ingest --no-view: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "stats", "--db", bare, "--explain", "raw-urls", "--read", "view"); code != exitUsage || !strings.Contains(stderr, "provgraph view rebuild --db "+bare) {
		t.Errorf("stats --explain raw-urls --read view without a view: exit %d, want %d naming view rebuild\n%s", code, exitUsage, stderr)
	}
	if code, _, stderr := run(t, "stats", "--db", bare, "--explain", "raw-urls", "--work-mem", "16KiB"); code != exitUsage || !strings.Contains(stderr, "stats --explain holds every citation whole") {
		t.Errorf("stats --explain raw-urls --work-mem 16KiB without a view: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
}
