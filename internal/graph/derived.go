package graph

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"
)

// Derived data (format 5; run maps, runmap.go, format 6): the top-level
// bucket "view" holds one nested bucket per named view, whose contents are the caller's (citestore keeps
// a grouping view per normalization policy there). The quad store knows
// nothing of what a view means: it gives a write transaction's callback
// the view buckets beside the quads it has just added, so that derived
// data is written in the transaction of the quads it derives from, and a
// read transaction the same buckets read-only. A file gets the bucket
// with its first view, and version 6 with each view made (CreateView): a
// version 3 or 4 file without views stays readable by the builds that
// wrote it, and a version 5 file whose views were made before by them.
const viewBucket = "view"

// Writer is a write transaction as a callback of AddWith or Update sees
// it: a Reader of the quads (with those the transaction added) and the
// view buckets, writable.
type Writer struct {
	s     *Store
	tx    *bbolt.Tx
	runs  []*run            // the hash index's runs after the transaction's terms
	fresh []tuple           // the SPO tuples the transaction added, sorted
	terms map[string]uint32 // the terms the transaction added, by encoding
	r     *Reader
	ids   map[Term]ID // predicates and objects Added looked up
	dmg   damage      // what a view bucket's read met, for addWith to return

	maps     map[*bbolt.Bucket]*RunMap // the run maps opened, by bucket
	mapOrder []*RunMap                 // the same, in the order opened: flushed so
	budget   *mergeBudget              // the transaction's, shared with the quads' runs
}

// forgetMaps forgets the run maps at or under path, a bucket being
// dropped: their writes go with it.
func (w *Writer) forgetMaps(path string) {
	if w == nil {
		return
	}
	w.mapOrder = slices.DeleteFunc(w.mapOrder, func(m *RunMap) bool {
		if m.path == path || strings.HasPrefix(m.path, path+"/") {
			delete(w.maps, m.b)
			return true
		}
		return false
	})
}

// flushMaps writes the run maps' writes as runs: addWith calls it once
// the callback has returned.
func (w *Writer) flushMaps() error {
	for _, m := range w.mapOrder {
		if err := m.flush(); err != nil {
			return err
		}
	}
	return nil
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
	w.r = &Reader{s: w.s, tx: w.tx, dict: d, names: newTermReader(w.tx), cnt: readCounters(w.tx), dmg: new(damage), txTerms: w.terms}
	return w.r, nil
}

// Views returns the names of the views the file holds, in byte order.
func (w *Writer) Views() []string { return viewNames(w.s, w.tx, &w.dmg) }

// View returns the bucket of the view name, nil if there is none.
func (w *Writer) View(name string) *Bucket {
	b := viewOf(w.s, w.tx, name, &w.dmg)
	if b != nil {
		b.wr = w
	}
	return b
}

// CreateView returns the bucket of the view name, creating it (and the
// file's view bucket) when missing. Creating a view marks the file
// version 7: its maker may keep run maps in it (Bucket.Runs), which a
// build of version 5 would read as empty buckets, and rows a build of
// version 6 cannot read (citestore's member records).
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
	}
	b := top.Bucket([]byte(name))
	if b == nil {
		var err error
		if b, err = top.CreateBucket([]byte(name)); err != nil {
			return nil, fmt.Errorf("create view %q: %w", name, err)
		}
		meta := w.tx.Bucket([]byte(metaBucket))
		if v, _ := strconv.Atoi(string(meta.Get([]byte(keyVersion)))); v < formatVersion {
			if err := meta.Put([]byte(keyVersion), []byte(strconv.Itoa(formatVersion))); err != nil {
				return nil, fmt.Errorf("create view: %w", err)
			}
		}
	}
	return &Bucket{b: b, w: true, s: w.s, dmg: &w.dmg, wr: w, path: name}, nil
}

// DropView deletes the view name and everything in it; it does nothing
// when there is none.
func (w *Writer) DropView(name string) error {
	top := w.tx.Bucket([]byte(viewBucket))
	if top == nil || top.Bucket([]byte(name)) == nil {
		return nil
	}
	w.forgetMaps(name)
	// bbolt reads every page of a bucket it deletes: at ten million
	// citations the drop of a view mapped 3.2 GB of the file unwatched.
	if err := w.s.pg.during(func() error { return top.DeleteBucket([]byte(name)) }); err != nil {
		return fmt.Errorf("drop view %q: %w", name, err)
	}
	return nil
}

// Views returns the names of the views the file holds, in byte order.
func (r *Reader) Views() []string { return viewNames(r.s, r.tx, r.dmg) }

// View returns the bucket of the view name, read-only, nil if there is
// none.
func (r *Reader) View(name string) *Bucket { return viewOf(r.s, r.tx, name, r.dmg) }

// guarded runs fn, reading the file, under a guard: damage met (a panic
// of bbolt's on a page that is not what its parent says, a read past the
// end) is recorded in dmg as an error wrapping ErrCorrupt, for the
// transaction's Read or AddWith to return, and fn's result is dropped.
func guarded(s *Store, dmg *damage, fn func()) (ok bool) {
	var err error
	func() {
		g := s.guard("read", &err)
		g.name = true
		defer g.done()
		fn()
	}()
	if err != nil {
		dmg.set(err)
		return false
	}
	return true
}

func viewNames(s *Store, tx *bbolt.Tx, dmg *damage) []string {
	var out []string
	if !guarded(s, dmg, func() {
		top := tx.Bucket([]byte(viewBucket))
		if top == nil {
			return
		}
		c := top.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				out = append(out, string(k))
			}
		}
	}) {
		return nil
	}
	return out
}

func viewOf(s *Store, tx *bbolt.Tx, name string, dmg *damage) *Bucket {
	var b *bbolt.Bucket
	if !guarded(s, dmg, func() {
		if top := tx.Bucket([]byte(viewBucket)); top != nil {
			b = top.Bucket([]byte(name))
		}
	}) || b == nil {
		return nil
	}
	return &Bucket{b: b, w: tx.Writable(), s: s, dmg: dmg, path: name}
}

// Bucket is a bucket of a view: ordered keys and values, and nested
// buckets. Slices it returns are valid for the transaction only. Its
// reads run under a guard: damage met ends the read (Get returns nil,
// Ascend an error) and is returned by the transaction's Read or AddWith.
type Bucket struct {
	b   *bbolt.Bucket
	w   bool
	s   *Store
	dmg *damage
	wr  *Writer // in a write transaction, for its run maps
	// path is the bucket's names from its view's down, "/" between
	// them: a drop forgets the run maps opened under it.
	path string
}

// Get returns the value of key, nil if there is none.
//
// In a write transaction Get, Put and Delete each count as a random read
// on the store's pager (pager.go): a grouping view's rows and postings go
// in at random places of B-trees spread over the file, and a ten-million-
// citation ingest that did not count them kept up to 610 MiB of the file
// mapped, against its 256 MiB limit.
func (b *Bucket) Get(key []byte) []byte {
	if b.w {
		b.s.pg.read()
	}
	var v []byte
	if !guarded(b.s, b.dmg, func() { v = b.b.Get(key) }) {
		return nil
	}
	return v
}

// Put sets the value of key.
func (b *Bucket) Put(key, value []byte) error {
	if !b.w {
		return ErrReadOnly
	}
	b.s.pg.read()
	return b.b.Put(key, value)
}

// Delete removes key.
func (b *Bucket) Delete(key []byte) error {
	if !b.w {
		return ErrReadOnly
	}
	b.s.pg.read()
	return b.b.Delete(key)
}

// Sub returns the nested bucket name, creating it when create is set (in
// a write transaction); nil when it is missing.
func (b *Bucket) Sub(name string, create bool) (*Bucket, error) {
	var s *bbolt.Bucket
	if !guarded(b.s, b.dmg, func() { s = b.b.Bucket([]byte(name)) }) {
		return nil, b.dmg.get()
	}
	if s != nil {
		return &Bucket{b: s, w: b.w, s: b.s, dmg: b.dmg, wr: b.wr, path: b.path + "/" + name}, nil
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
	return &Bucket{b: s, w: true, s: b.s, dmg: b.dmg, wr: b.wr, path: b.path + "/" + name}, nil
}

// Subs returns the names of the nested buckets, in byte order.
func (b *Bucket) Subs() ([]string, error) {
	var out []string
	if !guarded(b.s, b.dmg, func() {
		c := b.b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				out = append(out, string(k))
			}
		}
	}) {
		return nil, b.dmg.get()
	}
	return out, nil
}

// DropSub deletes the nested bucket name and everything in it; it does
// nothing when there is none.
func (b *Bucket) DropSub(name string) error {
	if !b.w {
		return ErrReadOnly
	}
	if b.b.Bucket([]byte(name)) == nil {
		return nil
	}
	b.wr.forgetMaps(b.path + "/" + name)
	return b.b.DeleteBucket([]byte(name))
}

// Ascend calls fn for each key (not nested bucket) from the first at or
// after from, in byte order, until fn returns false or an error.
func (b *Bucket) Ascend(from []byte, fn func(k, v []byte) (bool, error)) (err error) {
	g := b.s.guard("read", &err)
	g.name = true
	defer g.done()
	c := b.b.Cursor()
	for k, v := c.Seek(from); k != nil; k, v = c.Next() {
		if v == nil {
			continue
		}
		var more bool
		if cerr := g.call(func() (err error) { more, err = fn(k, v); return err }); cerr != nil || !more {
			return cerr
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
