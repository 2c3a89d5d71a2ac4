package query

import "testing"

// TestGrowDoubles: filling a slice an element at a time through grow
// allocates at most twice its final size in all (doubling), where append
// alone grows a large slice by a quarter and allocated about five times
// it; the elements are kept in order.
func TestGrowDoubles(t *testing.T) {
	const n = 1 << 20
	var s []int32
	allocated := 0
	for i := range n {
		before := cap(s)
		s = append(grow(s, 1), int32(i))
		if cap(s) != before {
			allocated += cap(s)
		}
	}
	if allocated > 2*n+2048 {
		t.Errorf("filling %d elements allocated room for %d, want at most about %d", n, allocated, 2*n)
	}
	for i, v := range s {
		if v != int32(i) {
			t.Fatalf("s[%d] = %d, want %d", i, v, i)
		}
	}
	if s := grow([]int32{1, 2}, 5000); len(s) != 2 || cap(s) < 5002 || s[1] != 2 {
		t.Errorf("grow([1 2], 5000) = len %d cap %d %v", len(s), cap(s), s[:2])
	}
}
