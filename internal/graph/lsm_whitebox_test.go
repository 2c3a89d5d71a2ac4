package graph

import (
	"fmt"
	"slices"
	"testing"
)

// fakeRun is a run for compactRuns alone: a name and a size.
type fakeRun struct {
	name runName
	n    uint64
}

// compactFake runs compactRuns over runs named by (level, size) pairs, with
// the quad indexes' rule (a run of final or more entries is not merged)
// and a merge that sums its inputs, and returns the runs left as
// "level/seq/size" strings in sequence order.
func compactFake(t *testing.T, final uint64, budget *mergeBudget, runs ...[2]uint64) []string {
	t.Helper()
	var in []fakeRun
	for i, r := range runs {
		in = append(in, fakeRun{newRunName(int(r[0]), uint64(i)), r[1]})
	}
	out, err := compactRuns(in, uint64(len(in)), budget,
		func(r fakeRun) runName { return r.name },
		func(r fakeRun) bool { return r.n < final },
		func(same []fakeRun) uint64 {
			var n uint64
			for _, r := range same {
				n += r.n
			}
			return n
		},
		func(same []fakeRun, level int, seq uint64) (fakeRun, error) {
			m := fakeRun{name: newRunName(level, seq)}
			for _, r := range same {
				if r.name.level() != level-1 {
					t.Errorf("merge into level %d got a run of level %d", level, r.name.level())
				}
				m.n += r.n
			}
			return m, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b fakeRun) int { return cmpUint64(a.name.seq(), b.name.seq()) })
	var got []string
	for _, r := range out {
		got = append(got, fmt.Sprintf("%d/%d/%d", r.name.level(), r.name.seq(), r.n))
	}
	return got
}

// TestCompactRuns pins the one merge scheme of the hash index and the
// quad indexes (lsm.go): fanout runs of a level become one run of the next,
// cascading; final runs stay; a spent budget makes a big merge wait.
func TestCompactRuns(t *testing.T) {
	const big = 1 << 40
	for _, tc := range []struct {
		name   string
		final  uint64
		budget *mergeBudget
		runs   [][2]uint64
		want   []string
	}{
		{"fewer than fanout", big, nil, [][2]uint64{{0, 1}, {0, 1}, {0, 1}}, []string{"0/0/1", "0/1/1", "0/2/1"}},
		{"one merge", big, nil, [][2]uint64{{0, 1}, {0, 2}, {0, 3}, {0, 4}}, []string{"1/4/10"}},
		{"cascade", big, nil, [][2]uint64{{1, 4}, {1, 4}, {1, 4}, {0, 1}, {0, 1}, {0, 1}, {0, 1}}, []string{"2/8/16"}},
		{"final runs stay", 5, nil, [][2]uint64{{1, 5}, {1, 5}, {1, 5}, {0, 1}, {0, 1}, {0, 1}, {0, 1}}, []string{"1/0/5", "1/1/5", "1/2/5", "1/7/4"}},
		{"spent budget", big, &mergeBudget{spent: true}, [][2]uint64{{0, bigMerge}, {0, 1}, {0, 1}, {0, 1}}, []string{"0/0/524288", "0/1/1", "0/2/1", "0/3/1"}},
		{"budget allows one", big, &mergeBudget{}, [][2]uint64{{1, bigMerge}, {1, 1}, {1, 1}, {0, bigMerge}, {0, 1}, {0, 1}, {0, 1}}, []string{"1/0/524288", "1/1/1", "1/2/1", "1/7/524291"}},
	} {
		if got := compactFake(t, tc.final, tc.budget, tc.runs...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: compactRuns = %q, want %q", tc.name, got, tc.want)
		}
	}
}
