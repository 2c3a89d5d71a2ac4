// Command provgraph records and compares the provenance of URLs that AI
// answer engines cite. See README.md for the commands and formats.
//
// The command owns flags, help text, wiring and the one exit-code switch
// (root.go): each cmd_<verb>.go parses its flags, opens the store, calls
// the package that does the work (internal/ingest to write, internal/query
// to ask, internal/export for RDF, internal/normalize for policies,
// internal/resolve to fetch) and prints the result. It is the only package
// that imports all of them; no internal package may import it. Its
// non-test code never imports bbolt or cayley, nor internal/graph: it
// opens the database through internal/service (DB.OpenStore, DB.Ingest,
// DB.Convert), which holds the store (only the damage tests open a file
// with bbolt).
package main
