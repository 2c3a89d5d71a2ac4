// Package server is provgraph serve: the review workbench's web UI and
// JSON API over one database the server holds open.
//
// # Basics
//
// New takes a *graph.Store the caller opened for writing (or read-only,
// with Options.ReadOnly) and returns a Server whose Handler serves:
//
//   - the UI: / (the review queue), /groups/{id} (a group with its
//     decisions, a form to decide, and forms to decide a pair of its
//     members or one of its relations), /citations/{id}/lineage (the
//     lineage drawn as SVG), /stats; HTML rendered on the server with
//     html/template, a small script for keyboard shortcuts, every asset
//     embedded (assets/), none read from disk;
//   - the JSON API under /api/ (README.md lists it): groups with the
//     filters of groups, one group, decisions, lineage (json, dot, svg),
//     stats, ingest and Gizmo queries.
//
// Reads answer from the last committed state: the groups and decisions
// are computed at start and kept; every write that goes through the server
// (a decision, an ingest) runs under one mutex and, once committed,
// computes the next state (a decision only reloads the decisions) and
// swaps it in, so readers never wait for it. bbolt's read transactions
// do not wait for a write, so the queue keeps answering during an ingest.
// What readers compute from a state (the encoded pages of GET /api/groups,
// the members' lineages of a group page) is kept for that state in a
// pageCache and computed once, readers of one page waiting for it.
// The stats are computed at their first request after a write; after a
// decision only their review counts, the rest kept.
//
// With Options.Bounded the server holds no group: every request reads
// what it shows from the grouping view and the group records, the queue
// is paged in the groups' own order, and the filters that select among
// every group are refused (bounded.go says how and why). It is what a
// database whose groups would not fit in memory is served with.
//
// # Safety
//
//   - With tokens (Options.Tokens) every request needs one, as a bearer
//     token or the session cookie the UI's sign-in sets; tokens are
//     compared in constant time and name the reviewer. Without tokens the
//     server must be on loopback (the command enforces it).
//   - Forms carry a double-submit CSRF token; API writes need a JSON (or
//     JSON Lines) content type, which a cross-site form cannot send, and
//     are refused when Sec-Fetch-Site says cross-site.
//   - Bodies are bounded (MaxBody, MaxIngest), headers by the http.Server
//     the command builds, queries by QueryTimeout and QueryRows.
//   - Every response has a Content-Security-Policy without inline script,
//     X-Content-Type-Options: nosniff and X-Frame-Options: DENY.
//   - A decision is answered 201 only after its transaction committed; an
//     error writes nothing (one batch per decision).
//
// server may import internal/service, internal/render, internal/review,
// internal/query, internal/ingest, internal/model, internal/normalize and
// internal/graph with internal/graph/citestore (it holds the one open
// store); nothing but cmd/provgraph may import it.
package server
