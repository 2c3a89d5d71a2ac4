// Package ontology embeds the provgraph vocabulary, so that every build
// carries the exact terms it writes (provgraph export --include-ontology).
// provgraph.ttl beside this file is the source of truth; MODEL.md says how
// citations become triples.
package ontology

import _ "embed"

// Turtle is provgraph.ttl as built into this binary.
//
//go:embed provgraph.ttl
var Turtle []byte
