package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestViewGroupsMatchesReport: the full report written from a grouping
// view a batch of keys at a time (LoadGroupsFromView) is LoadGroups'
// byte for byte as JSON, groups, rejected and unnormalized citations,
// counts and warnings, through Report and through Write, on the corpus,
// the corpus under host rules, synthetic data, synthetic data with
// extractions and a store made so that each posting matters, under the
// options TestGroupOfMatchesReport uses, with batches of one citation
// (every group's neighbourhood crosses batches), a few and all.
func TestViewGroupsMatchesReport(t *testing.T) {
	ctx := context.Background()
	stores := map[string]*graph.Store{
		"corpus":           corpusStore(t, "default"),
		"corpus, 2 rules":  corpusStore(t, "default", "testdata/hostrules.toml"),
		"synthetic":        synthStore(t, 600),
		"with extractions": extractedStore(t),
		"thresholds":       thresholdStore(t),
		"two policies":     twoPolicyStore(t),
	}
	for sname, st := range stores {
		cs := citestore.New(st)
		if sname == "two policies" {
			// The corpus, ingested under the first policy only, is
			// unnormalized under the second.
			rep, err := query.LoadGroups(ctx, cs, "", query.GroupOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r, err := rep.Report(ctx); err != nil || len(r.Missing) == 0 || len(r.Rejected) == 0 {
				t.Fatalf("two policies: %v unnormalized, %v rejected (%v); want some of each", len(r.Missing), len(r.Rejected), err)
			}
		}
		withViews(t, sname, st)
		for _, opts := range viewTestOptions {
			set, err := query.LoadGroups(ctx, cs, "", opts)
			if err != nil {
				t.Fatal(err)
			}
			want, err := set.Report(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON := reportJSON(t, want)
			wantStream, wantRest := streamed(t, set)
			for _, batch := range []int{1, 3, 50, 0} {
				vset, err := query.LoadGroupsFromView(ctx, cs, "", opts, query.ViewRead{Batch: batch})
				if err != nil {
					t.Fatal(err)
				}
				if vset == nil || !vset.FromView() {
					t.Fatalf("%s: LoadGroupsFromView did not read the view", sname)
				}
				got, err := vset.Report(ctx)
				if err != nil {
					t.Fatalf("%s %+v batch %d: %v", sname, opts, batch, err)
				}
				if g := reportJSON(t, got); g != wantJSON {
					t.Errorf("%s %+v batch %d: the report from the view differs:\n%.3000s\nwant\n%.3000s", sname, opts, batch, g, wantJSON)
				}
				if vset.Policy() != set.Policy() || len(vset.Warnings()) != len(set.Warnings()) {
					t.Errorf("%s: policy %v and warnings %q, LoadGroups' %v and %q", sname, vset.Policy(), vset.Warnings(), set.Policy(), set.Warnings())
				}
				gotStream, gotRest := streamed(t, vset)
				if gotStream != wantStream || gotRest != wantRest {
					t.Errorf("%s %+v batch %d: Write from the view differs", sname, opts, batch)
				}
			}
			t.Logf("%s %+v: %d groups listed, counts %v", sname, opts, len(want.Groups), want.Counts)
		}
	}
}

// TestViewGroupsWithoutView: a database keeping no view of the policy
// gives no set from the view (the caller groups the whole database).
func TestViewGroupsWithoutView(t *testing.T) {
	ctx := context.Background()
	st, err := graph.Open(filepath.Join(t.TempDir(), "q.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := ingest.File(ctx, st, "testdata/corpus.jsonl", "corpus.jsonl", ingest.Options{Policy: normalize.Default(), NoView: true}); err != nil {
		t.Fatal(err)
	}
	cs := citestore.New(st)
	set, err := query.LoadGroupsFromView(ctx, cs, "", query.GroupOptions{}, query.ViewRead{})
	if err != nil || set != nil {
		t.Fatalf("LoadGroupsFromView without a view: %v, %v; want nil, nil", set, err)
	}
}

// streamed writes set through Write, each group as JSON, and returns the
// bytes written and the rest of the report as JSON, its rejected and
// unnormalized citations as EachRejected and EachMissing list them.
func streamed(t *testing.T, set *query.GroupSet) (string, string) {
	t.Helper()
	var out []byte
	rest, err := set.Write(context.Background(), func(buf []byte, g *query.Group) []byte {
		b, err := json.Marshal(g)
		if err != nil {
			panic(err)
		}
		return append(append(buf, b...), '\n')
	}, func(p []byte) error {
		out = append(out, p...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A report written from a view lists its rejected and unnormalized
	// citations when asked (EachRejected, EachMissing), as one written
	// from a scan does from its slices.
	all := *rest
	all.Rejected, all.Missing = []query.RejectedURL{}, []string{}
	ctx := context.Background()
	if err := rest.EachRejected(ctx, func(r query.RejectedURL) error {
		all.Rejected = append(all.Rejected, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := rest.EachMissing(ctx, func(id string) error {
		all.Missing = append(all.Missing, id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return string(out), reportJSON(t, &all)
}

// twoPolicyStore holds the corpus ingested under the default policy, then
// synthetic citations under a policy with host rules: the corpus's
// citations are unnormalized under the second.
func twoPolicyStore(t *testing.T) *graph.Store {
	t.Helper()
	st := corpusStore(t, "default")
	var in bytes.Buffer
	if err := synth.New(synth.Options{Seed: 3, Sites: 20}).Write(&in, 200); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "synth.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := normalize.LoadPolicy("testdata/hostrules.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), st, path, "synth.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	return st
}
