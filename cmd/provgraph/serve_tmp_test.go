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

// TestServeStateMem: a database whose citations serve's state would hold
// in more than --state-mem is served in bounded memory, saying so and why
// on standard error, the queue in key order and the whole-database filters
// refused; --bounded=false refuses it before listening, naming the count,
// the estimate and what to do; a --state-mem that is not a size is a
// usage error; a limit that fits holds the groups (the queue in risk
// order, every filter answered); --bounded asks for bounded memory
// whatever the limit; a read-only server without group records refuses
// to start, naming the command that builds them.
func TestServeStateMem(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	for _, tt := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--state-mem", "16KiB", "--bounded=false"}, exitUsage, []string{"--bounded=false: serve would hold every review group in memory, about 7000 bytes a citation (6000 with --read-only): the ", " citations of " + db + " would take about ", "bounded memory"}},
		{[]string{"--state-mem", "lots"}, exitUsage, []string{`--state-mem "lots": want a number of bytes`}},
		{[]string{"--state-mem", "16KiB", "--read-only"}, exitRejected, []string{"no group records are kept", "provgraph queue --build --db " + db}},
	} {
		code, _, stderr := cli(t, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, tt.args...)...)
		if code != tt.code || strings.Contains(stderr, " on http://") {
			t.Errorf("serve %v: exit %d, %q; want exit status %d before listening", tt.args, code, stderr, tt.code)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("serve %v: %q lacks %q", tt.args, stderr, w)
			}
		}
	}
	get := func(s *serving, path string) (int, string) {
		t.Helper()
		resp, err := http.Get(s.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Past the limit: bounded, saying so; the records built at start.
	s := startServeFlags(t, db, "", []string{"--state-mem", "16KiB"})
	if said := s.p.said.String(); !strings.Contains(said, "serving in bounded memory") || !strings.Contains(said, "group records built") {
		t.Errorf("serve past --state-mem said %q", said)
	}
	if code, body := get(s, "/api/groups"); code != http.StatusOK || !strings.Contains(body, "g-6e48bcc4a04d") {
		t.Errorf("GET /api/groups, bounded: %d %s", code, body)
	}
	if code, body := get(s, "/api/groups?sort=risk"); code != http.StatusBadRequest || !strings.Contains(body, "bounded memory") {
		t.Errorf("GET /api/groups?sort=risk, bounded: %d %s", code, body)
	}
	s.p.cmd.Process.Signal(os.Interrupt)
	s.p.cmd.Wait()
	// The records the first server built serve a read-only bounded one.
	s = startServeFlags(t, db, "", []string{"--read-only", "--bounded"})
	if code, body := get(s, "/api/stats"); code != http.StatusOK || !strings.Contains(body, `"bounded": true`) {
		t.Errorf("GET /api/stats, --read-only --bounded: %d %s", code, body)
	}
	s.p.cmd.Process.Signal(os.Interrupt)
	s.p.cmd.Wait()
	// Under a limit the citations fit in, the groups are held.
	s = startServeFlags(t, db, "", []string{"--read-only", "--state-mem", "1GiB"})
	if code, body := get(s, "/api/groups?sort=risk"); code != http.StatusOK || strings.Contains(s.p.said.String(), "bounded") {
		t.Errorf("GET /api/groups?sort=risk under --state-mem 1GiB: %d %s (said %q)", code, body, s.p.said.String())
	}
}
