package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/knakk/rdf"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/ontology"
)

// ontologyQuads parses the embedded vocabulary into quads in the graph
// OntologyIRI. Its blank nodes (owl:unionOf lists) get labels starting
// with "pgont", apart from any the data may hold.
func ontologyQuads() ([]graph.Quad, error) {
	dec := rdf.NewTripleDecoder(bytes.NewReader(ontology.Turtle), rdf.Turtle)
	g := graph.IRI(OntologyIRI)
	var out []graph.Quad
	for {
		t, err := dec.Decode()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("export: the built-in ontology: %w", err)
		}
		out = append(out, graph.Quad{S: ontologyTerm(t.Subj), P: ontologyTerm(t.Pred), O: ontologyTerm(t.Obj), G: g})
	}
}

func ontologyTerm(t rdf.Term) graph.Term {
	switch v := t.(type) {
	case rdf.IRI:
		return graph.IRI(v.String())
	case rdf.Blank:
		return graph.Blank("pgont" + v.String())
	case rdf.Literal:
		if v.Lang() != "" {
			return graph.LangString(v.String(), v.Lang())
		}
		return graph.Literal(v.String(), v.DataType.String())
	}
	return graph.Term{}
}
