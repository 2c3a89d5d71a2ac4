package citestore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/storetest"
)

// TestRecordsContract runs the RecordStore contract on the records kept
// in a view bucket, writing each Put and Delete at once (Batch 1) and
// buffered (Batch 3, flushed by the reads).
func TestRecordsContract(t *testing.T) {
	for _, batch := range []int{1, 3} {
		storetest.RecordStoreContract(t, func(t *testing.T) query.RecordStore {
			g, err := graph.Open(filepath.Join(t.TempDir(), "r.db"), &graph.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			if err := g.Update(func(w *graph.Writer) error { return citestore.StartView(w, "d", time.Now()) }); err != nil {
				t.Fatal(err)
			}
			rs := citestore.New(g).Records("d", 0)
			rs.Batch = batch
			return rs
		})
	}
}
