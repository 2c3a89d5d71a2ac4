package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// groupsWorkMemEnv is ingest's workMemEnv: one setting bounds both.
const groupsWorkMemEnv = workMemEnv

// groupsWorkMem is --work-mem (flag), or $PROVGRAPH_WORK_MEM, in bytes, as
// ingest reads it (workMemFlag); 0 when neither is set.
func groupsWorkMem(flag string) (int64, error) { return workMemFlag(flag) }

// groupsGCPercent is the garbage collector's target for groups, in place
// of queryGCPercent (unless GOGC is set), while its heap is small (below
// groupsLargeHeap). What groups holds is mostly arrays without pointers,
// which a collection does not scan, so collecting twice as often costs
// little: at a million citations, 862 MB of peak RSS at 100 against
// 1075 MB at 200, for the same CPU time (9.3 and 9.7 s, one run each on
// a loaded machine).
const groupsGCPercent = 100

// groupsLargeGCPercent is the target once what a collection found live
// is past groupsLargeHeap: the heap then grows a quarter past what is
// held. At 100 it grew to twice what is held: at ten million citations,
// 5.6 GB for 2.9 GB live, both while the load made its arrays (a
// collection after the decoded terms let the rest of the load run up to
// twice them) and while the members built for the output, garbage once
// written, piled up. A target of 25 for the whole command bounds that
// too, but costs a million citations, whose heap stays small, about a
// tenth more CPU time (13.0 s of user and system time against 11.2 s,
// medians of three alternating runs). A soft limit following the live
// heap did the same but had the runtime return freed memory to the
// kernel and fault it in again (38 s of system time at ten million
// against 25 s, one run each).
const groupsLargeGCPercent = 25

// groupsLargeHeap is the live heap past which groups collects at
// groupsLargeGCPercent.
const groupsLargeHeap = 1 << 30

// tuneGCForGroups sets the collector for groups: tuneGCForQueries, then
// groupsGCPercent unless GOGC is set, then the heap's soft limit
// workMem, if given (applyWorkMem). Unless GOGC is set, it starts the
// tuner that moves the target to groupsLargeGCPercent once the heap is
// large (startGCTuner). The function it returns stops the tuner and puts
// groupsGCPercent back.
func tuneGCForGroups(workMem int64) (stop func()) {
	tuneGCForQueries()
	applyWorkMem(workMem)
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	debug.SetGCPercent(groupsGCPercent)
	return startGCTuner(groupsLargeHeap, nil)
}

// gcPercentFor is the tuner's target for a heap of which live bytes were
// live at the last collection.
func gcPercentFor(live, large int64) int {
	if live >= large {
		return groupsLargeGCPercent
	}
	return groupsGCPercent
}

// gcTuner sets the collector's target after every collection to
// gcPercentFor what that collection found live. It runs as a cleanup of
// an object dropped at once (runtime.AddCleanup), which each collection
// frees, and arms itself again.
type gcTuner struct {
	large   int64
	onTune  func(percent int) // called after each setting, for tests
	restore int               // the target before the tuner started

	mu      sync.Mutex
	stopped bool
	percent int // the target set
}

// startGCTuner sets the target to groupsGCPercent and starts a gcTuner.
// stop ends it and puts the target it found back.
func startGCTuner(large int64, onTune func(percent int)) (stop func()) {
	t := &gcTuner{large: large, onTune: onTune, percent: groupsGCPercent}
	t.restore = debug.SetGCPercent(groupsGCPercent)
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetGCPercent(t.restore)
	}
}

// arm has the next collection call tune.
func (t *gcTuner) arm() {
	runtime.AddCleanup(new([64]byte), func(t *gcTuner) { t.tune() }, t)
}

// tune sets the target for what the last collection found live, and
// arms the tuner again, unless it was stopped.
func (t *gcTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	if live[0].Value.Kind() == metrics.KindUint64 {
		if p := gcPercentFor(int64(live[0].Value.Uint64()), t.large); p != t.percent {
			debug.SetGCPercent(p)
			t.percent = p
		}
	}
	if t.onTune != nil {
		t.onTune(t.percent)
	}
	t.arm()
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
