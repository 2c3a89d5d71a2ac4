package graph

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
)

// releasePages tells the kernel that this process no longer needs the
// pages of the database file it has mapped (bbolt reads the file through
// a read-only shared mapping). The pages stay in the page cache and are
// mapped again on the next read, at the cost of a minor fault; in the
// meantime they no longer count in the process's resident memory. On a
// read fault of a file mapping Linux maps not only the page read but up
// to 15 neighbours already in the page cache (fault-around, 64 KiB), and
// where the page cache holds the file in large folios the whole folio
// (up to 2 MiB: ext4 on Linux 6.18), whatever madvise says, so random
// reads spread over a large file map it fast. The pager (pager.go) calls this when a writer has more of the
// file mapped than its limit.
//
// With format 2, whose batches made about 12,000 random reads each over
// a million-citation file, releasing in the middle of each batch cost a
// quarter to a third of the ingest's time; format 3 writes POS and OSP as
// runs, and the random reads left (lookups of stored terms) are few
// enough that a million-citation ingest releases every few batches (about
// 50 times in 510 batches, going by the drops in its resident file pages
// sampled every half second).
//
// size must not exceed the mapping: it is the size of a transaction
// (Tx.Size) taken before it allocated pages, every page of which bbolt
// has mapped. A larger size would drop pages of whatever memory follows
// the mapping.
func releasePages(db *bbolt.DB, size int64) {
	info := db.Info()
	if info == nil || info.Data == 0 || size <= 0 {
		return
	}
	// MADV_DONTNEED on a shared file mapping drops the mapping of the pages,
	// never their contents. Errors are ignored: this only saves memory.
	syscall.Syscall(syscall.SYS_MADVISE, info.Data, uintptr(size), syscall.MADV_DONTNEED)
}

// releasePagesExcept is releasePages sparing the pages of keep, byte
// ranges of the mapping's first size bytes (offsets from its start,
// sorted and not overlapping): the gaps between them are released, a
// madvise each.
func releasePagesExcept(db *bbolt.DB, size int64, keep []span) {
	if len(keep) == 0 {
		releasePages(db, size)
		return
	}
	info := db.Info()
	if info == nil || info.Data == 0 || size <= 0 {
		return
	}
	for _, g := range gaps(keep, size, int64(os.Getpagesize())) {
		syscall.Syscall(syscall.SYS_MADVISE, info.Data+uintptr(g.from), uintptr(g.to-g.from), syscall.MADV_DONTNEED)
	}
}

// statm is /proc/self/statm, opened once and read again from its start
// each time: a pager looks at it every few dozen reads, and opening,
// reading and closing it cost about 17 µs where a read at offset 0 costs
// 1.3 µs (a check at ten million citations looks about 2.5 million times).
var statm = sync.OnceValues(func() (*os.File, error) { return os.Open("/proc/self/statm") })

// mappedFileBytes returns how many bytes of files (and shared memory,
// which provgraph does not use) the process has resident: the third
// field of /proc/self/statm, in pages.
func mappedFileBytes() (int64, bool) {
	file, _, ok := residentBytes()
	return file, ok
}

// residentBytes returns the bytes of files the process has resident
// (mappedFileBytes) and the rest of its resident memory, anonymous
// memory (heap and stacks): the second field of /proc/self/statm less
// the third.
func residentBytes() (file, anon int64, ok bool) {
	fh, err := statm()
	if err != nil {
		return 0, 0, false
	}
	var buf [128]byte
	n, err := fh.ReadAt(buf[:], 0)
	if n == 0 || err != nil && err != io.EOF {
		return 0, 0, false
	}
	f := bytes.Fields(buf[:n])
	if len(f) < 3 {
		return 0, 0, false
	}
	resident, err1 := strconv.ParseInt(string(f[1]), 10, 64)
	shared, err2 := strconv.ParseInt(string(f[2]), 10, 64)
	if err1 != nil || err2 != nil || shared > resident {
		return 0, 0, false
	}
	page := int64(os.Getpagesize())
	return shared * page, (resident - shared) * page, true
}

// sleepBriefly sleeps for about d by nanosleep: a Go timer's sleep lasts
// at least a millisecond on Linux (it waits in epoll with a timeout in
// milliseconds), where nanosleep's took 175 µs for 100 asked, with both
// cores busy 180 µs at the 90th percentile.
func sleepBriefly(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
}
