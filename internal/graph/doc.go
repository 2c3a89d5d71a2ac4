// Package graph stores provgraph's RDF quads in one go.etcd.io/bbolt file,
// and is the only package that imports cayley or bbolt. Callers speak in
// Terms and Quads; cayley's types appear only through Store.Cayley.
//
// # Basics
//
// Open a database file (it is created when missing), Add batches of quads
// (each batch is one bbolt transaction), and read them back with Match, Has,
// Objects and Subjects. A quad that is already stored is skipped, so adding
// the same batch twice adds nothing. Check verifies the whole store.
//
// In a Match pattern a zero Term matches anything, including a zero G: the
// pattern's graph is a wildcard, while a stored quad's zero G is the
// default graph. Patterns that fix a subject, predicate or object read only
// the index range of that node.
//
// # File format
//
// The file holds a term dictionary (every distinct term gets a 32-bit id)
// and three indexes of the quads' ids (SPO, POS, OSP, the graph last;
// POS and OSP as sorted runs that are merged as they pile up, so that a
// batch writes them sequentially, each run with a filter of the prefixes
// it holds, so that a lookup reads only the runs that may hold its
// answer), described in FORMAT.md, and a
// "provgraph" bucket naming the format and its version. Open refuses a file without that marker (ErrNotStore) or
// with a version it does not know (ErrVersion), so a later layout can be
// told apart.
//
// # Cayley
//
// Store.Cayley returns the store as a cayley graph.QuadStore, so that
// cayley's query layers (query/path, gizmo, the shape optimizer, schema)
// run on it unchanged. Node refs are term ids and quad refs the four ids
// of a quad. Iterators read the index of the fixed node (SPO, POS or OSP;
// a graph label reads every quad, as no index starts with the graph) in
// pages of 1,024 quads, one short read transaction each, so an open
// iterator never holds up Add; Contains is a point lookup. Stats are
// exact.
//
// Values map to terms one to one: quad.IRI, quad.BNode, quad.LangString
// and quad.TypedString are the terms they name; an xsd:string literal is
// a quad.String. Other literals come back as quad.TypedString, never
// parsed into quad.Int or quad.Time. A cayley native value (quad.Int,
// quad.Float, quad.Bool, quad.Time) stands for the literal of its
// TypedString form only when that form parses back to the same value: a
// quad.Time with sub-second precision, which cayley's form drops, is
// found nowhere and refused on write.
//
// Writes go through Add, in one transaction per ApplyDeltas (10,000 quads
// per transaction from NewQuadWriter). Without IgnoreDup a stored quad
// fails the batch with cayley's ErrQuadExists. A delete fails the batch
// with ErrAppendOnly: evidence is never deleted. A quad that breaks RDF's
// rules (a literal subject, a predicate that is not an IRI) fails it with
// ErrInvalidQuad.
//
// cayley's own backend suite (graphtest.TestAll) runs against the adapter
// in cayley_test.go. The path suite (query/path/pathtest) passes but for
// "follows recursive loop", which exposes a cayley bug (its recursive
// iterator keeps stale tags, so the result depends on the order of a
// subject's quads; cayley's memstore fails it too in index order). The
// integration case (cayley's 30k-movie graph through gizmo) passes. The
// other cases cannot apply:
//
//   - load one quad, load dup, load dup single, load dup raw, iterator,
//     hasa, set iterator, iterators and next result order, compare typed
//     values, schema, 1k: their quads have quad.String or quad.Int
//     subjects, predicates or labels (generalized RDF), which the store
//     refuses. cayley_adapter_test.go runs their checks on the same quads
//     made RDF.
//   - delete quad, sizes, deleted from iterator, add and remove, node
//     delete, delete reinserted, delete reinserted dup, writers: they
//     delete quads (and also use generalized RDF).
//   - load typed quad: it expects quad.Int, quad.Float, quad.Bool and
//     quad.Time back from NameOf, and adds a quad.Time with nanoseconds.
//
// # How pages are read
//
// bbolt reads the file through a shared mapping, where the first touch of
// a page is a page fault. Point reads (lookups, a lineage's nodes) keep
// reading that way: the root and branch pages they share stay mapped and
// cost nothing the next time. Walks that read a large part of a bucket
// whose leaves bbolt has scattered over the file (the terms in id order
// and the SPO index, as a load behind groups and stats reads them; check's
// walks; a whole walk of a view's run map; a writer's batch of dictionary
// lookups in hash order) read the
// pages with pread through a second descriptor of the file instead
// (pageCursor, pread.go), which costs a tenth of a fault on a virtual
// machine whose page tables the host shadows (bench/pagecost) and maps
// nothing. A pageCursor moves exactly as bbolt's Cursor does and checks
// each page it reads; it is used in read transactions, and in a write
// transaction only for buckets it has not changed (until it commits, a
// write transaction writes nothing to the file). A Reader told that its
// reads go through the file in order (Reader.InOrder: the check of a view
// reads every citation so) keeps copies of the last pages its cursors
// read (pageKeep), since each citation's reads go back and forth between
// its own leaves and those of the shared nodes minted first.
//
// # Damaged files
//
// A damaged file (truncated, partly overwritten, with flipped bits) gives
// an *Error wrapping ErrCorrupt that names the file and what is wrong,
// from Open or from the read that meets the damage, never a panic or a
// memory fault: Open checks the bbolt meta pages and the file's size
// before bbolt maps the file, every method that reads runs with
// debug.SetPanicOnFault and recovers bbolt's panics, and ids and counters
// read from the file are checked before they are used. A panic raised by
// a caller's callback (Match, Read, a Reader method) is not recovered.
// FORMAT.md lists the checks.
//
// # Caveats
//
// The store is append-only: there is no delete, because evidence must never
// be rewritten. Literals are stored with their exact lexical form and full
// datatype IRI ("007" and "7" are two terms); cayley's typed values
// (quad.Int, quad.Time, ...) would normalize them and merge distinct
// evidence, so the adapter maps them only where that is exact.
//
// Only one process can have the file open for writing; read-only opens
// share it with each other but not with a writer. Open waits up to
// Options.LockTimeout for the lock and then fails with ErrLocked. A second
// Open of the same file in the same process is refused the same way.
//
// A Match callback runs inside a bbolt read transaction and must not call
// Add or Close on the same Store: a write that grows the file waits for
// every open read transaction, including the one of the Match that called
// it.
//
// graph imports no provgraph package and must not: it knows quads, not
// citations, so that ingest, query and export can share it and a domain
// change never touches the file format. Tools that need its internals
// (bench/dbstats) go through its API (Stats, FileStats), never bbolt.
package graph
