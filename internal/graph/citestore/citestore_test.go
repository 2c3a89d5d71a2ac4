package citestore_test

import (
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
)

// TestBackend runs the storage suite against the bbolt backend, each test
// on a new database file.
func TestBackend(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend {
		g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
		if err != nil {
			t.Fatalf("graph.Open = %v", err)
		}
		t.Cleanup(func() {
			if err := g.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
		return citestore.New(g)
	})
}
