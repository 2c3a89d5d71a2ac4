//go:build !linux

package graph

import (
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
