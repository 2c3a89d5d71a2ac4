package graph_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/provgraph/provgraph/internal/graph"
)

// Regression tests for issue 19.1: a damaged file crashed every reader
// (a memory fault past the end of a truncated file, bbolt's "Page
// expected to be" panic, an index out of range on an id beyond the
// dictionary). A damaged file must give an error wrapping ErrCorrupt.

// damagedStore writes a store of a few hundred citations, big enough to
// have branch pages and several runs, and returns its bytes.
func damagedStore(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "good.db")
	s, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i += 100 {
		mustAdd(t, s, citations(i, i+100)...)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readAll reads the store at path the ways commands do: Check, Stats,
// Count, Match of everything, and a Reader's passes (quads, then every
// term), and returns the first error.
func readAll(path string) error {
	s, err := graph.Open(path, &graph.Options{ReadOnly: true, LockTimeout: -1})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	var errs []error
	errs = append(errs, s.Check(ctx))
	_, err = s.Stats()
	errs = append(errs, err)
	_, err = s.Count()
	errs = append(errs, err)
	errs = append(errs, s.Match(ctx, graph.Quad{}, func(graph.Quad) error { return nil }))
	errs = append(errs, s.Read(func(r *graph.Reader) error {
		var ids []graph.ID
		if err := r.Quads(ctx, func(_, p, _ graph.ID) { ids = append(ids, p) }); err != nil {
			return err
		}
		all := make([]graph.ID, r.MaxID())
		for i := range all {
			all[i] = graph.ID(i + 1)
		}
		if err := r.Terms(ctx, all, func(graph.ID, graph.Term) error { return nil }); err != nil {
			return err
		}
		return r.Match(ctx, graph.Quad{P: graph.IRI("https://w3id.org/provgraph/ns#cites")}, func(graph.Quad) error { return nil })
	}))
	return errors.Join(errs...)
}

// TestDamagedFiles damages copies of a store at random (seeded):
// truncations, flipped bits, zeroed pages, overwritten runs of bytes, a
// page copied over another. Reading each must not panic or fault, and
// every error must say the file is damaged (ErrCorrupt), or, when the
// bbolt header itself is gone, that it is not a store (ErrNotStore).
func TestDamagedFiles(t *testing.T) {
	data := damagedStore(t)
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(19, 1))
	const cases = 300
	var failed, withErr int
	for i := range cases {
		d, how := damage(rnd, data)
		path := filepath.Join(dir, fmt.Sprintf("d%d.db", i))
		if err := os.WriteFile(path, d, 0o600); err != nil {
			t.Fatal(err)
		}
		err := readAll(path)
		if err != nil {
			withErr++
		}
		if err != nil && !errors.Is(err, graph.ErrCorrupt) && !errors.Is(err, graph.ErrNotStore) {
			t.Errorf("case %d (%s): %v, want ErrCorrupt", i, how, err)
			failed++
		}
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("case %d (%s): error does not name the file: %v", i, how, err)
		}
		if failed > 5 {
			t.Fatal("too many failures")
		}
		os.Remove(path)
	}
	t.Logf("%d of %d damaged files gave an error", withErr, cases)
}

// damage returns a damaged copy of data and what was done to it.
func damage(rnd *rand.Rand, data []byte) ([]byte, string) {
	const page = 4096
	d := append([]byte(nil), data...)
	pages := len(d) / page
	switch rnd.IntN(5) {
	case 0:
		n := rnd.IntN(len(d))
		return d[:n], fmt.Sprintf("truncated to %d bytes", n)
	case 1:
		n := 1 + rnd.IntN(8)
		for range n {
			o := rnd.IntN(len(d))
			d[o] ^= 1 << rnd.IntN(8)
		}
		return d, fmt.Sprintf("%d bits flipped", n)
	case 2:
		p := rnd.IntN(pages)
		clear(d[p*page : (p+1)*page])
		return d, fmt.Sprintf("page %d zeroed", p)
	case 3:
		o, n := rnd.IntN(len(d)), 1+rnd.IntN(64)
		for j := o; j < min(o+n, len(d)); j++ {
			d[j] = byte(rnd.IntN(256))
		}
		return d, fmt.Sprintf("%d random bytes at %d", n, o)
	default:
		from, to := rnd.IntN(pages), rnd.IntN(pages)
		copy(d[to*page:(to+1)*page], data[from*page:(from+1)*page])
		return d, fmt.Sprintf("page %d copied over page %d", from, to)
	}
}

// TestOpenDamaged checks what Open and the readers say of damage at the
// places that crashed: the size against the meta page, the meta pages
// themselves, a B-tree page, and the counters readers size arrays by.
func TestOpenDamaged(t *testing.T) {
	data := damagedStore(t)
	const page = 4096
	meta := func(d []byte, p int) []byte { return d[p*page+16:] } // after the page header
	pgid := int(binary.NativeEndian.Uint64(meta(data, 0)[40:]))
	if p1 := int(binary.NativeEndian.Uint64(meta(data, 1)[40:])); p1 > pgid {
		pgid = p1
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, d []byte) []byte
		want   []string // in the error
	}{
		{
			name:   "truncated inside the pages in use",
			damage: func(_ *testing.T, _ string, d []byte) []byte { return d[:(pgid-3)*page] },
			want:   []string{"the file is damaged", fmt.Sprintf("it is %d bytes", (pgid-3)*page), "truncated"},
		},
		{
			name:   "truncated inside the first page",
			damage: func(_ *testing.T, _ string, d []byte) []byte { return d[:100] },
			want:   []string{"the file is damaged", "shorter than its two meta pages"},
		},
		{
			name: "both meta pages fail their checksum",
			damage: func(_ *testing.T, _ string, d []byte) []byte {
				meta(d, 0)[60] ^= 1
				meta(d, 1)[60] ^= 1
				return d
			},
			want: []string{"the file is damaged", "both of its bbolt meta pages fail their checksum"},
		},
		{
			name: "a page of the tree zeroed",
			damage: func(_ *testing.T, _ string, d []byte) []byte {
				for p := 2; p < pgid; p++ {
					clear(d[p*page : (p+1)*page])
				}
				return d
			},
			want: []string{"the file is damaged"},
		},
		{
			name: "the marker's entry no longer a bucket",
			damage: func(t *testing.T, path string, d []byte) []byte {
				return boltEdit(t, path, d, func(tx *bbolt.Tx) error {
					if err := tx.DeleteBucket([]byte("provgraph")); err != nil {
						return err
					}
					return tx.Cursor().Bucket().Put([]byte("provgraph"), []byte("x"))
				})
			},
			want: []string{`the file is damaged: its top-level entries are "ids", "osp", "pos", "provgraph", "spo", "terms"`},
		},
		{
			name: "next-id counter beyond the dictionary",
			damage: func(t *testing.T, path string, d []byte) []byte {
				return setCounter(t, path, d, "next-id", []byte{0x7f, 0, 0, 0})
			},
			want: []string{`the "next-id" counter is 2130706432 but the last term of the dictionary has id`},
		},
		{
			name: "quad counter beyond the file",
			damage: func(t *testing.T, path string, d []byte) []byte {
				return setCounter(t, path, d, "quads", []byte{0, 0, 0, 1, 0, 0, 0, 0})
			},
			want: []string{`the "quads" counter says 4294967296 quads, more than a file of`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "damaged.db")
			d := tt.damage(t, path, append([]byte(nil), data...))
			if err := os.WriteFile(path, d, 0o600); err != nil {
				t.Fatal(err)
			}
			err := readAll(path)
			if !errors.Is(err, graph.ErrCorrupt) {
				t.Fatalf("reading: %v, want ErrCorrupt", err)
			}
			for _, w := range append(tt.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("reading: %v\nwant it to say %q", err, w)
				}
			}
		})
	}
}

// setCounter returns d with a counter of the meta bucket set to v,
// through bbolt (at path).
func setCounter(t *testing.T, path string, d []byte, key string, v []byte) []byte {
	t.Helper()
	return boltEdit(t, path, d, func(tx *bbolt.Tx) error { return tx.Bucket([]byte("provgraph")).Put([]byte(key), v) })
}

// boltEdit returns d changed by edit, run through bbolt (at path).
func boltEdit(t *testing.T, path string, d []byte, edit func(*bbolt.Tx) error) []byte {
	t.Helper()
	if err := os.WriteFile(path, d, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(edit)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCallbackPanicPropagates: the guards recover only what reading the
// file raised; a panic in the caller's own callback reaches the caller
// unchanged, and the store still works after it.
func TestCallbackPanicPropagates(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, citation(1)...)
	ctx := context.Background()
	for name, f := range map[string]func(){
		"Match": func() {
			s.Match(ctx, graph.Quad{}, func(graph.Quad) error { panic("boom") })
		},
		"Reader.Quads": func() {
			s.Read(func(r *graph.Reader) error {
				return r.Quads(ctx, func(_, _, _ graph.ID) { panic("boom") })
			})
		},
		"Read": func() {
			s.Read(func(*graph.Reader) error { panic("boom") })
		},
	} {
		func() {
			defer func() {
				if v := recover(); v != "boom" {
					t.Errorf("%s: recovered %v, want the callback's panic", name, v)
				}
			}()
			f()
		}()
	}
	if n := mustCount(t, s); n == 0 {
		t.Errorf("Count after the panics = %d", n)
	}
}

// TestAddOnDamagedFile adds a batch to damaged copies of a store: the
// batch's terms, half of them stored already, are looked up first (by
// pread, in the hash index's runs and the terms), then written. An Add
// must fail with ErrCorrupt or succeed, never panic or fault; a failed
// Add leaves the file as it found it (bbolt rolls the transaction back).
func TestAddOnDamagedFile(t *testing.T) {
	data := damagedStore(t)
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(19, 2))
	var added, refused int
	for i := range 150 {
		d, how := damage(rnd, data)
		path := filepath.Join(dir, fmt.Sprintf("a%d.db", i))
		if err := os.WriteFile(path, d, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := graph.Open(path, &graph.Options{NoSync: true, LockTimeout: -1})
		if err != nil {
			if !errors.Is(err, graph.ErrCorrupt) && !errors.Is(err, graph.ErrNotStore) {
				t.Errorf("case %d (%s): Open: %v, want ErrCorrupt", i, how, err)
			}
			continue
		}
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Add(citations(350, 450))
		s.Close()
		if err == nil {
			added++
			continue
		}
		refused++
		if !errors.Is(err, graph.ErrCorrupt) {
			t.Errorf("case %d (%s): Add: %v, want ErrCorrupt", i, how, err)
		}
		after, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if string(after) != string(before) {
			t.Errorf("case %d (%s): a failed Add (%v) changed the file", i, how, err)
		}
		os.Remove(path)
	}
	t.Logf("of 150 damaged files: %d took the batch, %d refused it", added, refused)
	if refused == 0 {
		t.Error("no damaged file refused the batch: the damage does not reach the lookups")
	}
}
