// Command dbstats prints, for each top-level bucket of a provgraph store
// (the runs nested in its "ids", "pos" and "osp" buckets summed into
// them), its keys, the bytes of its pages and the pages it occupies, to see
// where a store's bytes go. It reads the file through graph.Store.FileStats,
// read-only, so it knows no bucket name and does not import bbolt.
//
// Usage: dbstats FILE
package main

import (
	"fmt"
	"os"

	"github.com/provgraph/provgraph/internal/graph"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dbstats FILE")
		os.Exit(2)
	}
	s, err := graph.Open(os.Args[1], &graph.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbstats:", err)
		os.Exit(1)
	}
	defer s.Close()
	fs, err := s.FileStats()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbstats:", err)
		os.Exit(1)
	}
	fmt.Printf("file %d bytes, page size %d\n", fs.FileBytes, fs.PageSize)
	fmt.Printf("free pages: %d\n", fs.FreePages)
	fmt.Printf("%-10s %12s %14s %14s %12s %14s\n", "bucket", "keys", "leaf bytes", "leaf in use", "pages", "bytes/key")
	for _, b := range fs.Buckets {
		per := 0.0
		if b.Keys > 0 {
			per = float64(b.AllocBytes) / float64(b.Keys)
		}
		fmt.Printf("%-10s %12d %14d %14d %12d %14.1f (buckets %d, depth %d)\n", b.Name, b.Keys, b.AllocBytes, b.InuseBytes, b.Pages, per, b.Buckets, b.Depth)
	}
}
