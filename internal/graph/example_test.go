package graph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "provgraph")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "prov.db")

	s, err := graph.Open(path, nil) // creates the file
	if err != nil {
		fmt.Println(err)
		return
	}
	// A second writer is refused within its LockTimeout.
	_, err = graph.Open(path, &graph.Options{LockTimeout: 100 * time.Millisecond})
	fmt.Println("second writer locked out:", errors.Is(err, graph.ErrLocked))
	s.Close()

	r, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	n, _ := r.Count()
	fmt.Println("quads:", n)
	fmt.Println("check:", r.Check(context.Background()))
	// Output:
	// second writer locked out: true
	// quads: 0
	// check: <nil>
}

func ExampleStore_Add() {
	dir, _ := os.MkdirTemp("", "provgraph")
	defer os.RemoveAll(dir)
	s, err := graph.Open(filepath.Join(dir, "prov.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	cit := graph.IRI("https://w3id.org/provgraph/id/citation/1")
	at := graph.IRI("https://w3id.org/provgraph/ns#observedAt")
	batch := []graph.Quad{
		{S: cit, P: at, O: graph.Literal("2025-01-01T01:00:00+01:00", graph.XSDDateTime)},
		{S: cit, P: at, O: graph.Literal("2025-01-01T00:00:00Z", graph.XSDDateTime)},
	}
	n, _ := s.Add(batch)
	fmt.Println("added", n)
	n, _ = s.Add(batch)
	fmt.Println("added again", n)
	objs, _ := s.Objects(cit, at)
	for _, o := range objs {
		fmt.Println(o)
	}
	// Output:
	// added 2
	// added again 0
	// "2025-01-01T01:00:00+01:00"^^<http://www.w3.org/2001/XMLSchema#dateTime>
	// "2025-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>
}

func ExampleStore_Match() {
	dir, _ := os.MkdirTemp("", "provgraph")
	defer os.RemoveAll(dir)
	s, err := graph.Open(filepath.Join(dir, "prov.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	typ := graph.IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
	citation := graph.IRI("https://w3id.org/provgraph/ns#Citation")
	s.Add([]graph.Quad{
		{S: graph.IRI("https://w3id.org/provgraph/id/citation/1"), P: typ, O: citation},
		{S: graph.IRI("https://w3id.org/provgraph/id/citation/2"), P: typ, O: citation},
		{S: graph.IRI("https://w3id.org/provgraph/id/answer/1"), P: typ, O: graph.IRI("https://w3id.org/provgraph/ns#Answer")},
	})
	// Every citation: object and predicate fixed, so one index range. The
	// order within it is unspecified.
	var subjects []string
	s.Match(context.Background(), graph.Quad{P: typ, O: citation}, func(q graph.Quad) error {
		subjects = append(subjects, q.S.String())
		return nil
	})
	slices.Sort(subjects)
	fmt.Println(strings.Join(subjects, "\n"))
	// Output:
	// <https://w3id.org/provgraph/id/citation/1>
	// <https://w3id.org/provgraph/id/citation/2>
}
