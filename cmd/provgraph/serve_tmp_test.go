package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServeTmpSpoolsThere: a server started with --tmp DIR spools the
// body of POST /api/ingest in DIR, not in $TMPDIR: held after the first
// batch of the ingest's write pass (see testhold.go), the process keeps a
// file open in DIR that has no name there, and none in $TMPDIR.
func TestServeTmpSpoolsThere(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process; skipped with -short")
	}
	db := filepath.Join(t.TempDir(), "t.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	var body strings.Builder
	for i := range 40 {
		fmt.Fprintf(&body, `{"citation_id":"t-%d","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://example.org/p/%d"}`+"\n", i, i)
	}
	tmp, envTmp := t.TempDir(), t.TempDir()
	s := startServeFlags(t, db, "serve-ingest-batch:1", []string{"--tmp", tmp, "--work-mem", "16KiB"}, "TMPDIR="+envTmp)
	go func() {
		resp, err := http.Post(s.addr+"/api/ingest", "application/x-ndjson", strings.NewReader(body.String()))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	s.waitHold(t, "serve-ingest-batch")
	pid := s.p.cmd.Process.Pid
	open, unlinked := openIn(t, pid, tmp)
	inEnv, _ := openIn(t, pid, envTmp)
	s.p.cmd.Process.Signal(syscall.SIGKILL)
	s.p.cmd.Wait()
	if open != 1 || unlinked != 1 || inEnv != 0 {
		t.Errorf("held in an ingest: %d files open in --tmp (%d of them unlinked), %d in $TMPDIR; want the request body's spool in --tmp, unlinked", open, unlinked, inEnv)
	}
	for _, dir := range []string{tmp, envTmp} {
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("after kill -9: %d entries left in %s", len(ents), dir)
		}
	}
}

// TestServeWorkMemAndTmpFlags: serve reads --work-mem and
// $PROVGRAPH_WORK_MEM as ingest does, and --tmp must name an existing
// directory; anything else is a usage error naming the flag or variable,
// found before the database is opened. (Each run also names a
// non-loopback --addr without --token-file, so that a server that let a
// bad value through refuses to start rather than serving on.)
func TestServeWorkMemAndTmpFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "missing.db") // never opened
	file, missing := filepath.Join(t.TempDir(), "f"), filepath.Join(t.TempDir(), "missing")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env  string
		args []string
		want string
	}{
		{args: []string{"--work-mem", "lots"}, want: `--work-mem "lots": want a number of bytes`},
		{args: []string{"--work-mem", "1KiB"}, want: `--work-mem "1KiB": want at least 16KiB`},
		{env: "64MB", want: workMemEnv + ` "64MB": want a number of bytes`},
		{args: []string{"--tmp", missing}, want: `--tmp "` + missing + `": want an existing directory`},
		{args: []string{"--tmp", file}, want: `--tmp "` + file + `": want an existing directory`},
	} {
		t.Setenv(workMemEnv, tt.env)
		code, _, stderr := cli(t, append([]string{"serve", "--db", db, "--addr", "192.0.2.1:0"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("serve %v with %s=%q: exit %d, %q; want exit status %d and %q", tt.args, workMemEnv, tt.env, code, stderr, exitUsage, tt.want)
		}
	}
}

// TestServeStateMem: serve refuses, before it listens, a database whose
// citations its state would hold in more than --state-mem, naming the
// count, the estimate and the commands that answer in bounded memory; a
// --state-mem that is not a size is a usage error; a limit that fits
// serves.
func TestServeStateMem(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--state-mem", "16KiB"}, []string{"serve holds every review group in memory, about 7000 bytes a citation (3500 with --read-only): the ", " citations of " + db + " would take about ", "provgraph queue"}},
		{[]string{"--state-mem", "lots"}, []string{`--state-mem "lots": want a number of bytes`}},
	} {
		code, _, stderr := cli(t, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, tt.args...)...)
		if code != exitUsage || strings.Contains(stderr, "provgraph serve: ") {
			t.Errorf("serve %v: exit %d, %q; want exit status %d before listening", tt.args, code, stderr, exitUsage)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("serve %v: %q lacks %q", tt.args, stderr, w)
			}
		}
	}
	// The refusal is the estimate's, not a rule against small limits: the
	// same database under a limit its citations fit in is served.
	s := startServeFlags(t, db, "", []string{"--read-only", "--state-mem", "1GiB"})
	resp, err := http.Get(s.addr + "/api/groups")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/groups under --state-mem 1GiB: %s", resp.Status)
	}
}
