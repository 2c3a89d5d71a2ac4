package graph

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync"

	"go.etcd.io/bbolt"
)

// A point lookup in POS or OSP (the subjects of a predicate and object,
// the quads that point at a node) reads every run of the index, because
// any run may hold the prefix it asks for. A large database holds dozens
// of runs per index, nearly all of them final, and a lookup whose answer
// lies in one or two of them paid a B-tree seek in each: a lineage, which
// makes hundreds of such lookups, took 170 ms among ten million
// citations.
//
// So each run carries a filter of the prefixes it holds, in a blocked
// Bloom filter (one 64-byte block per prefix, so a probe touches one cache
// line; Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient
// Bloom Filters", 2007): in POS every distinct pair of predicate and
// object (a predicate alone is in nearly every run: a filter of them would
// skip nothing), in OSP every distinct object. A read whose range fixes
// that prefix skips the runs whose filter says they lack it. A filter
// never leaves out a prefix its run holds (check verifies that, prefix by
// prefix), so skipping changes no answer; a false positive costs one seek.
// Runs written before filters (format version 3) have none and are read
// as before.
//
// Writing a filter costs the writer one hash and one cache line per
// distinct prefix, at every level a tuple climbs: about 3 % of an
// ingest's CPU at a million citations, against 9 % when the filters of
// both indexes held the first id and the first two ids of every tuple.
//
// The filter is derived from the run's tuples: it is written with the run
// (a new run, or the output of a merge), and WriteRunFilters writes it for
// the runs of a file written before filters (`provgraph convert
// --add-filters`) or anew (`--rebuild-filters`).

// runFilterKey is where a run keeps its filter: two zero bytes sort after
// the count (runCountKey) and before every chunk key, which is 16 bytes
// (a shorter key that is a prefix of a longer one sorts first), so that a
// seek among the chunks never lands on it.
const runFilterKey = "\x00\x00"

const (
	// filterBlock is the size of one block of a run filter, in bytes: a
	// cache line.
	filterBlock = 64
	// filterBitsPerTuple sizes a run's filter from its tuple count, known
	// before the run is written (the number of distinct prefixes is not,
	// and is at most the count): 10 bits per prefix or more, a false
	// positive rate of about 1 %, for 1.25 bytes per tuple.
	filterBitsPerTuple = 10
	// filterProbes is the number of bits a prefix sets in its block.
	filterProbes = 6
)

// filterPrefix is how many leading ids of its tuples the filters of index
// ind hold: POS the predicate and the object, OSP the object.
func filterPrefix(ind int) int {
	if ind == idxPOS {
		return 2
	}
	return 1
}

// prefixHash is the hash a filter holds for the first k ids of t (1 or
// 2); mix64 is SplitMix64's finalizer.
func prefixHash(t tuple, k int) uint64 {
	if k == 1 {
		return mix64(uint64(t[0]) ^ 0x9E3779B97F4A7C15)
	}
	return mix64(uint64(t[0])<<32 | uint64(t[1]))
}

// runFilter is a blocked Bloom filter, as stored: a whole number of
// 64-byte blocks of little-endian 64-bit words.
type runFilter []byte

// runFilterSize is the size in bytes of the filter of a run of n tuples.
func runFilterSize(n uint64) int {
	return int(max(1, (n*filterBitsPerTuple+filterBlock*8-1)/(filterBlock*8))) * filterBlock
}

// validRunFilter reports whether b has the shape of a filter.
func validRunFilter(b []byte) bool { return len(b) > 0 && len(b)%filterBlock == 0 }

// filterBlockOf returns the index of h's block among blocks: by h's high
// 32 bits. The bits within the block are nine-bit slices of mix64(h):
// bit j of a block is bit j%64 of its word j/64.
func filterBlockOf(h uint64, blocks int) int { return int(((h >> 32) * uint64(blocks)) >> 32) }

// has reports whether h may have been added: false means it was not.
func (f runFilter) has(h uint64) bool {
	return blockHas(f[filterBlockOf(h, len(f)/filterBlock)*filterBlock:][:filterBlock], h)
}

// hasIn is has, reading the block by pread when fb is set (readonce.go).
func (f runFilter) hasIn(fb *fileBlocks, h uint64) bool {
	if fb == nil {
		return f.has(h)
	}
	var buf [filterBlock]byte
	return blockHas(fb.read(f, filterBlockOf(h, len(f)/filterBlock)*filterBlock, buf[:]), h)
}

// blockHas reports whether blk, h's block of a filter, has h's bits.
func blockHas(blk []byte, h uint64) bool {
	g := mix64(h)
	for range filterProbes {
		if binary.LittleEndian.Uint64(blk[(g>>6&7)*8:])&(1<<(g&63)) == 0 {
			return false
		}
		g >>= 9
	}
	return true
}

// filterBuilder builds the filter of a run from its tuples, given in
// order, in 64-bit words: the stored form is written once at the end.
type filterBuilder struct {
	words []uint64
	k     int   // filterPrefix of the index
	prev  tuple // the last tuple added
	any   bool  // a tuple was added
}

// newFilterBuilder starts the filter of a run of index ind of n tuples.
func newFilterBuilder(ind int, n uint64) *filterBuilder {
	return &filterBuilder{words: make([]uint64, runFilterSize(n)/8), k: filterPrefix(ind)}
}

// add adds t's prefix, unless the tuple before it had the same.
func (b *filterBuilder) add(t tuple) {
	if b.any && t[0] == b.prev[0] && (b.k == 1 || t[1] == b.prev[1]) {
		return
	}
	b.prev, b.any = t, true
	h := prefixHash(t, b.k)
	blk := b.words[filterBlockOf(h, len(b.words)/8)*8:][:8]
	g := mix64(h)
	for range filterProbes {
		blk[g>>6&7] |= 1 << (g & 63)
		g >>= 9
	}
}

// appendTo appends the filter in its stored form to dst.
func (b *filterBuilder) appendTo(dst []byte) []byte {
	for _, w := range b.words {
		dst = binary.LittleEndian.AppendUint64(dst, w)
	}
	return dst
}

// rangeHash returns the hash of the prefix that the filters of index ind
// hold and every tuple t with lo <= t <= hi shares, and false when the
// range does not fix it.
func rangeHash(ind int, lo, hi tuple) (uint64, bool) {
	k := filterPrefix(ind)
	for i := range k {
		if lo[i] != hi[i] {
			return 0, false
		}
	}
	return prefixHash(lo, k), true
}

// indexRuns is the runs of one POS or OSP index as a read transaction
// sees them, with their filters (slices of the mapped file, valid for the
// transaction only). A Reader keeps one per index, so that its lookups
// probe the filters in memory instead of opening every run each time.
type indexRuns struct {
	ind  int
	runs []filteredRun
	// parent is the index's bucket in the transaction, from which a
	// run's bucket is opened when a read first needs it (bucket).
	parent *bbolt.Bucket
	m      runMerge // the merge a read reuses (runCache)
	// file, keep and blocks, when file is set, make reads go by pread
	// (a ReadOnce Store's, readonce.go): the runs' pages through
	// pageCursors keeping their pages in keep, the filters' blocks by
	// blocks.
	file   *os.File
	keep   *pageKeep
	blocks *fileBlocks
}

// cursor returns a cursor over run b: by pread when x reads so.
func (x *indexRuns) cursor(b *bbolt.Bucket) kvCursor {
	if x.file != nil {
		if pc := newPageCursor(x.file, b.Tx(), b); pc != nil {
			pc.keep = x.keep
			return pc
		}
	}
	return b.Cursor()
}

type filteredRun struct {
	name   runName
	b      *bbolt.Bucket // nil until a read needs it (indexRuns.bucket)
	filter runFilter     // nil: the run has none, every read reads it
	// at and n, when n > 0, are where the run's filter lies in the file,
	// for a Reader that reads it by pread (a ReadOnce Store's) and has
	// not read it otherwise: filter is then nil.
	at int64
	n  int
	// rc is the run's cursor, kept from one read to the next (runCache).
	rc *runCursor
}

// may reports whether the run may hold prefix hash h: its filter says
// so, or it has none. fb reads the filter's block by pread when set.
func (r *filteredRun) may(fb *fileBlocks, h uint64) bool {
	if r.n > 0 {
		return fb.has(r.at, r.n, h)
	}
	return r.filter == nil || r.filter.hasIn(fb, h)
}

// loadIndexRuns lists the runs of index ind, whose bucket is b. With fb
// (a ReadOnce Store's), the filters are located by pread and not read:
// through the mapping, finding each run's filter faulted in two or three
// pages of each of the 170 runs of POS and OSP at ten million citations,
// a fifth of the faults of a lineage command.
func loadIndexRuns(b *bbolt.Bucket, ind int, fb *fileBlocks) (*indexRuns, error) {
	x := &indexRuns{ind: ind, parent: b}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		rb := b.Bucket(k)
		if v != nil || len(k) != 9 || rb == nil {
			return nil, fmt.Errorf("%w: index holds key %x, want only runs", ErrCorrupt, k)
		}
		r := filteredRun{b: rb}
		copy(r.name[:], k)
		if fb != nil {
			if pc := newPageCursor(fb.f, rb.Tx(), rb); pc != nil {
				at, n, ok := pc.valueAt([]byte(runFilterKey))
				if err := pc.Err(); err != nil {
					return nil, err
				}
				if ok && (n == 0 || n%filterBlock != 0) {
					return nil, fmt.Errorf("%w: run %x has a filter of %d bytes, not a whole number of %d-byte blocks", ErrCorrupt, k, n, filterBlock)
				}
				r.at, r.n = at, n
				x.runs = append(x.runs, r)
				continue
			}
		}
		if f := rb.Get([]byte(runFilterKey)); f != nil {
			if !validRunFilter(f) {
				return nil, fmt.Errorf("%w: run %x has a filter of %d bytes, not a whole number of %d-byte blocks", ErrCorrupt, k, len(f), filterBlock)
			}
			r.filter = f
		}
		x.runs = append(x.runs, r)
	}
	return x, nil
}

// mayHold returns the runs that may hold tuples in [lo, hi]: those whose
// filter holds the prefix the range fixes, those without a filter, and
// every run when the range fixes no first id.
func (x *indexRuns) mayHold(lo, hi tuple) []filteredRun {
	h, fixed := rangeHash(x.ind, lo, hi)
	if !fixed {
		return x.runs
	}
	out := make([]filteredRun, 0, 4)
	for _, r := range x.runs {
		if r.may(x.blocks, h) {
			out = append(out, r)
		}
	}
	return out
}

// bucket returns run r's bucket, opening it in x's transaction on first
// use: runs listed from a runMemo are not opened until a read's filter
// probe says they may hold what it asks for.
func (x *indexRuns) bucket(r *filteredRun) (*bbolt.Bucket, error) {
	if r.b == nil {
		if r.b = x.parent.Bucket(r.name[:]); r.b == nil {
			return nil, fmt.Errorf("%w: index %s lacks run %x", ErrCorrupt, indexBuckets[x.ind], r.name)
		}
	}
	return r.b, nil
}

// merge returns a merge of the runs that may hold tuples in [lo, hi].
func (x *indexRuns) merge(lo, hi tuple) *runMerge {
	m := &runMerge{}
	for _, r := range x.mayHold(lo, hi) {
		b, err := x.bucket(&r)
		if err != nil {
			m.err = err
			return m
		}
		m.all = append(m.all, &runCursor{c: x.cursor(b)})
	}
	return m
}

// keptMerge is merge made of x's own merge and the runs' own cursors,
// kept from one read to the next: the read that asks must be the only
// one using them (runCache.take).
func (x *indexRuns) keptMerge(lo, hi tuple) *runMerge {
	m := &x.m
	m.all, m.heap, m.err = m.all[:0], m.heap[:0], nil
	h, fixed := rangeHash(x.ind, lo, hi)
	for i := range x.runs {
		r := &x.runs[i]
		if fixed && !r.may(x.blocks, h) {
			continue
		}
		if r.rc == nil {
			b, err := x.bucket(r)
			if err != nil {
				m.err = err
				return m
			}
			r.rc = &runCursor{c: x.cursor(b)}
		}
		r.rc.err = nil
		m.all = append(m.all, r.rc)
	}
	return m
}

// runCache is what a Reader keeps from one read to the next: the
// indexRuns of POS and OSP, each loaded at its first use, and the cursors
// its reads seek with. A cursor made for each read cost a lineage, which
// makes thousands of point reads, a tenth of its allocations (bbolt grows
// a new cursor's stack of pages as it descends); a kept one seeks within
// the stack it has. A read made while another is running (from a callback
// of it) makes cursors of its own. A nil *runCache keeps nothing.
type runCache struct {
	idx [numIndexes]*indexRuns
	spo kvCursor // on SPO
	// file, when set, makes spo a pageCursor reading by pread
	// (Reader.InOrder).
	file *os.File
	// keep and blocks, set with file for a ReadOnce Store (readonce.go),
	// make every read go by pread: spo and the runs' cursors keep their
	// pages in keep (instead of spo keeping inOrderKeep of its own), and
	// the filters are probed by blocks.
	keep   *pageKeep
	blocks *fileBlocks
	busy   bool // a read is using the kept cursors
	// memo, when set (a Reader's, in a read transaction), lists the runs
	// as an earlier Reader on the same snapshot found them.
	memo *runMemo
}

// get returns the runs of index ind, whose bucket is b.
func (c *runCache) get(b *bbolt.Bucket, ind int) (*indexRuns, error) {
	if c != nil && c.idx[ind] != nil {
		return c.idx[ind], nil
	}
	var x *indexRuns
	if c != nil && c.memo != nil {
		x = c.memo.indexRuns(b, ind, c.blocks)
	}
	if x == nil {
		var err error
		if x, err = loadIndexRuns(b, ind, c.blocksOrNil()); err != nil {
			return nil, err
		}
		if c != nil && c.memo != nil {
			c.memo.keep(b, x, c.blocks)
		}
	}
	if c != nil {
		if c.keep != nil {
			x.file, x.keep, x.blocks = c.file, c.keep, c.blocks
		}
		c.idx[ind] = x
	}
	return x, nil
}

// blocksOrNil returns c's blocks, nil for a nil c.
func (c *runCache) blocksOrNil() *fileBlocks {
	if c == nil {
		return nil
	}
	return c.blocks
}

// take reports whether the caller may read with the kept cursors, and
// marks them in use until release.
func (c *runCache) take() bool {
	if c == nil || c.busy {
		return false
	}
	c.busy = true
	return true
}

func (c *runCache) release() { c.busy = false }

// WriteRunFilters writes the filter of every POS and OSP run that has none
// (a run written by format version 3), or with all of every run (to
// replace a filter that check found damaged), and returns how many it
// wrote. Only filters are written, derived from
// the runs' own tuples: no quad, term or counter changes. Each run gets
// its filter in a transaction of its own, so memory stays at one run's
// filter (1.25 bytes per tuple) and an interrupted pass leaves every run
// either with its whole filter or without one: running it again finishes
// the work. ctx is checked between runs.
//
// Runs that are merged get a filter anyway (the merged run is new), but a
// final run is never merged again, so on a file of format version 3 the
// largest runs have no filter until this runs.
func (s *Store) WriteRunFilters(ctx context.Context, all bool) (added int, err error) {
	fail := func(err error) (int, error) { return added, &Error{Op: "write run filters", Path: s.path, Err: err} }
	if s.readOnly {
		return fail(ErrReadOnly)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.guard("write run filters", &err)
	defer g.done()
	if s.closed {
		return fail(ErrClosed)
	}
	type missing struct {
		ind  int
		name runName
	}
	var todo []missing
	err = s.db.View(func(tx *bbolt.Tx) error {
		for _, ind := range []int{idxPOS, idxOSP} {
			b := tx.Bucket([]byte(indexBuckets[ind]))
			runs, err := listQuadRuns(b)
			if err != nil {
				return err
			}
			for _, r := range runs {
				if all || b.Bucket(r.name[:]).Get([]byte(runFilterKey)) == nil {
					todo = append(todo, missing{ind, r.name})
				}
			}
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	for _, m := range todo {
		if err := ctx.Err(); err != nil {
			return added, err
		}
		err := s.update(func(tx *bbolt.Tx) error {
			b := tx.Bucket([]byte(indexBuckets[m.ind])).Bucket(m.name[:])
			if b == nil {
				return corruptf("index %s lost run %x", indexBuckets[m.ind], m.name)
			}
			cnt := b.Get([]byte(runCountKey))
			if len(cnt) != 8 {
				return corruptf("index %s run %x has no tuple count", indexBuckets[m.ind], m.name)
			}
			n := binary.BigEndian.Uint64(cnt)
			if n > uint64(tx.Size())/3 { // a tuple takes at least 3 bytes
				return corruptf("index %s run %x counts %d tuples, more than the file can hold", indexBuckets[m.ind], m.name, n)
			}
			filter := newFilterBuilder(m.ind, n)
			rc := &runCursor{c: b.Cursor()}
			rc.seek(tuple{})
			var seen uint64
			for t, ok := rc.head(); ok; t, ok = rc.head() {
				filter.add(t)
				seen++
				rc.advance()
			}
			if rc.err != nil {
				return fmt.Errorf("index %s run %x: %w", indexBuckets[m.ind], m.name, rc.err)
			}
			if seen != n {
				return corruptf("index %s run %x holds %d tuples, its count says %d", indexBuckets[m.ind], m.name, seen, n)
			}
			return b.Put([]byte(runFilterKey), filter.appendTo(make([]byte, 0, runFilterSize(n))))
		})
		if err != nil {
			return fail(err)
		}
		added++
	}
	return added, nil
}

// runMemo keeps, from one read transaction to the next on the same
// snapshot, the runs of POS and OSP as loadIndexRuns found them: their
// names and their filters (a slice of the mapping, or where the filter
// lies in the file for reads by pread). Listing them opened every run's
// bucket and sought its filter, some 170 B-tree seeks at ten million
// citations, which each read transaction paid at its first lookup in
// each index: about 0.6 ms of a lineage of 5 ms, and of every request of
// a server.
//
// It is keyed by the snapshot (the transaction id of the last commit,
// which a read transaction sees) and by the address of the mapping: a
// write that grows the file maps it anew, and a commit that fails after
// that leaves the transaction id as it was. The pages a snapshot reaches
// lie where they lay for as long as a transaction reads it, so a filter's
// place in the file holds for every transaction on that snapshot, and a
// slice of the mapping for as long as the mapping is at the same address
// (a remap at the same address maps the same file, longer).
type runMemo struct {
	mu   sync.Mutex
	key  runMemoKey
	idx  [numIndexes][]filteredRun
	have [numIndexes]bool
}

type runMemoKey struct {
	txid  int
	base  uintptr // the mapping's address
	pread bool    // the filters are located for reads by pread
}

// memoKey is the key of b's transaction, and whether it has one: only a
// read transaction, whose runs do not change under it, has.
func memoKeyOf(b *bbolt.Bucket, fb *fileBlocks) (runMemoKey, bool) {
	tx := b.Tx()
	if tx.Writable() {
		return runMemoKey{}, false
	}
	info := tx.DB().Info()
	if info == nil || info.Data == 0 {
		return runMemoKey{}, false
	}
	return runMemoKey{txid: tx.ID(), base: info.Data, pread: fb != nil}, true
}

// indexRuns returns the runs of index ind kept for b's snapshot, their
// buckets to be opened in b's transaction when first needed; nil when
// none are kept.
func (m *runMemo) indexRuns(b *bbolt.Bucket, ind int, fb *fileBlocks) *indexRuns {
	key, ok := memoKeyOf(b, fb)
	if !ok {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.key != key || !m.have[ind] {
		return nil
	}
	x := &indexRuns{ind: ind, parent: b, runs: make([]filteredRun, len(m.idx[ind]))}
	copy(x.runs, m.idx[ind])
	return x
}

// keep keeps the runs x of its index, loaded in b's transaction.
func (m *runMemo) keep(b *bbolt.Bucket, x *indexRuns, fb *fileBlocks) {
	key, ok := memoKeyOf(b, fb)
	if !ok {
		return
	}
	runs := make([]filteredRun, len(x.runs))
	for i, r := range x.runs {
		runs[i] = filteredRun{name: r.name, filter: r.filter, at: r.at, n: r.n}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.key != key {
		m.key, m.have = key, [numIndexes]bool{}
	}
	m.idx[x.ind], m.have[x.ind] = runs, true
}
