package query

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// citationIDs are a million texts shaped like citation ids.
func citationIDs() []string {
	rnd := rand.New(rand.NewPCG(1, 2))
	ids := make([]string, 1_000_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("chatgpt-%d-%d", rnd.IntN(200000), rnd.IntN(9))
	}
	return ids
}

// BenchmarkSortStrings and BenchmarkSortByText sort the same texts, with
// string comparisons and by prefix words.
func BenchmarkSortStrings(b *testing.B) {
	src := citationIDs()
	s := make([]string, len(src))
	for b.Loop() {
		copy(s, src)
		sortParallel(s, strings.Compare)
	}
}

func BenchmarkSortByText(b *testing.B) {
	src := citationIDs()
	s := make([]string, len(src))
	for b.Loop() {
		copy(s, src)
		sortByText(s, func(x string) string { return x })
	}
}
