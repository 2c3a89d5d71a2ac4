// Package model holds provgraph's domain nouns, each defined once: the
// citation observation (Record, Retrieval, Hop, Canonical, Relation) as the
// JSON Lines input gives it, with its closed vocabularies (relation kinds
// and evidence, canonical sources, retrieval outcomes); the fetch policy a
// resolve run follows; the policy reference (PolicyRef); the review-group
// verdicts with their one description and the default bound on shared
// evidence (DefaultMaxShared); and the namespace and minting rule of
// instance node IRIs (IDBase, Mint).
//
// Every other package (ingest, resolve, query, export, synth,
// cmd/provgraph, the bench tools) takes these from here, so a noun cannot
// drift between a writer and a reader. Parsing and validating an input line
// is internal/ingest's (ParseRecord); the read side's views of stored
// citations (query.Citation, query.Retrieval) are internal/query's, and
// embed these nouns where their JSON allows.
//
// # Caveats
//
// model imports no other provgraph package but internal/vocab (for the
// relation kinds' classes): it is the bottom of the dependency graph, so
// that the HTTP fetcher (internal/resolve) and a future service can use the
// nouns without linking the store. The JSON tags and field order of Record
// and below are the input format and feed Record.Digest, hence the citation
// ids of records without citation_id: never change them, nor Mint, which
// names every stored node.
package model
