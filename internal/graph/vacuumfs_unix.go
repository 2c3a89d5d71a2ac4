//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package graph

import (
	"os"
	"syscall"
)

// lockFile takes f's exclusive lock (flock) without waiting. Vacuum locks
// its new file with it, so that a second vacuum of the same database
// neither empties nor renames the first one's file.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// sameOwner gives f the owner and group of the file fi describes, when
// they differ from f's.
func sameOwner(f *os.File, fi os.FileInfo) error {
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	var have syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &have); err != nil {
		return err
	}
	if have.Uid == want.Uid && have.Gid == want.Gid {
		return nil
	}
	return f.Chown(int(want.Uid), int(want.Gid))
}
