package graph_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/provgraph/provgraph/internal/graph"
)

// fileDigest is the sha256 of every bucket, key, value and bucket
// sequence of the bbolt file at path, in key order: what a vacuum must
// keep.
func fileDigest(tb testing.TB, path string) [sha256.Size]byte {
	tb.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	h := sha256.New()
	var walk func(b *bbolt.Bucket, depth int) error
	walk = func(b *bbolt.Bucket, depth int) error {
		fmt.Fprintf(h, "seq %d %d\n", depth, b.Sequence())
		return b.ForEach(func(k, v []byte) error {
			fmt.Fprintf(h, "%d %q %q %v\n", depth, k, v, v == nil)
			if v == nil {
				return walk(b.Bucket(k), depth+1)
			}
			return nil
		})
	}
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			fmt.Fprintf(h, "bucket %q\n", name)
			return walk(b, 1)
		})
	})
	if err != nil {
		tb.Fatal(err)
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// storeWithFreePages writes a store holding citations and a view
// that was written and dropped, whose pages are free, and closes it.
func storeWithFreePages(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "prov.db")
	s, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	var quads []graph.Quad
	for i := range 300 {
		quads = append(quads, citation(i)...)
	}
	mustAdd(tb, s, quads...)
	err = s.Update(func(w *graph.Writer) error {
		b, err := w.CreateView("scratch")
		if err != nil {
			return err
		}
		for i := range 20000 {
			if err := b.Put(fmt.Appendf(nil, "key-%06d", i), bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Update(func(w *graph.Writer) error { return w.DropView("scratch") }); err != nil {
		tb.Fatal(err)
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestVacuum: the file rewritten without its free pages is smaller, holds
// every bucket, key, value and sequence it held, passes check and
// answers as before; no temporary file is left; its mode is kept.
func TestVacuum(t *testing.T) {
	path := storeWithFreePages(t)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	before := fileDigest(t, path)
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := db.Stats()
	db.Close()
	var calls int
	var last, live int64
	res, err := graph.Vacuum(context.Background(), path, graph.VacuumOptions{TxBytes: 64 << 10, Progress: func(copied, l int64) {
		calls++
		last, live = copied, l
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FreePages == 0 || res.FreePages != st.FreePageN+st.PendingPageN || res.After >= res.Before {
		t.Errorf("vacuum: %+v; want the %d free pages bbolt counts and a smaller file", res, st.FreePageN+st.PendingPageN)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != res.After || fi.Mode().Perm() != 0o640 {
		t.Errorf("file after: %d bytes, mode %v; want %d bytes (the result's), mode 0640", fi.Size(), fi.Mode().Perm(), res.After)
	}
	if calls < 2 || last <= 0 || live <= 0 {
		t.Errorf("progress: %d calls, last %d of %d; want one a commit of 64 kB", calls, last, live)
	}
	if got := fileDigest(t, path); got != before {
		t.Error("the vacuumed file's buckets, keys, values or sequences differ from the file's before")
	}
	if _, err := os.Stat(path + ".vacuum"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
	s := mustOpen(t, path, nil)
	if n := mustCount(t, s); n == 0 {
		t.Error("no quads after the vacuum")
	}
	if got := all(t, s, graph.Quad{S: mint("citation", "cit-0000007")}); len(got) == 0 {
		t.Error("citation 7 not found after the vacuum")
	}
}

// TestVacuumCancelled: a vacuum stopped halfway leaves the file as it was
// and no temporary file; one run after it replaces a stale temporary file.
func TestVacuumCancelled(t *testing.T) {
	path := storeWithFreePages(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = graph.Vacuum(ctx, path, graph.VacuumOptions{TxBytes: 64 << 10, Progress: func(int64, int64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("vacuum cancelled after its first commit: %v, want context.Canceled", err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, raw) {
		t.Errorf("the file changed under a cancelled vacuum (%v)", err)
	}
	if _, err := os.Stat(path + ".vacuum"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left by a cancelled vacuum: %v", err)
	}
	if err := os.WriteFile(path+".vacuum", []byte("a stale, partial copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := fileDigest(t, path)
	if _, err := graph.Vacuum(context.Background(), path, graph.VacuumOptions{}); err != nil {
		t.Fatalf("vacuum beside a stale temporary file: %v", err)
	}
	if fileDigest(t, path) != before {
		t.Error("the file vacuumed beside a stale temporary file differs")
	}
}

// TestVacuumLocked: a vacuum waits for the lock of a store open in
// another handle, and gives up with ErrLocked, changing nothing.
func TestVacuumLocked(t *testing.T) {
	path := storeWithFreePages(t)
	mustOpen(t, path, nil) // held until the test ends
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = graph.Vacuum(context.Background(), path, graph.VacuumOptions{LockTimeout: -1})
	if !errors.Is(err, graph.ErrLocked) {
		t.Fatalf("vacuum of a store open elsewhere: %v, want ErrLocked", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, raw) {
		t.Error("the file changed under a vacuum that did not get the lock")
	}
}

// TestVacuumNotStore: a file that is not a store is refused.
func TestVacuumNotStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database\n"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := graph.Vacuum(context.Background(), path, graph.VacuumOptions{}); !errors.Is(err, graph.ErrNotStore) {
		t.Errorf("vacuum of a text file: %v, want ErrNotStore", err)
	}
	if _, err := os.Stat(path + ".vacuum"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
}

// TestVacuumDamagedFiles: a vacuum of a damaged copy of a store (as
// TestDamagedFiles damages them) does not panic or fault; when it fails,
// the error says the file is damaged or not a store, the file is as it
// was and no temporary file is left.
func TestVacuumDamagedFiles(t *testing.T) {
	data := damagedStore(t)
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(23, 1))
	const cases = 120
	failed := 0
	for i := range cases {
		d, how := damage(rnd, data)
		path := filepath.Join(dir, fmt.Sprintf("d%d.db", i))
		if err := os.WriteFile(path, d, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := graph.Vacuum(context.Background(), path, graph.VacuumOptions{LockTimeout: -1})
		if err != nil {
			failed++
			if !errors.Is(err, graph.ErrCorrupt) && !errors.Is(err, graph.ErrNotStore) {
				t.Errorf("case %d (%s): %v, want ErrCorrupt or ErrNotStore", i, how, err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, d) {
				t.Errorf("case %d (%s): a failed vacuum changed the file", i, how)
			}
		}
		if _, err := os.Stat(path + ".vacuum"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("case %d (%s): temporary file left: %v", i, how, err)
		}
		os.Remove(path)
	}
	if failed == 0 {
		t.Error("no damaged file made the vacuum fail: the damage does not reach it")
	}
	t.Logf("%d of %d damaged files failed the vacuum", failed, cases)
}

// TestVacuumThroughLink: vacuum of a symbolic link rewrites the file it
// names, beside it, and leaves the link a link.
func TestVacuumThroughLink(t *testing.T) {
	path := storeWithFreePages(t)
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	before := fileDigest(t, path)
	res, err := graph.Vacuum(context.Background(), link, graph.VacuumOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link after the vacuum: %v, %v; want a link still", fi, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != res.After || res.After >= res.Before {
		t.Errorf("the file named after the vacuum: %v, %v; want it rewritten smaller (%+v)", fi, err, res)
	}
	if fileDigest(t, path) != before {
		t.Error("the file named by the link differs after the vacuum")
	}
}
