package graph

import (
	"context"
	"errors"
	"fmt"
	"math"

	cgraph "github.com/cayleygraph/cayley/graph"
	"github.com/cayleygraph/cayley/graph/iterator"
	"github.com/cayleygraph/cayley/graph/refs"
	"github.com/cayleygraph/quad"
	"go.etcd.io/bbolt"
)

// CayleyStore is a Store seen as a cayley quad store (cayley's
// graph.QuadStore), so that cayley's query layers (query/path, gizmo,
// shape) run on it. Get one with Store.Cayley.
//
// Node refs are term ids and quad refs the four ids of a quad; iterators
// read the SPO, POS and OSP indexes in pages of short read transactions,
// so an open iterator never holds up Add, and a quad added while a scan
// runs may or may not be seen by it.
//
// Values map to terms one to one: quad.IRI, quad.BNode, quad.LangString
// and quad.TypedString are the terms they name, and quad.String is an
// xsd:string literal (RDF 1.1: a simple literal is an xsd:string), which
// NameOf returns as a quad.String. Every other literal comes back as the
// quad.TypedString it is stored as, never parsed: "007"^^xsd:integer is
// not quad.Int(7). A cayley native value (quad.Int, quad.Float, quad.Bool,
// quad.Time) stands for the literal of its TypedString form when that
// form parses back to the same value; otherwise (a quad.Time with
// sub-second precision, which that form drops) ValueOf finds nothing and
// a write refuses it.
//
// Writes add quads through Store.Add. Deletes are refused with
// ErrAppendOnly.
type CayleyStore struct {
	s *Store
}

var (
	_ cgraph.QuadStore = (*CayleyStore)(nil)
	_ refs.BatchNamer  = (*CayleyStore)(nil)
	_ iterator.Shape   = (*cayleyQuads)(nil)
	_ iterator.Shape   = (*cayleyNodes)(nil)
	_ iterator.Scanner = (*quadScanner)(nil)
	_ iterator.Index   = (*quadIndex)(nil)
	_ iterator.Scanner = (*nodeScanner)(nil)
	_ iterator.Index   = (*nodeIndex)(nil)
	_ quad.WriteCloser = (*cayleyWriter)(nil)
	_ refs.Ref         = nodeRef(0)
	_ refs.Ref         = quadRef{}
)

// Cayley returns s as a cayley quad store. The CayleyStore does not own
// s: its Close does nothing, and s stays usable.
func (s *Store) Cayley() *CayleyStore { return &CayleyStore{s: s} }

// nodeRef is a node's term id (never 0).
type nodeRef uint32

func (r nodeRef) Key() any { return r }

// quadRef is a quad's term ids, in subject, predicate, object, graph order.
type quadRef ids4

func (r quadRef) Key() any { return r }

// cayleyPage is how many quads an iterator reads per read transaction.
const cayleyPage = 1024

// valueTerm returns the term that v stands for, in stored form, or a
// reason why no term does. A nil v is the zero Term.
func valueTerm(v quad.Value) (Term, string) {
	var t Term
	switch tv := v.(type) {
	case nil:
		return Term{}, ""
	case quad.IRI:
		t = IRI(string(tv))
	case quad.BNode:
		t = Blank(string(tv))
	case quad.String:
		t = String(string(tv))
	case quad.TypedString:
		if tv.Type == "" {
			return Term{}, fmt.Sprintf("%v: TypedString without a datatype", v)
		}
		t = Literal(string(tv.Value), string(tv.Type))
	case quad.LangString:
		// Not LangString(): a tag that is not lowercase would come back
		// different, so it is refused instead.
		t = Term{Kind: KindLiteral, Value: string(tv.Value), Datatype: RDFLangStr, Lang: tv.Lang}
	case quad.TypedStringer:
		ts := tv.TypedString()
		back, err := ts.ParseValue()
		if err != nil || !sameValue(v, back) {
			return Term{}, fmt.Sprintf("%T value %v has no exact literal form (its TypedString %v reads back as %v)", v, v, ts, back)
		}
		// cayley names the datatype in short form (xsd:integer).
		t = Literal(string(ts.Value), string(ts.Type.Full()))
	default:
		return Term{}, fmt.Sprintf("cayley value type %T is not an RDF term", v)
	}
	n, why := normTerm(t)
	if why != "" {
		return Term{}, fmt.Sprintf("%v: %s", v, why)
	}
	return n, ""
}

// sameValue reports whether a native value and its parsed TypedString
// form are the same value.
func sameValue(v, back quad.Value) bool {
	if e, ok := v.(quad.Equaler); ok {
		return e.Equal(back)
	}
	return v == back
}

// termValue is the value NameOf returns for a stored term (see
// CayleyStore).
func termValue(t Term) quad.Value {
	switch t.Kind {
	case KindIRI:
		return quad.IRI(t.Value)
	case KindBlank:
		return quad.BNode(t.Value)
	case KindLiteral:
		switch {
		case t.Lang != "":
			return quad.LangString{Value: quad.String(t.Value), Lang: t.Lang}
		case t.Datatype == XSDString:
			return quad.String(t.Value)
		}
		return quad.TypedString{Value: quad.String(t.Value), Type: quad.IRI(t.Datatype)}
	}
	return nil
}

// lookupValue returns the id of the term v stands for, or 0.
func (c *CayleyStore) lookupValue(tx *bbolt.Tx, d **dictReader, v quad.Value) (uint32, error) {
	t, why := valueTerm(v)
	if why != "" || t.IsZero() {
		return 0, nil
	}
	if *d == nil {
		var err error
		if *d, err = c.s.dict(tx); err != nil {
			return 0, err
		}
	}
	return (*d).lookup(appendTermCode(nil, t)), nil
}

// ValueOf returns the ref of the node v, or nil when no quad uses it (or
// v stands for no term: see CayleyStore).
func (c *CayleyStore) ValueOf(v quad.Value) (cgraph.Ref, error) {
	if v == nil {
		return nil, nil
	}
	var id uint32
	err := c.s.view("cayley value of", func(tx *bbolt.Tx) error {
		var d *dictReader
		var err error
		id, err = c.lookupValue(tx, &d, v)
		return err
	})
	if err != nil || id == 0 {
		return nil, err
	}
	return nodeRef(id), nil
}

// RefsOf returns the refs of nodes, failing when one is not stored.
func (c *CayleyStore) RefsOf(ctx context.Context, nodes []quad.Value) ([]cgraph.Ref, error) {
	out := make([]cgraph.Ref, len(nodes))
	err := c.s.view("cayley refs of", func(tx *bbolt.Tx) error {
		var d *dictReader
		for i, v := range nodes {
			if err := ctx.Err(); err != nil {
				return err
			}
			id, err := c.lookupValue(tx, &d, v)
			if err != nil {
				return err
			}
			if id == 0 {
				return fmt.Errorf("not found: %v", v)
			}
			out[i] = nodeRef(id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// NameOf returns the value of a node ref, or nil when r is nil or names no
// node.
func (c *CayleyStore) NameOf(r cgraph.Ref) (quad.Value, error) {
	vals, err := c.ValuesOf(context.Background(), []cgraph.Ref{r})
	if err != nil {
		return nil, err
	}
	return vals[0], nil
}

// ValuesOf returns the values of node refs; nil refs, and refs that name
// no node, give nil.
func (c *CayleyStore) ValuesOf(ctx context.Context, rs []cgraph.Ref) ([]quad.Value, error) {
	out := make([]quad.Value, len(rs))
	var ids []int
	for i, r := range rs {
		switch r := r.(type) {
		case nil:
		case refs.PreFetchedValue:
			out[i] = r.NameOf()
		case nodeRef:
			ids = append(ids, i)
		default:
			return nil, fmt.Errorf("graph: cayley values of: ref %#v (%T) is not a node of this store", r, r)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	err := c.s.view("cayley values of", func(tx *bbolt.Tx) error {
		n := readCounters(tx).nextID
		names := newTermReader(tx)
		for _, i := range ids {
			if err := ctx.Err(); err != nil {
				return err
			}
			id := uint32(rs[i].(nodeRef))
			if id == 0 || id >= n {
				continue
			}
			t, err := names.term(id)
			if err != nil {
				return err
			}
			out[i] = termValue(t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Quad returns the quad of a quad ref.
func (c *CayleyStore) Quad(r cgraph.Ref) (quad.Quad, error) {
	q, ok := r.(quadRef)
	if !ok {
		return quad.Quad{}, fmt.Errorf("graph: cayley quad: ref %#v (%T) is not a quad of this store", r, r)
	}
	var out Quad
	err := c.s.view("cayley quad", func(tx *bbolt.Tx) error {
		var err error
		out, err = newTermReader(tx).quad(ids4(q))
		return err
	})
	if err != nil {
		return quad.Quad{}, err
	}
	return quad.Quad{Subject: termValue(out.S), Predicate: termValue(out.P), Object: termValue(out.O), Label: termValue(out.G)}, nil
}

// dirIndex is the position of direction d in ids4, or -1.
func dirIndex(d quad.Direction) int {
	switch d {
	case quad.Subject:
		return 0
	case quad.Predicate:
		return 1
	case quad.Object:
		return 2
	case quad.Label:
		return 3
	}
	return -1
}

// QuadDirection returns the node at direction d of a quad ref: nil for
// the label of a quad in the default graph.
func (c *CayleyStore) QuadDirection(r cgraph.Ref, d quad.Direction) (cgraph.Ref, error) {
	q, ok := r.(quadRef)
	if !ok {
		return nil, fmt.Errorf("graph: cayley quad direction: ref %#v (%T) is not a quad of this store", r, r)
	}
	i := dirIndex(d)
	if i < 0 {
		return nil, fmt.Errorf("graph: cayley quad direction: unknown direction %v", d)
	}
	if q[i] == 0 {
		return nil, nil
	}
	return nodeRef(q[i]), nil
}

// Stats returns the number of nodes and quads, both exact: the store
// never deletes, so every term of the dictionary is used by a quad.
func (c *CayleyStore) Stats(ctx context.Context, exact bool) (cgraph.Stats, error) {
	var cnt counters
	err := c.s.view("cayley stats", func(tx *bbolt.Tx) error {
		cnt = readCounters(tx)
		return nil
	})
	if err != nil {
		return cgraph.Stats{}, err
	}
	return cgraph.Stats{
		Nodes: refs.Size{Value: int64(cnt.nextID) - 1, Exact: true},
		Quads: refs.Size{Value: int64(cnt.quads), Exact: true},
	}, nil
}

// nodeID returns the term id of a node ref.
func (c *CayleyStore) nodeID(r cgraph.Ref) (uint32, error) {
	switch r := r.(type) {
	case nodeRef:
		return uint32(r), nil
	case refs.PreFetchedValue:
		v, err := c.ValueOf(r.NameOf())
		if v == nil || err != nil {
			return 0, err
		}
		return uint32(v.(nodeRef)), nil
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("graph: cayley: ref %#v (%T) is not a node of this store", r, r)
}

// QuadIterator returns the quads with node r at direction d. Subject,
// predicate and object read one index range; there is no index by graph,
// so a label reads every quad.
func (c *CayleyStore) QuadIterator(d quad.Direction, r cgraph.Ref) iterator.Shape {
	id, err := c.nodeID(r)
	switch {
	case err != nil:
		return iterator.NewError(err)
	case id == 0:
		return iterator.NewNull()
	case dirIndex(d) < 0:
		return iterator.NewError(fmt.Errorf("graph: cayley quad iterator: unknown direction %v", d))
	}
	return &cayleyQuads{c: c, d: d, id: id}
}

// QuadsAllIterator returns every quad, in SPO order.
func (c *CayleyStore) QuadsAllIterator() iterator.Shape {
	return &cayleyQuads{c: c, d: quad.Any}
}

// NodesAllIterator returns every node, in order of first appearance.
func (c *CayleyStore) NodesAllIterator() iterator.Shape {
	return &cayleyNodes{c: c}
}

// sizeProbe is how many quads of an index range QuadIteratorSize decodes
// before it estimates the rest from the number of chunks.
const sizeProbe = 4096

// QuadIteratorSize returns the number of quads with node r at direction
// d: exact for up to a few thousand quads, estimated beyond from the
// index chunks left in the range.
func (c *CayleyStore) QuadIteratorSize(ctx context.Context, d quad.Direction, r cgraph.Ref) (refs.Size, error) {
	id, err := c.nodeID(r)
	if err != nil || id == 0 {
		return refs.Size{Value: 0, Exact: err == nil}, err
	}
	rg := quadRangeOf(d, id)
	if rg.g != 0 {
		st, err := c.Stats(ctx, false)
		return refs.Size{Value: st.Quads.Value, Exact: false}, err
	}
	var size refs.Size
	err = c.s.view("cayley quad iterator size", func(tx *bbolt.Tx) error {
		var err error
		size, err = indexRangeSize(tx, rg.ind, rg.lo, rg.hi)
		return err
	})
	return size, err
}

// indexRangeSize is rangeSize for index ind: over the runs of POS and OSP
// whose filters may hold the range (the sum is exact only if every part
// is).
func indexRangeSize(tx *bbolt.Tx, ind int, lo, hi tuple) (refs.Size, error) {
	b := tx.Bucket([]byte(indexBuckets[ind]))
	if ind == idxSPO {
		return rangeSize(b, lo, hi)
	}
	x, err := loadIndexRuns(b, ind, nil)
	if err != nil {
		return refs.Size{}, err
	}
	sum := refs.Size{Exact: true}
	for _, r := range x.mayHold(lo, hi) {
		n, err := rangeSize(r.b, lo, hi)
		if err != nil {
			return refs.Size{}, err
		}
		sum.Value += n.Value
		sum.Exact = sum.Exact && n.Exact
	}
	return sum, nil
}

// rangeSize counts the tuples of b in [lo, hi]. Past sizeProbe of them
// it counts the remaining chunks without decoding them and estimates
// their tuples from the chunks decoded so far.
func rangeSize(b *bbolt.Bucket, lo, hi tuple) (refs.Size, error) {
	c := b.Cursor()
	var n, decoded, rest int64
	var buf []tuple
	for k, v := seekChunk(c, lo); k != nil; k, v = c.Next() {
		if len(k) == keySize && keyTuple(k).cmp(hi) > 0 {
			break
		}
		if n >= sizeProbe {
			rest++
			continue
		}
		var err error
		if buf, err = decodeChunk(buf[:0], k, v); err != nil {
			return refs.Size{}, err
		}
		decoded++
		for _, t := range buf {
			if t.cmp(lo) >= 0 && t.cmp(hi) <= 0 {
				n++
			}
		}
	}
	if rest == 0 {
		return refs.Size{Value: n, Exact: true}, nil
	}
	return refs.Size{Value: n + rest*n/decoded, Exact: false}, nil
}

// quadRange is the index range of the quads of a cayleyQuads.
type quadRange struct {
	ind    int
	lo, hi tuple
	g      uint32 // nonzero: only quads in this graph (a filter, not a range)
}

func quadRangeOf(d quad.Direction, id uint32) quadRange {
	all := quadRange{ind: idxSPO, hi: tuple{math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32}}
	switch d {
	case quad.Subject:
		return quadRange{ind: idxSPO, lo: tuple{id}, hi: tuple{id, math.MaxUint32, math.MaxUint32, math.MaxUint32}}
	case quad.Predicate:
		return quadRange{ind: idxPOS, lo: tuple{id}, hi: tuple{id, math.MaxUint32, math.MaxUint32, math.MaxUint32}}
	case quad.Object:
		return quadRange{ind: idxOSP, lo: tuple{id}, hi: tuple{id, math.MaxUint32, math.MaxUint32, math.MaxUint32}}
	case quad.Label:
		all.g = id
	}
	return all
}

// Close does nothing: the Store belongs to whoever opened it.
func (c *CayleyStore) Close() error { return nil }

// ErrAppendOnly is returned by CayleyStore.ApplyDeltas (and so by cayley's
// writers) for a delete. The store is append-only by design: it holds
// provenance evidence, which is never deleted or rewritten, so a quad once
// added stays and nothing of the batch is applied.
var ErrAppendOnly = errors.New("store is append-only: quads are never deleted")

// ApplyDeltas applies a batch atomically: every delta must be an add. A
// delete fails the batch with a *cayley DeltaError wrapping ErrAppendOnly.
// Without opts.IgnoreDup, adding a quad that is already stored fails the
// batch with a DeltaError whose Err is cayley's ErrQuadExists (repeats
// within the batch are allowed, as in cayley's memstore). A quad the
// store refuses fails it with a DeltaError wrapping ErrInvalidQuad.
func (c *CayleyStore) ApplyDeltas(in []cgraph.Delta, opts cgraph.IgnoreOpts) error {
	quads := make([]Quad, len(in))
	for i, d := range in {
		switch d.Action {
		case cgraph.Add:
		case cgraph.Delete:
			return &cgraph.DeltaError{Delta: d, Err: &Error{Op: "cayley delete", Path: c.s.path, Err: ErrAppendOnly}}
		default:
			return &cgraph.DeltaError{Delta: d, Err: cgraph.ErrInvalidAction}
		}
		q, err := c.quadTerms(d.Quad, i)
		if err != nil {
			return &cgraph.DeltaError{Delta: d, Err: err}
		}
		quads[i] = q
	}
	_, err := c.s.add(quads, !opts.IgnoreDup)
	var se *storedError
	var qe *QuadError
	switch {
	case errors.As(err, &se):
		return &cgraph.DeltaError{Delta: in[se.Index], Err: cgraph.ErrQuadExists}
	case errors.As(err, &qe):
		return &cgraph.DeltaError{Delta: in[qe.Index], Err: err}
	}
	return err
}

// quadTerms converts the i-th quad of a batch.
func (c *CayleyStore) quadTerms(q quad.Quad, i int) (Quad, error) {
	var out Quad
	for _, f := range []struct {
		v    quad.Value
		t    *Term
		name string
	}{{q.Subject, &out.S, "subject"}, {q.Predicate, &out.P, "predicate"}, {q.Object, &out.O, "object"}, {q.Label, &out.G, "graph"}} {
		t, why := valueTerm(f.v)
		if why != "" {
			return Quad{}, &Error{Op: "cayley add", Path: c.s.path, Err: &QuadError{Index: i, Quad: out, Reason: f.name + ": " + why}}
		}
		*f.t = t
	}
	return out, nil
}

// cayleyBatch is how many quads a writer from NewQuadWriter adds per
// transaction.
const cayleyBatch = 10000

// NewQuadWriter returns a writer that adds quads in batches of 10,000
// (one transaction each), skipping quads already stored. Close adds the
// last batch. A quad that cannot be stored fails WriteQuad or WriteQuads
// at once, before anything of its batch is written.
func (c *CayleyStore) NewQuadWriter() (quad.WriteCloser, error) {
	return &cayleyWriter{c: c}, nil
}

type cayleyWriter struct {
	c   *CayleyStore
	buf []Quad
	err error
}

func (w *cayleyWriter) WriteQuad(q quad.Quad) error {
	_, err := w.WriteQuads([]quad.Quad{q})
	return err
}

func (w *cayleyWriter) WriteQuads(qs []quad.Quad) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	for i, q := range qs {
		t, err := w.c.quadTerms(q, i)
		if err != nil {
			return i, err
		}
		w.buf = append(w.buf, t)
		if len(w.buf) >= cayleyBatch {
			if err := w.flush(); err != nil {
				return i, err
			}
		}
	}
	return len(qs), nil
}

func (w *cayleyWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	// Quads of any shape can change what a view derives from: the views
	// go, in the same transaction, until rebuilt.
	_, err := w.c.s.AddWith(w.buf, dropViews)
	w.buf = w.buf[:0]
	if err != nil {
		w.err = err
	}
	return err
}

func (w *cayleyWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.flush()
}
