package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestRejectedInputCreatesNoDatabase (issue 18.13): an ingest that
// fails before writing leaves no new database file behind, and a valid
// one creates it.
func TestIngestRejectedInputCreatesNoDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	ingest := func(stdin string) (int, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{"ingest", "--db", db, "-"}, strings.NewReader(stdin), &out, &errb)
		return code, errb.String()
	}
	for _, bad := range []string{
		"raw_url,observed_at\nhttps://a.test/,2025-01-01T00:00:00Z\n",
		`{"raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z","position":"1"}` + "\n",
	} {
		if code, stderr := ingest(bad); code != exitRejected {
			t.Errorf("ingest of %q: exit %d, want %d: %s", bad, code, exitRejected, stderr)
		}
		if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a rejected ingest left %s behind (stat: %v)", db, err)
		}
	}
	good := `{"raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z"}` + "\n"
	if code, stderr := ingest(good); code != exitOK {
		t.Fatalf("ingest of a valid line: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("a valid ingest created no database: %v", err)
	}
	// An existing database stays, whatever the input.
	if code, _ := ingest("not json\n"); code != exitRejected {
		t.Errorf("ingest of a bad line into an existing database: exit %d, want %d", code, exitRejected)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("a rejected ingest removed an existing database: %v", err)
	}
}
