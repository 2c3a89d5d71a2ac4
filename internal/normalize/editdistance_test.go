package normalize

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"raw_url", "raw_url", 0},
		{"url", "raw_url", 4},
		{"sort-qurey", "sort-query", 1}, // a transposition is one edit
		{"postion", "position", 1},      // a deletion
		{"raw_urll", "raw_url", 1},      // an insertion
		{"engene", "engine", 1},         // a substitution
		{"lowercase-path", "lowercase-host", 4},
		{"ca", "abc", 3}, // optimal string alignment, not Damerau: no edit of a transposed pair
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := EditDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}
