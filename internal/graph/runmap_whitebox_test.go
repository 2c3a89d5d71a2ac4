package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// rowPrefix is a grouping view's rows' Prefixer: the key before the
// first zero byte, with it.
func rowPrefix(k []byte) int {
	if i := bytes.IndexByte(k, 0); i >= 0 {
		return i + 1
	}
	return 0
}

// TestRunMapMatchesModel writes random puts, rewrites and deletes into a
// RunMap over many transactions, with run sizes turned down so that runs
// merge, become final and hold several versions of a key and tombstones,
// and after every transaction compares every read (Get of present and
// absent keys, Ascend from random keys, Prefix of a key's rows, in the
// writing transaction and in a read transaction) with a map.
func TestRunMapMatchesModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix Prefixer
	}{{"filtered", rowPrefix}, {"unfiltered", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(f, b uint64) { finalMapRunBytes, bigMapMerge = f, b }(finalMapRunBytes, bigMapMerge)
			finalMapRunBytes, bigMapMerge = 6000, 2000
			s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true, MappedLimit: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(3, 4))
			model := map[string]string{}
			key := func() string {
				return fmt.Sprintf("k%02d\x00c%03d", rng.IntN(40), rng.IntN(30))
			}
			maxRuns := 0
			for tx := range 120 {
				err := s.Update(func(w *Writer) error {
					b := w.View("v")
					if b == nil {
						var err error
						if b, err = w.CreateView("v"); err != nil {
							return err
						}
					}
					m, err := b.Runs("rows", tc.prefix, true)
					if err != nil {
						return err
					}
					for range 1 + rng.IntN(30) {
						k := key()
						switch rng.IntN(4) {
						case 0:
							if err := m.Delete([]byte(k)); err != nil {
								return err
							}
							delete(model, k)
						default:
							v := strings.Repeat(fmt.Sprint(tx), 1+rng.IntN(20))
							if rng.IntN(8) == 0 {
								v = "" // postings have empty values
							}
							if err := m.Put([]byte(k), []byte(v)); err != nil {
								return err
							}
							model[k] = v
						}
					}
					// The transaction's own writes read back.
					return compareRunMap(m, model, rng, "in the writing transaction")
				})
				if err != nil {
					t.Fatalf("transaction %d: %v", tx, err)
				}
				err = s.Read(func(r *Reader) error {
					m, err := r.View("v").Runs("rows", tc.prefix, false)
					if err != nil {
						return err
					}
					maxRuns = max(maxRuns, len(m.runs))
					return compareRunMap(m, model, rng, "in a read transaction")
				})
				if err != nil {
					t.Fatalf("after transaction %d: %v", tx, err)
				}
			}
			// The sizes make some runs final and others merge.
			var final, levels int
			err = s.Read(func(r *Reader) error {
				m, _ := r.View("v").Runs("rows", tc.prefix, false)
				for _, run := range m.runs {
					if run.bytes >= finalMapRunBytes {
						final++
					}
					levels = max(levels, run.name.level())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if final == 0 || levels < 2 {
				t.Errorf("%d final runs, highest level %d: the test did not make merges and final runs", final, levels)
			}
			// Read by a ReadOnce Store: every read of the map by pread.
			path := s.path
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			once, err := Open(path, &Options{ReadOnly: true, ReadOnce: true})
			if err != nil {
				t.Fatal(err)
			}
			defer once.Close()
			err = once.Read(func(r *Reader) error {
				m, err := r.View("v").Runs("rows", tc.prefix, false)
				if err != nil {
					return err
				}
				if m.blocks == nil {
					return errors.New("a map read by a ReadOnce Store does not read by pread")
				}
				for range 5 {
					if err := compareRunMap(m, model, rng, "read once"); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func compareRunMap(m *RunMap, model map[string]string, rng *rand.Rand, where string) error {
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for range 20 {
		k := fmt.Sprintf("k%02d\x00c%03d", rng.IntN(42), rng.IntN(32))
		v := m.Get([]byte(k))
		want, ok := model[k]
		if ok != (v != nil) || string(v) != want {
			return fmt.Errorf("%s: Get(%q) = %q (present %v), want %q (present %v)", where, k, v, v != nil, want, ok)
		}
	}
	var got []string
	from := fmt.Sprintf("k%02d", rng.IntN(42))
	if err := m.Ascend([]byte(from), func(k, v []byte) (bool, error) {
		got = append(got, string(k)+"="+string(v))
		return true, nil
	}); err != nil {
		return err
	}
	var want []string
	for _, k := range keys {
		if k >= from {
			want = append(want, k+"="+model[k])
		}
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: Ascend(%q) = %q, want %q", where, from, got, want)
	}
	// A walk of the whole map (by pread in a read transaction).
	got, want = nil, nil
	if err := m.Ascend(nil, func(k, v []byte) (bool, error) {
		got = append(got, string(k)+"="+string(v))
		return true, nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		want = append(want, k+"="+model[k])
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: Ascend(nil) = %q, want %q", where, got, want)
	}
	p := fmt.Sprintf("k%02d\x00", rng.IntN(42))
	got, want = nil, nil
	if err := m.Prefix([]byte(p), func(k, v []byte) (bool, error) {
		got = append(got, string(k)+"="+string(v))
		return true, nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if strings.HasPrefix(k, p) {
			want = append(want, k+"="+model[k])
		}
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: Prefix(%q) = %q, want %q", where, p, got, want)
	}
	return m.dmg.get()
}

// TestRunMapDroppedWithView: a view dropped in the transaction that wrote
// to its run map takes the writes with it (nothing is flushed into a
// deleted bucket), and one made again in the same transaction starts
// empty.
func TestRunMapDroppedWithView(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(w *Writer) error {
		b, err := w.CreateView("v")
		if err != nil {
			return err
		}
		m, err := b.Runs("rows", nil, true)
		if err != nil {
			return err
		}
		if err := m.Put([]byte("a"), []byte("1")); err != nil {
			return err
		}
		if err := w.DropView("v"); err != nil {
			return err
		}
		b, err = w.CreateView("v")
		if err != nil {
			return err
		}
		m, err = b.Runs("rows", nil, true)
		if err != nil {
			return err
		}
		if v := m.Get([]byte("a")); v != nil {
			return fmt.Errorf("Get(a) = %q in a map made again after the drop", v)
		}
		return m.Put([]byte("b"), []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Read(func(r *Reader) error {
		m, err := r.View("v").Runs("rows", nil, false)
		if err != nil {
			return err
		}
		var got []string
		m.Ascend(nil, func(k, v []byte) (bool, error) { got = append(got, string(k)+"="+string(v)); return true, nil })
		if !slices.Equal(got, []string{"b=2"}) {
			return fmt.Errorf("map holds %q, want [b=2]", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRunMapDamage: a run map whose stored bytes are damaged gives an
// error wrapping ErrCorrupt from the read that meets it, never a panic
// or a wrong value: an entry whose sequence does not decode, read by Get
// and by Ascend, and a run without its meta, met when the map is opened.
func TestRunMapDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b *bbolt.Bucket) error
		read   func(m *RunMap) error
	}{
		{"entry", func(b *bbolt.Bucket) error {
			n := newRunName(0, 0)
			run := b.Bucket(n[:])
			return run.Put([]byte("b\x00c1"), bytes.Repeat([]byte{0xff}, 11))
		}, func(m *RunMap) error {
			if v := m.Get([]byte("b\x00c1")); v != nil {
				return fmt.Errorf("Get of a damaged entry = %q, want nil", v)
			}
			if err := m.dmg.get(); !errors.Is(err, ErrCorrupt) {
				return fmt.Errorf("Get of a damaged entry: damage %v, want ErrCorrupt", err)
			}
			err := m.Ascend(nil, func(_, _ []byte) (bool, error) { return true, nil })
			if !errors.Is(err, ErrCorrupt) {
				return fmt.Errorf("Ascend over a damaged entry = %v, want ErrCorrupt", err)
			}
			return nil
		}},
		{"meta", func(b *bbolt.Bucket) error {
			n := newRunName(0, 0)
			return b.Delete(append([]byte{mapMetaByte}, n[:]...))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = s.Update(func(w *Writer) error {
				b, err := w.CreateView("v")
				if err != nil {
					return err
				}
				m, err := b.Runs("rows", rowPrefix, true)
				if err != nil {
					return err
				}
				for _, k := range []string{"a\x00c0", "b\x00c1", "c\x00c2"} {
					if err := m.Put([]byte(k), []byte("row")); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = s.db.Update(func(tx *bbolt.Tx) error {
				return tc.damage(tx.Bucket([]byte(viewBucket)).Bucket([]byte("v")).Bucket([]byte("rows")))
			})
			if err != nil {
				t.Fatal(err)
			}
			var fail error
			err = s.Read(func(r *Reader) error {
				m, err := r.View("v").Runs("rows", rowPrefix, false)
				if tc.read == nil {
					if !errors.Is(err, ErrCorrupt) {
						fail = fmt.Errorf("Runs of a map with a run lacking its meta = %v, want ErrCorrupt", err)
					}
					return err
				}
				if err != nil {
					return err
				}
				fail = tc.read(m)
				return nil
			})
			if fail != nil {
				t.Fatal(fail)
			}
			// The read that met the damage returns it.
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Read over a damaged run map = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestRunMapCheck: Check finds nothing in a map as written, through
// merges, and names the run of each broken rule: a meta whose counts
// differ, a filter lacking a prefix, an entry of a later sequence than
// the map's, an entry that does not decode, a meta without its run.
func TestRunMapCheck(t *testing.T) {
	defer func(f, b uint64) { finalMapRunBytes, bigMapMerge = f, b }(finalMapRunBytes, bigMapMerge)
	finalMapRunBytes, bigMapMerge = 2000, 1000
	for _, tc := range []struct {
		name   string
		damage func(m *bbolt.Bucket, run []byte) error
		want   string
	}{
		{"none", nil, ""},
		{"meta counts", func(m *bbolt.Bucket, run []byte) error {
			meta := bytes.Clone(m.Get(append([]byte{mapMetaByte}, run...)))
			meta[7]++
			return m.Put(append([]byte{mapMetaByte}, run...), meta)
		}, "its meta says"},
		{"filter", func(m *bbolt.Bucket, run []byte) error {
			meta := bytes.Clone(m.Get(append([]byte{mapMetaByte}, run...)))
			clear(meta[mapMetaSize:])
			return m.Put(append([]byte{mapMetaByte}, run...), meta)
		}, "its filter lacks the prefix"},
		{"sequence", func(m *bbolt.Bucket, run []byte) error {
			return m.Bucket(run).Put([]byte("k99\x00c"), binary.AppendUvarint(nil, 1<<40))
		}, "past the map's"},
		{"entry", func(m *bbolt.Bucket, run []byte) error {
			return m.Bucket(run).Put([]byte("k99\x00c"), bytes.Repeat([]byte{0xff}, 11))
		}, "does not decode"},
		{"stray meta", func(m *bbolt.Bucket, run []byte) error {
			n := newRunName(7, 1<<40)
			return m.Put(append([]byte{mapMetaByte}, n[:]...), make([]byte, mapMetaSize))
		}, "names no run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for tx := range 12 {
				err := s.Update(func(w *Writer) error {
					b := w.View("v")
					if b == nil {
						if b, err = w.CreateView("v"); err != nil {
							return err
						}
					}
					m, err := b.Runs("rows", rowPrefix, true)
					if err != nil {
						return err
					}
					for i := range 20 {
						k := fmt.Sprintf("k%02d\x00c%d", (tx*7+i*3)%40, tx)
						if err := m.Put([]byte(k), []byte(strings.Repeat("v", 10))); err != nil {
							return err
						}
					}
					return m.Delete([]byte(fmt.Sprintf("k%02d\x00c%d", tx, tx-1)))
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			var run []byte
			err = s.db.Update(func(tx *bbolt.Tx) error {
				mb := tx.Bucket([]byte(viewBucket)).Bucket([]byte("v")).Bucket([]byte("rows"))
				c := mb.Cursor()
				for k, v := c.First(); k != nil; k, v = c.Next() {
					if v == nil {
						run = bytes.Clone(k) // the last run
					}
				}
				if tc.damage == nil {
					return nil
				}
				return tc.damage(mb, run)
			})
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			err = s.Read(func(r *Reader) error {
				m, err := r.View("v").Runs("rows", rowPrefix, false)
				if err != nil {
					return err
				}
				if len(m.runs) < 2 {
					return fmt.Errorf("%d runs: the test wants merges and several runs", len(m.runs))
				}
				problems, err = m.Check(10, nil)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("Check of a map as written = %q, want none", problems)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)):
				t.Errorf("Check of a map damaged (%s) = %q, want one problem saying %q", tc.name, problems, tc.want)
			}
		})
	}
}

// TestRunMapWalkDamage: a walk of a whole map, which reads its runs by
// pread, stops at a damaged page with ErrCorrupt, as Check does, instead
// of ending early as if the run ended there.
func TestRunMapWalkDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(w *Writer) error {
		b, err := w.CreateView("v")
		if err != nil {
			return err
		}
		m, err := b.Runs("rows", rowPrefix, true)
		if err != nil {
			return err
		}
		for i := range 3000 {
			if err := m.Put(fmt.Appendf(nil, "k%05d\x00c", i), []byte("a row of some length")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The last leaf of the run, found by walking its tree.
	var leaf uint64
	var psize int
	err = s.db.View(func(tx *bbolt.Tx) error {
		rows := tx.Bucket([]byte(viewBucket)).Bucket([]byte("v")).Bucket([]byte("rows"))
		var run *bbolt.Bucket
		if err := rows.ForEachBucket(func(k []byte) error { run = rows.Bucket(k); return nil }); err != nil {
			return err
		}
		if run == nil {
			return errors.New("the map has no run")
		}
		psize = tx.DB().Info().PageSize
		pc := newPageCursor(s.file, tx, run)
		if pc == nil {
			return errors.New("the run has no root page")
		}
		pc.Last()
		if len(pc.stack) < 2 {
			return errors.New("the run is one page: the test needs a leaf below a branch")
		}
		leaf = pc.top().id
		return pc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xee}, 16), int64(leaf)*int64(psize)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, what := range []string{"Ascend", "Check"} {
		err := s.Read(func(r *Reader) error {
			m, err := r.View("v").Runs("rows", rowPrefix, false)
			if err != nil {
				return err
			}
			if what == "Check" {
				_, err := m.Check(10, nil)
				return err
			}
			n := 0
			err = m.Ascend(nil, func(_, _ []byte) (bool, error) { n++; return true, nil })
			if err == nil {
				return fmt.Errorf("walked %d entries of 3000 and stopped without an error", n)
			}
			return err
		})
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s over a damaged leaf of a run = %v, want ErrCorrupt", what, err)
		}
	}
}
