package citestore

import (
	"context"
	"fmt"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/store"
)

// A view's rows and postings are run maps (graph.RunMap) whose runs stop
// merging at a few MiB, so a large view is kept in many runs: 85 for the
// rows of ten million citations, and as many again for each posting map.
// Every point read of the view (KeyRows, the postings a group's
// neighbourhood reads) probes every run's filter and seeks in each that
// may hold the key, so the reads of a lineage and of the full listing
// slow down as the view grows. CompactView merges each map into one run
// (leaving the runs of a gigabyte or more an earlier compaction wrote, as
// graph.BeginCompaction does: settledMapRunBytes), over as many
// transactions as the maps' size needs, each writing at
// most CompactBytes: what the view holds is unchanged, only how it is
// kept (TestCompactViewKeepsRows).

// CompactBytes is how many bytes of keys and values one transaction of
// CompactView writes, at most about: bbolt keeps a transaction's writes
// in memory until it commits, about three times over.
const CompactBytes = 64 << 20

// CompactedMap is what CompactView did to one map of a view.
type CompactedMap struct {
	Map     string // "rows", or a posting map: "id", "content", ...
	Runs    int    // runs before; 0 when the map was kept in one already
	Entries uint64 // entries written (0 when it was not compacted)
}

// CompactView merges the runs of each map of the complete grouping view of
// policy d (its rows, then each posting map) into one, writing at most
// maxBytes (0: CompactBytes) a transaction; progress, when not nil, is
// called after each transaction. It returns what it did to each map. A
// view kept in B-trees (format 5) has no runs and is left as it is; a
// map's compaction interrupted by a kill leaves the map as it was, and
// the next CompactView begins it again.
func (s *Store) CompactView(ctx context.Context, d string, maxBytes uint64, progress func(m CompactedMap)) ([]CompactedMap, error) {
	if maxBytes == 0 {
		maxBytes = CompactBytes
	}
	var out []CompactedMap
	for _, sub := range append([]string{subRows}, postingSubs...) {
		var c *graph.Compaction
		err := s.g.Update(func(w *graph.Writer) error {
			b, err := compactableView(w, d)
			if err != nil {
				return err
			}
			c, err = b.BeginCompaction(sub, viewPrefixer(sub))
			return err
		})
		if err != nil {
			return out, fmt.Errorf("compact view of policy %s: map %s: %w", d, sub, err)
		}
		res := CompactedMap{Map: sub}
		if c == nil {
			out = append(out, res)
			continue
		}
		res.Runs = c.Runs()
		for done := false; !done; {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			err := s.g.Update(func(w *graph.Writer) error {
				b, err := compactableView(w, d)
				if err != nil {
					return err
				}
				done, err = c.Step(b, maxBytes)
				return err
			})
			if err != nil {
				return out, fmt.Errorf("compact view of policy %s: map %s: %w", d, sub, err)
			}
			res.Entries = c.Entries()
			if progress != nil {
				progress(res)
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// compactableView returns the bucket of the complete view of policy d,
// kept in run maps.
func compactableView(w *graph.Writer, d string) (*graph.Bucket, error) {
	b := w.View(d)
	if b == nil || b.Get([]byte(viewComplete)) == nil {
		return nil, fmt.Errorf("policy %s: %w", d, store.ErrNoView)
	}
	if string(b.Get([]byte(viewLayout))) != layoutRuns {
		return nil, fmt.Errorf("policy %s: the view is kept in B-trees (file format 5), which have no runs to merge: rebuild it (provgraph view rebuild)", d)
	}
	return b, nil
}
