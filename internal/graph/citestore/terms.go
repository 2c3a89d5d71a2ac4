package citestore

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/provgraph/provgraph/internal/graph"
)

// idSet is a set of term ids as a bitmap with a rank index: the position
// of an id among the set's ids, in id order, is a lookup and a popcount.
// It numbers densely what a scan keeps of a few ids among all of them, so
// that arrays are sized by what is kept (decoded terms, normalizations)
// instead of by the largest term id: at a million citations 7.5M ids,
// of which a third are decoded and one in eight is a normalization.
type idSet struct {
	bits []uint64
	rank []uint32 // rank[w]: how many ids of the set are below word w
}

func newIDSet(max graph.ID) idSet { return idSet{bits: make([]uint64, max/64+1)} }

// add puts ids in the set; several goroutines may add at once, until seal.
func (s *idSet) add(id graph.ID) {
	if id != 0 && int(id/64) < len(s.bits) {
		atomic.OrUint64(&s.bits[id/64], 1<<(id%64))
	}
}

// seal builds the rank index once every id is added, and returns the
// set's size.
func (s *idSet) seal() int {
	s.rank = make([]uint32, len(s.bits))
	n := 0
	for w, word := range s.bits {
		s.rank[w] = uint32(n)
		n += bits.OnesCount64(word)
	}
	return n
}

// index returns id's position in the sealed set, or false if it is not
// in it.
func (s *idSet) index(id graph.ID) (int, bool) {
	w := int(id / 64)
	if w >= len(s.bits) {
		return 0, false
	}
	bit := uint64(1) << (id % 64)
	word := s.bits[w]
	if word&bit == 0 {
		return 0, false
	}
	return int(s.rank[w]) + bits.OnesCount64(word&(bit-1)), true
}

// terms are the decoded terms of a scan, by term id: the bytes of every
// term laid end to end in blocks, and for the k-th decoded id (in id
// order) its block and where it ends there, as block<<32 | end. It starts
// where the one before it ends, in the same block, or at 0 in a new one.
// That is 8 bytes a decoded term, where a string by term id was 16 bytes
// an id (120 MB at a million citations, now about 20), and no pointer for
// the garbage collector to follow.
type terms struct {
	set    idSet
	ent    []uint64
	blocks [][]byte
	max    graph.ID
}

// at returns the term of id, or "" if it was not decoded. The block's
// bytes are never written again once decoded, so the string may point
// into them.
func (t *terms) at(id graph.ID) string {
	k, ok := t.set.index(id)
	if !ok {
		return ""
	}
	e := t.ent[k]
	blk, end := uint32(e>>32), uint32(e)
	start := uint32(0)
	if k > 0 && uint32(t.ent[k-1]>>32) == blk {
		start = uint32(t.ent[k-1])
	}
	if start == end {
		return ""
	}
	b := t.blocks[blk]
	return unsafe.String(&b[start], int(end-start))
}
