package citestore

import (
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
)

// Mint returns the node model.Mint names, as a graph term: the one way
// every node the mapper writes, and every run node ingest writes, is named.
func Mint(kind string, fields ...string) graph.Term {
	return graph.IRI(model.Mint(kind, fields...))
}

// AgentIRI is the node for provgraph itself (model.AgentIRI), the agent of
// every normalization and ingest run.
var AgentIRI = graph.IRI(model.AgentIRI)
