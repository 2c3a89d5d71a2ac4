package query

import (
	"cmp"
	"slices"
	"strings"
	"testing"
)

// TestValueRecordOrder: sort records sort as their (value, citation id)
// pairs, values with NUL and 0xFF bytes and prefixes of each other
// included, and read back as written.
func TestValueRecordOrder(t *testing.T) {
	values := []string{"", "a", "a\x00", "a\x00b", "a\x01", "a\xff", "ab", "a\x00\x00", "\x00", "\xff\x00", "https://x.test/", "https://x.test/\x00"}
	ids := []string{"c1", "c2", "c\x00", ""}
	type pair struct{ v, id string }
	var pairs []pair
	for _, v := range values {
		for _, id := range ids {
			pairs = append(pairs, pair{v, id})
		}
	}
	rec := func(p pair) string { return string(appendValueRecord(nil, p.v, p.id)) }
	for _, p := range pairs {
		v, id, err := splitValueRecord(rec(p))
		if err != nil || v != p.v || id != p.id {
			t.Errorf("record of %q, %q read back as %q, %q, %v", p.v, p.id, v, id, err)
		}
	}
	byPair := slices.Clone(pairs)
	slices.SortFunc(byPair, func(a, b pair) int { return cmp.Or(strings.Compare(a.v, b.v), strings.Compare(a.id, b.id)) })
	byRecord := slices.Clone(pairs)
	slices.SortFunc(byRecord, func(a, b pair) int { return strings.Compare(rec(a), rec(b)) })
	if !slices.Equal(byPair, byRecord) {
		t.Errorf("records sort as\n%q\nwant\n%q", byRecord, byPair)
	}
}
