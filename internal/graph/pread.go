package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"go.etcd.io/bbolt"
)

// A pageCursor walks a bucket of a read transaction as bbolt's Cursor
// does, but reads the bucket's pages from the file with pread(2) instead
// of through bbolt's mapping of it.
//
// Why: a page read through the mapping for the first time is a page
// fault, and on a virtual machine whose guest page tables the host
// shadows a fault costs ten times a pread of the same page: 37 µs against
// 3 µs for a random 4 KiB page on the machine the README's figures come
// from (bench/pagecost; 1.4 µs a page for a sequential walk of the
// mapping). A walk of the dictionary in id order, as a load reads the
// terms of every citation, reads its leaves in key order, and bbolt has
// scattered them over the file (each commit writes the pages it changed
// wherever its freelist has room): every leaf is a random page. It also
// keeps the pages out of the process's mapped memory, so that a large
// read does not have to be paged out by the pager either.
//
// It is safe for the same reason bbolt's reads are: the pages a read
// transaction can reach are neither freed nor rewritten until it ends,
// and bbolt writes the file with pwrite, so a pread sees what the mapping
// would. It is only used in read-only transactions (a write transaction
// holds pages in memory that the file does not have yet).
//
// The keys and values it returns are valid until the next call that
// moves it. A page that does not parse (a damaged file) stops the walk:
// Err then returns an error wrapping ErrCorrupt.
type pageCursor struct {
	f     *os.File
	psize int
	root  uint64
	size  int64 // bytes: the transaction's size, past which no page it reaches lies
	stack []pframe
	err   error
	spare [][]byte // page buffers to reuse
	keep  *pageKeep
	reads int // pages read from the file (tests)
	// keyOnly, while set, makes the moves return keys without their
	// values (nil): seekChunk steps back over a run's filter so.
	keyOnly bool
}

// pageKeep keeps copies of the last pages a pageCursor read, for a cursor
// whose seeks come back to a few pages again and again: a check of a
// view reads every citation in order, and each citation's terms and
// quads lie near its own (the leaves just read) and among the shared
// nodes minted first (a few leaves and the branches above them), so that
// without it each citation re-reads the same pages by pread as its reads
// go back and forth. Pages of a read transaction do not change, so a copy
// stays valid as long as the cursor. Evicted oldest first.
type pageKeep struct {
	// shared says several cursors, maybe on several goroutines, use the
	// keep (a ReadOnce Store's): mu is then held by get and put, and only
	// branch pages are kept. Every seek reads the branches above its
	// leaf, and a leaf is seldom read twice by one query: a copy of it
	// would cost a fresh page of memory, whose first write is itself a
	// fault (21 µs on the README's machine), to save a pread (3.5 µs).
	shared bool
	mu     sync.Mutex
	at     map[uint64]int // page id to its slot
	slot   [][]byte
	ids    []uint64
	next   int
}

func newPageKeep(n int) *pageKeep {
	// The map grows as pages are kept: sized for n at once, it cost a
	// lineage command, which keeps a few hundred branch pages of the 16384
	// it may, 2% of its time in allocating and clearing the table.
	return &pageKeep{at: make(map[uint64]int), slot: make([][]byte, n), ids: make([]uint64, n)}
}

// get copies page id into buf, resized to the page's length, when kept.
func (k *pageKeep) get(id uint64, buf []byte) ([]byte, bool) {
	if k.shared {
		k.mu.Lock()
		defer k.mu.Unlock()
	}
	i, ok := k.at[id]
	if !ok {
		return buf, false
	}
	p := k.slot[i]
	if cap(buf) < len(p) {
		buf = make([]byte, len(p))
	}
	buf = buf[:len(p)]
	copy(buf, p)
	return buf, true
}

// put keeps a copy of page id, read whole (overflow included).
func (k *pageKeep) put(id uint64, p []byte) {
	if k.shared {
		k.mu.Lock()
		defer k.mu.Unlock()
	}
	i := k.next
	k.next = (k.next + 1) % len(k.slot)
	if old := k.slot[i]; old != nil {
		delete(k.at, k.ids[i])
	}
	k.slot[i] = append(k.slot[i][:0], p...)
	k.ids[i] = id
	k.at[id] = i
}

// keepPages makes c keep copies of the last n pages it read.
func (c *pageCursor) keepPages(n int) { c.keep = newPageKeep(n) }

// pframe is a page on the cursor's path and the element it is at.
type pframe struct {
	id    uint64
	p     []byte // the page, overflow included unless the node is large
	leaf  bool
	count int
	i     int
	// A node of more than lazyPages pages (a leaf holding a run's filter,
	// megabytes) is read a page at first: full is its size in bytes, and
	// the bytes past p that a key or value needs are read from file into
	// ext when asked for (span).
	full int
	file *os.File
	ext  []byte
}

// lazyPages is the size, in pages, from which a node is read a page at
// first (pframe). A seek that steps back over a run's filter reads only
// the filter's key (pageCursor.keyOnly), not its megabytes.
const lazyPages = 16

// span returns bytes [from, from+n) of f's node.
func (f *pframe) span(from, n int) ([]byte, error) {
	if from < 0 || n < 0 || from+n > f.full {
		return nil, corruptf("page %d of the database file: an element is past the page", f.id)
	}
	if from+n <= len(f.p) {
		return f.p[from : from+n], nil
	}
	if cap(f.ext) < n {
		f.ext = make([]byte, n)
	}
	f.ext = f.ext[:n]
	off := int64(f.id)*int64(len(f.p)) + int64(from) // p is the first page alone
	if m, err := f.file.ReadAt(f.ext, off); m != n {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, corruptf("page %d is beyond the end of the database file (a truncated file?)", f.id)
		}
		return nil, fmt.Errorf("reading page %d of the database file: %w", f.id, err)
	}
	return f.ext, nil
}

// The layout of a bbolt page (bbolt's internal/common/page.go): a header
// of id (8 bytes), flags (2), count (2) and overflow (4), then count
// elements of 16 bytes, in the machine's byte order (bbolt writes its
// structs as they are in memory). A branch element is pos (4), ksize (4)
// and pgid (8); a leaf element flags (4), pos (4), ksize (4) and vsize
// (4). pos is from the element's own start.
const (
	pageHeaderSize  = 16
	pageElemSize    = 16
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	bucketLeafFlag  = 0x01
	maxPageOverflow = 1 << 20 // pages: a value of 4 GiB at 4 KiB pages
)

var ne = binary.NativeEndian

// newPageCursor returns a pageCursor over b, a bucket of a read
// transaction of the database whose file f is, or nil when b cannot be
// walked this way (a bucket kept inline in its parent's page, a write
// transaction, no file): the caller then uses b.Cursor().
func newPageCursor(f *os.File, tx *bbolt.Tx, b *bbolt.Bucket) *pageCursor {
	if tx.Writable() {
		return nil
	}
	return unchangedCursor(f, tx, b)
}

// unchangedCursor is newPageCursor for a bucket that tx, which may be a
// write transaction, has not changed and will not change while the
// cursor is used: until it commits, a write transaction writes nothing to
// the file, so the pages of the buckets it has not touched are what the
// last commit left, as in a read transaction.
func unchangedCursor(f *os.File, tx *bbolt.Tx, b *bbolt.Bucket) *pageCursor {
	if f == nil || b == nil {
		return nil
	}
	root := uint64(b.Root())
	if root == 0 {
		return nil
	}
	return &pageCursor{f: f, psize: tx.DB().Info().PageSize, root: root, size: tx.Size()}
}

// Err returns the error that stopped the walk, if any.
func (c *pageCursor) Err() error { return c.err }

func (c *pageCursor) fail(err error) ([]byte, []byte) {
	if c.err == nil {
		c.err = err
	}
	c.stack = c.stack[:0]
	return nil, nil
}

// page reads page id into a buffer of its own, checking its header, and
// returns the node's size in bytes: more than the buffer's length when
// the node is more than lazyPages pages (pframe).
func (c *pageCursor) page(id uint64) ([]byte, int, error) {
	var buf []byte
	if n := len(c.spare); n > 0 {
		buf, c.spare = c.spare[n-1][:c.psize], c.spare[:n-1]
	} else {
		buf = make([]byte, c.psize)
	}
	if c.keep != nil {
		if p, ok := c.keep.get(id, buf); ok {
			return p, len(p), nil // checked when read
		}
	}
	if err := c.readAt(buf, id); err != nil {
		return nil, 0, err
	}
	if got := ne.Uint64(buf); got != id {
		return nil, 0, corruptf("page %d of the database file says it is page %d", id, got)
	}
	full := c.psize
	if over := ne.Uint32(buf[12:]); over > 0 {
		if over > maxPageOverflow || int64(id)+int64(over) >= c.size/int64(c.psize) {
			return nil, 0, corruptf("page %d of the database file says it overflows into %d pages", id, over)
		}
		n := (int(over) + 1) * c.psize
		full = n
		if over >= lazyPages {
			n = c.psize // the rest when asked for (pframe.span)
		}
		if cap(buf) < n {
			buf = append(buf[:cap(buf)], make([]byte, n-cap(buf))...)
		}
		buf = buf[:n]
		if n > c.psize {
			if err := c.readAt(buf[c.psize:], id+1); err != nil {
				return nil, 0, err
			}
		}
	}
	flags, count := ne.Uint16(buf[8:]), int(ne.Uint16(buf[10:]))
	if flags != branchPageFlag && flags != leafPageFlag {
		return nil, 0, corruptf("page %d of the database file is neither a branch nor a leaf of a bucket (flags %#x)", id, flags)
	}
	if pageHeaderSize+count*pageElemSize > len(buf) || flags == branchPageFlag && count == 0 {
		return nil, 0, corruptf("page %d of the database file says it holds %d elements", id, count)
	}
	if c.keep != nil && full == len(buf) && (!c.keep.shared || flags == branchPageFlag) {
		c.keep.put(id, buf)
	}
	return buf, full, nil
}

// readAt reads len(buf) bytes of the file from page id on.
func (c *pageCursor) readAt(buf []byte, id uint64) error {
	off := int64(id) * int64(c.psize)
	if off/int64(c.psize) != int64(id) || off < 0 || off+int64(len(buf)) > c.size {
		return corruptf("page %d is beyond the end of the database file", id)
	}
	c.reads++
	n, err := c.f.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return corruptf("page %d is beyond the end of the database file (a truncated file?)", id)
	}
	return fmt.Errorf("reading page %d of the database file: %w", id, err)
}

// push puts page id on the path, at element 0.
func (c *pageCursor) push(id uint64) error {
	// Keep the page already on the path at this depth when it is the same
	// one: a seek near the last one reads only the pages that differ.
	d := len(c.stack)
	if d < cap(c.stack) {
		if f := c.stack[:d+1][d]; f.id == id && f.p != nil {
			f.i = 0
			c.stack = append(c.stack, f)
			return nil
		}
	}
	if len(c.stack) > 64 {
		return corruptf("a bucket of the database file is more than 64 pages deep from page %d (a cycle?)", c.root)
	}
	if d < cap(c.stack) {
		if old := c.stack[:d+1][d].p; old != nil {
			c.spare = append(c.spare, old)
		}
	}
	p, full, err := c.page(id)
	if err != nil {
		return err
	}
	var ext []byte
	if d < cap(c.stack) {
		ext = c.stack[:d+1][d].ext
	}
	c.stack = append(c.stack, pframe{id: id, p: p, leaf: ne.Uint16(p[8:]) == leafPageFlag, count: int(ne.Uint16(p[10:])), full: full, file: c.f, ext: ext})
	return nil
}

// elemKey returns the key of element i of frame f.
func (f *pframe) elemKey(i int) ([]byte, error) {
	e := pageHeaderSize + i*pageElemSize
	var pos, ks int
	if f.leaf {
		pos, ks = int(ne.Uint32(f.p[e+4:])), int(ne.Uint32(f.p[e+8:]))
	} else {
		pos, ks = int(ne.Uint32(f.p[e:])), int(ne.Uint32(f.p[e+4:]))
	}
	if e+pos+ks > f.full || pos < 0 || ks < 0 {
		return nil, corruptf("page %d of the database file: element %d's key is past the page", f.id, i)
	}
	return f.span(e+pos, ks)
}

// leafKV returns the key and value of leaf element i (value nil for a
// nested bucket, as bbolt's Cursor returns it).
func (f *pframe) leafKV(i int) ([]byte, []byte, error) {
	e := pageHeaderSize + i*pageElemSize
	flags := ne.Uint32(f.p[e:])
	pos, ks, vs := int(ne.Uint32(f.p[e+4:])), int(ne.Uint32(f.p[e+8:])), int(ne.Uint32(f.p[e+12:]))
	start := e + pos
	if pos < 0 || ks < 0 || vs < 0 || start+ks+vs > f.full {
		return nil, nil, corruptf("page %d of the database file: element %d is past the page", f.id, i)
	}
	kv, err := f.span(start, ks+vs)
	if err != nil {
		return nil, nil, err
	}
	k, v := kv[:ks:ks], kv[ks:]
	if flags&bucketLeafFlag != 0 {
		v = nil
	}
	return k, v, nil
}

// child returns the page id of branch element i of frame f.
func (f *pframe) child(i int) uint64 {
	return ne.Uint64(f.p[pageHeaderSize+i*pageElemSize+8:])
}

// The moves below are bbolt's Cursor's (cursor.go), step for step, so
// that a walk gives what bbolt's would, at the ends of the bucket and
// around empty leaves included: First, Last, Next, Prev and Seek.

// First moves to the first key of the bucket.
func (c *pageCursor) First() ([]byte, []byte) {
	if c.err != nil {
		return nil, nil
	}
	c.stack = c.stack[:0]
	if err := c.push(c.root); err != nil {
		return c.fail(err)
	}
	c.toFirst()
	if c.err == nil && c.top().count == 0 {
		c.next()
	}
	return c.keyValue()
}

// Last moves to the last key of the bucket.
func (c *pageCursor) Last() ([]byte, []byte) {
	if c.err != nil {
		return nil, nil
	}
	c.stack = c.stack[:0]
	if err := c.push(c.root); err != nil {
		return c.fail(err)
	}
	c.top().i = c.top().count - 1
	c.toLast()
	for c.err == nil && len(c.stack) > 1 && c.top().count == 0 {
		c.prev()
	}
	if len(c.stack) == 0 {
		return nil, nil
	}
	return c.keyValue()
}

// Next moves to the next key; at the end it stays on the last one and
// returns nil.
func (c *pageCursor) Next() ([]byte, []byte) {
	if c.err != nil || len(c.stack) == 0 {
		return nil, nil
	}
	return c.next()
}

// Prev moves to the previous key; at the start it goes back to the first
// one and returns nil.
func (c *pageCursor) Prev() ([]byte, []byte) {
	if c.err != nil || len(c.stack) == 0 {
		return nil, nil
	}
	return c.prev()
}

// Seek moves to key, or the first key after it.
func (c *pageCursor) Seek(key []byte) ([]byte, []byte) {
	if c.err != nil {
		return nil, nil
	}
	c.stack = c.stack[:0]
	if err := c.push(c.root); err != nil {
		return c.fail(err)
	}
	for {
		f := c.top()
		var err error
		if f.leaf {
			f.i = sort.Search(f.count, func(i int) bool {
				k, e := f.elemKey(i)
				if e != nil {
					err = e
					return true
				}
				return bytes.Compare(k, key) >= 0
			})
			if err != nil {
				return c.fail(err)
			}
			break
		}
		// The last element whose key is at most key (the first when
		// every key is larger), as bbolt's Cursor.searchPage.
		exact := false
		i := sort.Search(f.count, func(i int) bool {
			k, e := f.elemKey(i)
			if e != nil {
				err = e
				return true
			}
			r := bytes.Compare(k, key)
			if r == 0 {
				exact = true
			}
			return r >= 0
		})
		if err != nil {
			return c.fail(err)
		}
		if !exact && i > 0 {
			i--
		}
		f.i = i
		if err := c.push(f.child(i)); err != nil {
			return c.fail(err)
		}
	}
	if f := c.top(); f.i >= f.count {
		return c.next()
	}
	return c.keyValue()
}

func (c *pageCursor) top() *pframe { return &c.stack[len(c.stack)-1] }

// toFirst follows element i of each branch from the top of the stack
// down to a leaf, putting each page below at its first element.
func (c *pageCursor) toFirst() {
	for c.err == nil {
		f := c.top()
		if f.leaf {
			return
		}
		if err := c.push(f.child(f.i)); err != nil {
			c.fail(err)
		}
	}
}

// toLast is toFirst putting each page below at its last element.
func (c *pageCursor) toLast() {
	for c.err == nil {
		f := c.top()
		if f.leaf {
			return
		}
		if err := c.push(f.child(f.i)); err != nil {
			c.fail(err)
			return
		}
		c.top().i = c.top().count - 1
	}
}

// keyValue returns the element the cursor is at (nil past the end of its
// leaf).
func (c *pageCursor) keyValue() ([]byte, []byte) {
	if c.err != nil || len(c.stack) == 0 {
		return nil, nil
	}
	f := c.top()
	if f.count == 0 || f.i < 0 || f.i >= f.count {
		return nil, nil
	}
	if c.keyOnly {
		k, err := f.elemKey(f.i)
		if err != nil {
			return c.fail(err)
		}
		return k, nil
	}
	k, v, err := f.leafKV(f.i)
	if err != nil {
		return c.fail(err)
	}
	return k, v
}

// next is bbolt's Cursor.next.
func (c *pageCursor) next() ([]byte, []byte) {
	for {
		i := len(c.stack) - 1
		for ; i >= 0; i-- {
			if f := &c.stack[i]; f.i < f.count-1 {
				f.i++
				break
			}
		}
		if i == -1 {
			return nil, nil
		}
		c.stack = c.stack[:i+1]
		c.toFirst()
		if c.err != nil {
			return nil, nil
		}
		if c.top().count == 0 {
			continue
		}
		return c.keyValue()
	}
}

// prev is bbolt's Cursor.prev.
func (c *pageCursor) prev() ([]byte, []byte) {
	for i := len(c.stack) - 1; i >= 0; i-- {
		if f := &c.stack[i]; f.i > 0 {
			f.i--
			break
		}
		if len(c.stack) == 1 {
			c.First()
			return nil, nil
		}
		c.stack = c.stack[:i]
	}
	if len(c.stack) == 0 {
		return nil, nil
	}
	c.toLast()
	return c.keyValue()
}

// valueAt returns where the value of key lies in the file, its offset
// and length, having read the pages on the path to the key but not those
// of the value (a run's filter, megabytes); ok is false when key is
// absent or names a nested bucket. An error stops the cursor (Err).
func (c *pageCursor) valueAt(key []byte) (off int64, n int, ok bool) {
	c.keyOnly = true
	k, _ := c.Seek(key)
	c.keyOnly = false
	if k == nil || !bytes.Equal(k, key) {
		return 0, 0, false
	}
	f := c.top()
	e := pageHeaderSize + f.i*pageElemSize
	flags := ne.Uint32(f.p[e:])
	pos, ks, vs := int(ne.Uint32(f.p[e+4:])), int(ne.Uint32(f.p[e+8:])), int(ne.Uint32(f.p[e+12:]))
	if pos < 0 || ks < 0 || vs < 0 || e+pos+ks+vs > f.full {
		c.fail(corruptf("page %d of the database file: element %d is past the page", f.id, f.i))
		return 0, 0, false
	}
	if flags&bucketLeafFlag != 0 {
		return 0, 0, false
	}
	// A node's pages are contiguous in the file, from its first.
	return int64(f.id)*int64(c.psize) + int64(e+pos+ks), vs, true
}

// preadWalk is the number of terms from which Reader.Terms and Values
// read the dictionary by pread: below it a walk is a lineage's few
// terms, whose pages the next read may touch again.
const preadWalk = 1024

// kvCursor is what reads need of a cursor: bbolt's, or a pageCursor.
type kvCursor interface {
	First() ([]byte, []byte)
	Last() ([]byte, []byte)
	Seek([]byte) ([]byte, []byte)
	Next() ([]byte, []byte)
	Prev() ([]byte, []byte)
}

// readCursor returns a cursor over b for a read: a pageCursor when tx is
// a read transaction and s has the file open for pread, otherwise b's
// own. After a walk ends early (a nil key), cursorErr says whether an
// error ended it.
func (s *Store) readCursor(tx *bbolt.Tx, b *bbolt.Bucket) kvCursor {
	if pc := newPageCursor(s.file, tx, b); pc != nil {
		return pc
	}
	return b.Cursor()
}

// cursorErr returns the error that ended a walk of c, nil if none did.
func cursorErr(c kvCursor) error {
	if pc, ok := c.(*pageCursor); ok {
		return pc.Err()
	}
	return nil
}
