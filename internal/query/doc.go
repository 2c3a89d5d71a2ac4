// Package query answers the read-only questions the commands ask of a
// store: review groups of citations that are probably the same (Groups,
// LoadGroups, with their verdicts and reasons), one citation's lineage
// (LineageOf, LineageOfURL), statistics (ComputeStats), the difference
// between two policies' groups (DiffPolicies in memory, PolicyDiffer by
// sorts on disk) and why two citations are or
// are not grouped (Explain). It reads a whole database through
// internal/store (Source: a Catalog and one Scan; LOADING.md says how the
// bbolt backend answers and where the time goes), one citation's
// neighbourhood through store.Lookup on one store.Viewer view, and owns
// the grouping engine both share. One group (GroupOf) and the records of
// the review queue (BuildRecords, RefreshRecords) are read from a grouping
// view kept at ingest (GroupView) when the database keeps one: the engine
// runs on the group's neighbourhood alone (docs/SCALE.md, "The query
// side"); so can the full listing, a batch of keys at a time, in memory
// that does not grow with the database (LoadGroupsFromView).
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
// keys), internal/store (the interfaces it reads through, and the read
// side's values, which query aliases: Citation, Retrieval and the rest),
// internal/cores and internal/extract (SimHash distance). It reads every
// backend through store alone, so it must not import internal/graph or
// internal/graph/citestore (TestLayers), nor internal/ingest,
// internal/export, internal/resolve or cmd/provgraph, and never bbolt or
// cayley.
package query
