//go:build linux || darwin || dragonfly || freebsd

package graph

import "syscall"

// freeSpace is the space an unprivileged process may still write in the
// file system of dir, in bytes. The fields' types differ between systems
// (uint32 to int64), hence the conversions.
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
