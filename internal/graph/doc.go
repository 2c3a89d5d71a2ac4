// Package graph stores provgraph's RDF quads in a cayley quad store kept in
// one go.etcd.io/bbolt file, and is the only package that imports cayley or
// bbolt. Callers speak in Terms and Quads, never in cayley's types.
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
// The file holds cayley's kv layout (its version 2) with three indexes
// (subject-predicate, object-predicate-subject, predicate-subject) and a
// "provgraph" bucket naming the format and its version. Open refuses a file
// without that marker (ErrNotStore) or with a version it does not know
// (ErrVersion), so a later layout can be told apart.
//
// # Caveats
//
// The store is append-only: there is no delete, because cayley's deletes are
// unreliable (cayley issues #737, #945) and evidence must never be
// rewritten. Literals are stored with their exact lexical form and full
// datatype IRI; cayley's typed values (quad.Int, quad.Time, ...) would
// normalize them and merge distinct evidence, so they are never used.
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
package graph
