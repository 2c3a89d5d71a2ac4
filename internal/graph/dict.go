package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"os"
	"slices"

	"github.com/cespare/xxhash/v2"
	"go.etcd.io/bbolt"
)

// The term dictionary gives every distinct term a 32-bit id, so that the
// indexes hold small fixed-size numbers instead of strings. Ids are given
// in order of first appearance and never reused; id 0 is no term (the
// default graph in a quad, a wildcard in a pattern).
//
// The "terms" bucket maps an id to the term's encoding (termcode.go). Ids
// grow, so it is written in order and bbolt packs its pages full.
//
// Finding the id of a term goes through the 64-bit xxhash of its encoding.
// Hashes are random, so one B-tree keyed by them would take each batch's
// new terms at random places: every transaction would rewrite most of its
// pages, and ingest would slow down as the store grows. Instead the hash
// index is a set of sorted runs, as in a log-structured merge tree: each
// transaction writes its new terms as a new run (a nested bucket of the
// "ids" bucket, written in key order), and when fanout runs of one level
// pile up they are merged into one run of the next level, up to maxLevel.
// Each run carries a Bloom filter, so a lookup reads only the runs that may
// hold the hash; a writer keeps the filters in memory (10 bits per term).
//
// A run is a bucket named level (1 byte) + sequence number (8 bytes,
// big-endian). Its entries (hash, id), sorted by hash then id, are cut into
// chunks of about runChunk entries; a chunk is stored under the hash of its
// first entry (8 bytes, big-endian) and holds that entry's id, then for
// each further entry uvarint(hash - previous hash) and uvarint(id), so a
// term costs about 10 bytes instead of a bbolt element of its own. Entries
// with the same hash (a collision) never straddle two chunks. The key
// "\x00" holds the run's filter.

// ErrFull is returned by Add when the dictionary has given out every id.
var ErrFull = errors.New("term dictionary is full (4,294,967,295 distinct terms)")

const (
	// fanout is how many runs of one level are merged into one of the
	// next.
	fanout = 4
	// maxLevel is the level whose runs are never merged: with about
	// 20,000 new terms per transaction, a run of level 4 holds about 5
	// million. A merge streams its inputs, but its output stays in memory
	// until the commit, twice (the chunks, and bbolt's pages of them):
	// with level 5 (20 million terms a run) the merges into it added 300
	// to 450 MB of anonymous memory to an ingest at 10M and 30M citations
	// and took its peak over a gibibyte. Level 4 bounds that at about a
	// quarter, whatever the size of the database, for more runs to probe
	// (about 13 final runs at 10M instead of 3; the filters are in
	// memory). Files written with level 5 keep those runs, never merged.
	maxLevel = 4
	// bloomKey is where a run keeps its filter: one zero byte, which
	// sorts before every 8-byte chunk key, so that a seek among the
	// chunks never lands on it.
	bloomKey = "\x00"
	// runChunk is how many entries a chunk of a run holds.
	runChunk = 64
	// bloomBitsPerKey and bloomProbes give a false positive rate of
	// about 0.8%.
	bloomBitsPerKey = 10
	bloomProbes     = 7
)

func termHash(enc []byte) uint64 { return xxhash.Sum64(enc) }

func hashKey(dst *[8]byte, h uint64) { binary.BigEndian.PutUint64(dst[:], h) }

func idKey(dst *[4]byte, id uint32) { binary.BigEndian.PutUint32(dst[:], id) }

// bloom is a Bloom filter over term hashes, stored as little-endian 64-bit
// words.
type bloom []uint64

func newBloom(n int) bloom {
	return make(bloom, max(1, (n*bloomBitsPerKey+63)/64))
}

// add and has probe bits (h + i·h2) mod m for i = 0..bloomProbes-1. They
// are written out rather than sharing a loop with a callback: a writer
// asks every run's filter about every term it has not cached, and the
// callback cost more than the probes.
func (f bloom) add(h uint64) {
	m := uint64(len(f)) * 64
	h2 := bits.RotateLeft64(h, 32)*0x9E3779B97F4A7C15 | 1
	for i := range uint64(bloomProbes) {
		b := (h + i*h2) % m
		f[b/64] |= 1 << (b % 64)
	}
}

func (f bloom) has(h uint64) bool {
	m := uint64(len(f)) * 64
	h2 := bits.RotateLeft64(h, 32)*0x9E3779B97F4A7C15 | 1
	for i := range uint64(bloomProbes) {
		b := (h + i*h2) % m
		if f[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// bloomHasBytes is bloom.has on a filter as stored.
func bloomHasBytes(b []byte, h uint64) bool { return bloomHasIn(nil, b, h) }

// bloomHasIn is bloomHasBytes reading each word by pread when fb is set
// (readonce.go).
func bloomHasIn(fb *fileBlocks, b []byte, h uint64) bool {
	m := uint64(len(b)/8) * 64
	h2 := bits.RotateLeft64(h, 32)*0x9E3779B97F4A7C15 | 1
	var buf [8]byte
	for i := range uint64(bloomProbes) {
		bit := (h + i*h2) % m
		if binary.LittleEndian.Uint64(fb.read(b, int(bit/64*8), buf[:]))&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}

func (f bloom) bytes() []byte {
	out := make([]byte, 8*len(f))
	for i, w := range f {
		binary.LittleEndian.PutUint64(out[8*i:], w)
	}
	return out
}

func decodeBloom(b []byte) (bloom, error) {
	if len(b) == 0 || len(b)%8 != 0 {
		return nil, fmt.Errorf("bloom filter of %d bytes", len(b))
	}
	f := make(bloom, len(b)/8)
	for i := range f {
		f[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return f, nil
}

// run is one sorted run of the hash index.
type run struct {
	name   runName
	filter bloom // nil when not loaded: every lookup reads the run
}

func (r *run) level() int  { return r.name.level() }
func (r *run) seq() uint64 { return r.name.seq() }

// loadRuns lists the runs of the hash index, newest first, with their
// filters when withFilters.
func loadRuns(tx *bbolt.Tx, withFilters bool) ([]*run, error) {
	ids := tx.Bucket([]byte(idsBucket))
	var runs []*run
	c := ids.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || len(k) != 9 {
			return nil, fmt.Errorf("%w: hash index holds key %x, want only runs", ErrCorrupt, k)
		}
		r := &run{}
		copy(r.name[:], k)
		if withFilters {
			f, err := decodeBloom(ids.Bucket(k).Get([]byte(bloomKey)))
			if err != nil {
				return nil, fmt.Errorf("%w: run %x: %v", ErrCorrupt, k, err)
			}
			r.filter = f
		}
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b *run) int { return -cmpUint64(a.seq(), b.seq()) })
	return runs, nil
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dictReader finds term ids in one transaction.
type dictReader struct {
	ids, terms *bbolt.Bucket
	runs       []*run
	// fb holds, for runs whose filter is not loaded, the stored filter,
	// found on the run's first probe (filterOf) as bbolt returns it: a
	// slice of the mapping, valid for the transaction only, and probed in
	// place so that a reader pays nothing to load filters it will use a
	// few times. Found eagerly, every transaction's reader read two or
	// three pages of each of the 28 runs at ten million citations, through
	// the mapping: 106 of the 182 page faults of a lineage command, for
	// runs most lookups never probe.
	fb []storedFilter
	// bySize is the order find visits the runs in: by level, highest
	// first, newest first within a level.
	bySize []int
	pg     *pager // counts random reads for a writer; nil otherwise
	// file, while set, is the database file opened for pread, and the
	// lookups read the hash index's runs and the terms with pageCursors
	// (pread.go), kept from one lookup to the next (runPC by run,
	// termPC), instead of through the mapping. A writer's prefetch sets
	// it for its batch's lookups, which come before the transaction
	// changes anything (unchangedCursor), and clears it after.
	file   *os.File
	tx     *bbolt.Tx
	runPC  []*pageCursor
	termPC *pageCursor
	// keep and once are a ReadOnce Store's (readonce.go): the cursors
	// keep their pages in keep, and once makes lookups seek in the runs
	// without probing their filters (may).
	keep *pageKeep
	once bool
}

// preadFrom makes r's lookups read by pread from file until preadDone;
// tx, r's transaction, must not change the dictionary until then.
func (r *dictReader) preadFrom(tx *bbolt.Tx, file *os.File) {
	r.file, r.tx = file, tx
	r.runPC = slices.Grow(r.runPC[:0], len(r.runs))[:len(r.runs)]
	clear(r.runPC)
	r.termPC = nil
}

// preadDone makes r's lookups read through the mapping again.
func (r *dictReader) preadDone() {
	r.file, r.tx, r.termPC = nil, nil, nil
	clear(r.runPC)
}

// runCursor returns a cursor over run i of the hash index.
func (r *dictReader) runCursor(i int) kvCursor {
	// A run's pread cursor, once made, is taken before its bucket is
	// looked up: in a read transaction bbolt finds a nested bucket by
	// seeking in its parent each time, through the mapping, and a batch's
	// lookups ask for each run again and again.
	if r.file != nil && r.runPC[i] != nil {
		return r.runPC[i]
	}
	b := r.ids.Bucket(r.runs[i].name[:])
	if r.file == nil || b == nil {
		return b.Cursor()
	}
	if r.runPC[i] == nil {
		if r.runPC[i] = unchangedCursor(r.file, r.tx, b); r.runPC[i] == nil {
			return b.Cursor()
		}
		r.runPC[i].keep = r.keep
	}
	return r.runPC[i]
}

// termCode returns the stored encoding of the term whose key is ik, nil
// if none.
func (r *dictReader) termCode(ik []byte) []byte {
	if r.file == nil {
		return r.terms.Get(ik)
	}
	if r.termPC == nil {
		if r.termPC = unchangedCursor(r.file, r.tx, r.terms); r.termPC == nil {
			return r.terms.Get(ik)
		}
		r.termPC.keep = r.keep
	}
	k, v := r.termPC.Seek(ik)
	if !bytes.Equal(k, ik) {
		mustWalk(r.termPC)
		return nil
	}
	return v
}

// mustWalk panics with the error that ended a walk of c, if any: lookups
// return no error, and run under a guard (Store.guard) that makes the
// panic the read's error (and rolls a write transaction back), as it
// does bbolt's own on a damaged page.
func mustWalk(c kvCursor) {
	if err := cursorErr(c); err != nil {
		panic(err)
	}
}

// newDictReader reads the dictionary in tx. runs are the runs of the hash
// index when the caller has them (with filters), else nil.
func newDictReader(tx *bbolt.Tx, runs []*run, loaded bool) (*dictReader, error) {
	r := &dictReader{ids: tx.Bucket([]byte(idsBucket)), terms: tx.Bucket([]byte(termsBucket)), runs: runs}
	if !loaded {
		var err error
		if r.runs, err = loadRuns(tx, false); err != nil {
			return nil, err
		}
	}
	r.fb = make([]storedFilter, len(r.runs))
	return r, nil
}

// storedFilter is the stored filter of a run of the hash index
// (dictReader.fb).
type storedFilter struct {
	found bool   // looked for: b is set
	b     []byte // the filter in the mapping; nil when there is none
}

// filterOf returns run i's stored filter, looking for it on first use. A
// filter that is missing or not a whole number of words is none: every
// lookup then reads the run, which meets any damage.
func (r *dictReader) filterOf(i int) []byte {
	f := &r.fb[i]
	if !f.found {
		f.found = true
		if b := r.ids.Bucket(r.runs[i].name[:]); b != nil {
			if v := b.Get([]byte(bloomKey)); len(v) > 0 && len(v)%8 == 0 {
				f.b = v
			}
		}
	}
	return f.b
}

// may reports whether run i may hold a term whose hash is h: its filter
// says so, or it has none, or r is a ReadOnce Store's reader.
//
// A ReadOnce reader reads by pread, and a probe of a stored filter is
// seven reads of random words of megabytes when the term is there (a
// Bloom filter's probes) and one or two when it is not, each a random
// page as costly as the run's leaf a seek reads (its branches are kept,
// pageKeep): a seek is cheaper than a probe in both cases. Probing the
// filters, a lineage command from a cold page cache at ten million
// citations read 640 pages in the hash index (seven for each of the 40
// terms it found, two for each run of the 4 it did not, and the filters'
// locations); seeking, its median over 42 citations went from 136 to 125
// ms (docs/SCALE.md).
func (r *dictReader) may(i int, h uint64) bool {
	if f := r.runs[i].filter; f != nil {
		return f.has(h)
	}
	if r.once {
		return true
	}
	if f := r.filterOf(i); f != nil {
		return bloomHasBytes(f, h)
	}
	return true
}

// lookup returns the id of the term with encoding enc, or 0.
func (r *dictReader) lookup(enc []byte) uint32 { return r.find(termHash(enc), 0, enc) }

// lookupKnown is lookup for the term stored under id known (not 0), whose
// hash is h: an entry of the hash index for that id is taken as a match
// without reading the term again, and the term is read (by its id) only
// to compare it with another candidate's. Check looks up every term it
// reads this way, in the order of their hashes: reading each term again
// would read the dictionary's pages at random, and keeping each would
// hold a batch's terms in memory.
func (r *dictReader) lookupKnown(h uint64, known uint32) uint32 { return r.find(h, known, nil) }

// find returns the id of the term whose hash is h and whose encoding is
// enc, or that is stored under known when enc is nil (read when a
// candidate other than known needs comparing); an entry for known (not 0)
// is a match without reading the term.
func (r *dictReader) find(h uint64, known uint32, enc []byte) uint32 {
	found := uint32(0)
	// A term has one id, in one run: the runs are visited largest first,
	// where most stored terms are, and the lookup stops at its term. Newest
	// first, a lookup of an old term probed the filters of every small
	// recent run before the final ones (28 runs at ten million citations:
	// a filter probe is a cache miss or two). Among runs of one level the
	// oldest comes first: the terms a query names (predicates, classes,
	// the policies and runs) were written by the first transactions, and
	// newest first each of their lookups probed the filters of the 18
	// other final runs at ten million citations, a third of the reads of a
	// lineage command from a cold page cache (3,121 reads by pread; 1,848
	// oldest first).
	if len(r.bySize) != len(r.runs) {
		r.bySize = make([]int, len(r.runs))
		for i := range r.bySize {
			r.bySize[i] = i
		}
		slices.SortFunc(r.bySize, func(a, b int) int {
			if d := r.runs[b].level() - r.runs[a].level(); d != 0 {
				return d
			}
			return cmpUint64(r.runs[a].seq(), r.runs[b].seq())
		})
	}
	for _, i := range r.bySize {
		r.candidates(i, h, func(id uint32) bool {
			if id == known && known != 0 {
				found = id
				return false
			}
			var ik [4]byte
			if enc == nil {
				idKey(&ik, known)
				enc = append([]byte{}, r.termCode(ik[:])...)
			}
			idKey(&ik, id)
			if bytes.Equal(r.termCode(ik[:]), enc) {
				found = id
				return false
			}
			return true
		})
		if found != 0 {
			return found
		}
	}
	return 0
}

// candidates calls fn with the id of each entry of run i of the hash
// index whose hash is h, in order, until fn returns false. It reads what
// lookupKnown reads: the chunk that may hold h.
func (r *dictReader) candidates(i int, h uint64, fn func(id uint32) bool) {
	if !r.may(i, h) {
		return
	}
	var hk [8]byte
	hashKey(&hk, h)
	r.pg.read()
	c := r.runCursor(i)
	k, v := c.Seek(hk[:])
	switch {
	case k == nil:
		k, v = c.Last()
	case !bytes.Equal(k, hk[:]):
		k, v = c.Prev()
	}
	if len(k) != 8 {
		mustWalk(c)
		return // before the first chunk: the filter, or nothing
	}
	eachEntry(k, v, func(eh uint64, id uint32) bool {
		if eh > h {
			return false
		}
		return eh < h || fn(id)
	})
}

// lookupBatch finds the ids of the stored terms among encs (distinct
// encodings), setting ids[i] to the id of encs[i], or 0 when it is not
// stored. It reads what a lookup of each would, in another order: the
// hash index run by run in the order of the hashes, then the candidates'
// terms in the order of their ids. A writer's batch of terms looked up
// one by one read the pages of the hash index and of the terms at random;
// once the file is larger than the pages the pager lets stay mapped, each
// read mapped its page again with fifteen neighbours (Linux's fault-around),
// and at ten million citations half of an ingest's CPU time went into
// those faults. In order, a page is mapped once for all the batch's terms
// on it, and its neighbours are the next ones read.
func (r *dictReader) lookupBatch(encs [][]byte, ids []uint32, sc *lookupScratch) {
	ps := sc.pending[:0]
	for i, e := range encs {
		ps = append(ps, pendingTerm{termHash(e), i})
		ids[i] = 0
	}
	slices.SortFunc(ps, func(a, b pendingTerm) int { return cmpUint64(a.h, b.h) })
	cands := sc.cands[:0]
	for ri := range r.runs {
		for _, p := range ps {
			r.candidates(ri, p.h, func(id uint32) bool {
				cands = append(cands, termCandidate{id, p.i})
				return true
			})
		}
	}
	slices.SortFunc(cands, func(a, b termCandidate) int { return cmpUint64(uint64(a.id), uint64(b.id)) })
	for _, c := range cands {
		if ids[c.i] != 0 {
			continue
		}
		var ik [4]byte
		idKey(&ik, c.id)
		r.pg.read()
		if bytes.Equal(r.termCode(ik[:]), encs[c.i]) {
			ids[c.i] = c.id
		}
	}
	sc.pending, sc.cands = ps, cands
}

// lookupScratch holds the slices of a batch's lookups (prefetch,
// lookupBatch) from one write transaction to the next: made again for each,
// they would be garbage of the order of the batch's encoded terms (a few
// tens of MB for 50,000 quads, by their sizes; not measured alone).
// Writes are serialized, so
// the Store keeps one, and one for Prepare. Slices grown past maxScratch bytes are dropped.
type lookupScratch struct {
	terms   []batchTerm
	uniq    [][]byte
	ids     []uint32
	pending []pendingTerm
	cands   []termCandidate
}

const maxScratch = 64 << 20

// trim drops the slices that grew past maxScratch.
func (sc *lookupScratch) trim() {
	if cap(sc.terms)*16 > maxScratch {
		sc.terms = nil
	}
	if cap(sc.uniq)*24 > maxScratch {
		sc.uniq = nil
	}
	if cap(sc.ids)*4 > maxScratch {
		sc.ids = nil
	}
	if cap(sc.pending)*16 > maxScratch {
		sc.pending = nil
	}
	if cap(sc.cands)*16 > maxScratch {
		sc.cands = nil
	}
}

// batchTerm is one term of a batch that a lookup looks up: its hash and
// its position (4*quad+term) in the Prepared.
type batchTerm struct {
	h   uint64
	pos int32
}

// pendingTerm is a term lookupBatch looks up: its hash and its index.
type pendingTerm struct {
	h uint64
	i int
}

// termCandidate is an entry of the hash index that may be term i's.
type termCandidate struct {
	id uint32
	i  int
}

var errBadRunChunk error = corruptError("undecodable chunk of the hash index")

// eachEntry calls fn with the entries of the run chunk k, v in order until
// fn returns false. It returns errBadRunChunk if the chunk does not decode
// (the entries before the damage have been given to fn).
func eachEntry(k, v []byte, fn func(h uint64, id uint32) bool) error {
	if len(k) != 8 {
		return nil // the filter
	}
	h := binary.BigEndian.Uint64(k)
	first := true
	for len(v) > 0 {
		if !first {
			d, n := uvarint(v)
			if n <= 0 || h+d < h {
				return errBadRunChunk
			}
			h += d
			v = v[n:]
		}
		first = false
		id, n := uvarint(v)
		if n <= 0 || id == 0 || id > math.MaxUint32 {
			return errBadRunChunk
		}
		v = v[n:]
		if !fn(h, uint32(id)) {
			return nil
		}
	}
	if first {
		return errBadRunChunk
	}
	return nil
}

// termReader decodes terms by id within one read transaction, caching
// them: predicates, classes and hub nodes recur in almost every quad.
type termReader struct {
	terms *bbolt.Bucket
	cache map[uint32]Term
	c     kvCursor // kept from one read to the next (get)
	at    uint32   // the id c is on; 0 when it must seek
	// pc, when set, is the cursor get makes c (Reader.InOrder): a
	// pageCursor reading by pread.
	pc *pageCursor
}

// termStep is how far past the id read before get steps to the next
// instead of seeking.
const termStep = 16

// get returns the stored encoding of the term with id, nil if none. It
// reads with a kept cursor: Bucket.Get makes a new one each time, whose
// stack of pages bbolt grows as it descends (a lineage, decoding
// thousands of terms, allocated a tenth of its memory there). And it
// steps to an id a few past the one before instead of seeking from the
// root: a citation's nodes and literals were minted together, so their
// ids are close, and a lineage decodes them one after another.
func (r *termReader) get(id uint32) []byte {
	var key [4]byte
	idKey(&key, id)
	if r.c == nil {
		if r.pc != nil {
			r.c = r.pc
		} else {
			r.c = r.terms.Cursor()
		}
	}
	var k, v []byte
	if r.at != 0 && id > r.at && id-r.at <= termStep {
		for range termStep {
			if k, v = r.c.Next(); k == nil || bytes.Compare(k, key[:]) >= 0 {
				break
			}
		}
	}
	if k == nil || bytes.Compare(k, key[:]) < 0 {
		k, v = r.c.Seek(key[:])
	}
	if k == nil || !bytes.Equal(k, key[:]) {
		r.at = 0
		return nil
	}
	r.at = id
	return v
}

// termCacheSize bounds a termReader's cache, which is dropped whole when
// full.
const termCacheSize = 1 << 16

func newTermReader(tx *bbolt.Tx) *termReader {
	return &termReader{terms: tx.Bucket([]byte(termsBucket)), cache: make(map[uint32]Term, 256)}
}

func (r *termReader) term(id uint32) (Term, error) {
	if id == 0 {
		return Term{}, nil
	}
	if t, ok := r.cache[id]; ok {
		return t, nil
	}
	t, err := r.decode(id)
	if err != nil {
		return Term{}, err
	}
	if len(r.cache) >= termCacheSize {
		clear(r.cache)
	}
	r.cache[id] = t
	return t, nil
}

// decode reads and decodes the term with id (not 0), past the cache.
func (r *termReader) decode(id uint32) (Term, error) {
	if id == 0 {
		return Term{}, nil
	}
	v := r.get(id)
	if v == nil {
		if r.c != nil {
			if err := cursorErr(r.c); err != nil {
				return Term{}, fmt.Errorf("reading term %d: %w", id, err)
			}
		}
		return Term{}, fmt.Errorf("term %d is used by a quad but %w", id, errMissingTerm)
	}
	t, err := decodeTerm(v)
	if err != nil {
		return Term{}, fmt.Errorf("term %d: %w", id, err)
	}
	return t, nil
}

func (r *termReader) quad(q ids4) (Quad, error) {
	var out Quad
	var err error
	if out.S, err = r.term(q[0]); err != nil {
		return out, err
	}
	if out.P, err = r.term(q[1]); err != nil {
		return out, err
	}
	if out.O, err = r.term(q[2]); err != nil {
		return out, err
	}
	out.G, err = r.term(q[3])
	return out, err
}

// hotTerms bounds the Store's cache of term ids, which is dropped whole
// when full: it is there for the terms (predicates, classes, policies,
// engines, answers) that recur batch after batch. A variable for tests.
var hotTerms = 1 << 17

// dictWriter assigns ids within one write transaction. New terms are
// written at the end (flush): the terms bucket in id order, and one new
// run of the hash index in hash order.
type dictWriter struct {
	dictReader
	tx       *bbolt.Tx
	mem      *arena
	hot      map[string]uint32 // committed terms seen lately (the Store's)
	next     uint32
	firstNew uint32
	added    map[string]uint32 // new terms of this transaction
	scratch  *lookupScratch    // prefetch's slices (the Store's)
	newTerms [][]byte          // their encodings, by id - firstNew
	budget   *mergeBudget      // the transaction's
	pfile    *os.File          // the database file for prefetch's preads; nil: none
	// since holds the terms added by the transactions committed after the
	// one a prepared batch was looked up in (addTx).
	since []map[string]uint32
}

// newDictWriter starts assigning ids in tx. runs are the runs of the hash
// index with their filters; flush returns the runs after the transaction.
func newDictWriter(tx *bbolt.Tx, runs []*run, next uint32, mem *arena, hot map[string]uint32, scratch *lookupScratch, pg *pager, budget *mergeBudget) (*dictWriter, error) {
	r, err := newDictReader(tx, runs, true)
	if err != nil {
		return nil, err
	}
	r.pg = pg
	return &dictWriter{
		dictReader: *r,
		tx:         tx,
		mem:        mem,
		hot:        hot,
		scratch:    scratch,
		next:       next,
		firstNew:   next,
		added:      make(map[string]uint32),
		budget:     budget,
	}, nil
}

// id returns the id of the term with encoding enc, giving it a new one if
// it has none. looked is what prefetch found for it (0: look it up).
func (w *dictWriter) id(enc []byte, looked uint32) (uint32, error) {
	if id, ok := w.hot[string(enc)]; ok {
		return id, nil
	}
	if id, ok := w.added[string(enc)]; ok {
		return id, nil
	}
	id := looked
	switch looked {
	case 0:
		id = w.lookup(enc)
	case absent:
		id = 0
		// Absent when prepared: added since, perhaps.
		for _, m := range w.since {
			if x, ok := m[string(enc)]; ok {
				id = x
				break
			}
		}
	}
	if id != 0 {
		if len(w.hot) >= hotTerms {
			clear(w.hot)
		}
		w.hot[string(enc)] = id
		return id, nil
	}
	if w.next == math.MaxUint32 {
		return 0, ErrFull
	}
	id = w.next
	w.next++
	e := w.mem.copy(enc)
	w.added[string(e)] = id
	w.newTerms = append(w.newTerms, e)
	return id, nil
}

// absent is what prefetch gives a term it looked up and did not find: no
// term has that id (id stops before it with ErrFull).
const absent = math.MaxUint32

// prefetch looks up the terms of p that the cache does not hold, in one
// lookupBatch, and sets p's ids for each term position (4*i+j for term j
// of quads[i]): its id, absent for a term not stored, or 0 for a term the
// cache held, for id to find.
func (w *dictWriter) prefetch(p *Prepared) {
	// Nothing is written before the batch's lookups: they may read the
	// file by pread.
	if w.pfile != nil {
		w.preadFrom(w.tx, w.pfile)
	}
	p.lookup(&w.dictReader, w.hot, false, w.scratch)
	w.preadDone()
}

// commit is called after the transaction committed: the new terms are
// now safe to cache.
func (w *dictWriter) commit() {
	for enc, id := range w.added {
		if len(w.hot) >= hotTerms {
			clear(w.hot)
		}
		w.hot[enc] = id
	}
}

// hashEntry is one entry of a run.
type hashEntry struct {
	h  uint64
	id uint32
}

func (a hashEntry) cmp(b hashEntry) int {
	if c := cmpUint64(a.h, b.h); c != 0 {
		return c
	}
	return cmpUint64(uint64(a.id), uint64(b.id))
}

// flush writes the new terms and returns the runs of the hash index as
// the transaction leaves them.
func (w *dictWriter) flush() ([]*run, error) {
	if len(w.newTerms) == 0 {
		return w.runs, nil
	}
	w.terms.FillPercent = 1 // ids only grow: every put is an append
	entries := make([]hashEntry, len(w.newTerms))
	for i, enc := range w.newTerms {
		id := w.firstNew + uint32(i)
		k := w.mem.alloc(4)
		binary.BigEndian.PutUint32(k, id)
		if err := w.terms.Put(k, enc); err != nil {
			return nil, err
		}
		entries[i] = hashEntry{h: termHash(enc), id: id}
	}
	slices.SortFunc(entries, hashEntry.cmp)

	var seq uint64
	if len(w.runs) > 0 {
		seq = w.runs[0].seq() + 1
	}
	r, err := w.writeRun(0, seq, len(entries), slices.Values(entries))
	if err != nil {
		return nil, err
	}
	runs := append([]*run{r}, w.runs...)
	return w.compact(runs, seq+1)
}

// writeRun writes a run of n entries given in order by next.
func (w *dictWriter) writeRun(level int, seq uint64, n int, entries iter.Seq[hashEntry]) (*run, error) {
	r := &run{name: newRunName(level, seq), filter: newBloom(n)}
	b, err := w.ids.CreateBucket(w.mem.copy(r.name[:]))
	if err != nil {
		return nil, fmt.Errorf("create run %x: %w", r.name, err)
	}
	b.FillPercent = 1 // written in key order, never added to
	var chunk []byte
	var first, prev uint64
	count := 0
	flush := func() error {
		if count == 0 {
			return nil
		}
		k := w.mem.alloc(8)
		binary.BigEndian.PutUint64(k, first)
		count = 0
		return b.Put(k, w.mem.copy(chunk))
	}
	for e := range entries {
		if count >= runChunk && e.h != prev {
			if err = flush(); err != nil {
				return nil, err
			}
		}
		if count == 0 {
			first, chunk = e.h, chunk[:0]
		} else {
			chunk = appendUvarint(chunk, e.h-prev)
		}
		chunk = appendUvarint(chunk, uint64(e.id))
		prev = e.h
		count++
		r.filter.add(e.h)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if err := b.Put([]byte(bloomKey), w.mem.copy(r.filter.bytes())); err != nil {
		return nil, err
	}
	return r, nil
}

// compact merges runs as compactRuns does (lsm.go); a run of maxLevel is
// never merged again. seq is the next sequence number. It returns the runs
// newest first.
func (w *dictWriter) compact(runs []*run, seq uint64) ([]*run, error) {
	runs, err := compactRuns(runs, seq, w.budget,
		func(r *run) runName { return r.name },
		func(r *run) bool { return r.level() < maxLevel },
		func(same []*run) uint64 {
			entries := 0
			for _, r := range same {
				entries += len(r.filter) * 64 / bloomBitsPerKey
			}
			return uint64(entries)
		},
		w.merge)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(runs, func(a, b *run) int { return -cmpUint64(a.seq(), b.seq()) })
	return runs, nil
}

// runEntries returns the entries of a run in order; *errp is set if a
// chunk does not decode. Each chunk read is counted by pg.
func runEntries(b *bbolt.Bucket, pg *pager, errp *error) iter.Seq[hashEntry] {
	return func(yield func(hashEntry) bool) {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			pg.read()
			stop := false
			err := eachEntry(k, v, func(h uint64, id uint32) bool {
				stop = !yield(hashEntry{h, id})
				return !stop
			})
			if err != nil {
				*errp = fmt.Errorf("%w at %x", err, k)
				return
			}
			if stop {
				return
			}
		}
	}
}

// merge writes the union of runs as one run and deletes them. It reads
// the runs side by side in order, so memory does not grow with their size.
func (w *dictWriter) merge(runs []*run, level int, seq uint64) (*run, error) {
	words := 0
	var readErr error
	var nexts []func() (hashEntry, bool)
	var stops []func()
	for _, r := range runs {
		words += len(r.filter)
		next, stop := iter.Pull(runEntries(w.ids.Bucket(r.name[:]), w.pg, &readErr))
		nexts = append(nexts, next)
		stops = append(stops, stop)
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	heads := make([]hashEntry, len(nexts))
	live := make([]bool, len(nexts))
	for i, next := range nexts {
		heads[i], live[i] = next()
	}
	merged := func(yield func(hashEntry) bool) {
		for {
			best := -1
			for i := range heads {
				if live[i] && (best < 0 || heads[i].cmp(heads[best]) < 0) {
					best = i
				}
			}
			if best < 0 {
				return
			}
			if !yield(heads[best]) {
				return
			}
			heads[best], live[best] = nexts[best]()
		}
	}
	// The merged filter is sized from the inputs' (about 10 bits per entry).
	n := words * 64 / bloomBitsPerKey
	out, err := w.writeRun(level, seq, n, merged)
	if err == nil {
		err = readErr
	}
	if err != nil {
		return nil, err
	}
	for _, stop := range stops {
		stop()
	}
	names := make([]runName, len(runs))
	for i, r := range runs {
		names[i] = r.name
	}
	if err := deleteRuns(w.ids, names, w.pg); err != nil {
		return nil, err
	}
	return out, nil
}
