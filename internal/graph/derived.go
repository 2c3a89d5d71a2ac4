package graph

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.etcd.io/bbolt"
)

// Derived data (format 5): the top-level bucket "view" holds one nested
// bucket per named view, whose contents are the caller's (citestore keeps
// a grouping view per normalization policy there). The quad store knows
// nothing of what a view means: it gives a write transaction's callback
// the view buckets beside the quads it has just added, so that derived
// data is written in the transaction of the quads it derives from, and a
// read transaction the same buckets read-only. A file gets the bucket,
// and version 5, with its first view: a version 3 or 4 file without views
// stays readable by the builds that wrote it.
const viewBucket = "view"

// Writer is a write transaction as a callback of AddWith or Update sees
// it: a Reader of the quads (with those the transaction added) and the
// view buckets, writable.
type Writer struct {
	s     *Store
	tx    *bbolt.Tx
	runs  []*run  // the hash index's runs after the transaction's terms
	fresh []tuple // the SPO tuples the transaction added, sorted
	r     *Reader
	ids   map[Term]ID // predicates and objects Added looked up
}

// Added reports whether the transaction added q (in the default graph):
// false for a quad stored before it, or not stored. A citation whose
// type quad is added is new, and its derived data can be written from
// what the batch says of it.
func (w *Writer) Added(q Quad) (bool, error) {
	r, err := w.Reader()
	if err != nil {
		return false, err
	}
	var t tuple
	for i, term := range [3]Term{q.S, q.P, q.O} {
		id, ok := w.ids[term]
		if !ok {
			id = r.ID(term)
			if i > 0 && id != 0 {
				if w.ids == nil {
					w.ids = map[Term]ID{}
				}
				w.ids[term] = id // a class or predicate, asked again and again
			}
		}
		if id == 0 {
			return false, r.dmg.get()
		}
		t[i] = uint32(id)
	}
	_, found := slices.BinarySearchFunc(w.fresh, t, tuple.cmp)
	return found, nil
}

// Reader returns a Reader on the write transaction: it sees the quads
// added so far. It must not be used after the callback returns.
func (w *Writer) Reader() (*Reader, error) {
	if w.r != nil {
		return w.r, nil
	}
	d, err := newDictReader(w.tx, w.runs, w.runs != nil)
	if err != nil {
		return nil, err
	}
	w.r = &Reader{s: w.s, tx: w.tx, dict: d, names: newTermReader(w.tx), cnt: readCounters(w.tx), dmg: new(damage)}
	return w.r, nil
}

// Views returns the names of the views the file holds, in byte order.
func (w *Writer) Views() []string { return viewNames(w.tx) }

// View returns the bucket of the view name, nil if there is none.
func (w *Writer) View(name string) *Bucket { return viewOf(w.tx, name) }

// CreateView returns the bucket of the view name, creating it (and the
// file's view bucket, marking the file version 5) when missing.
func (w *Writer) CreateView(name string) (*Bucket, error) {
	if name == "" {
		return nil, errors.New("create view: no name")
	}
	top := w.tx.Bucket([]byte(viewBucket))
	if top == nil {
		var err error
		if top, err = w.tx.CreateBucket([]byte(viewBucket)); err != nil {
			return nil, fmt.Errorf("create view: %w", err)
		}
		if err := w.tx.Bucket([]byte(metaBucket)).Put([]byte(keyVersion), []byte(strconv.Itoa(formatVersion))); err != nil {
			return nil, fmt.Errorf("create view: %w", err)
		}
	}
	b, err := top.CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("create view %q: %w", name, err)
	}
	return &Bucket{b: b, w: true}, nil
}

// DropView deletes the view name and everything in it; it does nothing
// when there is none.
func (w *Writer) DropView(name string) error {
	top := w.tx.Bucket([]byte(viewBucket))
	if top == nil || top.Bucket([]byte(name)) == nil {
		return nil
	}
	if err := top.DeleteBucket([]byte(name)); err != nil {
		return fmt.Errorf("drop view %q: %w", name, err)
	}
	return nil
}

// Views returns the names of the views the file holds, in byte order.
func (r *Reader) Views() []string { return viewNames(r.tx) }

// View returns the bucket of the view name, read-only, nil if there is
// none.
func (r *Reader) View(name string) *Bucket { return viewOf(r.tx, name) }

func viewNames(tx *bbolt.Tx) []string {
	top := tx.Bucket([]byte(viewBucket))
	if top == nil {
		return nil
	}
	var out []string
	c := top.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			out = append(out, string(k))
		}
	}
	return out
}

func viewOf(tx *bbolt.Tx, name string) *Bucket {
	top := tx.Bucket([]byte(viewBucket))
	if top == nil {
		return nil
	}
	b := top.Bucket([]byte(name))
	if b == nil {
		return nil
	}
	return &Bucket{b: b, w: tx.Writable()}
}

// Bucket is a bucket of a view: ordered keys and values, and nested
// buckets. Slices it returns are valid for the transaction only.
type Bucket struct {
	b *bbolt.Bucket
	w bool
}

// Get returns the value of key, nil if there is none.
func (b *Bucket) Get(key []byte) []byte { return b.b.Get(key) }

// Put sets the value of key.
func (b *Bucket) Put(key, value []byte) error {
	if !b.w {
		return ErrReadOnly
	}
	return b.b.Put(key, value)
}

// Delete removes key.
func (b *Bucket) Delete(key []byte) error {
	if !b.w {
		return ErrReadOnly
	}
	return b.b.Delete(key)
}

// Sub returns the nested bucket name, creating it when create is set (in
// a write transaction); nil when it is missing.
func (b *Bucket) Sub(name string, create bool) (*Bucket, error) {
	if s := b.b.Bucket([]byte(name)); s != nil {
		return &Bucket{b: s, w: b.w}, nil
	}
	if !create {
		return nil, nil
	}
	if !b.w {
		return nil, ErrReadOnly
	}
	s, err := b.b.CreateBucket([]byte(name))
	if err != nil {
		return nil, err
	}
	s.FillPercent = fillPercent
	return &Bucket{b: s, w: true}, nil
}

// Ascend calls fn for each key (not nested bucket) from the first at or
// after from, in byte order, until fn returns false or an error.
func (b *Bucket) Ascend(from []byte, fn func(k, v []byte) (bool, error)) error {
	c := b.b.Cursor()
	for k, v := c.Seek(from); k != nil; k, v = c.Next() {
		if v == nil {
			continue
		}
		more, err := fn(k, v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// Prefix calls fn for each key that starts with p, in byte order, until
// fn returns false or an error.
func (b *Bucket) Prefix(p []byte, fn func(k, v []byte) (bool, error)) error {
	return b.Ascend(p, func(k, v []byte) (bool, error) {
		if !bytes.HasPrefix(k, p) {
			return false, nil
		}
		return fn(k, v)
	})
}

// Update runs fn in one write transaction, with no quads added: a
// rebuild of derived data.
func (s *Store) Update(fn func(*Writer) error) error {
	_, err := s.AddWith(nil, fn)
	return err
}

// AddWith is Add, and calls fn in the same transaction once the quads are
// added (also when there are none): what fn writes to the views commits
// with them, and an error of fn rolls the whole batch back and is
// returned as it is.
func (s *Store) AddWith(quads []Quad, fn func(*Writer) error) (added int, err error) {
	return s.addWith(quads, false, fn)
}

// dropViews drops every view: the callback of a write of quads whose
// effect on derived data nothing computes (cayley's quad writer).
func dropViews(w *Writer) error {
	for _, v := range w.Views() {
		if err := w.DropView(v); err != nil {
			return err
		}
	}
	return nil
}
