package ingest

import (
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
)

// mint returns the node model.Mint names, as a graph term.
func mint(kind string, fields ...string) graph.Term {
	return graph.IRI(model.Mint(kind, fields...))
}

// AgentIRI is the node for provgraph itself (model.AgentIRI), the agent of
// every normalization and ingest run.
var AgentIRI = graph.IRI(model.AgentIRI)
