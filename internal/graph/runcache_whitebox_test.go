package graph

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.etcd.io/bbolt"
)

// storedQuadRuns lists the runs of POS and OSP as the file holds them.
func storedQuadRuns(t *testing.T, s *Store) [2][]quadRun {
	t.Helper()
	var out [2][]quadRun
	err := s.db.View(func(tx *bbolt.Tx) error {
		for k, ind := range []int{idxPOS, idxOSP} {
			runs, err := listQuadRuns(tx.Bucket([]byte(indexBuckets[ind])))
			if err != nil {
				return err
			}
			out[k] = runs
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameRuns reports whether a and b hold the same runs, in any order.
func sameRuns(a, b []quadRun) bool {
	by := func(x, y quadRun) int { return cmpUint64(x.seq(), y.seq()) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, by)
	slices.SortFunc(b, by)
	return slices.Equal(a, b)
}

// TestQuadRunCache checks that the runs of POS and OSP a write
// transaction leaves, which the next one uses instead of listing them,
// are the runs the file holds, through merges, a transaction rolled back
// after writing its runs, and a commit that adds no quads in between.
func TestQuadRunCache(t *testing.T) {
	defer func(f, b uint64) { finalRunTuples, bigMerge = f, b }(finalRunTuples, bigMerge)
	finalRunTuples, bigMerge = 300, 100
	s, err := Open(t.TempDir()+"/prov.db", &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := func(b int) []Quad {
		var qs []Quad
		for i := range 40 {
			n := b*40 + i
			qs = append(qs, Quad{
				S: IRI(fmt.Sprintf("https://example.com/s/%d", n)),
				P: IRI(fmt.Sprintf("https://example.com/p/%d", i%3)),
				O: String(fmt.Sprint(n)),
			})
		}
		return qs
	}
	verify := func(step string) {
		t.Helper()
		stored := storedQuadRuns(t, s)
		if !s.qruns.ok {
			t.Fatalf("%s: the runs of the last transaction are not kept", step)
		}
		for k := range 2 {
			if !sameRuns(s.qruns.runs[k], stored[k]) {
				t.Fatalf("%s: index %d: kept runs %v, the file holds %v", step, k, s.qruns.runs[k], stored[k])
			}
		}
	}
	levels := map[int]bool{}
	for b := range 30 {
		if _, err := s.Add(batch(b)); err != nil {
			t.Fatal(err)
		}
		verify(fmt.Sprintf("batch %d", b))
		for _, r := range s.qruns.runs[0] {
			levels[r.level()] = true
		}
	}
	if !levels[1] || !levels[2] {
		t.Fatalf("levels seen %v: the batches made no merges to check", levels)
	}

	// A transaction that writes runs and rolls back, then a commit of no
	// quads that takes its transaction id: the next batch must list the
	// runs again, not take the rolled-back ones.
	boom := errors.New("boom")
	if _, err := s.AddWith(batch(100), func(*Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("AddWith = %v, want %v", err, boom)
	}
	if err := s.Update(func(*Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if s.qruns.ok {
		t.Fatal("a commit without quads left runs kept")
	}
	for b := 30; b < 40; b++ {
		if _, err := s.Add(batch(b)); err != nil {
			t.Fatal(err)
		}
		verify(fmt.Sprintf("batch %d after a rollback", b))
	}
	if err := s.Check(t.Context()); err != nil {
		t.Fatalf("Check = %v", err)
	}
	for b := range 40 {
		for _, q := range batch(b) {
			ok, err := s.Has(q)
			if err != nil || !ok {
				t.Fatalf("Has(%v) = %v, %v", q, ok, err)
			}
		}
	}
	if ok, _ := s.Has(batch(100)[0]); ok {
		t.Fatal("a quad of the rolled-back batch is stored")
	}
}

// TestWriterReaderBatchTerms checks that the Reader of a Writer finds the
// terms its batch added from the batch itself, with the ids the commit
// keeps, and that Added tells the batch's quads from those stored before.
func TestWriterReaderBatchTerms(t *testing.T) {
	s, err := Open(t.TempDir()+"/prov.db", &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	typ, class := IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), IRI("https://example.com/Citation")
	old := Quad{S: IRI("https://example.com/c/old"), P: typ, O: class}
	if _, err := s.Add([]Quad{old}); err != nil {
		t.Fatal(err)
	}
	var fresh []Quad
	for i := range 20 {
		fresh = append(fresh, Quad{S: IRI(fmt.Sprintf("https://example.com/c/%d", i)), P: typ, O: class})
	}
	inTx := map[string]ID{}
	_, err = s.AddWith(append([]Quad{old}, fresh...), func(w *Writer) error {
		r, err := w.Reader()
		if err != nil {
			return err
		}
		if len(r.txTerms) != len(fresh) {
			t.Errorf("the Writer's Reader holds %d of the batch's terms, want %d", len(r.txTerms), len(fresh))
		}
		for _, q := range fresh {
			if added, err := w.Added(q); err != nil || !added {
				t.Errorf("Added(%v) = %v, %v; want true", q, added, err)
			}
			inTx[q.S.Value] = r.ID(q.S)
		}
		if added, err := w.Added(old); err != nil || added {
			t.Errorf("Added(%v) = %v, %v; want false (stored before)", old, added, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Read(func(r *Reader) error {
		for _, q := range fresh {
			if got, want := inTx[q.S.Value], r.ID(q.S); got == 0 || got != want {
				t.Errorf("ID(%s) in the transaction = %d, after the commit %d", q.S.Value, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
