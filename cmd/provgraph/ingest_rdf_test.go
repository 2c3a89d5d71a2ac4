package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/vocab"
)

// dbState returns how many quads and ingest runs the database holds.
func dbState(t *testing.T, path string) (quads int64, runs int) {
	t.Helper()
	st, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if quads, err = st.Count(); err != nil {
		t.Fatal(err)
	}
	rs, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.IngestRun))
	if err != nil {
		t.Fatal(err)
	}
	return quads, len(rs)
}

// Regression test for issues 19.3 and 19.11: rejected RDF input exits with
// status 1 and file:line:column, writes nothing, starts no run, and leaves
// no temporary file behind (standard input and the parsed statements are
// spooled).
func TestIngestRDFRejectedWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	good := filepath.Join(dir, "good.nq")
	if err := os.WriteFile(good, []byte("<http://a/s> <http://a/p> \"ok\" .\n_:b <http://a/p> <http://a/o> <http://a/g> .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "ingest", "--db", db, "--format", "nq", good); code != 0 {
		t.Fatalf("ingest good.nq: exit %d\n%s", code, stderr)
	}
	quads, runs := dbState(t, db)

	tests := []struct {
		format, stdin, wantErr string
	}{
		{"nq", "<http://a/s> <http://a/p> \"one\" .\n<http://a/s> <http://a/p> \"t\xffo\" .\n", "provgraph: <stdin>:2:29: invalid UTF-8: byte 0xff"},
		{"nq", "<http://a/s> <http://a/p> \"\\uD800\" .\n", `provgraph: <stdin>:1:28: \uD800 is a UTF-16 surrogate`},
		{"nt", "<http://a/s> \"p\" <http://a/o> .\n", "provgraph: <stdin>:1:14: expected a predicate IRI, found a literal"},
		{"ttl", "@prefix ex: <http://a/> .\nex:s [ ex:p 1 ] ex:o .\n", "provgraph: <stdin>:2:6: expected a predicate IRI, found '['"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), []string{"ingest", "--db", db, "--format", tt.format, "-"}, strings.NewReader(tt.stdin), &stdout, &stderr)
		if code != exitRejected || !strings.HasPrefix(stderr.String(), tt.wantErr) {
			t.Errorf("ingest --format %s - <<< %q: exit %d\n%s\nwant exit 1 and %s", tt.format, tt.stdin, code, stderr.String(), tt.wantErr)
		}
		if q, r := dbState(t, db); q != quads || r != runs {
			t.Errorf("after the rejected input: %d quads and %d runs, before: %d and %d", q, r, quads, runs)
		}
	}
	// Endless standard input stops at the limit instead of being copied
	// to disk without end.
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"ingest", "--db", db, "--format", "nq", "-"}, zeros{}, &stdout, &stderr)
	if want := "provgraph: <stdin>:1: line longer than"; code != exitRejected || !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("ingest --format nq - < /dev/zero: exit %d\n%s\nwant exit 1 and %s", code, stderr.String(), want)
	}

	// A good load from standard input also leaves nothing behind.
	stdout.Reset()
	stderr.Reset()
	if code := Run(context.Background(), []string{"ingest", "--db", db, "--format", "nq", "-"}, strings.NewReader("<http://a/s> <http://a/p> \"two\" .\n"), &stdout, &stderr); code != 0 {
		t.Errorf("ingest of good standard input: exit %d\n%s", code, stderr.String())
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("temporary file left behind: %s", e.Name())
	}
}

// zeros reads as /dev/zero does.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
