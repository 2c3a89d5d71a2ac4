package graph

import (
	"os"
	"unsafe"

	"go.etcd.io/bbolt"
)

// Reads of a ReadOnce Store (Options.ReadOnce).
//
// A command that answers one query (a lineage, one group) reads a few
// thousand pages at random and exits: every page it reads is read for
// the first time in the process. Through bbolt's mapping each such read
// is a page fault, and on a paravirtualized machine a fault costs about
// ten times a pread of the same page (39 µs against 3.5 µs, README "what
// a page costs"): at ten million citations the faults were three
// quarters of a lineage command's time (`perf record -e page-faults`: the
// probes of the runs' filters, bbolt's reads of B-tree pages, the
// dictionary's hash index). A ReadOnce Store reads them all by pread
// instead: B-tree pages through pageCursors that share one cache of the
// pages read (Store.once, valid for the Store's life because a ReadOnly
// Store holds the file's shared lock, so no writer changes a page), and
// the 64-byte blocks of the filters a lookup probes (fileBlocks).

// onceKeep is how many pages a ReadOnce Store keeps copies of: at most
// 64 MiB at 4 KiB pages.
const onceKeep = 16384

// fileBlocks reads byte ranges of bbolt's mapping by pread instead of
// through the mapping: the filter blocks a ReadOnce Store probes.
type fileBlocks struct {
	f    *os.File
	base uintptr // the mapping's start
	end  uintptr // base plus the transaction's size
	n    int     // blocks read by pread (tests)
}

// blocks returns s's fileBlocks for tx, nil unless s is ReadOnce.
func (s *Store) blocks(tx *bbolt.Tx) *fileBlocks {
	if s.once == nil || s.db == nil {
		return nil
	}
	info := s.db.Info()
	if info == nil || info.Data == 0 {
		return nil
	}
	return &fileBlocks{f: s.file, base: info.Data, end: info.Data + uintptr(tx.Size())}
}

// read returns b[off:off+len(buf)], b being a slice of the mapping, read
// by pread into buf; a nil fileBlocks, or b outside the mapping (a
// filter a test made in memory), reads b itself. A failed pread reads b
// too: the mapping's fault then reports the damage as any read would.
func (fb *fileBlocks) read(b []byte, off int, buf []byte) []byte {
	if fb == nil {
		return b[off : off+len(buf)]
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < fb.base || p+uintptr(len(b)) > fb.end {
		return b[off : off+len(buf)]
	}
	if n, err := fb.f.ReadAt(buf, int64(p-fb.base)+int64(off)); n != len(buf) || err != nil {
		return b[off : off+len(buf)]
	}
	fb.n++
	return buf
}

// has is runFilter.has for the filter of n bytes at offset at of the
// file, its block read by pread. A failed read says the run may hold h:
// the run is then read, and the read meets the damage if there is any.
func (fb *fileBlocks) has(at int64, n int, h uint64) bool {
	var buf [filterBlock]byte
	off := at + int64(filterBlockOf(h, n/filterBlock)*filterBlock)
	if m, err := fb.f.ReadAt(buf[:], off); m != len(buf) || err != nil {
		return true
	}
	fb.n++
	return blockHas(buf[:], h)
}

// readOnce makes r read by pread when its Store is ReadOnce: the nodes'
// quads (SPO), the POS and OSP runs and their filters, the terms by id
// and the dictionary's hash index (whose filters it does not probe:
// dictReader.may).
func (r *Reader) readOnce() {
	s := r.s
	fb := s.blocks(r.tx)
	if fb == nil {
		return
	}
	r.runs.file, r.runs.spo, r.runs.keep, r.runs.blocks = s.file, nil, s.once, fb
	if pc := newPageCursor(s.file, r.tx, r.names.terms); pc != nil {
		pc.keep = s.once
		r.names.pc, r.names.c, r.names.at = pc, nil, 0
	}
	r.dict.preadFrom(r.tx, s.file)
	r.dict.keep, r.dict.once = s.once, true
}

// pointCursor returns a cursor over b for the point reads of a read
// transaction: a pageCursor sharing the Store's pages when it is
// ReadOnce, otherwise bbolt's.
func (s *Store) pointCursor(tx *bbolt.Tx, b *bbolt.Bucket) kvCursor {
	if s.once != nil {
		if pc := newPageCursor(s.file, tx, b); pc != nil {
			pc.keep = s.once
			return pc
		}
	}
	return b.Cursor()
}
