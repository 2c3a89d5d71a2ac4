package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStatsExplainFromView: the explanations that list groups read them
// from the grouping view (--read view, and --read auto past --work-mem),
// in batches smaller than a group's neighbourhood, and print what a scan
// of every citation prints; the others still refuse past --work-mem.
func TestStatsExplainFromView(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	for _, f := range []string{"../../testdata/citations.jsonl", "../../internal/query/testdata/corpus.jsonl"} {
		if code, _, stderr := run(t, "ingest", "--db", db, f); code != 0 {
			t.Fatalf("ingest %s: %d %s", f, code, stderr)
		}
	}
	t.Setenv("PROVGRAPH_VIEW_BATCH", "3")
	listed := 0
	for _, what := range []string{"groups", "rejected", "verdict:identity-confirmed", "verdict:needs-content-check", "relation:canonical", "domain:w3.org", "confirmed:text-digest"} {
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
	if code, _, stderr := run(t, "stats", "--db", db, "--explain", "keys", "--work-mem", "16KiB"); code != exitUsage || !strings.Contains(stderr, "stats --explain holds every citation whole") {
		t.Errorf("stats --explain keys --work-mem 16KiB: exit %d %s", code, stderr)
	}
}
