package citestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestMembersSplit: Members in a view reads a large batch half on another
// goroutine (a fork of the view's transaction); each citation it returns
// equals the one it returns for that id alone, read on one goroutine. Run
// with -race, it also checks that the two readers share nothing they
// write.
func TestMembersSplit(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	if err := synth.New(synth.Options{Seed: 21, Sites: 20}).Write(&buf, 400); err != nil {
		t.Fatal(err)
	}
	var recs []*model.Record
	var ids []string
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		r := new(model.Record)
		if err := json.Unmarshal(line, r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		ids = append(ids, r.ID())
	}
	g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := citestore.New(g)
	pol := normalize.Default()
	if _, err := s.Append(ctx, store.Batch{Policy: pol, Records: recs}); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, "no-such-citation")
	members := func(v store.Reader, ids []string) []*store.Citation {
		t.Helper()
		cs, err := v.(interface {
			Members(context.Context, string, []string) ([]*store.Citation, error)
		}).Members(ctx, pol.Digest(), ids)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	var all []*store.Citation
	if err := s.View(ctx, func(v store.Reader) error { all = members(v, ids); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != len(ids) || all[len(all)-1] != nil {
		t.Fatalf("Members(%d ids) = %d citations, the unknown id's %v; want %d, nil", len(ids), len(all), all[len(all)-1], len(ids))
	}
	for i, id := range ids[:len(ids)-1] {
		var one []*store.Citation
		if err := s.View(ctx, func(v store.Reader) error { one = members(v, []string{id}); return nil }); err != nil {
			t.Fatal(err)
		}
		if all[i] == nil || all[i].ID != id || !reflect.DeepEqual(all[i], one[0]) {
			t.Errorf("Members in a batch of %d [%d] = %+v, want %+v (read alone)", len(ids), i, all[i], one[0])
		}
	}
}
