package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"
	"go.etcd.io/bbolt"
)

// The term dictionary gives every distinct term a 32-bit id, so that the
// indexes hold small fixed-size numbers instead of strings. Two buckets:
// "terms" maps an id to the term's encoding (termcode.go), and "ids" maps
// the 64-bit xxhash of an encoding to the ids whose encoding has that hash
// (one, except on a collision, which costs one more comparison). A term is
// stored once; the hash bucket costs 12 bytes of key and value per term.
//
// Ids are given in order of first appearance and never reused. Id 0 is no
// term: the default graph in a quad, a wildcard in a pattern.

// ErrFull is returned by Add when the dictionary has given out every id.
var ErrFull = errors.New("term dictionary is full (4,294,967,295 distinct terms)")

func hashKey(dst *[8]byte, enc []byte) {
	binary.BigEndian.PutUint64(dst[:], xxhash.Sum64(enc))
}

func idKey(dst *[4]byte, id uint32) {
	binary.BigEndian.PutUint32(dst[:], id)
}

// lookupTerm returns the id of the term with encoding enc, or 0.
func lookupTerm(ids, terms *bbolt.Bucket, enc []byte) uint32 {
	var h [8]byte
	hashKey(&h, enc)
	v := ids.Get(h[:])
	for ; len(v) >= 4; v = v[4:] {
		id := binary.BigEndian.Uint32(v)
		var k [4]byte
		idKey(&k, id)
		if bytes.Equal(terms.Get(k[:]), enc) {
			return id
		}
	}
	return 0
}

// termReader decodes terms by id within one read transaction, caching
// them: predicates, classes and hub nodes recur in almost every quad.
type termReader struct {
	terms *bbolt.Bucket
	cache map[uint32]Term
}

// termCacheSize bounds a termReader's cache, which is dropped whole when
// full.
const termCacheSize = 1 << 16

func newTermReader(tx *bbolt.Tx) *termReader {
	return &termReader{terms: tx.Bucket([]byte(termsBucket)), cache: make(map[uint32]Term, 256)}
}

func (r *termReader) term(id uint32) (Term, error) {
	if id == 0 {
		return Term{}, nil
	}
	if t, ok := r.cache[id]; ok {
		return t, nil
	}
	var k [4]byte
	idKey(&k, id)
	v := r.terms.Get(k[:])
	if v == nil {
		return Term{}, fmt.Errorf("term %d is used by a quad but missing from the dictionary", id)
	}
	t, err := decodeTerm(v)
	if err != nil {
		return Term{}, fmt.Errorf("term %d: %w", id, err)
	}
	if len(r.cache) >= termCacheSize {
		clear(r.cache)
	}
	r.cache[id] = t
	return t, nil
}

func (r *termReader) quad(q ids4) (Quad, error) {
	var out Quad
	var err error
	if out.S, err = r.term(q[0]); err != nil {
		return out, err
	}
	if out.P, err = r.term(q[1]); err != nil {
		return out, err
	}
	if out.O, err = r.term(q[2]); err != nil {
		return out, err
	}
	out.G, err = r.term(q[3])
	return out, err
}

// dictWriter assigns ids within one write transaction. New terms are
// written at the end (flush), in id order for the terms bucket and in hash
// order for the hash bucket, so that bbolt fills pages in order.
type dictWriter struct {
	ids, terms *bbolt.Bucket
	mem        *arena
	hot        map[string]uint32 // committed terms seen lately (the Store's)
	next       uint32
	added      map[string]uint32 // new terms of this transaction
	newTerms   [][]byte          // their encodings, by id - first new id
	firstNew   uint32
}

func newDictWriter(tx *bbolt.Tx, next uint32, mem *arena, hot map[string]uint32) *dictWriter {
	return &dictWriter{
		hot:      hot,
		ids:      tx.Bucket([]byte(idsBucket)),
		terms:    tx.Bucket([]byte(termsBucket)),
		mem:      mem,
		next:     next,
		firstNew: next,
		added:    make(map[string]uint32),
	}
}

// id returns the id of the term with encoding enc, giving it a new one if
// it has none. isNew says whether the id was given by this transaction.
func (w *dictWriter) id(enc []byte) (id uint32, isNew bool, err error) {
	if id, ok := w.hot[string(enc)]; ok {
		return id, false, nil
	}
	if id, ok := w.added[string(enc)]; ok {
		return id, true, nil
	}
	if id := lookupTerm(w.ids, w.terms, enc); id != 0 {
		if len(w.hot) >= hotTerms {
			clear(w.hot)
		}
		w.hot[string(enc)] = id
		return id, false, nil
	}
	if w.next == math.MaxUint32 {
		return 0, false, ErrFull
	}
	id = w.next
	w.next++
	e := w.mem.copy(enc)
	w.added[string(e)] = id
	w.newTerms = append(w.newTerms, e)
	return id, true, nil
}

// hotTerms bounds the Store's cache of term ids, which is dropped whole
// when full: it is there for the few thousand terms (predicates, classes,
// policies, engines) that recur in every batch.
const hotTerms = 1 << 17

// commit is called after the transaction committed: the new terms are
// now safe to cache.
func (w *dictWriter) commit() {
	for enc, id := range w.added {
		if len(w.hot) >= hotTerms {
			clear(w.hot)
		}
		w.hot[enc] = id
	}
}

// flush writes the new terms.
func (w *dictWriter) flush() error {
	type entry struct {
		h  [8]byte
		id uint32
	}
	hashes := make([]entry, len(w.newTerms))
	for i, enc := range w.newTerms {
		id := w.firstNew + uint32(i)
		k := w.mem.alloc(4)
		binary.BigEndian.PutUint32(k, id)
		if err := w.terms.Put(k, enc); err != nil {
			return err
		}
		hashes[i].id = id
		hashKey(&hashes[i].h, enc)
	}
	slices.SortFunc(hashes, func(a, b entry) int {
		if c := bytes.Compare(a.h[:], b.h[:]); c != 0 {
			return c
		}
		return int(a.id) - int(b.id)
	})
	for i := 0; i < len(hashes); {
		j := i + 1
		for j < len(hashes) && hashes[j].h == hashes[i].h {
			j++
		}
		k := w.mem.copy(hashes[i].h[:])
		old := w.ids.Get(k)
		v := w.mem.alloc(len(old) + 4*(j-i))
		copy(v, old)
		for n, e := range hashes[i:j] {
			binary.BigEndian.PutUint32(v[len(old)+4*n:], e.id)
		}
		if err := w.ids.Put(k, v); err != nil {
			return err
		}
		i = j
	}
	return nil
}
