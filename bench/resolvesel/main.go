// Command resolvesel times what provgraph resolve does before it fetches
// anything: the selection of the targets (ingest.ResolveTargets), and
// prints the targets, a SHA-256 of them (to compare two builds' output),
// the counts, the time and the process's peak resident memory. It opens
// the database read-only.
//
// Usage: resolvesel [-only-unresolved] [-since RFC3339] DB
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
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
	took := time.Since(start)
	h := sha256.New()
	for _, t := range targets {
		fmt.Fprintf(h, "%q %q %q %q %q\n", t.URL, t.Raw, t.RawNode.Value, t.Citations, t.CitedText)
	}
	fmt.Printf("%d targets (sha256 %x), counts %+v, %.1f s, peak RSS %s\n", len(targets), h.Sum(nil)[:8], counts, took.Seconds(), peak())
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
