package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// cancelAtCall is a context that cancels itself at the at-th call of its
// Err method; that call still answers nil, so the code that asked goes on
// and meets the cancellation at its next check. It embeds a real cancel
// context, so contexts derived from it are cancelled at once, not by a
// goroutine. Tests use it to interrupt a command at each of its
// cancellation checks in turn, deterministically.
type cancelAtCall struct {
	context.Context
	cancel context.CancelFunc
	calls  atomic.Int64
	at     int64
}

func newCancelAtCall(at int64) *cancelAtCall {
	ctx, cancel := context.WithCancel(context.Background())
	return &cancelAtCall{Context: ctx, cancel: cancel, at: at}
}

func (c *cancelAtCall) Err() error {
	if c.calls.Add(1) == c.at {
		c.cancel()
		return nil
	}
	return c.Context.Err()
}

// checkInterrupted checks what an interrupted command printed on standard
// error: no "context canceled", and a last line that says it was
// interrupted, either the command's own or "provgraph: interrupted".
func checkInterrupted(t *testing.T, what string, code int, stderr string) {
	t.Helper()
	if code != exitFailure {
		t.Errorf("%s: exit %d, want %d\n%s", what, code, exitFailure, stderr)
	}
	if strings.Contains(stderr, "context canceled") || strings.Contains(stderr, "signal received") {
		t.Errorf("%s: standard error speaks of the context:\n%s", what, stderr)
	}
	if strings.Count(stderr, "provgraph: ") > 1 {
		t.Errorf("%s: more than one error line:\n%s", what, stderr)
	}
}

// TestInterruptedIngest (issue 18, item 15): an ingest interrupted at any
// of its cancellation checks exits 3 and says so once: either "ingest
// stopped; ... Run the same command again ..." or, before it wrote
// anything, "provgraph: interrupted"; never "provgraph: context canceled"
// after its own message.
func TestInterruptedIngest(t *testing.T) {
	stopped := 0
	for at := int64(1); ; at++ {
		db := filepath.Join(t.TempDir(), "i.db")
		ctx := newCancelAtCall(at)
		var stderr bytes.Buffer
		code := Run(ctx, []string{"ingest", "--db", db, "--batch", "1", "../../testdata/citations.jsonl"}, nil, io.Discard, &stderr)
		if ctx.calls.Load() < at {
			// The context was never cancelled: the ingest ran to the end.
			if code != exitOK {
				t.Fatalf("uninterrupted ingest: exit %d: %s", code, stderr.String())
			}
			break
		}
		what := fmt.Sprintf("ingest cancelled at check %d", at)
		checkInterrupted(t, what, code, stderr.String())
		switch s := stderr.String(); {
		case strings.HasPrefix(s, "ingest stopped; ") && strings.Contains(s, "Run the same command again") && strings.Count(s, "\n") == 1:
			stopped++
		case s == "provgraph: interrupted\n":
		default:
			t.Errorf("%s: standard error %q, want one line saying it was interrupted", what, s)
		}
		if at > 10000 {
			t.Fatal("ingest checks its context more than 10000 times for 15 lines")
		}
	}
	if stopped == 0 {
		t.Error(`no interrupted ingest said "ingest stopped; ...": the message after a started run is not tested`)
	}
}

// TestInterruptedResolve: a resolve interrupted while a request is under
// way prints its summary and one line saying what was kept, and exits 3
// without "context canceled". The interrupt comes when the server has the
// request, not after a delay.
func TestInterruptedResolve(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	db := filepath.Join(t.TempDir(), "r.db")
	in := fmt.Sprintf(`{"citation_id": "r1", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "http://127.0.0.1:%s/slow"}`+"\n", port)
	if code := Run(context.Background(), []string{"ingest", "--db", db, "-"}, strings.NewReader(in), io.Discard, io.Discard); code != 0 {
		t.Fatalf("ingest: exit %d", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-arrived
		cancel()
	}()
	var stderr bytes.Buffer
	code := Run(ctx, []string{"resolve", "--db", db, "--allow-private"}, nil, io.Discard, &stderr)
	checkInterrupted(t, "resolve", code, stderr.String())
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "resolve: 0 of 1 URL retrieved for 0 citations: ") ||
		!strings.HasPrefix(lines[1], "resolve interrupted: the 0 retrievals finished are saved and run ") {
		t.Errorf("resolve interrupted: standard error\n%s\nwant the summary and one line saying the run is marked interrupted", stderr.String())
	}
}

// interruptingReader gives its lines one Read at a time and cancels the
// context before it gives the second.
type interruptingReader struct {
	lines  []string
	cancel context.CancelFunc
	reads  int
}

func (r *interruptingReader) Read(p []byte) (int, error) {
	if r.reads == len(r.lines) {
		return 0, io.EOF
	}
	if r.reads == 1 {
		r.cancel()
	}
	r.reads++
	return copy(p, r.lines[r.reads-1]), nil
}

// TestInterruptedNormalize: normalize interrupted while it reads standard
// input prints the results so far and one line saying how far it got.
func TestInterruptedNormalize(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &interruptingReader{lines: []string{"https://a.example/\n", "https://b.example/\n", "https://c.example/\n"}, cancel: cancel}
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"normalize"}, in, &stdout, &stderr)
	checkInterrupted(t, "normalize", code, stderr.String())
	if stderr.String() != "normalize: interrupted; the results of the first 2 lines are printed\n" {
		t.Errorf("normalize interrupted: standard error %q", stderr.String())
	}
	if !strings.Contains(stdout.String(), "https://b.example/") || strings.Contains(stdout.String(), "https://c.example/") {
		t.Errorf("normalize interrupted after line 2 printed:\n%s", stdout.String())
	}
}

// TestInterruptedReadCommands: a command that has nothing of its own to
// say when interrupted prints "provgraph: interrupted" alone and exits 3,
// whatever error the cancellation surfaced as (groups used to exit 2).
func TestInterruptedReadCommands(t *testing.T) {
	db := lineageDB(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"groups", "--db", db},
		{"check", "--db", db},
		{"export", "--db", db},
		{"export", "--db", db, "-o", filepath.Join(t.TempDir(), "x.nq")},
	} {
		var stderr bytes.Buffer
		code := Run(ctx, args, nil, io.Discard, &stderr)
		checkInterrupted(t, strings.Join(args, " "), code, stderr.String())
		if stderr.String() != "provgraph: interrupted\n" {
			t.Errorf("provgraph %q interrupted: standard error %q, want %q", args, stderr.String(), "provgraph: interrupted\n")
		}
	}
}

// TestSummariesSingular (issue 18, item 15): summaries say "1 record",
// "1 member", "1 citation", "1 hop", not "1 records".
func TestSummariesSingular(t *testing.T) {
	db := filepath.Join(t.TempDir(), "one.db")
	in := `{"citation_id":"one","observed_at":"2026-11-02T10:00:00Z","raw_url":"http://a.example/x","retrieval":{"hops":[{"from":"http://a.example/x","to":"http://a.example/y","status":301}],"final_url":"http://a.example/y","final_status":200}}` + "\n"
	var stderr bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", db, "-"}, strings.NewReader(in), io.Discard, &stderr); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, ": 1 record, 0 invalid lines, 0 raw URLs rejected") {
		t.Errorf("ingest summary: %q", s)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"groups", "--db", db, "--min-size", "1"}, "  1 member  "},
		{[]string{"groups", "--db", db, "--min-size", "1"}, "same-host redirect to http://a.example/y (1 hop)"},
		{[]string{"renormalize", "--db", db, "--policy", "lenient"}, "renormalize: 1 citation under "},
		{[]string{"policy-diff", "--db", db, "provgraph-default", "provgraph-lenient"}, "# 1 group under A, 1 under B; 0 merges, 0 splits"},
	} {
		code, out, stderr := run(t, c.args...)
		if code != 0 || !strings.Contains(out+stderr, c.want) {
			t.Errorf("provgraph %q: exit %d, output\n%s%s\nwant %q", c.args, code, out, stderr, c.want)
		}
	}
}
