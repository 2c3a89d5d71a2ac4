// Command queryprof finds a database's review groups and encodes the
// listed ones as JSON (as provgraph groups does, without writing them)
// under the CPU profiler, printing the time of each phase, to see where a
// query spends its time.
//
// Usage: queryprof -db FILE [-min-size N] [-cpuprofile FILE] [-memprofile FILE]
//
//	queryprof -db FILE -lineage CITATION_ID [-n N]
//
//	queryprof -db FILE -sample N [-largest K] [-seed S] [-repeat R]
//
// The second form times provgraph lineage of one citation, in process, N
// times (after one warm-up), and prints the median and the slowest.
//
// The third times the lineage of N citations, each once, in process: the
// members of the K comparison keys held by the most citations (the
// largest groups), one each, and the rest drawn at random (seed S) from
// every citation id. It reads them all once first, so that the file's
// pages are in memory, and prints the median, 90th and 99th percentiles
// and the slowest, naming it. With -repeat R each citation is timed R
// times in a row and its median counts: on a machine shared with other
// work, a single timing's tail is mostly the scheduler's. The same
// figures are printed for the CPU time of the thread the lineage ran on
// (Linux's RUSAGE_THREAD; the goroutine is locked to it), which other
// processes do not inflate.
//
// Then: go tool pprof -top queryprof.cpu
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/vocab"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "queryprof:", err)
		os.Exit(1)
	}
}

func run() error {
	db := flag.String("db", "", "database file")
	cpu := flag.String("cpuprofile", "", "write a CPU profile to this file")
	mem := flag.String("memprofile", "", "write a heap profile to this file at the end")
	lineage := flag.String("lineage", "", "time the lineage of this citation id instead")
	n := flag.Int("n", 101, "lineage: how many times")
	minSize := flag.Int("min-size", 2, "list only groups with at least this many members")
	sample := flag.Int("sample", 0, "time the lineage of this many citations instead, each once")
	largest := flag.Int("largest", 20, "sample: how many of them are members of the largest groups")
	seed := flag.Int64("seed", 1, "sample: seed of the random draw")
	repeat := flag.Int("repeat", 1, "sample: time each citation this many times and take the median")
	flag.Parse()
	if *db == "" {
		return fmt.Errorf("-db is required")
	}
	st, err := graph.Open(*db, &graph.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *lineage != "" {
		return timeLineage(st, *lineage, *n)
	}
	if *sample > 0 {
		return timeSample(st, *sample, *largest, *seed, max(1, *repeat))
	}
	t0 := time.Now()
	set, err := query.LoadGroups(context.Background(), citestore.New(st), "", query.GroupOptions{MinSize: *minSize})
	if err != nil {
		return err
	}
	t1 := time.Now()
	var written int
	rep, err := set.Write(context.Background(), func(buf []byte, g *query.Group) []byte {
		b, _ := json.Marshal(g)
		return append(buf, b...)
	}, func(p []byte) error {
		written += len(p)
		return nil
	})
	if err != nil {
		return err
	}
	t2 := time.Now()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("citations %d, groups %d: load and group %s, build and encode %s (%d MB of JSON); heap in use %d MB, total allocated %d MB\n",
		rep.Counts["citations"], rep.Counts["groups"], t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond),
		written>>20, ms.HeapInuse>>20, ms.TotalAlloc>>20)
	if *mem != "" {
		f, err := os.Create(*mem)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.WriteHeapProfile(f)
	}
	return nil
}

func timeLineage(st *graph.Store, id string, n int) error {
	ctx := context.Background()
	lk := citestore.New(st)
	if _, err := query.LineageOf(ctx, lk, id, nil); err != nil {
		return err
	}
	times := make([]time.Duration, n)
	for i := range times {
		t0 := time.Now()
		if _, err := query.LineageOf(ctx, lk, id, nil); err != nil {
			return err
		}
		times[i] = time.Since(t0)
	}
	slices.Sort(times)
	fmt.Printf("lineage of %s, %d runs: median %s, slowest %s\n", id, n, times[n/2].Round(time.Microsecond), times[n-1].Round(time.Microsecond))
	return nil
}

// pickCitations returns n citation ids: one member of each of the largest
// keys (by how many key nodes share the key's text, one per citation under
// one policy), then ids drawn at random.
func pickCitations(st *graph.Store, n, largest int, seed int64) ([]string, error) {
	ctx := context.Background()
	var all []graph.ID
	var top []graph.ID // key-text literals, most shared first
	var out []string
	err := st.Read(func(r *graph.Reader) error {
		isKey := map[graph.ID]bool{}
		if err := r.Subjects(ctx, r.ID(graph.IRI(vocab.RDFType)), r.ID(graph.IRI(vocab.ComparisonKey)), func(s graph.ID) { isKey[s] = true }); err != nil {
			return err
		}
		count := map[graph.ID]int{}
		if err := r.Pairs(ctx, r.ID(graph.IRI(vocab.Text)), func(s, o graph.ID) {
			if isKey[s] {
				count[o]++
			}
		}); err != nil {
			return err
		}
		for o := range count {
			top = append(top, o)
		}
		slices.SortFunc(top, func(a, b graph.ID) int {
			if c := count[b] - count[a]; c != 0 {
				return c
			}
			return int(a) - int(b)
		})
		top = top[:min(largest, len(top))]
		idPred := r.ID(graph.IRI(vocab.CitationId))
		return r.Pairs(ctx, idPred, func(s, o graph.ID) { all = append(all, o) })
	})
	if err != nil {
		return nil, err
	}
	lk := citestore.New(st)
	pols, err := lk.Policies(ctx)
	if err != nil {
		return nil, err
	}
	var tops []graph.Term
	err = st.Read(func(r *graph.Reader) error {
		for _, o := range top {
			t, err := r.Term(o)
			if err != nil {
				return err
			}
			tops = append(tops, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, t := range tops {
		for _, p := range pols {
			ids, err := lk.ByKey(ctx, p.Digest, t.Value)
			if err != nil {
				return nil, err
			}
			if len(ids) > 0 {
				out = append(out, ids[len(ids)/2])
				break
			}
		}
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	var picked []graph.ID
	for len(out)+len(picked) < n && len(all) > 0 {
		picked = append(picked, all[rng.IntN(len(all))])
	}
	slices.Sort(picked)
	err = st.Read(func(r *graph.Reader) error {
		return r.Values(ctx, slices.Compact(picked), func(_ graph.ID, v []byte) error {
			out = append(out, string(v))
			return nil
		})
	})
	return out, err
}

func timeSample(st *graph.Store, n, largest int, seed int64, repeat int) error {
	ctx := context.Background()
	ids, err := pickCitations(st, n, largest, seed)
	if err != nil {
		return err
	}
	lk := citestore.New(st)
	for _, id := range ids {
		if _, err := query.LineageOf(ctx, lk, id, nil); err != nil {
			return fmt.Errorf("lineage of %s: %w", id, err)
		}
	}
	type timing struct {
		id string
		d  time.Duration
	}
	times := make([]timing, len(ids))
	cpus := make([]timing, len(ids))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i, id := range ids {
		ds := make([]time.Duration, repeat)
		cs := make([]time.Duration, repeat)
		for j := range ds {
			c0 := threadCPU()
			t0 := time.Now()
			if _, err := query.LineageOf(ctx, lk, id, nil); err != nil {
				return err
			}
			ds[j] = time.Since(t0)
			cs[j] = threadCPU() - c0
		}
		slices.Sort(ds)
		slices.Sort(cs)
		times[i] = timing{id, ds[repeat/2]}
		cpus[i] = timing{id, cs[repeat/2]}
	}
	report := func(what string, times []timing) {
		slices.SortFunc(times, func(a, b timing) int { return int(a.d - b.d) })
		at := func(q float64) time.Duration {
			return times[min(len(times)-1, int(q*float64(len(times))))].d.Round(time.Microsecond)
		}
		fmt.Printf("%s: median %s, p90 %s, p99 %s, slowest %s (%s)\n", what, at(0.5), at(0.9), at(0.99), at(1), times[len(times)-1].id)
	}
	report("thread CPU time", slices.Clone(cpus))
	slices.SortFunc(times, func(a, b timing) int { return int(a.d - b.d) })
	at := func(q float64) time.Duration {
		return times[min(len(times)-1, int(q*float64(len(times))))].d.Round(time.Microsecond)
	}
	var largestMax time.Duration
	var largestID string
	for _, t := range times {
		if slices.Index(ids, t.id) < min(largest, len(ids)) && t.d >= largestMax {
			largestMax, largestID = t.d, t.id
		}
	}
	fmt.Printf("lineage of %d citations (%d from the largest groups), median of %d timings each: median %s, p90 %s, p99 %s, slowest %s (%s); slowest of the largest groups' %s (%s)\n",
		len(times), min(largest, len(ids)), repeat, at(0.5), at(0.9), at(0.99), times[len(times)-1].d.Round(time.Microsecond), times[len(times)-1].id, largestMax.Round(time.Microsecond), largestID)
	var slow []string
	for _, t := range times[max(0, len(times)-10):] {
		slow = append(slow, fmt.Sprintf("%s %s", t.id, t.d.Round(time.Microsecond)))
	}
	fmt.Printf("slowest ten: %s\n", strings.Join(slow, ", "))
	return nil
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// threadCPU returns the CPU time (user and system) of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
