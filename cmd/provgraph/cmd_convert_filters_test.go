package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertAddFilters: convert --add-filters writes the run filters of a
// format 3 file in place (the file then checks consistent and reads the
// same), has nothing to write the second time, and refuses --from.
func TestConvertAddFilters(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "v3.db")
	data, err := os.ReadFile("../../internal/graph/testdata/format-v3/prov.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	export := func() string {
		code, out, stderr := run("export", "--db", db, "--format", "nq")
		if code != exitOK {
			t.Fatalf("export: exit %d\n%s", code, stderr)
		}
		// The data, without the dataset description (its IRI is new
		// with each export).
		var data []string
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, "/id/export/") {
				data = append(data, l)
			}
		}
		return strings.Join(data, "\n")
	}
	before := export()
	if code, _, stderr := run("convert", "--add-filters", "--db", db); code != exitOK || !strings.Contains(stderr, "4 run filters written") {
		t.Errorf("convert --add-filters on the format 3 file: exit %d, want 0 saying 4 run filters written\n%s", code, stderr)
	}
	if code, _, stderr := run("convert", "--add-filters", "--db", db); code != exitOK || !strings.Contains(stderr, "0 run filters written") {
		t.Errorf("convert --add-filters again: exit %d, want 0 saying 0 run filters written\n%s", code, stderr)
	}
	if code, _, stderr := run("convert", "--rebuild-filters", "--db", db); code != exitOK || !strings.Contains(stderr, "4 run filters written") {
		t.Errorf("convert --rebuild-filters: exit %d, want 0 saying 4 run filters written\n%s", code, stderr)
	}
	if code, stdout, stderr := run("check", "--db", db); code != exitOK || !strings.Contains(stdout, "version 4") || !strings.Contains(stdout, "consistent") {
		t.Errorf("check after convert --add-filters: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := export(); after != before {
		t.Errorf("convert --add-filters changed the statements:\n%s\nwant\n%s", after, before)
	}
	if code, _, stderr := run("convert", "--add-filters", "--from", db, "--db", filepath.Join(dir, "x.db")); code != exitUsage || !strings.Contains(stderr, "--from is not for them") {
		t.Errorf("convert --add-filters --from: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	if code, _, _ := run("convert", "--add-filters", "--db", filepath.Join(dir, "none.db")); code != exitFailure {
		t.Errorf("convert --add-filters on a missing file: exit %d, want %d", code, exitFailure)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("convert --add-filters created the missing file")
	}
}
