// Package model holds provgraph's domain nouns, each defined once: the
// citation observation (Record, Retrieval, Hop, Canonical, Relation) as the
// JSON Lines input gives it, the fetch policy a resolve run follows, the
// relation kinds, the review-group verdicts with their one description, the
// default bound on shared evidence, and the namespace and minting rule of
// instance node IRIs.
//
// Every other package (ingest, resolve, query, export, cmd/provgraph, the
// bench tools) takes these from here, so a noun cannot drift between a
// writer and a reader.
//
// # Caveats
//
// model imports no other provgraph package but internal/vocab (for the
// relation kinds' classes): it is the bottom of the dependency graph, so
// that the HTTP fetcher (internal/resolve) and a future service can use the
// nouns without linking the store. The JSON tags of
// Record and below are the input format and feed Record.Digest, hence the
// citation ids of records without citation_id: never change them.
package model
