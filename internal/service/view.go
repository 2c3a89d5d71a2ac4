package service

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/store"
)

// ViewPolicy picks the stored policy that want names (a digest,
// NAME@VERSION, or a NAME one policy has), or the policy of the latest
// ingest or renormalize run for "". A name no policy has is a UsageError.
func ViewPolicy(ctx context.Context, c store.Catalog, want string) (store.PolicyRef, error) {
	pols, err := c.StoredPolicies(ctx)
	if err != nil {
		return store.PolicyRef{}, err
	}
	if len(pols) == 0 {
		return store.PolicyRef{}, UsageError{errors.New("the database holds no normalization policy (ingest citations into it first)")}
	}
	if want == "" {
		return pols[len(pols)-1], nil
	}
	var named []store.PolicyRef
	for _, p := range pols {
		switch {
		case p.Digest == want, p.String() == want:
			return p, nil
		case p.Name == want:
			named = append(named, p)
		}
	}
	if len(named) == 1 {
		return named[0], nil
	}
	if len(named) > 1 {
		return store.PolicyRef{}, UsageError{fmt.Errorf("policy %q: %d versions are stored; name one as NAME@VERSION", want, len(named))}
	}
	return store.PolicyRef{}, UsageError{fmt.Errorf("policy %q: the database holds no such policy (provgraph view status lists those with a view)", want)}
}

// RebuildView drops and rewrites the grouping view of the policy want
// names (ViewPolicy) from the quads, and returns the policy and the rows
// written, then merges the view's runs (citestore.Store.CompactView).
// progress is called after each batch. The group records kept
// in the view go with it: dropped, when set, gets the --max-shared of
// each.
func (d DB) RebuildView(ctx context.Context, want string, batch int, progress func(done, total int), dropped *[]int) (store.PolicyRef, int64, error) {
	if _, err := os.Stat(d.Path); err != nil {
		return store.PolicyRef{}, 0, fmt.Errorf("view rebuild: %w (ingest citations into it first)", err)
	}
	st, err := d.Open(false)
	if err != nil {
		return store.PolicyRef{}, 0, err
	}
	defer st.Close()
	cs := citestore.New(st)
	pol, err := ViewPolicy(ctx, cs, want)
	if err != nil {
		return pol, 0, err
	}
	kept, err := cs.RecordsKept(ctx)
	if err != nil {
		return pol, 0, err
	}
	rows, err := cs.RebuildView(ctx, pol.Digest, batch, progress)
	if err == nil {
		// The batches, in citation order, wrote runs that each span
		// every key: 125 of them at ten million citations, which every
		// lookup probes (groups from the view 61.4 s and 1.85 GB against
		// 40.4 s and 1.36 GB once merged). Merging them took 54 s there.
		// The view is complete before: a merge stopped leaves it valid.
		if _, cerr := cs.CompactView(ctx, pol.Digest, 0, nil); cerr != nil {
			err = fmt.Errorf("the view is rebuilt and complete, but merging its runs failed (provgraph view compact merges them): %w", cerr)
		}
	}
	if err == nil && dropped != nil {
		for _, k := range kept {
			if k.Policy == pol.Digest {
				*dropped = append(*dropped, k.MaxShared)
			}
		}
	}
	return pol, rows, err
}

// CompactedMap is what CompactView did to one map of a view.
type CompactedMap = citestore.CompactedMap

// CompactView merges the runs of each map of the grouping view of the
// policy want names (ViewPolicy) into one (citestore.Store.CompactView),
// and returns the policy and what was done to each map. progress is
// called after each transaction.
func (d DB) CompactView(ctx context.Context, want string, progress func(CompactedMap)) (store.PolicyRef, []CompactedMap, error) {
	if _, err := os.Stat(d.Path); err != nil {
		return store.PolicyRef{}, nil, fmt.Errorf("view compact: %w (ingest citations into it first)", err)
	}
	st, err := d.Open(false)
	if err != nil {
		return store.PolicyRef{}, nil, err
	}
	defer st.Close()
	cs := citestore.New(st)
	pol, err := ViewPolicy(ctx, cs, want)
	if err != nil {
		return pol, nil, err
	}
	maps, err := cs.CompactView(ctx, pol.Digest, 0, progress)
	return pol, maps, err
}

// Views describes the grouping views the database holds.
func (d DB) Views(ctx context.Context) ([]store.ViewInfo, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return citestore.New(st).Views(ctx)
}

// Views describes the grouping views of an open database.
func (s *Store) Views(ctx context.Context) ([]store.ViewInfo, error) {
	return citestore.New(s.Quads).Views(ctx)
}

// RecordsStatus is what `view status` says of one policy's group records.
// DirtyMore reports Dirty as a lower bound.
type RecordsStatus struct {
	citestore.RecordsID
	Complete bool
	Marker   string // how and when they were made current: "build TIME", "refresh TIME"
	Groups   int    // records held (counts' "groups")
	Dirty    int    // keys changed since they were made current, up to statusDirtyMax+1
}

// DirtyMore says Dirty stopped counting at statusDirtyMax.
func (r RecordsStatus) DirtyMore() bool { return r.Dirty > statusDirtyMax }

// statusDirtyMax is how many changed keys `view status` counts: past it,
// it says "more than".
const statusDirtyMax = 10000

// RecordsStatus describes the group records of an open database, by
// policy digest, then --max-shared.
func (s *Store) RecordsStatus(ctx context.Context) ([]RecordsStatus, error) {
	cs := citestore.New(s.Quads)
	kept, err := cs.RecordsKept(ctx)
	if err != nil {
		return nil, err
	}
	var out []RecordsStatus
	for _, k := range kept {
		rs := cs.Records(k.Policy, k.MaxShared)
		st := RecordsStatus{RecordsID: k}
		if _, st.Complete, st.Marker, err = rs.State(ctx); err != nil {
			return nil, err
		}
		counts, err := rs.Counts(ctx)
		if err != nil {
			return nil, err
		}
		st.Groups = counts["groups"]
		dirty, err := rs.DirtyKeys(ctx, statusDirtyMax)
		if err != nil {
			return nil, err
		}
		st.Dirty = len(dirty)
		out = append(out, st)
	}
	return out, nil
}

// compactMappedLimit and compactResidentLimit are the store's limits on
// its mapped pages, and on those and its anonymous memory together, for
// CompactIndexes: it reads every page of POS and OSP once, in order, so
// that pages kept mapped are not read again, while it holds the filter of
// the run it writes (168 MB) and bbolt's pages of a transaction. With the
// writer's defaults (256 MiB and 896 MiB) a compaction at ten million
// citations kept up to 490 MB mapped beside 540 MB of heap, for a peak of
// 1.02 GB.
const (
	compactMappedLimit   = 128 << 20
	compactResidentLimit = 640 << 20
)

// IndexCompaction is what CompactIndexes did to one quad index.
type IndexCompaction = graph.IndexCompaction

// CompactIndexes merges the sorted runs of the quad indexes POS and OSP
// into one each (graph.Store.CompactIndexes). progress, when not nil, is
// called after each transaction, from this goroutine.
func (d DB) CompactIndexes(ctx context.Context, progress func(graph.Progress)) ([]IndexCompaction, error) {
	if _, err := os.Stat(d.Path); err != nil {
		return nil, fmt.Errorf("compact: %w (ingest citations into it first)", err)
	}
	st, err := d.open(&graph.Options{MappedLimit: compactMappedLimit, ResidentLimit: compactResidentLimit})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.CompactIndexes(graph.WithProgress(ctx, progress))
}

// RunsToCompact returns how many runs CompactIndexes would merge in the
// quad index that has more (graph.Store.RunsToCompact).
func (d DB) RunsToCompact() (int, error) {
	st, err := d.Open(true)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.RunsToCompact()
}

// Vacuum rewrites the database file without its free pages
// (graph.Vacuum): the space that dropped views, merged runs and rebuilt
// rows gave up, which bbolt keeps in the file and lists in memory in
// every writer. progress, when set, is called after each commit of the
// copy with the bytes of the new file written and the live bytes of the
// old one, which it approaches.
func (d DB) Vacuum(ctx context.Context, progress func(written, live int64)) (graph.VacuumResult, error) {
	if _, err := os.Stat(d.Path); err != nil {
		return graph.VacuumResult{}, fmt.Errorf("vacuum: %w (ingest citations into it first)", err)
	}
	timeout := d.LockTimeout
	if timeout <= 0 {
		timeout = -1
	}
	res, err := graph.Vacuum(ctx, d.Path, graph.VacuumOptions{LockTimeout: timeout, Progress: progress})
	return res, lockedByServer(d.Path, err)
}
