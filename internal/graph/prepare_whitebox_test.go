package graph

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// prepBatches returns n batches of quads in which each batch's new terms
// recur in the next ones (a shared subject per pair of batches, a shared
// object per three) and some terms recur in every batch.
func prepBatches(n int) [][]Quad {
	var out [][]Quad
	for b := range n {
		var quads []Quad
		for i := range 30 {
			quads = append(quads,
				Quad{S: IRI(fmt.Sprintf("https://example.test/pair/%d", b/2)), P: IRI("https://example.test/p/member"), O: IRI(fmt.Sprintf("https://example.test/item/%d/%d", b, i))},
				Quad{S: IRI(fmt.Sprintf("https://example.test/item/%d/%d", b, i)), P: IRI(fmt.Sprintf("https://example.test/p/%d", i%5)), O: Literal(fmt.Sprintf("shared %d", b/3), XSDString)},
				Quad{S: IRI(fmt.Sprintf("https://example.test/item/%d/%d", b, i)), P: IRI("https://example.test/p/in"), O: IRI("https://example.test/set"), G: IRI(fmt.Sprintf("https://example.test/g/%d", b/2))},
			)
		}
		out = append(out, quads)
	}
	return out
}

// storeDump is every quad of s, formatted and sorted, and its counters.
func storeDump(t *testing.T, s *Store) ([]string, Stats) {
	t.Helper()
	var out []string
	if err := s.Match(context.Background(), Quad{}, func(q Quad) error {
		out = append(out, q.String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// The file's size and free pages are its layout, not its content:
	// batches prepared while others are added commit in another order.
	st.FileBytes, st.FreeBytes = 0, 0
	return out, st
}

// sequentialDump adds batches one after another to a new store and
// returns its storeDump: what a prepared pipeline must equal.
func sequentialDump(t *testing.T, batches [][]Quad) ([]string, Stats) {
	t.Helper()
	seq, err := Open(filepath.Join(t.TempDir(), "seq.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	for _, b := range batches {
		if _, err := seq.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	return storeDump(t, seq)
}

// TestPrepareAheadMatchesAdd: batches prepared ahead of their write (as
// ingest does: batch n+depth is prepared before batch n is written) give
// the store that adding them one after another gives: the same quads, the
// same number of terms (a term a prepared batch found absent but an
// earlier batch added meanwhile is not given a second id), and a
// consistent file. Within recentKept transactions the writer uses what
// Prepare looked up; further ahead it looks the batch up again.
func TestPrepareAheadMatchesAdd(t *testing.T) {
	// The writer's cache of terms, which holds what the last commits
	// added, dropped at every term: only what the Store kept of the
	// transactions in between can then give a term found absent its id.
	defer func(n int) { hotTerms = n }(hotTerms)
	hotTerms = 1
	batches := prepBatches(24)
	want, wantStats := sequentialDump(t, batches)
	for _, depth := range []int{1, 2, recentKept, recentKept + 3} {
		t.Run(fmt.Sprint("depth ", depth), func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "ahead.db"), &Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var preps []*Prepared
			absentSeen := false
			for k := range batches {
				for len(preps) <= min(k+depth, len(batches)-1) {
					p, err := s.Prepare(batches[len(preps)])
					if err != nil {
						t.Fatal(err)
					}
					absentSeen = absentSeen || slices.Contains(p.ids, absent)
					preps = append(preps, p)
				}
				if _, err := s.AddPreparedWith(preps[k], nil); err != nil {
					t.Fatal(err)
				}
			}
			got, gotStats := storeDump(t, s)
			if !slices.Equal(got, want) {
				t.Errorf("quads differ from sequential adds: %d against %d", len(got), len(want))
			}
			if gotStats != wantStats {
				t.Errorf("stats %+v, want %+v (sequential adds)", gotStats, wantStats)
			}
			if err := s.Check(context.Background()); err != nil {
				t.Errorf("Check: %v", err)
			}
			if !absentSeen {
				t.Error("no prepared batch found a term absent: the test does not exercise the terms added in between")
			}
			// The first depth+1 batches are prepared before anything is
			// committed, and are looked up again by the writer; each later
			// one has depth transactions between its lookups and its
			// write, which the Store keeps up to recentKept of.
			wantUsed := len(batches) - (depth + 1)
			if depth > recentKept {
				wantUsed = 0
			}
			if s.usedPrep != wantUsed {
				t.Errorf("%d batches written with Prepare's lookups, want %d", s.usedPrep, wantUsed)
			}
		})
	}
}

// TestPrepareWhileAdding prepares batches on one goroutine while another
// writes them, as ingest does (run it with -race), and checks the result
// against sequential adds.
func TestPrepareWhileAdding(t *testing.T) {
	batches := prepBatches(40)
	want, wantStats := sequentialDump(t, batches)

	s, err := Open(filepath.Join(t.TempDir(), "piped.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ch := make(chan *Prepared, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ch)
		for _, b := range batches {
			p, err := s.Prepare(b)
			if err != nil {
				t.Error(err)
				return
			}
			ch <- p
		}
	}()
	for p := range ch {
		if _, err := s.AddPreparedWith(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	got, gotStats := storeDump(t, s)
	if !slices.Equal(got, want) || gotStats != wantStats {
		t.Errorf("prepared while adding: %d quads, %+v; want %d, %+v", len(got), gotStats, len(want), wantStats)
	}
	if s.usedPrep == 0 {
		t.Error("no batch was written with Prepare's lookups")
	}
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestPrepareInvalidQuad: Prepare checks the quads as Add does.
func TestPrepareInvalidQuad(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Prepare([]Quad{{S: IRI("https://example.test/s"), P: Literal("p", ""), O: IRI("https://example.test/o")}})
	var qe *QuadError
	if !errors.As(err, &qe) || qe.Index != 0 {
		t.Fatalf("Prepare of a literal predicate: %v, want a *QuadError for quad 0", err)
	}
}

// TestPreparedSpent: AddPreparedWith writes a batch once. Its buffers go
// to the next Prepare, which encodes the next batch in them, and its
// arena's blocks are free once it is written; writing the
// spent batch again is an error that writes nothing, and the batches
// written through the reused buffers make the store adding them one after
// another makes.
func TestPreparedSpent(t *testing.T) {
	batches := prepBatches(6)
	want, wantStats := sequentialDump(t, batches)
	s, err := Open(filepath.Join(t.TempDir(), "spent.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var last *Prepared
	var lastBuf *byte
	for i, b := range batches {
		p, err := s.Prepare(b)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && unsafe.SliceData(p.buf) != lastBuf {
			t.Errorf("batch %d: Prepare did not reuse the buffer of the batch written before it", i)
		}
		lastBuf = unsafe.SliceData(p.buf)
		if _, err := s.AddPreparedWith(p, nil); err != nil {
			t.Fatal(err)
		}
		if !p.spent || p.buf != nil || p.n != 0 {
			t.Fatalf("batch %d: after its write the Prepared holds %d quads, spent %v", i, p.n, p.spent)
		}
		if a := &s.wbufs.mem; a.buf != nil || len(a.used) != 0 || len(a.free) == 0 {
			t.Fatalf("batch %d: after its write the arena holds %d blocks in use (%v), %d free; want none in use and its blocks free", i, len(a.used), a.buf != nil, len(a.free))
		}
		last = p
	}
	n, _ := s.Count()
	added, err := s.AddPreparedWith(last, func(*Writer) error {
		t.Error("the function of a spent batch's write was called")
		return nil
	})
	if !errors.Is(err, errSpent) || added != 0 {
		t.Errorf("writing a spent batch: %d added, %v; want errSpent", added, err)
	}
	if m, _ := s.Count(); m != n {
		t.Errorf("writing a spent batch changed the count from %d to %d", n, m)
	}
	got, gotStats := storeDump(t, s)
	if !slices.Equal(got, want) || gotStats != wantStats {
		t.Errorf("through reused buffers: %d quads, %+v; want %d, %+v", len(got), gotStats, len(want), wantStats)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestArenaReset: an arena's slices do not overlap; after reset its
// blocks are handed out again, up to arenaKept bytes of them, and a slice
// larger than a block is never kept.
func TestArenaReset(t *testing.T) {
	var a arena
	fill := func(n int) [][]byte {
		var out [][]byte
		for i := range n {
			b := a.alloc(1000 + i%3000)
			for j := range b {
				b[j] = byte(i)
			}
			out = append(out, b)
		}
		return out
	}
	check := func(when string, got [][]byte) {
		for i, b := range got {
			for _, c := range b {
				if c != byte(i) {
					t.Fatalf("%s: slice %d was overwritten by a later one", when, i)
				}
			}
			if len(b) != cap(b) {
				t.Fatalf("%s: slice %d has room past its length (%d of %d), where the next one starts", when, i, len(b), cap(b))
			}
		}
	}
	first := fill(20000) // some 50 MB: more blocks than reset keeps
	check("first transaction", first)
	firstBlock := unsafe.SliceData(first[0])
	big := a.alloc(3 * arenaBlock)
	a.reset()
	if len(a.free)*arenaBlock > arenaKept || len(a.free) == 0 {
		t.Fatalf("reset kept %d blocks; want 1 to %d", len(a.free), arenaKept/arenaBlock)
	}
	for _, b := range a.free {
		if unsafe.SliceData(b) == unsafe.SliceData(big) {
			t.Fatal("reset kept a block larger than arenaBlock")
		}
	}
	second := fill(20000)
	check("second transaction", second)
	reused := false
	for _, b := range second {
		if unsafe.SliceData(b) == firstBlock {
			reused = true
		}
	}
	if !reused {
		t.Error("the second transaction was not handed the first one's blocks")
	}
}

// TestWriteBufsDefaultGraph: a write transaction's slices are the last
// one's, and a quad in the default graph after a batch of quads in named
// graphs at the same positions stays in the default graph.
func TestWriteBufsDefaultGraph(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "g.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := func(name string, g Term) []Quad {
		var qs []Quad
		for i := range 50 {
			qs = append(qs, Quad{S: IRI(fmt.Sprintf("https://example.test/%s/%d", name, i)), P: IRI("https://example.test/p"), O: Literal(name, ""), G: g})
		}
		return qs
	}
	if _, err := s.Add(batch("named", IRI("https://example.test/g"))); err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(batch("default", Term{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPreparedWith(p, nil); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = s.Match(context.Background(), Quad{O: Literal("default", "")}, func(q Quad) error {
		n++
		if !q.G.IsZero() {
			t.Errorf("%s: in graph %s, want the default graph", q.S, q.G)
		}
		return nil
	})
	if err != nil || n != 50 {
		t.Errorf("matched %d default-graph quads (%v); want 50", n, err)
	}
}
