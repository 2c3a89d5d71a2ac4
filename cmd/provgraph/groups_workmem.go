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
// of queryGCPercent (unless GOGC is set): the heap may grow a quarter
// past what was live at the last collection. What groups holds is mostly
// arrays without pointers, which a collection does not scan, so
// collecting often costs little, while at a target of 100 the heap grew
// to twice what is held: at ten million citations, 5.6 GB of heap for
// 2.9 GB live, both while the scan's arrays were made (a collection
// after the decoded terms let the rest of the load run up to twice
// them) and while the members built for the output, garbage once
// written, piled up. At a million citations 25 costs no more CPU time
// than 100 (10.5 and 12.1 s of user time at 25, 10.5 and 12.0 s at 100,
// alternating runs on a loaded machine).
const groupsGCPercent = 25

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
