package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// TestExplainReviewStateAsWhole: the groups in each review state, judged
// as they are written from a scan and from the grouping view a few keys
// at a time, are the lines ExplainState gives on every group held, with a
// group decided, one decided then joined by a new citation (stale), and
// the rest unreviewed.
func TestExplainReviewStateAsWhole(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	pol := normalize.Default()
	if _, err := ingest.File(ctx, st, "../../testdata/citations.jsonl", "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	opts := query.GroupOptions{MinSize: 2, Review: true}
	r, err := LoadReviewed(ctx, st, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Report.Groups) < 3 {
		t.Fatalf("%d groups in the queue; the test needs three", len(r.Report.Groups))
	}
	decided, stale := r.Report.Groups[0], r.Report.Groups[1]
	for _, g := range []*query.Group{decided, stale} {
		if _, err := Decide(ctx, st, r, DecideRequest{GroupID: g.ID, Decision: review.Same, Reviewer: "alice"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// A new citation of the stale group's key joins it.
	in := filepath.Join(t.TempDir(), "more.jsonl")
	line := fmt.Sprintf(`{"citation_id": "joins-1", "engine": "chatgpt", "observed_at": "2026-12-01T00:00:00Z", "raw_url": %q}`+"\n", stale.Key)
	if err := os.WriteFile(in, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(ctx, st, in, "more.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	whole, err := LoadReviewed(ctx, st, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db := DB{Path: path}
	for _, state := range review.States {
		want, err := whole.ExplainState(state)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("no group in state %s: the fixture should give one", state)
		}
		for _, how := range []GroupsRead{GroupsScan, {View: true, Batch: 2, Strict: true}} {
			dir := t.TempDir()
			sp, err := db.ExplainReviewState(ctx, "", 0, state, how, dir)
			if err != nil {
				t.Fatal(err)
			}
			got := spooled(t, sp)
			if sp.Policy.Digest != whole.Report.Policy.Digest || !reflect.DeepEqual(got, want) {
				t.Errorf("%s, read %+v: %s\n%+v\nwant\n%+v", state, how, sp.Policy, got, want)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("%s: files left in the spool's directory: %v", state, left)
			}
		}
	}
	if _, err := db.ExplainReviewState(ctx, "", 0, "pending", GroupsScan, ""); err == nil {
		t.Error("review state pending: no error")
	}
}

// spooled reads the lines of sp back, and closes it.
func spooled(t *testing.T, sp *query.LineSpool) []query.ExplainLine {
	t.Helper()
	defer sp.Close()
	lines := []query.ExplainLine{}
	if err := sp.Each(func(l query.ExplainLine) error { lines = append(lines, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != sp.Len() {
		t.Errorf("%d lines read back, Len %d", len(lines), sp.Len())
	}
	return lines
}
