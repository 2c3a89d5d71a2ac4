package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// TestLookupBatch: a writer's batched lookup (lookupBatch, in the order of
// hashes and ids) finds what a lookup of each term finds: every stored
// term's id across the hash index's runs, 0 for a term not stored, and,
// when the index holds an entry of a term's hash that belongs to another
// term (a collision), the term's own id or 0, never the other's.
func TestLookupBatch(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "d.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Thirty transactions: thirty runs of the hash index before merges,
	// and terms that recur across them.
	for b := range 30 {
		var quads []Quad
		for i := range 40 {
			quads = append(quads, Quad{
				S: IRI(fmt.Sprintf("https://example.test/s/%d/%d", b, i)),
				P: IRI(fmt.Sprintf("https://example.test/p/%d", i%7)),
				O: Literal(fmt.Sprintf("value %d", (b*40+i)%97), ""),
			})
		}
		if _, err := s.Add(quads); err != nil {
			t.Fatal(err)
		}
	}
	errRollback := errors.New("rollback")
	err = s.db.Update(func(tx *bbolt.Tx) error {
		r, err := newDictReader(tx, nil, false)
		if err != nil {
			return err
		}
		if len(r.runs) < 2 {
			t.Fatalf("%d runs of the hash index, want several", len(r.runs))
		}
		var encs [][]byte
		var want []uint32
		c := tx.Bucket([]byte(termsBucket)).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			encs = append(encs, append([]byte(nil), v...))
			want = append(want, binary.BigEndian.Uint32(k))
		}
		stored := len(encs)
		for i := range 25 {
			encs = append(encs, appendTermCode(nil, IRI(fmt.Sprintf("https://example.test/new/%d", i))))
			want = append(want, 0)
		}
		check := func(r *dictReader, what string) {
			t.Helper()
			got := make([]uint32, len(encs))
			r.lookupBatch(encs, got, &lookupScratch{})
			for i := range encs {
				if one := r.lookup(encs[i]); got[i] != want[i] || one != want[i] {
					t.Errorf("%s: term %q: lookupBatch %d, lookup %d, want %d", what, encs[i], got[i], one, want[i])
				}
			}
		}
		check(r, "stored and new terms")

		// A run whose entries give the hashes of a stored term and of a
		// new one the id of another stored term.
		other := want[0]
		a, n := encs[stored-1], encs[stored]
		ids, err := tx.Bucket([]byte(idsBucket)).CreateBucket(func() []byte { n := newRunName(0, 1<<40); return n[:] }())
		if err != nil {
			return err
		}
		for _, e := range [][]byte{a, n} {
			var k [8]byte
			hashKey(&k, termHash(e))
			if err := ids.Put(k[:], binary.AppendUvarint(nil, uint64(other))); err != nil {
				return err
			}
		}
		r, err = newDictReader(tx, nil, false)
		if err != nil {
			return err
		}
		check(r, "with colliding entries")
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
}
