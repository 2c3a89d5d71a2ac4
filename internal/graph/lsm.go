package graph

import (
	"encoding/binary"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"
)

// The dictionary's hash index (dict.go) and the POS and OSP indexes
// (runs.go) are both log-structured: each transaction writes its new
// entries as a new sorted run, a nested bucket, and runs of one level are
// merged into one run of the next. This file is the scheme they share: how
// a run is named, when and which runs are merged (compactRuns), and how
// merged runs go away (deleteRuns).
//
// What they do not share is the entry-level merge loop, the hot part. A
// hash run holds (hash, id) pairs in 64-entry chunks with a Bloom filter;
// a quad run holds delta-coded tuples in chunks of about chunkTarget
// bytes, read through seekable cursors that every POS/OSP read also uses.
// The two loops share no decoding, and one generic loop over both would
// compare entries through a type parameter's method, which Go calls
// through its generic dictionary instead of inlining, once per entry per
// merge and per read. compactRuns, by contrast, runs once per transaction.

// runName is the bucket name of one run: its level (1 byte), then its
// sequence number (8 bytes, big-endian), which grows with every run
// written to the same index, merged ones included.
type runName [9]byte

func newRunName(level int, seq uint64) runName {
	var n runName
	n[0] = byte(level)
	binary.BigEndian.PutUint64(n[1:], seq)
	return n
}

func (n runName) level() int  { return int(n[0]) }
func (n runName) seq() uint64 { return binary.BigEndian.Uint64(n[1:]) }

// compactRuns merges runs while some level has fanout or more runs that
// may still be merged: from level 0 up, the mergeable runs of a level are
// merged into one run of the next level (sequence number seq, then
// seq+1, ...), when the transaction's budget allows a merge of size(same)
// entries; otherwise that level waits for a later transaction. It stops
// at the first level with no run above it. It returns the runs left, in
// no particular order.
//
// mergeable says whether a run may be merged again: the quad indexes stop
// at a run size (finalRunTuples), the hash index at a level (maxLevel).
func compactRuns[R any](runs []R, seq uint64, budget *mergeBudget,
	name func(R) runName, mergeable func(R) bool, size func([]R) uint64,
	merge func(same []R, level int, seq uint64) (R, error)) ([]R, error) {
	for level := 0; ; level++ {
		var same []R
		higher := false
		for _, r := range runs {
			switch l := name(r).level(); {
			case l == level && mergeable(r):
				same = append(same, r)
			case l > level:
				higher = true
			}
		}
		if len(same) >= fanout && budget.take(size(same)) {
			merged, err := merge(same, level+1, seq)
			if err != nil {
				return nil, err
			}
			seq++
			runs = slices.DeleteFunc(runs, func(r R) bool {
				return slices.ContainsFunc(same, func(s R) bool { return name(s) == name(r) })
			})
			runs = append(runs, merged)
			continue
		}
		if !higher {
			return runs, nil
		}
	}
}

// deleteRuns deletes the merged runs from index bucket b.
func deleteRuns(b *bbolt.Bucket, names []runName, pg *pager) error {
	for _, n := range names {
		// bbolt reads every page of a bucket it deletes.
		if err := pg.during(func() error { return b.DeleteBucket(n[:]) }); err != nil {
			return fmt.Errorf("delete run %x: %w", n, err)
		}
	}
	return nil
}
