package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"
)

// Vacuum: a copy of the file without its free pages.
//
// bbolt never shrinks a file: the pages that a dropped view, the runs a
// compaction merged or a rebuilt view's old rows held become free pages,
// reused by later writes, and the file keeps its size. A renormalize of
// the ten-million-citation file under a second policy (which ends in a
// view rebuild and two compactions) left 2.7 million free pages, 11 GB of
// a 23.7 GB file; and every writer then holds bbolt's free list of them
// in memory (its hash map freelist: some 80 bytes a free page, 220 MB
// there, the largest part of a view rebuild's live heap). Vacuum writes
// the live pages into a new file beside the old one, page-filled in key
// order, and renames it over the old one.
//
// The copy is bbolt's Compact, written again here for what it lacks: it
// stops between two keys when its context is cancelled (Compact runs to
// its end), reports how far it is, and keeps the mapped pages of both
// files under the store's mapped limit, as a writer's pager does (Compact
// maps all of the source: the whole file's pages in the process's
// resident memory by its end).

// VacuumOptions are Vacuum's settings. The zero value is usable.
type VacuumOptions struct {
	// LockTimeout is how long to wait for other processes to release
	// the file (Options.LockTimeout).
	LockTimeout time.Duration
	// MappedLimit bounds the pages of the two files mapped into the
	// process (Options.MappedLimit): DefaultMappedLimit when 0.
	MappedLimit int64
	// TxBytes is how many bytes of keys and values each transaction of
	// the copy writes before it commits: vacuumTxBytes when 0.
	TxBytes int64
	// Progress, when set, is called after each commit of the copy with
	// the bytes of the new file's pages written and the live bytes of
	// the file (its size less its free pages), which the new file's
	// size approaches (its pages filled to the end, it is often
	// smaller).
	Progress func(written, live int64)
}

// VacuumResult says what Vacuum did.
type VacuumResult struct {
	// Before and After are the file's sizes in bytes.
	Before, After int64
	// FreePages is how many free pages the file held before, of
	// PageSize bytes each.
	FreePages, PageSize int
}

// vacuumTxBytes is the copy's transaction size: each holds its dirty
// pages in memory until it commits.
const vacuumTxBytes = 64 << 20

// spaceIn is freeSpace; tests replace it.
var spaceIn = freeSpace

// vacuumSuffix names the new file while it is written: path+vacuumSuffix,
// in the same directory, so that the rename is atomic.
const vacuumSuffix = ".vacuum"

// Vacuum rewrites the store file at path without its free pages (see the
// comment above). It holds a reader's lock on the file for the whole copy
// (other processes may read the old file meanwhile, none write it),
// writes path+".vacuum" under that file's own lock, and
// renames it over path only once it is whole and synced, then syncs the
// directory: a crash or a cancel before the rename leaves the old file as
// it was (and a stale .vacuum file, which the next vacuum replaces). A
// process that opened path before the rename and waited for the lock
// opens it again (Open checks that the file it locked is still the one at
// path). It needs free disk space for the live part of the file, checked
// before it starts.
func Vacuum(ctx context.Context, path string, o VacuumOptions) (res VacuumResult, err error) {
	fail := func(err error) (VacuumResult, error) {
		if errors.As(err, new(*Error)) {
			return res, err
		}
		return res, &Error{Op: "vacuum", Path: path, Err: err}
	}
	// The file a link names is the one rewritten, beside itself: a
	// rename over the link would replace the link, and leave the file.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	tmp := path + vacuumSuffix
	// A page that is not what its parent says makes bbolt panic halfway
	// through the copy: the guard makes it an error (ErrCorrupt).
	g := newGuard(path, "vacuum", &err)
	defer g.done()
	if err := checkFile(path); err != nil {
		return fail(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail(err)
	}
	// Read-only: a shared lock keeps writers out until the rename (a
	// writer that waited for it then opens the new file: openBolt),
	// while readers may go on reading the old file; and bbolt does not
	// load the free list of a read-only file, which at 2.9 million free
	// pages is some 250 MB of memory.
	src, err := openLocked(path, o.LockTimeout, &bbolt.Options{ReadOnly: true})
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	if err := src.View(func(tx *bbolt.Tx) error { _, err := inspect(tx); return err }); err != nil {
		return fail(err)
	}
	res.Before, res.PageSize = fi.Size(), src.Info().PageSize
	if res.FreePages, err = freePageCount(path); err != nil {
		return fail(err)
	}
	live := res.Before - int64(res.FreePages)*int64(res.PageSize)
	dir := filepath.Dir(path)
	if avail, ok := spaceIn(dir); ok && avail < live+live/16 {
		return fail(fmt.Errorf("vacuum needs about %s free in %s for the new file (the live part of the database, %s, and some room), and %s is: free some space and run it again",
			gigabytes(live+live/16), dir, gigabytes(live), gigabytes(avail)))
	}
	// The new file is locked before it is emptied: the shared lock on
	// path lets two vacuums in, and the second must not empty, or
	// rename, the first one's file. A stale one (a vacuum that stopped
	// before its rename) is no longer locked, and is emptied.
	lf, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE, fi.Mode().Perm())
	if err != nil {
		return fail(err)
	}
	if err := lockFile(lf); err != nil {
		lf.Close()
		return fail(fmt.Errorf("%w: another vacuum of this file is running (it holds %s)", ErrLocked, tmp))
	}
	// Until the rename, the new file is removed on every way out, while
	// it is still locked.
	var dst *bbolt.DB
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp)
		}
		if dst != nil {
			dst.Close() // closes lf; after the rename, synced already
		} else {
			lf.Close()
		}
	}()
	if err := lf.Truncate(0); err != nil {
		return fail(err)
	}
	// The new file gets the old one's owner (a vacuum run by root of a
	// file another user writes must leave it writable by that user).
	if err := sameOwner(lf, fi); err != nil {
		return fail(fmt.Errorf("giving %s the owner of %s: %w", tmp, path, err))
	}
	// bbolt locks the file it is given again: the same open file, whose
	// lock it already is.
	dst, err = bbolt.Open(tmp, fi.Mode().Perm(), &bbolt.Options{
		Timeout: time.Nanosecond, FreelistType: bbolt.FreelistMapType, PageSize: res.PageSize,
		OpenFile: func(string, int, os.FileMode) (*os.File, error) { return lf, nil },
	})
	if err != nil {
		dst = nil
		return fail(fmt.Errorf("creating %s: %w", tmp, err))
	}
	limit := o.MappedLimit
	if limit == 0 {
		limit = DefaultMappedLimit
	}
	txBytes := o.TxBytes
	if txBytes <= 0 {
		txBytes = vacuumTxBytes
	}
	if err := vacuumCopy(ctx, dst, src, limit, txBytes, func(written int64) {
		if o.Progress != nil {
			o.Progress(written, live)
		}
	}); err != nil {
		return fail(err)
	}
	if err := dst.Sync(); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	// Renamed while still open, so still locked: another vacuum must
	// not empty it between its close and the rename.
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	renamed = true
	if d, err := os.Open(dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fail(fmt.Errorf("syncing %s after the rename: %w", dir, err))
		}
	}
	if fi, err := os.Stat(path); err == nil {
		res.After = fi.Size()
	}
	return res, nil
}

// vacuumCopy copies every bucket, key, value and bucket sequence of src
// into dst, which is empty, in key order, each bucket filled to its pages'
// end, committing every txBytes bytes copied, and stopping between two
// keys once ctx is done. A watcher on each file keeps its mapped pages
// under limit (pager.watch). progress is called after each commit with
// the size of dst's pages.
func vacuumCopy(ctx context.Context, dst, src *bbolt.DB, limit, txBytes int64, progress func(written int64)) error {
	stopSrc := (&pager{db: src, limit: limit}).watch()
	defer stopSrc()
	stopDst := (&pager{db: dst, limit: limit}).watch()
	defer stopDst()
	tx, err := dst.Begin(true)
	if err != nil {
		return err
	}
	defer func() { tx.Rollback() }()
	var inTx int64
	// bucket is the bucket at path in tx: the path is walked again after
	// each commit.
	bucket := func(path [][]byte) *bbolt.Bucket {
		b := tx.Bucket(path[0])
		for _, k := range path[1:] {
			b = b.Bucket(k)
		}
		b.FillPercent = 1.0
		return b
	}
	var walk func(from *bbolt.Bucket, path [][]byte) error
	walk = func(from *bbolt.Bucket, path [][]byte) error {
		c := from.Cursor()
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if inTx += int64(len(k) + len(v)); inTx > txBytes {
				if err := tx.Commit(); err != nil {
					return err
				}
				inTx = int64(len(k) + len(v))
				if tx, err = dst.Begin(true); err != nil {
					return err
				}
				progress(tx.Size())
			}
			to := bucket(path)
			if v != nil {
				if err := to.Put(k, v); err != nil {
					return unwritable(path, k, err)
				}
				continue
			}
			sub := from.Bucket(k)
			nb, err := to.CreateBucket(k)
			if err != nil {
				return unwritable(path, k, err)
			}
			if err := nb.SetSequence(sub.Sequence()); err != nil {
				return err
			}
			if err := walk(sub, append(path[:len(path):len(path)], k)); err != nil {
				return err
			}
		}
		return nil
	}
	err = src.View(func(stx *bbolt.Tx) error {
		return stx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			nb, err := tx.CreateBucket(name)
			if err != nil {
				return unwritable(nil, name, err)
			}
			if err := nb.SetSequence(b.Sequence()); err != nil {
				return err
			}
			return walk(b, [][]byte{name})
		})
	})
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return dst.View(func(tx *bbolt.Tx) error {
		progress(tx.Size())
		return nil
	})
}

// unwritable is the error of a key of the bucket at path that bbolt would
// not write into the new file (too large, empty, a bucket twice): bbolt
// wrote none such, so the old file is damaged there.
func unwritable(path [][]byte, k []byte, err error) error {
	return corruptf("the file is damaged: bucket %q holds key %.40x, which bbolt refuses to write (%v); restore it from a copy", bytes.Join(path, []byte("/")), k, err)
}

// gigabytes writes n bytes in gigabytes, as df -H does.
func gigabytes(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }
