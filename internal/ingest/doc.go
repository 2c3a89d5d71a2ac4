// Package ingest writes citations into a store. It owns the input side:
// parsing and validating a JSON Lines observation (ParseRecord, errors
// carrying file:line and the field), and the write paths: File for JSON
// Lines, RDF and RDFFile for N-Quads, N-Triples and Turtle, Renormalize for
// a new policy's keys beside the old ones, ResolveTargets with Resolve for
// the retrievals of a resolve run, and Reextract for content evidence. The
// quads a citation, its normalization, a retrieval and its evidence become
// are the bbolt backend's (citestore.Mapper, ontology/MODEL.md); what of
// ingest goes through internal/store's interfaces, and why the rest still
// takes the quad store, is in internal/store's doc ("Where the users stand").
//
// A new input field starts here (and in internal/model when it is a domain
// noun, in citestore's Mapper for the quads it becomes); a new input format
// is a reader beside jsonscan.go, nquads.go and turtle.go.
//
// # Caveats
//
// Writes are append-only: every node is minted from content (model.Mint),
// so repeating an ingest adds nothing, and nothing stored is ever replaced
// or deleted, neither a raw URL nor an earlier normalization. A batch is
// one store transaction, so an interrupted ingest leaves whole batches and
// is completed by running it again. The validation pass holds at most
// Options.WorkMem of citation ids (past it they are sorted in unlinked
// files in Options.TempDir), so that its memory does not grow with the
// input.
//
// ingest imports internal/model, internal/normalize, internal/vocab,
// internal/store, and internal/graph with internal/graph/citestore (the
// bbolt backend and its mapping, for the paths store cannot express yet). It must not import internal/query,
// internal/export or cmd/provgraph (they read what ingest writes), nor
// internal/resolve: Resolve takes the fetcher as ResolveOptions.Fetch, so
// the HTTP client is linked only where cmd/provgraph joins the two. It
// never imports bbolt or cayley; only internal/graph does.
package ingest
