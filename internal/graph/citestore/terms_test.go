package citestore

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

// TestIDSetIndex: an id's index in a sealed set is its position among the
// set's ids in id order, and an id outside the set (or past the largest
// id) is not found.
func TestIDSetIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const max = 5000
	s := newIDSet(max)
	var in []graph.ID
	for id := graph.ID(1); id <= max; id++ {
		if rng.IntN(3) == 0 {
			in = append(in, id)
		}
	}
	for _, i := range rng.Perm(len(in)) {
		s.add(in[i])
	}
	s.add(0) // never in a set
	if n := s.seal(); n != len(in) {
		t.Fatalf("seal: %d ids, want %d", n, len(in))
	}
	pos := map[graph.ID]int{}
	for k, id := range in {
		pos[id] = k
	}
	for id := graph.ID(0); id <= max+200; id++ {
		k, ok := s.index(id)
		want, wantOK := pos[id]
		if ok != wantOK || k != want {
			t.Fatalf("index(%d) = %d, %v; want %d, %v", id, k, ok, want, wantOK)
		}
	}
}

// TestTermsAt: terms laid end to end over several blocks (empty terms,
// a term larger than a block, the first term of a block) read back as
// decoded, and an id not decoded reads as "".
func TestTermsAt(t *testing.T) {
	big := string(make([]byte, decodeBlock+10))
	vals := map[graph.ID]string{3: "", 4: "a", 70: "bc", 71: "", 200: big, 201: "", 202: "z", 500: "tail"}
	tm := terms{set: newIDSet(600), max: 600}
	for id := range vals {
		tm.set.add(id)
	}
	tm.ent = make([]uint64, tm.set.seal())
	// Lay them out as decode does: a new block when a value does not fit.
	var block []byte
	blk := -1
	for _, id := range []graph.ID{3, 4, 70, 71, 200, 201, 202, 500} {
		v := vals[id]
		if blk < 0 || len(v) > cap(block)-len(block) {
			if blk >= 0 {
				tm.blocks[blk] = block
			}
			block = make([]byte, 0, max(16, len(v)))
			tm.blocks = append(tm.blocks, nil)
			blk++
		}
		block = append(block, v...)
		k, _ := tm.set.index(id)
		tm.ent[k] = uint64(blk)<<32 | uint64(len(block))
	}
	tm.blocks[blk] = block
	for id := graph.ID(0); id <= 600; id++ {
		if got := tm.at(id); got != vals[id] {
			t.Errorf("at(%d) = %.20q, want %.20q", id, got, vals[id])
		}
	}
}

// TestPredIRIsDistinct: the loader keeps a predicate as its pred number
// (pred.code), looked up by the predicate's term id, so two preds must
// never name the same IRI.
func TestPredIRIsDistinct(t *testing.T) {
	seen := map[string]pred{}
	for p, iri := range predIRIs {
		if iri == "" {
			t.Errorf("pred %d has no IRI", p)
		}
		if q, ok := seen[iri]; ok {
			t.Errorf("preds %d and %d both name %s", q, p, iri)
		}
		seen[iri] = pred(p)
	}
	if numPreds > 255 {
		t.Errorf("%d preds do not fit a byte code", numPreds)
	}
}

// TestSpan: span gives the objects of a predicate as all does, whether
// they are contiguous among the subject's pairs (a slice of objs) or not
// (a copy), and nothing for a predicate that was not read.
func TestSpan(t *testing.T) {
	l := &loader{}
	l.pid[pRetrievedIn], l.pid[pQualifiedRelation], l.pid[pCites] = 10, 11, 12
	// Subject 1: two retrievals together, then a relation; subject 2: a
	// retrieval, a relation, a retrieval; subject 3: nothing.
	l.preds = []uint8{pRetrievedIn.code(), pRetrievedIn.code(), pQualifiedRelation.code(),
		pRetrievedIn.code(), pQualifiedRelation.code(), pRetrievedIn.code()}
	l.objs = []graph.ID{100, 101, 102, 200, 201, 202}
	l.off = []uint32{0, 0, 3, 6, 6, 6}
	for _, tc := range []struct {
		pr   pred
		s    graph.ID
		want []graph.ID
	}{
		{pRetrievedIn, 1, []graph.ID{100, 101}},
		{pQualifiedRelation, 1, []graph.ID{102}},
		{pRetrievedIn, 2, []graph.ID{200, 202}},
		{pQualifiedRelation, 2, []graph.ID{201}},
		{pRetrievedIn, 3, nil},
		{pCites, 1, nil},
		{pHop, 1, nil}, // not read
		{pRetrievedIn, 0, nil},
		{pRetrievedIn, 9, nil},
	} {
		got := l.span(tc.pr, tc.s)
		if !slices.Equal(got, tc.want) || !slices.Equal(got, l.all(tc.pr, tc.s)) {
			t.Errorf("span(%d, %d) = %v, want %v (all: %v)", tc.pr, tc.s, got, tc.want, l.all(tc.pr, tc.s))
		}
	}
}
