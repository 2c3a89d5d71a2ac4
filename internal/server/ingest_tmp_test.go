package server_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/server"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestServeIngestTempDirAndWorkMem: a server given TempDir and a small
// WorkMem spools POST /api/ingest's body in TempDir and its run sorts the
// citation ids there: in the validation pass the process holds open, in
// that directory, the spool and the id sort's runs, each already
// unlinked; the ingest then completes and leaves nothing there.
func TestServeIngestTempDirAndWorkMem(t *testing.T) {
	const lines = 10000 // the validation pass reports progress every 10,000 lines
	var body bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 300}).Write(&body, lines); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The files open in dir at the first report of the validation pass.
	seenc := make(chan []string, 1)
	var once sync.Once
	st := open(t)
	ts := start(t, st, server.Options{TempDir: dir, WorkMem: ingest.MinWorkMem, IngestProgress: func(p ingest.Progress) {
		if p.Phase == "validate" {
			once.Do(func() { seenc <- openFilesIn(t, dir) })
		}
	}})
	code, resp, _ := do(t, ts, "POST", "/api/ingest", "application/x-ndjson", body.String())
	if code != 200 || !strings.Contains(resp, `"records": 10000`) {
		t.Fatalf("ingest: %d %s", code, resp)
	}
	var seen []string
	select {
	case seen = <-seenc:
	default:
		t.Fatalf("no progress report of the validation pass in %d lines", lines)
	}
	spools, runs := 0, 0
	for _, f := range seen {
		switch name := filepath.Base(f); {
		case !strings.HasSuffix(f, " (deleted)"):
			t.Errorf("open in %s with a name: %s; want every temporary file unlinked at creation", dir, f)
		case strings.HasPrefix(name, "provgraph-serve-ingest-"):
			spools++
		case strings.HasPrefix(name, "provgraph-ingest-ids-"):
			runs++
		}
	}
	if spools != 1 || runs == 0 {
		t.Errorf("open in the validation pass in TempDir %s: %q; want the request body's spool and the id sort's runs (WorkMem %d)", dir, seen, ingest.MinWorkMem)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("after the ingest: %d entries left in %s", len(ents), dir)
	}
}

// TestServeIngestMissingTempDir: when the server's TempDir is gone, POST
// /api/ingest fails as the server's fault, naming the directory, and
// writes nothing.
func TestServeIngestMissingTempDir(t *testing.T) {
	st := open(t)
	missing := filepath.Join(t.TempDir(), "gone")
	ts := start(t, st, server.Options{TempDir: missing})
	before, _ := st.Count()
	code, resp, _ := do(t, ts, "POST", "/api/ingest", "application/x-ndjson",
		`{"citation_id":"new-1","engine":"e","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://www.w3.org/TR/prov-o/"}`+"\n")
	if code != 500 || !strings.Contains(resp, "spool the request body in "+missing) || !strings.Contains(resp, "nothing was written") {
		t.Errorf("ingest with TempDir %s missing: %d %s; want 500 naming the directory", missing, code, resp)
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("the failed ingest wrote %d quads", after-before)
	}
}

// openFilesIn lists the targets of this process's descriptors that are
// files in dir (an unlinked one ends in " (deleted)").
func openFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd to look at: %v", err)
	}
	var open []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			open = append(open, target)
		}
	}
	return open
}
