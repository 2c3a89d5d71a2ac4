package graph_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/provgraph/provgraph/internal/graph"
)

func TestCheckFindsDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(tx *bbolt.Tx) error
		want   string
	}{
		{
			name: "predicate index emptied",
			damage: func(tx *bbolt.Tx) error {
				if err := tx.DeleteBucket([]byte("pos")); err != nil {
					return err
				}
				_, err := tx.CreateBucket([]byte("pos"))
				return err
			},
			want: "index pos holds 0 quads",
		},
		{
			name: "object index loses a chunk",
			damage: func(tx *bbolt.Tx) error {
				run := firstRun(tx, "osp")
				k, _ := firstChunk(run.Cursor())
				return run.Delete(append([]byte(nil), k...))
			},
			want: "index osp lacks quad",
		},
		{
			name: "run count wrong",
			damage: func(tx *bbolt.Tx) error {
				return firstRun(tx, "pos").Put([]byte{0}, []byte{0, 0, 0, 0, 0, 0, 0, 1})
			},
			want: "its count says 1",
		},
		{
			name: "quad in two runs",
			damage: func(tx *bbolt.Tx) error {
				b := tx.Bucket([]byte("osp"))
				c := b.Cursor()
				first, _ := c.First()
				second, _ := c.Next()
				k, v := firstChunk(b.Bucket(first).Cursor())
				return b.Bucket(second).Put(append([]byte(nil), k...), append([]byte(nil), v...))
			},
			want: "is in two runs",
		},
		{
			name: "garbled run chunk",
			damage: func(tx *bbolt.Tx) error {
				run := firstRun(tx, "pos")
				k, _ := firstChunk(run.Cursor())
				return run.Put(append([]byte(nil), k...), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
			},
			want: "undecodable index chunk",
		},
		{
			name: "run filter cut short",
			damage: func(tx *bbolt.Tx) error {
				run := firstRun(tx, "osp")
				f := run.Get([]byte{0, 0})
				return run.Put([]byte{0, 0}, append([]byte(nil), f[:len(f)-8]...))
			},
			want: "not a whole number of 64-byte blocks",
		},
		{
			name: "run filter loses its bits",
			damage: func(tx *bbolt.Tx) error {
				run := firstRun(tx, "pos")
				return run.Put([]byte{0, 0}, make([]byte, len(run.Get([]byte{0, 0}))))
			},
			want: "its filter lacks",
		},
		{
			name: "quad counter wrong",
			damage: func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("provgraph")).Put([]byte("quads"), []byte{0, 0, 0, 0, 0, 0, 0, 1})
			},
			want: "the quad counter says 1",
		},
		{
			name:   "term missing from the dictionary",
			damage: func(tx *bbolt.Tx) error { return tx.Bucket([]byte("terms")).Delete([]byte{0, 0, 0, 2}) },
			want:   "id 3 follows id 1",
		},
		{
			name: "hash entry missing",
			damage: func(tx *bbolt.Tx) error {
				ids := tx.Bucket([]byte("ids"))
				run, _ := ids.Cursor().First()
				b := ids.Bucket(run)
				c := b.Cursor()
				c.First() // the filter
				k, _ := c.Next()
				return b.Delete(append([]byte(nil), k...))
			},
			want: "is not found by its hash",
		},
		{
			name: "filter missing",
			damage: func(tx *bbolt.Tx) error {
				ids := tx.Bucket([]byte("ids"))
				run, _ := ids.Cursor().First()
				return ids.Bucket(run).Delete([]byte{0})
			},
			want: "bloom filter of 0 bytes",
		},
		{
			name: "garbled chunk",
			damage: func(tx *bbolt.Tx) error {
				b := tx.Bucket([]byte("spo"))
				k, _ := b.Cursor().First()
				return b.Put(append([]byte(nil), k...), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
			},
			want: "undecodable index chunk",
		},
		{
			name: "literal as predicate",
			damage: func(tx *bbolt.Tx) error {
				// Term 1 is the first subject (an IRI); make it a literal.
				return tx.Bucket([]byte("terms")).Put([]byte{0, 0, 0, 1}, []byte("\x03not an IRI"))
			},
			want: "is not found by its hash",
		},
		{
			name: "format marker removed",
			damage: func(tx *bbolt.Tx) error {
				return tx.DeleteBucket([]byte("provgraph"))
			},
			want: "not a provgraph store",
		},
	}
	// Each case runs with the default mapped limit and with a limit of one
	// byte, which drops the check's mapping every time it looks.
	for _, tt := range tests {
		for _, limit := range []int64{0, 1} {
			t.Run(fmt.Sprintf("%s/limit=%d", tt.name, limit), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "prov.db")
				s := mustOpenPlain(t, path)
				defer s.Close()
				// Two transactions: POS and OSP get two runs each.
				mustAdd(t, s, citations(0, 3)...)
				mustAdd(t, s, citations(3, 5)...)
				if err := s.Check(context.Background()); err != nil {
					t.Fatalf("Check() before damage = %v", err)
				}
				s.Close() // the lock keeps bbolt out while the store is open
				boltUpdate(t, path, tt.damage)
				s2, err := graph.Open(path, &graph.Options{MappedLimit: limit})
				if err != nil {
					// the marker case is refused by Open already
					if !strings.Contains(err.Error(), tt.want) {
						t.Errorf("Open() = %v, want it to say %q", err, tt.want)
					}
					return
				}
				defer s2.Close()
				err = s2.Check(context.Background())
				if !errors.Is(err, graph.ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Check() = %v, want ErrCorrupt saying %q", err, tt.want)
				}
			})
		}
	}
}

// deleteFirst deletes the first key of a top-level bucket.
func deleteFirst(tx *bbolt.Tx, bucket string) error {
	b := tx.Bucket([]byte(bucket))
	k, _ := b.Cursor().First()
	return b.Delete(append([]byte(nil), k...))
}

// firstRun returns the oldest run of index bucket.
func firstRun(tx *bbolt.Tx, bucket string) *bbolt.Bucket {
	b := tx.Bucket([]byte(bucket))
	k, _ := b.Cursor().First()
	return b.Bucket(k)
}

// firstChunk returns the first chunk of a run: its first key of 16 bytes,
// after the run's count and filter.
func firstChunk(c *bbolt.Cursor) (k, v []byte) {
	for k, v = c.First(); k != nil && len(k) != 16; k, v = c.Next() {
	}
	return k, v
}
