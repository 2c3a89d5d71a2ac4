package ingest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// firstConflictInOrder is the check that the sort replaces, as the
// validation pass did it before: one map of every id, read in line order.
func firstConflictInOrder(recs []idRecord) (*idConflict, int) {
	first := map[[16]byte]idRecord{}
	for _, r := range recs {
		f, ok := first[r.id]
		if !ok {
			first[r.id] = r
			continue
		}
		if f.digest != r.digest {
			return &idConflict{line: r.line, first: f.line, id: r.id}, -1
		}
	}
	return nil, len(first)
}

// TestIDSorterMatchesMap: the sort finds the same first conflict and the
// same number of distinct ids as a map read in line order, whether the
// records stay in memory, spill to one merge or need merges of merges.
func TestIDSorterMatchesMap(t *testing.T) {
	for _, n := range []int{0, 1, 2, 400, 409, 410, 5000, 20000} {
		for _, ids := range []int{3, n/2 + 1, 4 * n} { // many repeats, some, few
			for _, conflictEvery := range []int{0, 7, n/3 + 1} { // none, often, rarely
				rnd := rand.New(rand.NewPCG(uint64(n), uint64(ids)))
				recs := make([]idRecord, n)
				for i := range recs {
					k := rnd.IntN(max(ids, 1))
					recs[i] = idRecord{id: idKey(fmt.Sprint("c", k)), digest: digestKey(fmt.Sprint("d", k)), line: int64(i + 1)}
					if conflictEvery > 0 && rnd.IntN(conflictEvery) == 0 {
						recs[i].digest = digestKey(fmt.Sprint("other", i))
					}
				}
				wantC, wantN := firstConflictInOrder(recs)
				for _, mem := range []int64{MinWorkMem, 64 << 10, DefaultWorkMem} {
					s := newIDSorter(t.TempDir(), mem)
					for _, r := range recs {
						if err := s.add(r); err != nil {
							t.Fatal(err)
						}
					}
					spills := s.spills
					c, distinct, err := s.check()
					s.close()
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("n=%d ids=%d conflictEvery=%d mem=%d (runs %d, with merges %d)", n, ids, conflictEvery, mem, spills, s.spills)
					switch {
					case (c == nil) != (wantC == nil), c != nil && *c != *wantC:
						t.Errorf("%s: check() = %+v, want %+v", name, c, wantC)
					case wantC == nil && distinct != wantN:
						t.Errorf("%s: %d distinct ids, want %d", name, distinct, wantN)
					}
					if want := int64(n) * idRecordBytes / mem; spills < int(want) {
						t.Errorf("%s: %d runs written before the merge, want at least %d", name, spills, want)
					}
				}
			}
		}
	}
	// The sizes above reach merges of merges at the smallest working set.
	s := newIDSorter(t.TempDir(), MinWorkMem)
	for i := range 20000 {
		s.add(idRecord{id: idKey(fmt.Sprint(i)), line: int64(i + 1)})
	}
	runs := s.spills + 1 // and the last, written by check
	if _, _, err := s.check(); err != nil {
		t.Fatal(err)
	}
	s.close()
	if onePass := runs + (runs+s.fanIn()-1)/s.fanIn(); s.spills <= onePass {
		t.Errorf("20000 ids at %d bytes: %d runs and %d written in all, with a fan-in of %d: want more than one merge pass", MinWorkMem, runs, s.spills, s.fanIn())
	}
}

// TestIDSorterLeavesNoFile: the runs are unlinked when they are created,
// so the directory is empty while the sort holds them and after.
func TestIDSorterLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	s := newIDSorter(dir, MinWorkMem)
	for i := range 5000 {
		if err := s.add(idRecord{id: idKey(fmt.Sprint(i)), line: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if s.spills == 0 || s.files[0] == nil {
		t.Fatalf("5000 ids at %d bytes wrote no run", MinWorkMem)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("while sorting, %d entries in the directory, want none (the runs are unlinked)", len(ents))
	}
	s.close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("after, %d entries in the directory, want none", len(ents))
	}
}

// TestIDSorterMissingDir: a directory for the runs that does not exist is
// an error naming it, at the first spill.
func TestIDSorterMissingDir(t *testing.T) {
	s := newIDSorter("/nonexistent/provgraph-tmp", MinWorkMem)
	defer s.close()
	var err error
	for i := 0; err == nil && i < 5000; i++ {
		err = s.add(idRecord{line: int64(i + 1)})
	}
	if err == nil {
		t.Fatal("no error spilling to a missing directory")
	}
	if want := "/nonexistent/provgraph-tmp"; !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q, want it to name %s", err, want)
	}
}
