package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// preadDB writes a bbolt file with the buckets of the test cases and
// returns it opened, with a descriptor for pread.
func preadDB(t *testing.T, fill func(tx *bbolt.Tx) error) (*bbolt.DB, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(fill); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return db, f
}

type kv struct{ k, v string }

func step(k, v []byte) kv {
	if k == nil {
		return kv{"<nil>", ""}
	}
	if v == nil {
		return kv{string(k), "<nil>"}
	}
	return kv{string(k), string(v)}
}

// TestPageCursorMatchesBolt walks buckets of several shapes with a
// pageCursor and with bbolt's Cursor, and requires the same keys and
// values at every step: whole walks both ways, and seeks (to keys
// present, absent, before the first and after the last) each followed by
// steps both ways, as seekChunk and termCodes move.
func TestPageCursorMatchesBolt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		n    int
		val  func(i int) []byte
		sub  bool // a nested bucket among the keys
	}{
		{"one leaf", 5, func(i int) []byte { return []byte(fmt.Sprint("v", i)) }, false},
		{"deep", 60000, func(i int) []byte { return []byte(fmt.Sprint("value-", i)) }, false},
		{"overflow values", 300, func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100+i*37) }, false},
		{"empty values", 2000, func(int) []byte { return []byte{} }, false},
		{"nested bucket", 3000, func(i int) []byte { return []byte{byte(i)} }, true},
		// Values of more than lazyPages pages (a run's filter) among
		// small ones: their nodes are read a page at first (pframe.span).
		{"large values", 400, func(i int) []byte {
			if i%50 == 7 {
				return bytes.Repeat([]byte{byte(i), 1}, 40_000+i*500)
			}
			return []byte(fmt.Sprint("v", i))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var keys [][]byte
			db, f := preadDB(t, func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte("b"))
				if err != nil {
					return err
				}
				for i := range tc.n {
					k := binary.BigEndian.AppendUint32(nil, uint32(i*2+10)) // gaps for absent keys
					keys = append(keys, k)
					if err := b.Put(k, tc.val(i)); err != nil {
						return err
					}
				}
				if tc.sub {
					s, err := b.CreateBucket([]byte{0, 0, 0, 11})
					if err != nil {
						return err
					}
					return s.Put([]byte("x"), []byte("y"))
				}
				return nil
			})
			// Without kept pages, keeping 3 (the deep tree's seeks then
			// evict and re-read), and sharing a keep as a ReadOnce
			// Store's cursors do (-1: branch pages only).
			for _, keep := range []int{0, 3, -1} {
				err := db.View(func(tx *bbolt.Tx) error {
					b := tx.Bucket([]byte("b"))
					pc := newPageCursor(f, tx, b)
					if pc == nil {
						if tc.n <= 5 {
							return nil // kept inline in its parent: bbolt's cursor reads it
						}
						return errors.New("no pageCursor for a bucket with a root page")
					}
					switch {
					case keep > 0:
						pc.keepPages(keep)
					case keep < 0:
						pc.keep = newPageKeep(64)
						pc.keep.shared = true
					}
					bc := b.Cursor()
					same := func(what string, a, b kv) error {
						if a != b {
							return fmt.Errorf("%s: page cursor %q, bbolt %q", what, a, b)
						}
						return nil
					}
					if err := same("First", step(pc.First()), step(bc.First())); err != nil {
						return err
					}
					for i := 0; ; i++ {
						a, b := step(pc.Next()), step(bc.Next())
						if err := same(fmt.Sprint("Next ", i), a, b); err != nil {
							return err
						}
						if a.k == "<nil>" {
							break
						}
					}
					if err := same("Last", step(pc.Last()), step(bc.Last())); err != nil {
						return err
					}
					for i := 0; ; i++ {
						a, b := step(pc.Prev()), step(bc.Prev())
						if err := same(fmt.Sprint("Prev ", i), a, b); err != nil {
							return err
						}
						if a.k == "<nil>" {
							break
						}
					}
					seeks := [][]byte{{}, {0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff, 0xff}}
					for range 300 {
						k := append([]byte{}, keys[rng.IntN(len(keys))]...)
						if rng.IntN(2) == 0 {
							k[3]++ // absent: between two keys
						}
						seeks = append(seeks, k)
					}
					for _, k := range seeks {
						if err := same(fmt.Sprintf("Seek %x", k), step(pc.Seek(k)), step(bc.Seek(k))); err != nil {
							return err
						}
						for j := range rng.IntN(40) {
							var a, b kv
							if rng.IntN(3) == 0 {
								a, b = step(pc.Prev()), step(bc.Prev())
							} else {
								a, b = step(pc.Next()), step(bc.Next())
							}
							if err := same(fmt.Sprintf("step %d after Seek %x", j, k), a, b); err != nil {
								return err
							}
							if a.k == "<nil>" {
								break
							}
						}
					}
					return pc.Err()
				})
				if err != nil {
					t.Fatalf("keeping %d pages: %v", keep, err)
				}
			}
		})
	}
}

// TestPageCursorKeep checks that a cursor keeping pages reads a page
// again only once it has been evicted: seeking back to a leaf read a
// moment ago costs no pread.
func TestPageCursorKeep(t *testing.T) {
	db, f := preadDB(t, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		for i := range 20000 {
			if err := b.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), []byte(fmt.Sprint("value-", i))); err != nil {
				return err
			}
		}
		return nil
	})
	lo, hi := binary.BigEndian.AppendUint32(nil, 5), binary.BigEndian.AppendUint32(nil, 19000)
	err := db.View(func(tx *bbolt.Tx) error {
		for _, keep := range []int{0, 16} {
			pc := newPageCursor(f, tx, tx.Bucket([]byte("b")))
			if keep > 0 {
				pc.keepPages(keep)
			}
			pc.Seek(lo)
			pc.Seek(hi)
			before := pc.reads
			if k, _ := pc.Seek(lo); !bytes.Equal(k, lo) {
				return fmt.Errorf("keeping %d: Seek(%x) found %x", keep, lo, k)
			}
			got := pc.reads - before
			switch {
			case keep == 0 && got == 0:
				return errors.New("seeking back to another leaf read no page without kept pages: the test no longer tells")
			case keep > 0 && got != 0:
				return fmt.Errorf("keeping %d pages, seeking back to a leaf read a moment ago read %d pages", keep, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPageCursorDamage overwrites pages of a bucket's tree with what a
// damaged file may hold and requires the walk to stop with an error
// wrapping ErrCorrupt, never a panic or a wrong key taken for a right one.
func TestPageCursorDamage(t *testing.T) {
	damages := []struct {
		name string
		hurt func(p []byte, id uint64)
	}{
		{"zeroed", func(p []byte, _ uint64) { clear(p) }},
		{"another page's id", func(p []byte, id uint64) { ne.PutUint64(p, id+1) }},
		{"meta flags", func(p []byte, _ uint64) { ne.PutUint16(p[8:], 0x04) }},
		{"count past the page", func(p []byte, _ uint64) { ne.PutUint16(p[10:], 0xffff) }},
		{"keys past the page", func(p []byte, _ uint64) {
			for i := range int(ne.Uint16(p[10:])) {
				e := p[pageHeaderSize+i*pageElemSize:]
				ne.PutUint32(e, 1<<30)     // pos of a branch element (a leaf's flags)
				ne.PutUint32(e[4:], 1<<30) // pos of a leaf element (a branch's key size)
			}
		}},
		{"huge overflow", func(p []byte, _ uint64) { ne.PutUint32(p[12:], 1<<31) }},
		{"overflow past the end", func(p []byte, _ uint64) { ne.PutUint32(p[12:], 1<<19) }},
		{"random bytes", func(p []byte, _ uint64) {
			rng := rand.New(rand.NewPCG(3, 4))
			for i := 8; i < len(p); i++ {
				p[i] = byte(rng.Uint32())
			}
		}},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.db")
			db, err := bbolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			var root, leaf uint64
			err = db.Update(func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte("b"))
				if err != nil {
					return err
				}
				for i := range 20000 {
					if err := b.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), []byte("some value")); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			psize := db.Info().PageSize
			db.View(func(tx *bbolt.Tx) error {
				b := tx.Bucket([]byte("b"))
				root = uint64(b.Root())
				// The leaf of a key in the middle, as an intact walk finds it.
				f, err := os.Open(path)
				if err != nil {
					return err
				}
				defer f.Close()
				pc := newPageCursor(f, tx, b)
				pc.Seek(binary.BigEndian.AppendUint32(nil, 10000))
				if pc.Err() != nil || len(pc.stack) < 2 {
					t.Fatalf("intact file: %v, %d pages deep", pc.Err(), len(pc.stack))
				}
				leaf = pc.top().id
				return nil
			})
			db.Close()
			for _, target := range []uint64{root, leaf} {
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				hurt := append([]byte{}, raw...)
				d.hurt(hurt[int(target)*psize:int(target+1)*psize], target)
				bad := filepath.Join(t.TempDir(), "bad.db")
				if err := os.WriteFile(bad, hurt, 0o600); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(bad)
				if err != nil {
					t.Fatal(err)
				}
				// bbolt itself is not opened on the damaged copy: the
				// cursor reads it alone, with the intact file's root.
				pc := &pageCursor{f: f, psize: psize, root: root, size: int64(len(hurt))}
				n := 0
				for k, _ := pc.First(); k != nil; k, _ = pc.Next() {
					if len(k) != 4 || binary.BigEndian.Uint32(k) != uint32(n) {
						// Damage that still parses may give other keys,
						// but only keys the page holds; a walk never
						// goes on past an error.
						if pc.Err() != nil {
							t.Fatalf("page %d: a key after an error", target)
						}
					}
					n++
				}
				for _, k := range [][]byte{{0, 0, 0x27, 0x10}, {0, 0, 0x4e, 0x1f}} {
					pc.Seek(k)
				}
				f.Close()
				if n == 20000 && pc.Err() == nil && d.name != "random bytes" {
					t.Errorf("page %d %s: walked all 20000 keys without an error", target, d.name)
				}
				if err := pc.Err(); err != nil && !errors.Is(err, ErrCorrupt) {
					t.Errorf("page %d %s: error %v does not wrap ErrCorrupt", target, d.name, err)
				}
			}
		})
	}
}

// FuzzPageCursor reads a page of arbitrary bytes as a bucket's root: the
// walk must end, with or without an error, and never panic.
func FuzzPageCursor(f *testing.F) {
	page := make([]byte, 4096)
	ne.PutUint16(page[8:], leafPageFlag)
	ne.PutUint16(page[10:], 1)
	ne.PutUint32(page[pageHeaderSize+4:], pageElemSize)
	ne.PutUint32(page[pageHeaderSize+8:], 1)
	ne.PutUint32(page[pageHeaderSize+12:], 1)
	f.Add(page[:64])
	f.Fuzz(func(t *testing.T, data []byte) {
		buf := make([]byte, 3*4096)
		copy(buf, data)
		copy(buf[4096:], data) // page 1, also the target of branch elements
		ne.PutUint64(buf[4096:], 1)
		path := filepath.Join(t.TempDir(), "f.db")
		if err := os.WriteFile(path, buf, 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		pc := &pageCursor{f: fh, psize: 4096, root: 1, size: int64(len(buf))}
		for k, _ := pc.First(); k != nil; k, _ = pc.Next() {
		}
		for k, _ := pc.Last(); k != nil; k, _ = pc.Prev() {
		}
		pc.Seek([]byte{1})
		if err := pc.Err(); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
	})
}

// TestPageCursorKeyOnly: with keyOnly set, the moves return bbolt's keys
// without values, and stepping over a value of megabytes (a run's
// filter) reads its node's first page only, not the value.
func TestPageCursorKeyOnly(t *testing.T) {
	big := bytes.Repeat([]byte{0xa5}, 4<<20)
	db, f := preadDB(t, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		// As a run: its count, its filter, then the chunks.
		if err := b.Put([]byte{0}, []byte{1, 2, 3}); err != nil {
			return err
		}
		if err := b.Put([]byte{0, 0}, big); err != nil {
			return err
		}
		for i := range 2000 {
			if err := b.Put(binary.BigEndian.AppendUint32([]byte{1}, uint32(i)), []byte(fmt.Sprint("chunk", i))); err != nil {
				return err
			}
		}
		return nil
	})
	err := db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("b"))
		pc := newPageCursor(f, tx, b)
		bc := b.Cursor()
		first := binary.BigEndian.AppendUint32([]byte{1}, 0)
		k, _ := pc.Seek(first)
		if !bytes.Equal(k, first) {
			return fmt.Errorf("Seek to the first chunk gave %x", k)
		}
		bc.Seek(first)
		pc.keyOnly = true
		k, v := pc.Prev()
		wk, _ := bc.Prev()
		if !bytes.Equal(k, wk) || v != nil {
			return fmt.Errorf("Prev with keyOnly gave %x, %d bytes; want %x and no value", k, len(v), wk)
		}
		if f := pc.top(); len(f.p) >= len(big) || cap(f.ext) >= len(big) {
			return fmt.Errorf("stepping back over the filter read %d + %d bytes of its node, want its first page alone", len(f.p), cap(f.ext))
		}
		pc.keyOnly = false
		k, v = pc.keyValue()
		if !bytes.Equal(k, []byte{0, 0}) || !bytes.Equal(v, big) {
			return fmt.Errorf("the value under the cursor: key %x, %d bytes, want the filter's %d", k, len(v), len(big))
		}
		return pc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
