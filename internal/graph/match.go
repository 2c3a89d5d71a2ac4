package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
)

// matchCheckEvery is how many quads a Match reads between two looks at the
// file's mapped pages. An export of every quad of the ten-million-citation
// file mapped 4.6 GB of it in four minutes without them; a look costs
// about 1.3 µs, a quad's read about a microsecond.
const matchCheckEvery = 1024

// Match calls fn for every stored quad that matches pattern, where a zero
// Term matches anything. A zero G therefore matches every graph, the
// default one included; Has is the exact lookup. A pattern term that
// cannot occur at its position (a literal subject) matches nothing.
//
// A fixed subject, object or predicate is looked up in an index, so only
// the quads sharing it are read; only the all-zero pattern reads every
// quad. Within one index the order is stable but unspecified.
//
// If fn returns an error, Match stops and returns that error unchanged.
// fn runs inside a bbolt read transaction: it must not call Add or Close
// (a write that grows the file waits for every open read transaction, so
// it would wait for the Match that called it, forever).
func (s *Store) Match(ctx context.Context, pattern Quad, fn func(Quad) error) error {
	var fnErr error
	err := s.viewCalling("match", func(tx *bbolt.Tx, g *guard) error {
		defer s.limitReads(tx)
		// A long match (export's of every quad) reads pages all over the
		// file, which stay mapped until released: it looks at them every
		// matchCheckEvery quads, as a writer's pager does.
		pg := pager{db: s.db, limit: s.limit, onRelease: s.onReadRelease}
		n := 0
		return s.scan(ctx, tx, pattern, true, func(q Quad) error {
			if n++; n%matchCheckEvery == 0 {
				pg.check(tx.Size())
			}
			if fnErr = g.call(func() error { return fn(q) }); fnErr != nil {
				return errStop
			}
			return nil
		})
	})
	if fnErr != nil {
		return fnErr
	}
	return s.readError("match", err)
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// Has reports whether q is stored, in exactly its graph (a zero G is the
// default graph). A quad that Add would reject is never stored.
func (s *Store) Has(q Quad) (bool, error) {
	if _, why := normQuad(q); why != "" {
		return false, nil
	}
	err := s.view("has", func(tx *bbolt.Tx) error {
		return s.scan(context.Background(), tx, q, false, func(Quad) error { return errStop })
	})
	switch {
	case err == errStop:
		return true, nil
	case err != nil:
		var e *Error
		if !errors.As(err, &e) {
			err = &Error{Op: "has", Path: s.path, Err: err}
		}
		return false, err
	}
	return false, nil
}

// Objects returns the distinct objects of the quads with subject subj and
// predicate pred, in any graph, in index order. A zero Term is a wildcard.
func (s *Store) Objects(subj, pred Term) ([]Term, error) {
	return s.collect(Quad{S: subj, P: pred}, func(q Quad) Term { return q.O })
}

// Subjects returns the distinct subjects of the quads with predicate pred
// and object obj, in any graph, in index order. A zero Term is a wildcard.
func (s *Store) Subjects(pred, obj Term) ([]Term, error) {
	return s.collect(Quad{P: pred, O: obj}, func(q Quad) Term { return q.S })
}

func (s *Store) collect(pattern Quad, pick func(Quad) Term) ([]Term, error) {
	out := []Term{}
	seen := make(map[Term]bool)
	err := s.Match(context.Background(), pattern, func(q Quad) error {
		if t := pick(q); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scan calls fn for every quad matching pattern. With anyGraph a zero G is
// a wildcard; without it, it is the default graph.
func (s *Store) scan(ctx context.Context, tx *bbolt.Tx, pattern Quad, anyGraph bool, fn func(Quad) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ids, ok, err := s.resolve(tx, pattern)
	if err != nil || !ok {
		return err
	}
	names := newTermReader(tx)
	n := 0
	return scanIDs(tx, nil, ids, anyGraph, func(q ids4) error {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		quad, err := names.quad(q)
		if err != nil {
			return err
		}
		return fn(quad)
	})
}

// scanIDs calls fn with the ids of every quad whose ids equal the nonzero
// ids of pattern (a zero graph id is the default graph unless anyGraph).
// It reads the index whose order starts with the fixed positions: every
// combination of fixed subject, predicate and object is a prefix of one of
// SPO, POS and OSP.
func scanIDs(tx *bbolt.Tx, rc *runCache, pattern ids4, anyGraph bool, fn func(ids4) error) error {
	s, p, o := pattern[0] != 0, pattern[1] != 0, pattern[2] != 0
	ind, fixed := idxSPO, 0
	switch {
	case s && p && o:
		ind, fixed = idxSPO, 3
	case s && p:
		ind, fixed = idxSPO, 2
	case p && o:
		ind, fixed = idxPOS, 2
	case s && o:
		ind, fixed = idxOSP, 2
	case s:
		ind, fixed = idxSPO, 1
	case p:
		ind, fixed = idxPOS, 1
	case o:
		ind, fixed = idxOSP, 1
	}
	lo := order(ind, pattern)
	hi := lo
	for i := fixed; i < 4; i++ {
		lo[i], hi[i] = 0, 0xFFFFFFFF
	}
	g, wantG := pattern[3], pattern[3] != 0 || !anyGraph
	if fixed == 3 && wantG {
		lo[3], hi[3] = g, g
	}
	return scanIndex(tx, rc, ind, lo, hi, func(t tuple) error {
		if wantG && t[3] != g {
			return nil
		}
		return fn(unorder(ind, t))
	})
}

// resolve looks up the ids of pattern's fixed terms (0 for a wildcard).
// ok is false when some fixed term is not stored, or cannot occur at its
// position, so nothing can match.
func (s *Store) resolve(tx *bbolt.Tx, pattern Quad) (ids ids4, ok bool, err error) {
	var dict *dictReader
	for _, t := range [4]Term{pattern.S, pattern.P, pattern.O, pattern.G} {
		if !t.IsZero() {
			if dict, err = s.dict(tx); err != nil {
				return ids, false, err
			}
			break
		}
	}
	return resolveWith(dict, pattern)
}

// resolveWith is resolve with a dictionary reader (nil when every term of
// the pattern is a wildcard).
func resolveWith(dict *dictReader, pattern Quad) (ids ids4, ok bool, err error) {
	terms := [4]Term{pattern.S, pattern.P, pattern.O, pattern.G}
	names := [4]string{"subject", "predicate", "object", "graph"}
	var enc []byte
	for i, t := range terms {
		if t.IsZero() {
			continue
		}
		n, why := normTerm(t)
		if why != "" {
			return ids, false, fmt.Errorf("%w: pattern %s: %s", ErrInvalidQuad, names[i], why)
		}
		if (i != 2 && n.Kind == KindLiteral) || (i == 1 && n.Kind != KindIRI) {
			return ids, false, nil
		}
		enc = appendTermCode(enc[:0], n)
		if ids[i] = dict.lookup(enc); ids[i] == 0 {
			return ids, false, nil
		}
	}
	return ids, true, nil
}

// ID is a term's number in the store's dictionary, valid for the life of
// the file: ids are never reused or changed. The zero ID is no term.
type ID uint32

// Reader reads the store by term id inside one read transaction, for
// queries that read most of the graph: comparing and hashing ids is much
// cheaper than strings, and terms are decoded only when asked for.
type Reader struct {
	s     *Store
	tx    *bbolt.Tx
	dict  *dictReader
	names *termReader
	buf   []tuple
	runs  runCache // the runs of POS and OSP and their filters
	cnt   counters // checked against the file (validCounters)
	dmg   *damage  // what ID met, for Read to return
	// txTerms are the terms a write transaction added, by encoding, for
	// the Reader of its Writer: the derived data written after the quads
	// asks for the ids of the batch's new nodes, which a lookup would
	// find only by seeking in the hash index's runs.
	txTerms map[string]uint32
}

// guard is Store.guard for a Reader method. Each method that reads has its
// own, because query code calls Terms and QuadsIn on goroutines of its
// own, and a fault can only be turned into a panic on the goroutine that
// takes it.
//
// An error about the file's content that a method returns names the file:
// query code often returns it past Read.
func (r *Reader) guard(errp *error) *guard {
	g := r.s.guard("read", errp)
	g.name = true
	return g
}

// checkIDs returns an error wrapping ErrCorrupt when an id of q, decoded
// from index ind, is not in the dictionary: callers index arrays by id
// (MaxID).
func (r *Reader) checkIDs(ind int, q ids4) error {
	if max(q[0], q[1], q[2], q[3]) >= r.cnt.nextID {
		return corruptf("index %s holds quad %v, whose ids go beyond the dictionary's %d terms", indexBuckets[ind], q, r.cnt.nextID-1)
	}
	return nil
}

// Read calls fn with a Reader on a consistent snapshot of the store. The
// Reader must not be used after fn returns, nor by several goroutines,
// except for Terms and QuadsIn, which read with cursors of their own and
// so let a caller split a pass over the whole store among goroutines.
//
// A damaged file gives an *Error wrapping ErrCorrupt, whether the Reader
// met it in a method that returns errors or in one that does not (ID):
// Read returns it even when fn did not.
func (s *Store) Read(fn func(*Reader) error) error {
	var r *Reader
	err := s.viewCalling("read", func(tx *bbolt.Tx, g *guard) error {
		cnt, err := validCounters(tx)
		if err != nil {
			return err
		}
		d, err := s.dict(tx)
		if err != nil {
			return err
		}
		r = &Reader{s: s, tx: tx, dict: d, names: newTermReader(tx), cnt: cnt, dmg: new(damage)}
		r.runs.memo = &s.memo
		r.readOnce()
		return g.call(func() error { return fn(r) })
	})
	if r != nil {
		if d := r.dmg.get(); d != nil && (err == nil || !errors.Is(err, ErrCorrupt)) {
			err = d
		}
	}
	return s.readError("read", err)
}

// Snapshot identifies the committed state r reads: two Readers with
// the same Snapshot see the same database (bbolt's transaction id of the
// last commit before the read began).
func (r *Reader) Snapshot() uint64 { return uint64(r.tx.ID()) }

// ID returns the id of t, or 0 when t is not stored.
func (r *Reader) ID(t Term) (id ID) {
	n, why := normTerm(t)
	if why != "" || n.IsZero() {
		return 0
	}
	var err error
	defer func() {
		if err != nil {
			r.dmg.set(err)
			id = 0
		}
	}()
	g := r.guard(&err)
	defer g.done()
	code := appendTermCode(nil, n)
	if id, ok := r.txTerms[string(code)]; ok {
		return ID(id)
	}
	if id := r.s.ids.get(code); id != 0 && uint32(id) < r.cnt.nextID {
		return id
	}
	id = ID(r.dict.lookup(code))
	if id != 0 {
		r.s.ids.put(code, id)
	}
	return id
}

// Term returns the term with id. It is cached: looking up the same id
// twice is cheap.
func (r *Reader) Term(id ID) (t Term, err error) {
	g := r.guard(&err)
	defer g.done()
	return r.names.term(uint32(id))
}

// Decode is Term without the Reader's cache of decoded terms, for a
// caller that keeps its own (a lineage's reader keeps them by id, beside
// the id of each IRI): each term it decodes then takes one map entry, not
// two.
func (r *Reader) Decode(id ID) (t Term, err error) {
	g := r.guard(&err)
	defer g.done()
	return r.names.decode(uint32(id))
}

// Pairs calls fn with the subject and object of every quad with predicate
// pred (in any graph), in object order.
func (r *Reader) Pairs(ctx context.Context, pred ID, fn func(s, o ID)) (err error) {
	if pred == 0 {
		return nil
	}
	g := r.guard(&err)
	defer g.done()
	n := 0
	return scanIDs(r.tx, &r.runs, ids4{1: uint32(pred)}, true, func(q ids4) error {
		if n++; n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := r.checkIDs(idxPOS, q); err != nil {
			return err
		}
		g.inCaller = true
		fn(ID(q[0]), ID(q[2]))
		g.inCaller = false
		return nil
	})
}

// Terms calls fn with each id of ids (sorted, without repeats) and its
// term, reading the dictionary in order: much faster than Term for many
// ids. Several goroutines may call Terms at once, on disjoint ids.
func (r *Reader) Terms(ctx context.Context, ids []ID, fn func(ID, Term) error) (err error) {
	g := r.guard(&err)
	defer g.done()
	return r.termCodes(ctx, ids, func(id ID, enc []byte) error {
		t, err := decodeTerm(enc)
		if err != nil {
			return fmt.Errorf("term %d: %w", id, err)
		}
		return g.call(func() error { return fn(id, t) })
	})
}

// Values is Terms for callers that need only each term's value (Term.Value:
// the IRI, the blank node label or the lexical form): fn gets it as bytes
// that are valid only during the call, so that a caller decoding millions
// of terms can copy them where it likes instead of allocating a string
// each.
func (r *Reader) Values(ctx context.Context, ids []ID, fn func(ID, []byte) error) (err error) {
	g := r.guard(&err)
	defer g.done()
	var buf []byte
	return r.termCodes(ctx, ids, func(id ID, enc []byte) error {
		var err error
		if buf, err = appendTermValue(buf[:0], enc); err != nil {
			return fmt.Errorf("term %d: %w", id, err)
		}
		return g.call(func() error { return fn(id, buf) })
	})
}

// termCodes calls fn with each id of ids (sorted, without repeats) and
// the stored encoding of its term, walking the dictionary in order.
//
// A walk of many ids reads the dictionary's leaves by pread (pageCursor)
// when the transaction allows it: in id order they are random pages of
// the file, each read once. A few ids (a lineage's) are read through the
// mapping, whose pages stay mapped for the next read.
func (r *Reader) termCodes(ctx context.Context, ids []ID, fn func(ID, []byte) error) error {
	b := r.tx.Bucket([]byte(termsBucket))
	var c kvCursor
	if len(ids) >= preadWalk {
		c = r.s.readCursor(r.tx, b)
	} else {
		c = r.s.pointCursor(r.tx, b)
	}
	var key [4]byte
	var k, v []byte
	for i, id := range ids {
		if i%65536 == 65535 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if id == 0 {
			continue
		}
		idKey(&key, uint32(id))
		// Step forward while the next id is near; seek otherwise.
		for steps := 0; k != nil && bytes.Compare(k, key[:]) < 0 && steps < 16; steps++ {
			k, v = c.Next()
		}
		if k == nil || !bytes.Equal(k, key[:]) {
			k, v = c.Seek(key[:])
		}
		if k == nil || !bytes.Equal(k, key[:]) {
			if err := cursorErr(c); err != nil {
				return fmt.Errorf("reading term %d: %w", id, err)
			}
			return fmt.Errorf("term %d is %w", id, errMissingTerm)
		}
		if err := fn(id, v); err != nil {
			return err
		}
	}
	return nil
}

// Subjects calls fn with the subject of every quad with predicate pred and
// object obj (in any graph), in subject order.
func (r *Reader) Subjects(ctx context.Context, pred, obj ID, fn func(ID)) (err error) {
	if pred == 0 || obj == 0 {
		return nil
	}
	g := r.guard(&err)
	defer g.done()
	return scanIDs(r.tx, &r.runs, ids4{1: uint32(pred), 2: uint32(obj)}, true, func(q ids4) error {
		if err := r.checkIDs(idxPOS, q); err != nil {
			return err
		}
		g.inCaller = true
		fn(ID(q[0]))
		g.inCaller = false
		return nil
	})
}

// Objects calls fn with the object of every quad with subject subj and
// predicate pred (in any graph), in object order.
func (r *Reader) Objects(ctx context.Context, subj, pred ID, fn func(ID)) (err error) {
	if subj == 0 || pred == 0 {
		return nil
	}
	g := r.guard(&err)
	defer g.done()
	return scanIDs(r.tx, &r.runs, ids4{0: uint32(subj), 1: uint32(pred)}, true, func(q ids4) error {
		if err := r.checkIDs(idxSPO, q); err != nil {
			return err
		}
		g.inCaller = true
		fn(ID(q[2]))
		g.inCaller = false
		return nil
	})
}

// Describe calls fn with the predicate and object of every quad with
// subject subj (in any graph), in predicate, object order: Match with a
// fixed subject, by id, so that a caller reading node after node (a
// lineage) neither looks the subject up in the dictionary nor decodes
// terms it has decoded before.
func (r *Reader) Describe(ctx context.Context, subj ID, fn func(p, o ID)) (err error) {
	if subj == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	g := r.guard(&err)
	defer g.done()
	return scanIDs(r.tx, &r.runs, ids4{0: uint32(subj)}, true, func(q ids4) error {
		if err := r.checkIDs(idxSPO, q); err != nil {
			return err
		}
		g.inCaller = true
		fn(ID(q[1]), ID(q[2]))
		g.inCaller = false
		return nil
	})
}

// Incoming calls fn with the subject and predicate of every quad with
// object obj (in any graph), in subject, predicate order: one lookup in
// OSP for every link into a node, where a reader that needs several of
// them (a retrieval's citations, extractions and declarations) would ask
// POS once for each predicate.
func (r *Reader) Incoming(ctx context.Context, obj ID, fn func(s, p ID)) (err error) {
	if obj == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	g := r.guard(&err)
	defer g.done()
	return scanIDs(r.tx, &r.runs, ids4{2: uint32(obj)}, true, func(q ids4) error {
		if err := r.checkIDs(idxOSP, q); err != nil {
			return err
		}
		g.inCaller = true
		fn(ID(q[0]), ID(q[1]))
		g.inCaller = false
		return nil
	})
}

// Count returns how many quads the store holds. Read has checked the
// counter against the file's size, so that it can size arrays.
func (r *Reader) Count() int64 { return int64(r.cnt.quads) }

// MaxID returns the largest id in use: every id of the store is between 1
// and MaxID, so callers can index arrays by id. Read has checked it
// against the dictionary, and every method that returns ids checks them
// against it.
func (r *Reader) MaxID() ID { return ID(r.cnt.nextID - 1) }

// Quads calls fn with the ids of every quad (in any graph) in subject,
// predicate, object order: the quads of one subject come together, and
// subjects in increasing id order.
func (r *Reader) Quads(ctx context.Context, fn func(s, p, o ID)) (err error) {
	g := r.guard(&err)
	defer g.done()
	n := 0
	return scanIDs(r.tx, &r.runs, ids4{}, true, func(q ids4) error {
		if n++; n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := r.checkIDs(idxSPO, q); err != nil {
			return err
		}
		g.inCaller = true
		fn(ID(q[0]), ID(q[1]), ID(q[2]))
		g.inCaller = false
		return nil
	})
}

// QuadsIn is Quads for the subjects with ids in [from, to) only. Several
// goroutines may call QuadsIn at once: a pass over every quad splits into
// subject ranges read in parallel.
func (r *Reader) QuadsIn(ctx context.Context, from, to ID, fn func(s, p, o ID)) (err error) {
	lo, hi, ok := idRange(from, to)
	if !ok {
		return nil
	}
	g := r.guard(&err)
	defer g.done()
	n := 0
	return scanCursor(r.s.readCursor(r.tx, r.tx.Bucket([]byte(indexBuckets[idxSPO]))), lo, hi, func(t tuple) error {
		if n++; n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := r.checkIDs(idxSPO, ids4(t)); err != nil {
			return err
		}
		g.inCaller = true
		fn(ID(t[0]), ID(t[1]), ID(t[2]))
		g.inCaller = false
		return nil
	})
}

// IncomingIn is Incoming for every object with an id in [from, to), in
// object, subject, predicate order: one ranged walk of each OSP run
// instead of a lookup per object, for a reader that reads the links into
// a range of nodes minted together (a check of a view, a window of
// citations at a time). When fn returns SkipNode, the walk goes on from
// the next object; any other error ends it and is returned.
func (r *Reader) IncomingIn(ctx context.Context, from, to ID, fn func(o, s, p ID) error) (err error) {
	lo, hi, ok := idRange(from, to)
	if !ok {
		return nil
	}
	g := r.guard(&err)
	defer g.done()
	n := 0
	return scanIndex(r.tx, &r.runs, idxOSP, lo, hi, func(t tuple) error {
		if n++; n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		q := unorder(idxOSP, t)
		if err := r.checkIDs(idxOSP, q); err != nil {
			return err
		}
		g.inCaller = true
		err := fn(ID(q[2]), ID(q[0]), ID(q[1]))
		g.inCaller = false
		return err
	})
}

// idRange is the range of tuples whose first id is in [from, to) (from
// at least 1), and false when that is empty.
func idRange(from, to ID) (lo, hi tuple, ok bool) {
	from = max(from, 1)
	if to <= from {
		return lo, hi, false
	}
	return tuple{uint32(from)}, tuple{uint32(to - 1), 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, true
}

// Match is Store.Match within the Reader's transaction, sharing its
// dictionary lookups and its cache of decoded terms: much cheaper than
// Store.Match for a query that reads many small patterns.
func (r *Reader) Match(ctx context.Context, pattern Quad, fn func(Quad) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	g := r.guard(&err)
	defer g.done()
	ids, ok, err := resolveWith(r.dict, pattern)
	if err != nil || !ok {
		return err
	}
	return scanIDs(r.tx, &r.runs, ids, true, func(q ids4) error {
		quad, err := r.names.quad(q)
		if err != nil {
			return err
		}
		return g.call(func() error { return fn(quad) })
	})
}
