package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"
)

// The POS and OSP indexes are sets of sorted runs, as the hash index of
// the dictionary is, and for the same reason: their tuples land at random
// places. New subjects get the largest ids, so SPO tuples go at the end
// of their index; but a POS or OSP tuple whose object is a stored term (a
// shared URL, key, answer or engine) goes after that object's tuples,
// anywhere in the index. Inserted into one B-tree, a batch of a large
// ingest read and rewrote thousands of pages spread over the file, so
// ingest slowed as the file grew and mapped most of it.
//
// Instead each transaction writes its new tuples of each index as a new
// run (a nested bucket, written in key order, pages packed full), and
// when fanout runs of one level pile up they are merged into one run of
// the next level: the write of a batch is sequential, and a tuple is
// rewritten once per level. A run that holds finalRunTuples or more is
// never merged again, which bounds the memory of one merge (its output
// stays in bbolt's memory until the commit) at about fanout times that.
// A read merges the runs, which hold disjoint sets of tuples.
//
// A run is a bucket named level (1 byte) + sequence number (8 bytes,
// big-endian). Its chunks are those of spo (index.go), cut at about
// chunkTarget bytes, and its key "\x00", which sorts before every chunk,
// holds the number of tuples in it (8 bytes, big-endian).

// runCountKey is where a run keeps its number of tuples.
const runCountKey = "\x00"

// finalRunTuples is the size from which a run is no longer merged: merges
// then write at most fanout times this many tuples (about 20 MB of
// chunks) in one transaction, and a million citations make about eight
// final runs per index. A variable for tests only.
var finalRunTuples uint64 = 1 << 20

// bigMerge is the size (tuples or hash entries read) from which a merge
// counts against a transaction's mergeBudget. A variable for tests only.
var bigMerge uint64 = 1 << 19

// mergeBudget lets one transaction make at most one big merge across the
// hash index, POS and OSP. A merge holds its output in memory until the
// commit, and the three indexes reach the same level at the same batch:
// merged together, they would add up. A merge that finds the budget
// spent waits for a later transaction, its level holding a run or two
// more in the meantime.
type mergeBudget struct{ spent bool }

// take reports whether a merge of n tuples may run now, and counts it.
func (b *mergeBudget) take(n uint64) bool {
	if b == nil || n < bigMerge {
		return true
	}
	if b.spent {
		return false
	}
	b.spent = true
	return true
}

// quadRun is one sorted run of the POS or OSP index.
type quadRun struct {
	name runName
	n    uint64 // tuples
}

func (r quadRun) level() int  { return r.name.level() }
func (r quadRun) seq() uint64 { return r.name.seq() }

// listQuadRuns lists the runs of an index bucket, oldest first.
func listQuadRuns(b *bbolt.Bucket) ([]quadRun, error) {
	var runs []quadRun
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || len(k) != 9 {
			return nil, fmt.Errorf("%w: index holds key %x, want only runs", ErrCorrupt, k)
		}
		var r quadRun
		copy(r.name[:], k)
		cnt := b.Bucket(k).Get([]byte(runCountKey))
		if len(cnt) != 8 {
			return nil, fmt.Errorf("%w: run %x has no tuple count", ErrCorrupt, k)
		}
		r.n = binary.BigEndian.Uint64(cnt)
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b quadRun) int { return cmpUint64(a.seq(), b.seq()) })
	return runs, nil
}

// runWriter adds the new tuples of a transaction to the POS or OSP index.
type runWriter struct {
	b      *bbolt.Bucket
	ind    int // idxPOS or idxOSP
	mem    *arena
	pg     *pager
	budget *mergeBudget
	enc    []byte // scratch: a chunk being encoded
	// known are the index's runs when the Store knows them (quadRunCache);
	// nil: add lists them.
	known []quadRun
}

// quadRunCache keeps the runs of POS and OSP from one write transaction
// to the next. Listing them reads each run's count, a nested bucket's
// page apiece: one random read per run of either index each batch,
// about a twentieth of a 10M ingest's page faults once its mapped pages
// were being released (docs/SCALE.md). The list a transaction leaves is good
// for the next write transaction only (its id one more): any other write
// in between, of this Store or after a rollback, finds the id changed
// and lists the runs again.
type quadRunCache struct {
	txid    int          // the transaction that left runs
	runs    [2][]quadRun // POS, OSP
	pending [2][]quadRun // what the open transaction leaves
	ok      bool
}

// begin is called as a write transaction starts: what an earlier one
// that did not commit left pending goes.
func (c *quadRunCache) begin() { c.pending = [2][]quadRun{} }

// get returns the runs of index k (0: POS, 1: OSP) for write transaction
// tx, nil when unknown.
func (c *quadRunCache) get(tx *bbolt.Tx, k int) []quadRun {
	if !c.ok || c.txid+1 != tx.ID() {
		return nil
	}
	return c.runs[k]
}

// committed records the runs the transaction txid left, now committed.
func (c *quadRunCache) committed(txid int) {
	c.ok = c.pending[0] != nil && c.pending[1] != nil
	c.txid, c.runs, c.pending = txid, c.pending, [2][]quadRun{}
}

// add writes ts (sorted, without repeats, none of them stored) as a new
// run and merges runs while some level has fanout or more of them that
// are not final (more when a merge had to wait for the budget).
func (w *runWriter) add(ts []tuple) ([]quadRun, error) {
	runs := slices.Clone(w.known)
	if runs == nil {
		var err error
		if runs, err = listQuadRuns(w.b); err != nil {
			return nil, err
		}
	}
	if len(ts) == 0 {
		return runs, nil
	}
	var seq uint64
	for _, r := range runs {
		seq = max(seq, r.seq()+1)
	}
	i := 0
	r, err := w.write(0, seq, uint64(len(ts)), func() (tuple, bool) {
		if i == len(ts) {
			return tuple{}, false
		}
		i++
		return ts[i-1], true
	})
	if err != nil {
		return nil, err
	}
	runs = append(runs, r)
	return compactRuns(runs, seq+1, w.budget,
		func(r quadRun) runName { return r.name },
		func(r quadRun) bool { return r.n < finalRunTuples },
		func(same []quadRun) uint64 {
			var n uint64
			for _, r := range same {
				n += r.n
			}
			return n
		},
		w.merge)
}

// write writes the tuples next yields (in order) as the run level, seq,
// with its filter (runfilter.go), sized for n tuples (more would only
// raise its false positive rate: a merge sizes it by its inputs' counts).
func (w *runWriter) write(level int, seq, n uint64, next func() (tuple, bool)) (quadRun, error) {
	r := quadRun{name: newRunName(level, seq)}
	b, err := w.b.CreateBucket(w.mem.copy(r.name[:]))
	if err != nil {
		return r, fmt.Errorf("create run %x: %w", r.name, err)
	}
	b.FillPercent = 1 // written in key order, never added to
	var first, prev tuple
	enc := w.enc[:0]
	open := false
	filter := newFilterBuilder(w.ind, n)
	put := func() error {
		k := w.mem.alloc(keySize)
		putKey(k, first)
		return b.Put(k, w.mem.copy(enc))
	}
	for t, ok := next(); ok; t, ok = next() {
		filter.add(t)
		r.n++
		if !open {
			first, enc, open = t, enc[:0], true
		} else {
			enc = appendEntry(enc, prev, t)
		}
		prev = t
		if len(enc) >= chunkTarget {
			if err := put(); err != nil {
				return r, err
			}
			open = false
		}
	}
	if open {
		if err := put(); err != nil {
			return r, err
		}
	}
	w.enc = enc
	cnt := w.mem.alloc(8)
	binary.BigEndian.PutUint64(cnt, r.n)
	if err := b.Put([]byte(runCountKey), cnt); err != nil {
		return r, err
	}
	return r, b.Put([]byte(runFilterKey), filter.appendTo(w.mem.alloc(runFilterSize(n))[:0]))
}

// merge writes the union of runs as one run and deletes them.
func (w *runWriter) merge(runs []quadRun, level int, seq uint64) (quadRun, error) {
	m := newRunMerge(w.b, runs, w.pg)
	m.seek(tuple{})
	var n uint64
	for _, r := range runs {
		n += r.n
	}
	out, err := w.write(level, seq, n, m.next)
	if err == nil {
		err = m.err
	}
	if err != nil {
		return out, fmt.Errorf("merge into run %x: %w", out.name, err)
	}
	names := make([]runName, len(runs))
	for i, r := range runs {
		names[i] = r.name
	}
	return out, deleteRuns(w.b, names, w.pg)
}

// runCursor reads one run's tuples in order, decoding a chunk only as far
// as it is read: a lookup in many runs decodes a few tuples of each.
type runCursor struct {
	c    kvCursor
	cur  tuple  // the current tuple, when ok
	ok   bool   // not at the end
	key  []byte // the current chunk's key, for errors
	rest []byte // the current chunk's entries after cur
	pg   *pager
	err  error
	// taken counts the tuples a runMerge returned from this run
	// (compact.go: what a transaction moves out of it).
	taken uint64
}

// seek positions the cursor on the first tuple not before lo.
func (rc *runCursor) seek(lo tuple) {
	k, v := seekChunk(rc.c, lo)
	rc.pg.read()
	rc.load(k, v)
	for rc.ok && rc.cur.cmp(lo) < 0 {
		rc.advance()
	}
}

func (rc *runCursor) load(k, v []byte) {
	rc.ok = false
	if rc.err != nil {
		return
	}
	if k == nil {
		rc.err = cursorErr(rc.c) // a pageCursor's walk ended by damage
		return
	}
	if len(k) != keySize {
		rc.err = fmt.Errorf("%w: key of %d bytes", errBadChunk, len(k))
		return
	}
	rc.cur, rc.key, rc.rest, rc.ok = keyTuple(k), k, v, true
}

// advance moves past the current tuple.
func (rc *runCursor) advance() {
	if len(rc.rest) > 0 {
		var ok bool
		if rc.cur, rc.rest, ok = decodeNext(rc.cur, rc.rest); !ok {
			rc.err, rc.ok = fmt.Errorf("%w: bad varint at %x", errBadChunk, rc.key), false
		}
		return
	}
	rc.pg.read()
	rc.load(rc.c.Next())
}

// head returns the current tuple; ok is false at the end.
func (rc *runCursor) head() (tuple, bool) { return rc.cur, rc.ok }

// runMerge reads several runs as one sorted sequence: a binary heap of
// their cursors, ordered by their current tuples.
type runMerge struct {
	heap []*runCursor
	all  []*runCursor
	err  error
}

func newRunMerge(b *bbolt.Bucket, runs []quadRun, pg *pager) *runMerge {
	m := &runMerge{}
	for _, r := range runs {
		if rb := b.Bucket(r.name[:]); rb != nil {
			m.all = append(m.all, &runCursor{c: rb.Cursor(), pg: pg})
		}
	}
	return m
}

// seek positions the merge on the first tuple not before lo.
func (m *runMerge) seek(lo tuple) {
	m.heap = m.heap[:0]
	for _, rc := range m.all {
		rc.seek(lo)
		if rc.err != nil && m.err == nil {
			m.err = rc.err
		}
		if _, ok := rc.head(); ok {
			m.heap = append(m.heap, rc)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
}

// next returns the next tuple of the merge.
func (m *runMerge) next() (tuple, bool) {
	if len(m.heap) == 0 || m.err != nil {
		return tuple{}, false
	}
	top := m.heap[0]
	t, _ := top.head()
	top.taken++
	top.advance()
	if top.err != nil {
		m.err = top.err
		return tuple{}, false
	}
	if _, ok := top.head(); !ok {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
	return t, true
}

func (m *runMerge) less(i, j int) bool {
	a, _ := m.heap[i].head()
	b, _ := m.heap[j].head()
	return a.cmp(b) < 0
}

func (m *runMerge) down(i int) {
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		small := l
		if r := l + 1; r < n && m.less(r, l) {
			small = r
		}
		if !m.less(small, i) {
			return
		}
		m.heap[i], m.heap[small] = m.heap[small], m.heap[i]
		i = small
	}
}

// scanIndex calls fn for every tuple t of index ind with lo <= t <= hi,
// in order. Of POS and OSP it reads only the runs whose filter may hold
// the prefix the range fixes; rc, when not nil, keeps the transaction's
// runs and filters from one call to the next.
func scanIndex(tx *bbolt.Tx, rc *runCache, ind int, lo, hi tuple, fn func(tuple) error) error {
	reuse := rc.take()
	if reuse {
		defer rc.release()
	}
	if ind == idxSPO {
		if !reuse {
			b := tx.Bucket([]byte(indexBuckets[ind]))
			if rc != nil && rc.keep != nil {
				if pc := newPageCursor(rc.file, tx, b); pc != nil {
					pc.keep = rc.keep
					return scanCursor(pc, lo, hi, fn)
				}
			}
			return scanRange(b, lo, hi, fn)
		}
		if rc.spo == nil {
			b := tx.Bucket([]byte(indexBuckets[ind]))
			if pc := newPageCursor(rc.file, tx, b); pc != nil {
				if pc.keep = rc.keep; pc.keep == nil {
					pc.keepPages(inOrderKeep)
				}
				rc.spo = pc
			} else {
				rc.spo = b.Cursor()
			}
		}
		return scanCursor(rc.spo, lo, hi, fn)
	}
	x, err := rc.get(tx.Bucket([]byte(indexBuckets[ind])), ind)
	if err != nil {
		return err
	}
	var m *runMerge
	if reuse {
		m = x.keptMerge(lo, hi)
	} else {
		m = x.merge(lo, hi)
	}
	m.seek(lo)
	for t, ok := m.next(); ok; t, ok = m.next() {
		if t.cmp(hi) > 0 {
			return nil
		}
		if err := fn(t); err != nil {
			if err != SkipNode {
				return err
			}
			if t[0] == 0xFFFFFFFF {
				return nil // no node after it
			}
			m.seek(tuple{t[0] + 1})
		}
	}
	return m.err
}

// SkipNode, returned by the function IncomingIn calls, skips the rest of
// the links into the node it was called for: a window of nodes reads the
// links into each, and a class or a policy has millions.
var SkipNode = errors.New("skip the rest of this node")
