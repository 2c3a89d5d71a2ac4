package citestore

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestMapperKeepsSharedNodesAcrossTurnover: a node that citations keep
// sharing is described once, however many other nodes pass through the
// bounded set meanwhile. (The set used to be emptied when full, and the
// mapper then described every shared node again: quads the store had to
// look up only to skip.)
func TestMapperKeepsSharedNodesAcrossTurnover(t *testing.T) {
	m, err := NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	shared := Mint("raw", "https://shared.test/")
	if !m.first(shared) {
		t.Fatal("first(shared) = false on its first use")
	}
	var b [16]byte
	for i := range maxDescribed + maxDescribed/2 {
		binary.BigEndian.PutUint64(b[8:], uint64(i))
		m.first(graph.IRI("https://w3id.org/provgraph/id/raw/" + hex.EncodeToString(b[:])))
		if i%1000 == 0 && m.first(shared) {
			t.Fatalf("after %d other nodes, first(shared) = true: the shared node was forgotten", i)
		}
	}
	if n := len(m.described) + len(m.older); n > maxDescribed {
		t.Errorf("%d nodes remembered, want at most %d", n, maxDescribed)
	}
}

// TestMapperDescribesResolvedURLOnce: two retrievals that ended at the same
// URL each link to its node and say they generated it, and the node's own
// description (its types and text) is emitted once.
func TestMapperDescribesResolvedURLOnce(t *testing.T) {
	m, err := NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	var quads []graph.Quad
	for _, raw := range []string{"https://a.test/x", "https://a.test/y"} {
		r := &model.Record{RawURL: &raw, ObservedAt: "2026-01-01T00:00:00Z", Retrieval: &model.Retrieval{FinalURL: "https://a.test/final", FinalStatus: "200"}}
		if quads, _, err = m.Quads(quads, r); err != nil {
			t.Fatal(err)
		}
	}
	res := Mint("resolved", "https://a.test/final")
	count := map[string]int{}
	for _, q := range quads {
		if q.S == res {
			count[q.P.Value]++
		}
	}
	if count[vocab.RDFType] != 2 || count[vocab.Text] != 1 || count[vocab.ProvWasGeneratedBy] != 2 {
		t.Errorf("quads of the resolved node by predicate: %v; want 2 %s (one description), 1 %s, 2 %s (one per retrieval)", count, vocab.RDFType, vocab.Text, vocab.ProvWasGeneratedBy)
	}
}
