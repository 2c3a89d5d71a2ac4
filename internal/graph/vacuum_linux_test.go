package graph_test

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

// TestVacuumKeepsOwner: the new file has the old one's owner and group
// (a vacuum run by root of a file another user writes). It needs root,
// to give a file away.
func TestVacuumKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	path := storeWithFreePages(t)
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := graph.Vacuum(context.Background(), path, graph.VacuumOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner after the vacuum %d:%d, want 65534:65534", st.Uid, st.Gid)
	}
}
