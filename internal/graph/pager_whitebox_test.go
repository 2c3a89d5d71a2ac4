package graph

import (
	"path/filepath"
	"testing"
)

// TestPagerResidentLimit: a pager drops the mapped pages when more of the
// file is mapped than its limit, and also, under that limit, when the
// mapped pages and the anonymous memory together pass its resident limit
// (a large merge holding its output); not otherwise, and never for the
// resident limit when it is off.
func TestPagerResidentLimit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func(f func() (int64, int64, bool)) { residentMemory = f }(residentMemory)
	const mib = 1 << 20
	for _, c := range []struct {
		name            string
		file, anon      int64
		limit, resident int64
		release         bool
	}{
		{"under both", 100 * mib, 500 * mib, 256 * mib, 896 * mib, false},
		{"mapped past its limit", 300 * mib, 100 * mib, 256 * mib, 896 * mib, true},
		{"together past the resident limit", 100 * mib, 800 * mib, 256 * mib, 896 * mib, true},
		{"resident limit off", 100 * mib, 800 * mib, 256 * mib, 0, false},
		{"resident limit negative", 100 * mib, 800 * mib, 256 * mib, -1, false},
		{"mapped limit off", 100 * mib, 800 * mib, 0, 896 * mib, false},
	} {
		residentMemory = func() (int64, int64, bool) { return c.file, c.anon, true }
		released := false
		p := &pager{db: s.db, limit: c.limit, resident: c.resident, onRelease: func() { released = true }}
		p.check(0)
		if released != c.release {
			t.Errorf("%s: released %v, want %v", c.name, released, c.release)
		}
	}
}
