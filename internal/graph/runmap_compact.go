package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"
)

// A RunMap's runs stop merging at finalMapRunBytes, so a large map is
// kept in many runs (85 for a ten-million-citation view's rows), and
// every point read probes the filter of each and seeks in those that may
// hold its key. A Compaction merges every run of one map into a single
// run, over as many write transactions as its size needs, each writing a
// bounded share (CompactStep's maxBytes): bbolt holds what a transaction
// writes in memory until it commits, which is why ingest's merges stop at
// finalMapRunBytes.
//
// The run being written lives in the map's bucket under compactBucket
// (a name no run has, so reads never see it) until the last step moves it
// among the runs, writes its meta and filter, and deletes the runs it
// replaces, in one transaction. A process killed before then leaves the
// map as it was, with a partial run under compactBucket that the next
// compaction of the map deletes first.

// A run of settledMapRunBytes or more is settled: a compaction merges the
// runs written after it and leaves it as it is. Without that, every
// compaction rewrote the whole map, and ingest compacts a view each time
// its rows pass 16 runs (every 800,000 citations or so): 78 s at ten
// million citations, some 13 minutes at a hundred million, for each
// incremental ingest. With it a compaction rewrites at most one merged
// run short of settled, with what was written since, so an entry is
// rewritten a few times in all and a compaction's time does not grow with
// the map; a map ends in one settled run per gigabyte or so (the rows of
// ten million citations take 2.4 GB: one run, as the first compaction
// merges every run, however large). A variable for tests.
var settledMapRunBytes uint64 = 1 << 30

// compactMapSources returns the runs of live (a map's, in name order) a
// compaction merges, and whether it merges them all (it may then drop
// deleted keys): the runs that are not settled, when every one of them
// is newer than every settled run, as compactions leave them; else, for
// a map written otherwise, every run. None when that is one run or none.
func compactMapSources(live []mapRun) (from []mapRun, all bool) {
	settled := func(r mapRun) bool { return r.bytes >= settledMapRunBytes }
	var newest uint64 // the newest settled run's sequence number, plus one
	for _, r := range live {
		if settled(r) {
			newest = max(newest, r.name.seq()+1)
		}
	}
	for _, r := range live {
		if newest > 0 && !settled(r) && r.name.seq() < newest {
			newest = 0 // a run older than a settled one: merge every run
			break
		}
	}
	for _, r := range live {
		if newest == 0 || !settled(r) {
			from = append(from, r)
		}
	}
	if len(from) <= 1 {
		return nil, false
	}
	return from, len(from) == len(live)
}

// compactBucket is the nested bucket of a map under which a compaction
// writes its run: 10 bytes, where a run's name has 9.
const compactBucket = "compacting"

// A Compaction merges the runs a map had when it began into one. Its
// state between steps is in memory: the process that began it finishes
// it, or a later one begins again.
type Compaction struct {
	name   string    // the map's bucket name in its view bucket
	prefix Prefixer  // the map's, for the new run's filter
	runs   []runName // every run of the map when it began, in name order
	from   []runName // those it merges
	drop   bool      // it merges every run: deleted keys go
	out    runName
	n      uint64 // entries the sources hold: sizes the filter
	last   []byte // the last key written; nil before the first
	words  []uint64
	wrote  uint64 // entries written
	bytes  uint64 // bytes of keys and values written
	prev   []byte // the last filter prefix added
	// drained is set once every entry is written: the next step moves
	// the run. Not the step that wrote the last entries: bbolt's
	// MoveBucket moves a bucket as its parent stores it, without the
	// writes of the transaction not yet spilled (v1.5.0), which the move
	// of a run written in the same transaction lost.
	drained bool
	done    bool
}

// ErrCompactionStale is returned by a Compaction's step when the map's
// runs are no longer those it began with.
var ErrCompactionStale = errors.New("run map: the map's runs changed during its compaction")

// BeginCompaction begins merging the runs of the map name in b (opened
// with prefix, as its readers open it) that are not settled into one;
// nil, and no error, when the map is missing or has one such run or none. A partial run of an
// earlier compaction that did not finish is deleted.
func (b *Bucket) BeginCompaction(name string, prefix Prefixer) (*Compaction, error) {
	if !b.w {
		return nil, ErrReadOnly
	}
	mb := b.b.Bucket([]byte(name))
	if mb == nil {
		return nil, nil
	}
	if mb.Bucket([]byte(compactBucket)) != nil {
		if err := b.s.pg.during(func() error { return mb.DeleteBucket([]byte(compactBucket)) }); err != nil {
			return nil, fmt.Errorf("run map %s: delete an unfinished compaction: %w", name, err)
		}
	}
	m, err := b.Runs(name, prefix, false)
	if err != nil || m == nil {
		return nil, err
	}
	if len(m.mem) > 0 {
		return nil, fmt.Errorf("run map %s: compaction in a transaction that wrote to it", name)
	}
	live := m.live()
	from, all := compactMapSources(live)
	if len(from) == 0 {
		return nil, nil
	}
	c := &Compaction{name: name, prefix: prefix, drop: all}
	level, next := 0, uint64(0)
	for _, r := range live {
		c.runs = append(c.runs, r.name)
		level = max(level, r.name.level()+1)
		next = max(next, r.name.seq()+1)
	}
	for _, r := range from {
		c.from = append(c.from, r.name)
		c.n += r.n
	}
	if level > 255 {
		level = 255
	}
	c.out = newRunName(level, next)
	if prefix != nil {
		c.words = make([]uint64, runFilterSize(c.n)/8)
	}
	return c, nil
}

// Runs returns how many runs the compaction merges.
func (c *Compaction) Runs() int { return len(c.from) }

// Entries returns how many entries the compaction has written so far.
func (c *Compaction) Entries() uint64 { return c.wrote }

// Step writes, in the write transaction of b (the bucket BeginCompaction
// was given, in this transaction), the next entries of the merge until
// about maxBytes of keys and values are written or the runs are
// exhausted. The step after the last entries finishes: the new run
// replaces the runs it merged. It returns true once finished. A key's
// newest entry is kept; deleted keys are dropped when every run of the
// map is merged, and kept as deletions when settled runs older than the
// merged ones may hold them.
func (c *Compaction) Step(b *Bucket, maxBytes uint64) (done bool, err error) {
	if c.done {
		return true, nil
	}
	if !b.w {
		return false, ErrReadOnly
	}
	g := b.s.guard("compact", &err)
	g.name = true
	defer g.done()
	mb := b.b.Bucket([]byte(c.name))
	if mb == nil {
		return false, fmt.Errorf("%w: map %s is gone", ErrCompactionStale, c.name)
	}
	if err := c.sameRuns(mb); err != nil {
		return false, err
	}
	stage, err := mb.CreateBucketIfNotExists([]byte(compactBucket))
	if err != nil {
		return false, fmt.Errorf("run map %s: compaction bucket: %w", c.name, err)
	}
	if c.drained {
		return true, c.finish(b, mb, stage)
	}
	out, err := stage.CreateBucketIfNotExists(c.out[:])
	if err != nil {
		return false, fmt.Errorf("run map %s: compaction run: %w", c.name, err)
	}
	out.FillPercent = 1 // written in key order, never added to
	mg := &mapMerge{drop: c.drop}
	var from []byte
	if c.last != nil {
		from = append(slices.Clone(c.last), 0) // the first key after it
	}
	for _, n := range c.from {
		mg.add(mb.Bucket(n[:]).Cursor(), n, from)
	}
	mg.init()
	var written uint64
	for reads := 0; ; reads++ {
		if reads%64 == 63 {
			b.s.pg.read()
		}
		if written >= maxBytes && maxBytes > 0 {
			return false, nil
		}
		k, v, ok, err := mg.next(false)
		if err != nil {
			return false, fmt.Errorf("run map %s: compaction: %w", c.name, err)
		}
		if !ok {
			c.drained = true
			return false, nil
		}
		if c.words != nil {
			if p := c.prefix(k); p > 0 && p <= len(k) && (c.prev == nil || !bytes.Equal(c.prev, k[:p])) {
				addFilterHash(c.words, keyHash(k[:p]))
				c.prev = append(c.prev[:0], k[:p]...)
			}
		}
		if err := out.Put(slices.Clone(k), slices.Clone(v)); err != nil {
			return false, fmt.Errorf("run map %s: compaction: %w", c.name, err)
		}
		c.last = append(c.last[:0], k...)
		c.wrote++
		c.bytes += uint64(len(k) + len(v))
		written += uint64(len(k) + len(v))
	}
}

// sameRuns checks that the map's runs are the ones the compaction began
// with.
func (c *Compaction) sameRuns(mb *bbolt.Bucket) error {
	var now []runName
	cur := mb.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if v == nil && len(k) == len(runName{}) {
			now = append(now, runName(k))
		}
	}
	if !slices.Equal(now, c.runs) { // both in byte order
		return fmt.Errorf("%w: map %s holds %d runs, the compaction began with %d", ErrCompactionStale, c.name, len(now), len(c.runs))
	}
	return nil
}

// finish moves the written run among the map's runs with its meta, and
// deletes the runs it replaces and the compaction's bucket.
func (c *Compaction) finish(b *Bucket, mb, stage *bbolt.Bucket) error {
	if err := stage.MoveBucket(c.out[:], mb); err != nil {
		return fmt.Errorf("run map %s: compaction: move the new run: %w", c.name, err)
	}
	meta := binary.BigEndian.AppendUint64(nil, c.wrote)
	meta = binary.BigEndian.AppendUint64(meta, c.bytes)
	for _, w := range c.words {
		meta = binary.LittleEndian.AppendUint64(meta, w)
	}
	if err := mb.Put(append([]byte{mapMetaByte}, c.out[:]...), meta); err != nil {
		return err
	}
	for _, n := range c.from {
		if err := b.s.pg.during(func() error { return mb.DeleteBucket(n[:]) }); err != nil {
			return fmt.Errorf("run map %s: compaction: delete run %x: %w", c.name, n, err)
		}
		if err := mb.Delete(append([]byte{mapMetaByte}, n[:]...)); err != nil {
			return err
		}
	}
	if err := mb.DeleteBucket([]byte(compactBucket)); err != nil {
		return fmt.Errorf("run map %s: compaction: delete its bucket: %w", c.name, err)
	}
	c.done = true
	return nil
}
