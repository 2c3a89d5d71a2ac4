package query

import (
	"fmt"
	"testing"
)

// TestValueFilter: every text added is had; of texts never added, few
// are (the share a Bloom filter of this size and load allows).
func TestValueFilter(t *testing.T) {
	f := newValueFilter(16 << 10) // 131,072 bits
	const n = 8192                // 16 bits a text
	for i := range n {
		f.add(fmt.Sprintf("sha256:%064x", i))
	}
	for i := range n {
		if s := fmt.Sprintf("sha256:%064x", i); !f.has(s) {
			t.Fatalf("%s was added, has says no", s)
		}
	}
	falsePos := 0
	for i := n; i < 11*n; i++ {
		if f.has(fmt.Sprintf("sha256:%064x", i)) {
			falsePos++
		}
	}
	// 4 probes at 16 bits a text: about 0.24 %; allow three times it.
	if rate := float64(falsePos) / (10 * n); rate > 0.0075 {
		t.Errorf("%d of %d texts never added are had (%.3f %%)", falsePos, 10*n, 100*rate)
	}
}
