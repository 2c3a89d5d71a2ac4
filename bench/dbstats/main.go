// Command dbstats prints, for each top-level bucket of a bbolt file (and
// the runs nested in provgraph's "ids", "pos" and "osp" buckets, summed),
// its keys, the bytes of keys and values, and the pages it occupies, to see
// where a store's bytes go.
//
// Usage: dbstats FILE
package main

import (
	"fmt"
	"os"

	"go.etcd.io/bbolt"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dbstats FILE")
		os.Exit(2)
	}
	db, err := bbolt.Open(os.Args[1], 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbstats:", err)
		os.Exit(1)
	}
	defer db.Close()
	fi, _ := os.Stat(os.Args[1])
	fmt.Printf("file %d bytes, page size %d\n", fi.Size(), db.Info().PageSize)
	fmt.Printf("%-10s %12s %14s %14s %12s %14s\n", "bucket", "keys", "leaf bytes", "leaf in use", "pages", "bytes/key")
	err = db.View(func(tx *bbolt.Tx) error {
		fmt.Printf("free pages: %d\n", tx.Stats().PageCount)
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			s := b.Stats()
			pages := s.BranchPageN + s.BranchOverflowN + s.LeafPageN + s.LeafOverflowN
			alloc := s.BranchAlloc + s.LeafAlloc
			per := 0.0
			if s.KeyN > 0 {
				per = float64(alloc) / float64(s.KeyN)
			}
			fmt.Printf("%-10s %12d %14d %14d %12d %14.1f (buckets %d, depth %d)\n", name, s.KeyN, alloc, s.BranchInuse+s.LeafInuse, pages, per, s.BucketN, s.Depth)
			return nil
		})
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbstats:", err)
		os.Exit(1)
	}
}
