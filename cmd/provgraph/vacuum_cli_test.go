package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dbWithFreePages ingests the bundled example into a new database and
// rebuilds its view rebuilds times (each frees the old view's pages); it
// returns the database and its groups as JSON.
func dbWithFreePages(t *testing.T, rebuilds int) (db, groups string) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "v.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	for range rebuilds {
		if code, _, stderr := run(t, "view", "rebuild", "--db", db); code != exitOK {
			t.Fatalf("view rebuild: exit %d\n%s", code, stderr)
		}
	}
	_, groups, _ = run(t, "groups", "--db", db, "--format", "json")
	return db, groups
}

// TestVacuumCommand: after a view rebuild has left free pages, vacuum
// says what it gave back, the file is smaller, and groups, lineage and
// check answer as before; a bad --progress is a usage error and a missing
// file an I/O error, neither making a file.
func TestVacuumCommand(t *testing.T) {
	db, groupsBefore := dbWithFreePages(t, 3)
	before, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "vacuum", "--db", db, "--progress", "lines")
	if code != exitOK || !regexp.MustCompile(`v\.db vacuumed: [0-9.]+ MB before \([0-9,]+ free pages? of 4096 bytes\), [0-9.]+ MB now, `).MatchString(stdout) {
		t.Fatalf("vacuum: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "vacuum: writing the new file: ") {
		t.Errorf("vacuum --progress lines wrote no progress:\n%s", stderr)
	}
	after, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() >= before.Size() {
		t.Errorf("file of %d bytes before the vacuum, %d after; want smaller", before.Size(), after.Size())
	}
	if _, groupsAfter, _ := run(t, "groups", "--db", db, "--format", "json"); groupsAfter != groupsBefore || groupsAfter == "" {
		t.Errorf("groups after the vacuum differ:\nbefore:\n%s\nafter:\n%s", groupsBefore, groupsAfter)
	}
	if code, stdout, stderr := run(t, "check", "--db", db); code != exitOK || !strings.Contains(stdout, "as the quads give them") {
		t.Errorf("check after the vacuum: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(db + ".vacuum"); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}

	if code, _, stderr := run(t, "vacuum", "--db", db, "--progress", "sometimes"); code != exitUsage || !strings.Contains(stderr, "--progress") {
		t.Errorf("vacuum --progress sometimes: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if code, _, stderr := run(t, "vacuum", "--db", missing); code != exitFailure || !strings.Contains(stderr, "none.db") {
		t.Errorf("vacuum of a missing file: exit %d, want %d\n%s", code, exitFailure, stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("vacuum of a missing file made one: %v", err)
	}
}

// TestVacuumHint: a command that frees pages names vacuum when a quarter
// of the file or more is free, and says nothing otherwise.
func TestVacuumHint(t *testing.T) {
	for _, c := range []struct {
		free, size int64
		want       string
	}{
		{300 << 20, 1 << 30, "314.6 MB of the 1073.7 MB file are free pages, which stay in it: provgraph vacuum --db big.db gives them back\n"},
		{200 << 20, 1 << 30, ""},
		{10 << 20, 20 << 20, ""},
	} {
		var b strings.Builder
		vacuumHint(&b, "big.db", c.free, c.size)
		if b.String() != c.want {
			t.Errorf("hint for %d free of %d: %q, want %q", c.free, c.size, b.String(), c.want)
		}
	}
}

// TestVacuumSurvivesKill kills a vacuum with SIGKILL once its copy is
// committed into the new file, before the rename: the database is as it
// was, byte for byte; the next vacuum replaces the stale new file, and
// the database it leaves answers groups as before and passes check.
func TestVacuumSurvivesKill(t *testing.T) {
	db, groupsBefore := dbWithFreePages(t, 1)
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	p, held := startHeld(t, "vacuum-commit:1", "vacuum", "--db", db)
	if !held {
		t.Fatalf("vacuum ended before its first commit:\n%s", p.said.String())
	}
	p.kill(t)
	if got, err := os.ReadFile(db); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("the database changed under a vacuum killed before its rename (%v)", err)
	}
	if _, err := os.Stat(db + ".vacuum"); err != nil {
		t.Fatalf("no new file left by the killed vacuum (%v): the kill came too late to test", err)
	}
	if code, stdout, stderr := run(t, "vacuum", "--db", db); code != exitOK {
		t.Fatalf("vacuum after the kill: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, groupsAfter, _ := run(t, "groups", "--db", db, "--format", "json"); groupsAfter != groupsBefore {
		t.Errorf("groups after the vacuum differ:\nbefore:\n%s\nafter:\n%s", groupsBefore, groupsAfter)
	}
	if code, stdout, stderr := run(t, "check", "--db", db); code != exitOK {
		t.Errorf("check after the vacuum: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(db + ".vacuum"); !os.IsNotExist(err) {
		t.Errorf("new file left after the second vacuum: %v", err)
	}
}
