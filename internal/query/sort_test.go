package query

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortParallel compares sortParallel with slices.Sort on inputs small
// enough to be sorted in one piece and large enough to be split, with and
// without repeated values.
func TestSortParallel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 4095, 4096, 10_000, 100_003} {
		for _, span := range []int{3, 1 << 30} {
			s := make([]int, n)
			for i := range s {
				s[i] = rnd.IntN(span)
			}
			want := slices.Clone(s)
			slices.Sort(want)
			sortParallel(s, cmp.Compare[int])
			if !slices.Equal(s, want) {
				t.Errorf("n=%d span=%d: not sorted like slices.Sort", n, span)
			}
		}
	}
}
