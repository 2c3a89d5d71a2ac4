package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
	if code != exitOK || !strings.Contains(stdout, "provgraph-store version 3") || !strings.Contains(stdout, "consistent") {
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
		if code != exitOK || !strings.Contains(stdout, "version 3, 50 quads") || !strings.Contains(stdout, "consistent") {
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
