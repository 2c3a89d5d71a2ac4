// Command recordslat times, in process, what provgraph queue reads from
// the group records a database keeps (citestore.Records): opening the
// store, the first page of the queue, a page after it, and the counts by
// verdict, each -n times on one open store, and prints the median and the
// slowest. The process start and flag parsing that the command adds are
// left out.
//
// Usage: recordslat [-n 20] [-limit 50] [-max-shared 0] FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/service"
)

func main() {
	n := flag.Int("n", 20, "repetitions")
	limit := flag.Int("limit", 50, "records per page")
	maxShared := flag.Int("max-shared", 0, "the records' --max-shared")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: recordslat [-n 20] [-limit 50] [-max-shared 0] FILE")
		os.Exit(2)
	}
	ctx := context.Background()
	t0 := time.Now()
	g, err := graph.Open(flag.Arg(0), &graph.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordslat:", err)
		os.Exit(1)
	}
	defer g.Close()
	cs := citestore.New(g)
	pol, err := service.ViewPolicy(ctx, cs, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordslat:", err)
		os.Exit(1)
	}
	fmt.Printf("open and policy: %v\n", time.Since(t0).Round(time.Microsecond))
	rs := cs.Records(pol.Digest, *maxShared)
	first, err := rs.Queue(ctx, "", *limit)
	if err != nil || len(first) == 0 {
		fmt.Fprintln(os.Stderr, "recordslat: no queue:", err)
		os.Exit(1)
	}
	after := first[len(first)-1].ID
	for _, c := range []struct {
		name string
		fn   func() error
	}{
		{"first page", func() error { _, err := rs.Queue(ctx, "", *limit); return err }},
		{"page after " + after, func() error { _, err := rs.Queue(ctx, after, *limit); return err }},
		{"counts", func() error { _, err := rs.Counts(ctx); return err }},
	} {
		var ds []time.Duration
		for range *n {
			t := time.Now()
			if err := c.fn(); err != nil {
				fmt.Fprintln(os.Stderr, "recordslat:", err)
				os.Exit(1)
			}
			ds = append(ds, time.Since(t))
		}
		slices.Sort(ds)
		fmt.Printf("%s: median %v, slowest %v (%d runs)\n", c.name, ds[len(ds)/2].Round(time.Microsecond), ds[len(ds)-1].Round(time.Microsecond), len(ds))
	}
}
