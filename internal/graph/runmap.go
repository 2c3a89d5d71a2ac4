package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"

	"go.etcd.io/bbolt"
)

// A RunMap is an ordered map of byte strings kept in a bucket of a view
// as sorted runs, as the POS and OSP indexes are (runs.go), for the same
// reason: a grouping view's rows and postings land at random places of
// their key order. Put into one B-tree each, a batch of a large ingest
// rewrote a 4 KiB page per row in every tree it went in, and once the view
// outgrew the mapped pages the ingest slowed to about 1 MB of file a
// second at ten million citations. A RunMap instead keeps a write
// transaction's puts and deletes in memory and writes them, when the
// transaction's callback returns, as one new run (a nested bucket written
// in key order, pages packed full); when fanout runs of one level pile up
// they are merged into one run of the next, until a run reaches
// finalRunBytes, after which it is not merged again (a merge's output
// stays in bbolt's memory until the commit).
//
// Unlike a quad index, a map's key can be written again (a row rewritten
// by resolve) or deleted (a posting a rewritten row lost), so runs can
// hold several versions of a key. Every entry carries the sequence number
// of the write that made it, and a read takes the entry with the highest:
// runs are not ordered by age once final runs stop merging, so the run an
// entry sits in does not say how new it is. A delete is an entry too (a
// tombstone), dropped by a merge only when the merge takes every run of
// the map, as no older version can then remain.
//
// Layout, in the map's bucket:
//
//	level (1 byte) + run sequence (8 bytes)   a run: nested bucket of
//	                                          key -> uvarint(seq<<1|deleted) + value
//	'm' + level + run sequence                the run's meta: entries (8 bytes),
//	                                          bytes (8 bytes), then its filter
//	"seq"                                     the last write's sequence (8 bytes)
//
// The filter of a run is a blocked Bloom filter (runfilter.go) of the
// prefixes of its keys that the map's Prefixer names (for a grouping
// view's rows, the key before the citation id): a read of a prefix, or a
// Get, skips the runs whose filter lacks it. A map opened without a
// Prefixer has no filters, and every read seeks in every run.
type RunMap struct {
	b      *bbolt.Bucket
	s      *Store
	dmg    *damage
	wr     *Writer // nil in a read transaction
	prefix Prefixer
	path   string // the bucket's path in its view (Bucket.path)
	runs   []mapRun
	mem    map[string]memEntry // the transaction's writes
	seq    uint64              // the last stored write's sequence
	// blocks is set in a read transaction of a ReadOnce Store
	// (readonce.go): every read goes by pread, the filters' blocks too.
	blocks *fileBlocks
}

// A Prefixer returns the length of the prefix of k that a map's run
// filters hold, 0 for none (k is then in no filter and every read of it
// seeks in every run). It must give the same answer for a key in every
// build that writes the map: the filters are stored.
type Prefixer func(k []byte) int

type memEntry struct {
	v   []byte
	del bool
}

type mapRun struct {
	name    runName
	n       uint64 // entries
	bytes   uint64 // bytes of keys and values
	filter  runFilter
	b       *bbolt.Bucket
	removed bool
}

// finalMapRunBytes is the size from which a map's run is no longer
// merged: a merge then writes at most fanout times this much in one
// transaction, which bbolt holds about three times over until the commit
// (its nodes, copies of keys and values, then the pages written). At
// 16 MiB a 10M ingest's transactions holding two such merges (a map's
// and a quad index's) reached 1.13 GiB of peak RSS. A variable for tests
// only.
var finalMapRunBytes uint64 = 8 << 20

// bigMapMerge is the size from which a map's merge counts against the
// transaction's merge budget, which the quad indexes' merges share: one
// big merge per transaction. A variable for tests only.
var bigMapMerge uint64 = 4 << 20

const (
	mapSeqKey   = "seq"
	mapMetaByte = 'm'
	mapMetaSize = 16
)

// ErrMapKey is returned by RunMap.Put and Delete for an empty key.
var ErrMapKey = errors.New("run map: empty key")

// Runs returns the RunMap in the nested bucket name, creating it when
// create is set (in a write transaction); nil when it is missing. In a
// write transaction, asking twice for the same map returns the same
// RunMap, whose writes are written as a run when the transaction's
// callback returns.
func (b *Bucket) Runs(name string, prefix Prefixer, create bool) (*RunMap, error) {
	var s *bbolt.Bucket
	if !guarded(b.s, b.dmg, func() { s = b.b.Bucket([]byte(name)) }) {
		return nil, b.dmg.get()
	}
	if s == nil {
		if !create {
			return nil, nil
		}
		if !b.w {
			return nil, ErrReadOnly
		}
		var err error
		if s, err = b.b.CreateBucket([]byte(name)); err != nil {
			return nil, err
		}
	}
	if b.wr != nil {
		if m, ok := b.wr.maps[s]; ok {
			return m, nil
		}
	}
	m := &RunMap{b: s, s: b.s, dmg: b.dmg, wr: b.wr, prefix: prefix, path: b.path + "/" + name}
	if b.wr == nil && !b.w {
		m.blocks = b.s.blocks(s.Tx())
	}
	if !guarded(b.s, b.dmg, func() { m.load() }) {
		return nil, b.dmg.get()
	}
	if err := b.dmg.get(); err != nil {
		return nil, err
	}
	if b.wr != nil {
		m.mem = map[string]memEntry{}
		if b.wr.maps == nil {
			b.wr.maps = map[*bbolt.Bucket]*RunMap{}
		}
		b.wr.maps[s] = m
		b.wr.mapOrder = append(b.wr.mapOrder, m)
	}
	return m, nil
}

// load lists the map's runs and its sequence.
func (m *RunMap) load() {
	if v := m.b.Get([]byte(mapSeqKey)); len(v) == 8 {
		m.seq = binary.BigEndian.Uint64(v)
	}
	c := m.b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || len(k) != len(runName{}) {
			continue
		}
		r := mapRun{name: runName(k), b: m.b.Bucket(k)}
		meta := m.b.Get(append([]byte{mapMetaByte}, k...))
		if len(meta) < mapMetaSize || r.b == nil {
			m.dmg.set(fmt.Errorf("%w: run %x of a view map has no meta", ErrCorrupt, k))
			return
		}
		r.n = binary.BigEndian.Uint64(meta)
		r.bytes = binary.BigEndian.Uint64(meta[8:])
		if f := meta[mapMetaSize:]; validRunFilter(f) {
			r.filter = runFilter(f)
		}
		m.runs = append(m.runs, r)
	}
}

// keyHash is the hash a filter holds for a key prefix p.
func keyHash(p []byte) uint64 {
	h := fnv.New64a()
	h.Write(p)
	return mix64(h.Sum64())
}

// Put sets the value of k.
func (m *RunMap) Put(k, v []byte) error {
	if m.wr == nil {
		return ErrReadOnly
	}
	if len(k) == 0 {
		return ErrMapKey
	}
	m.mem[string(k)] = memEntry{v: slices.Clone(v)}
	return nil
}

// Delete removes k.
func (m *RunMap) Delete(k []byte) error {
	if m.wr == nil {
		return ErrReadOnly
	}
	if len(k) == 0 {
		return ErrMapKey
	}
	m.mem[string(k)] = memEntry{del: true}
	return nil
}

// decodeMapValue splits a stored value into its sequence, deletion flag
// and value.
func decodeMapValue(v []byte) (seq uint64, del bool, val []byte, ok bool) {
	x, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, false, nil, false
	}
	return x >> 1, x&1 == 1, v[n:], true
}

// mayHold reports whether run r may hold keys with the filtered prefix p
// (hashed as h); has says whether a hash is known.
func (r *mapRun) mayHold(h uint64, has bool, fb *fileBlocks) bool {
	return !has || r.filter == nil || r.filter.hasIn(fb, h)
}

// Get returns the value of k, nil if there is none.
func (m *RunMap) Get(k []byte) []byte {
	if m.mem != nil {
		if e, ok := m.mem[string(k)]; ok {
			if e.del {
				return nil
			}
			return e.v
		}
	}
	h, has := m.hashOf(k, false)
	var best []byte
	var bestSeq uint64
	found := false
	if !guarded(m.s, m.dmg, func() {
		for i := range m.runs {
			r := &m.runs[i]
			if r.removed || !r.mayHold(h, has, m.blocks) {
				continue
			}
			m.countRead()
			v := m.get(r.b, k)
			if v == nil {
				continue
			}
			seq, del, val, ok := decodeMapValue(v)
			if !ok {
				m.dmg.set(fmt.Errorf("%w: view map run %x: entry %q does not decode", ErrCorrupt, r.name, k))
				return
			}
			if !found || seq > bestSeq {
				found, bestSeq = true, seq
				best = nil
				if !del {
					best = val
					if best == nil {
						best = []byte{}
					}
				}
			}
		}
	}) {
		return nil
	}
	return best
}

// hashOf returns the filter hash of k's prefix; whole says k must be the
// prefix itself (a prefix read), not a key that starts with it.
func (m *RunMap) hashOf(k []byte, whole bool) (uint64, bool) {
	if m.prefix == nil {
		return 0, false
	}
	n := m.prefix(k)
	if n <= 0 || n > len(k) || whole && n != len(k) {
		return 0, false
	}
	return keyHash(k[:n]), true
}

func (m *RunMap) countRead() {
	if m.wr != nil {
		m.s.pg.read()
	}
}

// Ascend calls fn for each key from the first at or after from, in byte
// order, until fn returns false or an error. A walk from the start (from
// nil) in a read transaction reads the runs by pread (walkCursor).
func (m *RunMap) Ascend(from []byte, fn func(k, v []byte) (bool, error)) error {
	return m.ascend(from, nil, fn)
}

// Prefix calls fn for each key that starts with p, in byte order, until
// fn returns false or an error.
func (m *RunMap) Prefix(p []byte, fn func(k, v []byte) (bool, error)) error {
	return m.ascend(p, p, fn)
}

func (m *RunMap) ascend(from, prefix []byte, fn func(k, v []byte) (bool, error)) (err error) {
	g := m.s.guard("read", &err)
	g.name = true
	defer g.done()
	var h uint64
	var has bool
	if prefix != nil {
		h, has = m.hashOf(prefix, true)
	}
	mg := &mapMerge{}
	for i := range m.runs {
		r := &m.runs[i]
		if r.removed || !r.mayHold(h, has, m.blocks) {
			continue
		}
		m.countRead()
		mg.add(m.walkCursor(r.b, from == nil && prefix == nil), r.name, from)
	}
	if len(m.mem) > 0 {
		mg.addMem(m.mem, from, prefix)
	}
	mg.init()
	for {
		k, v, ok, err := mg.next(true)
		if err != nil {
			return err
		}
		if !ok || prefix != nil && !bytes.HasPrefix(k, prefix) {
			return nil
		}
		var more bool
		if cerr := g.call(func() (err error) { more, err = fn(k, v); return err }); cerr != nil || !more {
			return cerr
		}
	}
}

// mapMerge merges cursors over runs (and the transaction's writes) into
// one ordered stream, taking for each key the entry of the highest
// sequence.
type mapMerge struct {
	heads []*mapHead
	drop  bool // drop deleted keys (a read, or a merge of every run)
	k, v  []byte
	err   error // what ended a head's walk early (a pageCursor's)
}

type mapHead struct {
	c    kvCursor
	run  runName
	mem  [][]byte // sorted keys of the transaction's writes, when c is nil
	memv map[string]memEntry
	k, v []byte
	ok   bool
}

func (h *mapHead) seek(from []byte) {
	if h.c != nil {
		h.k, h.v = h.c.Seek(from)
		h.skipBuckets()
		return
	}
	i := sort.Search(len(h.mem), func(i int) bool { return bytes.Compare(h.mem[i], from) >= 0 })
	h.mem = h.mem[i:]
	h.loadMem()
}

func (h *mapHead) skipBuckets() {
	for h.k != nil && h.v == nil {
		h.k, h.v = h.c.Next()
	}
	h.ok = h.k != nil
}

func (h *mapHead) loadMem() {
	if len(h.mem) == 0 {
		h.ok = false
		return
	}
	h.k = h.mem[0]
	e := h.memv[string(h.k)]
	// The transaction's writes are newer than every stored entry.
	x := uint64(1<<62) << 1
	if e.del {
		x |= 1
	}
	h.v = append(binary.AppendUvarint(nil, x), e.v...)
	h.ok = true
}

func (h *mapHead) advance() {
	if h.c != nil {
		h.k, h.v = h.c.Next()
		h.skipBuckets()
		return
	}
	h.mem = h.mem[1:]
	h.loadMem()
}

func (mg *mapMerge) add(c kvCursor, run runName, from []byte) {
	h := &mapHead{c: c, run: run}
	h.seek(from)
	if h.ok {
		mg.heads = append(mg.heads, h)
	} else if err := cursorErr(c); err != nil && mg.err == nil {
		mg.err = err
	}
}

// walkCursor returns a cursor over the run b: for a walk of the whole
// map in a read transaction (whole), a pageCursor, which reads the run's
// pages by pread (pread.go: a run is written by one transaction, but
// bbolt places its pages where its freelist has room); otherwise bbolt's,
// whose mapped pages the next read may touch again.
func (m *RunMap) walkCursor(b *bbolt.Bucket, whole bool) kvCursor {
	if m.blocks != nil {
		return m.s.pointCursor(b.Tx(), b)
	}
	if whole && m.wr == nil {
		return m.s.readCursor(b.Tx(), b)
	}
	return b.Cursor()
}

// get returns the value of k in run b: by pread in a read of a ReadOnce
// Store (a copy then, since the cursor's page goes with it).
func (m *RunMap) get(b *bbolt.Bucket, k []byte) []byte {
	if m.blocks == nil {
		return b.Get(k)
	}
	c := m.s.pointCursor(b.Tx(), b)
	ck, v := c.Seek(k)
	if !bytes.Equal(ck, k) {
		mustWalk(c)
		return nil
	}
	return bytes.Clone(v)
}

func (mg *mapMerge) addMem(mem map[string]memEntry, from, prefix []byte) {
	keys := make([][]byte, 0, len(mem))
	for k := range mem {
		if prefix == nil || bytes.HasPrefix([]byte(k), prefix) {
			keys = append(keys, []byte(k))
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	h := &mapHead{mem: keys, memv: mem}
	h.seek(from)
	if h.ok {
		mg.heads = append(mg.heads, h)
	}
}

func (mg *mapMerge) less(i, j int) bool {
	return bytes.Compare(mg.heads[i].k, mg.heads[j].k) < 0
}

func (mg *mapMerge) init() {
	for i := len(mg.heads)/2 - 1; i >= 0; i-- {
		mg.down(i)
	}
}

func (mg *mapMerge) down(i int) {
	n := len(mg.heads)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && mg.less(r, l) {
			j = r
		}
		if !mg.less(j, i) {
			return
		}
		mg.heads[i], mg.heads[j] = mg.heads[j], mg.heads[i]
		i = j
	}
}

// pop advances the smallest head and restores the heap.
func (mg *mapMerge) pop() {
	h := mg.heads[0]
	h.advance()
	if !h.ok {
		if h.c != nil && mg.err == nil {
			mg.err = cursorErr(h.c)
		}
		last := len(mg.heads) - 1
		mg.heads[0] = mg.heads[last]
		mg.heads = mg.heads[:last]
	}
	mg.down(0)
}

// next returns the next key and its newest entry: with values decoded
// (decode; a read), deleted keys are skipped and v is the value; without
// (a merge), v is the stored entry and deleted keys are skipped only when
// mg.drop is set. The slices are valid until the next call.
func (mg *mapMerge) next(decode bool) (k, v []byte, ok bool, err error) {
	for len(mg.heads) > 0 && mg.err == nil {
		// Copied: a pageCursor's keys and values last until it moves.
		k = append(mg.k[:0], mg.heads[0].k...)
		mg.k = k
		var best []byte
		var bestSeq uint64
		var bestDel bool
		first := true
		for len(mg.heads) > 0 && bytes.Equal(mg.heads[0].k, k) {
			h := mg.heads[0]
			seq, del, _, ok := decodeMapValue(h.v)
			if !ok {
				return nil, nil, false, fmt.Errorf("%w: view map run %x: entry %q does not decode", ErrCorrupt, h.run, h.k)
			}
			if first || seq > bestSeq {
				mg.v = append(mg.v[:0], h.v...)
				first, bestSeq, bestDel, best = false, seq, del, mg.v
			}
			mg.pop()
		}
		if bestDel && (decode || mg.drop) {
			continue
		}
		if decode {
			_, _, val, _ := decodeMapValue(best)
			if val == nil {
				val = []byte{}
			}
			return k, val, true, nil
		}
		return k, best, true, nil
	}
	return nil, nil, false, mg.err
}

// flush writes the transaction's writes as a new run and merges runs
// while a level has fanout or more that are not final. The writer calls
// it when the transaction's callback has returned.
func (m *RunMap) flush() error {
	if len(m.mem) == 0 {
		return nil
	}
	m.seq++
	seq := m.seq
	keys := make([]string, 0, len(m.mem))
	for k := range m.mem {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var nextRun uint64
	for _, r := range m.runs {
		nextRun = max(nextRun, r.name.seq()+1)
	}
	i := 0
	var x []byte
	r, err := m.write(0, nextRun, uint64(len(keys)), func() ([]byte, []byte, bool) {
		if i == len(keys) {
			return nil, nil, false
		}
		e := m.mem[keys[i]]
		v := seq << 1
		if e.del {
			v |= 1
		}
		x = append(binary.AppendUvarint(x[:0], v), e.v...)
		i++
		return []byte(keys[i-1]), x, true
	})
	if err != nil {
		return err
	}
	m.mem = map[string]memEntry{}
	if err := m.b.Put([]byte(mapSeqKey), binary.BigEndian.AppendUint64(nil, seq)); err != nil {
		return err
	}
	m.runs = append(m.live(), r)
	_, err = compactRuns(m.live(), nextRun+1, m.wr.budget,
		func(r mapRun) runName { return r.name },
		func(r mapRun) bool { return r.bytes < finalMapRunBytes },
		func(same []mapRun) uint64 {
			var n uint64
			for _, r := range same {
				n += r.bytes
			}
			// Only a merge of bigMapMerge bytes or more counts
			// against the budget.
			if n >= bigMapMerge {
				return max(n, bigMerge)
			}
			return 0
		},
		func(same []mapRun, level int, seq uint64) (mapRun, error) {
			return m.merge(same, level, seq, len(same) == len(m.live()))
		})
	m.runs = m.live()
	return err
}

// live returns the runs not merged away.
func (m *RunMap) live() []mapRun {
	out := make([]mapRun, 0, len(m.runs))
	for _, r := range m.runs {
		if !r.removed {
			out = append(out, r)
		}
	}
	return out
}

// write writes the entries next yields, in key order, as the run level,
// seq, with its meta and filter. bbolt keeps the slices it is given until
// the commit, so they are copied: next may reuse its memory, and a
// merge's slices point into mapped pages of the file. Keeping those
// instead of copies kept the pages from being released: at 10M
// citations the mapped file pages then rose to 0.9-1.4 GB during merges.
func (m *RunMap) write(level int, seq, n uint64, next func() (k, v []byte, ok bool)) (mapRun, error) {
	r := mapRun{name: newRunName(level, seq)}
	b, err := m.b.CreateBucket(r.name[:])
	if err != nil {
		return r, fmt.Errorf("create map run %x: %w", r.name, err)
	}
	b.FillPercent = 1 // written in key order, never added to
	r.b = b
	var words []uint64
	if m.prefix != nil {
		words = make([]uint64, runFilterSize(n)/8)
	}
	var prev []byte
	for k, v, ok := next(); ok; k, v, ok = next() {
		r.n++
		r.bytes += uint64(len(k) + len(v))
		if words != nil {
			if p := m.prefix(k); p > 0 && p <= len(k) && (prev == nil || !bytes.Equal(prev, k[:p])) {
				addFilterHash(words, keyHash(k[:p]))
				prev = append(prev[:0], k[:p]...)
			}
		}
		if err := b.Put(slices.Clone(k), slices.Clone(v)); err != nil {
			return r, err
		}
	}
	meta := binary.BigEndian.AppendUint64(nil, r.n)
	meta = binary.BigEndian.AppendUint64(meta, r.bytes)
	for _, w := range words {
		meta = binary.LittleEndian.AppendUint64(meta, w)
	}
	if err := m.b.Put(append([]byte{mapMetaByte}, r.name[:]...), meta); err != nil {
		return r, err
	}
	if words != nil {
		r.filter = runFilter(meta[mapMetaSize:])
	}
	return r, nil
}

// addFilterHash sets h's bits in the filter words (filterBuilder.add's
// scheme for one hash).
func addFilterHash(words []uint64, h uint64) {
	blk := words[filterBlockOf(h, len(words)/8)*8:][:8]
	g := mix64(h)
	for range filterProbes {
		blk[g>>6&7] |= 1 << (g & 63)
		g >>= 9
	}
}

// merge writes the union of runs, each key's newest entry, as one run
// and deletes them. With all (the runs are every run of the map), deleted
// keys are dropped: no older entry of theirs remains.
func (m *RunMap) merge(runs []mapRun, level int, seq uint64, all bool) (mapRun, error) {
	mg := &mapMerge{drop: all}
	var n uint64
	for _, r := range runs {
		mg.add(r.b.Cursor(), r.name, nil)
		n += r.n
	}
	mg.init()
	var merr error
	reads := 0
	out, err := m.write(level, seq, n, func() ([]byte, []byte, bool) {
		if reads++; reads%64 == 0 {
			m.s.pg.read()
		}
		k, v, ok, err := mg.next(false)
		if err != nil {
			merr = err
			return nil, nil, false
		}
		return k, v, ok
	})
	if err == nil {
		err = merr
	}
	if err != nil {
		return out, fmt.Errorf("merge into map run %x: %w", out.name, err)
	}
	for _, r := range runs {
		if err := m.s.pg.during(func() error { return m.b.DeleteBucket(r.name[:]) }); err != nil {
			return out, fmt.Errorf("delete map run %x: %w", r.name, err)
		}
		if err := m.b.Delete(append([]byte{mapMetaByte}, r.name[:]...)); err != nil {
			return out, err
		}
		for i := range m.runs {
			if m.runs[i].name == r.name {
				m.runs[i].removed = true
			}
		}
	}
	m.runs = append(m.runs, out)
	return out, nil
}

// Runs returns the number of runs the map is kept in.
func (m *RunMap) Runs() int { return len(m.live()) }

// RunsToMerge returns how many runs a compaction of the map would merge
// (BeginCompaction): 0 when it would do nothing.
func (m *RunMap) RunsToMerge() int {
	from, _ := compactMapSources(m.live())
	return len(from)
}

// Len returns the number of entries stored in the map's runs, versions
// and deletions included: a bound on its keys, for sizing a pass.
func (m *RunMap) Len() uint64 {
	var n uint64
	for _, r := range m.runs {
		if !r.removed {
			n += r.n
		}
	}
	return n
}

// Check verifies the map's runs against their meta, as far as the file
// alone allows: every entry's value decodes, each run holds the entries
// and bytes its meta says, in key order, with sequences no higher than
// the map's, and its filter (the map being opened with its Prefixer)
// holds every key's prefix. It returns a problem for each run
// that breaks a rule (at most max), each naming the run. Its memory is one
// key; it reads every entry once, with limit applied to the mapped pages
// every 4,096 entries (limit, when set: the Reader's LimitMapped).
func (m *RunMap) Check(max int, limit func()) (problems []string, err error) {
	p := m.prefix
	g := m.s.guard("check", &err)
	g.name = true
	defer g.done()
	add := func(format string, args ...any) {
		if len(problems) < max {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	seen := 0
	for _, r := range m.runs {
		if r.removed {
			continue
		}
		var n, size uint64
		var prev []byte
		bad := ""
		c := m.walkCursor(r.b, true)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if seen++; seen%4096 == 0 && limit != nil {
				limit()
			}
			if v == nil {
				bad = fmt.Sprintf("holds a nested bucket %q", k)
				break
			}
			seq, _, _, ok := decodeMapValue(v)
			switch {
			case !ok:
				bad = fmt.Sprintf("entry %q does not decode", k)
			case seq > m.seq:
				bad = fmt.Sprintf("entry %q has sequence %d, past the map's %d", k, seq, m.seq)
			case prev != nil && bytes.Compare(prev, k) >= 0:
				bad = fmt.Sprintf("entry %q is out of order", k)
			case p != nil && r.filter != nil:
				if i := p(k); i > 0 && i <= len(k) && !r.filter.has(keyHash(k[:i])) {
					bad = fmt.Sprintf("its filter lacks the prefix %q of entry %q", k[:i], k)
				}
			}
			if bad != "" {
				break
			}
			prev = append(prev[:0], k...)
			n++
			size += uint64(len(k) + len(v))
		}
		if err := cursorErr(c); err != nil {
			return problems, err
		}
		switch {
		case bad != "":
			add("run %x: %s", r.name, bad)
		case n != r.n || size != r.bytes:
			add("run %x: holds %d entries of %d bytes, its meta says %d of %d", r.name, n, size, r.n, r.bytes)
		case p != nil && r.filter == nil:
			add("run %x: has no filter", r.name)
		}
	}
	// Every meta names a run.
	c := m.b.Cursor()
	for k, v := c.Seek([]byte{mapMetaByte}); k != nil && k[0] == mapMetaByte; k, v = c.Next() {
		if v != nil && len(k) == 1+len(runName{}) && m.b.Bucket(k[1:]) == nil {
			add("meta %x names no run", k[1:])
		}
	}
	return problems, nil
}
