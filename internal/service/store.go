package service

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/store"
)

// Store is an open database as a front end holds it. Backend answers
// through internal/store's interfaces (the bbolt backend,
// internal/graph/citestore): a new caller, such as an HTTP handler, uses
// it. Quads is the quad store beneath, for the paths store cannot express
// yet: query's loader and lineage reader, export, and ingest's writes
// (internal/store's doc, "Where the users stand", says which and why).
// Both are the same open file; Close closes it.
type Store struct {
	store.Backend
	Quads *graph.Store
}

// OpenStore opens the database as Open does, with its backend.
func (d DB) OpenStore(readOnly bool) (*Store, error) {
	g, err := d.Open(readOnly)
	if err != nil {
		return nil, err
	}
	return &Store{Backend: citestore.New(g), Quads: g}, nil
}

// OpenServed opens the database as OpenStore does for a server, which
// keeps at most mapped bytes of the file mapped (graph.Options.MappedLimit:
// 0 means its default, a negative value no limit).
func (d DB) OpenServed(readOnly bool, mapped int64) (*Store, error) {
	g, err := d.open(&graph.Options{ReadOnly: readOnly, MappedLimit: mapped})
	if err != nil {
		return nil, err
	}
	return &Store{Backend: citestore.New(g), Quads: g}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.Quads.Close() }

// IngestRequest asks for one ingest: of the JSON Lines file or RDF file at
// Path, or, for RDF, of Stdin when it is set. Name is how messages name
// the input; Format is "jsonl", "nt", "nq" or "ttl".
type IngestRequest struct {
	Path, Name, Format string
	Stdin              io.Reader
	ingest.Options
	// Log, when set, is told what keeping the group records current at
	// the end of the run did (KeepRecords).
	Log io.Writer
}

// Ingest runs an ingest into the database. A JSON Lines input is validated
// before a database that does not exist is created, so that a rejected
// input leaves no file behind. A rejected record, a conflicting citation
// id and an RDF syntax error are Rejected; the summary says how far the
// run got whatever the error.
func (d DB) Ingest(ctx context.Context, req IngestRequest) (ingest.Summary, error) {
	var st *graph.Store
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	opts := req.Options
	if _, err := os.Stat(d.Path); errors.Is(err, os.ErrNotExist) && req.Format == "jsonl" {
		opts.Open = func() (*graph.Store, error) {
			var err error
			st, err = d.Open(false)
			return st, err
		}
	} else {
		var err error
		if st, err = d.Open(false); err != nil {
			return ingest.Summary{}, err
		}
	}
	var sum ingest.Summary
	var err error
	switch {
	case req.Format == "jsonl":
		sum, err = ingest.File(ctx, st, req.Path, req.Name, opts)
	case req.Stdin != nil:
		sum, err = ingest.RDF(ctx, st, req.Stdin, req.Name, req.Format, opts)
	default:
		sum, err = ingest.RDFFile(ctx, st, req.Path, req.Name, req.Format, opts)
	}
	if (err == nil || errors.Is(err, ingest.ErrInvalidRecords)) && st != nil {
		log := req.Log
		if log == nil {
			log = io.Discard
		}
		if kerr := KeepRecords(ctx, st, log, d.Path); kerr != nil {
			return sum, kerr
		}
	}
	var re *ingest.RecordError
	var ce *ingest.ConflictError
	var se *ingest.SyntaxError
	if errors.As(err, &re) || errors.As(err, &ce) || errors.As(err, &se) {
		err = InputError{Err: err}
	}
	return sum, err
}
