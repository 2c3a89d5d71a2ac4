package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"hash/fnv"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/synth"
	"github.com/provgraph/provgraph/internal/vocab"
)

// selectionStore is a database with every case the selection of targets
// decides: synthetic citations (retrievals given without an outcome,
// raw URLs the policy rejects), the repository's examples (cited text,
// base URLs), two policies (a citation normalized twice), and retrievals
// made by a resolve run, a third of them failed.
func selectionStore(t *testing.T) *graph.Store {
	t.Helper()
	ctx := context.Background()
	st := openStore(t)
	var in bytes.Buffer
	if err := synth.New(synth.Options{Seed: 11, Sites: 30}).Write(&in, 1200); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{writeFile(t, "synth.jsonl", in.String()), filepath.Join("..", "..", "testdata", "citations.jsonl")} {
		if _, err := ingest.File(ctx, st, p, filepath.Base(p), ingest.Options{Policy: normalize.Default()}); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := normalize.LoadPolicy(filepath.Join("..", "query", "testdata", "difftest.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Renormalize(ctx, st, ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	targets, _, err := resolveTargetsInMaps(ctx, st, ingest.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(_ context.Context, u string) (*model.Retrieval, error) {
		h := fnv.New32a()
		h.Write([]byte(u))
		if h.Sum32()%3 == 0 {
			return &model.Retrieval{RetrievedAt: "2026-12-01T00:00:00Z", Outcome: "timeout", OutcomeError: "timed out"}, nil
		}
		return &model.Retrieval{RetrievedAt: "2026-12-01T00:00:00Z", FinalURL: u, FinalStatus: "200", Outcome: "ok"}, nil
	}
	// Half the targets, so that some citations have no retrieval at all.
	if _, err := ingest.Resolve(ctx, st, targets[:len(targets)/2], ingest.ResolveOptions{Fetch: fetch}); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestResolveTargetsAsInMaps: the selection made by term ids in bit sets,
// the selected citations' facts read alone, gives the targets and counts
// the selection that read every citation's facts into maps gave, under
// each option and their combination.
func TestResolveTargetsAsInMaps(t *testing.T) {
	ctx := context.Background()
	st := selectionStore(t)
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mid, _, err := resolveTargetsInMaps(ctx, st, ingest.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A Since that cuts the synthetic citations' times in two.
	var times []string
	err = st.Match(ctx, graph.Quad{P: graph.IRI(vocab.ObservedAt)}, func(q graph.Quad) error {
		times = append(times, q.O.Value)
		return nil
	})
	if err != nil || len(times) == 0 || len(mid) == 0 {
		t.Fatalf("%d observation times, %d targets, %v", len(times), len(mid), err)
	}
	if tm, err := time.Parse(time.RFC3339Nano, times[len(times)/2]); err == nil {
		since = tm
	}
	for _, opts := range []ingest.TargetOptions{{}, {OnlyUnresolved: true}, {Since: since}, {OnlyUnresolved: true, Since: since}} {
		want, wantCounts, err := resolveTargetsInMaps(ctx, st, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, counts, err := ingest.ResolveTargets(ctx, st, opts)
		if err != nil {
			t.Fatal(err)
		}
		if counts != wantCounts {
			t.Errorf("%+v: counts %+v, want %+v", opts, counts, wantCounts)
		}
		if wantCounts.Selected == 0 || opts.OnlyUnresolved && (wantCounts.Resolved == 0 || wantCounts.Retried == 0) || !opts.Since.IsZero() && wantCounts.Before == 0 || wantCounts.Rejected == 0 {
			t.Errorf("%+v: counts %+v: the fixture does not exercise every decision", opts, wantCounts)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %d targets differ from the %d selected in maps", opts, len(got), len(want))
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("first difference, target %d:\n%+v\nwant\n%+v", i, got[i], want[i])
					break
				}
			}
		}
	}
}

// TestResolveTargetsMaxSelected: past MaxSelected the selection stops
// before reading the selected citations' facts, with ErrTooManyTargets
// and the counts made; at it, it selects them.
func TestResolveTargetsMaxSelected(t *testing.T) {
	ctx := context.Background()
	st := selectionStore(t)
	_, all, err := ingest.ResolveTargets(ctx, st, ingest.TargetOptions{})
	if err != nil || all.Selected < 2 {
		t.Fatalf("%+v, %v", all, err)
	}
	targets, counts, err := ingest.ResolveTargets(ctx, st, ingest.TargetOptions{MaxSelected: all.Selected - 1})
	if !errors.Is(err, ingest.ErrTooManyTargets) || targets != nil || counts.Citations != all.Citations {
		t.Errorf("MaxSelected %d: %d targets, counts %+v, %v; want ErrTooManyTargets", all.Selected-1, len(targets), counts, err)
	}
	if _, counts, err := ingest.ResolveTargets(ctx, st, ingest.TargetOptions{MaxSelected: all.Selected}); err != nil || counts != all {
		t.Errorf("MaxSelected %d: counts %+v, %v; want %+v", all.Selected, counts, err, all)
	}
}
