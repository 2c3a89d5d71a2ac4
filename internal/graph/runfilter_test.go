package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cayleygraph/quad"
	"go.etcd.io/bbolt"
)

// TestRunFilterNoFalseNegatives fills filters of both indexes with the
// prefixes of random sorted runs, of many sizes and id ranges (few
// distinct first ids, as in POS, or many, as in OSP), and checks that
// every range that fixes the prefix of one of the run's tuples passes the
// filter, and that the false positive rate on prefixes not added stays
// near what the sizing promises.
func TestRunFilterNoFalseNegatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	var fp, probes int
	for trial := range 400 {
		ind := []int{idxPOS, idxOSP}[trial%2]
		n := 1 + rng.IntN(5000)
		firsts := 1 + rng.IntN(n) // distinct first ids at most
		ts := make([]tuple, n)
		for i := range ts {
			// Odd first ids only, so that even ones are never added.
			ts[i] = tuple{1 + 2*uint32(rng.IntN(firsts)), 1 + rng.Uint32N(1<<31), 1 + rng.Uint32(), uint32(rng.IntN(3))}
		}
		slices.SortFunc(ts, tuple.cmp)
		ts = slices.Compact(ts)
		b := newFilterBuilder(ind, uint64(len(ts)))
		for _, tu := range ts {
			b.add(tu)
		}
		f := runFilter(b.appendTo(nil))
		if !validRunFilter(f) || len(f) != runFilterSize(uint64(len(ts))) {
			t.Fatalf("trial %d: filter of %d bytes for %d tuples", trial, len(f), len(ts))
		}
		for _, tu := range ts {
			for _, hi := range []tuple{tu, {tu[0], tu[1], 0xFFFFFFFF, 0xFFFFFFFF}, {tu[0], 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}} {
				lo := tu
				if hi[1] == 0xFFFFFFFF {
					lo = tuple{tu[0]}
				}
				h, ok := rangeHash(ind, lo, hi)
				if !ok && (filterPrefix(ind) == 1 || lo[1] == hi[1]) {
					t.Fatalf("trial %d: index %s: range %v..%v fixes the prefix but has no hash", trial, indexBuckets[ind], lo, hi)
				}
				if ok && !f.has(h) {
					t.Fatalf("trial %d: index %s (%d tuples): the filter lacks the prefix of %v (range %v..%v)", trial, indexBuckets[ind], len(ts), tu, lo, hi)
				}
			}
		}
		for range 200 {
			probes++
			if f.has(prefixHash(tuple{2 * uint32(1+rng.IntN(firsts)), 1 + rng.Uint32N(1<<31)}, filterPrefix(ind))) {
				fp++
			}
		}
	}
	// At 10 bits per tuple and at most one prefix per tuple, about 1 %;
	// far above that would mean the probes are not independent.
	rate := float64(fp) / float64(probes)
	t.Logf("false positive rate %.4f over %d probes", rate, probes)
	if rate > 0.03 {
		t.Errorf("false positive rate %.3f over %d probes, want under 0.03", rate, probes)
	}
}

// filterTestStore returns a store with several runs in POS and OSP: many
// small batches of quads, each batch with objects of its own and a few
// shared ones, and the quads added.
func filterTestStore(t *testing.T) (*Store, []Quad) {
	t.Helper()
	defer func(f, b uint64) { finalRunTuples, bigMerge = f, b }(finalRunTuples, bigMerge)
	finalRunTuples, bigMerge = 200, 100
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var all []Quad
	for b := range 60 {
		var qs []Quad
		for i := range 30 {
			o := String(fmt.Sprintf("batch %d object %d", b, i))
			if i%10 == 0 {
				o = IRI(fmt.Sprintf("https://example.com/shared/%d", i))
			}
			qs = append(qs, Quad{S: IRI(fmt.Sprintf("https://example.com/s/%d/%d", b, i)), P: IRI(fmt.Sprintf("https://example.com/p/%d", i%4)), O: o})
		}
		if _, err := s.Add(qs); err != nil {
			t.Fatal(err)
		}
		all = append(all, qs...)
	}
	return s, all
}

// TestRunFiltersSkipRuns checks that a lookup of a fixed predicate and
// object, or object and subject, reads the runs that hold it and few
// others, while one of a predicate alone reads every run.
func TestRunFiltersSkipRuns(t *testing.T) {
	s, all := filterTestStore(t)
	err := s.Read(func(r *Reader) error {
		for _, ind := range []int{idxPOS, idxOSP} {
			x, err := r.runs.get(r.tx.Bucket([]byte(indexBuckets[ind])), ind)
			if err != nil {
				return err
			}
			if len(x.runs) < 6 {
				t.Fatalf("index %s has %d runs, want several", indexBuckets[ind], len(x.runs))
			}
			read, lookups := 0, 0
			for _, q := range all {
				if q.O.Kind != KindLiteral {
					continue
				}
				ids := ids4{uint32(r.ID(q.S)), uint32(r.ID(q.P)), uint32(r.ID(q.O))}
				lo := order(ind, ids)
				lo[2], lo[3] = 0, 0
				hi := lo
				hi[2], hi[3] = 0xFFFFFFFF, 0xFFFFFFFF
				read += len(x.merge(lo, hi).all)
				lookups++
			}
			// Each such prefix is in one run; false positives add a few.
			if avg := float64(read) / float64(lookups); avg > 1.5 {
				t.Errorf("index %s: a point lookup read %.2f of %d runs on average, want about 1", indexBuckets[ind], avg, len(x.runs))
			}
			p := uint32(r.ID(all[0].P))
			lo, hi := tuple{p}, tuple{p, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}
			if ind == idxPOS {
				if got := len(x.merge(lo, hi).all); got != len(x.runs) {
					t.Errorf("POS: a lookup of a predicate alone read %d of %d runs, want all", got, len(x.runs))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRunFiltersConsulted empties every run's filter (all bits zero: it
// claims the run holds no prefix) and checks that every read path that
// seeks POS by a predicate and object, or OSP by an object, then finds
// nothing there, which shows it asks the filter, while reads of SPO, and
// of POS by a predicate alone, are unchanged; and that Check reports each
// emptied filter.
func TestRunFiltersConsulted(t *testing.T) {
	s, all := filterTestStore(t)
	path := s.path
	s.Close()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, ind := range []int{idxPOS, idxOSP} {
			b := tx.Bucket([]byte(indexBuckets[ind]))
			var names [][]byte
			b.ForEachBucket(func(k []byte) error { names = append(names, slices.Clone(k)); return nil })
			for _, k := range names {
				rb := b.Bucket(k)
				f := rb.Get([]byte(runFilterKey))
				if f == nil {
					return fmt.Errorf("run %x has no filter", k)
				}
				if err := rb.Put([]byte(runFilterKey), make([]byte, len(f))); err != nil {
					return err
				}
			}
		}
		return nil
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
	ctx := context.Background()
	q := all[len(all)/2]
	for _, p := range []Quad{{O: q.O}, {P: q.P, O: q.O}, {S: q.S, O: q.O}} {
		if got := allMatches(t, s, p); len(got) != 0 {
			t.Errorf("Store.Match(%v) with empty filters = %d quads, want none", p, len(got))
		}
	}
	// A predicate alone is no prefix a filter holds: every run is read.
	want := 0
	for _, a := range all {
		if a.P == q.P {
			want++
		}
	}
	if got := len(allMatches(t, s, Quad{P: q.P})); got != want {
		t.Errorf("Store.Match(predicate) with empty filters = %d quads, want %d", got, want)
	}
	if got := allMatches(t, s, Quad{S: q.S}); len(got) != 1 {
		t.Errorf("Store.Match(subject) = %v, want the quad from SPO", got)
	}
	err = s.Read(func(r *Reader) error {
		n := 0
		r.Subjects(ctx, r.ID(q.P), r.ID(q.O), func(ID) { n++ })
		r.Match(ctx, Quad{P: q.P, O: q.O}, func(Quad) error { n++; return nil })
		r.Match(ctx, Quad{O: q.O}, func(Quad) error { n++; return nil })
		if n != 0 {
			t.Errorf("Reader lookups with empty filters found %d quads, want 0", n)
		}
		r.Objects(ctx, r.ID(q.S), r.ID(q.P), func(ID) { n++ })
		if n != 1 {
			t.Errorf("Reader.Objects (SPO) found %d quads, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	qs := s.Cayley()
	ref, err := qs.ValueOf(termValue(q.O))
	if err != nil || ref == nil {
		t.Fatalf("ValueOf(object) = %v, %v", ref, err)
	}
	if size, err := qs.QuadIteratorSize(ctx, quad.Object, ref); err != nil || size.Value != 0 {
		t.Errorf("cayley QuadIteratorSize(object) with empty filters = %v, %v; want 0", size, err)
	}
	it := qs.QuadIterator(quad.Object, ref).Iterate()
	for it.Next(ctx) {
		t.Errorf("cayley iterator over the object's quads with empty filters found %v", it.Result())
	}
	it.Close()
	err = s.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "its filter lacks") {
		t.Errorf("Check() with empty filters = %v, want it to report them", err)
	}
}

// setFilters rewrites the filter of every POS and OSP run of the closed
// store at path with fn's result (nil: delete it), returning how many runs
// there are.
func setFilters(t testing.TB, path string, fn func(f []byte) []byte) int {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, ind := range []int{idxPOS, idxOSP} {
			b := tx.Bucket([]byte(indexBuckets[ind]))
			var names [][]byte
			b.ForEachBucket(func(k []byte) error { names = append(names, slices.Clone(k)); return nil })
			for _, k := range names {
				n++
				rb := b.Bucket(k)
				f := fn(slices.Clone(rb.Get([]byte(runFilterKey))))
				if f == nil {
					err = rb.Delete([]byte(runFilterKey))
				} else {
					err = rb.Put([]byte(runFilterKey), f)
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWriteRunFilters takes every filter out of a store, as format 3 wrote
// it: lookups still find every quad (every run is read) and Check passes;
// WriteRunFilters writes one per run, after which lookups skip runs again
// and Check passes. A filter that Check finds damaged is left alone by a
// pass for the missing ones and replaced by one over every run.
func TestWriteRunFilters(t *testing.T) {
	s, all := filterTestStore(t)
	path := s.path
	s.Close()
	runs := setFilters(t, path, func([]byte) []byte { return nil })
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	ctx := context.Background()
	lookups := func(when string) {
		t.Helper()
		for _, q := range all[:200] {
			for _, p := range []Quad{{O: q.O}, {P: q.P, O: q.O}, {S: q.S, O: q.O}} {
				if !slices.Contains(allMatches(t, s, p), normQuadOnly(q)) {
					t.Fatalf("%s: Match(%v) lacks %v", when, p, q)
				}
			}
		}
		if err := s.Check(ctx); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	lookups("without filters")
	if n, err := s.WriteRunFilters(ctx, false); err != nil || n != runs {
		t.Fatalf("WriteRunFilters(missing) = %d, %v; want %d", n, err, runs)
	}
	if n, err := s.WriteRunFilters(ctx, false); err != nil || n != 0 {
		t.Fatalf("WriteRunFilters(missing) again = %d, %v; want 0", n, err)
	}
	lookups("with filters written")
	err = s.Read(func(r *Reader) error {
		x, err := r.runs.get(r.tx.Bucket([]byte(indexBuckets[idxPOS])), idxPOS)
		if err != nil {
			return err
		}
		q := all[1] // a literal object of its batch only
		p, o := uint32(r.ID(q.P)), uint32(r.ID(q.O))
		if got := len(x.mayHold(tuple{p, o}, tuple{p, o, 0xFFFFFFFF, 0xFFFFFFFF})); got > 2 {
			t.Errorf("a lookup after WriteRunFilters reads %d of %d runs, want 1 or 2", got, len(x.runs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	setFilters(t, path, func(f []byte) []byte { return make([]byte, len(f)) })
	if s, err = Open(path, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), "its filter lacks") {
		t.Fatalf("Check() with emptied filters = %v, want it to report them", err)
	}
	if n, err := s.WriteRunFilters(ctx, false); err != nil || n != 0 {
		t.Fatalf("WriteRunFilters(missing) over damaged filters = %d, %v; want 0", n, err)
	}
	if n, err := s.WriteRunFilters(ctx, true); err != nil || n != runs {
		t.Fatalf("WriteRunFilters(all) = %d, %v; want %d", n, err, runs)
	}
	lookups("with filters rewritten")
}

func normQuadOnly(q Quad) Quad {
	n, _ := normQuad(q)
	return n
}

// BenchmarkPointLookup times a Reader.Subjects lookup of a predicate and
// an object that one run holds, in a store whose POS index has about as
// many runs as ten million citations give (87), with the runs' filters
// and without them (every run is then sought, as format 3 did).
func BenchmarkPointLookup(b *testing.B) {
	defer func(f, bm uint64) { finalRunTuples, bigMerge = f, bm }(finalRunTuples, bigMerge)
	finalRunTuples, bigMerge = 2000, 1<<30
	path := filepath.Join(b.TempDir(), "prov.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	var lookups []Quad
	for batch := range 360 {
		var qs []Quad
		for i := range 500 {
			q := Quad{S: IRI(fmt.Sprintf("https://example.com/s/%d/%d", batch, i)), P: IRI(fmt.Sprintf("https://example.com/p/%d", i%8)), O: String(fmt.Sprintf("value %d %d", batch, i))}
			qs = append(qs, q)
			if i == 0 {
				lookups = append(lookups, q)
			}
		}
		if _, err := s.Add(qs); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	for _, name := range []string{"filters", "none"} {
		if name == "none" {
			setFilters(b, path, func([]byte) []byte { return nil })
		}
		b.Run(name, func(b *testing.B) {
			s, err := Open(path, &Options{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			err = s.Read(func(r *Reader) error {
				ids := make([][2]ID, len(lookups))
				for i, q := range lookups {
					ids[i] = [2]ID{r.ID(q.P), r.ID(q.O)}
				}
				x, err := r.runs.get(r.tx.Bucket([]byte(indexBuckets[idxPOS])), idxPOS)
				if err != nil {
					return err
				}
				b.ResetTimer()
				for i := range b.N {
					id := ids[i%len(ids)]
					n := 0
					if err := r.Subjects(context.Background(), id[0], id[1], func(ID) { n++ }); err != nil || n != 1 {
						return fmt.Errorf("Subjects = %d, %v", n, err)
					}
				}
				b.ReportMetric(float64(len(x.runs)), "runs")
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
