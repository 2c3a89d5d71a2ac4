// Package export writes a provgraph store as RDF: N-Quads, N-Triples,
// Turtle or JSON-LD, followed by a description of the dataset.
//
// # Basics
//
// Write streams every statement of a store to a writer, in the store's own
// order (the same for the same database file), then, when asked, the
// provgraph vocabulary, then the dataset description; WriteFile does the
// same into a file that is replaced atomically. Memory does not grow with
// the store (but see Options.Groups): statements are converted in batches
// and written at once, and Turtle and JSON-LD group only the statements
// about one subject that arrive one after the other.
//
// N-Triples and N-Quads lines are graph.AppendNQuad's canonical form, so
// two exports of the same data diff line by line (after LC_ALL=C sort when
// the databases were filled in another order). Every literal keeps its
// lexical form and datatype in every format: URLs are xsd:string literals
// holding the exact text, times xsd:dateTime in the RFC 3339 form observed,
// statuses and positions xsd:integer (ontology/MODEL.md rule 3).
//
// The description is a dcat:Dataset and void:Dataset,
// prov:wasGeneratedBy a prov:Activity of this provgraph build: the export
// time, the policies (name, version, digest, parser, and the tracking
// parameters with their reasons, read from the stored policy text), the
// conventions the data follows (URL literals, timestamps, integers, and
// the redirect limits the resolve runs in the database recorded) and the
// codebook of review-group verdicts, in DCMI Terms, VoID and SKOS. Every
// node of it also has a PROV base class, which PROV tools that do not
// reason need. Every statement of it has the dataset node, or an IRI under
// it, as subject, and in N-Quads the graph Summary.DescriptionGraph, so a
// comparison can leave it out. It is written last: an export to a
// pipe that was cut short has none.
//
// With Options.Groups, the review groups of internal/query follow the data
// (and the ontology), as derived PROV entities: a pg:ReviewGroup per group,
// its memberships and relations, and the pg:Grouping that made them
// (ontology/MODEL.md), every subject under the dataset node and, in
// N-Quads, in the graph Summary.GroupsGraph. The grouping holds what it
// needs of every citation in memory, as the groups command does.
//
// # Caveats
//
// N-Triples, Turtle and JSON-LD drop graph names; a triple stored in two
// graphs is then written twice. Only N-Quads keeps a loaded export's
// description apart from the data.
//
// A stored IRI that is not a valid IRI (RFC 3987) is written
// percent-encoded (RepairIRI) and counted in Summary.RepairedIRIs, so the
// output always parses; provgraph never stores such IRIs itself (every URL
// it is given is a literal), so they can only come from RDF loaded from
// elsewhere. An IRI without a scheme stops the export with an *IRIError.
//
// Write only reads; a Match callback must not write to the same store, and
// Write's does not.
//
// Export takes the quad store (*graph.Store), not internal/store's
// interfaces, on purpose: it writes every stored statement, in the
// store's order, whatever wrote it, including RDF loaded from elsewhere
// (arbitrary predicates, blank nodes, named graphs) and the run records,
// none of which a domain-level backend holds. A second backend would
// export by its own path (a citation-level RDF writer over store.Scanner
// and Lookup); the review groups it appends come from internal/query,
// which reads them through internal/store (export hands it the bbolt
// backend over the same file, citestore.New).
//
// export imports internal/graph (the store it reads) and
// internal/graph/citestore (its backend, for the groups), internal/query
// (the review groups it writes), internal/model, internal/normalize,
// internal/vocab and ontology. It must not import internal/ingest, internal/resolve or
// cmd/provgraph, nor bbolt or cayley: only internal/graph imports those. A new
// RDF syntax is a sink beside turtle.go and jsonld.go; its terms come from
// internal/graph's N-Quads term writer (AppendLiteralText, AppendBlankLabel).
package export
