// Package store says what a storage backend must answer for provgraph's
// commands, in domain terms: citation ids, raw URLs, comparison keys,
// content hashes, policies (model.PolicyRef) and observations
// (model.Record). No term ids, RDF terms or bbolt types appear in it, so
// that query, ingest, export, lineage and the coming HTTP service can take
// a backend without linking one, and a second backend can be written
// against this package and internal/storetest alone.
//
// # Basics
//
// The interfaces are small and named for what their users ask, as io's
// are: Lookup (citations by id, raw URL, key and content evidence;
// policies; whole citations by id for a lineage), Appender (append-only
// batches), Catalog (the policies with their texts, and the runs, that a
// whole-database query chooses among),
// Scanner (every citation once, in id order, with the fields a query
// compares, as per-scan handles, and the whole citations of the rows a
// query shows, Texts.Citations), Viewer (a group of reads on one
// consistent view) and Checker (a consistency check). Reader is the
// reads; Backend is everything; a user takes the narrowest one it needs.
// GroupView (view.go) reads a policy's grouping view, derived data a
// backend may keep: rows by key and postings that find a group's
// neighbourhood without a scan, equal to what ScanViewRows makes of a
// scan; ErrNoView says a backend keeps none for the policy.
//
// What a backend answers is in domain values: model's nouns for what it
// is given (Record, PolicyRef) and, for what it hands back of a stored
// citation, this package's Citation (with its Normalization, Retrievals,
// Hops, Extractions, Passages and Relations) and PolicyRef (citation.go).
// Those live here, not in model, because they are answers rather than
// observations: they carry what storing added (a node name, a hop's index
// and host change, whether a relation was declared or detected, a
// policy's text and last run), which only a backend can know.
//
// The package lives apart from internal/graph (the bbolt quad store) and
// from internal/model (the nouns): graph must stay free of the citation
// model, and model must stay free of storage; storetest, the backends and
// their users meet here. It imports model and normalize (a batch names the
// policy its records are normalized under) and nothing that links a
// database.
//
// Today's implementations: internal/graph/citestore, over the bbolt quad
// store (internal/graph), which owns the PROV-O mapping of a record to
// quads (citestore.Mapper, ontology/MODEL.md) and the one reader of it;
// and storetest.Memory, the reference model the bbolt backend is compared
// with on synthetic data.
// Every backend must pass internal/storetest.
//
// # Where the users stand
//
// Through the interfaces now:
//
//   - internal/service opens every database as a service.Store: the
//     store.Backend (citestore) and the quad store beneath it, one file.
//     cmd/provgraph opens nothing itself and imports neither
//     internal/graph nor citestore; a new front end (the HTTP service)
//     takes the Backend.
//   - ingest.File checks every citation id of its input against the
//     database with Lookup.Digest, before it writes anything.
//   - ingest writes every record, retrieval and piece of evidence with
//     citestore.Mapper, the mapping Append uses, so the two write the
//     same quads byte for byte (the golden databases and TestMatchesMemory
//     hold them to it).
//   - query.Load and query.LoadGroups (so groups, stats, policy-diff,
//     lineage --group-scope database, export --include-groups and the
//     server's pages) take a query.Source: Catalog, then one Scan.
//     Grouping's facts come from the scan's rows (query's rowFacts), and
//     the members a group lists are built with Texts.Citations from what
//     that scan loaded. citestore's Scan is the whole-database loader
//     (one pass over the SPO index into arrays by term id, the ids being
//     the handles). On a million synthetic citations (2 shared vCPUs,
//     medians of 4 interleaved runs against the build in which query read
//     the term ids itself) groups takes 9.2 s of CPU for the table (9.4
//     before) and 9.8 s for JSON (9.5), stats 10.7 s (10.9), with output
//     identical byte for byte. query.LoadGroupsFromView (groups
//     --read view) reads the GroupView's rows in key order instead
//     (RowsAfter), each batch's neighbourhood through the postings and
//     its listed members by Lookup.Citations, or citestore's Shown,
//     which reads only what the listing shows.
//   - query's lineage (LineageOf, LineagesOf, LineageOfURL) takes a
//     store.Reader and reads on one view of it (Viewer; citestore's is
//     one read transaction with one node cache): which citations to read
//     it asks ByRaw for a raw URL, ByKey under the policy it shows for
//     the members of every key of the neighbourhood (the group's, its
//     redirect sources' and its relation targets'), ByContent for the
//     citations sharing a member's content hash, ByTextDigest for those
//     sharing a member's main text, and ByFinalURL, a retrieval at a
//     time, for those redirected into a key (so that reading stops at
//     --max-shared sources); it reads the citations it shows whole with
//     Citations, and the rest lean, with only what their group needs,
//     when the backend has a Members method (citestore has). When the
//     view is a GroupView keeping a view of the policy, the group comes
//     from it instead, read as GroupOf reads one group, and only the
//     group's related members are read, lean. With
//     --group-scope database it Loads on the same view. internal/query
//     imports neither internal/graph nor citestore (TestLayers).
//   - The grouping views (GroupView) are written by citestore in the
//     transaction of the quads they derive from (graph.Store.AddWith):
//     Append and ingest.File write the rows of the citations a batch
//     adds from the mapper's reading of their records
//     (citestore.WriteNewViewRows); resolve and extract rewrite the rows
//     of the citations of the retrievals they add evidence to, read back
//     from the quads (WriteViewRows); renormalize keeps or builds its
//     policy's view. A SQL backend would keep them as a table (SCALE.md).
//
// Still on the quad store (*graph.Store), and why:
//
//   - ingest.File's writes. The run record (start, resumption of an
//     unfinished run of the same input and policy, completion with its
//     count) has no method here; Summary.QuadsAdded, the command's report
//     and --batch count quads, where Append counts records; and File maps
//     (normalizes) the next batch in a reader goroutine while the last one
//     commits, where Append maps inside its write, which would put the
//     normalizing of 100k records back in series with the commits. Moving
//     it needs a Runs interface (start, find unfinished, complete, in
//     domain terms) and a pipelined append in citestore.
//   - ingest.RDF and RDFFile load arbitrary RDF (any predicate, blank
//     nodes, named graphs): there is no domain form of it. They stay
//     quad-level; a SQL backend would refuse them or keep a quads table.
//   - ingest.Renormalize reads every citation's raw URL node and base URL
//     (no Scanner field gives the base URL) and adds a normalization to
//     stored citations, which Append (whole records) cannot express
//     without rewriting them: it needs a FieldBase and an "append a
//     normalization of stored citations" method.
//   - ingest.ResolveTargets, Resolve and Reextract read retrievals, their
//     snapshots and cited texts by quad pattern and add retrievals, hops,
//     canonical declarations and evidence to stored citations, with the
//     resolve run: the same need as Renormalize (append to a stored
//     citation) plus a Lookup of retrievals by snapshot.
//   - internal/export writes every stored statement, whatever wrote it;
//     its doc says why that is the quad store's by nature.
//   - The check command's counters (format, terms, runs, file size) are
//     the quad store's own; its consistency check goes through Checker.
//
// # Contracts every backend keeps
//
//   - Evidence is exact: a raw URL, a key, a content hash and a citation
//     id are matched byte for byte, never normalized or case-folded.
//   - Append-only: nothing stored is replaced or removed. Appending a
//     record whose citation id is stored with the same digest
//     (model.Record.Digest) changes nothing; with another digest the batch
//     fails with ErrConflict.
//   - Batches are atomic: Append stores every record of a batch or, on any
//     error, none.
//   - Lookups return citation ids sorted and without repeats, and an empty
//     (nil) slice, not an error, when nothing matches.
//   - A scan's Row.Evidence has one entry per successful retrieval
//     (model.Successful of its outcome, final status and its current
//     extraction's soft error; the current extraction is the greatest by
//     model.CompareExtractions), sorted by store.CompareEvidence. Its
//     content hashes are FieldContent handles, its text digests
//     FieldEvidence handles. Row.Rejected (with FieldKey) is true only for
//     a citation normalized under the scan's policy and rejected by it.
//     storetest.Memory holds no extractions (Append cannot write them,
//     resolve adds them through citestore.Mapper), so its evidence has no
//     text digest or SimHash and ByTextDigest finds nothing; citestore's
//     TestScanExtractionEvidence holds the bbolt backend to the extraction
//     part of the contract.
//   - A scan's Texts.Citations builds the citations of the rows asked,
//     numbered in scan order, from what that scan read: no second read
//     of the database, so that what grouping shows of a member is what
//     it grouped. FieldCitation gives what a group lists of a member;
//     FieldDetail adds the rest. storetest checks both against the
//     records (ScanCitations, ScanCitationsDetail).
//
// # Caveats
//
// Handles (Scanner) are interned per scan: equal handles mean equal values
// within one scan, and nothing across scans or across fields. Grouping a
// million citations needs dense integers to stay as fast as it is (see
// internal/query/LOADING.md); a handle is the domain-level form of that
// need, which bbolt meets with its term ids and SQL with dictionary
// encoding, without either leaking into this package.
//
// # A SQL backend (PostgreSQL wire, Citus)
//
// A backend on a distributed PostgreSQL-wire engine implements the same
// interfaces over a few tables, each distributed by citation id so that a
// citation's rows live on one worker:
//
//	policies(digest PK, name, version, text, engine)
//	runs(id PK, kind, policy_digest, started_at, ended_at, status)
//	citations(id PK, digest, raw_url, base_url, engine, answer_id, question,
//	          position, observed_at, run_id)
//	normalizations(citation_id, policy_digest, key, compare, parsed,
//	          host_rule, removed_params, steps, error_code, error_message,
//	          PRIMARY KEY (citation_id, policy_digest))
//	retrievals(citation_id, node, retrieved_at, final_url, final_status,
//	          content_hash, content_type, snapshot_ref, outcome, outcome_error)
//	hops(retrieval_node, idx, from_url, to_url, status, at, location)
//	canonicals(retrieval_node, url, source)
//	relations(citation_id, kind, target, evidence)
//
// with indexes on citations(raw_url), normalizations(policy_digest, key)
// and retrievals(content_hash) for Lookup; text columns are bytea or text
// with the C collation, so that equality and order are byte for byte.
// Append is one transaction of INSERT ... ON CONFLICT DO NOTHING, after a
// SELECT of the batch's stored digests (ErrConflict when one differs);
// Citus runs it as a distributed transaction, so the batch stays atomic.
// The scan is one SELECT joining citations to their normalization under
// the policy (and, as Fields asks, retrievals and relations), ORDER BY
// citations.id COLLATE "C", streamed with a cursor (the rows of one
// citation are adjacent, so a row is complete when the id changes);
// handles are assigned while reading (store.Dict), or by dense_rank() in
// the query when the engine pushes it down. Texts.Citations is one more SELECT of
// the rows asked (their ids kept by the scan), joined to their
// normalization, retrievals, hops, canonicals and relations. Check runs the foreign-key
// and orphan queries (a normalization, retrieval or relation whose
// citation is missing).
//
// The grouping view is two more tables, written in the transaction of the
// rows they derive from:
//
//	view_rows(policy_digest, key, citation_id, state, flags, redirects,
//	          links, evidence, member, PRIMARY KEY (policy_digest, key, citation_id))
//	view_postings(policy_digest, kind, value, key,
//	          PRIMARY KEY (policy_digest, kind, value, key))
//
// distributed by key, so that a key's rows (KeyRows) are on one worker and
// RowsAfter is an ordered range read (key, citation_id) > (after) LIMIT n;
// member is ViewRow.Member as bytea (citestore's encoding, or JSON), so
// that the full listing reads no citation table. The listing's ordered
// pass over the shared content hashes (citestore's SharedValues) is
// SELECT value FROM view_postings WHERE policy_digest = $1 AND kind = $2
// GROUP BY value HAVING count(*) >= 2 (>= 1 for the redirect and relation
// targets), which Citus runs on every worker.
package store
