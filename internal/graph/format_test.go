package graph_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

var update = flag.Bool("update", false, "rewrite testdata/format-v4/prov.db")

// formatData is what the files testdata/format-v*/prov.db hold: two citations
// and literals that cayley's typed values would have changed, in a named
// graph. It must not change with the other tests' data.
func formatData() []graph.Quad {
	quads := citations(0, 2)
	subj, pred, g := graph.IRI(pgid+"citation/0"), graph.IRI(pg+"value"), graph.IRI(pgid+"graph/1")
	for _, o := range []graph.Term{
		graph.Literal("2025-01-01T01:00:00+01:00", graph.XSDDateTime),
		graph.Literal("2025-01-01T00:00:00Z", graph.XSDDateTime),
		graph.Literal("007", graph.XSDInteger),
		graph.Literal("7", graph.XSDInteger),
		graph.String("a \"quoted\"\n\x00 café"),
		graph.LangString("colour", "en-gb"),
		graph.IRI("https://example.com/a b"),
		graph.Blank("b0"),
	} {
		quads = append(quads, graph.Quad{S: subj, P: pred, O: o, G: g})
	}
	return quads
}

// TestFormatV1Refused opens a store written by the first file format
// (cayley's kv layout), which this build cannot read: Open must say so,
// name the format, and say how to convert the file.
func TestFormatV1Refused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	copyFile(t, filepath.Join("testdata", "format-v1", "prov.db"), path)
	s, err := graph.Open(path, nil)
	if err == nil {
		s.Close()
		t.Fatal("Open(format v1 file) succeeded")
	}
	for _, want := range []string{path, "provgraph-cayley-kv version 1", "provgraph-store versions 3 to 7", "provgraph convert --from"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open(format v1 file) = %q, want it to say %q", err, want)
		}
	}
	if !errors.Is(err, graph.ErrVersion) {
		t.Errorf("Open(format v1 file) = %v, want ErrVersion", err)
	}
}

// TestReadV1 reads every quad of the format 1 golden file, literals exactly
// as written ("007" stays "007", two dateTimes of one instant stay two), and
// refuses a file in another format.
func TestReadV1(t *testing.T) {
	var got []string
	err := graph.ReadV1(context.Background(), filepath.Join("testdata", "format-v1", "prov.db"), func(q graph.Quad) error {
		got = append(got, q.String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, q := range formatData() {
		want = append(want, q.String())
	}
	slices.Sort(got)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Errorf("ReadV1 =\n\t%q\nwant\n\t%q", got, want)
	}
	err = graph.ReadV1(context.Background(), filepath.Join("testdata", "format-v2", "prov.db"), func(graph.Quad) error { return nil })
	if !errors.Is(err, graph.ErrNotStore) || !strings.Contains(err.Error(), "not in format provgraph-cayley-kv version 1") {
		t.Errorf("ReadV1(format 2 file) = %v, want ErrNotStore", err)
	}
}

// TestFormatV2Refused opens a store written by format version 2, whose
// POS and OSP indexes were B-trees: Open must refuse it, name the version
// and say how to convert it.
func TestFormatV2Refused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	copyFile(t, filepath.Join("testdata", "format-v2", "prov.db"), path)
	s, err := graph.Open(path, nil)
	if err == nil {
		s.Close()
		t.Fatal("Open(format v2 file) succeeded")
	}
	for _, want := range []string{path, "provgraph-store version 2", "this build reads versions 3 to 7", "provgraph convert --from"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open(format v2 file) = %q, want it to say %q", err, want)
		}
	}
	if !errors.Is(err, graph.ErrVersion) {
		t.Errorf("Open(format v2 file) = %v, want ErrVersion", err)
	}
}

// TestReadEarlier reads every quad of the format 1 and format 2 golden
// files, literals exactly as written, and refuses a file in the current
// format.
func TestReadEarlier(t *testing.T) {
	var want []string
	for _, q := range formatData() {
		want = append(want, q.String())
	}
	slices.Sort(want)
	want = slices.Compact(want)
	for _, v := range []string{"format-v1", "format-v2"} {
		var got []string
		err := graph.ReadEarlier(context.Background(), filepath.Join("testdata", v, "prov.db"), func(q graph.Quad) error {
			got = append(got, q.String())
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("ReadEarlier(%s) =\n\t%q\nwant\n\t%q", v, got, want)
		}
	}
	err := graph.ReadV2(context.Background(), filepath.Join("testdata", "format-v3", "prov.db"), func(graph.Quad) error { return nil })
	if !errors.Is(err, graph.ErrNotStore) || !strings.Contains(err.Error(), "not in format provgraph-store version 2") {
		t.Errorf("ReadV2(format 3 file) = %v, want ErrNotStore", err)
	}
}

// TestFormatV4StillOpens opens a store written by the current file format,
// so that a change which cannot read it any more is noticed. Regenerate it
// only when the format version changes, and then keep the old file beside
// the new one.
func TestFormatV4StillOpens(t *testing.T) { goldenStillOpens(t, "v4", *update) }

// TestFormatV3StillOpens opens a store of format version 3, whose runs
// have no filters: this build reads it (every run is read by every
// lookup) and marks it version 4 when it opens it writable.
func TestFormatV3StillOpens(t *testing.T) { goldenStillOpens(t, "v3", false) }

func goldenStillOpens(t *testing.T, version string, update bool) {
	golden := filepath.Join("testdata", "format-"+version, "prov.db")
	if update {
		os.Remove(golden)
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := graph.Open(golden, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Two transactions, so that POS and OSP hold two runs each.
		data := formatData()
		if _, err := s.Add(data[:len(data)/2]); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(data[len(data)/2:]); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Work on a copy: a test must not touch testdata, and a writable open
	// is what users do.
	path := filepath.Join(t.TempDir(), "prov.db")
	copyFile(t, golden, path)
	s := mustOpen(t, path, nil)
	want := formatData()
	if got := mustCount(t, s); got != int64(distinct(want)) {
		t.Errorf("Count() = %d, want %d", got, distinct(want))
	}
	var wantS []string
	for _, q := range want {
		wantS = append(wantS, q.String())
	}
	slices.Sort(wantS)
	wantS = slices.Compact(wantS)
	if got := all(t, s, graph.Quad{}); !slices.Equal(got, wantS) {
		t.Errorf("Match(all) on the %s file =\n\t%q\nwant\n\t%q", version, got, wantS)
	}
	// Every object is found through OSP, every predicate through POS.
	for _, q := range want {
		for _, p := range []graph.Quad{{O: q.O}, {P: q.P, O: q.O}} {
			if !slices.Contains(all(t, s, p), q.String()) {
				t.Errorf("Match(%v) on the %s file lacks %v", p, version, q)
			}
		}
	}
	if n := mustAdd(t, s, want...); n != 0 {
		t.Errorf("Add(same data) on the %s file = %d, want 0", version, n)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Error(err)
	}
	if st, err := s.Stats(); err != nil || st.Version != 4 {
		t.Errorf("Stats() after a writable open of the %s file = version %d, %v; want version 4", version, st.Version, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
