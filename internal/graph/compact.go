package graph

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"go.etcd.io/bbolt"
)

// Ingest leaves POS and OSP as dozens of final runs (runs.go: a run of
// finalRunTuples or more is not merged again, so that a merge's output,
// held in memory until its commit, stays small): 79 of each at ten
// million citations, and ten times as many at a hundred million. A point
// lookup probes the filter of every one of them. In memory that is a few
// hundred nanoseconds a run; from a cold page cache each probe is a
// random read of the disk, and the lookups of one lineage command read
// some 600 filter blocks and run roots of POS alone (docs/SCALE.md).
//
// CompactIndexes merges the runs of an index into as few as it can (one
// per compactRunTuples), in bounded memory and in many transactions, and
// every one of them leaves a valid file that a reader, `check`, or a
// build that predates compaction reads as it would the uncompacted one:
//
//   - the output is a run of the index from the first transaction on,
//     written in key order, and holds the tuples below a boundary that
//     each transaction moves up;
//   - each transaction takes the next compactBatch tuples of the merged
//     sources, appends them to the output, and deletes them from the
//     front of their sources (whole chunks, and the one chunk that holds
//     the boundary rewritten from it), updating the sources' counts: the
//     runs stay disjoint and their union is the index;
//   - the output has no filter until the transaction after its last
//     batch, and a source loses its filter in the first transaction that
//     takes from it: a run without one is read by every lookup, as those
//     of format version 3 are. (Why not keep the sources' filters, which
//     would still hold every prefix they hold: bbolt writes a changed
//     leaf whole, and the leaf with a run's count holds its filter, some
//     megabytes; updating the counts of 85 sources copied 290 MB of
//     filters a transaction at ten million citations, mapped them and
//     grew the file by the copies.)
//
// An interrupted compaction so leaves the index answering as before
// (lookups seek in the runs without filters), and the next compaction
// takes the output so far as one more source. Nothing is lost either way: a tuple is deleted from its
// source in the transaction that writes it to the output.
//
// Why the merged run keeps a filter at all, when it is the only run to
// seek: many lookups of a lineage ask for what the file does not hold (a
// node no quad points at), and the filter answers those from one block
// where a seek walks the B-tree. At ten million citations, in process,
// lineage p99 was 2.1 ms with the filter and 4.9 ms without
// (bench/queryprof); from a cold page cache the two were alike.

// compactRunTuples is the most tuples a run that a compaction writes
// holds, and a run of this many tuples or more with its filter is not
// merged again: the filter of the run being written is held in memory
// (1.25 bytes a tuple, and as much again while bbolt writes it), so this
// bounds the memory of a compaction, 168 MB of filter, whatever the size
// of the index. Ten million citations make 218 million tuples of each
// index: two runs. A variable for tests.
var compactRunTuples uint64 = 1 << 27

// compactBatch is how many tuples one transaction of a compaction moves:
// some 40 MB of pages that bbolt holds until the commit (the merged run's
// and the sources' it rewrites). A variable for tests.
var compactBatch uint64 = 2 << 20

// IndexCompaction is what CompactIndexes did to one index.
type IndexCompaction struct {
	Index        string // "pos" or "osp"
	RunsBefore   int    // runs of the index before
	RunsAfter    int    // and after
	Tuples       uint64 // tuples moved into merged runs
	Transactions int    // write transactions the merge took
}

// CompactIndexes merges the runs of POS and OSP into as few as it can,
// one per compactRunTuples, so that a point lookup probes one or two
// filters and seeks one B-tree instead of dozens (see above). Runs of
// that size with their filter are settled and left as they are, and so
// is an index whose runs are settled but one. It takes about as long as
// reading both indexes, needs free disk for a few batches (the output
// reuses the pages its sources give up) and holds the filter of the run
// it writes in memory. Canceling ctx stops it between two transactions;
// what they committed stays, and a later call finishes the merge.
//
// Progress is reported to the function of WithProgress, if any.
func (s *Store) CompactIndexes(ctx context.Context) (done []IndexCompaction, err error) {
	fail := func(err error) ([]IndexCompaction, error) {
		return done, &Error{Op: "compact indexes", Path: s.path, Err: err}
	}
	if s.readOnly {
		return fail(ErrReadOnly)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.guard("compact indexes", &err)
	defer g.done()
	if s.closed {
		return fail(ErrClosed)
	}
	// The writer's cache of the runs is keyed by transaction: the next
	// Add lists them anew. Said here as well, in case that ever changes.
	defer func() { s.qruns.ok = false }()
	for _, ind := range []int{idxPOS, idxOSP} {
		c, err := s.compactIndex(ctx, ind)
		done = append(done, c)
		if err != nil {
			if ctx.Err() != nil && err == ctx.Err() {
				return done, err
			}
			return fail(err)
		}
	}
	return done, nil
}

// compactIndex merges the runs of index ind that are not settled into
// runs of compactRunTuples each, the last one smaller.
func (s *Store) compactIndex(ctx context.Context, ind int) (IndexCompaction, error) {
	name := indexBuckets[ind]
	c := IndexCompaction{Index: name}
	var sources []quadRun
	var total uint64
	var level int
	var seq uint64 // the last run's
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte(name))
		if b == nil {
			return corruptf("bucket %q is missing", name)
		}
		runs, err := listQuadRuns(b)
		if err != nil {
			return err
		}
		var all uint64
		for _, r := range runs {
			all += r.n
			level, seq = max(level, r.level()), max(seq, r.seq())
		}
		if all > uint64(tx.Size())/3 { // a tuple takes at least 3 bytes
			return corruptf("index %s: its runs count %d tuples, more than the file can hold", name, all)
		}
		sources = compactSources(b, runs)
		for _, r := range sources {
			total += r.n
		}
		c.RunsBefore, c.RunsAfter = len(runs), len(runs)
		return nil
	})
	if err != nil || len(sources) == 0 {
		return c, err
	}
	c.RunsAfter -= len(sources)
	part := "index " + name + ": runs merged"
	ReportProgress(ctx, Progress{Part: part, Unit: "tuples", Total: int64(total)})
	var mem arena
	var enc []byte
	var out quadRun // the run being written, when out.name is set
	var filter *filterBuilder
	for len(sources) > 0 {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		var size int64
		var left []quadRun
		var moved uint64
		var ended bool // out is complete
		err := s.update(func(tx *bbolt.Tx) error {
			s.pg.begin(tx.Size())
			b := tx.Bucket([]byte(name))
			if b == nil {
				return corruptf("bucket %q is missing", name)
			}
			var ob *bbolt.Bucket
			if out.name == (runName{}) {
				out = quadRun{name: newRunName(min(level+1, 255), seq+1)}
				var err error
				if ob, err = b.CreateBucket(out.name[:]); err != nil {
					return fmt.Errorf("create run %x: %w", out.name, err)
				}
				filter = newFilterBuilder(ind, min(total-c.Tuples, compactRunTuples))
			} else if ob = b.Bucket(out.name[:]); ob == nil {
				return corruptf("index %s lost run %x while it was being written", name, out.name)
			}
			ob.FillPercent = 1
			m := &runMerge{}
			for _, r := range sources {
				rb := b.Bucket(r.name[:])
				if rb == nil {
					return corruptf("index %s lost run %x while it was being merged", name, r.name)
				}
				m.all = append(m.all, &runCursor{c: rb.Cursor(), pg: s.pg})
			}
			m.seek(tuple{})
			app := chunkAppender{b: ob, mem: &mem, enc: enc}
			for batch := min(compactBatch, compactRunTuples-out.n); moved < batch; moved++ {
				t, ok := m.next()
				if !ok {
					break
				}
				filter.add(t)
				if err := app.add(t); err != nil {
					return err
				}
			}
			if m.err != nil {
				return fmt.Errorf("index %s: %w", name, m.err)
			}
			if err := app.flush(); err != nil {
				return err
			}
			enc = app.enc
			// The sources lose what was moved: every tuple before the
			// merge's next one.
			bound, more := m.peek()
			left = left[:0]
			for i, r := range sources {
				rc := m.all[i]
				if rc.taken > r.n {
					return corruptf("index %s run %x gave %d tuples, its count says %d", name, r.name, rc.taken, r.n)
				}
				r.n -= rc.taken
				if r.n == 0 || !more {
					if r.n != 0 {
						return corruptf("index %s run %x: %d tuples more than the merge read", name, r.name, r.n)
					}
					if err := deleteRuns(b, []runName{r.name}, s.pg); err != nil {
						return err
					}
					continue
				}
				left = append(left, r)
				if rc.taken == 0 {
					continue
				}
				rb := b.Bucket(r.name[:])
				if err := trimRun(rb, bound, &mem); err != nil {
					return fmt.Errorf("index %s run %x: %w", name, r.name, err)
				}
				if rb.Get([]byte(runFilterKey)) != nil {
					if err := rb.Delete([]byte(runFilterKey)); err != nil {
						return err
					}
				}
				if err := putCount(rb, r.n, &mem); err != nil {
					return err
				}
			}
			out.n += moved
			if err := putCount(ob, out.n, &mem); err != nil {
				return err
			}
			ended = !more || out.n >= compactRunTuples
			size = tx.Size()
			return nil
		})
		mem.reset()
		if err == nil && ended {
			// The filter goes in a transaction of its own: bbolt copies it
			// at the commit, and the two copies of a 168 MB filter on top
			// of a batch's pages made the compaction's peak. A crash in
			// between leaves the run without a filter, merged again by
			// the next compaction.
			err = s.update(func(tx *bbolt.Tx) error {
				ob := tx.Bucket([]byte(name)).Bucket(out.name[:])
				if ob == nil {
					return corruptf("index %s lost run %x while it was being written", name, out.name)
				}
				return ob.Put([]byte(runFilterKey), filter.bytes())
			})
		}
		if err != nil {
			return c, err
		}
		s.pg.check(size)
		sources = slices.Clone(left)
		c.Transactions++
		c.Tuples += moved
		if ended {
			seq = out.name.seq()
			out, filter = quadRun{}, nil
			c.RunsAfter++
		}
		ReportProgress(ctx, Progress{Part: part, Unit: "tuples", Done: int64(c.Tuples), Total: int64(total)})
	}
	return c, nil
}

// compactSources returns the runs of index bucket b that a compaction
// merges: those that are not settled (compactRunTuples or more, with a
// filter), none when only one is left and it has its filter.
func compactSources(b *bbolt.Bucket, runs []quadRun) []quadRun {
	var sources []quadRun
	unfiltered := false
	for _, r := range runs {
		filtered := b.Bucket(r.name[:]).Get([]byte(runFilterKey)) != nil
		if r.n >= compactRunTuples && filtered {
			continue
		}
		sources = append(sources, r)
		unfiltered = unfiltered || !filtered
	}
	if len(sources) == 1 && !unfiltered {
		return nil
	}
	return sources
}

// RunsToCompact returns how many runs CompactIndexes would merge in
// whichever of POS and OSP has more: what a writer looks at to decide
// whether a compaction is worth its time. It reads one page per run.
func (s *Store) RunsToCompact() (n int, err error) {
	err = s.view("count runs", func(tx *bbolt.Tx) error {
		for _, ind := range []int{idxPOS, idxOSP} {
			b := tx.Bucket([]byte(indexBuckets[ind]))
			if b == nil {
				return corruptf("bucket %q is missing", indexBuckets[ind])
			}
			runs, err := listQuadRuns(b)
			if err != nil {
				return err
			}
			n = max(n, len(compactSources(b, runs)))
		}
		return nil
	})
	return n, err
}

// putCount writes n as the tuple count of run b.
func putCount(b *bbolt.Bucket, n uint64, mem *arena) error {
	cnt := mem.alloc(8)
	binary.BigEndian.PutUint64(cnt, n)
	return b.Put([]byte(runCountKey), cnt)
}

// chunkAppender writes tuples, in order, as chunks at the end of a run.
type chunkAppender struct {
	b           *bbolt.Bucket
	mem         *arena // what bbolt holds until the commit
	enc         []byte // scratch: the chunk being encoded
	first, prev tuple
	open        bool
}

func (a *chunkAppender) add(t tuple) error {
	if !a.open {
		a.first, a.enc, a.open = t, a.enc[:0], true
	} else {
		a.enc = appendEntry(a.enc, a.prev, t)
	}
	a.prev = t
	if len(a.enc) >= chunkTarget {
		return a.flush()
	}
	return nil
}

// flush writes the chunk being encoded, if any.
func (a *chunkAppender) flush() error {
	if !a.open {
		return nil
	}
	a.open = false
	k := a.mem.alloc(keySize)
	putKey(k, a.first)
	return a.b.Put(k, a.mem.copy(a.enc))
}

// trimRun deletes from run b its tuples before bound: the chunks wholly
// before it, and the chunk that holds it or tuples past it is written
// again from its first tuple not before bound.
func trimRun(b *bbolt.Bucket, bound tuple, mem *arena) error {
	var zero [keySize]byte
	c := b.Cursor()
	var dels [][]byte
	var keep []tuple
	k, v := c.Seek(zero[:])
	for k != nil && keyTuple(k).cmp(bound) < 0 {
		if len(k) != keySize {
			return fmt.Errorf("%w: key of %d bytes", errBadChunk, len(k))
		}
		nk, nv := c.Next()
		dels = append(dels, k)
		if nk != nil && keyTuple(nk).cmp(bound) <= 0 {
			k, v = nk, nv // every tuple of k's chunk is before nk
			continue
		}
		ts, err := decodeChunk(nil, k, v)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if t.cmp(bound) >= 0 {
				keep = append(keep, t)
			}
		}
		break
	}
	for _, k := range dels {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	if len(keep) == 0 {
		return nil
	}
	var enc []byte
	for i := 1; i < len(keep); i++ {
		enc = appendEntry(enc, keep[i-1], keep[i])
	}
	key := mem.alloc(keySize)
	putKey(key, keep[0])
	return b.Put(key, mem.copy(enc))
}

// peek returns the tuple next would return; ok is false at the end.
func (m *runMerge) peek() (tuple, bool) {
	if len(m.heap) == 0 || m.err != nil {
		return tuple{}, false
	}
	return m.heap[0].head()
}

// bytes returns the filter in its stored form, in place: the builder is
// not to be used after.
func (b *filterBuilder) bytes() []byte {
	if len(b.words) == 0 {
		return nil
	}
	out := unsafe.Slice((*byte)(unsafe.Pointer(&b.words[0])), len(b.words)*8)
	for i, w := range b.words {
		binary.LittleEndian.PutUint64(out[i*8:], w)
	}
	return out
}
