package graph

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"go.etcd.io/bbolt"
)

// releasePages tells the kernel that this process no longer needs the
// pages of the database file it has mapped (bbolt reads the file through
// a read-only shared mapping). The pages stay in the page cache and are
// mapped again on the next read, at the cost of a minor fault; in the
// meantime they no longer count in the process's resident memory. A long
// ingest would otherwise end up with the whole file resident: every
// lookup of a term and every index chunk it touches leaves its page
// mapped, and not only its page: on a read fault of a file mapping Linux
// also maps up to 15 neighbours already in the page cache (fault-around,
// 64 KiB, whatever madvise says), so one 50,000-quad batch of a
// million-citation ingest, with its 10,000-odd random reads, maps most of
// a 1 GB file. Releasing in the middle of each batch was tried, the
// whole mapping every 1,024 random reads (mapped pages held to 100-300 MB,
// the ingest a third slower) and only the spans around the leaf pages read
// (mostly under 160 MB, 25% slower): every random read then pays a fault,
// where otherwise the file stays mapped after the first pass. The pages
// are page cache either way, and the kernel reclaims them under pressure.
//
// size must not exceed the mapping: it is the size of a committed
// transaction (Tx.Size), every page of which bbolt has mapped. A larger
// size would drop pages of whatever memory follows the mapping.
func releasePages(db *bbolt.DB, size int64) {
	info := db.Info()
	if info == nil || info.Data == 0 || size <= 0 {
		return
	}
	// MADV_DONTNEED on a shared file mapping drops the mapping of the pages,
	// never their contents. Errors are ignored: this only saves memory.
	syscall.Syscall(syscall.SYS_MADVISE, info.Data, uintptr(size), syscall.MADV_DONTNEED)
}

// mappedFileBytes returns how many bytes of files (and shared memory,
// which provgraph does not use) the process has resident: the third
// field of /proc/self/statm, in pages.
func mappedFileBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
