package query

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestSortParallelPermutation sorts values that compare equal but differ,
// and checks that every value comes out exactly once: the halves are
// merged from both ends at once, which must split the one merge exactly.
func TestSortParallelPermutation(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	type kv struct{ k, v int }
	for _, n := range []int{4096, 4097, 10_001, 65_536} {
		for _, span := range []int{1, 2, 50, 1 << 30} {
			s := make([]kv, n)
			for i := range s {
				s[i] = kv{rnd.IntN(span), i}
			}
			sortParallel(s, func(a, b kv) int { return cmp.Compare(a.k, b.k) })
			if !slices.IsSortedFunc(s, func(a, b kv) int { return cmp.Compare(a.k, b.k) }) {
				t.Fatalf("n=%d span=%d: not sorted", n, span)
			}
			seen := make([]bool, n)
			for _, x := range s {
				if seen[x.v] {
					t.Fatalf("n=%d span=%d: value %d twice", n, span, x.v)
				}
				seen[x.v] = true
			}
		}
	}
}

// TestSortByText compares sortByText with a sort by strings.Compare on
// texts that tie in their first 16 bytes, end early, hold zero bytes and
// bytes above 0x7f.
func TestSortByText(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"", "\x00", "a", "b", "\xff", "https://example.", "https://example.org/", "x"}
	for _, n := range []int{0, 1, 100, 5000, 20_000} {
		s := make([]string, n)
		for i := range s {
			var b strings.Builder
			for range rnd.IntN(5) {
				b.WriteString(alphabet[rnd.IntN(len(alphabet))])
			}
			s[i] = b.String()
		}
		want := slices.Clone(s)
		slices.Sort(want)
		sortByText(s, func(x string) string { return x })
		if !slices.Equal(s, want) {
			t.Errorf("n=%d: not sorted like slices.Sort", n)
		}
	}
}
