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

// TestGCPercentFor: the tuner's target is 100 below the large heap and 25
// from it on.
func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live, large int64
		want        int
	}{
		{live: 400 << 20, large: 1 << 30, want: groupsGCPercent},
		{live: 1 << 30, large: 1 << 30, want: groupsLargeGCPercent},
		{live: 3 << 30, large: 1 << 30, want: groupsLargeGCPercent},
	} {
		if got := gcPercentFor(tc.live, tc.large); got != tc.want {
			t.Errorf("gcPercentFor(%d, %d) = %d, want %d", tc.live, tc.large, got, tc.want)
		}
	}
}

// TestGCTuner: after a collection the tuner sets the target for what was
// live (100 below the large heap; 25 when the large heap is 0, as every
// heap is then large), and stopping it puts the target it found back.
func TestGCTuner(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		large int64
		want  int
	}{
		{large: 1 << 40, want: groupsGCPercent},
		{large: 0, want: groupsLargeGCPercent},
	} {
		debug.SetGCPercent(150)
		tuned := make(chan int, 1)
		stop := startGCTuner(tc.large, func(percent int) {
			select {
			case tuned <- percent:
			default:
			}
		})
		runtime.GC()
		if got := <-tuned; got != tc.want {
			t.Errorf("large heap %d: tuned to %d, want %d", tc.large, got, tc.want)
		}
		if got := debug.SetGCPercent(-1); got != tc.want {
			t.Errorf("large heap %d: target %d after tuning, want %d", tc.large, got, tc.want)
		} else {
			debug.SetGCPercent(got)
		}
		stop()
		runtime.GC()
		if got := debug.SetGCPercent(150); got != 150 {
			t.Errorf("large heap %d: target %d once stopped, want 150 put back", tc.large, got)
		}
	}
}
