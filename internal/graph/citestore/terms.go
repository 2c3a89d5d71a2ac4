package citestore

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/provgraph/provgraph/internal/cores"
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
	// The step logs decoded as their rules (decodeSteps): the k-th id of
	// steps reads as stepVals[stepIdx[k]].
	steps    idSet
	stepIdx  []uint32
	stepVals []string
}

// at returns the term of id, or "" if it was not decoded. The block's
// bytes are never written again once decoded, so the string may point
// into them.
func (t *terms) at(id graph.ID) string {
	k, ok := t.set.index(id)
	if !ok {
		if k, ok := t.steps.index(id); ok {
			return t.stepVals[t.stepIdx[k]]
		}
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

// stepLog is what the scan keeps of a step log (the JSON array of
// normalize.Step that ingest stores): one "rule" member for each rule it
// names, once each, in order, from which stepRules reads the same rules
// as from the whole log. The scan builds only Rules from a log (lineage's
// Reader parses it whole), and the rules, unlike the logs, which hold the
// URL's own values, repeat: at a million citations the logs were 69 MB
// of the 143 MB of decoded terms, and their rule lists, kept once each,
// are a few kilobytes and 4 bytes a log.
func stepLog(log []byte) string {
	var b strings.Builder
	for _, r := range stepRules(unsafe.String(unsafe.SliceData(log), len(log))) {
		b.WriteString(`"rule":"`)
		b.WriteString(r)
		b.WriteByte('"')
	}
	return b.String()
}

// decodeSteps decodes the step logs marked by wantSteps that no other
// want marked (those are decoded whole) as their stepLog, each distinct
// one kept once: terms.steps numbers them, terms.stepIdx gives each its
// value in terms.stepVals.
func (l *loader) decodeSteps() error {
	for w := range l.steps.bits {
		l.steps.bits[w] &^= l.names.set.bits[w]
	}
	n := l.steps.seal()
	need := make([]graph.ID, 0, n)
	for w, word := range l.steps.bits {
		for word != 0 {
			need = append(need, graph.ID(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	idx := make([]uint32, n)
	nw := cores.N()
	errs := make([]error, nw)
	vals := make([][]string, nw) // each core's distinct values, numbered from 0
	cores.Split(len(need), func(w, lo, hi int) {
		seen := map[string]uint32{}
		k := lo
		errs[w] = l.r.Values(l.ctx, need[lo:hi], func(id graph.ID, v []byte) error {
			if id != need[k] {
				return fmt.Errorf("citestore: decoding: term %d came for %d", id, need[k])
			}
			if (k-lo)%(releaseEvery/16) == releaseEvery/16-1 {
				l.r.ReleaseMapped(mappedLimit)
			}
			s := stepLog(v)
			j, ok := seen[s]
			if !ok {
				j = uint32(len(vals[w]))
				seen[s] = j
				vals[w] = append(vals[w], s)
			}
			idx[k] = j
			k++
			return nil
		})
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// One table for all cores: each core's numbers shifted past the
	// values of the cores before it (a value two cores found is kept
	// twice, which changes nothing read).
	base := make([]uint32, nw)
	var all []string
	for w, v := range vals {
		base[w] = uint32(len(all))
		all = append(all, v...)
	}
	cores.Split(len(need), func(w, lo, hi int) {
		for k := lo; k < hi; k++ {
			idx[k] += base[w]
		}
	})
	l.names.steps, l.names.stepIdx, l.names.stepVals = l.steps, idx, all
	l.steps = idSet{}
	return nil
}
