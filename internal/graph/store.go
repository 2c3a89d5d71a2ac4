package graph

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultLockTimeout is how long Open waits for the file lock when
// Options.LockTimeout is zero: long enough to ride out another command
// finishing, short enough that a second writer is told at once that the
// store is busy.
const DefaultLockTimeout = 2 * time.Second

// lockPoll is how often bbolt retries the file lock (its flockRetryTimeout).
const lockPoll = 50 * time.Millisecond

// Options configures Open. A nil *Options means the zero Options, which are
// the defaults.
type Options struct {
	// LockTimeout is how long Open waits for the file lock held by another
	// process or another Store before failing with ErrLocked. Zero means
	// DefaultLockTimeout; a negative value means fail at once. bbolt polls
	// the lock every 50ms, so the wait is LockTimeout rounded up to that.
	LockTimeout time.Duration

	// ReadOnly opens the file with a shared lock, so that several readers
	// can open it together while no writer has it. Add fails with
	// ErrReadOnly, and a missing file is an error instead of being created.
	ReadOnly bool

	// NoSync skips fsync after each Add. A crash can then lose or corrupt
	// the store: use it only for tests and benchmarks.
	NoSync bool

	// MappedLimit bounds how many bytes of the file a writer, and Check
	// (which reads every page of the file), keep mapped, and so counted in
	// resident memory: when a write or a check finds more mapped, it drops
	// the mapping of the pages it has read (they stay in the kernel's page
	// cache and are mapped again when next read). Zero means
	// DefaultMappedLimit; a negative value means no limit, which saves a
	// long ingest the releases' CPU (a tenth of it at a million citations,
	// against 128 MiB) and lets it map the whole file. It
	// has effect on Linux only.
	MappedLimit int64

	// ResidentLimit bounds the file's mapped pages and the process's
	// anonymous memory together: when a writer finds more resident, it
	// drops its mapped pages as it does past MappedLimit, so that the
	// mapped pages give way while a large merge holds its output in
	// memory. Zero means DefaultResidentLimit; a negative value means no
	// such limit. Linux only, as MappedLimit; not used when MappedLimit
	// is negative.
	ResidentLimit int64

	// ReadOnce says the Store serves one short query and is then closed,
	// as a command such as lineage does: its reads go by pread (pread.go)
	// through one cache of the pages read, for the Store's life, instead
	// of through bbolt's mapping. Such a query reads a few thousand pages
	// at random, each for the first time in the process, and a first read
	// through the mapping is a page fault, ten times a pread on a
	// virtual machine (README, "what a page costs"). A long-lived reader
	// (a server) should not set it: the pages it maps are free to read
	// again. Only with ReadOnly, which guarantees that no page changes
	// while the Store is open; ignored otherwise.
	ReadOnce bool
}

// Store is a provgraph quad store in one bbolt file. Its methods are safe
// for concurrent use; Adds are serialized, and reads do not wait for them.
type Store struct {
	path     string
	readOnly bool
	db       *bbolt.DB

	// mu is held exclusively by Close, shared by a writer for its whole
	// write and by a read while it starts its transaction: Close waits for
	// both, and reads (Prepare's among them) start while a batch is being
	// written. wmu keeps writers one at a time.
	mu     sync.RWMutex
	wmu    sync.Mutex        // held by the one writer (Add, WriteRunFilters)
	hot    map[string]uint32 // term ids seen lately, by encoding; Add only
	lookup lookupScratch     // the slices of a batch's term lookups; Add only
	runs   []*run            // the hash index's runs with filters, once loaded; Add only
	loaded bool              // runs is loaded
	pg     *pager            // keeps the pages Add maps under Options.MappedLimit
	closed bool
	// file is the database file opened again read-only, for the reads of
	// read transactions that go by pread instead of the mapping
	// (pageCursor); nil when it could not be opened.
	file *os.File
	// once, set under Options.ReadOnce, keeps the pages read by pread for
	// every read of the Store (readonce.go).
	once *pageKeep
	// memo keeps the runs of POS and OSP from one read transaction to the
	// next on the same snapshot (runMemo).
	memo runMemo
	// ids keeps the ids Reader.ID found, for the transactions that
	// follow (idmemo.go).
	ids idMemo

	// limit is Options.MappedLimit resolved (bytes; none when <= 0), for
	// the pager of each Check. onCheck, for tests, is called with the
	// checker as Check starts reading.
	limit   int64
	onCheck func(*checker)
	// reads counts one-shot reads (Match) for limitReads; onReadRelease,
	// for tests, is called by each release limitReads makes.
	reads         atomic.Int64
	onReadRelease func()

	// watchMu guards the watcher of WatchMapped: watching counts the callers
	// whose interest has not ended, stopWatch ends the watcher.
	watchMu   sync.Mutex
	watching  int
	stopWatch func()

	// rc caches the list of the hash index's runs for the last committed
	// transaction seen, so that lookups in read transactions do not list
	// them again. After an Add it holds the runs with their filters.
	rmu sync.Mutex
	rc  struct {
		txid int
		runs []*run
		ok   bool
	}
	// qruns are the runs of POS and OSP as the last write transaction
	// left them (Add only).
	qruns quadRunCache

	// recent holds the terms the last write transactions added (Add
	// only); pmu serializes Prepare, whose ids found stay in prepKnown and
	// whose slices are prepScratch (prepare.go).
	recent      []recentAdded
	usedPrep    int // batches written with Prepare's lookups, for tests
	pmu         sync.Mutex
	prepKnown   map[string]uint32
	prepScratch lookupScratch
	// spare holds the buffers of the last batch AddPreparedWith wrote,
	// for the next Prepare (prepare.go, prepBufs).
	spareMu sync.Mutex
	spare   prepBufs
	// wbufs are the slices and arena of a write transaction, for the
	// next (Add only).
	wbufs writeBufs
}

// writeBufs are the slices a write transaction fills for its batch (the
// batch's SPO, POS and OSP tuples, which SPO found stored, which are new)
// and its arena, kept for the next one: a loader's batches are alike in
// size, and fresh memory for each is a page fault per page first touched.
// What a transaction returns in them (the new tuples, which Writer.Added
// reads) is valid until the next write transaction starts; the arena's
// blocks are freed (reset) as soon as the transaction is over.
type writeBufs struct {
	spo, fresh []tuple
	other      [2][]tuple
	dup        []bool
	mem        arena
}

// dict returns a dictionary reader for tx.
func (s *Store) dict(tx *bbolt.Tx) (*dictReader, error) {
	s.rmu.Lock()
	rc := s.rc
	s.rmu.Unlock()
	if rc.ok && rc.txid == tx.ID() {
		return newDictReader(tx, rc.runs, true)
	}
	runs, err := loadRuns(tx, false)
	if err != nil {
		return nil, err
	}
	s.setRuns(tx.ID(), runs)
	return newDictReader(tx, runs, true)
}

func (s *Store) setRuns(txid int, runs []*run) {
	s.rmu.Lock()
	s.rc.txid, s.rc.runs, s.rc.ok = txid, runs, true
	s.rmu.Unlock()
}

// Open opens the store in the file at path, creating and initializing the
// file when it is missing (unless opts.ReadOnly). It fails with ErrLocked
// when another process or Store holds the file past opts.LockTimeout, with
// ErrNotStore when the file is something else, and with ErrVersion when it
// is a store in a format this build cannot read. Errors are *Error.
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	fail := func(err error) (*Store, error) {
		return nil, &Error{Op: "open", Path: path, Err: err}
	}
	if path == "" {
		return fail(errors.New("no database file given"))
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fail(fmt.Errorf("%w: found a directory (a provgraph store is one file; cayley's own bolt backend used a directory)", ErrNotStore))
	case err == nil && fi.Size() == 0 && o.ReadOnly:
		return fail(fmt.Errorf("%w: found an empty file", ErrNotStore))
	case errors.Is(err, fs.ErrNotExist) && o.ReadOnly:
		return fail(fmt.Errorf("database file does not exist (a read-only open does not create it): %w", fs.ErrNotExist))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fail(err)
	case err == nil:
		// Before bbolt maps the file: a truncated file would fault.
		if err := checkFile(path); err != nil {
			return fail(err)
		}
	}

	db, err := openLocked(path, o.LockTimeout, &bbolt.Options{
		ReadOnly:     o.ReadOnly,
		NoSync:       o.NoSync,
		NoGrowSync:   o.NoSync,
		FreelistType: bbolt.FreelistMapType, // faster than the array freelist once the file is large
	})
	if err != nil {
		if errors.As(err, new(*Error)) {
			return nil, err
		}
		return fail(err)
	}

	s := &Store{path: path, readOnly: o.ReadOnly, db: db, hot: make(map[string]uint32), limit: o.MappedLimit}
	if s.limit == 0 {
		s.limit = DefaultMappedLimit
	}
	if !o.ReadOnly {
		s.pg = &pager{db: db, limit: s.limit, resident: o.ResidentLimit}
		if s.pg.resident == 0 {
			s.pg.resident = DefaultResidentLimit
		}
	}
	if err := s.setup(); err != nil {
		db.Close()
		if errors.As(err, new(*Error)) {
			return nil, err
		}
		return fail(err)
	}
	// A second descriptor of the file, for reads by pread (pageCursor).
	// Without it (an error opening it) reads go through bbolt's mapping.
	if f, err := os.Open(path); err == nil {
		s.file = f
		if o.ReadOnce && o.ReadOnly {
			s.once = newPageKeep(onceKeep)
			s.once.shared = true
		}
	}
	return s, nil
}

// openLocked opens the bbolt file at path with bo (openBolt), waiting up
// to lockTimeout for other processes' locks (Options.LockTimeout: 0 for
// DefaultLockTimeout, below 0 one attempt). A lock not got is ErrLocked,
// a file bbolt does not take for its own ErrNotStore; an *Error (damage
// met while opening) is returned as it is.
func openLocked(path string, lockTimeout time.Duration, bo *bbolt.Options) (*bbolt.DB, error) {
	timeout := lockTimeout
	if timeout == 0 {
		timeout = DefaultLockTimeout
	}
	// bbolt gives up once the time waited exceeds its Timeout less one 50ms
	// poll, and waits for ever with a zero Timeout.
	bo.Timeout = timeout + lockPoll
	if timeout < 0 {
		bo.Timeout = time.Nanosecond // one attempt
	}
	db, err := openBolt(path, bo)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		if lockTimeout < 0 {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("%w (waited %v)", ErrLocked, timeout)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return nil, fmt.Errorf("%w: not a bbolt database file, or a damaged one (bbolt: %v)", ErrNotStore, err)
	}
	return db, err
}

// setup checks the file's format and initializes a new file.
func (s *Store) setup() (err error) {
	g := s.guard("open", &err)
	defer g.done()
	var needInit bool
	err = s.db.View(func(tx *bbolt.Tx) (err error) {
		needInit, err = inspect(tx)
		return err
	})
	if err != nil {
		return err
	}
	if needInit {
		if s.readOnly {
			return fmt.Errorf("%w: found an empty database that was never initialized (open it writable once)", ErrNotStore)
		}
		if err := initStore(s.db); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		return nil
	}
	if !s.readOnly {
		if err := s.db.Update(upgradeMarker); err != nil {
			return fmt.Errorf("mark format version %d: %w", viewlessVersion, err)
		}
	}
	return nil
}

// Path returns the database file's path as given to Open.
func (s *Store) Path() string { return s.path }

// Close releases the file and its lock. Calling Close again does nothing.
// Close waits for running Matches to finish.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.file != nil {
		defer s.file.Close() // after bbolt's Close, which waits for the reads
	}
	if err := s.db.Close(); err != nil {
		return &Error{Op: "close", Path: s.path, Err: err}
	}
	return nil
}

// view runs fn in a read transaction, under a guard: a damaged file
// gives an *Error wrapping ErrCorrupt. Other errors are returned as they
// are.
func (s *Store) view(op string, fn func(tx *bbolt.Tx) error) error {
	return s.viewCalling(op, func(tx *bbolt.Tx, _ *guard) error { return fn(tx) })
}

// viewCalling is view for methods that call the caller back: fn marks
// those calls with the guard it gets (guard.call).
func (s *Store) viewCalling(op string, fn func(tx *bbolt.Tx, g *guard) error) (err error) {
	g := s.guard(op, &err)
	defer g.done()
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return &Error{Op: op, Path: s.path, Err: ErrClosed}
	}
	// bbolt's Close waits for open transactions; s.mu only guards the
	// start, so that Close cannot run between the check and Begin.
	tx, err := s.db.Begin(false)
	s.mu.RUnlock()
	if err != nil {
		return &Error{Op: op, Path: s.path, Err: err}
	}
	defer tx.Rollback()
	return fn(tx, g)
}

// Add writes quads in one bbolt transaction, so that either all of them are
// stored or, on error, none. Quads already stored, and repeats within the
// batch, are skipped; added counts only the new ones. Every quad is
// checked before anything is written, and the first invalid one is
// reported as a *QuadError (wrapping ErrInvalidQuad) inside the *Error.
//
// A literal without a datatype is stored as xsd:string and a literal with
// a language tag as rdf:langString; otherwise terms are stored exactly as
// given, including IRIs that are not valid IRIs. Batches of about 10,000
// quads amortize the transaction's fsync.
func (s *Store) Add(quads []Quad) (added int, err error) {
	return s.add(quads, false)
}

// add is Add. With strict, a quad that is already stored fails the whole
// batch with a *storedError naming it instead of being skipped; repeats
// within the batch are still skipped.
func (s *Store) add(quads []Quad, strict bool) (added int, err error) {
	return s.addWith(quads, strict, nil)
}

// addWith is add, calling fn (when set) in the transaction once the quads
// are added.
func (s *Store) addWith(quads []Quad, strict bool, fn func(*Writer) error) (added int, err error) {
	if s.readOnly {
		return 0, &Error{Op: "add", Path: s.path, Err: ErrReadOnly}
	}
	p, err := prepare(quads, s.takeSpare())
	if err != nil {
		return 0, &Error{Op: "add", Path: s.path, Err: err}
	}
	defer s.recycle(p)
	return s.addPrepared(p, strict, fn)
}

// addPrepared is addWith for a prepared batch.
func (s *Store) addPrepared(p *Prepared, strict bool, fn func(*Writer) error) (added int, err error) {
	fail := func(err error) (int, error) { return 0, &Error{Op: "add", Path: s.path, Err: err} }
	if s.readOnly {
		return fail(ErrReadOnly)
	}
	// One writer at a time (wmu); mu, shared, keeps Close out until the
	// write is done, and lets reads (Prepare's among them) start meanwhile.
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	// bbolt rolls the transaction back when it panics on a damaged page:
	// nothing of the batch is written.
	defer func() {
		if err != nil {
			added = 0
		}
	}()
	g := s.guard("add", &err)
	defer g.done()
	if s.closed {
		return fail(ErrClosed)
	}
	if p.n == 0 && fn == nil {
		return 0, nil
	}
	var dw *dictWriter
	var fresh []tuple
	var fnErr error
	var runs []*run
	var txid int
	var size int64
	err = s.update(func(tx *bbolt.Tx) error {
		if !s.loaded {
			var err error
			if s.runs, err = loadRuns(tx, true); err != nil {
				return err
			}
			s.loaded = true
		}
		s.pg.begin(tx.Size())
		s.qruns.begin()
		// One big merge per transaction, of the quads' runs or of a
		// view's run maps: each holds its output in memory until the
		// commit.
		budget := &mergeBudget{}
		var err error
		if p.n > 0 {
			var since []map[string]uint32
			ok := p.txid != 0
			if ok {
				since, ok = s.since(p.txid, tx.ID())
			}
			if !ok {
				clear(p.ids) // looked up here, in this transaction
			} else {
				s.usedPrep++
			}
			dw, runs, fresh, err = addTx(tx, p, ok, since, s.runs, s.hot, &s.lookup, s.pg, strict, budget, s.file, &s.qruns, &s.wbufs)
			added = len(fresh)
		} else {
			runs = s.runs
		}
		txid, size = tx.ID(), tx.Size()
		if err != nil || fn == nil {
			return err
		}
		w := &Writer{s: s, tx: tx, runs: runs, fresh: fresh, budget: budget}
		if dw != nil {
			w.terms = dw.added
		}
		if fnErr = g.call(func() error { return fn(w) }); fnErr != nil {
			return fnErr
		}
		if err := w.flushMaps(); err != nil {
			return err
		}
		if w.r != nil {
			if d := w.r.dmg.get(); d != nil {
				return d
			}
		}
		return w.dmg.get()
	})
	// Nothing refers to the arena once the transaction is over: a big
	// merge's blocks go back to the collector now, not at the next batch.
	s.wbufs.mem.reset()
	if fnErr != nil {
		return 0, fnErr
	}
	if err != nil {
		return fail(err)
	}
	s.runs = runs
	s.setRuns(txid, runs)
	s.qruns.committed(txid)
	var newTerms map[string]uint32
	if dw != nil {
		dw.commit()
		newTerms = dw.added
	}
	s.remember(txid, newTerms)
	s.pg.check(size) // committing reads pages too (bbolt's rebalancing)
	return added, nil
}

// storedError is returned by a strict add for a quad that is already
// stored.
type storedError struct {
	Index int  // position of the quad in the batch
	Quad  Quad // the quad, in stored form
}

func (e *storedError) Error() string {
	return fmt.Sprintf("quad %d (%s) is already stored", e.Index, e.Quad)
}

// addTx adds quads (valid, in stored form) in tx. With strict, a quad that
// is already stored fails it with a *storedError.
//
// When looked, p holds the ids of its terms as a lookup in a committed
// transaction found them (Store.Prepare), and since the terms added by
// the transactions committed after that one; otherwise the terms are
// looked up here.
func addTx(tx *bbolt.Tx, p *Prepared, looked bool, since []map[string]uint32, runs []*run, hot map[string]uint32, scratch *lookupScratch, pg *pager, strict bool, budget *mergeBudget, file *os.File, qc *quadRunCache, wb *writeBufs) (*dictWriter, []*run, []tuple, error) {
	cnt := readCounters(tx)
	mem := &wb.mem
	mem.reset()
	dw, err := newDictWriter(tx, runs, cnt.nextID, mem, hot, scratch, pg, budget)
	if err != nil {
		return nil, nil, nil, err
	}
	dw.pfile = file
	dw.since = since
	if !looked {
		dw.prefetch(p)
	}
	defer scratch.trim()
	spo := reuse(wb.spo, p.n)
	clear(spo) // the default graph's position is left 0 below
	for i := range p.n {
		for j := range 4 {
			enc := p.enc(4*i + j)
			if len(enc) == 0 {
				continue // the default graph
			}
			id, err := dw.id(enc, p.ids[4*i+j])
			if err != nil {
				return nil, nil, nil, err
			}
			spo[i][j] = id
		}
		// A quad with a term new in this transaction cannot be stored.
		if strict && max(spo[i][0], spo[i][1], spo[i][2], spo[i][3]) < cnt.nextID {
			stored := false
			err := scanRange(tx.Bucket([]byte(indexBuckets[idxSPO])), spo[i], spo[i], func(tuple) error {
				stored = true
				return errStop
			})
			if err != nil && err != errStop {
				return nil, nil, nil, err
			}
			if stored {
				q, _ := normQuad(p.quads[i]) // a strict add is not prepared: quads are kept
				return nil, nil, nil, &storedError{Index: i, Quad: q}
			}
		}
	}
	runs, err = dw.flush()
	if err != nil {
		return nil, nil, nil, err
	}

	// The SPO index says which quads are new; only those go into the
	// other two. Their POS and OSP orders are sorted on other goroutines
	// while SPO is written (a tenth of the writer's time at ten million
	// citations was these sorts), and the quads SPO finds stored are taken
	// out of them after: in a new input there are none.
	spo = sortTuples(spo)
	var other [2][]tuple
	var sorted sync.WaitGroup
	for k, ind := range []int{idxPOS, idxOSP} {
		sorted.Add(1)
		go func() {
			defer sorted.Done()
			o := reuse(wb.other[k], len(spo))
			for i, t := range spo {
				o[i] = order(ind, ids4(t))
			}
			slices.SortFunc(o, tuple.cmp)
			other[k] = o
		}()
	}
	dup := reuse(wb.dup, len(spo))
	clear(dup)
	w := &indexWriter{mem: mem, pg: pg}
	w.b = tx.Bucket([]byte(indexBuckets[idxSPO]))
	w.b.FillPercent = fillPercent
	err = w.insert(spo, func(i int) { dup[i] = true })
	sorted.Wait()
	if err != nil {
		return nil, nil, nil, err
	}
	fresh := wb.fresh[:0]
	for i, t := range spo {
		if !dup[i] {
			fresh = append(fresh, t)
		}
	}
	rw := &runWriter{mem: mem, pg: pg, budget: budget}
	for k, ind := range []int{idxPOS, idxOSP} {
		o := other[k]
		if len(fresh) < len(spo) {
			stored := make(map[tuple]bool, len(spo)-len(fresh))
			for i, t := range spo {
				if dup[i] {
					stored[order(ind, ids4(t))] = true
				}
			}
			o = slices.DeleteFunc(o, func(t tuple) bool { return stored[t] })
		}
		rw.b, rw.ind = tx.Bucket([]byte(indexBuckets[ind])), ind
		rw.known = qc.get(tx, k)
		left, err := rw.add(o)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("index %s: %w", indexBuckets[ind], err)
		}
		qc.pending[k] = left
	}
	wb.spo, wb.other, wb.dup, wb.fresh = spo, other, dup, fresh
	cnt.nextID = dw.next
	cnt.quads += uint64(len(fresh))
	if err := writeCounters(tx, cnt); err != nil {
		return nil, nil, nil, err
	}
	return dw, runs, fresh, nil
}

// fillPercent is how full bbolt packs a page it splits. Most index chunks
// and dictionary entries are appended at the end of a key range (new ids
// are the largest), so pages are packed nearly full instead of bbolt's
// default half.
const fillPercent = 0.9

// Count returns the number of quads stored.
func (s *Store) Count() (int64, error) {
	var n int64
	err := s.view("count", func(tx *bbolt.Tx) error {
		c, err := validCounters(tx)
		n = int64(c.quads)
		return err
	})
	return n, s.readError("count", err)
}

// Stats describes a store, for `provgraph check` and benchmarks.
type Stats struct {
	Format    string // the format name, "provgraph-store"
	Version   int    // the format version of the file
	Quads     int64  // quads stored
	Terms     int64  // distinct terms in the dictionary
	HashRuns  int    // sorted runs of the dictionary's hash index
	QuadRuns  int    // sorted runs of the POS and OSP indexes together
	FileBytes int64  // size of the database file
	FreeBytes int64  // how much of it free pages hold (provgraph vacuum gives them back)
}

// Stats returns the store's counters. It reads a few keys, not the data.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Format: formatName}
	err := s.view("stats", func(tx *bbolt.Tx) error {
		st.Version, _ = strconv.Atoi(string(tx.Bucket([]byte(metaBucket)).Get([]byte(keyVersion)))) // checked by Open
		c := readCounters(tx)
		st.Quads, st.Terms = int64(c.quads), int64(c.nextID)-1
		runs, err := loadRuns(tx, false)
		st.HashRuns = len(runs)
		if err != nil {
			return err
		}
		for _, ind := range []int{idxPOS, idxOSP} {
			qr, err := listQuadRuns(tx.Bucket([]byte(indexBuckets[ind])))
			if err != nil {
				return err
			}
			st.QuadRuns += len(qr)
		}
		st.FileBytes = tx.Size()
		return err
	})
	if err == nil {
		// From the free list's page: a read-only open does not load it.
		if n, ferr := freePageCount(s.path); ferr == nil {
			st.FreeBytes = int64(n) * int64(s.db.Info().PageSize)
		}
	}
	return st, s.readError("stats", err)
}
