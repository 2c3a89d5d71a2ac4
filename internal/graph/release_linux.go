package graph

import (
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
// mapped.
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
