package graph

import (
	"context"
	"fmt"

	cgraph "github.com/cayleygraph/cayley/graph"
	"github.com/cayleygraph/cayley/graph/iterator"
	"github.com/cayleygraph/cayley/graph/refs"
	"github.com/cayleygraph/quad"
	"go.etcd.io/bbolt"
)

// Iterators of a CayleyStore. A quad scan reads its index range in pages
// of cayleyPage quads, each in its own read transaction, and starts the
// next page just after the last tuple read: no transaction stays open
// between calls, so an iterator that is never closed holds nothing, and
// Add and Close never wait for one. A lookup checks one quad or node at a
// time.

// cayleyQuads is the shape of the quads with node id at direction d, or
// of every quad when d is quad.Any.
type cayleyQuads struct {
	c  *CayleyStore
	d  quad.Direction
	id uint32
}

func (s *cayleyQuads) String() string {
	if s.d == quad.Any {
		return "ProvgraphQuadsAll"
	}
	return fmt.Sprintf("ProvgraphQuads(%v=%d)", s.d, s.id)
}

func (s *cayleyQuads) Iterate() iterator.Scanner {
	rg := quadRangeOf(s.d, s.id)
	return &quadScanner{c: s.c, rg: rg, next: rg.lo}
}

func (s *cayleyQuads) Lookup() iterator.Index {
	return &quadIndex{c: s.c, d: s.d, id: s.id}
}

func (s *cayleyQuads) Stats(ctx context.Context) (iterator.Costs, error) {
	var size refs.Size
	var err error
	if s.d == quad.Any {
		var st cgraph.Stats
		st, err = s.c.Stats(ctx, true)
		size = st.Quads
	} else {
		size, err = s.c.QuadIteratorSize(ctx, s.d, nodeRef(s.id))
	}
	return iterator.Costs{ContainsCost: 2, NextCost: 1, Size: size}, err
}

func (s *cayleyQuads) Optimize(ctx context.Context) (iterator.Shape, bool) { return s, false }

func (s *cayleyQuads) SubIterators() []iterator.Shape { return nil }

// quadScanner lists the quads of a quadRange.
type quadScanner struct {
	c    *CayleyStore
	rg   quadRange
	buf  []ids4 // the current page
	pos  int    // next quad of buf
	next tuple  // first tuple of the next page
	done bool   // no page after buf
	cur  quadRef
	has  bool
	err  error
}

func (it *quadScanner) Next(ctx context.Context) bool {
	for it.pos >= len(it.buf) {
		if it.done || it.err != nil {
			it.has = false
			return false
		}
		if err := ctx.Err(); err != nil {
			it.err = err
			return false
		}
		it.fill()
	}
	it.cur, it.has = quadRef(it.buf[it.pos]), true
	it.pos++
	return true
}

// fill reads the next page.
func (it *quadScanner) fill() {
	it.buf, it.pos = it.buf[:0], 0
	rg := it.rg
	full := false
	var last tuple
	err := it.c.s.view("cayley iterate", func(tx *bbolt.Tx) error {
		return scanIndex(tx, nil, rg.ind, it.next, rg.hi, func(t tuple) error {
			last = t
			if rg.g != 0 && t[3] != rg.g {
				return nil
			}
			it.buf = append(it.buf, unorder(rg.ind, t))
			if len(it.buf) >= cayleyPage {
				full = true
				return errStop
			}
			return nil
		})
	})
	if err != nil && err != errStop {
		it.err = fmt.Errorf("graph: cayley: scan of index %s: %w", indexBuckets[rg.ind], err)
		it.buf = it.buf[:0]
		return
	}
	if !full {
		it.done = true
		return
	}
	var ok bool
	if it.next, ok = successor(last); !ok {
		it.done = true
	}
}

// successor returns the tuple just after t, and false when t is the
// last possible one.
func successor(t tuple) (tuple, bool) {
	for i := len(t) - 1; i >= 0; i-- {
		if t[i]++; t[i] != 0 {
			return t, true
		}
	}
	return t, false
}

func (it *quadScanner) Result() cgraph.Ref {
	if !it.has {
		return nil
	}
	return it.cur
}

func (it *quadScanner) NextPath(ctx context.Context) bool    { return false }
func (it *quadScanner) TagResults(dst map[string]cgraph.Ref) {}
func (it *quadScanner) Err() error                           { return it.err }
func (it *quadScanner) String() string                       { return "ProvgraphQuadScan" }

func (it *quadScanner) Close() error {
	it.done, it.buf, it.pos, it.has = true, nil, 0, false
	return nil
}

// quadIndex checks quads against a cayleyQuads shape.
type quadIndex struct {
	c   *CayleyStore
	d   quad.Direction
	id  uint32
	cur quadRef
	has bool
	err error
}

func (it *quadIndex) Contains(ctx context.Context, v cgraph.Ref) bool {
	it.has = false
	q, ok := v.(quadRef)
	if !ok {
		return false
	}
	if it.d != quad.Any && q[dirIndex(it.d)] != it.id {
		return false
	}
	found, err := it.c.hasQuad(ids4(q))
	if err != nil {
		it.err = err
		return false
	}
	it.cur, it.has = q, found
	return found
}

// hasQuad reports whether the quad with ids q is stored.
func (c *CayleyStore) hasQuad(q ids4) (bool, error) {
	found := false
	err := c.s.view("cayley contains", func(tx *bbolt.Tx) error {
		return scanRange(tx.Bucket([]byte(indexBuckets[idxSPO])), tuple(q), tuple(q), func(tuple) error {
			found = true
			return errStop
		})
	})
	if err != nil && err != errStop {
		return false, err
	}
	return found, nil
}

func (it *quadIndex) Result() cgraph.Ref {
	if !it.has {
		return nil
	}
	return it.cur
}

func (it *quadIndex) NextPath(ctx context.Context) bool    { return false }
func (it *quadIndex) TagResults(dst map[string]cgraph.Ref) {}
func (it *quadIndex) Err() error                           { return it.err }
func (it *quadIndex) Close() error                         { return nil }

func (it *quadIndex) String() string {
	if it.d == quad.Any {
		return "ProvgraphQuadsAllContains"
	}
	return fmt.Sprintf("ProvgraphQuadsContains(%v=%d)", it.d, it.id)
}

// cayleyNodes is the shape of every node. Term ids are given in order
// from 1 and never dropped, so the nodes are the ids below the
// dictionary's next id.
type cayleyNodes struct {
	c *CayleyStore
}

func (s *cayleyNodes) String() string { return "ProvgraphNodesAll" }

func (s *cayleyNodes) Iterate() iterator.Scanner { return &nodeScanner{c: s.c} }

func (s *cayleyNodes) Lookup() iterator.Index { return &nodeIndex{c: s.c} }

func (s *cayleyNodes) Stats(ctx context.Context) (iterator.Costs, error) {
	st, err := s.c.Stats(ctx, true)
	return iterator.Costs{ContainsCost: 1, NextCost: 1, Size: st.Nodes}, err
}

func (s *cayleyNodes) Optimize(ctx context.Context) (iterator.Shape, bool) { return s, false }

func (s *cayleyNodes) SubIterators() []iterator.Shape { return nil }

// nextID reads the dictionary's next id.
func (c *CayleyStore) nextID() (uint32, error) {
	var n uint32
	err := c.s.view("cayley nodes", func(tx *bbolt.Tx) error {
		n = readCounters(tx).nextID
		return nil
	})
	return n, err
}

// nodeScanner lists the nodes stored when its first Next runs.
type nodeScanner struct {
	c       *CayleyStore
	end     uint32 // the next id when the scan started
	cur     uint32 // the current node, 0 before the first and after the last
	started bool
	err     error
}

func (it *nodeScanner) Next(ctx context.Context) bool {
	if !it.started {
		it.started = true
		if it.end, it.err = it.c.nextID(); it.err != nil {
			return false
		}
	}
	if it.err != nil || it.cur+1 >= it.end {
		it.cur = 0
		it.end = 0
		return false
	}
	if it.cur%4096 == 0 {
		if err := ctx.Err(); err != nil {
			it.err = err
			return false
		}
	}
	it.cur++
	return true
}

func (it *nodeScanner) Result() cgraph.Ref {
	if it.cur == 0 {
		return nil
	}
	return nodeRef(it.cur)
}

func (it *nodeScanner) NextPath(ctx context.Context) bool    { return false }
func (it *nodeScanner) TagResults(dst map[string]cgraph.Ref) {}
func (it *nodeScanner) Err() error                           { return it.err }
func (it *nodeScanner) String() string                       { return "ProvgraphNodeScan" }

func (it *nodeScanner) Close() error {
	it.started, it.cur, it.end = true, 0, 0
	return nil
}

// nodeIndex checks node refs: a nonzero id below the next id is a node.
type nodeIndex struct {
	c   *CayleyStore
	end uint32 // the next id when last read
	cur nodeRef
	err error
}

func (it *nodeIndex) Contains(ctx context.Context, v cgraph.Ref) bool {
	it.cur = 0
	id, err := it.c.nodeID(v)
	if err != nil || id == 0 {
		return false
	}
	if id >= it.end { // a node added since, or not a node
		if it.end, err = it.c.nextID(); err != nil {
			it.err = err
			return false
		}
		if id >= it.end {
			return false
		}
	}
	it.cur = nodeRef(id)
	return true
}

func (it *nodeIndex) Result() cgraph.Ref {
	if it.cur == 0 {
		return nil
	}
	return it.cur
}

func (it *nodeIndex) NextPath(ctx context.Context) bool    { return false }
func (it *nodeIndex) TagResults(dst map[string]cgraph.Ref) {}
func (it *nodeIndex) Err() error                           { return it.err }
func (it *nodeIndex) Close() error                         { return nil }
func (it *nodeIndex) String() string                       { return "ProvgraphNodesAllContains" }
