package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"go.etcd.io/bbolt"
)

// A damaged file (truncated, overwritten in part, flipped bits) must give
// an error wrapping ErrCorrupt, never a crash. bbolt reads the file
// through a memory mapping and trusts what it reads: a page reference past
// the end of a truncated file is a memory fault (SIGBUS), and a page that
// is not what its parent says makes bbolt panic. So:
//
//   - checkFile reads the two meta pages with plain reads before bbolt
//     maps the file, and refuses a file whose meta page names more pages
//     than the file holds;
//   - every method that reads the file runs under a guard, which turns a
//     memory fault into a panic (debug.SetPanicOnFault) and a panic raised
//     while reading into an error;
//   - every id and offset decoded from the file is checked against the
//     counters before it is used, and the counters against the file.

// bbolt's file layout (go.etcd.io/bbolt/internal/common): a page starts
// with a 16-byte header; pages 0 and 1 are meta pages, whose fields
// follow the header in the machine's byte order.
const (
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	boltPageHeader  = 16
	boltMetaSize    = 64 // magic, version, page size, flags, root (pgid, sequence), freelist, pgid, txid, checksum
	boltNoFreelist  = 0xFFFFFFFFFFFFFFFF
	boltMinPageSize = 1024
)

// boltMeta is the part of a bbolt meta page checkFile needs.
type boltMeta struct {
	magic, version, pageSize uint32
	root, freelist, pgid     uint64
	txid                     uint64
	valid                    bool // magic, version and checksum are right
}

func parseBoltMeta(page []byte) boltMeta {
	var m boltMeta
	if len(page) < boltPageHeader+boltMetaSize {
		return m
	}
	b := page[boltPageHeader : boltPageHeader+boltMetaSize]
	ne := binary.NativeEndian
	m.magic, m.version, m.pageSize = ne.Uint32(b[0:]), ne.Uint32(b[4:]), ne.Uint32(b[8:])
	m.root, m.freelist, m.pgid, m.txid = ne.Uint64(b[16:]), ne.Uint64(b[32:]), ne.Uint64(b[40:]), ne.Uint64(b[48:])
	h := fnv.New64a()
	h.Write(b[:56])
	m.valid = m.magic == boltMagic && m.version == boltVersion && ne.Uint64(b[56:]) == h.Sum64()
	return m
}

// checkFile checks what bbolt trusts before it maps the file at path: that
// a meta page is intact, and that the one bbolt will use (the valid one
// with the larger transaction id) describes pages that are all inside the
// file. An empty file is left to bbolt, which initializes it. A file that
// is not a bbolt file at all is ErrNotStore; a bbolt file that is
// damaged, ErrCorrupt.
func checkFile(path string) error {
	_, _, err := activeMeta(path)
	return err
}

// activeMeta checks the file at path as checkFile does and returns the
// meta page bbolt will use and the file's page size; a zero meta for an
// empty file.
func activeMeta(path string) (boltMeta, int64, error) {
	var none boltMeta
	f, err := os.Open(path)
	if err != nil {
		return none, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return none, 0, err
	}
	size := fi.Size()
	if size == 0 {
		return none, 0, nil
	}
	read := func(off int64) []byte {
		buf := make([]byte, boltPageHeader+boltMetaSize)
		n, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return nil
		}
		return buf[:n]
	}
	// The page size is in the meta pages; bbolt finds the second one by
	// trying every page size from 1 KiB to 16 MiB.
	m0 := parseBoltMeta(read(0))
	pageSize := int64(m0.pageSize)
	if !m0.valid {
		pageSize = 0
		for i := range 15 {
			if m := parseBoltMeta(read(boltMinPageSize << i)); m.valid && int64(m.pageSize) == boltMinPageSize<<i {
				pageSize = int64(m.pageSize)
				break
			}
		}
	}
	if pageSize == 0 {
		if m0.magic == boltMagic {
			return none, 0, corruptf("the file is damaged: both of its bbolt meta pages fail their checksum (restore the file from a copy)")
		}
		return none, 0, fmt.Errorf("%w: not a bbolt database file (no intact bbolt meta page)", ErrNotStore)
	}
	if pageSize < boltMinPageSize || pageSize&(pageSize-1) != 0 {
		return none, 0, corruptf("the file is damaged: its meta page gives a page size of %d bytes", pageSize)
	}
	if size < 2*pageSize {
		return none, 0, corruptf("the file is damaged: it is %d bytes, shorter than its two meta pages of %d bytes (truncated?)", size, pageSize)
	}
	m1 := parseBoltMeta(read(pageSize))
	// bbolt uses the meta page with the larger transaction id when it is
	// valid, and the other one otherwise.
	m, which := m0, 0
	if m1.txid > m0.txid {
		m, which = m1, 1
	}
	if !m.valid {
		m, which = m0, 0
		if !m.valid {
			m, which = m1, 1
		}
	}
	if !m.valid || int64(m.pageSize) != pageSize {
		return none, 0, corruptf("the file is damaged: its bbolt meta pages disagree on the page size")
	}
	switch {
	case m.pgid < 2 || m.pgid > uint64(size/pageSize):
		return none, 0, corruptf("the file is damaged: it is %d bytes, but its meta page %d (transaction %d) says it holds %d pages of %d bytes (%d bytes): truncated or partly copied? restore it from a copy",
			size, which, m.txid, m.pgid, pageSize, m.pgid*uint64(pageSize))
	case m.root < 2 || m.root >= m.pgid:
		return none, 0, corruptf("the file is damaged: its meta page %d puts the root page at %d, outside pages 2 to %d", which, m.root, m.pgid-1)
	case m.freelist != boltNoFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return none, 0, corruptf("the file is damaged: its meta page %d puts the free list at page %d, outside pages 2 to %d", which, m.freelist, m.pgid-1)
	}
	return m, pageSize, nil
}

// freePageCount is how many pages the free list of the bbolt file at path
// holds (free and pending), read from its page header: a read-only open
// does not load it.
func freePageCount(path string) (int, error) {
	m, pageSize, err := activeMeta(path)
	if err != nil || m.freelist == boltNoFreelist || pageSize == 0 {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var h [boltPageHeader + 8]byte
	if _, err := f.ReadAt(h[:], int64(m.freelist)*pageSize); err != nil {
		return 0, corruptf("the file is damaged: its free list page %d cannot be read: %v", m.freelist, err)
	}
	ne := binary.NativeEndian
	// The count is a uint16 at offset 10; 0xFFFF says the real count is
	// the first element, past the header.
	n := uint64(ne.Uint16(h[10:]))
	if n == 0xFFFF {
		n = ne.Uint64(h[boltPageHeader:])
	}
	if n > m.pgid {
		return 0, corruptf("the file is damaged: its free list says %d free pages of %d", n, m.pgid)
	}
	return int(n), nil
}

// openBolt is bbolt.Open under a guard. A panic there leaves bbolt's file
// open and locked, so the file is closed here.
//
// Once bbolt holds the file's lock, the file it opened must still be the
// one at path: a vacuum (Vacuum) renames a new file over path while it
// holds the old one's lock, and a process that opened the old file
// before and waited for its lock would otherwise read, or write, a file
// no longer there (its writes lost). Such an open is made again, on the
// new file, up to a few times.
func openBolt(path string, o *bbolt.Options) (db *bbolt.DB, err error) {
	for range 3 {
		var file *os.File
		db, file, err = openBoltOnce(path, o)
		if err != nil {
			return nil, err
		}
		if afterLock != nil {
			afterLock(path)
		}
		if sameFile(file, path) {
			return db, nil
		}
		db.Close()
	}
	return nil, fmt.Errorf("the file was replaced while this process waited for its lock, three times: is a vacuum running again and again?")
}

// afterLock, when set (tests), is called by openBolt once bbolt holds the
// lock of the file it opened at path.
var afterLock func(path string)

// sameFile reports whether f is the file now at path.
func sameFile(f *os.File, path string) bool {
	if f == nil {
		return true // bbolt opened it otherwise: nothing to compare
	}
	a, err := f.Stat()
	if err != nil {
		return true
	}
	b, err := os.Stat(path)
	if err != nil {
		return true // removed: not replaced, and an open again would make an empty store
	}
	return os.SameFile(a, b)
}

func openBoltOnce(path string, o *bbolt.Options) (db *bbolt.DB, file *os.File, err error) {
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	defer func() {
		if err != nil && db == nil && file != nil {
			file.Close() // a second Close, after bbolt's own, does nothing
		}
	}()
	g := newGuard(path, "open", &err)
	defer g.done()
	db, err = bbolt.Open(path, 0o600, o)
	return db, file, err
}

// guard turns what a damaged file does to a read into an error: a memory
// fault while reading the mapped file, which SetPanicOnFault makes a
// panic, and bbolt's and the decoders' panics. Make one with Store.guard
// and defer done at the start of every method that reads the file.
//
// A panic raised by the caller's own callback is not the file's doing: it
// is left to propagate, untouched. Code that calls back marks the call
// with caller.
type guard struct {
	path, op string
	errp     *error
	old      bool // the goroutine's SetPanicOnFault setting before
	inCaller bool // a callback of the caller is running
	name     bool // wrap an error about the file's content in an *Error naming it
}

func newGuard(path, op string, errp *error) *guard {
	return &guard{path: path, op: op, errp: errp, old: debug.SetPanicOnFault(true)}
}

func (s *Store) guard(op string, errp *error) *guard { return newGuard(s.path, op, errp) }

// call runs fn, a callback of the caller, so that a panic in it passes
// through the guard.
func (g *guard) call(fn func() error) error {
	g.inCaller = true
	err := fn()
	g.inCaller = false
	return err
}

// done must be deferred: it restores the goroutine's fault setting and
// recovers a panic that reading the file raised into *errp, as an *Error
// wrapping ErrCorrupt.
func (g *guard) done() {
	debug.SetPanicOnFault(g.old)
	if g.inCaller {
		return // the panic, if any, is the caller's: recover is not called
	}
	if v := recover(); v != nil {
		*g.errp = &Error{Op: g.op, Path: g.path, Err: corruptf("the file is damaged: %s; restore it from a copy", damageText(v))}
		return
	}
	if g.name && *g.errp != nil && errors.Is(*g.errp, ErrCorrupt) {
		*g.errp = readError(g.path, g.op, *g.errp)
	}
}

// damageText describes a panic raised while reading the file.
func damageText(v any) string {
	var what string
	var re runtime.Error
	switch e := v.(type) {
	case interface{ Addr() uintptr }:
		// A memory fault: a page beyond the end of the file.
		return fmt.Sprintf("memory fault reading the mapped file at %#x (a page beyond the end of the file?)", e.Addr())
	case runtime.Error:
		re = e
		what = e.Error()
	case error:
		what = e.Error()
	default:
		what = fmt.Sprint(v)
	}
	what = strings.TrimPrefix(what, "assertion failed: ")
	if re != nil {
		return "reading it failed: " + what
	}
	return "bbolt: " + what
}

// damage collects the first error a Reader method without an error
// result met, for Read to return.
type damage struct {
	mu  sync.Mutex
	err error
}

func (d *damage) set(err error) {
	d.mu.Lock()
	if d.err == nil {
		d.err = err
	}
	d.mu.Unlock()
}

func (d *damage) get() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// corruptf returns an error that is ErrCorrupt (errors.Is) and reads as
// the message alone, for data read from the file that breaks the format.
func corruptf(format string, args ...any) error {
	return corruptError(fmt.Sprintf(format, args...))
}

// corruptError is an error about the file's content that reads as it
// is and is also ErrCorrupt, for errors.Is.
type corruptError string

func (e corruptError) Error() string        { return string(e) }
func (e corruptError) Is(target error) bool { return target == ErrCorrupt }

// errMissingTerm is an id used by a quad that the dictionary lacks.
var errMissingTerm = corruptError("missing from the dictionary")

// readError wraps err, returned by a read of op, in an *Error naming the
// file, unless it is one already; an error about the file's content says
// that the file is damaged.
func (s *Store) readError(op string, err error) error { return readError(s.path, op, err) }

func readError(path, op string, err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	if errors.Is(err, ErrCorrupt) && !strings.Contains(err.Error(), "damaged") {
		err = fmt.Errorf("the file is damaged: %w", err)
	}
	return &Error{Op: op, Path: path, Err: err}
}
