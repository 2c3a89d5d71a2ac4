package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// TestQuadRuns adds random quads in many small batches, with run sizes
// scaled down so that runs are merged level after level, become final
// and have their big merges put off by the budget, and checks after every
// batch that the runs hold each quad once and at most one big merge ran,
// and at the end every pattern of POS and OSP against a model, and Check.
func TestQuadRuns(t *testing.T) {
	defer func(f, b uint64) { finalRunTuples, bigMerge = f, b }(finalRunTuples, bigMerge)
	finalRunTuples, bigMerge = 400, 150

	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	iri := func(kind string, n int) Term { return IRI(fmt.Sprintf("https://example.com/%s/%d", kind, n)) }
	model := map[Quad]bool{}
	runs := func() map[int][]quadRun {
		out := map[int][]quadRun{}
		s.db.View(func(tx *bbolt.Tx) error {
			for _, ind := range []int{idxPOS, idxOSP} {
				rs, err := listQuadRuns(tx.Bucket([]byte(indexBuckets[ind])))
				if err != nil {
					t.Fatal(err)
				}
				out[ind] = rs
			}
			return nil
		})
		return out
	}
	before := runs()
	for b := range 300 {
		var qs []Quad
		for range 5 + rng.IntN(30) {
			// Few predicates and objects, so that they recur across
			// batches as shared URLs and keys do.
			q := Quad{S: iri("s", rng.IntN(3000)), P: iri("p", rng.IntN(6)), O: iri("o", rng.IntN(200))}
			if rng.IntN(8) == 0 {
				q.O = String(fmt.Sprint(rng.IntN(100)))
			}
			qs = append(qs, q)
			model[q] = true
		}
		if _, err := s.Add(qs); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		after := runs()
		big := 0
		for ind, rs := range after {
			var n uint64
			for _, r := range rs {
				n += r.n
				if r.level() > 0 && !slices.Contains(before[ind], r) && r.n >= bigMerge {
					big++
				}
			}
			if n != uint64(len(model)) {
				t.Fatalf("batch %d: index %s runs hold %d tuples, want %d", b, indexBuckets[ind], n, len(model))
			}
		}
		if big > 1 {
			t.Fatalf("batch %d: %d big merges in one transaction", b, big)
		}
		before = after
	}
	final, deep := 0, 0
	for _, rs := range before {
		perLevel := map[int]int{}
		for _, r := range rs {
			if r.n >= finalRunTuples {
				final++
				continue
			}
			perLevel[r.level()]++
			if r.level() >= 2 {
				deep++
			}
		}
		for l, n := range perLevel {
			if n > fanout+1 {
				t.Errorf("level %d holds %d runs that are not final", l, n)
			}
		}
	}
	if final == 0 || deep == 0 {
		t.Errorf("runs %v: want final runs and runs of level 2 or more", before)
	}

	// Every pattern read from POS or OSP against the model.
	var patterns []Quad
	for q := range model {
		patterns = append(patterns, Quad{P: q.P}, Quad{O: q.O}, Quad{P: q.P, O: q.O}, Quad{S: q.S, O: q.O})
	}
	slices.SortFunc(patterns, func(a, b Quad) int { return strings.Compare(a.String(), b.String()) })
	patterns = slices.Compact(patterns)
	for _, p := range patterns[:min(len(patterns), 400)] {
		want := 0
		for q := range model {
			if (p.S.IsZero() || q.S == p.S) && (p.P.IsZero() || q.P == p.P) && (p.O.IsZero() || normTermOnly(q.O) == normTermOnly(p.O)) {
				want++
			}
		}
		got := 0
		var prev Quad
		err := s.Match(context.Background(), p, func(q Quad) error {
			if got > 0 && q == prev {
				return fmt.Errorf("quad %v twice", q)
			}
			prev = q
			got++
			return nil
		})
		if err != nil || got != want {
			t.Errorf("Match(%v) = %d quads, %v; want %d", p, got, err, want)
		}
	}
	if err := s.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

func normTermOnly(t Term) Term {
	n, _ := normTerm(t)
	return n
}

// TestMappedLimit writes with a limit of one byte, so that every check of
// the pager drops the mapping, in the middle of lookups, index writes and
// merges, and checks that nothing read after a drop is wrong.
func TestMappedLimit(t *testing.T) {
	defer func(f, b uint64) { finalRunTuples, bigMerge = f, b }(finalRunTuples, bigMerge)
	finalRunTuples, bigMerge = 400, 150
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true, MappedLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checks := 0
	s.pg.onCheck = func() { checks++ }
	var all []Quad
	for b := range 120 {
		var qs []Quad
		for i := range 40 {
			qs = append(qs, Quad{
				S: IRI(fmt.Sprintf("https://example.com/s/%d", b*40+i)),
				P: IRI(fmt.Sprintf("https://example.com/p/%d", i%3)),
				O: String(fmt.Sprintf("shared %d", (b*7+i)%90)),
			})
		}
		if n, err := s.Add(qs); err != nil || n != len(qs) {
			t.Fatalf("Add(batch %d) = %d, %v", b, n, err)
		}
		all = append(all, qs...)
	}
	if checks == 0 {
		t.Fatal("the pager never looked at the mapping")
	}
	if _, ok := mappedFileBytes(); !ok && runtimeLinux {
		t.Error("mappedFileBytes: not known on Linux")
	}
	for _, q := range all[len(all)-50:] {
		if got := len(allMatches(t, s, Quad{P: q.P, O: q.O})); got == 0 {
			t.Errorf("Match(%v %v) found nothing", q.P, q.O)
		}
	}
	if n, err := s.Add(all); err != nil || n != 0 {
		t.Errorf("Add(everything again) = %d, %v, want 0", n, err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

func allMatches(t *testing.T, s *Store, p Quad) []Quad {
	t.Helper()
	var out []Quad
	if err := s.Match(context.Background(), p, func(q Quad) error { out = append(out, q); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

const runtimeLinux = runtime.GOOS == "linux"

// FuzzChunk decodes arbitrary chunk values: decodeChunk must not panic,
// the step-by-step decoding of a run cursor must give the same tuples and
// fail where it fails, and tuples sorted and encoded must decode to
// themselves.
func FuzzChunk(f *testing.F) {
	var enc []byte
	prev := tuple{1, 2, 3, 0}
	for _, t := range []tuple{{1, 2, 9, 0}, {1, 4, 1, 7}, {8, 1, 1, 0}, {0xFFFFFFFF, 0, 0xFFFFFFFF, 0xFFFFFFFF}} {
		enc = appendEntry(enc, prev, t)
		prev = t
	}
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0}, enc)
	f.Add(make([]byte, 16), []byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, k, v []byte) {
		if len(k) != keySize {
			if _, err := decodeChunk(nil, k, v); err == nil {
				t.Fatalf("key of %d bytes decoded", len(k))
			}
			return
		}
		whole, err := decodeChunk(nil, k, v)
		var steps []tuple
		rc := runCursor{}
		rc.load(k, v)
		for rc.ok {
			steps = append(steps, rc.cur)
			if len(rc.rest) == 0 {
				break // the chunk's end: the cursor would read the next one
			}
			rc.advance()
		}
		if (err == nil) != (rc.err == nil) || !slices.Equal(whole, steps) {
			t.Fatalf("decodeChunk = %v, %v; run cursor = %v, %v", whole, err, steps, rc.err)
		}
		if err != nil {
			return
		}
		// Re-encode what decoded, sorted and without repeats.
		ts := sortTuples(slices.Clone(whole))
		var re []byte
		for i := 1; i < len(ts); i++ {
			re = appendEntry(re, ts[i-1], ts[i])
		}
		var key [keySize]byte
		putKey(key[:], ts[0])
		back, err := decodeChunk(nil, key[:], re)
		if err != nil || !slices.Equal(back, ts) {
			t.Fatalf("round trip of %v = %v, %v", ts, back, err)
		}
	})
}
