package storetest_test

import (
	"testing"

	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
)

// TestMemory runs the suite against the reference backend.
func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return storetest.NewMemory() })
}
