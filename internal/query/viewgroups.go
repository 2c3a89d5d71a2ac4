package query

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/provgraph/provgraph/internal/store"
)

// This file writes the full report from a grouping view, a batch of keys
// at a time, in memory bounded by the batch instead of by the database
// (LoadGroups holds every citation's facts: 280 to 400 bytes a
// citation). The view's rows are read in key order (RowsAfter); each
// batch of consecutive keys is grouped with its neighbourhood as GroupOf
// groups one key (gatherKeys: the keys redirects join to them, the keys
// sharing their content evidence, both ends of their relations), and
// the groups whose smallest key is in the batch are written and counted.
// Every such group is then the whole database's, as GroupOf's is
// (TestGroupOfMatchesReport), so the report is LoadGroups' byte for byte
// (TestViewGroupsMatchesReport). The price is reading each batch's
// neighbourhood through the view's postings instead of one scan. A row's
// member record (ViewRow.Member, kept by views of format 7) stands for
// its citation; only a view without records has each listed member's
// citation read by point reads (about 65 µs of CPU a member at ten
// million citations, seven times what the scan spends a citation).

// RowPager pages through a grouping view's rows in key order
// (store.GroupView.RowsAfter).
type RowPager interface {
	RowsAfter(ctx context.Context, policyDigest string, after *store.RowPos, limit int) ([]ViewRow, error)
}

// forgetter is a read view that can let go of what its reads kept
// (citestore.Store.Forget): a pass over a whole database calls it
// between batches.
type forgetter interface{ Forget() }

// shownLookup reads citations as a listed group shows them
// (citestore.Store.Shown): only what the listing is made of. A backend
// without it is read with Citations.
type shownLookup interface {
	Shown(ctx context.Context, policyDigest string, ids []string) ([]*Citation, error)
}

// sharedLister lists the content hashes or text digests ("content",
// "digest") that two keys or more share in a grouping view, or the keys
// that are redirect or relation targets ("redirect", "relation")
// (citestore.Store.SharedValues):
// the full listing then looks up only those. A backend without it has
// every one looked up.
type sharedLister interface {
	SharedValues(ctx context.Context, policyDigest, kind string, fn func(value string) error) error
}

// mappedKeeper is a read view that can keep the pages of the file it
// maps under a limit as it reads (citestore.Store.KeepMappedUnder).
type mappedKeeper interface{ KeepMappedUnder(limit int64) }

// DefaultViewMapped is how much of the database file the full listing
// from a view keeps mapped, at most about (ViewRead.Mapped). Its point
// reads probe the filters of every run, which it spares up to three
// quarters of this (at ten million citations the filters are 528 MiB);
// the rest is the pages it read last. Less makes it read pages again: at
// a million citations, 512 MiB cost a quarter of its CPU time in
// releasing pages and faulting them in again.
const DefaultViewMapped = 1 << 30

// ViewRead is how LoadGroupsFromView reads: its memory is the batches in
// hand, with their neighbourhoods and citations (at most 232 to 351 MB of
// anonymous memory at 10M and 30M citations, default batch, two cores)
// and Mapped.
type ViewRead struct {
	// Batch is the citations of a batch, at least (a key's rows are
	// never split); 0 for DefaultViewBatch.
	Batch int
	// Mapped is the bytes of the file the reads keep mapped, about; 0
	// for DefaultViewMapped.
	Mapped int64
}

// DefaultViewBatch is how many citations' rows a batch of the full
// listing from a view holds, at least (a key's rows are never split). At
// a million citations, batches of 1,024 took 57.5 s and 623 MB of peak
// RSS, of 4,096 60.4 s and 756 MB, of 16,384 44 s and 1.68 GB (one run
// each, an early build reading whole citations with 512 MiB mapped): a
// batch's memory is its citations read and the read view's caches,
// which large batches pay for in memory more than they save in time.
const DefaultViewBatch = 1024

// viewPageRows is how many rows one RowsAfter call reads.
const viewPageRows = 4096

// viewGroups is a GroupSet read from a grouping view.
type viewGroups struct {
	src    Source
	snap   *Snapshot
	opts   GroupOptions
	batch  int
	mapped int64
	// records: the rows carry member records (GroupSet.FromRecords)
	records bool
	// shared, when the source lists them, are the texts two keys or more
	// share (sharedLister), read before the rows.
	shared *sharedTexts
}

// LoadGroupsFromView returns the review groups of src under policy (as
// LoadGroups takes it), to be written from src's grouping view of the
// policy a batch of keys at a time (ViewRead), so that memory does not
// grow with the database. It returns nil and no error when src keeps no
// view usable for the policy (none, or one this build's normalization
// engine would key otherwise) or opts asks for Detail: the caller then
// uses LoadGroups. Write reads src, which must stay open
// until it returns. It reads; it never writes.
func LoadGroupsFromView(ctx context.Context, src Source, policy string, opts GroupOptions, how ViewRead) (*GroupSet, error) {
	vs, ok := src.(ViewSource)
	if !ok || opts.Detail {
		return nil, nil
	}
	if _, ok := src.(RowPager); !ok {
		return nil, nil
	}
	snap, err := usableView(ctx, vs, policy)
	if snap == nil || err != nil {
		return nil, err
	}
	if how.Batch <= 0 {
		how.Batch = DefaultViewBatch
	}
	if how.Mapped <= 0 {
		how.Mapped = DefaultViewMapped
	}
	// A view's rows all carry records or none do: the first says.
	first, err := src.(RowPager).RowsAfter(ctx, snap.Policy.Digest, nil, 1)
	if err != nil {
		return nil, fmt.Errorf("query: rows of the grouping view of policy %s: %w", snap.Policy, err)
	}
	records := len(first) > 0 && first[0].Member != nil
	return &GroupSet{v: &viewGroups{src: src, snap: snap, opts: opts, batch: how.Batch, mapped: how.Mapped, records: records}}, nil
}

// write is GroupSet.Write from the view. One goroutine pages through the
// rows and cuts them into batches; a worker per core groups a batch at a
// time, each on a read view of its own (store.Viewer), and the batches'
// bytes are written in order. A database opened read-only cannot change
// under the read views (writers wait for its lock), so they all read one
// state.
func (v *viewGroups) write(ctx context.Context, encode func(buf []byte, g *Group) []byte, write func([]byte) error) (*Report, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The shared texts first: a lookup of each content hash in the view
	// was half of the listing's time at ten million citations (a random
	// page of a large posting map each, nearly all of them naming only
	// their own key); one ordered pass over the two posting maps names
	// the few that need it. Likewise every key read had the keys
	// redirecting to it looked up (a seek in every run of the redirect
	// postings), where few keys are redirect targets: one pass over them
	// names those. The keys relations point at, likewise.
	if sl, ok := v.src.(sharedLister); ok {
		sh := &sharedTexts{content: newValueFilter(viewSharedFilterBytes), digest: newValueFilter(viewSharedFilterBytes / 4), targets: newValueFilter(viewSharedFilterBytes / 2), pointed: newValueFilter(viewSharedFilterBytes / 4)}
		for kind, f := range map[string]*valueFilter{"content": sh.content, "digest": sh.digest, "redirect": sh.targets, "relation": sh.pointed} {
			err := sl.SharedValues(ctx, v.snap.Policy.Digest, kind, func(s string) error {
				f.add(s)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("query: shared evidence in the grouping view of policy %s: %w", v.snap.Policy, err)
			}
		}
		v.shared = sh
	}
	nw := workers()
	jobs := make(chan *viewBatch)
	var wg sync.WaitGroup
	// Deferred, so that the workers end, and their read views with them,
	// however page returns (a panic included: a read view left open
	// would keep the database from closing).
	defer func() {
		cancel()
		close(jobs)
		wg.Wait()
	}()
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := v.reading(ctx, func(vs ViewSource) error {
				for b := range jobs {
					if b.unkeyed {
						b.done <- v.unkeyed(ctx, vs, b.rows)
					} else {
						b.done <- v.group(ctx, vs, b.rows, encode)
					}
					if f, ok := vs.(forgetter); ok {
						f.Forget()
					}
				}
				return nil
			})
			for b := range jobs { // the read view failed: every batch says so
				b.done <- viewBatchResult{err: err}
			}
		}()
	}
	var rep *Report
	err := v.reading(ctx, func(vs ViewSource) error {
		var err error
		rep, err = v.page(ctx, vs, jobs, nw, encode == nil, write)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// reading runs fn on a read view of v.src when it gives one, with the
// pages it maps kept under v.mapped.
func (v *viewGroups) reading(ctx context.Context, fn func(ViewSource) error) error {
	vr, ok := v.src.(store.Viewer)
	if !ok {
		return fn(v.src.(ViewSource))
	}
	return vr.View(ctx, func(r store.Reader) error {
		in, ok := r.(ViewSource)
		if !ok {
			in = v.src.(ViewSource)
		}
		if k, ok := in.(mappedKeeper); ok {
			k.KeepMappedUnder(v.mapped)
		}
		return fn(in)
	})
}

// viewBatch is a batch of consecutive keys' rows, and where its result
// goes.
type viewBatch struct {
	rows []ViewRow
	// unkeyed: the rows are of rejected and unnormalized citations,
	// which are listed, not grouped.
	unkeyed bool
	done    chan viewBatchResult // buffered: a worker never waits on it
}

// viewBatchResult is what a batch wrote: its groups' bytes (or, for a
// whole report, its listed groups) and counts.
type viewBatchResult struct {
	buf      []byte
	groups   []*Group
	counts   map[string]int
	rejected []RejectedURL
	missing  []string
	err      error
}

// page reads vs's rows in order, hands the batches to the workers on
// jobs and writes their results in order (collect: into the report); it
// returns the rest of the report. At most 2*nw batches are out at once.
func (v *viewGroups) page(ctx context.Context, vs ViewSource, jobs chan *viewBatch, nw int, collect bool, write func([]byte) error) (*Report, error) {
	pager, ok := vs.(RowPager)
	if !ok {
		pager = v.src.(RowPager)
	}
	d := v.snap.Policy.Digest
	incomplete := incompleteRuns(v.snap.Runs)
	rep := &Report{Policy: v.snap.Policy, Groups: []*Group{}, Rejected: []RejectedURL{}, Missing: []string{}, IncompleteRuns: incomplete, Warnings: runWarnings(incomplete)}
	counts := map[string]int{"citations": 0, "rejected": 0, "unnormalized": 0, "groups": 0}
	var pending []*viewBatch
	// take writes the oldest batch out.
	take := func() error {
		b := pending[0]
		pending = pending[1:]
		res := <-b.done
		if res.err != nil {
			return res.err
		}
		rep.Rejected = append(rep.Rejected, res.rejected...)
		rep.Missing = append(rep.Missing, res.missing...)
		if collect {
			rep.Groups = append(rep.Groups, res.groups...)
		} else if len(res.buf) > 0 {
			if err := write(res.buf); err != nil {
				return err
			}
		}
		for k, c := range res.counts {
			switch k {
			case "citations", "rejected", "unnormalized":
			default:
				counts[k] += c
			}
		}
		return nil
	}
	send := func(rows []ViewRow, unkeyed bool) error {
		b := &viewBatch{rows: rows, unkeyed: unkeyed, done: make(chan viewBatchResult, 1)}
		select {
		case jobs <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		pending = append(pending, b)
		if len(pending) >= 2*nw {
			return take()
		}
		return nil
	}
	// The rejected and unnormalized citations come first (key ""), in
	// citation id order, as the report lists them. Written out (not
	// collect), they are only counted here, and read again when the
	// report's rest is written (listUnkeyed), so as not to hold them.
	var unkeyed []ViewRow
	var rejected, missing int
	flushUnkeyed := func() error {
		if len(unkeyed) == 0 {
			return nil
		}
		err := send(unkeyed, true)
		unkeyed = nil
		return err
	}
	var batch []ViewRow
	var after *store.RowPos
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		page, err := pager.RowsAfter(ctx, d, after, viewPageRows)
		if err != nil {
			return nil, fmt.Errorf("query: rows of the grouping view of policy %s: %w", v.snap.Policy, err)
		}
		if len(page) == 0 {
			break
		}
		last := page[len(page)-1]
		after = &store.RowPos{Key: last.Key, CitationID: last.CitationID}
		for _, r := range page {
			counts["citations"]++
			if r.State != store.RowKeyed {
				if r.State == store.RowUnnormalized {
					missing++
				} else {
					rejected++
				}
				if !collect {
					continue
				}
				unkeyed = append(unkeyed, r)
				if len(unkeyed) == viewPageRows {
					if err := flushUnkeyed(); err != nil {
						return nil, err
					}
				}
				continue
			}
			if len(batch) >= v.batch && r.Key != batch[len(batch)-1].Key {
				if err := send(batch, false); err != nil {
					return nil, err
				}
				batch = nil
			}
			batch = append(batch, r)
		}
	}
	if err := flushUnkeyed(); err != nil {
		return nil, err
	}
	if len(batch) > 0 {
		if err := send(batch, false); err != nil {
			return nil, err
		}
	}
	for len(pending) > 0 {
		if err := take(); err != nil {
			return nil, err
		}
	}
	counts["rejected"], counts["unnormalized"] = rejected, missing
	rep.Counts = counts
	if !collect && rejected+missing > 0 {
		rep.unkeyed = v.listUnkeyed
	}
	return rep, nil
}

// listUnkeyed pages through the rows of the rejected and unnormalized
// citations again, on a read view of its own, and calls rejected (when
// not nil) with each rejected citation and missing (when not nil) with
// each unnormalized one's id, in citation id order: Report.EachRejected
// and EachMissing of a report written from the view.
func (v *viewGroups) listUnkeyed(ctx context.Context, rejected func(RejectedURL) error, missing func(string) error) error {
	return v.reading(ctx, func(vs ViewSource) error {
		pager, ok := vs.(RowPager)
		if !ok {
			pager = v.src.(RowPager)
		}
		var after *store.RowPos
		for {
			page, err := pager.RowsAfter(ctx, v.snap.Policy.Digest, after, viewPageRows)
			if err != nil {
				return fmt.Errorf("query: rows of the grouping view of policy %s: %w", v.snap.Policy, err)
			}
			n := 0
			for n < len(page) && page[n].State != store.RowKeyed {
				n++
			}
			rows := page[:n]
			if missing != nil {
				for _, r := range rows {
					if r.State == store.RowUnnormalized {
						if err := missing(r.CitationID); err != nil {
							return err
						}
					}
				}
			}
			if rejected != nil && len(rows) > 0 {
				res := v.unkeyed(ctx, vs, rows)
				if res.err != nil {
					return res.err
				}
				for _, x := range res.rejected {
					if err := rejected(x); err != nil {
						return err
					}
				}
			}
			if f, ok := vs.(forgetter); ok {
				f.Forget()
			}
			if n < len(page) || len(page) == 0 {
				return nil
			}
			last := page[len(page)-1]
			after = &store.RowPos{Key: last.Key, CitationID: last.CitationID}
		}
	})
}

// unkeyed lists the citations of rows, rows of rejected and unnormalized
// citations: the rejected with their raw URLs and errors, read as the
// listing shows them.
func (v *viewGroups) unkeyed(ctx context.Context, vs ViewSource, rows []ViewRow) viewBatchResult {
	var ids []string
	for _, r := range rows {
		if r.State != store.RowUnnormalized && r.Member == nil {
			ids = append(ids, r.CitationID)
		}
	}
	var cs []*Citation
	if len(ids) > 0 {
		read := vs.Citations
		if sl, ok := vs.(shownLookup); ok {
			read = sl.Shown
		}
		var err error
		if cs, err = read(ctx, v.snap.Policy.Digest, ids); err != nil {
			return viewBatchResult{err: fmt.Errorf("query: reading citations: %w", err)}
		}
	}
	var res viewBatchResult
	for _, r := range rows {
		if r.State == store.RowUnnormalized {
			res.missing = append(res.missing, r.CitationID)
			continue
		}
		c := r.Member
		if c == nil {
			c = cs[0]
			cs = cs[1:]
		}
		switch {
		case c == nil:
			return viewBatchResult{err: fmt.Errorf("query: the grouping view names citation %s, which the database does not hold (rebuild the view): %w", r.CitationID, store.ErrDamaged)}
		case c.Norm == nil:
			return viewBatchResult{err: fmt.Errorf("query: the grouping view has citation %s rejected, the database unnormalized (rebuild the view): %w", r.CitationID, store.ErrDamaged)}
		}
		res.rejected = append(res.rejected, RejectedURL{CitationID: c.ID, RawURL: c.Raw, Code: c.Norm.ErrorCode, Message: c.Norm.ErrorMessage})
	}
	return res
}

// group groups the keys of rows (consecutive keys of the view, each with
// all its rows) with their neighbourhood, and returns the groups whose
// smallest key is among them, encoded (or whole when encode is nil), and
// their counts.
func (v *viewGroups) group(ctx context.Context, vs ViewSource, rows []ViewRow, encode func(buf []byte, g *Group) []byte) viewBatchResult {
	pre := map[string][]ViewRow{}
	var keys []string
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].Key == rows[i].Key {
			j++
		}
		keys = append(keys, rows[i].Key)
		pre[rows[i].Key] = rows[i:j:j]
		i = j
	}
	first, last := keys[0], keys[len(keys)-1]
	n, cits, err := gatherKeys(ctx, vs, v.snap, keys, pre, v.opts, v.shared)
	if err != nil {
		return viewBatchResult{err: err}
	}
	if sl, ok := vs.(shownLookup); ok {
		cits.shown = sl
	}
	cits.members = true
	f, err := viewFacts(n, cits)
	if err != nil {
		return viewBatchResult{err: err}
	}
	g := newGrouping(f, v.snap, v.opts)
	g.nw = 1 // a worker per core groups a batch each
	g.emit = map[int32]bool{}
	for i, gr := range g.groups {
		if k := g.keys[gr.keys[0]]; first <= k && k <= last {
			g.emit[int32(i)] = true
		}
	}
	// The review marks of the groups written: their own relations, and
	// those of the groups pointing at them (the incoming keys read).
	g.reviewOnly = maps.Clone(g.emit)
	for _, k := range n.incoming {
		if ref, ok := g.keyIndex[k]; ok && g.groupOfKey[ref] >= 0 {
			g.reviewOnly[g.groupOfKey[ref]] = true
		}
	}
	var res viewBatchResult
	var write func([]byte) error
	if encode != nil {
		write = func(p []byte) error {
			res.buf = append(res.buf, p...)
			return nil
		}
	}
	rep, err := g.run(ctx, encode, write)
	if err == nil {
		err = cits.failed()
	}
	if err != nil {
		return viewBatchResult{err: err}
	}
	res.groups, res.counts = rep.Groups, rep.Counts
	return res
}
