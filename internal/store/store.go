package store

import (
	"context"
	"errors"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
)

// ErrConflict is returned (wrapped in a *ConflictError) by Append when a
// citation id of the batch is stored, or repeated in the batch, with other
// content.
var ErrConflict = errors.New("citation id already names other content")

// ConflictError names the citation id of an ErrConflict.
type ConflictError struct {
	CitationID string
	Where      string // "the database" or "the batch"
}

func (e *ConflictError) Error() string {
	return "citation " + e.CitationID + ": " + ErrConflict.Error() + " in " + e.Where
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Lookup answers the point questions of lineage, resolve, ingest and the
// HTTP service: which citations carry a given piece of evidence.
type Lookup interface {
	// Digest returns the stored digest (model.Record.Digest) of the
	// citation with the given id, and false if none is stored.
	Digest(ctx context.Context, citationID string) (digest string, ok bool, err error)
	// ByRaw returns the ids of the citations whose raw URL is exactly raw.
	ByRaw(ctx context.Context, raw string) ([]string, error)
	// ByKey returns the ids of the citations whose raw URL the policy
	// with digest policyDigest normalized to the comparison key key.
	ByKey(ctx context.Context, policyDigest, key string) ([]string, error)
	// ByContent returns the ids of the citations with a retrieval whose
	// content hash is exactly hash.
	ByContent(ctx context.Context, hash string) ([]string, error)
	// Policies returns every policy stored, sorted by digest.
	Policies(ctx context.Context) ([]model.PolicyRef, error)
}

// Batch is one atomic append: observations, each normalized under Policy.
type Batch struct {
	Policy  *normalize.Policy
	Records []*model.Record
}

// Appender stores batches. It never replaces or removes what is stored.
type Appender interface {
	// Append stores b atomically and returns how many of its records were
	// new. A record already stored with the same digest is skipped; one
	// stored (or repeated in b) with another digest fails the whole batch
	// with a *ConflictError.
	Append(ctx context.Context, b Batch) (added int, err error)
}

// Checker verifies a backend's consistency (both ends of every link
// exist, indexes agree); storetest runs it after every test.
type Checker interface {
	Check(ctx context.Context) error
}

// Backend is everything a backend implements.
type Backend interface {
	Lookup
	Appender
	Checker
}

// Handle is a scan's stand-in for a text: equal handles are equal values,
// within one scan and one field. Handle 0 is "absent". Handles are dense
// (1..n per field) so that a query can index arrays by them.
type Handle uint32

// Fields says which fields of a Row a scan must fill; a backend may skip
// reading the rest, which is what makes a grouping scan lean.
type Fields uint32

// The fields a scan can fill.
const (
	FieldRaw Fields = 1 << iota
	FieldKey
	FieldContent
	FieldFinalURL
	FieldCanonical
	FieldRelations
)

// Row is one citation as a scan hands it over: the citation id as text
// (output needs it) and the compared fields as handles. The Row and its
// slices are reused for the next row; copy what must outlive the call.
type Row struct {
	ID        string
	Raw       Handle
	Key       Handle // under the scan's policy; 0 if rejected or absent
	Content   []Handle
	FinalURL  []Handle
	Canonical []Handle
	Relations []Handle
}

// Scanner streams every citation once, in citation-id order, with the
// fields asked for. Text resolves a handle of a field back to its value
// after the scan, for the rows a query decides to show.
type Scanner interface {
	Scan(ctx context.Context, policyDigest string, f Fields, fn func(*Row) error) (Texts, error)
}

// Texts resolves the handles of one scan.
type Texts interface {
	Text(f Fields, h Handle) string
}
