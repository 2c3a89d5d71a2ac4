package graph

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadOnceReadsAsMapped: a ReadOnce Store (every read by pread, the
// filters' blocks too) answers every read as a Store reading through the
// mapping does, on a store of many runs with filters: matches of each
// pattern a lineage uses, term ids and terms, descriptions of a node and
// of its incoming quads. And it did read by pread: its kept pages hold
// the branches it read, the runs' filters were located without being
// read, and its probes of them went by pread.
func TestReadOnceReadsAsMapped(t *testing.T) {
	s, all := filterTestStore(t)
	path := s.path
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mapped, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	once, err := Open(path, &Options{ReadOnly: true, ReadOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	defer once.Close()
	if once.once == nil {
		t.Fatal("a ReadOnly, ReadOnce Store keeps no pages")
	}
	ctx := context.Background()
	type answers struct {
		matches [][]Quad
		ids     []ID
		terms   []Term
		counts  []int
	}
	located := 0 // filters located by pread, not read
	read := func(s *Store, probes *int) answers {
		var a answers
		err := s.Read(func(r *Reader) error {
			for i, q := range all {
				if i%7 != 0 {
					continue
				}
				for _, p := range []Quad{{O: q.O}, {P: q.P, O: q.O}, {S: q.S}, {S: q.S, P: q.P}, {S: q.S, P: q.P, O: q.O}} {
					var got []Quad
					if err := r.Match(ctx, p, func(x Quad) error { got = append(got, x); return nil }); err != nil {
						return err
					}
					a.matches = append(a.matches, got)
				}
				id := r.ID(q.O)
				a.ids = append(a.ids, id, r.ID(q.S), r.ID(IRI("https://example.com/absent")))
				t, err := r.Term(id)
				if err != nil {
					return err
				}
				a.terms = append(a.terms, t)
				var n, in int
				if err := r.Describe(ctx, r.ID(q.S), func(ID, ID) { n++ }); err != nil {
					return err
				}
				if err := r.Incoming(ctx, id, func(ID, ID) { in++ }); err != nil {
					return err
				}
				a.counts = append(a.counts, n, in)
			}
			if probes != nil && r.runs.blocks != nil {
				*probes = r.runs.blocks.n
				for _, ind := range []int{idxPOS, idxOSP} {
					for _, run := range r.runs.idx[ind].runs {
						if run.n > 0 {
							located++
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	want := read(mapped, nil)
	probes := 0
	got := read(once, &probes)
	for i := range want.matches {
		if !slices.Equal(got.matches[i], want.matches[i]) {
			t.Fatalf("match %d: read once %v, mapped %v", i, got.matches[i], want.matches[i])
		}
	}
	if !slices.Equal(got.ids, want.ids) || !slices.Equal(got.terms, want.terms) || !slices.Equal(got.counts, want.counts) {
		t.Fatalf("ids, terms or counts differ: read once %v %v %v, mapped %v %v %v", got.ids, got.terms, got.counts, want.ids, want.terms, want.counts)
	}
	if len(once.once.at) == 0 {
		t.Error("the ReadOnce Store kept no page: its reads did not go by pread")
	}
	if probes == 0 {
		t.Error("no filter block was read by pread")
	}
	if located == 0 {
		t.Error("no run's filter was located by pread")
	}
}

// TestDictLookupOldestFirst: in a hash index with several runs of its
// highest level, a lookup of a term the first transaction wrote seeks in
// the oldest of them only; a ReadOnce Store's reader does so without
// reading any run's filter, and a term not stored is sought in every run
// and not found. A reader through the mapping locates the filters of the
// runs it probes only: one that looks nothing up locates none.
func TestDictLookupOldestFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// 40 transactions of new terms: with runs merged four by four, two
	// runs of level 2 and the younger runs below them.
	for b := range 40 {
		var qs []Quad
		for i := range 20 {
			qs = append(qs, Quad{S: IRI(fmt.Sprintf("https://example.test/s/%d/%d", b, i)), P: IRI(fmt.Sprintf("https://example.test/p/%d", i%3)), O: String(fmt.Sprintf("v %d %d", b, i))})
		}
		if _, err := s.Add(qs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oldest := appendTermCode(nil, IRI("https://example.test/s/0/3"))
	absent := appendTermCode(nil, IRI("https://example.test/absent"))
	topRuns := func(t *testing.T, d *dictReader) {
		t.Helper()
		top, atTop := 0, 0
		for _, run := range d.runs {
			top = max(top, run.level())
		}
		for _, run := range d.runs {
			if run.level() == top {
				atTop++
			}
		}
		if atTop < 2 {
			t.Fatalf("%d runs of the highest level %d among %d, want two or more", atTop, top, len(d.runs))
		}
	}

	t.Run("ReadOnce", func(t *testing.T) {
		once, err := Open(path, &Options{ReadOnly: true, ReadOnce: true})
		if err != nil {
			t.Fatal(err)
		}
		defer once.Close()
		sought := func(d *dictReader) int {
			n := 0
			for _, pc := range d.runPC {
				if pc != nil {
					n++
				}
			}
			return n
		}
		err = once.Read(func(r *Reader) error {
			d := r.dict
			if !d.once {
				t.Fatal("the ReadOnce reader's dictionary is not marked so")
			}
			topRuns(t, d)
			if id := d.lookup(oldest); id == 0 {
				t.Fatal("the first transaction's term is not found")
			}
			if n := sought(d); n != 1 {
				t.Errorf("the lookup of an oldest term sought in %d runs, want 1", n)
			}
			if id := d.lookup(absent); id != 0 {
				t.Errorf("a term not stored has id %d", id)
			}
			if n := sought(d); n != len(d.runs) {
				t.Errorf("the lookup of a term not stored sought in %d runs of %d", n, len(d.runs))
			}
			for i, f := range d.fb {
				if f.found {
					t.Errorf("run %d's filter was located by a reader that seeks without filters", i)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("mapped", func(t *testing.T) {
		mapped, err := Open(path, &Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer mapped.Close()
		located := func(d *dictReader) int {
			n := 0
			for _, f := range d.fb {
				if f.found {
					n++
				}
			}
			return n
		}
		err = mapped.Read(func(r *Reader) error {
			d := r.dict
			topRuns(t, d)
			if n := located(d); n != 0 {
				t.Fatalf("a reader that looked nothing up located %d filters", n)
			}
			if id := d.lookup(oldest); id == 0 {
				t.Fatal("the first transaction's term is not found")
			}
			if n := located(d); n != 1 {
				t.Errorf("the lookup of an oldest term located the filters of %d runs, want 1", n)
			}
			if id := d.lookup(absent); id != 0 {
				t.Errorf("a term not stored has id %d", id)
			}
			if n := located(d); n != len(d.runs) {
				t.Errorf("the lookup of a term not stored located %d filters of %d runs", n, len(d.runs))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
