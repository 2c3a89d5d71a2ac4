package export_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/export"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
)

// fixtures are the corpora every interop check runs on: the bundled
// example and the query fixture corpus, which covers every grouping rule.
var fixtures = []string{"../../testdata/citations.jsonl", "../query/testdata/corpus.jsonl"}

// newStore opens a new store in a temporary directory, without fsync, and
// closes it when the test ends.
func newStore(tb testing.TB) *graph.Store {
	tb.Helper()
	st, err := graph.Open(filepath.Join(tb.TempDir(), "x.db"), &graph.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// fixtureStore ingests the fixtures under the default policy.
func fixtureStore(tb testing.TB) *graph.Store {
	tb.Helper()
	st := newStore(tb)
	for _, f := range fixtures {
		if _, err := ingest.File(context.Background(), st, f, filepath.Base(f), ingest.Options{Policy: normalize.Default()}); err != nil {
			tb.Fatalf("ingest %s: %v", f, err)
		}
	}
	return st
}

// clock returns a clock that always reads the given RFC 3339 time.
func clock(tb testing.TB, ts string) func() time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		tb.Fatal(err)
	}
	return func() time.Time { return t }
}

const (
	t1 = "2026-11-30T10:00:00.123456789Z"
	t2 = "2026-12-01T08:30:00Z"
)

// exportBytes exports st in format with the clock at ts.
func exportBytes(tb testing.TB, st *graph.Store, format export.Format, ts string, include bool) ([]byte, export.Summary) {
	tb.Helper()
	var buf bytes.Buffer
	sum, err := export.Write(context.Background(), st, &buf, &export.Options{
		Format: format, Now: clock(tb, ts), Version: "test", IncludeOntology: include,
	})
	if err != nil {
		tb.Fatalf("Write(%s): %v", format, err)
	}
	return buf.Bytes(), sum
}

// exportFile exports st to a file in a temporary directory.
func exportFile(tb testing.TB, st *graph.Store, format export.Format, ts string) (string, export.Summary) {
	tb.Helper()
	b, sum := exportBytes(tb, st, format, ts, false)
	path := filepath.Join(tb.TempDir(), "export."+string(format))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path, sum
}

// lines splits an N-Triples or N-Quads document into its statements.
func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// minus returns the lines of a that are not in b.
func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, l := range b {
		in[l] = true
	}
	var out []string
	for _, l := range a {
		if !in[l] {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// describes reports whether an N-Triples or N-Quads line is about the
// export whose dataset node is ds (its subject is ds or under it).
func describes(line, ds string) bool {
	return strings.HasPrefix(line, "<"+ds+">") || strings.HasPrefix(line, "<"+ds+"/")
}
