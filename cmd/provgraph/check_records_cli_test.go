package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

// recordsBucket runs fn on the records-3 bucket of every view of db, in
// one write transaction.
func recordsBucket(t *testing.T, db string, fn func(rb *graph.Bucket) error) {
	t.Helper()
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Update(func(w *graph.Writer) error {
		for _, v := range w.Views() {
			rb, err := w.View(v).Sub("records-3", false)
			if err != nil {
				return err
			}
			if rb == nil {
				t.Fatalf("view %s keeps no records-3", v)
			}
			if err := fn(rb); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckGroupRecords: check says it compared the records with a fresh
// build; records behind a changed key pass, said to be checked
// structurally only; a key entry removed exits 5 naming the group and
// key and the queue --build command, and that command, run as said,
// makes check pass again.
func TestCheckGroupRecords(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "check", "--db", db)
	if code != exitOK || strings.Contains(stdout, "group records") {
		t.Errorf("check without records: exit %d, want no line on records\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "queue", "--build", "--db", db); code != exitOK {
		t.Fatalf("queue --build: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = run(t, "check", "--db", db)
	if code != exitOK || !regexp.MustCompile(`group records of policy provgraph-default@\S+, --max-shared 3: 12 groups, as a fresh build gives them\n`).MatchString(stdout) {
		t.Errorf("check with records: exit %d, want them compared with a fresh build\n%s%s", code, stdout, stderr)
	}

	recordsBucket(t, db, func(rb *graph.Bucket) error {
		d, err := rb.Sub("dirty", true)
		if err != nil {
			return err
		}
		return d.Put([]byte("https://changed.test/"), nil)
	})
	code, stdout, stderr = run(t, "check", "--db", db)
	if code != exitOK || !strings.Contains(stdout, ", --max-shared 3: 12 groups, structurally sound; behind 1 changed key (a run stopped before its end), so checked structurally only") {
		t.Errorf("check with records behind a key: exit %d, want it to pass saying so\n%s%s", code, stdout, stderr)
	}

	if code, _, stderr := run(t, "queue", "--build", "--db", db); code != exitOK {
		t.Fatalf("queue --build: exit %d\n%s", code, stderr)
	}
	var key, id string
	recordsBucket(t, db, func(rb *graph.Bucket) error {
		keys, err := rb.Sub("key", false)
		if err != nil {
			return err
		}
		if err := keys.Ascend(nil, func(k, v []byte) (bool, error) { key, id = string(k), string(v); return false, nil }); err != nil {
			return err
		}
		return keys.Delete([]byte(key))
	})
	code, _, stderr = run(t, "check", "--db", db)
	fix := regexp.MustCompile(`\(rebuild them: (provgraph queue --build --db \S+ --policy sha256:[0-9a-f]+ --max-shared 3)\)`).FindStringSubmatch(stderr)
	if code != exitCorrupt || !strings.Contains(stderr, "group "+id+": its key "+key+" has no key -> id entry") || fix == nil || !strings.Contains(fix[1], "--db "+db+" ") {
		t.Fatalf("check with a key entry removed: exit %d, want %d naming group %s, key %s and the command that rebuilds the records\n%s", code, exitCorrupt, id, key, stderr)
	}
	if code, _, stderr := run(t, strings.Fields(fix[1])[1:]...); code != exitOK {
		t.Fatalf("%s: exit %d\n%s", fix[1], code, stderr)
	}
	if code, stdout, stderr := run(t, "check", "--db", db); code != exitOK || !strings.Contains(stdout, "as a fresh build gives them") {
		t.Errorf("check after %s: exit %d\n%s%s", fix[1], code, stdout, stderr)
	}
}
