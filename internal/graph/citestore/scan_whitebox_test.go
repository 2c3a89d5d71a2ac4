package citestore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestRowsInChunks: a scan hands over the same rows whether it makes them
// in one chunk or in many (scan.rows reuses its buffers from one chunk to
// the next, so a flag or list left from the chunk before would show).
func TestRowsInChunks(t *testing.T) {
	ctx := context.Background()
	recs := storetest.Synthetic(t, synth.Options{Seed: 17, Sites: 30}, 400)
	g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	st := New(g)
	if _, err := st.Append(ctx, store.Batch{Policy: normalize.Default(), Records: recs}); err != nil {
		t.Fatal(err)
	}
	const all = store.FieldRaw | store.FieldKey | store.FieldContent | store.FieldFinalURL |
		store.FieldCanonical | store.FieldRelations | store.FieldEvidence
	rows := func() []string {
		var out []string
		if _, err := st.Scan(ctx, normalize.Default().Digest(), all, func(r *store.Row) error {
			out = append(out, fmt.Sprintf("%+v", *r))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole := rows()
	defer func(n int) { rowChunk = n }(rowChunk)
	rowChunk = 7
	chunked := rows()
	if len(whole) != len(recs) || len(whole) < 10*rowChunk {
		t.Fatalf("%d rows for %d records", len(whole), len(recs))
	}
	if !slices.Equal(whole, chunked) {
		for i := range min(len(whole), len(chunked)) {
			if whole[i] != chunked[i] {
				t.Fatalf("row %d in chunks of %d:\n%s\nin one chunk:\n%s", i, rowChunk, chunked[i], whole[i])
			}
		}
		t.Fatalf("%d rows in chunks, %d in one", len(chunked), len(whole))
	}
}
