package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDamagedDatabase runs the read commands as real processes on damaged
// copies of a database (seeded: truncations, flipped bits, zeroed pages,
// overwritten bytes, a page copied over another), so that a crash is seen
// as the crash it would be: a signal, or Go's exit status 2 with a
// panic. Regression test for issue 19.1, where 45 of 162 damaged copies
// crashed and every truncation faulted.
//
// Each command must exit with a documented status: 0, 5 (damaged, with
// a message naming the file), 3 (not a database at all), 1 (lineage: no
// such citation) or 2 only for "no such policy in the database"; and a
// file truncated inside the pages in use must give 5 for every command.
func TestDamagedDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("starts hundreds of processes; skipped with -short")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", good, "../../testdata/citations.jsonl"}, strings.NewReader(""), io.Discard, &errb); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errb.String())
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// The pages in use, from the meta page of the later transaction: a
	// file cut short of them is truncated.
	const page = 4096
	used := 0
	for p := range 2 {
		m := data[p*page+16:]
		if n := int(binary.NativeEndian.Uint64(m[40:])) * page; n > used {
			used = n
		}
	}

	commands := [][]string{{"check"}, {"stats"}, {"groups"}, {"lineage", "pplx-001-1"}, {"export"}}
	rnd := rand.New(rand.NewPCG(19, 13))
	const cases = 300
	counts := map[string]int{}
	failures := 0
	for i := range cases {
		d, how := damageFile(rnd, data)
		path := filepath.Join(dir, fmt.Sprintf("damaged%d.db", i))
		if err := os.WriteFile(path, d, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, c := range commands {
			args := append([]string{c[0], "--db", path}, c[1:]...)
			code, signal, stderr := runProcess(t, args)
			counts[fmt.Sprintf("%s %d", c[0], code)]++
			var why string
			switch {
			case signal != "":
				why = "killed by " + signal
			case strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "fatal error"):
				why = "crashed"
			case len(d) < used && code != exitCorrupt:
				why = fmt.Sprintf("exit %d on a truncated file, want %d", code, exitCorrupt)
			case code == exitCorrupt || code == exitFailure:
				if !strings.Contains(stderr, path) {
					why = "the message does not name the file"
				}
			case code == exitOK:
			case code == exitRejected && c[0] == "lineage":
			case code == exitUsage && strings.Contains(stderr, "no such policy in the database"):
			default:
				why = fmt.Sprintf("exit %d", code)
			}
			if why != "" {
				failures++
				t.Errorf("case %d (%s): provgraph %s: %s\n%s", i, how, strings.Join(args, " "), why, stderr)
				if failures > 10 {
					t.Fatal("too many failures")
				}
			}
		}
		os.Remove(path)
	}
	t.Logf("exit statuses: %v", counts)
}

// runProcess runs provgraph args as a process and returns its exit status,
// the signal that killed it, if any, and its standard error.
func runProcess(t *testing.T, args []string) (code int, signal, stderr string) {
	t.Helper()
	cmd := command(args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, "", errb.String()
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, ws.Signal().String(), errb.String()
		}
		return ee.ExitCode(), "", errb.String()
	}
	t.Fatal(err)
	return
}

// damageFile returns a damaged copy of data and what was done to it.
func damageFile(rnd *rand.Rand, data []byte) ([]byte, string) {
	const page = 4096
	d := append([]byte(nil), data...)
	pages := len(d) / page
	switch rnd.IntN(5) {
	case 0:
		n := rnd.IntN(len(d))
		return d[:n], fmt.Sprintf("truncated to %d bytes", n)
	case 1:
		n := 1 + rnd.IntN(8)
		for range n {
			d[rnd.IntN(len(d))] ^= 1 << rnd.IntN(8)
		}
		return d, fmt.Sprintf("%d bits flipped", n)
	case 2:
		p := rnd.IntN(pages)
		clear(d[p*page : (p+1)*page])
		return d, fmt.Sprintf("page %d zeroed", p)
	case 3:
		o, n := rnd.IntN(len(d)), 1+rnd.IntN(64)
		for j := o; j < min(o+n, len(d)); j++ {
			d[j] = byte(rnd.IntN(256))
		}
		return d, fmt.Sprintf("%d random bytes at %d", n, o)
	default:
		from, to := rnd.IntN(pages), rnd.IntN(pages)
		copy(d[to*page:(to+1)*page], data[from*page:(from+1)*page])
		return d, fmt.Sprintf("page %d copied over page %d", from, to)
	}
}

// TestDamagedPolicyText alters the stored policy text in the file (a
// default port, same length, so that the file stays readable): check
// finds the term no longer matches its hash, and the read commands, which
// rebuild the normalizer from that text, refuse the database instead of
// answering under another policy. Regression test for issue 19.8.
func TestDamagedPolicyText(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.db")
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", path, "../../testdata/citations.jsonl"}, strings.NewReader(""), io.Discard, &errb); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errb.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	from, to := []byte("https = 443"), []byte("https = 444")
	if !bytes.Contains(data, from) {
		t.Fatalf("the file does not hold %q", from)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(data, from, to), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check"},
		{"groups"},
		{"stats"},
		{"lineage", "pplx-001-1"},
		{"lineage", "--group-scope", "database", "pplx-001-1"},
	} {
		args = append([]string{args[0], "--db", path}, args[1:]...)
		var stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr)
		want := "its stored text has digest"
		if args[0] == "check" {
			want = "is not found by its hash"
		}
		if code != exitCorrupt || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), path) {
			t.Errorf("provgraph %s: exit %d, want %d saying %q and naming the file\n%s", strings.Join(args, " "), code, exitCorrupt, want, stderr.String())
		}
	}
}
