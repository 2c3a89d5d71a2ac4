package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var exportCountRE = regexp.MustCompile(`export: (\d+) statements \((\d+) data`)

// exported runs provgraph export and returns the statement count it
// reports.
func exported(t *testing.T, args ...string) (stdout string, statements int) {
	t.Helper()
	code, out, stderr := run(t, append([]string{"export"}, args...)...)
	if code != 0 {
		t.Fatalf("provgraph export %v: exit %d\n%s", args, code, stderr)
	}
	m := exportCountRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("provgraph export %v printed no count: %q", args, stderr)
	}
	n, _ := strconv.Atoi(m[1])
	return out, n
}

// TestExportCLI exports the example in every format, checks the counts and
// that the database file is unchanged, and loads the N-Quads export into a
// new database with ingest --format nq.
func TestExportCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"nq", "nt", "ttl", "jsonld"} {
		out := filepath.Join(dir, "e."+format)
		_, n := exported(t, "--db", db, "--format", format, "-o", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if format == "nq" || format == "nt" {
			if got := bytes.Count(b, []byte("\n")); got != n {
				t.Errorf("%s: %d lines, export reported %d statements", format, got, n)
			}
		}
	}
	stdout, n := exported(t, "--db", db)
	if strings.Count(stdout, "\n") != n || !strings.Contains(stdout, "<http://rdfs.org/ns/void#triples>") {
		t.Errorf("export to standard output: %d lines, %d statements reported", strings.Count(stdout, "\n"), n)
	}
	_, withOnt := exported(t, "--db", db, "--include-ontology", "-o", filepath.Join(dir, "o.nq"))
	if withOnt < n+300 {
		t.Errorf("--include-ontology wrote %d statements, without %d", withOnt, n)
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("export changed the database file")
	}

	copyDB := filepath.Join(dir, "copy.db")
	code, _, stderr := run(t, "ingest", "--db", copyDB, "--format", "nq", filepath.Join(dir, "e.nq"))
	if code != 0 {
		t.Fatalf("ingest --format nq of the export: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "groups", "--db", copyDB); code != 0 {
		t.Errorf("groups on the loaded export: exit %d\n%s", code, stderr)
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	run(t, "ingest", "--db", db, "../../testdata/citations.jsonl")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--format", "rdfxml"}, exitUsage, `--format "rdfxml": want nt, nq, ttl, jsonld`},
		{[]string{"-o", db}, exitUsage, "is the database file"},
		{[]string{"-o", ""}, exitUsage, "empty file name"},
		{[]string{"-o", filepath.Join(dir, "missing", "x.nq")}, exitFailure, "no such file or directory"},
		{[]string{"extra"}, exitUsage, "takes 0 argument(s)"},
	} {
		code, _, stderr := run(t, append([]string{"export", "--db", db}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("export %v: exit %d, %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	if code, _, stderr := run(t, "export", "--db", filepath.Join(dir, "none.db")); code != exitFailure || !strings.Contains(stderr, "none.db") {
		t.Errorf("export of a missing database: exit %d, %q", code, stderr)
	}
}

// TestExportKilledLeavesNoPartialFile kills real export processes with
// SIGKILL at its 1st, 2nd, 4th, 8th, ... interruption check (it holds
// there, see testhold.go) until one runs to the end: the output file then
// still holds what it held before, never a partial export, and the
// temporary file the export was writing is what is left. At least one
// export must have been killed with statements in its temporary file, or
// the test has not tested atomicity and fails.
func TestExportKilledLeavesNoPartialFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several processes; skipped with -short")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "k.db")
	if code, _, stderr := run(t, "ingest", "--db", db, synthFile(t, 3000)); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	_, full := exported(t, "--db", db, "--format", "nt", "-o", filepath.Join(dir, "full.nt"))
	const earlier = "what the file held before\n"
	killedWriting := 0
	for n := 1; ; n *= 2 {
		out := filepath.Join(dir, "out"+strconv.Itoa(n)+".nt")
		if err := os.WriteFile(out, []byte(earlier), 0o644); err != nil {
			t.Fatal(err)
		}
		p, held := startHeld(t, "export-check:"+strconv.Itoa(n), "export", "--db", db, "--format", "nt", "-o", out)
		if held {
			p.kill(t)
		} else if p.cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("export: exit %d: %s", p.cmd.ProcessState.ExitCode(), p.said.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		tmps, _ := filepath.Glob(filepath.Join(dir, ".out"+strconv.Itoa(n)+".nt.tmp-*"))
		if !held {
			// Statements differ from the full export only in the description.
			if lines := bytes.Count(b, []byte("\n")); lines != full || !bytes.Contains(b, []byte("<http://rdfs.org/ns/void#triples>")) {
				t.Errorf("uninterrupted export: %s has %d lines, want %d", out, lines, full)
			}
			if len(tmps) != 0 {
				t.Errorf("uninterrupted export left %v behind", tmps)
			}
			break
		}
		if string(b) != earlier {
			t.Errorf("export killed at check %d: %s holds %d bytes, want what it held before", n, out, len(b))
		}
		if len(tmps) != 1 {
			t.Fatalf("export killed at check %d: temporary files %v, want the one it was writing", n, tmps)
		}
		if fi, err := os.Stat(tmps[0]); err == nil && fi.Size() > 0 {
			killedWriting++
		}
		if n > 1<<20 {
			t.Fatal("export did not finish after a million interruption checks")
		}
	}
	if killedWriting == 0 {
		t.Fatal("no export was killed with statements written to its temporary file: atomicity was not tested")
	}
	t.Logf("%d exports were killed with statements in their temporary file", killedWriting)
}
