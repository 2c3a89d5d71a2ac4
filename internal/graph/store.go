package graph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/cayleygraph/cayley/graph"
	ckv "github.com/cayleygraph/cayley/graph/kv"
	hkv "github.com/hidal-go/hidalgo/kv"
	hbolt "github.com/hidal-go/hidalgo/kv/bbolt"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// cayley and hidalgo are wired by direct constructors: bbolt.Open opens the
// file, hbolt.New wraps the *bbolt.DB as a hidalgo kv.KV, and ckv.Init and
// ckv.New put cayley's kv quad store on it. No blank import or name lookup
// in cayley's registry is involved. (Importing those packages still runs
// their init functions, which fill registries this package never reads.)

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
}

// Store is a provgraph quad store in one bbolt file. Its methods are safe
// for concurrent use; Adds are serialized, and reads do not wait for them.
type Store struct {
	path     string
	readOnly bool
	db       *bbolt.DB
	kv       hkv.KV

	// mu is held exclusively by Add (one writer at a time) and Close, and
	// shared while a read picks up qs.
	mu     sync.RWMutex
	qs     *ckv.QuadStore
	closed bool
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
	}

	timeout := o.LockTimeout
	if timeout == 0 {
		timeout = DefaultLockTimeout
	}
	// bbolt gives up once the time waited exceeds its Timeout less one 50ms
	// poll, and waits for ever with a zero Timeout.
	boltTimeout := timeout + lockPoll
	if timeout < 0 {
		boltTimeout = time.Nanosecond // one attempt
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      boltTimeout,
		ReadOnly:     o.ReadOnly,
		NoSync:       o.NoSync,
		NoGrowSync:   o.NoSync,
		FreelistType: bbolt.FreelistMapType, // faster than the array freelist once the file is large
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		if o.LockTimeout < 0 {
			return fail(ErrLocked)
		}
		return fail(fmt.Errorf("%w (waited %v)", ErrLocked, timeout))
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return fail(fmt.Errorf("%w: not a bbolt database file, or a damaged one (bbolt: %v)", ErrNotStore, err))
	case err != nil:
		return fail(err)
	}

	s := &Store{path: path, readOnly: o.ReadOnly, db: db, kv: hbolt.New(db)}
	if err := s.setup(); err != nil {
		db.Close()
		return fail(err)
	}
	return s, nil
}

// setup checks the file's format, initializes a new file, and starts
// cayley's quad store on it.
func (s *Store) setup() error {
	var needInit bool
	err := s.db.View(func(tx *bbolt.Tx) (err error) {
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
		if err := initStore(s.db, s.kv); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
	}
	qs, err := s.newQuadStore()
	if err != nil {
		return err
	}
	s.qs = qs
	return nil
}

// newQuadStore starts cayley's kv quad store on the open file. The Bloom
// filter that cayley keeps in memory to skip duplicate checks is disabled
// (no_bloom): it cost about 0.85 GB for 1.6M quads and changed no result.
func (s *Store) newQuadStore() (*ckv.QuadStore, error) {
	q, err := ckv.New(s.kv, graph.Options{ckv.OptNoBloom: true})
	if err != nil {
		return nil, fmt.Errorf("cayley: %w", err)
	}
	qs, ok := q.(*ckv.QuadStore)
	if !ok {
		q.Close()
		return nil, fmt.Errorf("cayley: unexpected quad store type %T", q)
	}
	return qs, nil
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
	if err := s.db.Close(); err != nil {
		return &Error{Op: "close", Path: s.path, Err: err}
	}
	return nil
}

// reader returns the quad store for a read.
func (s *Store) reader(op string) (*ckv.QuadStore, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, &Error{Op: op, Path: s.path, Err: ErrClosed}
	}
	return s.qs, nil
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
	fail := func(err error) (int, error) { return 0, &Error{Op: "add", Path: s.path, Err: err} }
	if s.readOnly {
		return fail(ErrReadOnly)
	}
	deltas := make([]graph.Delta, len(quads))
	for i, q := range quads {
		n, why := normQuad(q)
		if why != "" {
			return fail(&QuadError{Index: i, Quad: q, Reason: why})
		}
		deltas[i] = graph.Delta{Action: graph.Add, Quad: toCayley(n)}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fail(ErrClosed)
	}
	if len(deltas) == 0 {
		return 0, nil
	}
	ctx := context.Background()
	before, err := size(ctx, s.qs)
	if err != nil {
		return fail(err)
	}
	// ApplyDeltas runs one transaction and commits it only if every quad
	// was written. Duplicates are detected by the node IDs of each quad.
	if err := s.qs.ApplyDeltas(deltas, graph.IgnoreOpts{IgnoreDup: true}); err != nil {
		// cayley caches node IDs and buffers index entries in memory as it
		// writes, and keeps them when the transaction is rolled back. Start
		// a fresh quad store so that nothing from the failed batch leaks
		// into the next one.
		if qs, rerr := s.newQuadStore(); rerr == nil {
			s.qs = qs
		} else {
			err = errors.Join(err, rerr)
		}
		return fail(err)
	}
	after, err := size(ctx, s.qs)
	if err != nil {
		return fail(err)
	}
	// The file lock and s.mu make this Store the only writer, so the
	// difference is exactly what this batch added.
	return int(after - before), nil
}

// Count returns the number of quads stored.
func (s *Store) Count() (int64, error) {
	qs, err := s.reader("count")
	if err != nil {
		return 0, err
	}
	n, err := size(context.Background(), qs)
	if err != nil {
		return 0, &Error{Op: "count", Path: s.path, Err: err}
	}
	return n, nil
}

// size returns cayley's quad counter, which is kept in the same
// transaction as the quads it counts.
func size(ctx context.Context, qs *ckv.QuadStore) (int64, error) {
	st, err := qs.Stats(ctx, false)
	if errors.Is(err, ckv.ErrNoBucket) {
		return 0, nil // no quad was ever written
	}
	return st.Quads.Value, err
}
