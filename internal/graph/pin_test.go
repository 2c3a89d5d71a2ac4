package graph

import (
	"slices"
	"testing"
)

func TestGaps(t *testing.T) {
	const page = 100
	for _, tc := range []struct {
		name string
		keep []span
		size int64
		want []span
	}{
		{"nothing kept", nil, 1000, []span{{0, 1000}}},
		{"one span within a page", []span{{250, 260}}, 1000, []span{{0, 200}, {300, 1000}}},
		{"a span across pages", []span{{250, 420}}, 1000, []span{{0, 200}, {500, 1000}}},
		{"at the start", []span{{0, 50}}, 1000, []span{{100, 1000}}},
		{"at the end", []span{{950, 1000}}, 1000, []span{{0, 900}}},
		{"past the end", []span{{950, 1300}}, 1000, []span{{0, 900}}},
		{"two in one page", []span{{210, 220}, {270, 280}}, 1000, []span{{0, 200}, {300, 1000}}},
		{"adjacent pages", []span{{110, 190}, {210, 290}}, 1000, []span{{0, 100}, {300, 1000}}},
		{"everything", []span{{0, 1000}}, 1000, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gaps(tc.keep, tc.size, page); !slices.Equal(got, tc.want) {
				t.Errorf("gaps(%v, %d) = %v, want %v", tc.keep, tc.size, got, tc.want)
			}
		})
	}
}
