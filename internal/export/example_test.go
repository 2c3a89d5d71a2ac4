package export_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/export"
	"github.com/provgraph/provgraph/internal/graph"
)

func ExampleWrite() {
	dir, err := os.MkdirTemp("", "export-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := graph.Open(filepath.Join(dir, "example.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	raw := graph.IRI("https://w3id.org/provgraph/id/raw/0123")
	if _, err := st.Add([]graph.Quad{
		{S: raw, P: graph.IRI("https://w3id.org/provgraph/ns#text"), O: graph.String("HTTP://Example.com/a b?q=\"1\"#top")},
	}); err != nil {
		log.Fatal(err)
	}

	var out bytes.Buffer
	now := func() time.Time { return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) }
	sum, err := export.Write(context.Background(), st, &out, &export.Options{Format: export.Turtle, Now: now})
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "<"+raw.Value) {
			fmt.Println(line)
		}
	}
	fmt.Println(sum.Data, "data statements, then a description of", sum.Dataset.Value)
	// Output:
	// <https://w3id.org/provgraph/id/raw/0123> pg:text "HTTP://Example.com/a b?q=\"1\"#top" .
	// 1 data statements, then a description of https://w3id.org/provgraph/id/export/1d0ef05b954af7b5d3b4741decd510bf
}
