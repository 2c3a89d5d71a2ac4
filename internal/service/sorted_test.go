package service

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestSortedStreamEqualsFilter: a listing ordered by size or risk,
// written from a spool as the groups are found (ReviewedSet.Write with a
// Sort), from the grouping view in small batches and from a scan, gives
// page after page the groups, review states, totals and cursors that
// Reviewed.Filter gives holding every group, with filters and decisions
// (many groups tie on their key, so the order among equals is tested);
// the spool is gone once written.
func TestSortedStreamEqualsFilter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	db := filepath.Join(dir, "s.db")
	gen := synthFile(t, dir, synth.Options{Seed: 11, Sites: 40}, 2000)
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := normalize.LoadPolicy("default")
	for _, f := range []string{gen, "../../testdata/citations.jsonl"} {
		if _, err := ingest.File(ctx, st, f, filepath.Base(f), ingest.Options{Policy: pol}); err != nil {
			t.Fatal(err)
		}
	}
	opts := query.GroupOptions{MaxShared: 3, MinSize: 2, Review: true}
	whole, err := LoadReviewed(ctx, st, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	// Decisions on a few groups: some decided, one different.
	for i, g := range whole.Report.Groups[:6] {
		d := review.Same
		if i%3 == 2 {
			d = review.Different
		}
		if _, err := Decide(ctx, st, whole, DecideRequest{GroupID: g.ID, Decision: d, Reviewer: "alice"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if whole, err = LoadReviewed(ctx, st, "", opts); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if len(whole.Report.Groups) < 50 {
		t.Fatalf("%d groups: the data should give more", len(whole.Report.Groups))
	}
	line := func(g *query.Group, s *review.Status) string {
		latest := ""
		if s.Latest != nil {
			latest = s.Latest.Decision
		}
		return fmt.Sprintf("%s %d %s %s\n", g.ID, len(g.Members), s.State, latest)
	}
	// The pages within sortedTop come from the heap, the rest from the
	// spool: with sortedTop 20, most pages below come from the spool.
	for _, top := range []int{sortedTop, 20} {
		defer func(n int) { sortedTop = n }(sortedTop)
		sortedTop = top
		for _, f := range []GroupFilter{
			{Sort: "risk"},
			{Sort: "size"},
			{Sort: "risk", Limit: 7},
			{Sort: "size", Limit: 50, State: review.StateUnreviewed},
			{Sort: "risk", Limit: 15},
			{Sort: "risk", Limit: 3, State: review.StateDecided},
			{Sort: "size", Limit: 5, Domain: "example.test"},
		} {
			var want []string
			for ff := f; ; {
				p, err := whole.Filter(ff)
				if err != nil {
					t.Fatal(err)
				}
				page := fmt.Sprintf("total %d next %q\n", p.Total, p.Next)
				for _, g := range p.Groups {
					page += line(g, whole.Status(g))
				}
				want = append(want, page)
				if ff.Cursor = p.Next; p.Next == "" {
					break
				}
			}
			for name, how := range map[string]GroupsRead{"view": {View: true, Strict: true, Batch: 5}, "scan": GroupsScan} {
				var got []string
				for ff := f; ; {
					rs, err := DB{Path: db}.ReviewedFrom(ctx, "", opts, how)
					if err != nil {
						t.Fatal(err)
					}
					if rs.Set.FromView() != (name == "view") {
						t.Fatalf("%s: from the view %v", name, rs.Set.FromView())
					}
					var b []byte
					l, err := rs.Write(ctx, ff, func(buf []byte, g *query.Group, s *review.Status) []byte {
						return append(buf, line(g, s)...)
					}, func(p []byte) error {
						b = append(b, p...)
						return nil
					})
					rs.Close()
					if err != nil {
						t.Fatal(err)
					}
					if l.Rest != nil || l.Shown != bytes.Count(b, []byte("\n")) {
						t.Errorf("%+v, %s: shown %d of %d lines, rest %v", ff, name, l.Shown, bytes.Count(b, []byte("\n")), l.Rest)
					}
					got = append(got, fmt.Sprintf("total %d next %q\n", l.Total, l.Next)+string(b))
					if ff.Cursor = l.Next; l.Next == "" {
						break
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%+v, %s, top %d:\n%v\nwant\n%v", f, name, top, got, want)
				}
			}
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in $TMPDIR: %v", left)
	}
}
