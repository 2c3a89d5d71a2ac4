package citestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
)

// TestFormatV5File opens graph's testdata/format-v5/prov.db, the example
// citations ingested into a new file, whose view was written by this
// format: a change of the view's layout or of what its rows hold makes
// its check fail here.
func TestFormatV5File(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "testdata", "format-v5", "prov.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prov.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if st, err := g.Stats(); err != nil || st.Version != 5 {
		t.Fatalf("Stats = version %d, %v; want 5", st.Version, err)
	}
	s := citestore.New(g)
	ctx := context.Background()
	if err := s.Check(ctx); err != nil {
		t.Fatalf("check of the format 5 file: %v", err)
	}
	views, err := s.Views(ctx)
	if err != nil || len(views) != 1 || !views[0].Complete || views[0].Rows != 15 {
		t.Fatalf("Views = %+v, %v; want one complete view of 15 rows", views, err)
	}
	d := normalize.Default().Digest()
	rows, err := s.RowsAfter(ctx, d, nil, 0)
	if err != nil || len(rows) != 15 {
		t.Fatalf("RowsAfter = %d rows, %v; want 15", len(rows), err)
	}
	keyed, err := s.KeyRows(ctx, d, "http://w3.org/TR/prov-o")
	if err != nil || len(keyed) != 1 || keyed[0].CitationID != "gpt-17-2" {
		t.Errorf("KeyRows(http://w3.org/TR/prov-o) = %+v, %v; want gpt-17-2", keyed, err)
	}
}
