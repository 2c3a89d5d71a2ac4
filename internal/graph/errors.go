package graph

import (
	"errors"
	"fmt"
)

// These errors are returned wrapped in an *Error (and, for ErrInvalidQuad,
// a *QuadError); test for them with errors.Is.
var (
	// ErrLocked is returned by Open when another process, or another Store
	// in this process, holds the file and did not release it within
	// Options.LockTimeout. A writer excludes everyone; readers exclude only
	// writers.
	ErrLocked = errors.New("database file is locked by another process or Store")

	// ErrNotStore is returned by Open when the file exists but is not a
	// provgraph store: not a bbolt file at all, a bbolt file of another
	// program, or a cayley store that provgraph did not create.
	ErrNotStore = errors.New("not a provgraph store")

	// ErrVersion is returned by Open when the file is a provgraph store in a
	// format version this build cannot read (usually written by a newer
	// provgraph).
	ErrVersion = errors.New("unsupported provgraph store format version")

	// ErrInvalidQuad is returned by Add when a quad breaks RDF's rules (a
	// literal subject, a predicate that is not an IRI, a zero term, text that
	// is not UTF-8, ...). Nothing of the batch is written.
	ErrInvalidQuad = errors.New("invalid quad")

	// ErrReadOnly is returned by Add on a Store opened with Options.ReadOnly.
	ErrReadOnly = errors.New("store is read-only")

	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("store is closed")

	// ErrCorrupt is returned by Check when the store is inconsistent, and
	// by Open and every read that finds the file damaged: truncated, a
	// meta page or a page that is not what it should be, an entry that
	// does not decode, an id outside the dictionary. The message names
	// what is wrong. Nothing is written to a damaged file.
	ErrCorrupt = errors.New("store is inconsistent")
)

// Error is the error returned by Open and by Store methods: the operation,
// the database file and the underlying error.
type Error struct {
	Op   string // "open", "add", "match", "check", ...
	Path string // the database file
	Err  error
}

func (e *Error) Error() string { return "graph: " + e.Op + " " + e.Path + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// QuadError says which quad of a batch is invalid and why. It wraps
// ErrInvalidQuad.
type QuadError struct {
	Index  int    // position of the quad in the batch given to Add
	Quad   Quad   // the quad as given
	Reason string // what is wrong with it
}

func (e *QuadError) Error() string {
	return fmt.Sprintf("invalid quad %d (%s): %s", e.Index, e.Quad, e.Reason)
}

func (e *QuadError) Unwrap() error { return ErrInvalidQuad }
