package graph

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// present reports whether the page of the process's memory holding p is
// mapped in its page table (bit 63 of its /proc/self/pagemap entry).
func present(t *testing.T, pagemap *os.File, p uintptr) bool {
	t.Helper()
	var e [8]byte
	if _, err := pagemap.ReadAt(e[:], int64(p/uintptr(os.Getpagesize()))*8); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(e[:])>>63 == 1
}

// TestLimitMappedSparesFilters: a release by LimitMapped drops the pages a
// Reader has mapped but those of the POS and OSP filters it has read,
// which every lookup probes again.
func TestLimitMappedSparesFilters(t *testing.T) {
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatalf("the test reads which pages are mapped from /proc/self/pagemap: %v", err)
	}
	defer pagemap.Close()
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true, MappedLimit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for b := range 4 {
		var qs []Quad
		for i := range 3000 {
			qs = append(qs, Quad{S: IRI(fmt.Sprintf("https://example.com/s%d-%d", b, i)), P: IRI("https://example.com/p"), O: String(fmt.Sprint("o", i))})
		}
		if _, err := s.Add(qs); err != nil {
			t.Fatal(err)
		}
	}
	defer func(f func() (int64, int64, bool)) { residentMemory = f }(residentMemory)
	residentMemory = func() (int64, int64, bool) { return 1 << 40, 0, true } // always over the limit
	err = s.Read(func(r *Reader) error {
		ctx := context.Background()
		p, o := r.ID(IRI("https://example.com/p")), r.ID(String("o7"))
		n := 0
		if err := r.Subjects(ctx, p, o, func(ID) { n++ }); err != nil {
			return err
		}
		if err := r.Incoming(ctx, o, func(_, _ ID) {}); err != nil {
			return err
		}
		if n != 4 {
			return fmt.Errorf("%d subjects, want 4", n)
		}
		var filters [][]byte
		for _, ind := range []int{idxPOS, idxOSP} {
			for _, run := range r.runs.idx[ind].runs {
				if len(run.filter) > 0 {
					filters = append(filters, run.filter)
				}
			}
		}
		if len(filters) < 2 {
			return fmt.Errorf("%d filters read, want one per run of POS and OSP", len(filters))
		}
		// Map every page of the filters, and the first page of the file.
		sum := 0
		for _, f := range filters {
			for i := 0; i < len(f); i += 512 {
				sum += int(f[i])
			}
		}
		// And a page of the dictionary: a value bbolt returns from a read
		// transaction lies in its mapping.
		_, v := r.tx.Bucket([]byte(termsBucket)).Cursor().First()
		if len(v) == 0 {
			return fmt.Errorf("no term read")
		}
		other := uintptr(unsafe.Pointer(&v[0]))
		sum += int(v[0])
		_ = sum
		if !present(t, pagemap, other) {
			return fmt.Errorf("a page of the dictionary is not mapped after a read of it: the test cannot tell a release")
		}
		r.LimitMapped(64 << 20)
		if present(t, pagemap, other) {
			return fmt.Errorf("a page of the dictionary is still mapped after LimitMapped released")
		}
		for i, f := range filters {
			for j := 0; j < len(f); j += os.Getpagesize() {
				if !present(t, pagemap, uintptr(unsafe.Pointer(&f[j]))) {
					return fmt.Errorf("filter %d: byte %d is no longer mapped after LimitMapped", i, j)
				}
			}
		}
		// With no room for them, the filters go too.
		r.LimitMapped(1)
		if present(t, pagemap, uintptr(unsafe.Pointer(&filters[0][0]))) {
			return fmt.Errorf("a filter is still mapped after LimitMapped with no room for it")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
