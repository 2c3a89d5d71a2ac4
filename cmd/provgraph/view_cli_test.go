package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/service"
)

// TestViewCommands: a new database keeps a view (view status lists it,
// check verifies it); a damaged view makes check exit 5 naming the policy
// and the first differing citation; view rebuild repairs it.
func TestViewCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "v.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK || strings.Contains(stderr, "no grouping view") {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "view", "status", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "provgraph-default@") || !strings.Contains(stdout, "15 rows  complete, begun by ingest") || !strings.Contains(stdout, "kept in sorted runs (rows in 1 run)") {
		t.Errorf("view status: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "check", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "grouping view of policy provgraph-default@") || !strings.Contains(stdout, "15 rows, as the quads give them") {
		t.Errorf("check: exit %d\n%s%s", code, stdout, stderr)
	}

	// Delete the first keyed row.
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var gone string
	err = st.Update(func(w *graph.Writer) error {
		for _, name := range w.Views() {
			// A view this build makes keeps its rows in a run map.
			rows, err := w.View(name).Runs("rows", nil, false)
			if err != nil || rows == nil {
				return fmt.Errorf("view %s: rows %v, %v", name, rows, err)
			}
			var k []byte
			rows.Ascend([]byte{1}, func(rk, _ []byte) (bool, error) { k = bytes.Clone(rk); return false, nil })
			_, id, _ := bytes.Cut(k, []byte{0})
			gone = string(id)
			return rows.Delete(k)
		}
		return nil
	})
	st.Close()
	if err != nil || gone == "" {
		t.Fatalf("damaging the view: %v (row %q)", err, gone)
	}
	code, _, stderr = run(t, "check", "--db", db)
	if code != exitCorrupt || !strings.Contains(stderr, "view of policy provgraph-default@") || !strings.Contains(stderr, "citation "+gone) {
		t.Errorf("check of a damaged view: exit %d, want %d naming the policy and citation %s\n%s", code, exitCorrupt, gone, stderr)
	}
	code, stdout, stderr = run(t, "view", "rebuild", "--db", db, "--policy", "provgraph-default", "--batch", "2")
	if code != exitOK || !strings.Contains(stdout, "rebuilt: 15 rows") || !strings.Contains(stderr, "15 of 15 citations") {
		t.Errorf("view rebuild: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "check", "--db", db); code != exitOK {
		t.Errorf("check after view rebuild: exit %d\n%s%s", code, stdout, stderr)
	}
	// Its batches' runs (eight, left in two when merged as written)
	// merged into one.
	if code, status, _ := run(t, "view", "status", "--db", db); code != exitOK || !strings.Contains(status, "(rows in 1 run)") {
		t.Errorf("view status after view rebuild --batch 2: exit %d, want the rows in one run\n%s", code, status)
	}
	if code, _, stderr := run(t, "view", "rebuild", "--db", db, "--policy", "no-such-policy"); code != exitUsage || !strings.Contains(stderr, "no such policy") {
		t.Errorf("view rebuild of a policy not stored: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	if code, _, _ := run(t, "view", "--db", db); code != exitUsage {
		t.Errorf("view without a subcommand: exit %d, want %d", code, exitUsage)
	}
}

// TestViewFormat4Queries: on a format 4 file an ingest says once that no
// view is kept and how to write one, check passes saying so, and every
// query works without a view.
func TestViewFormat4Queries(t *testing.T) {
	src, err := os.ReadFile("../../internal/graph/testdata/format-v4/prov.db")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "v4.db")
	if err := os.WriteFile(db, src, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl")
	if code != exitOK || strings.Count(stderr, "keeps no grouping view") != 1 || !strings.Contains(stderr, "provgraph view rebuild --db "+db) {
		t.Errorf("ingest into a format 4 file: exit %d, want 0 saying once that no view is kept\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "check", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "version 4") || !strings.Contains(stdout, "no grouping view is kept") {
		t.Errorf("check of a format 4 file: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{
		{"groups"}, {"groups", "--format", "json"}, {"stats"}, {"lineage", "gpt-17-2"}, {"export", "--format", "nt"}, {"view", "status"},
	} {
		if code, stdout, stderr := run(t, append(args, "--db", db)...); code != exitOK || stdout == "" {
			t.Errorf("%s on a format 4 file: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
}

// TestIngestNoView: --no-view leaves a new database without a view (view
// status says none is kept, ingest says how to write one), groups and
// groups --key answer the same as with a view, and a later view rebuild
// gives it one that check accepts; on a database that keeps a view,
// --no-view does not stop it from keeping it.
func TestIngestNoView(t *testing.T) {
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with.db"), filepath.Join(dir, "without.db")
	if code, _, stderr := run(t, "ingest", "--db", with, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	code, _, stderr := run(t, "ingest", "--no-view", "--db", without, "../../testdata/citations.jsonl")
	if code != exitOK || !strings.Contains(stderr, "no grouping view of policy provgraph-default (--no-view)") || !strings.Contains(stderr, "provgraph view rebuild --db") {
		t.Fatalf("ingest --no-view: exit %d, want %d and the rebuild command\n%s", code, exitOK, stderr)
	}
	if code, stdout, stderr := run(t, "view", "status", "--db", without); code != exitOK || !strings.Contains(stdout, "no grouping view is kept") {
		t.Errorf("view status after --no-view: exit %d, lists a view\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"groups"}, {"groups", "--format", "json"}, {"groups", "--key", "http://w3.org/TR/prov-o"}, {"groups", "--key", "https://example.test/report?id=3", "--format", "json"}} {
		_, a, _ := run(t, append(args, "--db", with)...)
		code, b, stderr := run(t, append(args, "--db", without)...)
		if code != exitOK || a != b {
			t.Errorf("%v: exit %d; without a view:\n%s\nwith one:\n%s%s", args, code, b, a, stderr)
		}
	}
	if code, _, stderr := run(t, "view", "rebuild", "--db", without); code != exitOK {
		t.Fatalf("view rebuild: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := run(t, "check", "--db", without); code != exitOK || !strings.Contains(stdout, "15 rows, as the quads give them") {
		t.Errorf("check after rebuild: exit %d\n%s%s", code, stdout, stderr)
	}
	// The view is kept now: --no-view does not stop it.
	if code, _, stderr := run(t, "ingest", "--no-view", "--db", without, "../../testdata/citations.jsonl"); code != exitOK || strings.Contains(stderr, "no grouping view") {
		t.Errorf("second ingest --no-view into a database with a view: exit %d\n%s", code, stderr)
	}
}

// TestViewStatusMemberRecords: view status says when a view's rows have
// no member records (a file of format 6) and what adds them, says nothing
// of it for a view made by this build, and a rebuild adds them.
func TestViewStatusMemberRecords(t *testing.T) {
	data, err := os.ReadFile("../../internal/graph/testdata/format-v6/prov.db")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "v6.db")
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const without = "rows without member records (format 6 or earlier)"
	code, out, stderr := run(t, "view", "status", "--db", db)
	if code != exitOK || !strings.Contains(out, without) || !strings.Contains(out, "provgraph view rebuild adds them") {
		t.Fatalf("view status of a format 6 file: exit %d, %s%s; want it to say %q", code, out, stderr, without)
	}
	if code, _, stderr := run(t, "view", "rebuild", "--db", db); code != exitOK {
		t.Fatalf("view rebuild: exit %d, %s", code, stderr)
	}
	code, out, stderr = run(t, "view", "status", "--db", db)
	if code != exitOK || strings.Contains(out, "member records") {
		t.Errorf("view status after a rebuild: exit %d, %s%s; want no word of member records", code, out, stderr)
	}
	code, out, _ = run(t, "check", "--db", db)
	if code != exitOK || !strings.Contains(out, "provgraph-store version 7") {
		t.Errorf("check after a rebuild: exit %d, %s; want a consistent version 7 file", code, out)
	}
}

// TestViewCompact: a view ingested in small batches with --no-compact
// (rows in several runs, which ingest and view status say view compact
// merges) is compacted into one run per map; the groups it lists, a lineage
// and check are the same before and after, and a second compaction finds
// nothing to do.
func TestViewCompact(t *testing.T) {
	db := filepath.Join(t.TempDir(), "v.db")
	defer func(n int) { compactHintRuns = n }(compactHintRuns)
	compactHintRuns = 2
	const ingestHint = "runs, each of which a lookup probes: provgraph view compact --db "
	if code, _, stderr := run(t, "ingest", "--db", db, "--batch", "40", "--no-compact", "../../testdata/citations.jsonl"); code != exitOK || !strings.Contains(stderr, ingestHint) {
		t.Fatalf("ingest in small batches: exit %d, want the hint %q\n%s", code, ingestHint, stderr)
	}
	const hint = "each lookup probes every run: provgraph view compact --db "
	code, status, stderr := run(t, "view", "status", "--db", db)
	if code != exitOK || strings.Contains(status, "(rows in 1 run)") || !strings.Contains(status, "kept in sorted runs (rows in ") || !strings.Contains(status, hint) {
		t.Fatalf("view status after small batches: exit %d, want rows in several runs and the hint %q\n%s%s", code, hint, status, stderr)
	}
	read := func() string { return groupsAndLineage(t, db) }
	before := read()
	code, out, stderr := run(t, "view", "compact", "--db", db)
	if code != exitOK || !strings.Contains(out, "  rows      ") || !strings.Contains(out, " merged into one: 15 rows") || !strings.Contains(out, "compacted: ") {
		t.Fatalf("view compact: exit %d\n%s%s", code, out, stderr)
	}
	if after := read(); after != before {
		t.Errorf("groups and lineage after compaction differ:\n%s\nbefore:\n%s", after, before)
	}
	code, status, _ = run(t, "view", "status", "--db", db)
	if code != exitOK || !strings.Contains(status, "(rows in 1 run)") || strings.Contains(status, hint) {
		t.Errorf("view status after compaction: exit %d, want rows in 1 run and no hint\n%s", code, status)
	}
	if code, out, stderr := run(t, "check", "--db", db); code != exitOK {
		t.Errorf("check after compaction: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK || strings.Contains(stderr, ingestHint) {
		t.Errorf("ingest of nothing new into the compacted view: exit %d, want no hint\n%s", code, stderr)
	}
	code, out, _ = run(t, "view", "compact", "--db", db)
	if code != exitOK || strings.Count(out, "kept in one run already") != 7 {
		t.Errorf("a second view compact: exit %d, want every map kept in one run already\n%s", code, out)
	}
	if code, _, stderr := run(t, "view", "compact", "--db", db, "--policy", "nosuch"); code != exitUsage || !strings.Contains(stderr, `policy "nosuch"`) {
		t.Errorf("view compact --policy nosuch: exit %d, want %d naming the policy\n%s", code, exitUsage, stderr)
	}
}

// TestIngestCompactsView: an ingest that leaves the view's rows in
// compactHintRuns runs or more ends by compacting the view, and says so;
// what groups and lineage read from it is what they read from the same
// ingest with --no-compact, and check finds it consistent. An interrupt
// during that compaction, at each of its cancellation checks in turn,
// exits 3 after the ingest's summary with one line saying the ingest is
// complete and the view as it was; the listing is unchanged and view
// compact finishes the work.
func TestIngestCompactsView(t *testing.T) {
	defer func(n int) { compactHintRuns = n }(compactHintRuns)
	compactHintRuns = 2
	dir := t.TempDir()
	in := "../../testdata/citations.jsonl"
	read := func(db string) string { return groupsAndLineage(t, db) }
	runs := func(db string) string {
		t.Helper()
		code, out, stderr := run(t, "view", "status", "--db", db)
		if code != exitOK {
			t.Fatalf("view status: exit %d\n%s", code, stderr)
		}
		i := strings.Index(out, "(rows in ")
		if i < 0 {
			t.Fatalf("view status names no runs:\n%s", out)
		}
		return out[i : i+strings.Index(out[i:], ")")+1]
	}

	kept := filepath.Join(dir, "kept.db")
	if code, _, stderr := run(t, "ingest", "--db", kept, "--batch", "40", "--no-compact", in); code != exitOK || strings.Contains(stderr, "compacted") {
		t.Fatalf("ingest --no-compact: exit %d, want no compaction\n%s", code, stderr)
	}
	if r := runs(kept); r == "(rows in 1 run)" {
		t.Fatalf("ingest --no-compact left the view %s: the test wants several", r)
	}
	want := read(kept)

	db := filepath.Join(dir, "auto.db")
	code, _, stderr := run(t, "ingest", "--db", db, "--batch", "40", in)
	if code != exitOK || !strings.Contains(stderr, "compacting the grouping view of provgraph-") || !strings.Contains(stderr, "grouping view compacted: ") || strings.Contains(stderr, "provgraph view compact --db") {
		t.Fatalf("ingest: exit %d, want it to compact the view and say so\n%s", code, stderr)
	}
	if r := runs(db); r != "(rows in 1 run)" {
		t.Errorf("after the ingest the view is kept %s, want 1 run", r)
	}
	if got := read(db); got != want {
		t.Errorf("groups and lineage of the compacted view differ from --no-compact's:\n%s\nwant:\n%s", got, want)
	}
	if code, out, stderr := run(t, "check", "--db", db); code != exitOK {
		t.Errorf("check: exit %d\n%s%s", code, out, stderr)
	}

	// Count the cancellation checks of a whole ingest, then interrupt at
	// each from the last down to the one where the compaction had not
	// begun.
	count := newCancelAtCall(-1)
	if code := Run(count, []string{"ingest", "--db", filepath.Join(dir, "count.db"), "--batch", "40", in}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("counted ingest: exit %d", code)
	}
	interrupted := 0
	for at := count.calls.Load(); at > 0; at-- {
		db := filepath.Join(t.TempDir(), "i.db")
		ctx := newCancelAtCall(at)
		var stderr bytes.Buffer
		code := Run(ctx, []string{"ingest", "--db", db, "--batch", "40", in}, nil, io.Discard, &stderr)
		s := stderr.String()
		if !strings.Contains(s, "compacting the grouping view") {
			break // interrupted before the compaction, as TestInterruptedIngest tests
		}
		what := fmt.Sprintf("ingest cancelled at check %d", at)
		if code == exitOK {
			continue // cancelled after the compaction's last check
		}
		interrupted++
		checkInterrupted(t, what, code, s)
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "ingest ") || !strings.HasPrefix(lines[2], "view compact interrupted: the ingest is complete and the grouping view answers as before (a map is replaced only when its merge is done); provgraph view compact --db ") {
			t.Errorf("%s: standard error %q, want the ingest's summary, the compaction begun, and one line saying it was interrupted", what, s)
		}
		if got := read(db); got != want {
			t.Errorf("%s: the listing differs from an uninterrupted ingest's", what)
		}
		if code, _, stderr := run(t, "view", "compact", "--db", db); code != exitOK {
			t.Errorf("%s: view compact after it: exit %d\n%s", what, code, stderr)
		}
		if r := runs(db); r != "(rows in 1 run)" {
			t.Errorf("%s: after view compact the view is kept %s, want 1 run", what, r)
		}
		if code, out, stderr := run(t, "check", "--db", db); code != exitOK {
			t.Errorf("%s: check: exit %d\n%s%s", what, code, out, stderr)
		}
	}
	if interrupted == 0 {
		t.Error("no ingest was interrupted during its compaction: the path is not tested")
	}
}

// TestIngestCompactLocked: when another process has opened the database
// between the ingest's commit and its compaction, ingest leaves the view
// as written, says which command compacts it, and exits 0: the citations
// are stored. That command then compacts it.
func TestIngestCompactLocked(t *testing.T) {
	defer func(n int) { compactHintRuns = n }(compactHintRuns)
	compactHintRuns = 2
	defer func(f func(string)) { beforeCompact = f }(beforeCompact)
	var held *service.Store
	beforeCompact = func(db string) {
		st, err := service.DB{Path: db}.OpenStore(true)
		if err != nil {
			t.Errorf("opening the database before the compaction: %v", err)
			return
		}
		held = st
	}
	db := filepath.Join(t.TempDir(), "l.db")
	code, _, stderr := run(t, "ingest", "--db", db, "--batch", "40", "--lock-timeout", "0", "../../testdata/citations.jsonl")
	if held == nil {
		t.Fatal("the compaction was not begun")
	}
	held.Close()
	if code != exitOK || !strings.Contains(stderr, "view not compacted: ") || !strings.Contains(stderr, "provgraph view compact --db "+db) {
		t.Fatalf("ingest with the database held: exit %d, want 0 naming view compact\n%s", code, stderr)
	}
	code, status, _ := run(t, "view", "status", "--db", db)
	if code != exitOK || strings.Contains(status, "(rows in 1 run)") {
		t.Errorf("view status: exit %d, want the rows still in several runs\n%s", code, status)
	}
	if code, out, stderr := run(t, "view", "compact", "--db", db); code != exitOK || !strings.Contains(out, "compacted: ") {
		t.Errorf("view compact: exit %d\n%s%s", code, out, stderr)
	}
}

// TestRenormalizeCompactsView: renormalize builds its policy's view
// (DefaultRebuildBatch, 20,000 citations a transaction, a run each) and
// ends by compacting it as ingest does once the rows are in
// compactHintRuns runs or more; with --no-compact it names view compact
// instead, and the next ingest compacts it (ingest compacts every view
// it wrote into). The groups read from either view are the scan's.
func TestRenormalizeCompactsView(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 45,000 citations; skipped with -short")
	}
	defer func(n int) { compactHintRuns = n }(compactHintRuns)
	compactHintRuns = 2
	dir := t.TempDir()
	ingested := filepath.Join(dir, "i.db")
	if code, _, stderr := run(t, "ingest", "--db", ingested, "--no-view", synthFile(t, 45000)); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	for _, noCompact := range []bool{false, true} {
		db := copyFile(t, ingested, filepath.Join(dir, fmt.Sprintf("r%v.db", noCompact)))
		args := []string{"renormalize", "--db", db, "--policy", "lenient"}
		if noCompact {
			args = append(args, "--no-compact")
		}
		code, _, stderr := run(t, args...)
		compacted := strings.Contains(stderr, "compacting the grouping view of provgraph-") && strings.Contains(stderr, "grouping view compacted: ")
		hinted := strings.Contains(stderr, "provgraph view compact --db ")
		if code != exitOK || compacted == noCompact || hinted != noCompact {
			t.Fatalf("%q: exit %d, compacted %v, named view compact %v\n%s", args, code, compacted, hinted, stderr)
		}
		code, status, _ := run(t, "view", "status", "--db", db)
		i := strings.Index(status, "provgraph-lenient@")
		j := strings.Index(status[i:], "\nprovgraph-")
		if j < 0 {
			j = len(status) - i
		}
		lenient := status[i : i+j]
		if code != exitOK || strings.Contains(lenient, "(rows in 1 run)") == noCompact {
			t.Errorf("%q: view status: exit %d, the lenient view\n%s", args, code, lenient)
		}
		var listed [2]string
		for i, read := range []string{"view", "scan"} {
			code, out, stderr := run(t, "groups", "--db", db, "--policy", "provgraph-lenient", "--read", read, "--format", "json")
			if code != exitOK {
				t.Fatalf("groups --read %s: exit %d\n%s", read, code, stderr)
			}
			listed[i] = out
		}
		if listed[0] != listed[1] {
			t.Errorf("%q: groups under the lenient policy differ between the view and a scan", args)
		}
		if noCompact {
			// An ingest compacts every view left in runs, not only its
			// policy's: here one of nothing (whose batch would otherwise
			// merge the few runs itself).
			code, _, stderr := run(t, "ingest", "--db", db, "-")
			if code != exitOK || !strings.Contains(stderr, "compacting the grouping view of provgraph-lenient@") {
				t.Errorf("ingest after renormalize --no-compact: exit %d, want the lenient view compacted\n%s", code, stderr)
			}
		}
	}
}

// groupsAndLineage is what groups (from the view) and the lineage of
// gpt-17-1 print as JSON from db: what a compaction must not change.
func groupsAndLineage(t *testing.T, db string) string {
	t.Helper()
	var all strings.Builder
	for _, args := range [][]string{
		{"groups", "--db", db, "--read", "view", "--format", "json"},
		{"lineage", "--db", db, "--format", "json", "gpt-17-1"},
	} {
		code, out, stderr := run(t, args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", args[0], code, stderr)
		}
		all.WriteString(out)
	}
	return all.String()
}
