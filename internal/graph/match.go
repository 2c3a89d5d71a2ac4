package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/cayleygraph/cayley/graph"
	"github.com/cayleygraph/cayley/graph/iterator"
	ckv "github.com/cayleygraph/cayley/graph/kv"
	cproto "github.com/cayleygraph/cayley/graph/proto"
	"github.com/cayleygraph/quad"
)

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
	qs, err := s.reader("match")
	if err != nil {
		return err
	}
	var fnErr error
	err = s.scan(ctx, qs, pattern, true, func(q Quad) error {
		if fnErr = fn(q); fnErr != nil {
			return errStop
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return &Error{Op: "match", Path: s.path, Err: err}
	}
	return nil
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// Has reports whether q is stored, in exactly its graph (a zero G is the
// default graph). A quad that Add would reject is never stored.
func (s *Store) Has(q Quad) (bool, error) {
	qs, err := s.reader("has")
	if err != nil {
		return false, err
	}
	if _, why := normQuad(q); why != "" {
		return false, nil
	}
	err = s.scan(context.Background(), qs, q, false, func(Quad) error { return errStop })
	switch {
	case err == errStop:
		return true, nil
	case err != nil:
		return false, &Error{Op: "has", Path: s.path, Err: err}
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
func (s *Store) scan(ctx context.Context, qs *ckv.QuadStore, pattern Quad, anyGraph bool, fn func(Quad) error) error {
	ids, ok, err := resolve(ctx, qs, pattern)
	if err != nil || !ok {
		return err
	}
	it := plan(qs, ids).Iterate()
	defer it.Close()
	names := newNamer(qs)
	batch := make([]*cproto.Primitive, 0, scanBatch)
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		quads, err := names.quads(ctx, batch)
		if err != nil {
			return err
		}
		batch = batch[:0]
		for _, q := range quads {
			if err := fn(q); err != nil {
				return err
			}
		}
		return nil
	}
	for n := 1; it.Next(ctx); n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		p, ok := it.Result().(*cproto.Primitive)
		if !ok {
			return fmt.Errorf("cayley iterator returned %T, want a quad primitive", it.Result())
		}
		if !matches(p, ids, anyGraph) {
			continue
		}
		batch = append(batch, p)
		if len(batch) == scanBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	return flush()
}

// scanBatch is how many quads are converted with one read of their values.
const scanBatch = 256

// resolve looks up the node IDs of pattern's fixed terms, indexed like
// quad.Directions (0 for a wildcard). ok is false when some fixed term is
// not stored, or cannot occur at its position, so nothing can match.
func resolve(ctx context.Context, qs *ckv.QuadStore, pattern Quad) (ids [4]uint64, ok bool, err error) {
	terms := [4]*Term{&pattern.S, &pattern.P, &pattern.O, &pattern.G}
	names := [4]string{"subject", "predicate", "object", "graph"}
	var vals []quad.Value
	var dirs []int
	for i, t := range terms {
		if t.IsZero() {
			continue
		}
		n, why := normTerm(*t)
		if why != "" {
			return ids, false, fmt.Errorf("%w: pattern %s: %s", ErrInvalidQuad, names[i], why)
		}
		if (i != 2 && n.Kind == KindLiteral) || (i == 1 && n.Kind != KindIRI) {
			return ids, false, nil
		}
		vals = append(vals, toValue(n))
		dirs = append(dirs, i)
	}
	if len(vals) == 0 {
		return ids, true, nil
	}
	refs, err := qs.RefsOf(ctx, vals)
	if err != nil {
		return ids, false, err
	}
	for j, r := range refs {
		v, _ := r.(ckv.Int64Value)
		if v == 0 {
			return ids, false, nil
		}
		ids[dirs[j]] = uint64(v)
	}
	return ids, true, nil
}

// plan picks the index whose key starts with the most fixed directions.
// The indexes are subject-predicate, object-predicate-subject and
// predicate-subject (storeIndexes); scan filters the fixed directions an
// index does not cover, and the graph, which none covers.
func plan(qs *ckv.QuadStore, ids [4]uint64) iterator.Shape {
	sub, pred, obj := ids[0], ids[1], ids[2]
	scan := func(ind int, prefix ...uint64) iterator.Shape {
		return ckv.IndexScan{Index: storeIndexes[ind], Values: prefix}.BuildIterator(qs)
	}
	switch {
	case sub != 0 && pred != 0 && obj != 0:
		return scan(idxOPS, obj, pred, sub)
	case sub != 0 && pred != 0:
		return scan(idxSP, sub, pred)
	case obj != 0 && pred != 0:
		return scan(idxOPS, obj, pred)
	case sub != 0:
		return scan(idxSP, sub)
	case obj != 0:
		return scan(idxOPS, obj)
	case pred != 0:
		return scan(idxPS, pred)
	}
	return qs.QuadsAllIterator()
}

// matches reports whether p has the fixed node IDs of ids.
func matches(p *cproto.Primitive, ids [4]uint64, anyGraph bool) bool {
	if p.IsNode() || p.Deleted {
		return false
	}
	for i, d := range quad.Directions {
		if ids[i] == 0 && (i < 3 || anyGraph) {
			continue
		}
		if p.GetDirection(d) != ids[i] {
			return false
		}
	}
	return true
}

// namer converts quad primitives (four node IDs) to Quads, reading the
// values of a whole batch at once and caching them: predicates, classes
// and hub nodes repeat in almost every quad.
type namer struct {
	qs    *ckv.QuadStore
	cache map[uint64]Term
	refs  []graph.Ref
	want  []uint64
}

// namerCacheSize bounds the cache, which is dropped whole when full.
const namerCacheSize = 1 << 16

func newNamer(qs *ckv.QuadStore) *namer {
	return &namer{qs: qs, cache: make(map[uint64]Term)}
}

func (n *namer) quads(ctx context.Context, batch []*cproto.Primitive) ([]Quad, error) {
	if len(n.cache) > namerCacheSize {
		clear(n.cache)
	}
	n.refs, n.want = n.refs[:0], n.want[:0]
	for _, p := range batch {
		for _, d := range quad.Directions {
			id := p.GetDirection(d)
			if _, ok := n.cache[id]; ok || id == 0 {
				continue
			}
			n.cache[id] = Term{} // placeholder: requested once per batch
			n.refs = append(n.refs, ckv.Int64Value(id))
			n.want = append(n.want, id)
		}
	}
	if len(n.refs) > 0 {
		vals, err := n.qs.ValuesOf(ctx, n.refs)
		if err != nil {
			clear(n.cache)
			return nil, err
		}
		for i, v := range vals {
			if v == nil {
				clear(n.cache)
				return nil, fmt.Errorf("node %d is referenced by a quad but not stored", n.want[i])
			}
			t, err := fromValue(v)
			if err != nil {
				clear(n.cache)
				return nil, fmt.Errorf("node %d: %w", n.want[i], err)
			}
			n.cache[n.want[i]] = t
		}
	}
	out := make([]Quad, len(batch))
	for i, p := range batch {
		out[i] = Quad{
			S: n.cache[p.Subject],
			P: n.cache[p.Predicate],
			O: n.cache[p.Object],
			G: n.cache[p.Label],
		}
	}
	return out, nil
}
