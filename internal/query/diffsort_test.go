package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
)

// TestPolicyDifferMatchesDiffPolicies: the diff joined on disk
// (PolicyDiffer) is exactly DiffPolicies' on the same database, both ways
// round (merges one way are splits the other), whether each policy's
// groups come from a scan or from the grouping view a few keys at a time,
// with the sorts' working set at its smallest (a few records a chunk) and
// at its default; it leaves no file in its directory.
func TestPolicyDifferMatchesDiffPolicies(t *testing.T) {
	ctx := context.Background()
	st := synthStore(t, 1500)
	pol, err := normalize.LoadPolicy("testdata/difftest.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Renormalize(ctx, st, ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	cs := citestore.New(st)
	opts := query.GroupOptions{}
	for _, pair := range [][2]string{{"provgraph-default", "test-diff"}, {"test-diff", "provgraph-default"}} {
		a, err := query.Load(ctx, cs, pair[0])
		if err != nil {
			t.Fatal(err)
		}
		b, err := query.Load(ctx, cs, pair[1])
		if err != nil {
			t.Fatal(err)
		}
		want := query.DiffPolicies(a, b, opts)
		if want.Counts["merge"] == 0 || want.Counts["split"] == 0 {
			t.Fatalf("%v: the fixture gives %d merges and %d splits; the test needs both", pair, want.Counts["merge"], want.Counts["split"])
		}
		wantJSON := diffJSON(t, want)
		for _, view := range []bool{false, true} {
			for _, mem := range []int64{1, 0} {
				dir := t.TempDir()
				d, err := query.NewPolicyDiffer(ctx, query.DiskSort{Dir: dir, Mem: mem})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pair {
					var set *query.GroupSet
					if view {
						set, err = query.LoadGroupsFromView(ctx, cs, p, opts, query.ViewRead{Batch: 7})
						if err == nil && set == nil {
							t.Fatalf("%s: no grouping view", p)
						}
					} else {
						set, err = query.LoadGroups(ctx, cs, p, opts)
					}
					if err != nil {
						t.Fatal(err)
					}
					if err := d.Add(ctx, set); err != nil {
						t.Fatal(err)
					}
				}
				got, err := d.Diff(ctx)
				d.Close()
				if err != nil {
					t.Fatalf("%v view=%v mem=%d: %v", pair, view, mem, err)
				}
				if g := diffJSON(t, got); g != wantJSON {
					t.Errorf("%v view=%v mem=%d: PolicyDiffer gives\n%s\nDiffPolicies\n%s", pair, view, mem, g, wantJSON)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("%v view=%v mem=%d: %d files left in the sort directory", pair, view, mem, len(ents))
				}
			}
		}
	}
}

// TestPolicyDifferCancel: a cancelled diff returns the context's error and
// Close ends its sorts, whether it stops while a policy's groups are read
// or is closed before Diff.
func TestPolicyDifferCancel(t *testing.T) {
	st := synthStore(t, 300)
	cs := citestore.New(st)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := query.NewPolicyDiffer(ctx, query.DiskSort{Dir: t.TempDir(), Mem: 1})
	if err != nil {
		t.Fatal(err)
	}
	set, err := query.LoadGroups(ctx, cs, "", query.GroupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := d.Add(ctx, set); !errors.Is(err, context.Canceled) {
		t.Errorf("Add after cancel = %v, want context.Canceled", err)
	}
	d.Close()

	d, err = query.NewPolicyDiffer(context.Background(), query.DiskSort{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set, _ = query.LoadGroups(context.Background(), cs, "", query.GroupOptions{})
	if err := d.Add(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	d.Close() // before Diff: must not hang
}

func diffJSON(t *testing.T, d *query.PolicyDiff) string {
	t.Helper()
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
