// Command resolvesel times what provgraph resolve does before it fetches
// anything: the selection of the targets (ingest.ResolveTargets, which
// reads every citation's facts at once), and prints the targets, the
// counts, the time and the process's peak resident memory. It opens the
// database read-only.
//
// Usage: resolvesel [-only-unresolved] [-since RFC3339] DB
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
)

func main() {
	only := flag.Bool("only-unresolved", false, "as resolve --only-unresolved")
	since := flag.String("since", "", "as resolve --since")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: resolvesel [-only-unresolved] [-since RFC3339] DB")
		os.Exit(2)
	}
	sel := ingest.TargetOptions{OnlyUnresolved: *only}
	if *since != "" {
		t, err := time.Parse(time.RFC3339, *since)
		if err != nil {
			fmt.Fprintln(os.Stderr, "resolvesel: -since:", err)
			os.Exit(2)
		}
		sel.Since = t
	}
	st, err := graph.Open(flag.Arg(0), &graph.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "resolvesel:", err)
		os.Exit(1)
	}
	defer st.Close()
	start := time.Now()
	targets, counts, err := ingest.ResolveTargets(context.Background(), st, sel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "resolvesel:", err)
		os.Exit(1)
	}
	fmt.Printf("%d targets, counts %+v, %.1f s, peak RSS %s\n", len(targets), counts, time.Since(start).Seconds(), peak())
}

// peak is VmHWM from /proc/self/status.
func peak() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			return string(bytes.TrimSpace(v))
		}
	}
	return "?"
}
