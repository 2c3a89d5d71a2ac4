package query_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
)

// laterPolicyStore is n synthetic citations ingested under the default
// policy (which keeps a view), then the repository's examples under
// testdata/difftest.toml, a policy the synthetic citations were never
// normalized under and which has no view.
func laterPolicyStore(t *testing.T, n int) (*citestore.Store, *normalize.Policy) {
	t.Helper()
	st := synthStore(t, n)
	pol, err := normalize.LoadPolicy("testdata/difftest.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), st, filepath.Join("..", "..", "testdata", "citations.jsonl"), "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	return citestore.New(st), pol
}

// TestExplainFromViewMatchesExplain: the explanations by value read from
// the grouping view and sorted on disk are Explain's on a snapshot, line
// for line: under the policy of the first ingest, and under one added
// later whose view has rows of citations never normalized under it (their
// raw and resolved URLs listed, no key), with the sort's working set at a
// few records a chunk and at its default; closing the spool leaves no
// file in its directory.
func TestExplainFromViewMatchesExplain(t *testing.T) {
	ctx := context.Background()
	cs, pol := laterPolicyStore(t, 1500)
	if _, err := cs.RebuildView(ctx, pol.Digest(), 0, nil); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"provgraph-default", "test-diff"} {
		snap, err := query.Load(ctx, cs, policy)
		if err != nil {
			t.Fatal(err)
		}
		rep := query.Groups(snap, query.GroupOptions{})
		unnormalized := 0
		for _, c := range snap.Citations {
			if c.Norm == nil {
				unnormalized++
			}
		}
		if policy == "test-diff" && unnormalized < 1000 {
			t.Fatalf("%s: %d citations never normalized under it; the test needs them", policy, unnormalized)
		}
		for _, what := range []string{"keys", "raw-urls", "resolved-urls"} {
			want, err := query.Explain(snap, rep, what)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 10 {
				t.Fatalf("%s %s: %d lines; the fixture should give more", policy, what, len(want))
			}
			for _, mem := range []int64{1, 0} {
				dir := t.TempDir()
				sp, err := query.ExplainFromView(ctx, cs, policy, what, query.ViewRead{}, query.DiskSort{Dir: dir, Mem: mem})
				if err != nil || sp == nil {
					t.Fatalf("%s %s: spool %v, %v", policy, what, sp, err)
				}
				if sp.Policy.Digest != snap.Policy.Digest {
					t.Errorf("%s %s: policy %s, want %s", policy, what, sp.Policy, snap.Policy)
				}
				var lines []query.ExplainLine
				for range 2 { // Each reads the spool again
					lines = lines[:0]
					if err := sp.Each(func(l query.ExplainLine) error { lines = append(lines, l); return nil }); err != nil {
						t.Fatal(err)
					}
				}
				if sp.Len() != len(want) || !reflect.DeepEqual(lines, want) {
					t.Errorf("%s %s, working set %d: %d lines (Len %d) differ from Explain's %d", policy, what, mem, len(lines), sp.Len(), len(want))
					for i := range min(len(lines), len(want)) {
						if !reflect.DeepEqual(lines[i], want[i]) {
							t.Errorf("first difference, line %d: %+v, want %+v", i, lines[i], want[i])
							break
						}
					}
				}
				sp.Close()
				if left, _ := os.ReadDir(dir); len(left) != 0 {
					t.Errorf("%s %s: files left in the sort's directory: %v", policy, what, left)
				}
			}
		}
	}
}

// TestExplainFromViewNoView: without a view of the policy, or for an
// explanation that is not by value, the view does not answer.
func TestExplainFromViewNoView(t *testing.T) {
	ctx := context.Background()
	cs, _ := laterPolicyStore(t, 50)
	sp, err := query.ExplainFromView(ctx, cs, "test-diff", "keys", query.ViewRead{}, query.DiskSort{Dir: t.TempDir()})
	if sp != nil || err != nil {
		t.Errorf("a policy without a view: spool %v, %v; want neither", sp, err)
	}
	if _, err := query.ExplainFromView(ctx, cs, "provgraph-default", "groups", query.ViewRead{}, query.DiskSort{}); err == nil {
		t.Error("explain groups from ExplainFromView: no error")
	}
}

// TestExplainFromViewCancel: a cancelled context stops the listing with
// its error.
func TestExplainFromViewCancel(t *testing.T) {
	st := synthStore(t, 300)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sp, err := query.ExplainFromView(ctx, citestore.New(st), "provgraph-default", "raw-urls", query.ViewRead{}, query.DiskSort{Dir: t.TempDir()})
	if err == nil || sp != nil {
		t.Errorf("cancelled: spool %v, %v; want context.Canceled", sp, err)
	}
}
