package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/resolve/fixtureweb"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestResolveWARCAndExtractCLI: resolve writes its captures into
// <db>.warc by default, --warc DIR elsewhere, none with --no-warc, records
// the extractions and the passage check, and extract finds everything
// extracted already (issue 14).
func TestResolveWARCAndExtractCLI(t *testing.T) {
	web := fixtureweb.Start(t)
	base := strings.Replace(web.A.URL, "localhost", "127.0.0.1", 1)
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	in := fmt.Sprintf(`{"citation_id": "guide", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "%s%s", "cited_text": %q, "cited_title": "Turbine trial"}
{"citation_id": "dates", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "%s%s"}
`, base, fixtureweb.Guide, fixtureweb.PassagePresent, base, fixtureweb.Dates)
	run := func(args ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(in), &stdout, &stderr)
		return stdout.String() + stderr.String(), code
	}
	if out, code := run("ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, out)
	}
	out, code := run("resolve", "--db", db, "--allow-private")
	if code != 0 || !strings.Contains(out, "2 extractions recorded, 1 passage check (1 found); captures in "+db+".warc") {
		t.Fatalf("resolve: exit %d: %s", code, out)
	}
	files, _ := filepath.Glob(filepath.Join(db+".warc", "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("resolve wrote %v into %s.warc, want one closed WARC file", files, db)
	}
	// The warcinfo names provgraph's version and the run.
	runs := func() []graph.Term {
		st, err := graph.Open(db, &graph.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		r, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.ResolveRun))
		return r
	}()
	zr, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	gz, err := gzip.NewReader(zr)
	if err != nil {
		t.Fatal(err)
	}
	warc, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := strings.Cut(version(), " ")
	if len(runs) != 1 || !bytes.Contains(warc, []byte("software: provgraph/"+v+"\r\n")) || !bytes.Contains(warc, []byte("description: resolve run "+runs[0].Value+"\r\n")) {
		t.Errorf("the warcinfo does not name provgraph/%s and the run %v:\n%.600s", v, runs, warc)
	}
	other := filepath.Join(dir, "elsewhere")
	if out, code := run("resolve", "--db", db, "--allow-private", "--warc", other); code != 0 {
		t.Fatalf("resolve --warc: exit %d: %s", code, out)
	}
	if files, _ := filepath.Glob(filepath.Join(other, "*.warc.gz")); len(files) != 1 {
		t.Errorf("resolve --warc wrote %v", files)
	}
	if out, code := run("resolve", "--db", db, "--allow-private", "--no-warc"); code != 0 || !strings.Contains(out, "no capture (--no-warc)") {
		t.Fatalf("resolve --no-warc: exit %d: %s", code, out)
	}
	if files, _ := filepath.Glob(filepath.Join(db+".warc", "*.warc.gz")); len(files) != 1 {
		t.Errorf("resolve --no-warc wrote into %s.warc: %v", db, files)
	}
	if out, code := run("resolve", "--db", db, "--no-warc", "--warc", other); code != exitUsage {
		t.Errorf("resolve --no-warc --warc: exit %d: %s", code, out)
	}
	// Every capture was extracted by resolve: extract adds nothing, with
	// either directory.
	out, code = run("extract", "--db", db)
	if code != 0 || !strings.Contains(out, "4 retrievals with a capture: 0 extracted, 4 up to date, 0 unreadable") {
		t.Errorf("extract: exit %d: %s", code, out)
	}
	// A retrieval given in the input whose reference names a capture that
	// is not there: that retrieval's error, exit 3.
	in = fmt.Sprintf(`{"citation_id": "given", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "%s/given", "retrieval": {"retrieved_at": "2026-11-01T00:00:00Z", "final_url": "%s/given", "final_status": 200, "snapshot_ref": "warc:lost.warc.gz#0;<urn:uuid:00000000-0000-0000-0000-000000000000>"}}
`, base, base)
	if out, code := run("ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, out)
	}
	out, code = run("extract", "--db", db, "--warc", other)
	if code != exitFailure || !strings.Contains(out, "0 extracted, 4 up to date, 1 unreadable") || !strings.Contains(out, "no WARC file lost.warc.gz") {
		t.Errorf("extract with a lost capture: exit %d: %s", code, out)
	}
	st, err := graph.Open(db, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range []string{vocab.CitedText, vocab.CitedTitle} {
		if n, _ := st.Subjects(graph.IRI(p), graph.String(map[string]string{vocab.CitedText: fixtureweb.PassagePresent, vocab.CitedTitle: "Turbine trial"}[p])); len(n) != 1 {
			t.Errorf("%s: %d citations, want 1", p, len(n))
		}
	}
	if err := st.Check(context.Background()); err != nil {
		t.Error(err)
	}
}
