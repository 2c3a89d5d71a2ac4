package citestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestCompactViewKeepsRows: a view written by many batches (several runs
// in each map) holds the same rows, postings and key lookups after
// CompactView merged each map into one run, a few KiB a transaction, and
// check finds it consistent with the quads.
func TestCompactViewKeepsRows(t *testing.T) {
	ctx := context.Background()
	g, err := graph.Open(filepath.Join(t.TempDir(), "m.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := citestore.New(g)
	recs := append(storetest.Corpus(t), storetest.Synthetic(t, synth.Options{Seed: 9, Sites: 5}, 400)...)
	for len(recs) > 0 {
		n := min(len(recs), 37)
		if _, err := s.Append(ctx, store.Batch{Policy: normalize.Default(), Records: recs[:n]}); err != nil {
			t.Fatal(err)
		}
		recs = recs[n:]
	}
	d := normalize.Default().Digest()
	type state struct {
		runs   int
		rows   []string
		keyed  []string
		shared []string
	}
	read := func() state {
		t.Helper()
		var st state
		views, err := s.Views(ctx)
		if err != nil || len(views) != 1 {
			t.Fatalf("views: %v, %v", views, err)
		}
		st.runs = views[0].RowRuns
		rows, err := s.RowsAfter(ctx, d, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			b, err := json.Marshal(r) // the member record whole, not its address
			if err != nil {
				t.Fatal(err)
			}
			st.rows = append(st.rows, string(b))
		}
		keys := map[string]bool{}
		for _, r := range rows {
			if r.Key != "" && !keys[r.Key] {
				keys[r.Key] = true
				kr, err := s.KeyRows(ctx, d, r.Key)
				if err != nil {
					t.Fatal(err)
				}
				srcs, err := s.RedirectSources(ctx, d, r.Key)
				if err != nil {
					t.Fatal(err)
				}
				st.keyed = append(st.keyed, fmt.Sprintf("%s: %d rows, redirected from %q", r.Key, len(kr), srcs))
			}
		}
		for _, kind := range []string{"content", "digest", "redirect", "relation"} {
			if err := s.SharedValues(ctx, d, kind, func(v string) error {
				st.shared = append(st.shared, kind+" "+v)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	before := read()
	if before.runs < 3 {
		t.Fatalf("rows in %d runs: the test wants several", before.runs)
	}
	steps := 0
	maps, err := s.CompactView(ctx, d, 4096, func(citestore.CompactedMap) { steps++ })
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 7 || maps[0].Map != "rows" || maps[0].Runs != before.runs || maps[0].Entries != uint64(len(before.rows)) {
		t.Errorf("CompactView = %+v, want the rows' %d runs merged into %d rows first, then the 6 posting maps", maps, before.runs, len(before.rows))
	}
	if steps < 10 {
		t.Errorf("%d transactions of 4 KiB: the test wants many", steps)
	}
	after := read()
	if after.runs != 1 {
		t.Errorf("rows in %d runs after compaction, want 1", after.runs)
	}
	if !slices.Equal(after.rows, before.rows) || !slices.Equal(after.keyed, before.keyed) || !slices.Equal(after.shared, before.shared) {
		for i := range min(len(after.rows), len(before.rows)) {
			if after.rows[i] != before.rows[i] {
				t.Errorf("row %d: %s\nbefore: %s", i, after.rows[i], before.rows[i])
				break
			}
		}
		t.Errorf("the view reads differently after compaction: rows %d/%d, keyed %d/%d (%v), shared %d/%d (%v)", len(after.rows), len(before.rows), len(after.keyed), len(before.keyed), slices.Equal(after.keyed, before.keyed), len(after.shared), len(before.shared), slices.Equal(after.shared, before.shared))
	}
	if err := s.Check(ctx); err != nil {
		t.Errorf("check after compaction: %v", err)
	}
	again, err := s.CompactView(ctx, d, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range again {
		if m.Runs != 0 {
			t.Errorf("compacted again: %+v, want every map left as it is", m)
		}
	}
}
