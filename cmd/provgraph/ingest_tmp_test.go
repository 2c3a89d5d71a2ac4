package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestIngestInterruptedLeavesNoTempFile interrupts real ingest processes
// in their validation pass, once the check of citation ids has sorted
// runs into --tmp (the process holds there, see testhold.go, and is seen
// to keep files open in that directory that have no name there), with
// SIGINT, SIGTERM and SIGKILL: no file is left in --tmp nor in $TMPDIR,
// and no database was created.
func TestIngestInterruptedLeavesNoTempFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes; skipped with -short")
	}
	in := synthFile(t, 3000)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp, envTmp := t.TempDir(), t.TempDir()
			db := filepath.Join(t.TempDir(), "t.db")
			t.Setenv("TMPDIR", envTmp) // the process inherits it
			p, ok := startHeld(t, "ingest-validate:2500", "ingest", "--db", db, "--work-mem", "16KiB", "--tmp", tmp, in)
			if !ok {
				t.Fatalf("the ingest ended before its hold: %s", p.said.String())
			}
			open, unlinked := openIn(t, p.cmd.Process.Pid, tmp)
			if open == 0 {
				p.kill(t)
				t.Fatalf("held in its validation pass, the process has no file of %s open: the id check did not spill", tmp)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 || unlinked != open {
				t.Errorf("while held: %d entries in --tmp and %d of %d open files there unlinked, want none and all (its files are unlinked at creation)", len(ents), unlinked, open)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var rest bytes.Buffer
			io.Copy(&rest, p.stderr)
			err := p.cmd.Wait()
			var ee *exec.ExitError
			switch {
			case !errors.As(err, &ee):
				t.Fatalf("ingest after %v: %v, want it stopped", sig, err)
			case sig != syscall.SIGKILL && (ee.ExitCode() != exitFailure || !strings.Contains(rest.String(), "interrupted")):
				t.Errorf("ingest after %v: exit %d, stderr %q; want exit status %d, interrupted", sig, ee.ExitCode(), rest.String(), exitFailure)
			}
			for _, dir := range []string{tmp, envTmp} {
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("after %v: %d entries left in %s", sig, len(ents), dir)
				}
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after %v in the validation pass: database file: %v, want none", sig, err)
			}
		})
	}
}

// openIn counts the files the process pid holds open in dir, and of those
// the ones that no longer have a name.
func openIn(t *testing.T, pid int, dir string) (open, unlinked int) {
	t.Helper()
	fds := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(fds)
	if err != nil {
		t.Skipf("no %s to look at: %v", fds, err)
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(fds, e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			open++
			if strings.HasSuffix(target, " (deleted)") {
				unlinked++
			}
		}
	}
	return open, unlinked
}

// TestIngestWorkMemFlags: --work-mem and $PROVGRAPH_WORK_MEM take a size,
// --tmp an existing directory; anything else is a usage error naming the
// flag or variable. A small working set gives the same result as the
// default.
func TestIngestWorkMemFlags(t *testing.T) {
	in := synthFile(t, 1500)
	run := func(env string, args ...string) (int, string) {
		t.Helper()
		t.Setenv(workMemEnv, env)
		var stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"ingest", "--db", filepath.Join(t.TempDir(), "w.db")}, append(args, in)...), nil, io.Discard, &stderr)
		return code, stderr.String()
	}
	for _, tt := range []struct {
		env  string
		args []string
		want string
	}{
		{args: []string{"--work-mem", "lots"}, want: `--work-mem "lots": want a number of bytes`},
		{args: []string{"--work-mem", "1KiB"}, want: `--work-mem "1KiB": want at least 16KiB`},
		{args: []string{"--work-mem", "-5"}, want: `--work-mem "-5"`},
		{env: "64MB", want: workMemEnv + ` "64MB": want a number of bytes`},
		{args: []string{"--tmp", filepath.Join(t.TempDir(), "missing")}, want: "want an existing directory"},
		{args: []string{"--tmp", in}, want: "want an existing directory"},
	} {
		code, stderr := run(tt.env, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("ingest %v with %s=%q: exit %d, %q; want exit status %d and %q", tt.args, workMemEnv, tt.env, code, stderr, exitUsage, tt.want)
		}
	}
	summary := func(stderr string) string {
		// The summary line without its time.
		return stderr[:strings.LastIndex(stderr, ", ")]
	}
	code, want := run("")
	if code != exitOK {
		t.Fatalf("ingest: exit %d: %s", code, want)
	}
	for _, c := range []struct {
		env  string
		args []string
	}{{args: []string{"--work-mem", "16KiB", "--tmp", t.TempDir()}}, {env: "20480"}, {env: "1GiB", args: []string{"--work-mem", "16KiB"}}} {
		code, got := run(c.env, c.args...)
		if code != exitOK || summary(got) != summary(want) {
			t.Errorf("ingest %v with %s=%q: exit %d, %q; want %q", c.args, workMemEnv, c.env, code, got, want)
		}
	}
}
