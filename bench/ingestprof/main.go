// Command ingestprof runs provgraph's JSON Lines ingest (ingest.File, as
// provgraph ingest does) into a new database file under the CPU profiler,
// and optionally writes a heap profile at the end, to see where ingest
// spends its time. The database file must not exist.
//
// Usage: ingestprof -db FILE [-cpuprofile FILE] [-memprofile FILE] [-batch N] [-nosync] [-mapped-limit BYTES] [-resident-limit BYTES] CITATIONS.jsonl
//
// Then: go tool pprof -top ingestprof.cpu
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ingestprof:", err)
		os.Exit(1)
	}
}

func run() error {
	db := flag.String("db", "", "database file to create (must not exist)")
	cpu := flag.String("cpuprofile", "", "write a CPU profile to this file")
	mem := flag.String("memprofile", "", "write a heap profile (after a GC) to this file")
	batch := flag.Int("batch", ingest.DefaultBatchQuads, "quads per transaction")
	noSync := flag.Bool("nosync", false, "skip fsync after each transaction (graph.Options.NoSync)")
	mapped := flag.Int64("mapped-limit", 0, "graph.Options.MappedLimit in bytes (0: the default, negative: no limit)")
	resident := flag.Int64("resident-limit", 0, "graph.Options.ResidentLimit in bytes (0: the default, negative: no limit)")
	flag.Parse()
	if *db == "" || flag.NArg() != 1 {
		return errors.New("usage: ingestprof -db FILE [-cpuprofile FILE] [-memprofile FILE] [-batch N] [-nosync] [-mapped-limit BYTES] [-resident-limit BYTES] CITATIONS.jsonl")
	}
	if _, err := os.Stat(*db); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s exists; give a new file", *db)
	}
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
	st, err := graph.Open(*db, &graph.Options{NoSync: *noSync, MappedLimit: *mapped, ResidentLimit: *resident})
	if err != nil {
		return err
	}
	defer st.Close()
	in := flag.Arg(0)
	start := time.Now()
	sum, err := ingest.File(context.Background(), st, in, in, ingest.Options{Policy: normalize.Default(), BatchQuads: *batch})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	fmt.Fprintf(os.Stderr, "%d records, %d quads added in %v: %.0f quads/s\n", sum.Records, sum.QuadsAdded, elapsed.Round(time.Millisecond), float64(sum.QuadsAdded)/elapsed.Seconds())
	if *mem != "" {
		f, err := os.Create(*mem)
		if err != nil {
			return err
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
	}
	return nil
}
