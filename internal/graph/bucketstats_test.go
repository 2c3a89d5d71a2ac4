package graph_test

import (
	"slices"
	"testing"
)

// TestFileStats checks that FileStats names every bucket of the format in
// order and that its figures agree with Stats and the file's size, so that
// bench/dbstats can size a store without opening the file with bbolt.
func TestFileStats(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, citations(0, 200)...)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.FileStats()
	if err != nil {
		t.Fatalf("FileStats() = %v", err)
	}
	var names []string
	pages, keys := 0, map[string]int{}
	for _, b := range fs.Buckets {
		names = append(names, b.Name)
		pages += b.Pages
		keys[b.Name] = b.Keys
		if b.InuseBytes > b.AllocBytes {
			t.Errorf("bucket %s: InuseBytes %d > AllocBytes %d", b.Name, b.InuseBytes, b.AllocBytes)
		}
	}
	if want := []string{"ids", "osp", "pos", "provgraph", "spo", "terms"}; !slices.Equal(names, want) {
		t.Errorf("FileStats().Buckets names = %q, want %q", names, want)
	}
	if fs.FileBytes != st.FileBytes {
		t.Errorf("FileStats().FileBytes = %d, Stats().FileBytes = %d", fs.FileBytes, st.FileBytes)
	}
	if fs.PageSize <= 0 || int64(pages*fs.PageSize) > fs.FileBytes {
		t.Errorf("FileStats(): %d pages of %d bytes in a file of %d bytes", pages, fs.PageSize, fs.FileBytes)
	}
	if int64(keys["terms"]) != st.Terms {
		t.Errorf("FileStats() terms bucket has %d keys, Stats().Terms = %d", keys["terms"], st.Terms)
	}
}
