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
// of queryGCPercent (unless GOGC is set). What groups holds is mostly
// arrays without pointers, which a collection does not scan, so
// collecting twice as often costs little: at a million citations, 862 MB
// of peak RSS at 100 against 1075 MB at 200, for the same CPU time (9.3
// and 9.7 s, one run each on a loaded machine). Past groupsHeapFloor the
// heap tuner bounds the heap more tightly.
const groupsGCPercent = 100

// groupsHeapSlack is how far past what the last collection found live
// the heap of groups may grow once it is past groupsHeapFloor, in percent
// of what is live. At the target of 100 alone the heap grew to twice what
// is held: at ten million citations, 5.6 GB for 2.9 GB live, both while
// the load made its arrays (a collection after the decoded terms let the
// rest of the load run up to twice them) and while the members built for
// the output, garbage once written, piled up. A target of 25 for the
// whole command bounds that too, but costs a million citations, whose
// heap stays small, about a tenth more CPU time (13.0 s of user and
// system time against 11.2 s, medians of three alternating runs).
const groupsHeapSlack = 25

// groupsHeapFloor is the soft limit of the heap of groups below which the
// tuner does not go: a heap that small is left to the target of 100.
const groupsHeapFloor = 1 << 30

// tuneGCForGroups sets the collector for groups: tuneGCForQueries, then
// groupsGCPercent unless GOGC is set, then the heap's soft limit
// workMem, if given (applyWorkMem). When neither GOGC, GOMEMLIMIT nor
// workMem is given, it starts the heap tuner (startHeapTuner) under the
// limit tuneGCForQueries set. The function it returns stops the tuner
// and puts that limit back.
func tuneGCForGroups(workMem int64) (stop func()) {
	tuneGCForQueries()
	if os.Getenv("GOGC") != "" {
		applyWorkMem(workMem)
		return func() {}
	}
	debug.SetGCPercent(groupsGCPercent)
	if workMem > 0 || os.Getenv("GOMEMLIMIT") != "" {
		applyWorkMem(workMem)
		return func() {}
	}
	return startHeapTuner(groupsHeapFloor, nil)
}

// heapLimit is the tuner's soft limit for a heap of which live bytes
// were live at the last collection: groupsHeapSlack percent more, at
// least floor, at most ceiling.
func heapLimit(live, floor, ceiling int64) int64 {
	return min(max(live+live*groupsHeapSlack/100, floor), ceiling)
}

// heapTuner sets the heap's soft limit after every collection to
// heapLimit of what that collection found live: the collector then runs
// again once the heap has grown by groupsHeapSlack percent, as at a
// target of that percent, but only once the heap is past the floor. It
// runs as a cleanup of an object dropped at once (runtime.AddCleanup),
// which each collection frees, and arms itself again.
type heapTuner struct {
	floor, ceiling int64
	onTune         func(limit int64) // called after each setting, for tests

	mu      sync.Mutex
	stopped bool
}

// startHeapTuner starts a heapTuner whose ceiling is the soft limit in
// force. stop ends it and puts that limit back.
func startHeapTuner(floor int64, onTune func(limit int64)) (stop func()) {
	t := &heapTuner{floor: floor, ceiling: debug.SetMemoryLimit(-1), onTune: onTune}
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetMemoryLimit(t.ceiling)
	}
}

// arm has the next collection call tune.
func (t *heapTuner) arm() {
	runtime.AddCleanup(new([64]byte), func(t *heapTuner) { t.tune() }, t)
}

// tune sets the limit for what the last collection found live, and arms
// the tuner again, unless it was stopped.
func (t *heapTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	limit := t.ceiling
	if live[0].Value.Kind() == metrics.KindUint64 {
		limit = heapLimit(int64(live[0].Value.Uint64()), t.floor, t.ceiling)
	}
	debug.SetMemoryLimit(limit)
	if t.onTune != nil {
		t.onTune(limit)
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
