package main

import (
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestGroupsWorkMem: groups' --work-mem, or $PROVGRAPH_WORK_MEM when the
// flag is not given, becomes the heap's soft limit; a bad size is a usage
// error naming where it came from, and nothing is grouped.
func TestGroupsWorkMem(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	db := filepath.Join(t.TempDir(), "g.db")
	if code, _, stderr := run(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	debug.SetGCPercent(1) // so that a run that set nothing is seen
	for _, tc := range []struct {
		env  string
		args []string
		want int64
	}{
		{args: []string{"--work-mem", "96MiB"}, want: 96 << 20},
		{env: "3GiB", want: 3 << 30},
		{env: "3GiB", args: []string{"--work-mem", "20480"}, want: 20480},
	} {
		t.Setenv(groupsWorkMemEnv, tc.env)
		code, out, stderr := run(t, append([]string{"groups", "--db", db}, tc.args...)...)
		if code != 0 || out == "" {
			t.Fatalf("groups %v with %s=%q: exit %d, %s", tc.args, groupsWorkMemEnv, tc.env, code, stderr)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("groups %v with %s=%q: memory limit %d, want %d", tc.args, groupsWorkMemEnv, tc.env, got, tc.want)
		}
		if got := debug.SetGCPercent(1); got != groupsGCPercent {
			t.Errorf("groups %v: GC percent %d, want %d", tc.args, got, groupsGCPercent)
		}
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{args: []string{"--work-mem", "lots"}, want: `--work-mem "lots": want a number of bytes`},
		{args: []string{"--work-mem", "1KiB"}, want: `--work-mem "1KiB": want at least 16KiB`},
		{args: []string{"--work-mem", "-5"}, want: `--work-mem "-5": want a number of bytes`},
		{env: "64MB", want: groupsWorkMemEnv + ` "64MB": want a number of bytes`},
	} {
		t.Setenv(groupsWorkMemEnv, tc.env)
		code, out, stderr := run(t, append([]string{"groups", "--db", db}, tc.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("groups %v with %s=%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, groupsWorkMemEnv, tc.env, code, out, stderr, exitUsage, tc.want)
		}
	}
}

// TestHeapLimit: the tuner's limit is a quarter above what is live, but
// never below the floor nor above the ceiling (the soft limit already in
// force, half the machine's memory by default).
func TestHeapLimit(t *testing.T) {
	for _, tc := range []struct{ live, floor, ceiling, want int64 }{
		{live: 4 << 30, floor: 1 << 30, ceiling: 12 << 30, want: 5 << 30},
		{live: 100 << 20, floor: 1 << 30, ceiling: 12 << 30, want: 1 << 30},
		{live: 20 << 30, floor: 1 << 30, ceiling: 12 << 30, want: 12 << 30},
		{live: 100 << 20, floor: 1 << 30, ceiling: 512 << 20, want: 512 << 20}, // a small machine
	} {
		if got := heapLimit(tc.live, tc.floor, tc.ceiling); got != tc.want {
			t.Errorf("heapLimit(%d, %d, %d) = %d, want %d", tc.live, tc.floor, tc.ceiling, got, tc.want)
		}
	}
}

// TestHeapTuner: after a collection the tuner sets the soft limit for
// what was live (here the floor, as the test's heap is small; a quarter
// above what is live with no floor; the ceiling when the floor is above
// it), and stopping it puts the limit in force before back.
func TestHeapTuner(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const ceiling = 1 << 50
	for _, tc := range []struct {
		name     string
		floor    int64
		want     func(limit int64) bool
		wantText string
	}{
		{"floor", 1 << 40, func(l int64) bool { return l == 1<<40 }, "the floor, 1<<40"},
		{"no floor", 0, func(l int64) bool { return l > 0 && l < 1<<40 }, "a quarter above the live heap"},
		{"floor above the ceiling", 1 << 51, func(l int64) bool { return l == ceiling }, "the ceiling, 1<<50"},
	} {
		debug.SetMemoryLimit(ceiling)
		tuned := make(chan int64, 1)
		stop := startHeapTuner(tc.floor, func(limit int64) {
			select {
			case tuned <- limit:
			default:
			}
		})
		runtime.GC()
		limit := <-tuned
		if !tc.want(limit) {
			t.Errorf("%s: tuned to %d, want %s", tc.name, limit, tc.wantText)
		}
		if got := debug.SetMemoryLimit(-1); !tc.want(got) {
			t.Errorf("%s: soft limit %d after tuning, want %s", tc.name, got, tc.wantText)
		}
		stop()
		runtime.GC()
		if got := debug.SetMemoryLimit(-1); got != ceiling {
			t.Errorf("%s: soft limit %d once stopped, want %d put back", tc.name, got, int64(ceiling))
		}
	}
}
