package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/service"
)

// TestGroupsRead: groups prints the same bytes whether it scans the
// database or reads its grouping view a batch of keys at a time (batches
// of one citation and of the default size), in every format and under
// options whose thresholds bite; a bad --read is a usage error and prints
// nothing.
func TestGroupsRead(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	for _, args := range [][]string{
		{"--format", "table"},
		{"--format", "json", "--min-size", "1"},
		{"--format", "csv", "--max-shared", "1"},
		{"--format", "json", "--review-relations=false", "--verdict", "normalized-compare"},
		{"--format", "table", "--redact-userinfo"},
		{"--format", "json", "--redact-userinfo"},
	} {
		t.Setenv("PROVGRAPH_VIEW_BATCH", "")
		code, want, stderr := run(t, append([]string{"groups", "--db", db, "--read", "scan"}, args...)...)
		if code != 0 || want == "" {
			t.Fatalf("groups --read scan %v: exit %d, %s", args, code, stderr)
		}
		for _, batch := range []string{"1", ""} {
			t.Setenv("PROVGRAPH_VIEW_BATCH", batch)
			for _, read := range []string{"view", "auto"} {
				code, got, stderr := run(t, append([]string{"groups", "--db", db, "--read", read}, args...)...)
				if code != 0 || got != want {
					t.Errorf("groups --read %s %v (batch %q): exit %d, %s\n%s\nwant the scan's\n%s", read, args, batch, code, stderr, got, want)
				}
			}
		}
	}
	// auto reads a view whose rows carry member records (as this build's
	// are) whatever the working memory, and says nothing: it is not
	// slower than the scan at a million citations. (A view without them
	// is read only past the working memory, with a note: TestGroupsFrom
	// in internal/service.)
	in, err := os.ReadFile("../../testdata/citations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var more []byte
	for k := range 4 {
		more = append(more, strings.ReplaceAll(string(in), `"citation_id":"`, fmt.Sprintf(`"citation_id":"copy%d-`, k))...)
	}
	// and a rejected raw URL with userinfo, which --redact-userinfo hides
	// in the list of rejected citations read again from the view.
	first, _, _ := strings.Cut(string(in), "\n")
	first = strings.Replace(first, `"citation_id":"`, `"citation_id":"secret-`, 1)
	i := strings.Index(first, `"raw_url":"`) + len(`"raw_url":"`)
	j := i + strings.IndexByte(first[i:], '"')
	more = append(more, first[:i]+"https://user:hunter2@example.com/100%zz"+first[j:]+"\n"...)
	big := filepath.Join(t.TempDir(), "more.jsonl")
	if err := os.WriteFile(big, more, 0o644); err != nil {
		t.Fatal(err)
	}
	bigDB := filepath.Join(t.TempDir(), "big.db")
	if code, _, stderr := run(t, "ingest", "--db", bigDB, big); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	_, want, _ := run(t, "groups", "--db", bigDB, "--read", "scan")
	code, got, stderr := run(t, "groups", "--db", bigDB, "--read", "auto", "--work-mem", "16KiB")
	if code != 0 || got != want || stderr != "" {
		t.Errorf("groups --read auto --work-mem 16KiB: exit %d, stderr %q, the same output %v", code, stderr, got == want)
	}
	for _, format := range []string{"table", "json"} {
		_, want, _ := run(t, "groups", "--db", bigDB, "--read", "scan", "--redact-userinfo", "--format", format)
		code, got, stderr := run(t, "groups", "--db", bigDB, "--read", "view", "--redact-userinfo", "--format", format)
		if code != 0 || got != want || strings.Contains(got, "hunter2") || !strings.Contains(got, "secret-") {
			t.Errorf("groups --read view --redact-userinfo --format %s: exit %d, %s, the same output %v, the password hidden %v", format, code, stderr, got == want, !strings.Contains(got, "hunter2"))
		}
	}
	code, got, stderr = run(t, "groups", "--db", bigDB, "--read", "auto", "--work-mem", "1MiB")
	if code != 0 || got != want || stderr != "" {
		t.Errorf("groups --read auto --work-mem 1MiB: exit %d, stderr %q, the same output %v", code, stderr, got == want)
	}
	code, out, stderr := run(t, "groups", "--db", db, "--read", "all")
	if code != exitUsage || out != "" || !strings.Contains(stderr, `--read "all": want auto, scan or view`) {
		t.Errorf("groups --read all: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestGroupsReadChoice: --read auto reads the view once the citations
// would take more than --work-mem at groupsBytesPerCitation each; view
// and scan are what they say, and neither view nor auto scans past the
// working memory (Strict); a read of the view keeps half of --work-mem
// of the file mapped, 256 MiB at least (the default, 0, without
// --work-mem); $PROVGRAPH_VIEW_BATCH sets the batch.
func TestGroupsReadChoice(t *testing.T) {
	t.Setenv("PROVGRAPH_VIEW_BATCH", "")
	for _, tc := range []struct {
		read    string
		workMem int64
		want    service.GroupsRead
	}{
		{"scan", 1 << 30, service.GroupsScan},
		{"view", 0, service.GroupsRead{View: true, Strict: true}},
		{"view", 1 << 30, service.GroupsRead{View: true, Mapped: 512 << 20, Strict: true}},
		{"view", 100 << 20, service.GroupsRead{View: true, Mapped: 256 << 20, Strict: true}},
		{"auto", 1 << 30, service.GroupsRead{View: true, Mapped: 512 << 20, ScanLimit: (1 << 30) / groupsBytesPerCitation, Strict: true}},
		{"auto", 8 << 30, service.GroupsRead{View: true, Mapped: 4 << 30, ScanLimit: (8 << 30) / groupsBytesPerCitation, Strict: true}},
	} {
		got, err := groupsRead(tc.read, tc.workMem)
		if err != nil || got != tc.want {
			t.Errorf("groupsRead(%q, %d) = %+v, %v; want %+v", tc.read, tc.workMem, got, err, tc.want)
		}
	}
	t.Setenv("PROVGRAPH_VIEW_BATCH", "7")
	if got, _ := groupsRead("view", 0); got.Batch != 7 {
		t.Errorf("PROVGRAPH_VIEW_BATCH=7: batch %d", got.Batch)
	}
}

// TestGroupsReadViewInterrupted: groups reading the view, interrupted at
// each of its cancellation checks in turn (batches of one citation, so
// that the workers hold batches when it comes), ends with "interrupted"
// and exit 3, every worker and read view ended (the database closes), or
// prints the whole report when the cancellation comes after its last
// check.
func TestGroupsReadViewInterrupted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	t.Setenv("PROVGRAPH_VIEW_BATCH", "1")
	_, want, _ := run(t, "groups", "--db", db, "--read", "scan", "--format", "json")
	for at := int64(1); ; at++ {
		ctx := newCancelAtCall(at)
		var stdout, stderr bytes.Buffer
		code := Run(ctx, []string{"groups", "--db", db, "--read", "view", "--format", "json"}, nil, &stdout, &stderr)
		if code == exitOK {
			// Not interrupted: the checks ran out before the cancellation
			// (the end), or it came at the last of them, with nothing
			// left to stop; a check after it would have stopped the run.
			if stdout.String() != want || ctx.calls.Load() > at {
				t.Fatalf("groups --read view, cancelled at check %d of %d: exit 0, the whole output %v", at, ctx.calls.Load(), stdout.String() == want)
			}
			if ctx.calls.Load() < at {
				t.Logf("%d cancellation checks", at-1)
				return
			}
			continue
		}
		checkInterrupted(t, fmt.Sprintf("groups --read view interrupted at check %d", at), code, stderr.String())
		if at > 10000 {
			t.Fatal("no end to the cancellation checks")
		}
	}
}

// TestGroupsWithoutViewBounded: on a database that keeps no grouping view
// (an RDF copy), groups never holds more citations in memory than the
// working memory allows: --read view, and --read auto past --work-mem,
// exit 2 naming view rebuild and --read scan, print nothing and write
// nothing, on every path (the listing, one group, a listing with
// decisions); within --work-mem, or with --read scan, they group in
// memory; after view rebuild, --read view lists the scan's bytes. --engine
// and --since, which the view cannot answer, follow the same rule.
func TestGroupsWithoutViewBounded(t *testing.T) {
	dir := t.TempDir()
	db, nq, copyDB := filepath.Join(dir, "v.db"), filepath.Join(dir, "v.nq"), filepath.Join(dir, "c.db")
	in, err := os.ReadFile("../../testdata/citations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	more := slices.Clone(in)
	for k := range 4 {
		more = append(more, strings.ReplaceAll(string(in), `"citation_id":"`, fmt.Sprintf(`"citation_id":"copy%d-`, k))...)
	}
	src := filepath.Join(dir, "more.jsonl")
	if err := os.WriteFile(src, more, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "ingest", "--db", db, src); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := run(t, "export", "--db", db, "--format", "nq", "--output", nq); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := run(t, "ingest", "--db", copyDB, "--format", "nq", nq); code != exitOK {
		t.Fatal(stderr)
	}
	_, want, _ := run(t, "groups", "--db", copyDB, "--read", "scan")
	if !strings.Contains(want, "g-6e48bcc4a04d") {
		t.Fatalf("the scan lists no group:\n%s", want)
	}
	before, err := os.ReadFile(copyDB)
	if err != nil {
		t.Fatal(err)
	}
	// 65 citations: 16 KiB holds 40 at 400 bytes each, 64 KiB 163.
	refused := [][]string{
		{"--read", "view"},
		{"--read", "auto", "--work-mem", "16KiB"},
		{"--read", "view", "--id", "g-6e48bcc4a04d"},
		{"--read", "auto", "--work-mem", "16KiB", "--key", "https://www.w3.org/TR/prov-o/"},
		{"--read", "auto", "--work-mem", "16KiB", "--state", "unreviewed"},
		{"--read", "view", "--engine", "perplexity"},
	}
	for _, args := range refused {
		code, out, stderr := run(t, append([]string{"groups", "--db", copyDB}, args...)...)
		hint := "view rebuild --db " + copyDB
		if slices.Contains(args, "--engine") {
			hint = "--read scan"
		}
		if code != exitUsage || out != "" || !strings.Contains(stderr, hint) || !strings.Contains(stderr, "--read scan") {
			t.Errorf("groups %v without a view: exit %d, want %d naming %q and --read scan; stdout %q\n%s", args, code, exitUsage, hint, out, stderr)
		}
	}
	for _, args := range [][]string{{"--read", "auto", "--work-mem", "64KiB"}, {"--read", "scan", "--work-mem", "16KiB"}, {"--read", "auto"}} {
		if code, out, stderr := run(t, append([]string{"groups", "--db", copyDB}, args...)...); code != exitOK || out != want {
			t.Errorf("groups %v without a view: exit %d, the scan's output %v\n%s", args, code, out == want, stderr)
		}
	}
	_, engine, _ := run(t, "groups", "--db", copyDB, "--read", "scan", "--engine", "perplexity", "--format", "json")
	if code, out, stderr := run(t, "groups", "--db", copyDB, "--read", "auto", "--work-mem", "64KiB", "--engine", "perplexity", "--format", "json"); code != exitOK || out != engine || strings.Contains(out, `"total": 0`) {
		t.Errorf("groups --engine within --work-mem: exit %d, the scan's output %v\n%s%s", code, out == engine, out, stderr)
	}
	after, err := os.ReadFile(copyDB)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("groups changed the database file")
	}
	if code, _, stderr := run(t, "view", "rebuild", "--db", copyDB); code != exitOK {
		t.Fatalf("view rebuild: exit %d: %s", code, stderr)
	}
	if code, out, stderr := run(t, "groups", "--db", copyDB, "--read", "view"); code != exitOK || out != want {
		t.Errorf("groups --read view after view rebuild: exit %d, the scan's output %v\n%s", code, out == want, stderr)
	}
}
