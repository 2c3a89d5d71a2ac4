package graph

import "syscall"

// freeSpace is the space an unprivileged process may still write in the
// file system of dir, in bytes.
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.F_bavail * int64(st.F_bsize), true
}
