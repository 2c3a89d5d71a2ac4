package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
)

// IDBase is the namespace of instance nodes. Every node provgraph writes is
// IDBase + kind + "/" + 32 hex digits (Mint), never an IRI made from a URL,
// so every IRI in the data is valid whatever the raw URLs contained; the
// graph's term codec stores such IRIs in 17 bytes.
const IDBase = "https://w3id.org/provgraph/id/"

// AgentIRI is the node for provgraph itself, the agent of every
// normalization, ingest, resolve run and export.
const AgentIRI = IDBase + "agent/provgraph"

// Mint returns the IRI of a node of the given kind, identified by fields:
// IDBase + kind + "/" + the first 128 bits of SHA-256 over the kind and the
// fields, each prefixed with its length as 8 big-endian bytes, so that
// ("ab", "c") and ("a", "bc") never collide and the same content always
// gives the same node (ontology/MODEL.md rule 2). Ingest and export both
// mint with it, so an export's nodes follow the rule the store's do.
func Mint(kind string, fields ...string) string {
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
	return IDBase + kind + "/" + hex.EncodeToString(h.Sum(nil)[:16])
}

// RetrievalIRI is the node of a retrieval of raw: minted from the raw text
// and the canonical JSON of the retrieval, so that the citations of one
// raw URL share one fetch and a fetch at another time is another node.
// It is a retrieval's identity for every backend (store.Evidence).
func RetrievalIRI(raw string, rt *Retrieval) string {
	canon, _ := json.Marshal(rt)
	return Mint("retrieval", raw, string(canon))
}
