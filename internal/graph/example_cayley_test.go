package graph_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cayleygraph/cayley/query/path"
	"github.com/cayleygraph/quad"

	"github.com/provgraph/provgraph/internal/graph"
)

// A cayley path query over a provgraph store: the raw text of the URLs
// that citations of one answer cite.
func ExampleStore_Cayley() {
	dir, _ := os.MkdirTemp("", "provgraph")
	defer os.RemoveAll(dir)
	s, err := graph.Open(filepath.Join(dir, "prov.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	const pg = "https://w3id.org/provgraph/ns#"
	answer := graph.IRI("https://w3id.org/provgraph/id/answer/1")
	cit1 := graph.IRI("https://w3id.org/provgraph/id/citation/1")
	cit2 := graph.IRI("https://w3id.org/provgraph/id/citation/2")
	url1 := graph.IRI("https://w3id.org/provgraph/id/rawurl/1")
	url2 := graph.IRI("https://w3id.org/provgraph/id/rawurl/2")
	s.Add([]graph.Quad{
		{S: answer, P: graph.IRI(pg + "hasCitation"), O: cit1},
		{S: answer, P: graph.IRI(pg + "hasCitation"), O: cit2},
		{S: cit1, P: graph.IRI(pg + "cites"), O: url1},
		{S: cit2, P: graph.IRI(pg + "cites"), O: url2},
		{S: url1, P: graph.IRI(pg + "text"), O: graph.String("https://example.org/a?utm_source=x")},
		{S: url2, P: graph.IRI(pg + "text"), O: graph.String("HTTPS://EXAMPLE.ORG/a")},
		{S: cit1, P: graph.IRI(pg + "position"), O: graph.Literal("01", graph.XSDInteger)},
	})

	qs := s.Cayley()
	ctx := context.Background()
	texts, err := path.StartPath(qs, quad.IRI(answer.Value)).
		Out(quad.IRI(pg + "hasCitation")).
		Out(quad.IRI(pg + "cites")).
		Out(quad.IRI(pg + "text")).
		Iterate(ctx).AllValues(qs)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range texts {
		fmt.Printf("%#v\n", v)
	}
	// Literals keep their lexical form: "01" is not quad.Int(1).
	pos, _ := path.StartPath(qs, quad.IRI(cit1.Value)).Out(quad.IRI(pg + "position")).Iterate(ctx).FirstValue(qs)
	fmt.Printf("%#v\n", pos)
	// Unordered output:
	// quad.String("https://example.org/a?utm_source=x")
	// quad.String("HTTPS://EXAMPLE.ORG/a")
	// quad.TypedString{Value:quad.String("01"), Type:quad.IRI("http://www.w3.org/2001/XMLSchema#integer")}
}
