package graph

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"go.etcd.io/bbolt"
)

// smallCompaction scales runs and compactions down for a test, and
// returns the function that restores them.
func smallCompaction() func() {
	f, b, c, r := finalRunTuples, bigMerge, compactBatch, compactRunTuples
	finalRunTuples, bigMerge, compactBatch, compactRunTuples = 120, 60, 97, 1000
	return func() { finalRunTuples, bigMerge, compactBatch, compactRunTuples = f, b, c, r }
}

// compactFixture is a store written in many small batches, with a model
// of the quads it holds.
type compactFixture struct {
	t     *testing.T
	s     *Store
	rng   *rand.Rand
	model map[Quad]bool
}

func newCompactFixture(t *testing.T, path string) *compactFixture {
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return &compactFixture{t: t, s: s, rng: rand.New(rand.NewPCG(5, 6)), model: map[Quad]bool{}}
}

// ingest adds that many batches of random quads, few predicates and
// objects so that they recur across batches.
func (f *compactFixture) ingest(batches int) {
	f.t.Helper()
	iri := func(kind string, n int) Term { return IRI(fmt.Sprintf("https://example.com/%s/%d", kind, n)) }
	for b := range batches {
		var qs []Quad
		for range 5 + f.rng.IntN(30) {
			q := Quad{S: iri("s", f.rng.IntN(3000)), P: iri("p", f.rng.IntN(6)), O: iri("o", f.rng.IntN(200))}
			if f.rng.IntN(8) == 0 {
				q.O = String(fmt.Sprint(f.rng.IntN(100)))
			}
			qs = append(qs, q)
			f.model[q] = true
		}
		if _, err := f.s.Add(qs); err != nil {
			f.t.Fatalf("batch %d: %v", b, err)
		}
	}
}

type runInfo struct {
	quadRun
	filtered bool
}

// runs lists the runs of POS and OSP.
func (f *compactFixture) runs() map[int][]runInfo {
	out := map[int][]runInfo{}
	f.s.db.View(func(tx *bbolt.Tx) error {
		for _, ind := range []int{idxPOS, idxOSP} {
			b := tx.Bucket([]byte(indexBuckets[ind]))
			rs, err := listQuadRuns(b)
			if err != nil {
				f.t.Fatal(err)
			}
			for _, r := range rs {
				out[ind] = append(out[ind], runInfo{r, b.Bucket(r.name[:]).Get([]byte(runFilterKey)) != nil})
			}
		}
		return nil
	})
	return out
}

// verify checks the runs' counts, patterns read from POS and OSP against
// the model, and Check.
func (f *compactFixture) verify(stage string) {
	t := f.t
	t.Helper()
	for ind, rs := range f.runs() {
		var n uint64
		for _, r := range rs {
			n += r.n
		}
		if n != uint64(len(f.model)) {
			t.Fatalf("%s: index %s runs count %d tuples, want %d", stage, indexBuckets[ind], n, len(f.model))
		}
	}
	var patterns []Quad
	for q := range f.model {
		patterns = append(patterns, Quad{P: q.P}, Quad{O: q.O}, Quad{P: q.P, O: q.O}, Quad{S: q.S, O: q.O})
	}
	slices.SortFunc(patterns, func(a, b Quad) int { return strings.Compare(a.String(), b.String()) })
	patterns = slices.Compact(patterns)
	for _, p := range patterns[:min(len(patterns), 300)] {
		want := 0
		for q := range f.model {
			if (p.S.IsZero() || q.S == p.S) && (p.P.IsZero() || q.P == p.P) && (p.O.IsZero() || normTermOnly(q.O) == normTermOnly(p.O)) {
				want++
			}
		}
		got := 0
		var prev Quad
		err := f.s.Match(context.Background(), p, func(q Quad) error {
			if got > 0 && q == prev {
				return fmt.Errorf("quad %v twice", q)
			}
			prev, got = q, got+1
			return nil
		})
		if err != nil || got != want {
			t.Fatalf("%s: Match(%v) = %d quads, %v; want %d", stage, p, got, err, want)
		}
	}
	if err := f.s.Check(context.Background()); err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
}

// TestCompactIndexes merges the many runs of POS and OSP into runs of
// compactRunTuples, a few tuples per transaction so that the boundary
// falls inside chunks, first stopped after a few transactions, then to
// the end, then after more ingest: after each step every pattern read
// from POS or OSP matches a model, no tuple is in two runs, and Check
// finds nothing (the merged runs' filters hold every prefix; a trimmed
// source's count is right); the settled runs stay as they are.
func TestCompactIndexes(t *testing.T) {
	defer smallCompaction()()
	f := newCompactFixture(t, filepath.Join(t.TempDir(), "prov.db"))
	defer f.s.Close()
	s, model, ingest, runs, verify := f.s, f.model, f.ingest, f.runs, f.verify
	ingest(300)
	if uint64(len(model)) < 3*compactRunTuples {
		t.Fatalf("%d quads: the test wants several merged runs of %d", len(model), compactRunTuples)
	}
	before := runs()
	for ind, rs := range before {
		if len(rs) < 10 {
			t.Fatalf("index %s has %d runs; the test wants many", indexBuckets[ind], len(rs))
		}
	}
	verify("ingested")
	if n, err := s.RunsToCompact(); err != nil || n != max(len(before[idxPOS]), len(before[idxOSP])) {
		t.Errorf("RunsToCompact before = %d, %v; want %d", n, err, max(len(before[idxPOS]), len(before[idxOSP])))
	}

	// Stopped after three transactions: the index answers as before, the
	// merged run so far without its filter, the sources trimmed.
	ctx, cancel := context.WithCancel(context.Background())
	reports := 0
	_, err := s.CompactIndexes(WithProgress(ctx, func(p Progress) {
		if p.Done > 0 {
			if reports++; reports == 3 {
				cancel()
			}
		}
	}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CompactIndexes canceled: %v, want context.Canceled", err)
	}
	cancel()
	pos := runs()[idxPOS]
	newest := slices.MaxFunc(pos, func(a, b runInfo) int { return cmpUint64(a.seq(), b.seq()) })
	if newest.filtered || newest.n != 3*compactBatch || len(pos) > len(before[idxPOS])+1 {
		t.Errorf("after the stop: %d runs (%d before), the merged one %+v; want it without a filter and %d tuples", len(pos), len(before[idxPOS]), newest, 3*compactBatch)
	}
	verify("stopped")

	// To the end: runs of compactRunTuples and one smaller, with filters.
	settled := func(stage string) map[int][]runInfo {
		t.Helper()
		rs := runs()
		for ind, rs := range rs {
			want := (uint64(len(model)) + compactRunTuples - 1) / compactRunTuples
			if uint64(len(rs)) != want {
				t.Errorf("%s: index %s has %d runs, want %d", stage, indexBuckets[ind], len(rs), want)
			}
			for i, r := range rs {
				if !r.filtered || i < len(rs)-1 && r.n != compactRunTuples {
					t.Errorf("%s: index %s run %d of %d: %+v, want a filter and %d tuples but in the last", stage, indexBuckets[ind], i, len(rs), r, compactRunTuples)
				}
			}
		}
		return rs
	}
	done, err := s.CompactIndexes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range done {
		if c.Transactions < 2 || c.Tuples != uint64(len(model)) {
			t.Errorf("compaction %+v: want several transactions, %d tuples", c, len(model))
		}
	}
	first := settled("compacted")
	verify("compacted")
	if n, err := s.RunsToCompact(); err != nil || n != 0 {
		t.Errorf("RunsToCompact after = %d, %v; want 0", n, err)
	}

	// Nothing left to do.
	done, err = s.CompactIndexes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range done {
		if c.Transactions != 0 || c.RunsBefore != c.RunsAfter {
			t.Errorf("second compaction %+v: want nothing done", c)
		}
	}

	// Ingest goes on beside the merged runs, and a compaction takes the
	// new runs and the last merged one, not the settled ones.
	ingest(60)
	verify("ingested after")
	if _, err := s.CompactIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := settled("compacted again")
	for ind, rs := range first {
		for _, r := range rs[:len(rs)-1] {
			if !slices.Contains(again[ind], r) {
				t.Errorf("index %s: settled run %+v was merged again", indexBuckets[ind], r)
			}
		}
	}
	verify("compacted again")
}

// compactHelperEnv names the store TestCompactKillHelper compacts when it
// runs as the helper process of TestCompactSurvivesKill.
const compactHelperEnv = "GRAPH_COMPACT_HELPER"

// TestCompactKillHelper is not a test: run by TestCompactSurvivesKill in
// a process of its own, it compacts the store, says "held" once three
// transactions are committed, and waits to be killed.
func TestCompactKillHelper(t *testing.T) {
	path := os.Getenv(compactHelperEnv)
	if path == "" {
		t.Skip("the helper process of TestCompactSurvivesKill")
	}
	defer smallCompaction()()
	s, err := Open(path, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	reports := 0
	_, err = s.CompactIndexes(WithProgress(context.Background(), func(p Progress) {
		if p.Done > 0 {
			if reports++; reports == 3 {
				fmt.Println("held")
				select {} // until killed
			}
		}
	}))
	fmt.Println("not held:", err)
	os.Exit(1)
}

// TestCompactSurvivesKill kills a process compacting a store with SIGKILL
// once three of its transactions are committed: the store opens, every
// pattern read from POS and OSP still matches the model, Check finds
// nothing, and a compaction then finishes the merge.
func TestCompactSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process; skipped with -short")
	}
	defer smallCompaction()()
	path := filepath.Join(t.TempDir(), "prov.db")
	f := newCompactFixture(t, path)
	f.ingest(300)
	before := f.runs()
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactKillHelper$")
	cmd.Env = append(os.Environ(), compactHelperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q, %v; want \"held\"", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if f.s, err = Open(path, &Options{NoSync: true}); err != nil {
		t.Fatalf("the store after kill -9 does not open: %v", err)
	}
	defer f.s.Close()
	pos := f.runs()[idxPOS]
	newest := slices.MaxFunc(pos, func(a, b runInfo) int { return cmpUint64(a.seq(), b.seq()) })
	if newest.filtered || newest.n != 3*compactBatch || slices.ContainsFunc(before[idxPOS], func(r runInfo) bool { return r.name == newest.name }) {
		t.Errorf("after the kill the newest run of pos is %+v; want the merged run so far, %d tuples without a filter", newest, 3*compactBatch)
	}
	f.verify("killed")
	if _, err := f.s.CompactIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	for ind, rs := range f.runs() {
		if want := (uint64(len(f.model)) + compactRunTuples - 1) / compactRunTuples; uint64(len(rs)) != want {
			t.Errorf("index %s after the compaction that follows: %d runs, want %d", indexBuckets[ind], len(rs), want)
		}
	}
	f.verify("compacted after the kill")
}
