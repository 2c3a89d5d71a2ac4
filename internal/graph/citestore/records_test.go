package citestore_test

import (
	"context"
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

// TestRecordsIncomplete: records without their marker (a build or refresh
// killed midway) are not used, and KeepRecords drops them and says why;
// a view rebuild drops the records.
func TestRecordsIncomplete(t *testing.T) {
	ctx := context.Background()
	g, err := graph.Open(filepath.Join(t.TempDir(), "r.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Update(func(w *graph.Writer) error { return citestore.StartView(w, "d", time.Now()) }); err != nil {
		t.Fatal(err)
	}
	cs := citestore.New(g)
	rs := cs.Records("d", 0)
	if err := rs.Put(ctx, &query.GroupRecord{ID: "g-a", Key: "k", Keys: []string{"k"}, Members: 1}); err != nil {
		t.Fatal(err)
	}
	if err := rs.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	exists, complete, _, err := rs.State(ctx)
	if err != nil || !exists || complete {
		t.Fatalf("State: %v %v %v, want records without their marker", exists, complete, err)
	}
	notes, err := cs.KeepRecords(ctx)
	if err != nil || len(notes) != 1 || notes[0].Refreshed || notes[0].Why == "" {
		t.Fatalf("KeepRecords: %+v, %v: want the incomplete records dropped", notes, err)
	}
	if exists, _, _, _ := rs.State(ctx); exists {
		t.Fatal("KeepRecords left incomplete records")
	}
}
