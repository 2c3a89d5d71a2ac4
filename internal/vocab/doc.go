// Package vocab holds, as string constants, the IRIs of the provgraph
// vocabulary (pg:) and of the external terms provgraph writes (rdf:, rdfs:,
// prov:, xsd:).
//
// # Basics
//
// ontology/provgraph.ttl is the source of truth for the pg: terms. vocab.go
// is generated from it: edit the .ttl, then run
//
//	go generate ./internal/vocab
//
// and never edit vocab.go by hand; the tests fail when it is stale. Each pg:
// constant is named by the term's local name with its first letter
// upper-cased (pg:inAnswer is InAnswer, pg:baseURL is BaseURL) and carries
// the term's rdfs:comment as its doc. The external terms are hand-written in
// external.go, prefixed with their vocabulary (ProvEntity, RDFType, XSDString).
//
// ontology/MODEL.md says which node gets which edges and how nodes are named.
//
// # Caveats
//
// The constants are plain IRIs: they say nothing about whether a literal or
// a node belongs in the object position. The .ttl gives each property's
// rdfs:range (an xsd: datatype for a datatype property).
//
// No class and property may differ only in the case of their first letter:
// both would get the same Go name, so the generator refuses them. This is why
// the edge from a citation to its retrieval is pg:retrievedIn, not
// pg:retrieval.
//
// The package imports nothing from provgraph, so every other package can use
// it.
package vocab

//go:generate go run ./gen -in ../../ontology/provgraph.ttl -out vocab.go
