package graph

import (
	"bytes"
	"errors"
	"slices"

	"go.etcd.io/bbolt"
)

// A write transaction does two kinds of work: what needs the transaction
// (ids for new terms, the indexes' runs, the commit) and what does not
// (checking and encoding the quads, and looking up which of their terms
// are stored already). At ten million citations the second kind was a
// quarter of an ingest's CPU time, all of it on the one goroutine that
// writes, while the other core mostly waited. Prepare does it on the
// caller's goroutine, so that a loader prepares batch n+1 while batch n
// is being written.
//
// What Prepare looked up stays true: the dictionary only grows, and a
// term's id never changes. What it found absent may have been added since,
// by the transactions committed between its read transaction and the one
// that writes the batch. The Store keeps the terms each of its last few
// write transactions added (recentAdded); the writer resolves an absent
// term against those, which makes the result exactly a lookup's in its own
// transaction. When a transaction in between is not among them (another
// kind of write, or too many), the writer looks the batch up again.

// Prepared is a batch of quads checked, in stored form, with its terms
// encoded and, when Store.Prepare could, looked up. It is for one
// Store.AddPreparedWith; it is not safe to use from two goroutines.
type Prepared struct {
	quads []Quad   // the quads as given, for errors; nil from Store.Prepare
	n     int      // how many quads
	buf   []byte   // the terms' encodings, one after another
	ends  []int32  // by position 4*i+j: end of its encoding in buf
	ids   []uint32 // by position: the id found, absent, or 0 (not looked up)
	txid  int      // the committed transaction ids was read in; 0: none
	spent bool     // written by AddPreparedWith: its buffers are the next batch's
}

// Len is the number of quads in the batch.
func (p *Prepared) Len() int { return p.n }

// enc returns the encoding of the term at position pos: empty for the
// default graph, and for no other term (every encoding has a tag).
func (p *Prepared) enc(pos int) []byte {
	start := int32(0)
	if pos > 0 {
		start = p.ends[pos-1]
	}
	return p.buf[start:p.ends[pos]]
}

// prepare checks quads and encodes their terms in stored form, as Add
// would, into the buffers of spare when they are large enough. The
// Prepared keeps quads (not a copy) for the errors of a strict add.
func prepare(quads []Quad, spare prepBufs) (*Prepared, error) {
	p := &Prepared{quads: quads, n: len(quads)}
	p.ends = reuse(spare.ends, 4*len(quads))
	p.ids = reuse(spare.ids, 4*len(quads))
	clear(p.ids)
	size := 0
	for _, q := range quads {
		size += len(q.S.Value) + len(q.P.Value) + len(q.O.Value) + len(q.G.Value) + len(q.O.Datatype) + len(q.O.Lang) + 16
	}
	p.buf = reuse(spare.buf, size)[:0]
	for i, q := range quads {
		n, why := normQuad(q)
		if why != "" {
			return nil, &QuadError{Index: i, Quad: q, Reason: why}
		}
		for j, t := range [4]Term{n.S, n.P, n.O, n.G} {
			if !t.IsZero() {
				p.buf = appendTermCode(p.buf, t)
			}
			p.ends[4*i+j] = int32(len(p.buf))
		}
	}
	return p, nil
}

// reuse returns s resliced to n when its capacity allows, or a new slice
// of length n; the contents of a reused s are left as they were.
func reuse[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// prepBufs are the buffers of a Prepared whose batch is written, kept by
// the Store for the next batch. A loader's batches are alike in size, and
// a new batch's buffers (some 12 MB for 50,000 quads) were fresh memory
// each time: the first touch of their pages was a quarter of a
// million-citation ingest's page faults, all of them on the goroutine that
// prepares while the other writes.
type prepBufs struct {
	buf  []byte
	ends []int32
	ids  []uint32
}

// takeSpare returns the buffers a written batch left, or none.
func (s *Store) takeSpare() prepBufs {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	b := s.spare
	s.spare = prepBufs{}
	return b
}

// recycle keeps p's buffers for the next Prepare, once its batch is
// written (or failed): p is spent, and holds no quads after.
func (s *Store) recycle(p *Prepared) {
	b := prepBufs{p.buf[:0], p.ends[:0], p.ids[:0]}
	*p = Prepared{spent: true}
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if cap(b.buf) > cap(s.spare.buf) {
		s.spare = b
	}
}

// lookup looks up, in one lookupBatch of r, the terms of the positions
// that have no id yet and that known does not hold, and sets their ids:
// the id found, or absent. A term known holds gets its id when setKnown,
// and is left 0 otherwise (the writer's cache, which id consults first).
func (p *Prepared) lookup(r *dictReader, known map[string]uint32, setKnown bool, sc *lookupScratch) {
	es := sc.terms[:0]
	for pos := range p.ids {
		e := p.enc(pos)
		if len(e) == 0 || p.ids[pos] != 0 {
			continue
		}
		if id, ok := known[string(e)]; ok {
			if setKnown {
				p.ids[pos] = id
			}
			continue
		}
		es = append(es, batchTerm{termHash(e), int32(pos)})
	}
	enc := func(e batchTerm) []byte { return p.enc(int(e.pos)) }
	slices.SortFunc(es, func(a, b batchTerm) int {
		if c := cmpUint64(a.h, b.h); c != 0 {
			return c
		}
		return bytes.Compare(enc(a), enc(b))
	})
	// One lookup for each distinct term: its entries are adjacent.
	same := func(k int) bool { return k > 0 && es[k].h == es[k-1].h && bytes.Equal(enc(es[k]), enc(es[k-1])) }
	uniq := sc.uniq[:0]
	for k, e := range es {
		if !same(k) {
			uniq = append(uniq, enc(e))
		}
	}
	ids := slices.Grow(sc.ids[:0], len(uniq))[:len(uniq)]
	r.lookupBatch(uniq, ids, sc)
	u := -1
	for k, e := range es {
		if !same(k) {
			u++
		}
		p.ids[e.pos] = ids[u]
		if p.ids[e.pos] == 0 {
			p.ids[e.pos] = absent
		}
	}
	clear(uniq) // no slices of p.buf kept past the batch
	sc.terms, sc.uniq, sc.ids = es, uniq[:0], ids
}

// Prepare checks quads (as Add does: the first invalid one is a
// *QuadError inside the *Error) and looks their terms up in the store as
// it is now, on the calling goroutine, by pread. AddPreparedWith then
// writes them. Prepare may run while another goroutine adds: it is how a
// loader keeps both cores busy. Prepares are serialized with each other.
//
// A lookup that cannot be made cheaply (no file for pread, a hash index
// whose filters the Store does not hold for the last commit) is left to
// the writer, as are the errors of a damaged file: AddPreparedWith is then
// AddWith.
func (s *Store) Prepare(quads []Quad) (*Prepared, error) {
	if s.readOnly {
		return nil, &Error{Op: "add", Path: s.path, Err: ErrReadOnly}
	}
	p, err := prepare(quads, s.takeSpare())
	if err != nil {
		return nil, &Error{Op: "add", Path: s.path, Err: err}
	}
	p.quads = nil // the caller may reuse them
	if s.file == nil || p.n == 0 {
		return p, nil
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	err = s.view("prepare", func(tx *bbolt.Tx) error {
		s.rmu.Lock()
		rc := s.rc
		s.rmu.Unlock()
		if !rc.ok || rc.txid != tx.ID() || !runsFiltered(rc.runs) {
			return nil // the runs' filters would be read through the mapping
		}
		r, err := newDictReader(tx, rc.runs, true)
		if err != nil {
			return err
		}
		if s.prepKnown == nil {
			s.prepKnown = make(map[string]uint32)
		}
		r.preadFrom(tx, s.file)
		p.lookup(r, s.prepKnown, true, &s.prepScratch)
		r.preadDone()
		s.prepScratch.trim()
		// Found ids are true for good: keep them for the next batches'
		// recurring terms (predicates, classes, engines, policies).
		for pos, id := range p.ids {
			if id != 0 && id != absent {
				e := p.enc(pos)
				if _, ok := s.prepKnown[string(e)]; !ok {
					if len(s.prepKnown) >= hotTerms {
						clear(s.prepKnown)
					}
					s.prepKnown[string(e)] = id
				}
			}
		}
		p.txid = tx.ID()
		return nil
	})
	if err != nil {
		// The writer looks the batch up again and reports what it finds.
		clear(p.ids)
		p.txid = 0
	}
	return p, nil
}

// runsFiltered reports whether every run has its filter in memory.
func runsFiltered(runs []*run) bool {
	for _, r := range runs {
		if r.filter == nil {
			return false
		}
	}
	return true
}

// AddPreparedWith is AddWith for a batch made by Prepare. It writes p
// once: p is spent after, whatever the result, and its buffers serve the
// next Prepare. Writing a spent batch is an error that writes nothing.
func (s *Store) AddPreparedWith(p *Prepared, fn func(*Writer) error) (added int, err error) {
	if p.spent {
		return 0, &Error{Op: "add", Path: s.path, Err: errSpent}
	}
	defer s.recycle(p)
	return s.addPrepared(p, false, fn)
}

// errSpent is the error of writing a Prepared twice.
var errSpent = errors.New("the prepared batch was written already; prepare it again")

// recentAdded is what one committed write transaction added to the
// dictionary, for the batches prepared before it committed.
type recentAdded struct {
	txid  int
	added map[string]uint32
}

// recentKept is how many write transactions' additions the Store keeps:
// a loader prepares one batch ahead, so one or two are between a batch's
// preparation and its write.
const recentKept = 3

// since returns the additions of the transactions committed after txid
// and before the write transaction cur, or false when one of them is not
// kept.
func (s *Store) since(txid, cur int) ([]map[string]uint32, bool) {
	var out []map[string]uint32
	for t := txid + 1; t < cur; t++ {
		i := slices.IndexFunc(s.recent, func(r recentAdded) bool { return r.txid == t })
		if i < 0 {
			return nil, false
		}
		if len(s.recent[i].added) > 0 {
			out = append(out, s.recent[i].added)
		}
	}
	return out, true
}

// remember keeps what transaction txid added.
func (s *Store) remember(txid int, added map[string]uint32) {
	if len(s.recent) >= recentKept {
		s.recent = slices.Delete(s.recent, 0, 1)
	}
	s.recent = append(s.recent, recentAdded{txid, added})
}
