package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/synth"
)

// queueAll reads the whole queue as JSON, pages of limit.
func queueAll(t *testing.T, db string, limit string) []map[string]any {
	t.Helper()
	var all []map[string]any
	after := ""
	for {
		args := []string{"queue", "--db", db, "--format", "json", "--limit", limit}
		if after != "" {
			args = append(args, "--after", after)
		}
		code, stdout, stderr := run(t, args...)
		if code != exitOK {
			t.Fatalf("queue: exit %d\n%s", code, stderr)
		}
		var page struct {
			Groups []map[string]any
			Next   string
		}
		if err := json.Unmarshal([]byte(stdout), &page); err != nil {
			t.Fatalf("queue --format json: %v\n%s", err, stdout)
		}
		all = append(all, page.Groups...)
		if page.Next == "" {
			return all
		}
		after = page.Next
	}
}

// sameAsGroups compares the queue, read in pages, and the counts with
// what provgraph groups lists under its defaults: ids, smallest keys,
// every member key, members and verdicts, in its order; and the queue's
// text header lines with the groups table's.
func sameAsGroups(t *testing.T, what, db string) {
	t.Helper()
	code, stdout, stderr := run(t, "groups", "--db", db, "--format", "json")
	if code != exitOK {
		t.Fatalf("%s: groups: exit %d\n%s", what, code, stderr)
	}
	var rep struct {
		Groups []struct {
			ID, Key, Verdict string
			Members          []struct{ Key string }
		}
		Counts map[string]int
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, g := range rep.Groups {
		var keys []string
		for _, m := range g.Members {
			keys = append(keys, m.Key)
		}
		slices.Sort(keys)
		want = append(want, strings.Join([]string{g.ID, g.Key, strings.Join(slices.Compact(keys), ","), g.Verdict, strings.Repeat("m", len(g.Members))}, " "))
	}
	for _, r := range queueAll(t, db, "7") {
		var keys []string
		for _, k := range r["keys"].([]any) {
			keys = append(keys, k.(string))
		}
		got = append(got, strings.Join([]string{r["id"].(string), r["key"].(string), strings.Join(keys, ","), r["verdict"].(string), strings.Repeat("m", int(r["members"].(float64)))}, " "))
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("%s: the queue differs from the groups listed:\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	code, stdout, _ = run(t, "queue", "--db", db, "--counts", "--format", "json")
	var counts struct{ Counts map[string]int }
	if err := json.Unmarshal([]byte(stdout), &counts); code != exitOK || err != nil {
		t.Fatalf("%s: queue --counts: exit %d, %v", what, code, err)
	}
	for k, n := range rep.Counts {
		if (strings.HasPrefix(k, "verdict:") || k == "groups") && counts.Counts[k] != n {
			t.Errorf("%s: queue --counts %s: %d, groups %d", what, k, counts.Counts[k], n)
		}
	}
	heads := func(out string) []string {
		var hs []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "g-") {
				hs = append(hs, l)
			}
		}
		return hs
	}
	_, table, _ := run(t, "groups", "--db", db)
	_, text, _ := run(t, "queue", "--db", db, "--limit", "0")
	if !slices.Equal(heads(text), heads(table)) {
		t.Errorf("%s: queue's lines differ from the groups table's:\n%s\nwant\n%s", what, strings.Join(heads(text), "\n"), strings.Join(heads(table), "\n"))
	}
}

// TestQueueCommand: queue without records exits 1 saying how to build
// them; queue --build builds them; every later ingest keeps them current
// (pages and counts equal what groups lists), check accepts them, a run
// stopped before its end leaves them refused until it is run again, an
// ingest changing too many keys drops them saying how to build them, and
// a view rebuild drops them.
func TestQueueCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl")
	if code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "queue", "--db", db)
	if code != exitRejected || stdout != "" || !strings.Contains(stderr, "provgraph queue --build --db "+db) {
		t.Fatalf("queue without records: exit %d, want %d saying how to build them\n%s%s", code, exitRejected, stdout, stderr)
	}
	viewStatusSays(t, db, "no group records: provgraph queue answers once you run: provgraph queue --build --db "+db)
	code, stdout, stderr = run(t, "queue", "--build", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "built: 12 groups") {
		t.Fatalf("queue --build: exit %d\n%s%s", code, stdout, stderr)
	}
	viewStatusSays(t, db, "group records, --max-shared 3: 12 groups, made current by build ")
	sameAsGroups(t, "example", db)
	if code, _, stderr := run(t, "queue", "--db", db, "--after", "g-000000000000"); code != exitUsage {
		t.Errorf("queue --after an id not queued: exit %d, want %d\n%s", code, exitUsage, stderr)
	}

	// Synthetic data ingested in parts into a database with records.
	var syn bytes.Buffer
	if err := synth.New(synth.Options{Seed: 3, Sites: 30}).Write(&syn, 900); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(syn.String()), "\n")
	sdb := filepath.Join(dir, "s.db")
	for i, part := range [][]string{lines[:300], lines[300:600], lines[600:]} {
		f := filepath.Join(dir, "part.jsonl")
		if err := os.WriteFile(f, []byte(strings.Join(part, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, "ingest", "--db", sdb, f)
		if code != exitOK {
			t.Fatalf("ingest part %d: exit %d\n%s", i, code, stderr)
		}
		if i == 0 {
			if code, _, stderr := run(t, "queue", "--build", "--db", sdb); code != exitOK {
				t.Fatalf("queue --build: exit %d\n%s", code, stderr)
			}
		} else if !strings.Contains(stderr, "refreshed for") {
			t.Errorf("ingest part %d: no refresh of the records said:\n%s", i, stderr)
		}
		sameAsGroups(t, "synthetic", sdb)
	}
	if code, stdout, stderr := run(t, "check", "--db", sdb); code != exitOK {
		t.Errorf("check with records: exit %d\n%s%s", code, stdout, stderr)
	}

	// A run stopped before its end: keys marked, the records not
	// refreshed. Queue refuses them; the run again refreshes them.
	st, err := graph.Open(sdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(func(w *graph.Writer) error {
		for _, v := range w.Views() {
			rb, err := w.View(v).Sub("records-3", false)
			if err != nil || rb == nil {
				return err
			}
			d, err := rb.Sub("dirty", true)
			if err != nil {
				return err
			}
			var first []byte
			rows, _ := w.View(v).Sub("rows", false)
			rows.Ascend([]byte{1}, func(k, _ []byte) (bool, error) { first, _, _ = bytes.Cut(bytes.Clone(k), []byte{0}); return false, nil })
			return d.Put(first, nil)
		}
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "queue", "--db", sdb); code != exitRejected || !strings.Contains(stderr, "behind 1 key") {
		t.Errorf("queue of records behind: exit %d, want %d\n%s", code, exitRejected, stderr)
	}
	viewStatusSays(t, sdb, "group records, --max-shared 3: behind 1 changed key (a run stopped before its end)")
	if code, _, stderr := run(t, "ingest", "--db", sdb, filepath.Join(dir, "part.jsonl")); code != exitOK || !strings.Contains(stderr, "refreshed for 1 changed key") {
		t.Errorf("ingest again: exit %d\n%s", code, stderr)
	}
	sameAsGroups(t, "synthetic, after the run again", sdb)
	viewStatusSays(t, sdb, "made current by refresh ")

	// Too many keys changed: the records are dropped, saying how to
	// build them.
	syn.Reset()
	if err := synth.New(synth.Options{Seed: 4}).Write(&syn, 1500); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.jsonl")
	renamed := strings.ReplaceAll(syn.String(), `"citation_id":"`, `"citation_id":"big-`)
	if renamed == syn.String() {
		t.Fatal("synthetic records: no citation_id to rename")
	}
	if err := os.WriteFile(big, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "ingest", "--db", sdb, big); code != exitOK || !strings.Contains(stderr, "dropped: more than") || !strings.Contains(stderr, "provgraph queue --build --db "+sdb) {
		t.Errorf("ingest changing many keys: exit %d, want the records dropped\n%s", code, stderr)
	}
	if code, _, _ := run(t, "queue", "--db", sdb); code != exitRejected {
		t.Errorf("queue after the records were dropped: exit %d, want %d", code, exitRejected)
	}
	if code, _, stderr := run(t, "queue", "--build", "--db", sdb); code != exitOK {
		t.Fatalf("queue --build: exit %d\n%s", code, stderr)
	}
	sameAsGroups(t, "synthetic, rebuilt", sdb)

	// A view rebuild drops them.
	if code, _, stderr := run(t, "view", "rebuild", "--db", sdb); code != exitOK || !strings.Contains(stderr, "went with the old view") {
		t.Fatalf("view rebuild: exit %d\n%s", code, stderr)
	}
	if code, _, _ := run(t, "queue", "--db", sdb, "--counts"); code != exitRejected {
		t.Errorf("queue after a view rebuild: exit %d, want %d", code, exitRejected)
	}
}

// TestQueueRecordsSurviveKill: an ingest killed (kill -9) after some of
// its batches leaves records that queue refuses, saying they are behind;
// the same ingest run again completes the run and refreshes them, and the
// queue and counts are then the groups listed.
func TestQueueRecordsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several processes; skipped with -short")
	}
	dir := t.TempDir()
	var b bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 300}).Write(&b, 1200); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(b.String()), "\n")
	first, second := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second.jsonl")
	if err := os.WriteFile(first, []byte(strings.Join(lines[:900], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte(strings.Join(lines[900:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "k.db")
	if code, _, stderr := run(t, "ingest", "--db", db, first); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "queue", "--build", "--db", db); code != exitOK {
		t.Fatalf("queue --build: exit %d\n%s", code, stderr)
	}
	p, held := startHeld(t, "ingest-batch:3", "ingest", "--db", db, "--batch", "500", second)
	if !held {
		t.Fatalf("ingest ended before its third batch; stderr: %s", p.said.String())
	}
	p.kill(t)
	if code, _, stderr := run(t, "queue", "--db", db); code != exitRejected || !strings.Contains(stderr, "behind") {
		t.Errorf("queue after kill -9: exit %d, want %d saying the records are behind\n%s", code, exitRejected, stderr)
	}
	code, _, stderr := run(t, "ingest", "--db", db, "--batch", "500", second)
	if code != exitOK || !strings.Contains(stderr, "completing an interrupted run") || !strings.Contains(stderr, "refreshed for") {
		t.Fatalf("ingest again: exit %d, want the run completed and the records refreshed\n%s", code, stderr)
	}
	sameAsGroups(t, "after kill -9 and the run again", db)
}

// viewStatusSays checks that `provgraph view status` on db says want.
func viewStatusSays(t *testing.T, db, want string) {
	t.Helper()
	code, stdout, stderr := run(t, "view", "status", "--db", db)
	if code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("view status: exit %d, want it to say %q\n%s%s", code, want, stdout, stderr)
	}
}
