package graph

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
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
	st.FileBytes = 0
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
