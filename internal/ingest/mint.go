package ingest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/provgraph/provgraph/internal/graph"
)

// IDBase is the namespace of instance nodes.
const IDBase = "https://w3id.org/provgraph/id/"

// mint returns the IRI of a node of the given kind, identified by fields:
// IDBase + kind + "/" + the first 128 bits of SHA-256 over the kind and the
// fields, each prefixed with its length, so that ("ab", "c") and ("a", "bc")
// never collide and the same content always gives the same node.
func mint(kind string, fields ...string) graph.Term {
	h := sha256.New()
	var n [8]byte
	write := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(kind)
	for _, f := range fields {
		write(f)
	}
	sum := h.Sum(nil)
	return graph.IRI(IDBase + kind + "/" + hex.EncodeToString(sum[:16]))
}

// AgentIRI is the node for provgraph itself, the agent of every
// normalization and ingest run.
var AgentIRI = graph.IRI(IDBase + "agent/provgraph")
