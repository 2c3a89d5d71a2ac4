package graph

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"go.etcd.io/bbolt"
)

// maxProblems is how many problems Check lists before it stops looking.
const maxProblems = 20

// Check verifies that the store is consistent, as bbolt's Tx.Check does
// for pages:
//
//   - the format marker and every bucket of the format are there;
//   - the dictionary holds exactly the ids 1 to next-id minus one, each a
//     decodable term in stored form, each found under its hash in the
//     hash bucket, which holds nothing else;
//   - each index is strictly increasing (no repeats), decodes, and uses
//     only ids the dictionary has, with terms that can stand where they do
//     (no literal subject or graph, an IRI predicate);
//   - every quad of the SPO index has its twins in the POS and OSP
//     indexes, and all three hold as many quads as the quad counter says.
//
// It reads every term and every index entry once and looks up the twins of
// each quad in sorted batches, in memory bounded by the batch, and returns
// an *Error wrapping ErrCorrupt that lists what it found. The pages of the
// file it has read stay mapped up to Options.MappedLimit, as a writer's
// do: without the limit a check maps the whole file (8 GiB of resident
// memory at ten million citations).
func (s *Store) Check(ctx context.Context) error {
	c := checker{ctx: ctx, file: s.file}
	err := s.view("check", func(tx *bbolt.Tx) error {
		c.pg = &pager{db: s.db, limit: s.limit}
		c.pg.begin(tx.Size())
		c.tx = tx
		if s.onCheck != nil {
			s.onCheck(&c)
		}
		return c.run(tx)
	})
	if errors.Is(err, errTooMany) {
		err = nil
	}
	if err == nil && len(c.problems) > 0 {
		err = fmt.Errorf("%w:\n\t%s", ErrCorrupt, strings.Join(c.problems, "\n\t"))
	}
	var e *Error
	if err != nil && !errors.As(err, &e) {
		err = &Error{Op: "check", Path: s.path, Err: err}
	}
	return err
}

type checker struct {
	ctx      context.Context
	pg       *pager // keeps the pages read under the store's mapped limit
	at       string // the part running, for tests
	problems []string
	next     uint32
	kinds    []TermKind // by id, from the dictionary pass
	// file is the database file opened for pread, nil if it is not: the
	// walks of the terms and of SPO, whose leaves bbolt has scattered over
	// the file, read by pread (pageCursor) instead of through the mapping.
	// The lookups in hash order stay on the mapping: each run of the hash
	// index was written whole by one transaction, so they walk it nearly
	// page after page, which the mapping does at a third of pread's cost.
	file    *os.File
	tx      *bbolt.Tx // the check's
	kindsOK bool      // the dictionary pass read every term
	fps     [numIndexes]fingerprint
	quads   uint64   // the quad counter's
	prog    Progress // the part running, for ReportProgress
}

// startPart reports the start of a part of the check that reads total
// units.
func (c *checker) startPart(part, unit string, total uint64) {
	c.prog = Progress{Part: part, Unit: unit, Total: int64(total)}
	ReportProgress(c.ctx, c.prog)
}

// progress counts n more units of the part running, and reports every
// progressEvery.
func (c *checker) progress(n int) {
	before := c.prog.Done
	c.prog.Done += int64(n)
	if c.prog.Done/progressEvery != before/progressEvery {
		ReportProgress(c.ctx, c.prog)
	}
}

// endPart reports how far the part running got.
func (c *checker) endPart() { ReportProgress(c.ctx, c.prog) }

// partPanic is a panic raised while a part of the check read the file.
type partPanic struct{ text string }

func (p partPanic) Error() string { return p.text }

// part runs one part of the check (the dictionary, an index, the twins
// lookups) and reports whether it ran to its end. A panic while reading a
// damaged page, or an error, ends that part only, as a problem naming it:
// the parts share nothing but what the dictionary part recorded, so the
// next ones still read what they can. Only errTooMany and the context's
// error end the check.
func (c *checker) part(name string, fn func() error) (bool, error) {
	c.at = name
	err := func() (err error) {
		old := debug.SetPanicOnFault(true)
		defer func() {
			debug.SetPanicOnFault(old)
			if v := recover(); v != nil {
				err = partPanic{damageText(v)}
			}
		}()
		return fn()
	}()
	var pp partPanic
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, errTooMany), c.ctx.Err() != nil:
		return false, err
	case errors.As(err, &pp):
		return false, c.problem("%s: the file is damaged: %s", name, pp.text)
	}
	return false, c.problem("%s: %v", name, err)
}

// problemBelowMax is problem for a caller that cannot stop at once (a
// merge of runs): past maxProblems it adds nothing, and the caller stops
// at its next look at the count.
func (c *checker) problemBelowMax(format string, args ...any) {
	if len(c.problems) < maxProblems {
		c.problem(format, args...)
	}
}

// errTooMany ends the check once maxProblems are listed.
var errTooMany = errors.New("too many problems")

func (c *checker) problem(format string, args ...any) error {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
	if len(c.problems) >= maxProblems {
		c.problems = append(c.problems, "(stopped looking)")
		return errTooMany
	}
	return nil
}

func (c *checker) run(tx *bbolt.Tx) error {
	needInit, err := inspect(tx)
	if err == nil && needInit {
		err = errors.New("format marker missing")
	}
	if err != nil {
		return c.problem("%v", err)
	}
	cnt := readCounters(tx)
	c.next, c.quads = cnt.nextID, cnt.quads
	if _, err := validCounters(tx); err != nil {
		if err := c.problem("counters: %v", err); err != nil {
			return err
		}
		// The dictionary pass allocates by next-id: a damaged one is
		// bounded by the dictionary's last id.
		if k, _ := tx.Bucket([]byte(termsBucket)).Cursor().Last(); len(k) == 4 && binary.BigEndian.Uint32(k) < c.next {
			c.next = binary.BigEndian.Uint32(k) + 1
		}
	}
	if _, err := c.part("dictionary", func() error { return c.dictionary(tx) }); err != nil {
		return err
	}
	whole := true
	for ind := range numIndexes {
		var n uint64
		ok, err := c.part("index "+indexBuckets[ind], func() (err error) {
			n, err = c.index(tx, ind)
			return err
		})
		if err != nil {
			return err
		}
		whole = whole && ok
		if ok && n != cnt.quads {
			if err := c.problem("index %s holds %d quads, the quad counter says %d", indexBuckets[ind], n, cnt.quads); err != nil {
				return err
			}
		}
	}
	if !whole {
		return nil // the fingerprints cover only part of an index
	}
	c.startPart("twins", "", 0)
	_, err = c.part("twins", func() error { return c.twins(tx) })
	return err
}

// dictionary checks the term dictionary and its hash index, and records
// each term's kind.
func (c *checker) dictionary(tx *bbolt.Tx) error {
	terms, ids := tx.Bucket([]byte(termsBucket)), tx.Bucket([]byte(idsBucket))
	c.kinds = make([]TermKind, c.next)
	runs, err := loadRuns(tx, true)
	if err != nil {
		if err := c.problem("ids: %v", err); err != nil {
			return err
		}
		if runs, err = loadRuns(tx, false); err != nil {
			return c.problem("ids: %v", err)
		}
	}
	c.startPart("hash index", "entries", uint64(max(c.next, 1)-1))
	held, err := c.hashEntries(ids, runs)
	if err != nil {
		return err
	}
	c.endPart()
	var given fingerprint // of the (hash, id) of every stored term
	want := uint32(1)
	var enc []byte
	cur := c.cursor(tx, terms)
	c.startPart("dictionary", "terms", uint64(max(c.next, 1)-1))
	defer c.endPart()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		c.pg.read()
		c.progress(1)
		if want%65536 == 0 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		if len(k) != 4 {
			if err := c.problem("terms: key %x is not a 4-byte id", k); err != nil {
				return err
			}
			continue
		}
		id := binary.BigEndian.Uint32(k)
		if id != want {
			if err := c.problem("terms: id %d follows id %d (ids must run from 1 without gaps)", id, want-1); err != nil {
				return err
			}
		}
		want = id + 1
		if id == 0 || id >= c.next {
			if err := c.problem("terms: id %d is outside 1..%d (next-id %d)", id, c.next-1, c.next); err != nil {
				return err
			}
			continue
		}
		t, err := decodeTerm(v)
		if err != nil {
			if err := c.problem("terms: id %d: %v", id, err); err != nil {
				return err
			}
			continue
		}
		if n, why := normTerm(t); why != "" || n != t || t.IsZero() {
			if err := c.problem("terms: id %d (%s) is not a valid term in stored form %s", id, brief(t), why); err != nil {
				return err
			}
			continue
		}
		if enc = appendTermCode(enc[:0], t); !bytes.Equal(enc, v) {
			if err := c.problem("terms: id %d (%s) is not in its one encoding", id, brief(t)); err != nil {
				return err
			}
			continue
		}
		c.kinds[id] = t.Kind
		given.add(hashPair(termHash(v), id))
	}
	if err := cursorErr(cur); err != nil {
		return err
	}
	if want != c.next {
		if err := c.problem("terms: last id is %d, next-id is %d", want-1, c.next); err != nil {
			return err
		}
	}
	c.kindsOK = true
	if given != held.fp || held.tooMany {
		// Some term is not where its hash says, or the index holds an
		// entry no term gives: each term is looked up, to name them.
		c.startPart("dictionary: each term looked up by its hash", "terms", uint64(max(c.next, 1)-1))
		if err := c.lookUpTerms(tx, terms, runs); err != nil {
			return err
		}
	} else if err := c.sameTerms(terms, held.shared); err != nil {
		return err
	}
	// Every term was found under its hash; equal counts mean the hash
	// index holds nothing else.
	if held.n != uint64(c.next-1) {
		return c.problem("ids: %d entries for %d terms", held.n, c.next-1)
	}
	return nil
}

// hashPair is the ids4 a fingerprint of the hash index adds for the
// entry of hash h and id.
func hashPair(h uint64, id uint32) ids4 { return ids4{uint32(h >> 32), uint32(h), id} }

// heldEntries is what the dictionary pass found in the hash index.
type heldEntries struct {
	n  uint64      // entries
	fp fingerprint // of their (hash, id) pairs
	// shared are the ids of the entries that share a hash with another
	// entry, a group for each hash (two different terms rarely do; a
	// term stored twice does); tooMany says there were more than
	// maxShared, and they were not kept.
	shared  [][]uint32
	tooMany bool
}

// maxShared bounds the ids hashEntries keeps of entries sharing a hash:
// past it, the index is damaged, and each term is looked up instead.
const maxShared = 1 << 20

// hashEntries reads every run of the hash index, merged in hash order: it
// checks each run's order and that its filter holds each of its hashes,
// and returns the entries' count, fingerprint and the groups of ids that
// share a hash.
//
// With it, the dictionary pass does not look each term up: when the
// (hash, id) pairs of the stored terms and of the index's entries are
// the same (equal fingerprints and counts), in runs in order whose
// filters hold every hash, every lookup of a term finds its id, but when
// another id with an equal term comes first; only the few ids sharing a
// hash need their terms compared (sameTerms). Looking every term up took
// three quarters of the pass (8 of 11 minutes of the file's check at ten
// million citations).
func (c *checker) hashEntries(ids *bbolt.Bucket, runs []*run) (heldEntries, error) {
	var out heldEntries
	readers := make([]*hashRunReader, 0, len(runs))
	for _, r := range runs {
		readers = append(readers, &hashRunReader{run: r, c: ids.Bucket(r.name[:]).Cursor(), pg: c.pg})
	}
	m := hashMerge{}
	for _, rr := range readers {
		m.push(rr, c)
	}
	var last hashEntry
	var group []uint32
	flush := func() {
		if len(group) > 1 && !out.tooMany {
			out.shared = append(out.shared, slices.Clone(group))
			if len(out.shared) > maxShared {
				out.shared, out.tooMany = nil, true
			}
		}
		group = group[:0]
	}
	for len(m.h) > 0 {
		e := m.h[0].e
		c.progress(1)
		if out.n > 0 && e.h == last.h {
			if len(group) == 0 {
				group = append(group, last.id)
			}
			group = append(group, e.id)
		} else {
			flush()
		}
		out.fp.add(hashPair(e.h, e.id))
		out.n++
		last = e
		m.advance(c)
		if out.n%65536 == 0 {
			if err := c.ctx.Err(); err != nil {
				return out, err
			}
			if len(c.problems) >= maxProblems {
				return out, errTooMany
			}
		}
	}
	flush()
	if len(c.problems) >= maxProblems {
		return out, errTooMany
	}
	return out, nil
}

// hashRunReader reads the entries of one run of the hash index in order,
// a chunk at a time, checking the run's order and filter as it goes.
type hashRunReader struct {
	run     *run
	c       *bbolt.Cursor
	pg      *pager
	started bool
	buf     []hashEntry
	i       int
	prev    hashEntry
	any     bool
}

// next returns the run's next entry, false at its end or at a chunk that
// does not decode (a problem).
func (rr *hashRunReader) next(c *checker) (hashEntry, bool) {
	for rr.i >= len(rr.buf) {
		var k, v []byte
		if rr.started {
			k, v = rr.c.Next()
		} else {
			k, v = rr.c.First()
			rr.started = true
		}
		if k == nil {
			return hashEntry{}, false
		}
		rr.pg.read()
		rr.buf, rr.i = rr.buf[:0], 0
		if err := eachEntry(k, v, func(h uint64, id uint32) bool {
			rr.buf = append(rr.buf, hashEntry{h, id})
			return true
		}); err != nil {
			c.problemBelowMax("ids: run %x: %v", rr.run.name, fmt.Errorf("%w at %x", err, k))
			return hashEntry{}, false
		}
	}
	e := rr.buf[rr.i]
	rr.i++
	if rr.any && e.cmp(rr.prev) <= 0 && rr.prev.h != 0 {
		c.problemBelowMax("ids: run %x: entry %x/%d does not follow %x/%d", rr.run.name, e.h, e.id, rr.prev.h, rr.prev.id)
	}
	if rr.run.filter != nil && !rr.run.filter.has(e.h) {
		c.problemBelowMax("ids: run %x: hash %x is missing from the run's filter", rr.run.name, e.h)
	}
	rr.prev, rr.any = e, true
	return e, true
}

// hashMerge is a min-heap of the runs' next entries.
type hashMerge struct {
	h []hashHead
}

type hashHead struct {
	e  hashEntry
	rr *hashRunReader
}

func (m *hashMerge) less(i, j int) bool { return m.h[i].e.cmp(m.h[j].e) < 0 }

// push adds rr's next entry, if it has one.
func (m *hashMerge) push(rr *hashRunReader, c *checker) {
	e, ok := rr.next(c)
	if !ok {
		return
	}
	m.h = append(m.h, hashHead{e, rr})
	for i := len(m.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !m.less(i, p) {
			break
		}
		m.h[i], m.h[p] = m.h[p], m.h[i]
		i = p
	}
}

// advance replaces the least entry by the next of its run.
func (m *hashMerge) advance(c *checker) {
	if e, ok := m.h[0].rr.next(c); ok {
		m.h[0].e = e
	} else {
		last := len(m.h) - 1
		m.h[0] = m.h[last]
		m.h = m.h[:last]
	}
	for i := 0; ; {
		l, r, min := 2*i+1, 2*i+2, i
		if l < len(m.h) && m.less(l, min) {
			min = l
		}
		if r < len(m.h) && m.less(r, min) {
			min = r
		}
		if min == i {
			return
		}
		m.h[i], m.h[min] = m.h[min], m.h[i]
		i = min
	}
}

// sameTerms reports, among each group of ids whose entries share a hash,
// those whose terms are the same term: a term stored twice, which a
// lookup finds under one id only.
func (c *checker) sameTerms(terms *bbolt.Bucket, shared [][]uint32) error {
	for _, group := range shared {
		seen := map[string]uint32{}
		for _, id := range group {
			var ik [4]byte
			idKey(&ik, id)
			v := terms.Get(ik[:])
			if v == nil {
				continue // an entry without a term: the counts say so
			}
			if first, ok := seen[string(v)]; ok {
				t, _ := decodeTerm(v)
				if err := c.problem("ids: term %d (%s) is stored again as term %d: a lookup finds one of them only", first, brief(t), id); err != nil {
					return err
				}
				continue
			}
			seen[string(v)] = id
		}
	}
	return nil
}

// lookUpTerms looks every term that is valid in its stored form up
// through the hash index, in batches sorted by hash, reporting those not
// found under their own id: what names the terms behind a difference
// between the index and the terms.
func (c *checker) lookUpTerms(tx *bbolt.Tx, terms *bbolt.Bucket, runs []*run) error {
	dict, err := newDictReader(tx, runs, true)
	if err != nil {
		return err
	}
	dict.pg = c.pg // counts each lookup's read
	lk := lookups{dict: dict, batch: make([]lookup, 0, lookupBatch)}
	cur := c.cursor(tx, terms)
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		c.pg.read()
		c.progress(1)
		if len(k) != 4 {
			continue
		}
		id := binary.BigEndian.Uint32(k)
		if id == 0 || id >= c.next {
			continue
		}
		t, err := decodeTerm(v)
		if err != nil {
			continue
		}
		if n, why := normTerm(t); why != "" || n != t || t.IsZero() || !bytes.Equal(appendTermCode(nil, t), v) {
			continue // reported by the dictionary pass
		}
		if len(lk.batch) == cap(lk.batch) {
			if err := lk.flush(c); err != nil {
				return err
			}
		}
		lk.batch = append(lk.batch, lookup{termHash(v), id})
	}
	if err := cursorErr(cur); err != nil {
		return err
	}
	return lk.flush(c)
}

// lookupBatch is how many terms the dictionary pass looks up at a time,
// in the order of their hashes.
const lookupBatch = 1 << 20

// lookups are the terms the dictionary pass has read and not yet looked up
// through the hash index. Looked up in the order they are read (by id),
// each would read a page of a hash-index run at random: the runs (a
// tenth of the file) would have to stay mapped for the pass to keep its
// pace. Sorted by hash, a batch reads each run from start to end, and
// reads no term again (dictReader.lookupKnown): the terms of a batch are
// spread over pages of the dictionary that are mapped again, each with
// its neighbours, when read out of order.
type lookups struct {
	dict  *dictReader
	batch []lookup
	bad   []uint32
}

type lookup struct {
	h  uint64
	id uint32
}

// flush looks up the batch, reporting the terms not found in the order of
// their ids, as they were read.
func (lk *lookups) flush(c *checker) error {
	slices.SortFunc(lk.batch, func(a, b lookup) int { return cmpUint64(a.h, b.h) })
	lk.bad = lk.bad[:0]
	for _, l := range lk.batch {
		// The term was read under l.id in this transaction: that entry
		// needs no second read of it.
		if lk.dict.lookupKnown(l.h, l.id) != l.id {
			lk.bad = append(lk.bad, l.id)
		}
	}
	lk.batch = lk.batch[:0]
	slices.Sort(lk.bad)
	for _, id := range lk.bad {
		var ik [4]byte
		idKey(&ik, id)
		t, _ := decodeTerm(lk.dict.terms.Get(ik[:]))
		if err := c.problem("ids: term %d (%s) is not found by its hash", id, brief(t)); err != nil {
			return err
		}
	}
	return c.ctx.Err()
}

// index checks one index's order, encoding and ids, counts its quads and
// takes their fingerprint.
func (c *checker) index(tx *bbolt.Tx, ind int) (uint64, error) {
	name := indexBuckets[ind]
	b := tx.Bucket([]byte(name))
	fp := &c.fps[ind]
	defer c.endPart()
	if ind == idxSPO {
		c.startPart("index "+name, "tuples", c.quads)
		return c.chunks(name, b, ind, fp, nil)
	}
	c.startPart("index "+name+": each run", "tuples", c.quads)
	// POS and OSP: runs, each checked on its own, then read merged to
	// see that no tuple is in two of them.
	var runs []quadRun
	cur := b.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		rb := b.Bucket(k)
		if v != nil || len(k) != 9 || rb == nil {
			if err := c.problem("index %s: key %x is not a run", name, k); err != nil {
				return 0, err
			}
			continue
		}
		r := quadRun{}
		copy(r.name[:], k)
		label := fmt.Sprintf("%s run %x", name, k)
		filter := runFilter(rb.Get([]byte(runFilterKey)))
		if filter != nil && !validRunFilter(filter) {
			if err := c.problem("index %s: filter of %d bytes, not a whole number of %d-byte blocks (it is derived from the run's tuples: `provgraph convert --rebuild-filters --db FILE` writes it again)", label, len(filter), filterBlock); err != nil {
				return 0, err
			}
			filter = nil
		}
		n, err := c.chunks(label, rb, ind, fp, filter)
		if err != nil {
			return 0, err
		}
		cnt := rb.Get([]byte(runCountKey))
		switch {
		case len(cnt) != 8:
			err = c.problem("index %s: no tuple count", label)
		case binary.BigEndian.Uint64(cnt) != n:
			err = c.problem("index %s: holds %d tuples, its count says %d", label, n, binary.BigEndian.Uint64(cnt))
		}
		if err != nil {
			return 0, err
		}
		r.n = n
		runs = append(runs, r)
	}
	var n uint64
	var prev tuple
	m := newRunMerge(b, runs, c.pg)
	m.seek(tuple{})
	c.endPart()
	c.startPart("index "+name+": the runs merged", "tuples", c.quads)
	for t, ok := m.next(); ok; t, ok = m.next() {
		c.progress(1)
		if n%65536 == 0 {
			if err := c.ctx.Err(); err != nil {
				return n, err
			}
		}
		if n > 0 && t.cmp(prev) <= 0 {
			if err := c.problem("index %s: quad %v is in two runs", name, unorder(ind, t)); err != nil {
				return n, err
			}
		}
		prev = t
		n++
	}
	return n, nil
}

// chunks checks the chunks of an index or run (order, encoding, ids, and
// that filter, when not nil, holds every prefix of the run's tuples),
// adds their quads to fp and counts them.
func (c *checker) chunks(name string, b *bbolt.Bucket, ind int, fp *fingerprint, filter runFilter) (uint64, error) {
	var n uint64
	var prev tuple
	var buf []tuple
	missing := 0 // prefixes the filter lacks
	var cur kvCursor = b.Cursor()
	if ind == idxSPO {
		cur = c.cursor(c.tx, b)
	}
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		c.pg.read()
		if err := c.ctx.Err(); err != nil {
			return n, err
		}
		if ind != idxSPO && (string(k) == runCountKey || string(k) == runFilterKey) {
			continue
		}
		var err error
		if buf, err = decodeChunk(buf[:0], k, v); err != nil {
			if err := c.problem("index %s: %v", name, err); err != nil {
				return n, err
			}
			continue
		}
		c.progress(len(buf))
		for _, t := range buf {
			if filter != nil {
				// Each distinct prefix once, as the writer added them.
				k := filterPrefix(ind)
				if (n == 0 || t[0] != prev[0] || k == 2 && t[1] != prev[1]) && !filter.has(prefixHash(t, k)) {
					missing++
				}
			}
			if n > 0 && t.cmp(prev) <= 0 {
				if err := c.problem("index %s: entry %v does not follow %v in order", name, t, prev); err != nil {
					return n, err
				}
			}
			prev = t
			n++
			q := unorder(ind, t)
			fp.add(q)
			if why := c.ids(q); why != "" {
				if err := c.problem("index %s: quad %v: %s", name, q, why); err != nil {
					return n, err
				}
			}
		}
	}
	if err := cursorErr(cur); err != nil {
		return n, err
	}
	if missing > 0 {
		return n, c.problem("index %s: its filter lacks %d of the prefixes of its tuples, so lookups would miss them (the filter is derived from the run's tuples: `provgraph convert --rebuild-filters --db FILE` writes it again)", name, missing)
	}
	return n, nil
}

// briefMax is how much of a term a problem shows.
const briefMax = 100

// brief formats t for a problem, cut short: a stored policy text runs to
// kilobytes.
func brief(t Term) string {
	s := t.String()
	if len(s) <= briefMax {
		return s
	}
	i := briefMax
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:i], len(t.Value))
}

// fingerprint sums a hash of each quad of an index, in two ways: two
// indexes with equal counts and no repeats hold the same quads when their
// fingerprints agree, but for a chance of about 2^-64 per difference.
type fingerprint struct{ sum, xor uint64 }

func (f *fingerprint) add(q ids4) {
	h := mix64(uint64(q[0])<<32|uint64(q[1])) ^ mix64(uint64(q[2])<<32|uint64(q[3])^0x9E3779B97F4A7C15)
	h = mix64(h)
	f.sum += h
	f.xor ^= mix64(h ^ 0xD6E8FEB86659FD93)
}

// mix64 is the finalizer of SplitMix64.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// ids says what is wrong with a quad's ids, or "".
func (c *checker) ids(q ids4) string {
	for i, id := range q {
		if id == 0 && i == 3 {
			continue // the default graph
		}
		if id == 0 || id >= c.next {
			return fmt.Sprintf("id %d is not in the dictionary", id)
		}
	}
	switch {
	case !c.kindsOK:
		return "" // the dictionary pass could not read every term
	case c.kinds[q[0]] == KindLiteral:
		return "the subject is a literal"
	case c.kinds[q[1]] != KindIRI:
		return "the predicate is not an IRI"
	case q[3] != 0 && c.kinds[q[3]] == KindLiteral:
		return "the graph is a literal"
	}
	return ""
}

// twinBatch is how many quads twins looks up at a time.
const twinBatch = 1 << 18

// twins checks that the POS and OSP indexes hold the quads of the SPO
// index: with equal counts and no repeats in any index, equal
// fingerprints say so. Only when they differ are the quads looked up one
// by one, in both directions, to name the ones missing.
func (c *checker) twins(tx *bbolt.Tx) error {
	for _, ind := range []int{idxPOS, idxOSP} {
		if c.fps[ind] == c.fps[idxSPO] {
			continue
		}
		before := len(c.problems)
		for _, dir := range [][2]int{{idxSPO, ind}, {ind, idxSPO}} {
			// A chunk that does not decode ends the lookups; the index
			// pass has reported it.
			if err := c.lacks(tx, dir[0], dir[1]); err != nil && !errors.Is(err, errBadChunk) {
				return err
			}
		}
		if len(c.problems) == before {
			if err := c.problem("index %s and index spo hold different quads (their fingerprints differ)", indexBuckets[ind]); err != nil {
				return err
			}
		}
	}
	return nil
}

// cursor returns a cursor for a walk of b, by pread when c has the file.
func (c *checker) cursor(tx *bbolt.Tx, b *bbolt.Bucket) kvCursor {
	if pc := newPageCursor(c.file, tx, b); pc != nil {
		return pc
	}
	return b.Cursor()
}

// lacks reports the quads of index from that index in lacks.
func (c *checker) lacks(tx *bbolt.Tx, from, in int) error {
	b := tx.Bucket([]byte(indexBuckets[in]))
	var finders []*finder
	if in == idxSPO {
		finders = append(finders, &finder{c: b.Cursor(), pg: c.pg})
	} else {
		cur := b.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if rb := b.Bucket(k); v == nil && rb != nil {
				finders = append(finders, &finder{c: rb.Cursor(), pg: c.pg})
			}
		}
	}
	batch := make([]tuple, 0, twinBatch)
	flush := func() error {
		slices.SortFunc(batch, tuple.cmp)
		for _, t := range batch {
			found := false
			for _, f := range finders {
				ok, err := f.has(t)
				if err != nil {
					return err
				}
				if ok {
					found = true
					break
				}
			}
			if !found {
				if err := c.problem("index %s lacks quad %v of index %s", indexBuckets[in], unorder(in, t), indexBuckets[from]); err != nil {
					return err
				}
			}
		}
		batch = batch[:0]
		return c.ctx.Err()
	}
	err := c.scan(tx, from, func(t tuple) error {
		batch = append(batch, order(in, unorder(from, t)))
		if len(batch) == twinBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// scan calls fn with every tuple of index ind in order, as scanIndex does
// over the whole index, counting each chunk read by c.pg.
func (c *checker) scan(tx *bbolt.Tx, ind int, fn func(tuple) error) error {
	b := tx.Bucket([]byte(indexBuckets[ind]))
	if ind == idxSPO {
		var buf []tuple
		cur := c.cursor(tx, b)
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			c.pg.read()
			var err error
			if buf, err = decodeChunk(buf[:0], k, v); err != nil {
				return err
			}
			for _, t := range buf {
				if err := fn(t); err != nil {
					return err
				}
			}
		}
		return cursorErr(cur)
	}
	runs, err := listQuadRuns(b)
	if err != nil {
		return err
	}
	m := newRunMerge(b, runs, c.pg)
	m.seek(tuple{})
	for t, ok := m.next(); ok; t, ok = m.next() {
		if err := fn(t); err != nil {
			return err
		}
	}
	return m.err
}

// finder answers membership for tuples asked in increasing order, decoding
// each chunk once.
type finder struct {
	pg          *pager // counts each chunk read
	c           *bbolt.Cursor
	chunk       []tuple
	lo, hi      tuple // the current chunk covers lo <= t < hi
	valid, last bool  // last: no chunk after the current one
}

func (f *finder) has(t tuple) (bool, error) {
	if !f.valid || t.cmp(f.lo) < 0 || (!f.last && t.cmp(f.hi) >= 0) {
		f.pg.read()
		k, v := seekChunk(f.c, t)
		if k == nil {
			return false, nil
		}
		var err error
		if f.chunk, err = decodeChunk(f.chunk[:0], k, v); err != nil {
			return false, err
		}
		f.lo, f.valid = keyTuple(k), true
		if nk, _ := f.c.Next(); nk != nil {
			if len(nk) != keySize {
				return false, fmt.Errorf("%w: key of %d bytes", errBadChunk, len(nk))
			}
			f.hi, f.last = keyTuple(nk), false
		} else {
			f.last = true
		}
		if t.cmp(f.lo) < 0 {
			return false, nil
		}
	}
	_, ok := slices.BinarySearchFunc(f.chunk, t, tuple.cmp)
	return ok, nil
}
