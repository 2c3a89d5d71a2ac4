package citestore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
)

// copyFixture copies graph's testdata/NAME/prov.db into a temporary file.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "testdata", name, "prov.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prov.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// viewLayout returns the layout key of the view of policy d ("" for the
// B-trees of format 5).
func viewLayout(t *testing.T, g *graph.Store, d string) string {
	t.Helper()
	var l string
	err := g.Read(func(r *graph.Reader) error {
		l = string(r.View(d).Get([]byte("layout")))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestFormatFiles opens graph's testdata/format-v5/prov.db,
// testdata/format-v6/prov.db and testdata/format-v7/prov.db, the example
// citations ingested into a new file by a build of each format, whose
// view was written in that format's layout (B-trees, run maps, run maps
// with member records): a change of any layout or of what rows hold makes
// its check or its reads fail here.
func TestFormatFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int
		layout  string
		members bool
	}{{"format-v5", 5, "", false}, {"format-v6", 6, "runs", false}, {"format-v7", 7, "runs", true}} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := graph.Open(copyFixture(t, tc.name), &graph.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if st, err := g.Stats(); err != nil || st.Version != tc.version {
				t.Fatalf("Stats = version %d, %v; want %d", st.Version, err, tc.version)
			}
			d := normalize.Default().Digest()
			if l := viewLayout(t, g, d); l != tc.layout {
				t.Fatalf("view layout %q, want %q", l, tc.layout)
			}
			s := citestore.New(g)
			ctx := context.Background()
			if err := s.Check(ctx); err != nil {
				t.Fatalf("check of the %s file: %v", tc.name, err)
			}
			views, err := s.Views(ctx)
			if err != nil || len(views) != 1 || !views[0].Complete || views[0].Rows != 15 {
				t.Fatalf("Views = %+v, %v; want one complete view of 15 rows", views, err)
			}
			rows, err := s.RowsAfter(ctx, d, nil, 0)
			if err != nil || len(rows) != 15 {
				t.Fatalf("RowsAfter = %d rows, %v; want 15", len(rows), err)
			}
			if views[0].Members != tc.members {
				t.Errorf("Views: member records %v, want %v", views[0].Members, tc.members)
			}
			for _, r := range rows {
				if (r.Member != nil) != tc.members || tc.members && (r.Member.ID != r.CitationID || r.Member.Raw == "") {
					t.Errorf("row of %s: member record %+v, want one: %v", r.CitationID, r.Member, tc.members)
				}
			}
			keyed, err := s.KeyRows(ctx, d, "http://w3.org/TR/prov-o")
			if err != nil || len(keyed) != 1 || keyed[0].CitationID != "gpt-17-2" {
				t.Errorf("KeyRows(http://w3.org/TR/prov-o) = %+v, %v; want gpt-17-2", keyed, err)
			}
		})
	}
}

// TestFormatV5ViewWritten: citations added to a format 5 file go into
// its view's B-trees (the layout and the file's version 5 stay, so that a
// build of version 5 still reads it), the view checks, and it holds entry
// for entry what a rebuild, in run maps, holds.
func TestFormatV5ViewWritten(t *testing.T) {
	g, err := graph.Open(copyFixture(t, "format-v5"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := citestore.New(g)
	ctx := context.Background()
	recs := storetest.Synthetic(t, synth.Options{Seed: 5, Sites: 7}, 60)
	for lo := 0; lo < len(recs); lo += 20 {
		if _, err := s.Append(ctx, store.Batch{Policy: normalize.Default(), Records: recs[lo : lo+20]}); err != nil {
			t.Fatal(err)
		}
	}
	d := normalize.Default().Digest()
	if l := viewLayout(t, g, d); l != "" {
		t.Fatalf("view layout after appending to a format 5 view = %q, want the B-trees kept", l)
	}
	if st, _ := g.Stats(); st.Version != 5 {
		t.Errorf("version after appending to a format 5 view = %d, want 5", st.Version)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	dump := func() string {
		var lines []string
		err := g.Read(func(r *graph.Reader) (err error) {
			lines, err = citestore.DumpView(r, d)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	kept := dump()
	restore := citestore.SetViewMembers(false)
	_, err = s.RebuildView(ctx, d, 9, nil)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	if l := viewLayout(t, g, d); l != "runs" {
		t.Fatalf("view layout after a rebuild = %q, want runs", l)
	}
	if rebuilt := dump(); rebuilt != kept {
		t.Errorf("the format 5 view kept differs from one rebuilt in run maps\nkept:\n%s\nrebuilt:\n%s", kept, rebuilt)
	}
	// Rebuilt by this build, its rows carry member records, and the file
	// is version 7.
	if _, err := s.RebuildView(ctx, d, 9, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := g.Stats(); st.Version != 7 {
		t.Errorf("version after a rebuild = %d, want 7", st.Version)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.RowsAfter(ctx, d, nil, 0)
	if err != nil || len(rows) == 0 {
		t.Fatalf("RowsAfter = %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if r.Member == nil || r.Member.ID != r.CitationID {
			t.Fatalf("row of %s after a rebuild: member record %+v, want the citation's", r.CitationID, r.Member)
		}
	}
}
