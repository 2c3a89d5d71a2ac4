package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// queryGCPercent is the garbage collector's target for commands that read
// a whole database (groups, stats, policy-diff, lineage --group-scope
// database). Such a command holds hundreds of megabytes of terms and
// arrays for its whole run and allocates its output on top: at Go's
// default of 100 the collector marks that long-lived heap again and again.
// Measured on a million citations (`provgraph groups`, 2 cores): at 200,
// 13.3-14.1 s of user CPU instead of 16.0-17.2 s and the same peak
// resident memory, since the database's mapped pages and the loaded
// arrays, not garbage, make most of it.
const queryGCPercent = 200

// tuneGCForQueries sets the collector for a command that reads a whole
// database, unless GOGC or GOMEMLIMIT say otherwise. A soft limit of half
// the memory the process may use (the machine's, or its cgroup's when
// lower) keeps the larger target from growing the heap where memory is
// short: near the limit the collector works harder instead. The other half
// is left to the page cache, which holds the database file.
func tuneGCForQueries() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(queryGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if m := memoryLimit(); m > 0 {
			debug.SetMemoryLimit(m / 2)
		}
	}
}

// writeGCPercent is the garbage collector's target for commands that write
// in bulk (ingest, renormalize). What such a command keeps between batches
// is small (caches of term ids, the hash index's filters, the next batch)
// and the garbage of parsing and of each transaction is large: at Go's
// default of 100 the heap grows to twice what is kept. Measured on a
// million citations, two ingests side by side: at 50, 283 MB of peak
// anonymous memory instead of 409 MB, for 310 s instead of 302 s.
const writeGCPercent = 50

// tuneGCForWrites sets the collector for a command that writes in bulk,
// unless GOGC says otherwise.
func tuneGCForWrites() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(writeGCPercent)
	}
}

// checkGCPercent is the garbage collector's target for check. What check
// keeps is the dictionary pass's: a byte of term kind per term and the
// hash index's filters (1.25 bytes a term), some 420 MB at 30M citations,
// live for the file's whole check, while its passes over the indexes
// make garbage fast: at Go's default of 100 the heap grew to twice that,
// 835 MB of anonymous memory at 30M, the larger part of a peak RSS over
// 1 GiB.
const checkGCPercent = 50

// tuneGCForCheck sets the collector for check, unless GOGC says
// otherwise.
func tuneGCForCheck() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(checkGCPercent)
	}
}

// memoryLimit returns the memory the process may use in bytes: the
// machine's total, or its cgroup's limit when lower; 0 when unknown.
func memoryLimit() int64 {
	total := memTotal("/proc/meminfo")
	if c := cgroupLimit("/sys/fs/cgroup/memory.max"); c > 0 && (total == 0 || c < total) {
		return c
	}
	return total
}

// memTotal reads MemTotal from a /proc/meminfo file, in bytes.
func memTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb <= 0 {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// cgroupLimit reads a cgroup v2 memory.max file: a number of bytes, or
// "max" for no limit (0).
func cgroupLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// compactGCPercent is the garbage collector's target for compact. What it
// keeps is the merged run's filter (1.25 bytes a quad: 260 MB at ten
// million citations) for the whole merge of an index, and each
// transaction makes tens of megabytes of garbage (bbolt's buffers of the
// pages it writes): at Go's default of 100 the heap grew to twice what
// was live, 1.1 GB of anonymous memory at ten million citations.
const compactGCPercent = 25

// compactMemoryLimit is the soft limit on compact's Go memory: with it,
// the runtime hands freed pages back to the system as it goes instead of
// keeping them for reuse. Measured at ten million citations: peak RSS
// 1.02 GB with GOMEMLIMIT=448MiB against 1.19 GB without, the compaction
// 3 min 21 s against 3 min 3 s.
const compactMemoryLimit = 448 << 20

// tuneGCForCompact sets the collector for compact, unless GOGC or
// GOMEMLIMIT say otherwise.
func tuneGCForCompact() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(compactGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(compactMemoryLimit)
	}
}
