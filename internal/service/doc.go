// Package service is what a front end (the provgraph command, an HTTP
// handler) calls to answer a request: it opens the database with the
// caller's options (DB: path, lock timeout, read-only), chooses the policy,
// runs the query and returns the results, with every error of its own
// marked by kind. The front end then writes the results with
// internal/render and maps the error's Kind to its own status.
//
// # Basics
//
// Classify is the one place where an error becomes a Kind: Usage (the
// caller's request is wrong: a flag, an argument, a policy the database
// does not hold), Rejected (the input data is rejected, or there is no
// such citation), Internal (I/O or a bug), Locked (another process holds
// the database), Damaged (the database is inconsistent) and Interrupted
// (the request was cancelled). cmd/provgraph's exitCode maps the kinds to
// exit statuses 2, 1, 3, 4, 5 and 3; an HTTP handler maps them with
// Kind.HTTPStatus. A new request type goes here as a method of DB that
// marks its errors with UsageError and InputError; its output goes in
// internal/render; its flags, help and wiring in cmd/provgraph.
//
// # Caveats
//
//   - Reviewed, Decide and GroupFilter (review.go) work on a store the
//     caller holds open, so that a server that keeps the database open
//     answers from it; the DB methods open and close it per request.
//   - service prints nothing and never exits: messages and statuses are
//     the front end's.
//   - A DB method opens the store for one request and closes it before it
//     returns (the results hold no reference to it), so that the file lock
//     is held no longer than the read.
//
// DB.OpenStore opens the database as a Store: its store.Backend (the
// bbolt backend, internal/graph/citestore) for what goes through
// internal/store's interfaces, and the quad store beneath for the paths
// that still need it (internal/store's doc lists them). Front ends open
// the database only here: cmd/provgraph imports neither internal/graph nor
// citestore.
//
// service may import internal/graph with internal/graph/citestore,
// internal/store, internal/ingest, internal/query, internal/review,
// internal/model and internal/normalize; it must not import internal/render or cobra, and
// takes from net/http only its status codes: the same requests serve
// every front end.
package service
