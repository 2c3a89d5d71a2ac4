package graph

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompactionKeepsMap: a map kept in several runs, with keys
// rewritten and deleted across them, reads the same after its runs are
// merged into one over many small transactions, and passes its check
// (its one run holds its entries, in order, with a filter holding every
// prefix). A compaction left unfinished (a process killed between
// transactions) changes no read, and the next one begins again and
// finishes. A write between two steps makes the next step fail.
func TestCompactionKeepsMap(t *testing.T) {
	defer func(f, b uint64) { finalMapRunBytes, bigMapMerge = f, b }(finalMapRunBytes, bigMapMerge)
	finalMapRunBytes, bigMapMerge = 3000, 1000
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true, MappedLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	model := map[string]string{}
	writeRowsMap(t, s, rng, model, 60, 30, 4)
	read := func(where string, wantRuns int) {
		t.Helper()
		err := s.Read(func(r *Reader) error {
			m, err := r.View("v").Runs("rows", rowPrefix, false)
			if err != nil {
				return err
			}
			if wantRuns > 0 && m.Runs() != wantRuns {
				return fmt.Errorf("%s: %d runs, want %d", where, m.Runs(), wantRuns)
			}
			return checkRunMap(m, model, rng, where)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var before int
	err = s.Read(func(r *Reader) error {
		m, err := r.View("v").Runs("rows", rowPrefix, false)
		before = m.Runs()
		return err
	})
	if err != nil || before < 3 {
		t.Fatalf("%d runs before (%v): the test wants several", before, err)
	}
	read("before", before)

	begin := func() *Compaction {
		t.Helper()
		var c *Compaction
		if err := s.Update(func(w *Writer) error {
			var err error
			c, err = w.View("v").BeginCompaction("rows", rowPrefix)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if c == nil || c.Runs() != before {
			t.Fatalf("BeginCompaction = %v, want one of %d runs", c, before)
		}
		return c
	}
	step := func(c *Compaction) (bool, error) {
		var done bool
		err := s.Update(func(w *Writer) error {
			var err error
			done, err = c.Step(w.View("v"), 100)
			return err
		})
		return done, err
	}

	// Left unfinished after two steps: the reads are unchanged.
	c := begin()
	for range 2 {
		if done, err := step(c); err != nil || done {
			t.Fatalf("first steps: done %v, %v; want more to do", done, err)
		}
	}
	read("during an unfinished compaction", before)

	// A write between steps: the compaction is stale.
	c = begin()
	if _, err := step(c); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(w *Writer) error {
		m, err := w.View("v").Runs("rows", rowPrefix, false)
		if err != nil {
			return err
		}
		model["k41\x00c000"] = "late"
		return m.Put([]byte("k41\x00c000"), []byte("late"))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := step(c); !errors.Is(err, ErrCompactionStale) {
		t.Fatalf("a step after a write: %v, want ErrCompactionStale", err)
	}
	before++
	read("after a stale compaction", before)

	// Begun again: finished, one run.
	c = begin()
	steps := 0
	for done := false; !done; steps++ {
		if done, err = step(c); err != nil {
			t.Fatal(err)
		}
	}
	if steps < 5 {
		t.Errorf("%d steps of 100 bytes: the test wants many", steps)
	}
	if c.Entries() != uint64(len(model)) {
		t.Errorf("compaction wrote %d entries, want %d (deleted keys and older versions dropped)", c.Entries(), len(model))
	}
	read("after compaction", 1)
	if err := s.Update(func(w *Writer) error {
		c, err := w.View("v").BeginCompaction("rows", rowPrefix)
		if c != nil {
			return errors.New("a map of one run is compacted again")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The map goes on taking writes.
	if err := s.Update(func(w *Writer) error {
		m, err := w.View("v").Runs("rows", rowPrefix, false)
		if err != nil {
			return err
		}
		delete(model, "k41\x00c000")
		return m.Delete([]byte("k41\x00c000"))
	}); err != nil {
		t.Fatal(err)
	}
	read("after a write past the compaction", 2)
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestCompactionLeavesSettledRuns: once a compaction has made a run of
// settledMapRunBytes or more, later compactions merge only the runs
// written after it, keeping deletions of keys the settled run holds, so
// that every read stays what it was; a map with one run to merge is left
// alone.
func TestCompactionLeavesSettledRuns(t *testing.T) {
	defer func(f, b, st uint64) { finalMapRunBytes, bigMapMerge, settledMapRunBytes = f, b, st }(finalMapRunBytes, bigMapMerge, settledMapRunBytes)
	finalMapRunBytes, bigMapMerge, settledMapRunBytes = 300, 100, 4000
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	model := map[string]string{}
	type state struct {
		runs, toMerge int
		names         []runName
	}
	look := func(where string) state {
		t.Helper()
		var st state
		err := s.Read(func(r *Reader) error {
			m, err := r.View("v").Runs("rows", rowPrefix, false)
			if err != nil {
				return err
			}
			st.runs, st.toMerge = m.Runs(), m.RunsToMerge()
			for _, r := range m.live() {
				st.names = append(st.names, r.name)
			}
			return checkRunMap(m, model, rng, where)
		})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	compact := func() (merged int) {
		t.Helper()
		var c *Compaction
		if err := s.Update(func(w *Writer) error {
			var err error
			c, err = w.View("v").BeginCompaction("rows", rowPrefix)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if c == nil {
			return 0
		}
		for done := false; !done; {
			if err := s.Update(func(w *Writer) error {
				var err error
				done, err = c.Step(w.View("v"), 500)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		return c.Runs()
	}

	writeRowsMap(t, s, rng, model, 60, 20, 5)
	first := look("written")
	if first.runs < 4 || first.toMerge != first.runs {
		t.Fatalf("written: %+v; want several runs, all to merge", first)
	}
	if n := compact(); n != first.runs {
		t.Fatalf("the first compaction merged %d runs, want all %d", n, first.runs)
	}
	one := look("compacted")
	if one.runs != 1 || one.toMerge != 0 {
		t.Fatalf("compacted: %+v; want one settled run", one)
	}
	settled := one.names[0]

	// Deletions of keys the settled run holds, and rewrites, in new runs.
	writeRowsMap(t, s, rng, model, 30, 20, 2)
	more := look("written after")
	if more.toMerge != more.runs-1 || more.toMerge < 2 {
		t.Fatalf("written after: %+v; want every run but the settled one to merge", more)
	}
	if n := compact(); n != more.toMerge {
		t.Fatalf("the second compaction merged %d runs, want %d", n, more.toMerge)
	}
	two := look("compacted again")
	if two.runs != 2 || two.names[0] != settled && two.names[1] != settled {
		t.Fatalf("compacted again: %+v; want the settled run %x and one more", two, settled)
	}
	if n := compact(); two.toMerge != 0 || n != 0 {
		t.Fatalf("a third compaction: %d runs to merge, %d merged; want none", two.toMerge, n)
	}
}

// writeRowsMap writes txs transactions to the map "rows" of view "v"
// (made if missing), each of up to most random keys, one in deleteShare
// of them deleted, the rest put, keeping model in step.
func writeRowsMap(t *testing.T, s *Store, rng *rand.Rand, model map[string]string, txs, most, deleteShare int) {
	t.Helper()
	for tx := range txs {
		err := s.Update(func(w *Writer) error {
			b := w.View("v")
			if b == nil {
				var err error
				if b, err = w.CreateView("v"); err != nil {
					return err
				}
			}
			m, err := b.Runs("rows", rowPrefix, true)
			if err != nil {
				return err
			}
			for range 1 + rng.IntN(most) {
				k := fmt.Sprintf("k%02d\x00c%03d", rng.IntN(40), rng.IntN(30))
				if rng.IntN(deleteShare) == 0 {
					delete(model, k)
					if err := m.Delete([]byte(k)); err != nil {
						return err
					}
					continue
				}
				v := strings.Repeat(fmt.Sprint(tx), 1+rng.IntN(20))
				model[k] = v
				if err := m.Put([]byte(k), []byte(v)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkRunMap runs m's Check and compares m with model five times over
// (compareRunMap), naming where in any error.
func checkRunMap(m *RunMap, model map[string]string, rng *rand.Rand, where string) error {
	if problems, err := m.Check(10, nil); err != nil || len(problems) > 0 {
		return fmt.Errorf("%s: check: %q, %v", where, problems, err)
	}
	for range 5 {
		if err := compareRunMap(m, model, rng, where); err != nil {
			return err
		}
	}
	return nil
}
