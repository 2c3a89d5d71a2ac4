package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
)

func main() {
	// SIGTERM (what kill, systemd and container runtimes send) stops a
	// command as Ctrl-C does: a write finishes its batch, temporary files
	// are removed, the run is left resumable.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// PROVGRAPH_CPUPROFILE=FILE writes a CPU profile of the command, for
	// `go tool pprof`: how to see where a slow command spends its time.
	if path := os.Getenv("PROVGRAPH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "provgraph: PROVGRAPH_CPUPROFILE: %v\n", err)
			os.Exit(exitUsage)
		}
		defer f.Close()
	}
	// PROVGRAPH_TRACE=FILE writes an execution trace of the command, for
	// `go tool trace`: how to see which phases run on one core only, which
	// a CPU profile, summed over cores, does not show.
	if path := os.Getenv("PROVGRAPH_TRACE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "provgraph: PROVGRAPH_TRACE: %v\n", err)
			os.Exit(exitUsage)
		}
		defer f.Close()
	}
	// PROVGRAPH_MEMPROFILE=FILE writes the heap profile taken at the
	// command's largest live heap (`go tool pprof -sample_index=inuse_space`):
	// how to see what holds memory at its peak.
	var mem *peakProfile
	memPath := os.Getenv("PROVGRAPH_MEMPROFILE")
	if memPath != "" {
		mem = startPeakProfile()
	}
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	pprof.StopCPUProfile()
	trace.Stop()
	if mem != nil {
		if err := mem.write(memPath); err != nil {
			fmt.Fprintf(os.Stderr, "provgraph: PROVGRAPH_MEMPROFILE: %v\n", err)
		}
	}
	os.Exit(code)
}
