package store

import (
	"cmp"
	"context"
	"errors"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
)

// ErrConflict is returned (wrapped in a *ConflictError) by Append when a
// citation id of the batch is stored, or repeated in the batch, with other
// content.
var ErrConflict = errors.New("citation id already names other content")

// ErrDamaged marks an answer that finds the stored data contradicting
// itself (a policy's stored text that does not match its stored digest):
// the database is damaged, not the request wrong. It is the
// backend-independent form of graph.ErrCorrupt, with the same text, and
// the CLI exits 5 for both.
var ErrDamaged = errors.New("store is inconsistent")

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
	// citation with the given id, and false if none is stored. A citation
	// stored with two different digests (only RDF input can write that:
	// Appender refuses it) differs from every record, so Digest returns a
	// *ConflictError (Where: "the database") for it rather than pick one.
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
	// Citations returns the citations with the given ids, in their order
	// (nil for an id not stored), each whole: every stored field, the
	// step log parsed (Normalization.Steps), its normalization under the
	// policy with digest policyDigest (Norm nil if none) and Under naming
	// every policy it was normalized under. It is what a lineage reads of
	// the citations the other lookups named.
	Citations(ctx context.Context, policyDigest string, ids []string) ([]*Citation, error)
	// ByTextDigest returns the ids of the citations with a retrieval one
	// of whose extractions found a main text with exactly this digest
	// (Extraction.TextDigest; current or not: the caller decides).
	ByTextDigest(ctx context.Context, digest string) ([]string, error)
	// ByFinalURL calls fn, one retrieval at a time, with the ids (sorted)
	// of the citations of each retrieval whose final URL is exactly url,
	// until fn returns false: a lineage stops reading redirect sources once
	// it has more than --max-shared.
	ByFinalURL(ctx context.Context, url string, fn func(ids []string) bool) error
	// ByRelationTarget returns the ids of the citations with a relation
	// (declared or detected) whose target is exactly target.
	ByRelationTarget(ctx context.Context, target string) ([]string, error)
}

// Reader is every read a backend answers.
type Reader interface {
	Lookup
	Catalog
	Scanner
}

// Viewer runs a group of reads on one consistent view of the backend: a
// lineage makes hundreds of small reads, and the bbolt backend answers
// them on one read transaction (with its caches) rather than one each.
// fn must not write, nor open a second view inside the first: in the
// bbolt backend that deadlocks with a writer growing the file.
type Viewer interface {
	View(ctx context.Context, fn func(Reader) error) error
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

// Catalog lists what a whole-database query chooses among and warns of
// before it scans: the policies stored, with their texts, and the runs.
// They are few. A scan started after a Catalog sees at least what it saw:
// the store is append-only, so a policy it lists stays.
type Catalog interface {
	// StoredPolicies returns every policy stored, with its node, text and
	// last ingest run, ordered by that run (oldest first), then digest.
	StoredPolicies(ctx context.Context) ([]PolicyRef, error)
	// Runs returns every ingest and resolve run, in start order.
	Runs(ctx context.Context) ([]Run, error)
}

// Backend is everything a backend implements.
type Backend interface {
	Reader
	Viewer
	Appender
	Checker
}

// Handle is a scan's stand-in for a text: equal handles are equal values,
// within one scan and one field. Handle 0 is "absent". Handles are at
// most Texts.Len(f), so that a query can index arrays by them: dense per
// field for a Dict, term ids (dense over every term) in the bbolt backend.
type Handle uint32

// Fields says which fields of a Row a scan must fill; a backend may skip
// reading the rest, which is what makes a grouping scan lean.
type Fields uint32

// The fields a scan can fill. Each is one field of Row, and one space of
// handles.
const (
	FieldRaw       Fields = 1 << iota // the raw URL
	FieldKey                          // the comparison key under the scan's policy
	FieldContent                      // the content hashes of its retrievals
	FieldFinalURL                     // the final URLs of its retrievals
	FieldCanonical                    // the URLs its retrievals' canonical declarations name
	FieldRelations                    // the targets of its relations, declared or detected
	// FieldEvidence: the content evidence of its successful retrievals
	// (Row.Evidence); its handle space is the text digests'. The content
	// hashes in it are handles of FieldContent, so asking for it fills
	// the FieldContent space too (Row.Content only when that is asked).
	FieldEvidence
	// FieldRetrieval is the handle space of Evidence.Retrieval (texts:
	// model.RetrievalIRI). It is filled with FieldEvidence and asks for
	// nothing by itself.
	FieldRetrieval
	// FieldCitation makes the scan's Texts.Citations answer: whole
	// citations of scanned rows, with what a review group lists of a
	// member (id, raw URL and fragment, the normalization with its rules
	// but not its parsed step log, retrievals with their outcome, final
	// URL, status, content hash, hops' host changes, canonical
	// declarations and current evidence, relations, passage checks).
	// It fills no Row field.
	FieldCitation
	// FieldDetail, with FieldCitation, makes those citations complete:
	// every stored literal besides (answer, engine, question, position,
	// observation time, base URL, node names, hop details, the
	// extraction's details), as a whole snapshot shows them.
	FieldDetail
)

// Row is one citation as a scan hands it over: the citation id as text
// (output needs it) and the compared fields as handles, each list sorted
// and without repeats. The Row and its slices are reused for the next
// row; copy what must outlive the call.
type Row struct {
	ID        string
	Raw       Handle
	Key       Handle // under the scan's policy; 0 if rejected or never normalized under it
	Content   []Handle
	FinalURL  []Handle
	Canonical []Handle
	Relations []Handle
	// Rejected (with FieldKey) says the citation was normalized under the
	// scan's policy and the policy rejected its raw URL: Key is 0 both for
	// that and for a citation never normalized under it, which grouping
	// counts apart.
	Rejected bool
	// KeyContent (with FieldKey) says Key needs content to compare: a
	// host rule of the policy says that server defines what the path
	// means (normalize.CompareContent), so equal keys alone are no match.
	KeyContent bool
	// Redirects (with FieldFinalURL: FieldFinalURL handles) are the final
	// URLs of its retrievals that were redirected (hops and a final URL)
	// without any hop changing host (normalize.Result.Host), sorted and
	// without repeats: grouping joins a key to such a destination's.
	Redirects []Handle
	// Related (with FieldRelations) says the citation has anything
	// grouping's relations read: a relation (declared or detected), a
	// canonical declaration, or a redirected retrieval with a final URL.
	Related bool
	// Evidence (FieldEvidence) is one entry per successful retrieval
	// (model.Successful, decided from its outcome, final status and the
	// soft error of its current extraction, model.CompareExtractions),
	// sorted by Content, then Digest, then SimHash; two retrievals with the
	// same evidence are two entries.
	Evidence []Evidence
}

// Evidence is what grouping compares of one successful retrieval.
type Evidence struct {
	// Retrieval (a FieldRetrieval handle) names the retrieval: the
	// citations of one raw URL share a fetch, and grouping counts
	// distinct retrievals, not citations.
	Retrieval Handle
	Content   Handle // its content hash (a FieldContent handle), 0 for none
	Digest    Handle // its current extraction's text digest (a FieldEvidence handle), 0 for none
	SimHash   uint64 // its current extraction's SimHash, when HasSim
	HasSim    bool
}

// CompareEvidence is the order of Row.Evidence.
func CompareEvidence(a, b Evidence) int {
	switch {
	case a.Content != b.Content:
		return cmp.Compare(a.Content, b.Content)
	case a.Digest != b.Digest:
		return cmp.Compare(a.Digest, b.Digest)
	case a.SimHash != b.SimHash:
		return cmp.Compare(a.SimHash, b.SimHash)
	case a.HasSim != b.HasSim:
		return compareBool(a.HasSim, b.HasSim)
	default:
		return cmp.Compare(a.Retrieval, b.Retrieval)
	}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	default:
		return 1
	}
}

// Scanner streams every citation once, in citation-id order (byte order),
// with the fields asked for; fields not asked for are left zero. The
// Texts it returns resolve the scan's handles after it, and build the
// whole citations of the rows a query decides to show (FieldCitation).
type Scanner interface {
	Scan(ctx context.Context, policyDigest string, f Fields, fn func(*Row) error) (Texts, error)
}

// Texts resolves the handles of one scan.
type Texts interface {
	// Text returns the value of handle h of field f ("" for 0).
	Text(f Fields, h Handle) string
	// Len returns the largest handle of field f.
	Len(f Fields) int
	// Citations sets dst[i] to the citation of the scan's row rows[i]
	// (rows are numbered from 0 in scan order), under the scan's policy,
	// as FieldCitation and FieldDetail ask. It answers from what the scan
	// read, never by a second read of the database, so that grouping can
	// build the members it lists a group at a time: a million citations
	// cannot be read twice within the time grouping takes. It is safe for
	// concurrent use; len(dst) must be at least len(rows). Without
	// FieldCitation it leaves dst as it is.
	Citations(rows []int32, dst []Citation)
}

// Dict interns the texts of one scan, field by field: the Texts of a
// backend that has no dense ids of its own (a SQL backend's dictionary
// encoding while reading the ordered SELECT). The zero Dict is empty and
// ready.
type Dict struct {
	ids   map[Fields]map[string]Handle
	texts map[Fields][]string
}

// Intern returns the handle of s in field f, giving it the next one if s
// is new.
func (d *Dict) Intern(f Fields, s string) Handle {
	if d.ids == nil {
		d.ids, d.texts = map[Fields]map[string]Handle{}, map[Fields][]string{}
	}
	m := d.ids[f]
	if m == nil {
		m = map[string]Handle{}
		d.ids[f] = m
		d.texts[f] = []string{""}
	}
	h, ok := m[s]
	if !ok {
		h = Handle(len(d.texts[f]))
		m[s] = h
		d.texts[f] = append(d.texts[f], s)
	}
	return h
}

// Text implements Texts.
func (d *Dict) Text(f Fields, h Handle) string {
	if t := d.texts[f]; int(h) < len(t) {
		return t[h]
	}
	return ""
}

// Len implements Texts.
func (d *Dict) Len(f Fields) int { return max(0, len(d.texts[f])-1) }
