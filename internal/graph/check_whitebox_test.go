package graph

import (
	"context"
	"encoding/binary"
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

// TestCheckTermStoredTwice holds the dictionary pass, which compares the
// hash index with the terms by fingerprints instead of looking each term
// up, to what the lookups caught: a term stored under a second id, with
// an entry of the hash index for it (what a lookup of the term would
// miss under one of its ids). The damage adds a run holding the second
// entry, whose hash is then shared: hashEntries groups the ids and
// sameTerms names the term.
func TestCheckTermStoredTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "twice.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add([]Quad{
		{S: IRI("https://example.org/a"), P: IRI("https://example.org/p"), O: String("one")},
		{S: IRI("https://example.org/b"), P: IRI("https://example.org/p"), O: String("two")},
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Term 5 ("two") becomes a copy of term 3 ("one"), with an entry of
	// the hash index under term 3's hash, in a run of its own; term 5's
	// own entry goes (its old hash no term gives now).
	var h3, h5 uint64
	err = db.Update(func(tx *bbolt.Tx) error {
		terms, ids := tx.Bucket([]byte(termsBucket)), tx.Bucket([]byte(idsBucket))
		three := append([]byte(nil), terms.Get([]byte{0, 0, 0, 3})...)
		h3, h5 = termHash(three), termHash(terms.Get([]byte{0, 0, 0, 5}))
		if err := terms.Put([]byte{0, 0, 0, 5}, three); err != nil {
			return err
		}
		name := newRunName(0, 1<<40)
		rb, err := ids.CreateBucket(name[:])
		if err != nil {
			return err
		}
		f := newBloom(1)
		f.add(h3)
		if err := rb.Put([]byte(bloomKey), f.bytes()); err != nil {
			return err
		}
		var k [8]byte
		hashKey(&k, h3)
		return rb.Put(k[:], binary.AppendUvarint(nil, 5))
	})
	if err != nil {
		t.Fatal(err)
	}
	// Drop term 5's old entry: rewrite the chunk that holds it without it.
	err = db.Update(func(tx *bbolt.Tx) error {
		ids := tx.Bucket([]byte(idsBucket))
		c := ids.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			rb := ids.Bucket(k)
			if v != nil || rb == nil {
				continue
			}
			rc := rb.Cursor()
			for ck, cv := rc.First(); ck != nil; ck, cv = rc.Next() {
				var kept []hashEntry
				found := false
				if err := eachEntry(ck, cv, func(h uint64, id uint32) bool {
					if h == h5 && id == 5 {
						found = true
					} else {
						kept = append(kept, hashEntry{h, id})
					}
					return true
				}); err != nil {
					return err
				}
				if !found {
					continue
				}
				if err := rb.Delete(append([]byte(nil), ck...)); err != nil {
					return err
				}
				if len(kept) == 0 {
					return nil
				}
				var nk [8]byte
				hashKey(&nk, kept[0].h)
				val := binary.AppendUvarint(nil, uint64(kept[0].id))
				for i := 1; i < len(kept); i++ {
					val = binary.AppendUvarint(val, kept[i].h-kept[i-1].h)
					val = binary.AppendUvarint(val, uint64(kept[i].id))
				}
				return rb.Put(nk[:], val)
			}
		}
		return fmt.Errorf("no entry for term 5")
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var shared [][]uint32
	var c checker
	err = s.db.View(func(tx *bbolt.Tx) error {
		c = checker{ctx: context.Background(), pg: &pager{db: s.db}}
		runs, err := loadRuns(tx, true)
		if err != nil {
			return err
		}
		held, err := c.hashEntries(tx.Bucket([]byte(idsBucket)), runs)
		shared = held.shared
		return err
	})
	if err != nil || len(c.problems) > 0 {
		t.Fatalf("hashEntries: %v, problems %v", err, c.problems)
	}
	if len(shared) != 1 || !slices.Equal(shared[0], []uint32{3, 5}) {
		t.Errorf("ids sharing a hash: %v, want [[3 5]]", shared)
	}
	err = s.Check(context.Background())
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `term 3 ("one") is stored again as term 5`) {
		t.Errorf("Check = %v, want ErrCorrupt naming term 3 stored again as term 5", err)
	}
}
