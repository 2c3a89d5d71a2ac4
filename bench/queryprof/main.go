// Command queryprof finds a database's review groups and encodes the
// listed ones as JSON (as provgraph groups does, without writing them)
// under the CPU profiler, printing the time of each phase, to see where a
// query spends its time.
//
// Usage: queryprof -db FILE [-min-size N] [-cpuprofile FILE] [-memprofile FILE]
//
//	queryprof -db FILE -lineage CITATION_ID [-n N]
//
// The second form times provgraph lineage of one citation, in process, N
// times (after one warm-up), and prints the median and the slowest.
//
// Then: go tool pprof -top queryprof.cpu
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
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
