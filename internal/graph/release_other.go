//go:build !linux

package graph

import (
	"os"
	"time"

	"go.etcd.io/bbolt"
)

// releasePages does nothing where madvise is not wired up.
func releasePages(db *bbolt.DB, size int64) {}

// releasePagesExcept does nothing where madvise is not wired up.
func releasePagesExcept(db *bbolt.DB, size int64, keep []span) {}

// mappedFileBytes reports nothing where it is not known.
func mappedFileBytes() (int64, bool) { return 0, false }

// residentBytes reports nothing where it is not known.
func residentBytes() (file, anon int64, ok bool) { return 0, 0, false }

// sleepBriefly sleeps for about d.
func sleepBriefly(d time.Duration) { time.Sleep(d) }

// freeSpace reports nothing where it is not known.
func freeSpace(dir string) (int64, bool) { return 0, false }

// lockFile does nothing where flock is not wired up: two vacuums of one
// file at once are not kept apart there.
func lockFile(f *os.File) error { return nil }

// sameOwner does nothing where file owners are not wired up.
func sameOwner(f *os.File, fi os.FileInfo) error { return nil }
