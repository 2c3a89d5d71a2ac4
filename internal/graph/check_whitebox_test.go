package graph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// checkTestStore writes a store of about 10 MB (long literals, POS and OSP
// in several runs) and returns its path, closed.
func checkTestStore(t *testing.T) string {
	t.Helper()
	defer func(f, b uint64) { finalRunTuples, bigMerge = f, b }(finalRunTuples, bigMerge)
	finalRunTuples, bigMerge = 4000, 1500
	path := filepath.Join(t.TempDir(), "prov.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 400)
	for b := range 40 {
		var qs []Quad
		for i := range 600 {
			n := b*600 + i
			qs = append(qs, Quad{
				S: IRI(fmt.Sprintf("https://example.com/s/%d", n)),
				P: IRI(fmt.Sprintf("https://example.com/p/%d", i%5)),
				O: String(fmt.Sprintf("%d %s", n, pad)),
			})
		}
		if _, err := s.Add(qs); err != nil {
			t.Fatalf("Add(batch %d) = %v", b, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkMapped opens path read-only with limit, runs Check, and returns
// its error, how many more bytes of files the process has mapped after it
// than before, and the parts of the check (checker.at) in which the
// check's pager released the mapping. The check reads through the
// mapping only (checker.file nil), as it does where the file cannot be
// opened for pread, so that the pager reads it all.
func checkMapped(t *testing.T, path string, limit int64) (error, int64, []string) {
	return checkMappedBy(t, path, limit, false)
}

// checkMappedBy is checkMapped, reading the terms and SPO by pread when
// pread is set (and the file could be opened for it), as Check does.
func checkMappedBy(t *testing.T, path string, limit int64, pread bool) (error, int64, []string) {
	t.Helper()
	s, err := Open(path, &Options{ReadOnly: true, MappedLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var parts []string
	s.onCheck = func(c *checker) {
		if !pread {
			c.file = nil
		} else if c.file == nil {
			t.Fatal("the store did not open its file for pread")
		}
		c.pg.onRelease = func() {
			if !slices.Contains(parts, c.at) {
				parts = append(parts, c.at)
			}
		}
	}
	before, _ := mappedFileBytes()
	err = s.Check(context.Background())
	after, _ := mappedFileBytes()
	return err, after - before, parts
}

// TestCheckMappedLimit checks a store with the mapped limit turned down
// to one byte, so that the check's pager drops the mapping every time it
// looks, in the middle of each part, and checks that the check still
// passes, still finds damage in the part that reads after a drop (the
// twins lookups), and leaves little of the file mapped where a check
// without a limit leaves most of it: issue 17 (check on ten million
// citations mapped the whole 8 GiB file).
func TestCheckMappedLimit(t *testing.T) {
	if !runtimeLinux {
		t.Skip("the mapping is released on Linux only (release_other.go)")
	}
	path := checkTestStore(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()

	err, all, parts := checkMapped(t, path, -1)
	if err != nil {
		t.Fatalf("Check() without a limit = %v", err)
	}
	if len(parts) != 0 {
		t.Errorf("Check() without a limit released the mapping in %v", parts)
	}
	// The measure can see the pages: without a limit, a check leaves
	// most of the file mapped.
	if all < size/2 {
		t.Fatalf("Check() without a limit left %d bytes mapped of a %d-byte file, want at least half", all, size)
	}

	// By pread, the walks of the terms and of SPO map none of their
	// pages.
	err, byPread, _ := checkMappedBy(t, path, -1, true)
	if err != nil {
		t.Fatalf("Check() by pread without a limit = %v", err)
	}
	if byPread >= all*3/4 {
		t.Errorf("Check() by pread without a limit left %d bytes mapped, through the mapping %d: want much less", byPread, all)
	}

	err, limited, parts := checkMapped(t, path, 1)
	if err != nil {
		t.Fatalf("Check() with a limit of one byte = %v", err)
	}
	t.Logf("file %d bytes; left mapped by a check: %d bytes without a limit, %d by pread without a limit, %d with a limit of one byte", size, all, byPread, limited)
	// At most mappedCheckEvery reads of 64 KiB since the last release.
	if max := int64(mappedCheckEvery * 64 << 10); limited > max {
		t.Errorf("Check() with a limit of one byte left %d bytes mapped, want at most %d (without a limit: %d)", limited, max, all)
	}
	for _, want := range []string{"dictionary", "index spo", "index pos", "index osp"} {
		if !slices.Contains(parts, want) {
			t.Errorf("Check() with a limit of one byte released the mapping in %v, never in %q", parts, want)
		}
	}

	// An OSP run loses a chunk: the fingerprints differ, and the twins
	// part looks the quads up one by one, dropping the mapping as it goes.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("osp"))
		rk, _ := b.Cursor().First()
		run := b.Bucket(rk)
		c := run.Cursor()
		k, _ := c.First()
		for string(k) == runCountKey || string(k) == runFilterKey {
			k, _ = c.Next() // the count and the filter are not chunks
		}
		return run.Delete(append([]byte(nil), k...))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	err, _, parts = checkMapped(t, path, 1)
	if want := "index osp lacks quad"; !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Errorf("Check() of the damaged store with a limit of one byte = %v, want ErrCorrupt saying %q", err, want)
	}
	if !slices.Contains(parts, "twins") {
		t.Errorf("Check() of the damaged store with a limit of one byte released the mapping in %v, never in %q", parts, "twins")
	}
}

// TestCheckReportsProgress holds Check to reporting each part, in the
// order it reads them, from 0 to every unit the part reads (each term,
// hash entry and tuple), with reports between, never going back.
func TestCheckReportsProgress(t *testing.T) {
	defer func(n int64) { progressEvery = n }(progressEvery)
	progressEvery = 1000
	path := checkTestStore(t)
	s, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var cnt counters
	if err := s.db.View(func(tx *bbolt.Tx) error { cnt = readCounters(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	var reports []Progress
	ctx := WithProgress(context.Background(), func(p Progress) { reports = append(reports, p) })
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check = %v", err)
	}
	terms, quads := int64(cnt.nextID-1), int64(cnt.quads)
	want := []Progress{
		{Part: "hash index", Unit: "entries", Total: terms},
		{Part: "dictionary", Unit: "terms", Total: terms},
		{Part: "index spo", Unit: "tuples", Total: quads},
		{Part: "index pos: each run", Unit: "tuples", Total: quads},
		{Part: "index pos: the runs merged", Unit: "tuples", Total: quads},
		{Part: "index osp: each run", Unit: "tuples", Total: quads},
		{Part: "index osp: the runs merged", Unit: "tuples", Total: quads},
		{Part: "twins"},
	}
	var parts []Progress
	for i, p := range reports {
		if i == 0 || p.Part != reports[i-1].Part {
			if p.Done != 0 {
				t.Errorf("part %q starts at %d, want 0", p.Part, p.Done)
			}
			parts = append(parts, Progress{Part: p.Part, Unit: p.Unit, Total: p.Total})
			continue
		}
		prev := reports[i-1]
		if p.Done < prev.Done || p.Total != prev.Total || p.Unit != prev.Unit {
			t.Errorf("part %q: report %+v follows %+v", p.Part, p, prev)
		}
	}
	if !slices.Equal(parts, want) {
		t.Fatalf("parts reported:\n%+v\nwant\n%+v", parts, want)
	}
	for _, w := range want[:len(want)-1] {
		var done []int64
		for _, p := range reports {
			if p.Part == w.Part {
				done = append(done, p.Done)
			}
		}
		if last := done[len(done)-1]; last != w.Total {
			t.Errorf("part %q ends at %d %s, want %d", w.Part, last, w.Unit, w.Total)
		}
		if len(done) < 3 {
			t.Errorf("part %q: reports %v, want some between its first and its last (every %d)", w.Part, done, progressEvery)
		}
	}
}
