package graph

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// TestViewWritesCountOnPager: a view's Get, Put and Delete in a write
// transaction count as random reads on the store's pager, so that an
// ingest writing a grouping view keeps the file's mapped pages under the
// limit; with a limit of one byte every look drops the mapping, and what
// was written still reads back.
func TestViewWritesCountOnPager(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true, MappedLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checks := 0
	s.pg.onCheck = func() { checks++ }
	const n = 4000
	key := func(i int) []byte { return fmt.Appendf(nil, "key-%07d", i*7919%n) }
	err = s.Update(func(w *Writer) error {
		b, err := w.CreateView("v")
		if err != nil {
			return err
		}
		for i := range n {
			if b.Get(key(i)) != nil {
				return fmt.Errorf("key %d there before it was put", i)
			}
			if err := b.Put(key(i), bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
				return err
			}
		}
		for i := 0; i < n; i += 2 {
			if err := b.Delete(key(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * n / 2 / mappedCheckEvery; checks < want {
		t.Errorf("the pager looked at the mapping %d times in %d view operations, want at least %d", checks, 5*n/2, want)
	}
	err = s.Read(func(r *Reader) error {
		b := r.View("v")
		for i := range n {
			v := b.Get(key(i))
			if i%2 == 0 && v != nil || i%2 == 1 && !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, 100)) {
				t.Errorf("key %d reads back %x", i, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
