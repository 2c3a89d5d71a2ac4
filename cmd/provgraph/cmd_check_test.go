package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// TestCheckCommand runs provgraph check on a good database, on one whose
// object index lost a chunk, on a missing file and on files in the earlier
// formats (1 and 2), which convert then copies.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := run("ingest", "--db", good, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run("check", "--db", good)
	if code != exitOK || !strings.Contains(stdout, "provgraph-store version 7") || !strings.Contains(stdout, "consistent") {
		t.Errorf("check on a good database: exit %d\n%s%s", code, stdout, stderr)
	}

	damaged := filepath.Join(dir, "damaged.db")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(damaged, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(damaged, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		osp := tx.Bucket([]byte("osp"))
		run, _ := osp.Cursor().Last()
		b := osp.Bucket(run)
		k, _ := b.Cursor().Last()
		return b.Delete(append([]byte(nil), k...))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run("check", "--db", damaged)
	if code != exitCorrupt || !strings.Contains(stderr, "store is inconsistent") || !strings.Contains(stderr, "index osp lacks quad") {
		t.Errorf("check on a damaged database: exit %d, want %d\n%s", code, exitCorrupt, stderr)
	}

	code, _, stderr = run("check", "--db", filepath.Join(dir, "none.db"))
	if code != exitFailure || !strings.Contains(stderr, "does not exist") {
		t.Errorf("check on a missing file: exit %d\n%s", code, stderr)
	}

	for _, v := range []struct{ version, marker string }{
		{"1", "provgraph-cayley-kv version 1"},
		{"2", "provgraph-store version 2"},
	} {
		old := filepath.Join(dir, "v"+v.version+".db")
		data, err = os.ReadFile("../../internal/graph/testdata/format-v" + v.version + "/prov.db")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(old, data, 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr = run("check", "--db", old)
		if code != exitFailure || !strings.Contains(stderr, v.marker) || !strings.Contains(stderr, "provgraph convert") {
			t.Errorf("check on a format %s file: exit %d\n%s", v.version, code, stderr)
		}

		// The conversion the message names gives a consistent store with
		// every quad, and leaves the old file as it was.
		converted := filepath.Join(dir, "converted"+v.version+".db")
		if code, _, stderr := run("convert", "--from", old, "--db", converted); code != exitOK {
			t.Fatalf("convert format %s: exit %d\n%s", v.version, code, stderr)
		}
		code, stdout, stderr = run("check", "--db", converted)
		if code != exitOK || !strings.Contains(stdout, "version 4, 50 quads") || !strings.Contains(stdout, "consistent") {
			t.Errorf("check after convert of format %s: exit %d\n%s%s", v.version, code, stdout, stderr)
		}
		after, err := os.ReadFile(old)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(after, data) {
			t.Errorf("convert changed the format %s file", v.version)
		}
	}
}

// TestConvertLeavesNothing: convert checks the old file before it makes
// the new one, and removes the new one when it fails. Regression tests
// for issues 19.13 (a missing source left a 32 KB file that blocked the
// retry) and 18.15 (a file already in the current format).
func TestConvertLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	run := func(ctx context.Context, args ...string) (int, string) {
		var errb bytes.Buffer
		code := Run(ctx, args, strings.NewReader(""), io.Discard, &errb)
		return code, errb.String()
	}
	v2 := filepath.Join(dir, "v2.db")
	data, err := os.ReadFile("../../internal/graph/testdata/format-v2/prov.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v2, data, 0o600); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		from string
		code int
		want string
	}{
		{"missing source", context.Background(), filepath.Join(dir, "none.db"), exitFailure, "does not exist"},
		{"current format", context.Background(), "../../internal/graph/testdata/format-v3/prov.db", exitUsage, "already in a format this build reads (provgraph-store version 3, 4 or 5): nothing to convert"},
		{"interrupted", canceled, v2, exitFailure, "the incomplete new file was removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := filepath.Join(dir, "new.db")
			code, stderr := run(tt.ctx, "convert", "--from", tt.from, "--db", target)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("convert: exit %d, want %d saying %q\n%s", code, tt.code, tt.want, stderr)
			}
			if _, err := os.Stat(target); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("convert left %s behind (%v)", target, err)
			}
		})
	}
	// The retry the first case blocked.
	if code, stderr := run(context.Background(), "convert", "--from", v2, "--db", filepath.Join(dir, "new.db")); code != exitOK {
		t.Errorf("convert after the failures: exit %d\n%s", code, stderr)
	}
}

// TestCheckListsPastStats: a file whose counters Stats cannot read (here a
// stray key in the hash index) is still checked, and every problem is
// listed, not only the first error.
func TestCheckListsPastStats(t *testing.T) {
	db := filepath.Join(t.TempDir(), "damaged.db")
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", db, "../../testdata/citations.jsonl"}, strings.NewReader(""), io.Discard, &errb); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errb.String())
	}
	bdb, err := bbolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		if err := tx.Bucket([]byte("ids")).Put([]byte("stray"), []byte("x")); err != nil {
			return err
		}
		osp := tx.Bucket([]byte("osp"))
		run, _ := osp.Cursor().Last()
		b := osp.Bucket(run)
		k, _ := b.Cursor().Last()
		return b.Delete(append([]byte(nil), k...))
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--db", db}, strings.NewReader(""), io.Discard, &stderr)
	for _, want := range []string{"ids: ", "want only runs", "index osp lacks quad"} {
		if code != exitCorrupt || !strings.Contains(stderr.String(), want) {
			t.Errorf("check: exit %d, want %d listing %q\n%s", code, exitCorrupt, want, stderr.String())
		}
	}
}

// TestCheckProgress runs check with --progress lines: a line on standard
// error when each part starts (the dictionary, each index, the view's
// rows), the same standard output as without, and a bad --progress a
// usage error.
func TestCheckProgress(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := run("ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	code, quiet, stderr := run("check", "--db", db, "--progress", "none")
	if code != exitOK || stderr != "" {
		t.Fatalf("check --progress none: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := run("check", "--db", db, "--progress", "lines")
	if code != exitOK {
		t.Fatalf("check --progress lines: exit %d: %s", code, stderr)
	}
	// The duration of the check is the one part of standard output that
	// differs between two runs.
	dur := regexp.MustCompile(`checked in [^)]*`)
	if a, b := dur.ReplaceAllString(quiet, ""), dur.ReplaceAllString(stdout, ""); a != b {
		t.Errorf("standard output with --progress lines differs:\n%s\nwithout:\n%s", b, a)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^check: hash index: \d+ entries to read, \d+s$`),
		regexp.MustCompile(`(?m)^check: dictionary: \d+ terms to read, \d+s$`),
		regexp.MustCompile(`(?m)^check: index spo: \d+ tuples to read, \d+s$`),
		regexp.MustCompile(`(?m)^check: index pos: the runs merged: \d+ tuples to read, \d+s$`),
		regexp.MustCompile(`(?m)^check: index osp: each run: \d+ tuples to read, \d+s$`),
		regexp.MustCompile(`(?m)^check: twins, \d+s$`),
		regexp.MustCompile(`(?m)^check: view of policy provgraph-default@\S+: rows made from the quads: \d+ citations to read, \d+s$`),
		regexp.MustCompile(`(?m)^check: view of policy provgraph-default@\S+: postings the rows give: \d+ rows to read, \d+s$`),
	} {
		if !want.MatchString(stderr) {
			t.Errorf("check --progress lines: standard error lacks a line matching %s:\n%s", want, stderr)
		}
	}
	code, _, stderr = run("check", "--db", db, "--progress", "dots")
	if code != exitUsage || !strings.Contains(stderr, `--progress "dots": want auto, bar, lines or none`) {
		t.Errorf("check --progress dots: exit %d, stderr %q; want exit %d naming the values", code, stderr, exitUsage)
	}
}
