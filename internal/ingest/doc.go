// Package ingest writes citations into a store. It owns the write side of
// the RDF model (ontology/MODEL.md): parsing and validating a JSON Lines
// observation (ParseRecord, errors carrying file:line and the field), the
// quads a citation, its normalization under a policy and a run become
// (Mapper), and the write paths: File for JSON Lines, RDF and RDFFile for
// N-Quads, N-Triples and Turtle, Renormalize for a new policy's keys beside
// the old ones, and ResolveTargets with Resolve for the retrievals of a
// resolve run.
//
// A new input field or a new kind of stored fact starts here (and in
// internal/model when it is a domain noun); a new input format is a reader
// beside jsonscan.go, nquads.go and turtle.go.
//
// # Caveats
//
// Writes are append-only: every node is minted from content (model.Mint),
// so repeating an ingest adds nothing, and nothing stored is ever replaced
// or deleted, neither a raw URL nor an earlier normalization. A batch is
// one store transaction, so an interrupted ingest leaves whole batches and
// is completed by running it again.
//
// ingest imports internal/model, internal/normalize, internal/vocab and
// internal/graph (the store it writes). It must not import internal/query,
// internal/export or cmd/provgraph (they read what ingest writes), nor
// internal/resolve: Resolve takes the fetcher as ResolveOptions.Fetch, so
// the HTTP client is linked only where cmd/provgraph joins the two. It
// never imports bbolt or cayley; only internal/graph does.
package ingest
