// Package query answers the read-only questions the commands ask of a
// store: review groups of citations that are probably the same (Groups,
// LoadGroups, with their verdicts and reasons), one citation's lineage
// (LineageOf, LineageOfURL), statistics (ComputeStats), the difference
// between two policies' groups (DiffPolicies) and why two citations are or
// are not grouped (Explain). It owns the read side of the RDF model:
// loading a policy's view of the store into a Snapshot or a lean group
// load (LOADING.md says how and where the time goes) and the grouping
// engine both loads share.
//
// A new query over stored citations starts here; how a result is printed
// is not query's (cmd/provgraph, or the rendering package, writes it).
//
// # Caveats
//
// query never writes: it takes a store that ingest filled and must not
// change it, so a query can run beside another reader. Groups are derived,
// never stored, and never collapse nodes: every member keeps its own raw
// URL, and a group carries the reasons (shared evidence, relations) that
// made it.
//
// query imports internal/model, internal/normalize (policy names and
// keys), internal/store (lineage asks its Lookup which citations to read),
// internal/vocab and internal/graph (the store it reads). It must
// not import internal/ingest, internal/export, internal/resolve or
// cmd/provgraph, and never bbolt or cayley; only internal/graph does.
package query
