package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/vocab"
)

func loadRDF(t testing.TB, st *graph.Store, path, format string) (ingest.Summary, error) {
	t.Helper()
	return ingest.RDFFile(context.Background(), st, path, filepath.Base(path), format, ingest.Options{Now: clock(), BatchQuads: 1000})
}

// goodNQuads returns n distinct N-Quads lines.
func goodNQuads(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<https://example.org/s%d> <https://example.org/p> \"value %d\" <https://example.org/g> .\n", i, i)
	}
	return b.String()
}

func runCount(t testing.TB, st *graph.Store) int {
	t.Helper()
	runs, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.IngestRun))
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// Regression test for issue 19.3: a rejected RDF file wrote the statements
// before its bad line, and each retry left another "running" run.
func TestRDFBadInputWritesNothing(t *testing.T) {
	st := openStore(t)
	if _, err := loadRDF(t, st, writeFile(t, "before.nq", goodNQuads(10)), ingest.FormatNQuads); err != nil {
		t.Fatal(err)
	}
	quads, runs := count(t, st), runCount(t, st)
	bad := writeFile(t, "bad.nq", goodNQuads(60000)+"<https://example.org/x> <https://example.org/p> \"caf\xe9\" .\n")
	for try := range 2 {
		_, err := loadRDF(t, st, bad, ingest.FormatNQuads)
		var se *ingest.SyntaxError
		if !errors.As(err, &se) || se.Line != 60001 || se.Column != 53 || !strings.Contains(se.Msg, "invalid UTF-8: byte 0xe9") {
			t.Fatalf("try %d: RDFFile(bad.nq) = %v, want bad.nq:60001:53: invalid UTF-8: byte 0xe9", try, err)
		}
		if got := count(t, st); got != quads {
			t.Errorf("try %d: %d quads after the rejected file, %d before", try, got, quads)
		}
		if got := runCount(t, st); got != runs {
			t.Errorf("try %d: %d ingest runs after the rejected file, %d before", try, got, runs)
		}
	}
}

// TestRDFResumesUnfinishedRun interrupts an RDF load after its first batch:
// loading the same file again completes the same run, and the database
// ends as one uninterrupted load leaves it.
func TestRDFResumesUnfinishedRun(t *testing.T) {
	input := writeFile(t, "in.nq", goodNQuads(250)+"_:b0 <https://example.org/p> _:b1 .\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := openStore(t)
	first, err := ingest.RDFFile(ctx, st, input, "in.nq", ingest.FormatNQuads, ingest.Options{
		Now: clock(), BatchQuads: 100,
		Progress: func(p ingest.Progress) {
			if p.Phase == "write" {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted load = %v, want context.Canceled", err)
	}
	sum, err := loadRDF(t, st, input, ingest.FormatNQuads)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed || sum.Run != first.Run {
		t.Errorf("second load: run %v, resumed %v; want run %v resumed", sum.Run, sum.Resumed, first.Run)
	}
	status, _ := st.Objects(sum.Run, graph.IRI(vocab.RunStatus))
	if !hasValue(status, "complete") {
		t.Errorf("resumed run status = %v", status)
	}
	if n := runCount(t, st); n != 1 {
		t.Errorf("%d ingest runs, want 1", n)
	}
	clean := openStore(t)
	if _, err := loadRDF(t, clean, input, ingest.FormatNQuads); err != nil {
		t.Fatal(err)
	}
	if a, b := dumpWithoutRuns(t, st), dumpWithoutRuns(t, clean); a != b {
		t.Errorf("resumed database differs from an uninterrupted one:\n%s\n---\n%s", a, b)
	}
}

// TestRDFWritesWhatWasValidated changes the input after the first batch
// is written: the load still writes exactly the statements it validated.
func TestRDFWritesWhatWasValidated(t *testing.T) {
	input := writeFile(t, "in.nq", goodNQuads(300))
	st := openStore(t)
	changed := false
	sum, err := ingest.RDFFile(context.Background(), st, input, "in.nq", ingest.FormatNQuads, ingest.Options{
		Now: clock(), BatchQuads: 100,
		Progress: func(p ingest.Progress) {
			if !changed {
				changed = true
				// Same length, other content, and then a bad line.
				text := strings.ReplaceAll(goodNQuads(300), "value", "VALUE") + "bad\n"
				if err := os.WriteFile(input, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 300 {
		t.Errorf("%d statements, want 300", sum.Records)
	}
	clean := openStore(t)
	if _, err := loadRDF(t, clean, writeFile(t, "in.nq", goodNQuads(300)), ingest.FormatNQuads); err != nil {
		t.Fatal(err)
	}
	if a, b := dumpWithoutRuns(t, st), dumpWithoutRuns(t, clean); a != b {
		t.Errorf("the load wrote what the file held after validation:\n%s\n---\nwant\n%s", a, b)
	}
}
