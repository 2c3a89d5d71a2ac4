package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

// failingWriter fails every write, as standard output on a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputWriteFails: output that cannot be written fails the command
// with exit status 3, whichever command wrote it. Regression test for
// issue 19.13: check and --help exited 0 with standard output on
// /dev/full.
func TestOutputWriteFails(t *testing.T) {
	db := filepath.Join(t.TempDir(), "good.db")
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", db, "../../testdata/citations.jsonl"}, strings.NewReader(""), io.Discard, &errb); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errb.String())
	}
	for _, args := range [][]string{
		{"check", "--db", db},
		{"--help"},
		{"stats", "--db", db},
		{"groups", "--db", db},
		{"lineage", "--db", db, "pplx-001-1"},
		{"export", "--db", db},
		{"normalize", "https://example.com/"},
	} {
		var stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), failingWriter{}, &stderr)
		if code != exitFailure || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("provgraph %s with failing output: exit %d, want %d\n%s", strings.Join(args, " "), code, exitFailure, stderr.String())
		}
	}

	// The same as a process, with standard output on /dev/full.
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	cmd := command("check", "--db", db)
	cmd.Stdout = full
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitFailure || !strings.Contains(stderr.String(), "write standard output") {
		t.Errorf("provgraph check > /dev/full: exit %d (%v), want %d\n%s", code, err, exitFailure, stderr.String())
	}
}

// TestLockTimeoutZero: --lock-timeout 0 fails at once on a locked
// database instead of waiting graph's default 2 s. Regression test for
// issue 19.13; the message of a wait names how long it waited, and one
// that did not wait names no time.
func TestLockTimeoutZero(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locked.db")
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--db", db, "--lock-timeout", "0s"}, strings.NewReader(""), io.Discard, &stderr)
	if code != exitLocked || strings.Contains(stderr.String(), "waited") {
		t.Errorf("check --lock-timeout 0s on a locked database: exit %d, want %d without waiting\n%s", code, exitLocked, stderr.String())
	}
}
