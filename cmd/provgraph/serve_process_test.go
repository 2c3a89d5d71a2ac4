package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// serving is a provgraph serve process and the address it listens on.
type serving struct {
	p    *heldProcess
	addr string
	sc   *bufio.Scanner
}

// startServe starts "provgraph serve" on db with PROVGRAPH_TEST_HOLD=hold
// and the variables of env (NAME=VALUE), and waits for the line that
// names its address.
func startServe(t *testing.T, db, hold string, env ...string) *serving {
	t.Helper()
	return startServeFlags(t, db, hold, nil, env...)
}

// startServeFlags is startServe with more flags.
func startServeFlags(t *testing.T, db, hold string, flags []string, env ...string) *serving {
	t.Helper()
	p := &heldProcess{cmd: command(append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, flags...)...)}
	p.cmd.Env = append(append(p.cmd.Env, testHoldEnv+"="+hold), env...)
	var err error
	if p.stderr, err = p.cmd.StderrPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	s := &serving{p: p, sc: bufio.NewScanner(p.stderr)}
	for s.sc.Scan() {
		p.said.WriteString(s.sc.Text() + "\n")
		if _, a, ok := strings.Cut(s.sc.Text(), " on http://"); ok {
			s.addr = "http://" + strings.Fields(a)[0]
			return s
		}
	}
	t.Fatalf("serve ended before listening:\n%s", p.said.String())
	return nil
}

// waitHold reads standard error until the test hold line.
func (s *serving) waitHold(t *testing.T, point string) {
	t.Helper()
	for s.sc.Scan() {
		s.p.said.WriteString(s.sc.Text() + "\n")
		if strings.HasPrefix(s.sc.Text(), "provgraph: test hold at "+point+" ") {
			return
		}
	}
	t.Fatalf("serve ended before the hold at %s:\n%s", point, s.p.said.String())
}

// TestServeKilledMidDecision: a command that finds the database held by
// a server names its address; a server killed with SIGKILL while writing
// a decision leaves a database that check passes, with no decision.
func TestServeKilledMidDecision(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	s := startServe(t, db, "serve-decide:1")
	code, _, stderr := cli(t, "groups", "--db", db, "--lock-timeout", "0")
	if code != exitLocked || !strings.Contains(stderr, s.addr) {
		t.Errorf("groups while served: exit %d, %q; want %d naming %s", code, stderr, exitLocked, s.addr)
	}
	go func() {
		resp, err := http.Post(s.addr+"/api/groups/g-6e48bcc4a04d/reviews", "application/json", strings.NewReader(`{"decision":"same","reviewer":"alice"}`))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	s.waitHold(t, "serve-decide")
	s.p.cmd.Process.Signal(syscall.SIGKILL)
	s.p.cmd.Wait()
	if code, _, stderr := cli(t, "check", "--db", db); code != exitOK {
		t.Fatalf("check after kill -9: exit %d: %s", code, stderr)
	}
	_, out, _ := cli(t, "review", "list", "--db", db, "--decisions", "--format", "json")
	var ds []any
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != 0 {
		t.Errorf("decisions after a kill before commit: %s", out)
	}
}

// TestServeKilledMidIngest: a server killed with SIGKILL between two
// batches of an ingest leaves a database that check passes, and no spool
// file of the request body in its temporary directory.
func TestServeKilledMidIngest(t *testing.T) {
	db := filepath.Join(t.TempDir(), "i.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	var body strings.Builder
	for i := range 40 {
		fmt.Fprintf(&body, `{"citation_id":"k-%d","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://example.org/p/%d?utm_source=x"}`+"\n", i, i)
	}
	tmp := t.TempDir()
	s := startServe(t, db, "serve-ingest-batch:2", "TMPDIR="+tmp)
	go func() {
		resp, err := http.Post(s.addr+"/api/ingest", "application/x-ndjson", strings.NewReader(body.String()))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	s.waitHold(t, "serve-ingest-batch")
	s.p.cmd.Process.Signal(syscall.SIGKILL)
	s.p.cmd.Wait()
	if code, _, stderr := cli(t, "check", "--db", db); code != exitOK {
		t.Fatalf("check after kill -9 mid-ingest: exit %d: %s", code, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("kill -9 mid-ingest left %q in the server's temporary directory", left)
	}
}
