package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// groupsWorkMemEnv is ingest's workMemEnv: one setting bounds both.
const groupsWorkMemEnv = workMemEnv

// groupsWorkMem is --work-mem (flag), or $PROVGRAPH_WORK_MEM, in bytes, as
// ingest reads it (workMemFlag); 0 when neither is set.
func groupsWorkMem(flag string) (int64, error) { return workMemFlag(flag) }

// groupsGCPercent is the garbage collector's target for groups, in place
// of queryGCPercent (unless GOGC is set). What groups holds is now mostly
// arrays without pointers, which a collection does not scan, so
// collecting twice as often costs little: at a million citations, 862 MB
// of peak RSS at 100 against 1075 MB at 200, for the same CPU time (9.3
// and 9.7 s, one run each on a loaded machine).
const groupsGCPercent = 100

// tuneGCForGroups sets the collector for groups: tuneGCForQueries, then
// groupsGCPercent unless GOGC is set, then the heap's soft limit
// workMem, if given (applyWorkMem).
func tuneGCForGroups(workMem int64) {
	tuneGCForQueries()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(groupsGCPercent)
	}
	applyWorkMem(workMem)
}

// groupsWriteGCPercent is the collector's target while groups writes the
// groups it found, in place of groupsGCPercent (unless GOGC is set). What
// is live then is what the load left, held to the end (the scan's arrays
// and decoded texts, grouping's integers), and what is allocated is the
// members built for the output, garbage as soon as they are written: at
// a target of 100 that garbage grew the heap to twice what is live before
// each collection (5.4 GB of heap for 2.9 GB live at ten million
// citations). Marking is cheap here, as the live heap is mostly arrays
// without pointers, so collecting four times as often bounds the heap at
// a quarter above what is live for little CPU time.
const groupsWriteGCPercent = 25

// whileWritingGroups runs write, the output of groups once they are
// found, with the collector at groupsWriteGCPercent unless GOGC is set,
// and puts back the target it found.
func whileWritingGroups[T any](write func() (T, error)) (T, error) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(groupsWriteGCPercent))
	}
	return write()
}

// applyWorkMem makes n the soft limit of the Go heap (debug.SetMemoryLimit)
// in place of tuneGCForQueries' half of the machine, and of GOMEMLIMIT:
// the collector then runs as often as it must to stay under it, trading
// CPU for memory. What the scan must hold (about 400 bytes a citation, see
// internal/query/LOADING.md) is not spilled: below that the limit cannot
// be kept and the collector runs often, capped by Go at about half the
// CPU.
func applyWorkMem(n int64) {
	if n > 0 {
		debug.SetMemoryLimit(n)
	}
}

// workMemHelp is the help of groups' --work-mem.
var workMemHelp = fmt.Sprintf("soft limit of the heap, e.g. 768MiB (at least 16KiB; default $%s, else half of the machine's or cgroup's memory); the garbage collector works harder to stay under it", groupsWorkMemEnv)
