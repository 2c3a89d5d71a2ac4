package graph

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestReaderKeptCursorsNested reads with a Reader's kept cursors from
// inside a read that uses them (Match of an object, and in its callback a
// Match of the predicate and object, a Describe of the subject and an
// Incoming of the object), and checks that every read, inner and outer,
// finds exactly what a Store.Match of its own finds: a nested read must
// make cursors of its own, and the outer read go on where it was.
func TestReaderKeptCursorsNested(t *testing.T) {
	s, all := filterTestStore(t)
	ctx := context.Background()
	want := func(p Quad) []Quad { return allMatches(t, s, p) }
	err := s.Read(func(r *Reader) error {
		for _, q := range all[:120] {
			var outer []Quad
			err := r.Match(ctx, Quad{O: q.O}, func(got Quad) error {
				outer = append(outer, got)
				var inner []Quad
				if err := r.Match(ctx, Quad{P: got.P, O: got.O}, func(x Quad) error { inner = append(inner, x); return nil }); err != nil {
					return err
				}
				if w := want(Quad{P: got.P, O: got.O}); !slices.Equal(inner, w) {
					t.Errorf("nested Match(%v, %v) = %v, want %v", got.P, got.O, inner, w)
				}
				var desc []ID
				if err := r.Describe(ctx, r.ID(got.S), func(p, o ID) { desc = append(desc, p, o) }); err != nil {
					return err
				}
				if n := len(want(Quad{S: got.S})); len(desc) != 2*n {
					t.Errorf("nested Describe(%v) gives %d quads, want %d", got.S, len(desc)/2, n)
				}
				var in int
				if err := r.Incoming(ctx, r.ID(got.O), func(ID, ID) { in++ }); err != nil {
					return err
				}
				if n := len(want(Quad{O: got.O})); in != n {
					t.Errorf("nested Incoming(%v) gives %d quads, want %d", got.O, in, n)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if w := want(Quad{O: q.O}); !slices.Equal(outer, w) {
				t.Errorf("Match(O: %v) around nested reads = %v, want %v", q.O, outer, w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTermReaderSteps decodes terms by id in ascending runs with small
// and large gaps, backwards, at random, past the last id and at 0, with
// one termReader's get (which steps its kept cursor forward to a near id
// and seeks otherwise), and checks each against the term stored under the
// id.
func TestTermReaderSteps(t *testing.T) {
	s, _ := filterTestStore(t)
	err := s.Read(func(r *Reader) error {
		terms := r.tx.Bucket([]byte(termsBucket))
		wantTerm := func(id uint32) (Term, bool) {
			var k [4]byte
			idKey(&k, id)
			v := terms.Get(k[:])
			if v == nil {
				return Term{}, false
			}
			tm, err := decodeTerm(v)
			if err != nil {
				t.Fatal(err)
			}
			return tm, true
		}
		last := uint32(r.MaxID())
		var ids []uint32
		for id := uint32(1); id <= last; id++ { // every id in order
			ids = append(ids, id)
		}
		for id := uint32(1); id <= last; id += 3 { // small gaps
			ids = append(ids, id)
		}
		for id := uint32(1); id <= last; id += termStep + 1 { // just too far to step
			ids = append(ids, id)
		}
		for id := last; id >= 1; id-- { // backwards
			ids = append(ids, id)
		}
		rng := rand.New(rand.NewPCG(3, 17))
		for range 500 {
			ids = append(ids, 1+rng.Uint32N(last+4)) // a few past the last id
		}
		ids = append(ids, last-2, last+1, last-1, 0, last, last+2, 1)
		names := newTermReader(r.tx)
		for i, id := range ids {
			if id == 0 {
				if got, err := names.term(0); err != nil || !got.IsZero() {
					t.Fatalf("read %d: term(0) = %v, %v; want the zero term", i, got, err)
				}
				continue
			}
			v := names.get(id) // past the cache
			want, ok := wantTerm(id)
			if !ok {
				if v != nil {
					t.Fatalf("read %d: get(%d) beyond the last id = %q, want nothing", i, id, v)
				}
				continue
			}
			got, err := decodeTerm(v)
			if err != nil || got != want {
				t.Fatalf("read %d: get(%d) decodes to %v, %v; want %v", i, id, got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReaderDecode checks that Decode gives what Term gives for every id
// (the zero term for 0, an error past the last id), and leaves the
// Reader's cache as it was.
func TestReaderDecode(t *testing.T) {
	s, _ := filterTestStore(t)
	err := s.Read(func(r *Reader) error {
		for id := ID(0); id <= r.MaxID()+1; id++ {
			before := len(r.names.cache)
			got, err := r.Decode(id)
			if len(r.names.cache) != before {
				t.Fatalf("Decode(%d) added to the cache", id)
			}
			want, werr := r.Term(id)
			if got != want || (err == nil) != (werr == nil) {
				t.Fatalf("Decode(%d) = %v, %v; Term gives %v, %v", id, got, err, want, werr)
			}
			if id == r.MaxID()+1 && err == nil {
				t.Fatalf("Decode(%d) past the last id = %v, want an error", id, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReaderInOrder reads every node's quads and every term of a store
// through a Reader told InOrder (SPO and the terms by pread, through kept
// pageCursors) and through one that is not, and requires the same
// answers: in subject order, as check of a view reads, and at random, as
// a read InOrder may still be asked.
func TestReaderInOrder(t *testing.T) {
	s, _ := filterTestStore(t)
	ctx := context.Background()
	type read struct {
		desc  [][2]ID
		terms []Term
	}
	readAll := func(inOrder bool, order []ID) read {
		var out read
		err := s.Read(func(r *Reader) error {
			if inOrder {
				r.InOrder()
				if r.names.pc == nil || r.runs.file == nil {
					t.Fatal("InOrder did not make the reads go by pread")
				}
			}
			for _, id := range order {
				if err := r.Describe(ctx, id, func(p, o ID) { out.desc = append(out.desc, [2]ID{p, o}) }); err != nil {
					return err
				}
				tm, err := r.Term(id)
				if err != nil {
					return err
				}
				out.terms = append(out.terms, tm)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var n ID
	s.Read(func(r *Reader) error { n = r.MaxID(); return nil })
	inOrder := make([]ID, n)
	for i := range inOrder {
		inOrder[i] = ID(i + 1)
	}
	shuffled := slices.Clone(inOrder)
	rand.New(rand.NewPCG(7, 8)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, order := range [][]ID{inOrder, shuffled} {
		want, got := readAll(false, order), readAll(true, order)
		if len(want.desc) == 0 {
			t.Fatal("the store has no quads to read")
		}
		if !slices.Equal(got.desc, want.desc) {
			t.Errorf("InOrder: Describe gives %d pairs, through the mapping %d, or other ones", len(got.desc), len(want.desc))
		}
		if !slices.Equal(got.terms, want.terms) {
			t.Errorf("InOrder: Term gives other terms than through the mapping")
		}
	}
}
