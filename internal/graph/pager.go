package graph

import (
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
)

// DefaultMappedLimit is how many bytes of the database file a writer lets
// stay mapped (Options.MappedLimit) when nothing else is asked for. Each
// release costs a madvise over the whole mapping and the faults that map
// the pages read after it again: at a million citations, an ingest spent
// 114 s of CPU at 128 MiB, 103 s at 256 MiB and 93 s at 512 MiB, its peak
// resident memory 457, 550 and 807 MB (bench/ingestprof -mapped-limit).
// 256 MiB keeps a ten-million-citation ingest, whose writing peaked at
// 564 MiB of anonymous memory, under a gibibyte.
const DefaultMappedLimit = 256 << 20

// DefaultResidentLimit is the resident memory (the file's mapped pages and
// anonymous memory together) past which a writer drops its mapped pages
// even under its MappedLimit (Options.ResidentLimit). The largest merges
// of an ingest (four runs of the hash index's level 4 into one of 20
// million entries, which bbolt holds twice until the commit) add some 300
// to 330 MB of anonymous memory for a few seconds; with up to 256 MiB of
// the file mapped on top, a 10M ingest (build 67f4324, before this limit)
// reached 968 MiB at 865 s and 1,063 MiB at 4,209 s. The mapped pages are
// the part that can give way.
const DefaultResidentLimit = 896 << 20

// residentMemory is residentBytes, a variable for tests.
var residentMemory = residentBytes

// mappedCheckEvery is how many random reads pass between two looks at how
// much of the file is mapped. A read maps more than its page: Linux maps
// pages around it (fault-around, 64 KiB), and on kernels whose page cache
// holds files in large folios (ext4 on Linux 6.18 here) the whole folio
// the page is in, up to 2 MiB, whatever madvise says (bench/foliomap.py
// measures it: 1.87 to 1.96 MB mapped a touch). At 64 reads a look, an
// incremental ingest into the 10M file overshot the 256 MiB limit by up
// to 280 MB; at 16 the overshoot is at most 32 MiB, and a look costs
// about 1.3 µs against the several microseconds of each read.
const mappedCheckEvery = 16

// pager keeps the pages of the file a write transaction has mapped under
// a limit. bbolt reads the file through a shared read-only mapping, and
// every page a read touches stays mapped, with up to 15 neighbours
// (Linux's fault-around, whatever madvise says): a batch of a large
// ingest, with its thousands of lookups of stored terms and index chunks
// spread over the whole file, would otherwise map most of it. The pages
// are the kernel's page cache either way; what the limit bounds is the
// resident memory the process is charged with, at the cost of faulting
// pages in again after each release (measured in the README).
//
// The write path calls begin at the start of each transaction, read
// after each random read, and check after each commit and each deletion
// of a run; a nil *pager does nothing. Store.Check has a pager of its own
// for its read transaction (begun with the transaction's size), and calls
// read for each chunk, term and lookup it reads: it reads every page of
// the file, which would otherwise all stay mapped.
//
// Only the pages of a transaction are dropped, and only while it is open:
// the mapping cannot move then (bbolt remaps under a lock every
// transaction holds), and the slices bbolt returned into it stay valid,
// as a dropped page of a file mapping is faulted in again from the page
// cache, unchanged, when next read.
type pager struct {
	db    *bbolt.DB
	limit int64 // bytes; the check is off when <= 0
	// resident is the limit on mapped pages and anonymous memory
	// together (bytes; none when <= 0).
	resident int64
	size     int64 // bytes of the mapping every page of which is valid now
	n        int   // reads since the last check
	// keep are ranges of the mapping a release spares (LimitMapped's
	// pinned filters), sorted.
	keep []span

	onCheck   func() // called by each check, for tests
	onRelease func() // called by each release, for tests
	// onWatch is called by each look of during's goroutine, on that
	// goroutine, with whether it released the pages, for tests.
	onWatch func(released bool)
}

// begin is called at the start of a write transaction whose size
// (Tx.Size) is size: until the transaction commits, bbolt neither moves
// nor shrinks the mapping, which covers at least that many bytes.
func (p *pager) begin(size int64) {
	if p != nil {
		p.size, p.n = size, 0
	}
}

// read counts one random read and releases the mapped pages when they
// exceed the limit.
func (p *pager) read() {
	if p == nil || p.limit <= 0 {
		return
	}
	if p.n++; p.n < mappedCheckEvery {
		return
	}
	p.n = 0
	p.check(p.size)
}

// check releases the mapping's first size bytes when more than the limit
// of the file is mapped.
func (p *pager) check(size int64) {
	if p == nil || p.limit <= 0 {
		return
	}
	if p.onCheck != nil {
		p.onCheck()
	}
	if p.over() {
		releasePagesExcept(p.db, size, p.keep)
		if p.onRelease != nil {
			p.onRelease()
		}
	}
}

// watchEvery is how often a pager's watcher (watch) looks at the mapped
// pages. What it watches maps the file fast: bbolt's DeleteBucket walks
// every page of a run, and a commit reads again every page of the nodes
// the transaction changed; with the page cache in large folios each read
// maps up to 2 MiB, and a walk mapped a whole run, over a gigabyte, in
// the 10 ms a Go timer took to fire (an incremental ingest of a million
// citations into the 10M file peaked at 1.72 GB, 1.2 GB of it mapped
// file). The watcher sleeps by nanosleep, as a Go timer's sleep lasts at
// least a millisecond here; a look costs about 1.3 µs.
const watchEvery = 200 * time.Microsecond

// watch starts a goroutine that looks at the mapped pages every
// watchEvery, and releases them past the limits as check does, until stop
// is called; a nil pager, or one without a limit, starts nothing. Each
// release holds a read transaction, so that bbolt cannot remap the file
// under the madvise: a commit that grows the file remaps it, and a
// release of the old range after it would drop pages of whatever was
// mapped there since. The read transaction waits for no writer (bbolt's
// remap waits for it instead), so the watcher may run during a write
// transaction's commit.
func (p *pager) watch() (stop func()) {
	if p == nil || p.limit <= 0 {
		return func() {}
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			sleepBriefly(watchEvery)
			over := p.over()
			if over {
				p.releaseSafely()
			}
			if p.onWatch != nil {
				p.onWatch(over)
			}
		}
	}()
	return func() {
		done.Store(true)
		wg.Wait()
	}
}

// releaseSafely releases the mapped pages of the file, holding a read
// transaction while it does (watch says why).
func (p *pager) releaseSafely() {
	tx, err := p.db.Begin(false)
	if err != nil {
		return // closed: nothing is mapped
	}
	releasePagesExcept(p.db, tx.Size(), p.keep)
	tx.Rollback()
	if p.onRelease != nil {
		p.onRelease()
	}
}

// during runs fn, a bbolt call that reads many pages the pager does not
// count (DeleteBucket), while the pager watches the mapped pages (watch);
// then checks once. The mapped pages are released first, whatever their
// amount: the walk maps the whole run so fast that the watcher may look
// only after it, and what was mapped before would add to it.
func (p *pager) during(fn func() error) error {
	if p == nil || p.limit <= 0 {
		return fn()
	}
	p.releaseSafely()
	stop := p.watch()
	err := fn()
	stop()
	p.check(p.size)
	return err
}

// update runs fn in a write transaction as bbolt's DB.Update does, with
// the store's pager watching the mapped pages while bbolt commits (watch):
// the commit reads again every page of the nodes the transaction
// changed, which the pager released since they were first read. An
// ingest's batch changes thousands of leaves all over the file, and its
// commit mapped up to 450 MB past the limit before the check after it.
func (s *Store) update(fn func(*bbolt.Tx) error) error {
	var stop func()
	err := s.db.Update(func(tx *bbolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if s.pg != nil && s.pg.limit > 0 {
			s.pg.releaseSafely() // as during does
		}
		stop = s.pg.watch()
		return nil
	})
	if stop != nil {
		stop()
	}
	return err
}

// over reports whether the mapped pages, or they and the anonymous memory
// together, are past the limits. It reads only fields fixed during the
// transaction, so that during's goroutine can call it.
func (p *pager) over() bool {
	m, anon, ok := residentMemory()
	return ok && (m > p.limit || p.resident > 0 && m+anon > p.resident)
}

// TrimMapped releases the pages of the file mapped into the process when
// more of it than the store's mapped limit (Options.MappedLimit) is, as a
// writer's pager does, and reports whether it released them. A long-lived
// reader of random pages calls it after each answer: a server answering
// from the grouping view reads pages all over the file, each stays mapped
// (and counted in its resident memory) until released, and where the
// page cache holds the file in large folios each read maps up to 2 MiB: a
// bounded server on the ten-million-citation file mapped 5 GB in its
// first few pages. Safe at any time, during another goroutine's read or
// write transaction too: the release holds a read transaction of its own
// (releaseSafely). Linux only, as the limit; elsewhere it does nothing.
func (s *Store) TrimMapped() bool {
	if s.limit <= 0 || s.db == nil {
		return false
	}
	p := pager{db: s.db, limit: s.limit, onRelease: s.onReadRelease}
	if !p.over() {
		return false
	}
	p.releaseSafely()
	return true
}

// WatchMapped keeps the file's mapped pages under the store's mapped limit
// while the caller reads, and returns the function that ends the caller's
// interest (call it once the reads are done; later calls do nothing). One
// watcher serves every caller: it starts with the first and stops when
// the last is done, looking every watchEvery and releasing the pages past
// the limit as a writer's pager does, each release under a read
// transaction of its own (pager.watch). Why not TrimMapped alone: on a
// page cache of large folios each random read maps up to 2 MiB, and the
// group of 145 citations a server reads for one page of the queue at ten
// million citations mapped a gigabyte of the file, within one query. A
// store without a limit, or off Linux, starts nothing.
func (s *Store) WatchMapped() (done func()) {
	if s.limit <= 0 || s.db == nil {
		return func() {}
	}
	s.watchMu.Lock()
	if s.watching++; s.watching == 1 {
		p := &pager{db: s.db, limit: s.limit, onRelease: s.onReadRelease}
		s.stopWatch = p.watch()
	}
	s.watchMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.watchMu.Lock()
			defer s.watchMu.Unlock()
			if s.watching--; s.watching == 0 {
				s.stopWatch()
				s.stopWatch = nil
			}
		})
	}
}

// limitReads keeps the pages that one-shot reads (Match, and Objects,
// Subjects and the other reads made of it) map under the store's mapped
// limit: every mappedCheckEvery of them, the one ending in tx looks at
// the mapped pages and, past the limit, releases those of tx as a
// writer's pager does. Why: ingest's validation pass looks up the stored
// digest of every citation id of its input, one read each, and when the
// ids are stored (an interrupted ingest run again, an input given twice)
// those reads go all over the file: a re-run of a million-citation ingest
// mapped 935 MB of the file in its first minute, and of a 30M one 7.2 GB.
// Safe while other transactions run: the mapping cannot move while tx is
// open, and a dropped page is faulted in again, unchanged.
func (s *Store) limitReads(tx *bbolt.Tx) {
	if s.limit <= 0 || s.db == nil || s.reads.Add(1)%mappedCheckEvery != 0 {
		return
	}
	p := pager{db: s.db, limit: s.limit, onRelease: s.onReadRelease}
	p.check(tx.Size())
}

// LimitMapped releases the pages of the file that this Reader's
// transaction has mapped when more of the file than limit is (the store's
// mapped limit, Options.MappedLimit, when limit <= 0; nothing is released
// when the store has no limit), as a writer's pager does after its random
// reads. A long pass of point reads over the whole file (check's of a
// grouping view, which reads every citation) calls it every few hundred
// reads; a query reading one neighbourhood need not. It is safe while the
// Reader is in use, on its goroutine: the mapping cannot move during the
// transaction, and a dropped page is faulted in again, unchanged, when
// next read. It spares the filters of the POS and OSP runs the Reader has
// read, up to three quarters of limit (pinnedFilters): every lookup reads
// them again.
func (r *Reader) LimitMapped(limit int64) {
	if r.s.limit <= 0 || r.s.db == nil {
		return
	}
	if limit <= 0 {
		limit = r.s.limit
	}
	p := pager{db: r.s.db, limit: limit, keep: r.pinnedFilters(limit / 4 * 3)}
	p.check(r.tx.Size())
}

// inOrderKeep is how many pages each of InOrder's cursors keeps copies
// of (pageKeep): 8 MiB each at 4 KiB pages. At a million citations the
// check of a view spent 25 s of CPU in pread keeping none (re-reading
// only the page last read at each depth), 11 s keeping 256 and 7 s
// keeping 2,048.
const inOrderKeep = 2048

// InOrder says that the Reader's reads from now on go through much of
// the file in subject order, each node read once (a check of a view
// reads every citation so): its reads of a node's quads (Describe, and the
// patterns that fix a subject) and of terms by id then go by pread
// through kept pageCursors, which keep copies of the last inOrderKeep
// pages they read, instead of faulting each page in through the mapping.
// Point reads at random stay on the mapping, whose pages the next read
// may touch again.
func (r *Reader) InOrder() {
	if r.s.file == nil || r.runs.file != nil {
		return
	}
	r.runs.file, r.runs.spo = r.s.file, nil
	// The terms too: the nodes' literals were minted with them, in order.
	if pc := newPageCursor(r.s.file, r.tx, r.names.terms); pc != nil {
		pc.keepPages(inOrderKeep)
		r.names.pc, r.names.c, r.names.at = pc, nil, 0
	}
}
