package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestMemTotal(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       int64
	}{
		{"meminfo", "MemFree:         1000 kB\nMemTotal:       24576000 kB\n", 24576000 * 1024},
		{"missing", "MemFree:         1000 kB\n", 0},
		{"garbled", "MemTotal:       lots kB\n", 0},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := memTotal(p); got != tc.want {
			t.Errorf("%s: memTotal = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := memTotal(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("absent file: memTotal = %d, want 0", got)
	}
}

func TestCgroupLimit(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		want int64
	}{
		{"8589934592\n", 8589934592},
		{"max\n", 0},
		{"", 0},
	} {
		p := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := cgroupLimit(p); got != tc.want {
			t.Errorf("%q: cgroupLimit = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// TestTuneGC checks the targets the kinds of command set, and that
// GOGC in the environment wins.
func TestTuneGC(t *testing.T) {
	restore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(restore)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tc := range []struct {
		name string
		gogc string
		tune func()
		want int
	}{
		{"queries", "", tuneGCForQueries, queryGCPercent},
		{"writes", "", tuneGCForWrites, writeGCPercent},
		{"queries, GOGC set", "100", tuneGCForQueries, 100},
		{"writes, GOGC set", "100", tuneGCForWrites, 100},
		{"check", "", tuneGCForCheck, checkGCPercent},
		{"check, GOGC set", "100", tuneGCForCheck, 100},
	} {
		t.Setenv("GOGC", tc.gogc)
		debug.SetGCPercent(100)
		tc.tune()
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("%s: GC percent %d, want %d", tc.name, got, tc.want)
		}
	}
}
