package graph

import "go.etcd.io/bbolt"

// FileStats is where the bytes of a store file go, for bench/dbstats and
// other tools that size a store without knowing its layout or importing
// bbolt.
type FileStats struct {
	FileBytes int64         // size of the database file
	PageSize  int           // the file's page size
	FreePages int           // pages on the freelist, free or pending
	Buckets   []BucketStats // every top-level bucket, in name order
}

// BucketStats describes one top-level bucket. The figures are bbolt's own
// (bbolt.BucketStats) and include the nested buckets: the dictionary's hash
// runs and the POS and OSP quad runs (FORMAT.md).
type BucketStats struct {
	Name       string // the bucket's name in the file
	Keys       int    // keys, nested buckets included
	AllocBytes int    // bytes of the branch and leaf pages allocated
	InuseBytes int    // bytes of those pages in use
	Pages      int    // branch, leaf and overflow pages
	Buckets    int    // buckets, this one and the nested ones
	Depth      int    // levels of the deepest B+tree
}

// FileStats walks every page of the store file, so it takes time in
// proportion to the store's size; Stats reads only the counters.
func (s *Store) FileStats() (FileStats, error) {
	var fs FileStats
	err := s.view("file stats", func(tx *bbolt.Tx) error {
		fs.FileBytes = tx.Size()
		fs.PageSize = tx.DB().Info().PageSize
		dbs := tx.DB().Stats()
		fs.FreePages = dbs.FreePageN + dbs.PendingPageN
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			st := b.Stats()
			fs.Buckets = append(fs.Buckets, BucketStats{
				Name:       string(name),
				Keys:       st.KeyN,
				AllocBytes: st.BranchAlloc + st.LeafAlloc,
				InuseBytes: st.BranchInuse + st.LeafInuse,
				Pages:      st.BranchPageN + st.BranchOverflowN + st.LeafPageN + st.LeafOverflowN,
				Buckets:    st.BucketN,
				Depth:      st.Depth,
			})
			return nil
		})
	})
	return fs, s.readError("file stats", err)
}
