// Package cores splits work over the machine's cores: ranges of an index
// (Split) and sorts (Sort, SortByText) of the millions of values a
// whole-database query handles. The bbolt backend's loader
// (internal/graph/citestore) and the grouping engine (internal/query)
// both use it. It imports no provgraph package.
package cores

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// N is how many goroutines Split uses: the cores Go may run on, at most 8.
func N() int { return max(1, min(runtime.GOMAXPROCS(0), 8)) }

// Split calls fn(w, lo, hi) on N() goroutines at once, for
// consecutive ranges [lo, hi) that cover [0, n), and waits for them.
func Split(n int, fn func(w, lo, hi int)) {
	w := N()
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := n*i/w, n*(i+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, lo, hi)
		}()
	}
	wg.Wait()
}

// Sort sorts s as slices.SortFunc does, splitting the work
// between cores: the halves are sorted at once, then merged. Elements
// that compare equal may end in any order, as with slices.SortFunc.
func Sort[T any](s []T, cmp func(a, b T) int) {
	sortDepth(s, cmp, bits.Len(uint(N()))-1)
}

func sortDepth[T any](s []T, cmp func(a, b T) int, depth int) {
	if depth <= 0 || len(s) < 1<<12 {
		slices.SortFunc(s, cmp)
		return
	}
	mid := len(s) / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sortDepth(s[:mid], cmp, depth-1)
	}()
	sortDepth(s[mid:], cmp, depth-1)
	wg.Wait()
	// Merge from both ends at once: one goroutine takes the smallest
	// half of the elements from the fronts, the other the largest from the
	// backs. Each makes the part of the one stable merge it owns, so
	// together they make all of it.
	merged := make([]T, len(s))
	a, b := s[:mid], s[mid:]
	half := len(s) / 2
	wg.Add(1)
	go func() {
		defer wg.Done()
		i, j := 0, 0
		for k := range half {
			if j < len(b) && (i == len(a) || cmp(b[j], a[i]) < 0) {
				merged[k], j = b[j], j+1
			} else {
				merged[k], i = a[i], i+1
			}
		}
	}()
	i, j := len(a)-1, len(b)-1
	for k := len(s) - 1; k >= half; k-- {
		// On a tie, b's element comes last, as in the forward merge.
		if i < 0 || j >= 0 && cmp(b[j], a[i]) >= 0 {
			merged[k], j = b[j], j-1
		} else {
			merged[k], i = a[i], i-1
		}
	}
	wg.Wait()
	copy(s, merged)
}

// SortByText sorts s by text(s[i]) in byte order, as Sort with
// strings.Compare of the texts would, but faster for millions of texts:
// it sorts their first 24 bytes as three integers, which needs no visit to
// the texts themselves, and compares whole texts only where those tie
// (URLs of one site may share more).
// Elements whose texts are equal may end in any order.
func SortByText[T any](s []T, text func(T) string) {
	type entry struct {
		w [3]uint64
		i int32
	}
	es := make([]entry, len(s))
	Split(len(s), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			t := text(s[i])
			es[i] = entry{[3]uint64{prefixWord(t, 0), prefixWord(t, 8), prefixWord(t, 16)}, int32(i)}
		}
	})
	Sort(es, func(a, b entry) int {
		for k := range a.w {
			if a.w[k] != b.w[k] {
				return cmp.Compare(a.w[k], b.w[k])
			}
		}
		return strings.Compare(text(s[a.i]), text(s[b.i]))
	})
	sorted := make([]T, len(s))
	for j, e := range es {
		sorted[j] = s[e.i]
	}
	copy(s, sorted)
}

// prefixWord returns bytes [from, from+8) of t as a big-endian integer,
// zeros past its end: integers compare as those bytes do, and a text that
// ends early compares no greater than any text it is a prefix of.
func prefixWord(t string, from int) uint64 {
	var w uint64
	for k := range 8 {
		w <<= 8
		if from+k < len(t) {
			w |= uint64(t[from+k])
		}
	}
	return w
}
