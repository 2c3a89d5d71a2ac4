package service

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
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestStreamedStatsEqual: the counts stats makes as the groups are written
// (from the grouping view, in batches smaller than a neighbourhood, and
// from a scan), with the distinct URLs counted a bit per handle, equal
// those of the whole snapshot held in memory (query.ComputeStats), under
// each of two policies, one of which left citations unnormalized; the
// synthetic citations bring rejected URLs, redirects, canonical
// declarations and shared content.
func TestStreamedStatsEqual(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	gen := synthFile(t, dir, synth.Options{Seed: 7, Sites: 60}, 3000)
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var digests []string
	for _, in := range []struct{ file, policy string }{
		{"../query/testdata/corpus.jsonl", "default"},
		{gen, "default"},
		{"../../testdata/citations.jsonl", "lenient"},
	} {
		pol, err := normalize.LoadPolicy(in.policy)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ingest.File(ctx, st, in.file, filepath.Base(in.file), ingest.Options{Policy: pol}); err != nil {
			t.Fatal(err)
		}
		if d := pol.Digest(); len(digests) == 0 || digests[len(digests)-1] != d {
			digests = append(digests, d)
		}
	}
	for _, d := range digests {
		if ok, err := citestore.New(st).HasView(ctx, d); err != nil || !ok {
			if _, err := citestore.New(st).RebuildView(ctx, d, 0, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var want []string
	for _, d := range digests {
		snap, err := query.Load(ctx, citestore.New(st), d)
		if err != nil {
			t.Fatal(err)
		}
		s := query.ComputeStats(snap, query.Groups(snap, query.GroupOptions{MaxShared: 3}))
		if s.Unnormalized == 0 || d == digests[0] && (s.Rejected == 0 || len(s.RelationsByType) < 3 || s.GroupsWithSeveral < 10 || len(s.GroupsByConfirmation) == 0) {
			t.Fatalf("policy %s: %+v: the data should give unnormalized and rejected citations, relations and groups", d, s)
		}
		want = append(want, js(t, s))
		// The scan's count, a bit per handle, for a backend that cannot
		// count from an index.
		raw, resolved, err := query.DistinctURLs(ctx, scanOnly{citestore.New(st)}, d)
		if err != nil || raw != s.DistinctRawURLs || resolved != s.DistinctResolvedURLs {
			t.Errorf("policy %s: scanned %d raw and %d resolved URLs (%v), want %d and %d", d, raw, resolved, err, s.DistinctRawURLs, s.DistinctResolvedURLs)
		}
	}
	st.Close()
	for i, d := range digests {
		for name, how := range map[string]GroupsRead{
			"view": {View: true, Strict: true, Batch: 7},
			"scan": GroupsScan,
		} {
			dbh := DB{Path: db}
			set, done, err := dbh.GroupsFrom(ctx, d, query.GroupOptions{MaxShared: 3, MinSize: 1}, how)
			if err != nil {
				t.Fatal(err)
			}
			if set.FromView() != (name == "view") {
				t.Fatalf("%s: from the view %v", name, set.FromView())
			}
			done()
			res, err := dbh.Stats(ctx, StatsRequest{Policy: d, MaxShared: 3, Read: how})
			if err != nil {
				t.Fatal(err)
			}
			if got := js(t, res.Stats); got != want[i] {
				t.Errorf("policy %s, %s:\n%s\nwant\n%s", d, name, got, want[i])
			}
		}
	}
}

// scanOnly is a store that can only scan.
type scanOnly struct{ store.Scanner }

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// synthFile writes n synthetic citations made with o as JSON Lines in dir
// and returns the file's path.
func synthFile(t *testing.T, dir string, o synth.Options, n int) string {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.New(o).Write(&buf, n); err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(dir, "synth.jsonl")
	if err := os.WriteFile(gen, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return gen
}
