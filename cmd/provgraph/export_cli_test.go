package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/testenv"
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
	// A device is written directly (issue 18.15).
	if _, devNull := exported(t, "--db", db, "-o", os.DevNull); devNull != n {
		t.Errorf("-o %s: %d statements, to standard output %d", os.DevNull, devNull, n)
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

// TestExportIncludeGroups exports with --include-groups and checks, with
// SPARQL in Oxigraph, that the export holds the groups provgraph groups
// --format json prints with the same options: ids, verdicts and member
// counts (issue 18.2); and that the group options need --include-groups.
func TestExportIncludeGroups(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "g.db")
	for _, f := range []string{"../../testdata/citations.jsonl", "../../internal/query/testdata/corpus.jsonl"} {
		if code, _, stderr := run(t, "ingest", "--db", db, f); code != 0 {
			t.Fatalf("ingest %s: %d %s", f, code, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--policy", "provgraph-default"}, "--policy chooses the review groups: it needs --include-groups"},
		{[]string{"--min-size", "1"}, "--min-size chooses the review groups"},
		{[]string{"--include-groups", "--verdict", "same"}, `--verdict "same": want one of`},
		{[]string{"--include-groups", "--policy", "nope"}, `no such policy in the database: "nope"`},
		{[]string{"--work-mem", "1GiB"}, "--work-mem bounds the grouping of --include-groups: it needs --include-groups"},
		// The citations of both files at 2,500 bytes each: more than 16 KiB.
		{[]string{"--include-groups", "--read", "scan", "--work-mem", "16KiB"}, "export --include-groups --read scan groups every citation at once, about 2500 bytes a citation"},
		{[]string{"--read", "view"}, "--read chooses the review groups: it needs --include-groups"},
		{[]string{"--include-groups", "--read", "all"}, `--read "all": want auto, scan or view`},
	} {
		code, stdout, stderr := run(t, append([]string{"export", "--db", db}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.msg) || stdout != "" {
			t.Errorf("export %v: exit %d, %d bytes out, %q; want exit %d and %q", tc.args, code, len(stdout), stderr, exitUsage, tc.msg)
		}
	}
	for _, opts := range [][]string{nil, {"--min-size", "1", "--max-shared", "2"}, {"--min-size", "1", "--verdict", "identity-confirmed"}} {
		code, out, stderr := run(t, append([]string{"groups", "--db", db, "--format", "json"}, opts...)...)
		if code != 0 {
			t.Fatalf("groups %v: %d %s", opts, code, stderr)
		}
		var want struct {
			Groups []struct {
				ID, Verdict string
				Members     []json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatal(err)
		}
		nq := filepath.Join(dir, "groups.nq")
		exported(t, append([]string{"--db", db, "--include-groups", "-o", nq}, opts...)...)
		if _, err := exec.LookPath("node"); err != nil {
			testenv.MissingTool(t, "node is not installed: skipping the Oxigraph check")
		}
		if _, err := os.Stat("../../internal/export/testdata/js/node_modules/oxigraph/package.json"); err != nil {
			testenv.MissingTool(t, "npm package oxigraph is not installed: run npm ci --prefix internal/export/testdata/js: skipping the Oxigraph check")
		}
		res, err := exec.Command("node", "../../internal/export/testdata/js/oxcheck.mjs", nq).Output()
		if err != nil {
			t.Fatalf("oxcheck.mjs: %v", err)
		}
		var got struct {
			ReviewGroups       []struct{ ID, Verdict, Members string }
			DanglingGroupLinks []map[string]string
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		var wantRows, gotRows []string
		for _, g := range want.Groups {
			wantRows = append(wantRows, g.ID+" "+g.Verdict+" "+strconv.Itoa(len(g.Members)))
		}
		for _, g := range got.ReviewGroups {
			gotRows = append(gotRows, g.ID+" "+g.Verdict+" "+g.Members)
		}
		slices.Sort(wantRows)
		if !slices.Equal(gotRows, wantRows) || len(got.DanglingGroupLinks) > 0 {
			t.Errorf("groups %v: Oxigraph finds %q (dangling links %v), provgraph groups --format json %q", opts, gotRows, got.DanglingGroupLinks, wantRows)
		}
		if len(wantRows) == 0 {
			t.Errorf("groups %v lists no group: the check proves nothing", opts)
		}
	}
}

// TestExportGroupsFromView: export --include-groups reads the groups from
// the grouping view (--read view, and --read auto past --work-mem) and
// writes the statements a read of every citation writes, in the same
// order; a database without a view refuses --read view (exit 2, naming
// view rebuild) and, past --work-mem, --read auto too.
func TestExportGroupsFromView(t *testing.T) {
	dir := t.TempDir()
	db, bare := filepath.Join(dir, "g.db"), filepath.Join(dir, "bare.db")
	for _, f := range []string{"../../testdata/citations.jsonl", "../../internal/query/testdata/corpus.jsonl"} {
		for _, args := range [][]string{{"--db", db}, {"--db", bare, "--no-view"}} {
			if code, _, stderr := run(t, append(append([]string{"ingest"}, args...), f)...); code != 0 {
				t.Fatalf("ingest %s %v: %d %s", f, args, code, stderr)
			}
		}
	}
	// The groups' statements, the export's own IRI and times taken out.
	groupsOf := func(out string) []string {
		var g []string
		iri := regexp.MustCompile(`https://w3id\.org/provgraph/id/export/[0-9a-f]+`)
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "/groups> .") && !strings.Contains(l, "#dateTime") {
				g = append(g, iri.ReplaceAllString(l, "EXPORT"))
			}
		}
		return g
	}
	scan, _ := exported(t, "--db", db, "--include-groups", "--min-size", "1", "--read", "scan")
	want := groupsOf(scan)
	if len(want) < 100 {
		t.Fatalf("the scan's export holds %d group statements: the comparison proves little", len(want))
	}
	for _, args := range [][]string{{"--read", "view"}, {"--work-mem", "16KiB"}} {
		out, _ := exported(t, append([]string{"--db", db, "--include-groups", "--min-size", "1"}, args...)...)
		if got := groupsOf(out); !slices.Equal(got, want) {
			t.Errorf("export %v: %d group statements differ from the scan's %d", args, len(got), len(want))
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--read", "view"}, "write one with provgraph view rebuild --db " + bare},
		{[]string{"--work-mem", "16KiB"}, "--read view reads the groups from the grouping view in bounded memory"},
	} {
		code, stdout, stderr := run(t, append([]string{"export", "--db", bare, "--include-groups"}, tc.args...)...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("export %v of a database without a view: exit %d, %d bytes out, %q; want exit %d and %q", tc.args, code, len(stdout), stderr, exitUsage, tc.want)
		}
	}
}
