package graph

// ReleaseMapped drops the process's mapping of the database file's pages
// when more than limit bytes of files are mapped (resident), as a writer's
// pager does: a reader that reads the whole file, such as the scan behind
// groups, would otherwise keep every page it read in its resident memory
// (650 MB of a million-citation file). The pages stay in the page cache
// and are mapped again, at the cost of a minor fault, when read again.
// Several goroutines may call it at once, while others read on the same
// transaction: a page read after the release is simply mapped again. It
// reports whether it released.
func (r *Reader) ReleaseMapped(limit int64) bool {
	if b, ok := mappedFileBytes(); ok && b > limit {
		releasePages(r.tx.DB(), r.tx.Size())
		return true
	}
	return false
}
