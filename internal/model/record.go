package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"time"

	"github.com/provgraph/provgraph/internal/vocab"
)

// Record is one citation observation, one line of the JSON Lines input.
// Field names are the input's. Integers keep their lexical form (Integer),
// so what reaches the graph is what the input said.
type Record struct {
	CitationID string     `json:"citation_id,omitempty"`
	Engine     string     `json:"engine,omitempty"`
	AnswerID   string     `json:"answer_id,omitempty"`
	Position   Integer    `json:"position,omitempty"`
	Question   string     `json:"question,omitempty"`
	ObservedAt string     `json:"observed_at"`
	RawURL     *string    `json:"raw_url"`
	BaseURL    string     `json:"base_url,omitempty"`
	Retrieval  *Retrieval `json:"retrieval,omitempty"`
	Relations  []Relation `json:"relations,omitempty"`
	// CitedText is the passage the answer attributed to the source, and
	// CitedTitle the title the engine displayed for it: what a reviewer
	// compares with the page (resolve checks the passage against the
	// extracted main text).
	CitedText  string `json:"cited_text,omitempty"`
	CitedTitle string `json:"cited_title,omitempty"`
}

// Retrieval is what a fetch of the raw URL observed.
type Retrieval struct {
	RetrievedAt  string      `json:"retrieved_at,omitempty"`
	Hops         []Hop       `json:"hops,omitempty"`
	FinalURL     string      `json:"final_url,omitempty"`
	FinalStatus  Integer     `json:"final_status,omitempty"`
	ContentHash  string      `json:"content_hash,omitempty"`
	ContentType  string      `json:"content_type,omitempty"`
	Canonical    []Canonical `json:"canonical,omitempty"`
	SnapshotRef  string      `json:"snapshot_ref,omitempty"`
	Outcome      string      `json:"outcome,omitempty"`
	OutcomeError string      `json:"outcome_error,omitempty"`

	// CanonicalDropped counts the canonical declarations the response made
	// beyond those the fetcher kept (pg:canonicalDropped); zero when none
	// were dropped.
	CanonicalDropped int `json:"canonical_dropped,omitempty"`
}

// Hop is one redirect: from, to, the status that caused it and when.
// Location is the Location header exactly as received, when the fetcher
// recorded it; To is then that reference resolved against From.
type Hop struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	Status   Integer `json:"status"`
	At       string  `json:"at,omitempty"`
	Location string  `json:"location,omitempty"`
}

// Canonical is a canonical declaration as observed.
type Canonical struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

// Relation links the cited resource to another one: a format variant, a
// mirror, a syndicated copy or an archive snapshot.
type Relation struct {
	Type       string `json:"type"`
	Target     string `json:"target"`
	Format     string `json:"format,omitempty"`
	CapturedAt string `json:"captured_at,omitempty"`
}

// Relation kinds, as the input names them (Relation.Type).
const (
	RelFormatOf      = "format_of"
	RelMirrorOf      = "mirror_of"
	RelSyndicationOf = "syndication_of"
	RelArchiveOf     = "archive_of"
)

// Relation evidence (pg:evidence): whether the input declared a relation
// or ingest detected it from the cited URL itself (an archive snapshot, an
// AMP cache URL). The queries show it; a detected relation is a guess from
// the URL's shape, a declared one is what the producer said.
const (
	EvidenceDeclared = "declared"
	EvidenceDetected = "detected"
)

// RelSameText is the group relation between two review groups whose
// successful retrievals have the same main text (an equal text digest) or a
// near-identical one (SimHashes within the extractor's threshold): a
// syndicated copy, a mirror on another host. It never joins the groups and
// is always marked for review. GroupRelationKinds describes it.
const RelSameText = "same-text"

// GroupRelationKind is a kind of relation between review groups that the
// groups query derives (besides the relation kinds of the input, which it
// lists too), with its one description: the export's codebook and the
// groups command's help quote it.
type GroupRelationKind struct {
	Name        string
	Description string
}

// GroupRelationKinds lists the derived group relation kinds.
var GroupRelationKinds = []GroupRelationKind{
	{"cross-host-redirect", "a member's retrieval redirects to a URL on another host"},
	{"canonical", "a member's page declares a canonical URL of another group or not cited"},
	{"shared-redirect-target", "a member redirects to a target that more than max-shared groups redirect to: not duplicate evidence"},
	{"same-content-hash", "successful retrievals of the two groups returned the same bytes (content hash)"},
	{RelSameText, "successful retrievals of the two groups have the same main text (text digest) or a near-identical one (SimHash within the threshold): a syndicated copy or a mirror, for review, never merged"},
}

// RelationKind is one kind of relation between a cited resource and
// another: its input name, the class of the qualified relation node and the
// direct property ingest writes for it, and its one description. The graph
// has the class; the input, the queries' JSON and the text output have the
// name, so the two are kept side by side here and nowhere else.
type RelationKind struct {
	Name        string
	Class       string // pg: class of the relation node
	Property    string // pg: direct property from the raw URL to the target
	Description string
}

// RelationKinds lists the relation kinds in the order the input's schema
// and error messages list them.
var RelationKinds = []RelationKind{
	{RelFormatOf, vocab.FormatRelation, vocab.FormatOf, "the target is the same document in another format (AMP, print, mobile, PDF, reader view)"},
	{RelMirrorOf, vocab.MirrorRelation, vocab.MirrorOf, "the target is a copy of the document on another host"},
	{RelSyndicationOf, vocab.SyndicationRelation, vocab.SyndicationOf, "the target is the original the document was syndicated from"},
	{RelArchiveOf, vocab.ArchiveRelation, vocab.ArchiveOf, "the document is an archive snapshot of the target"},
}

// RelationKindNamed returns the kind with the given input name.
func RelationKindNamed(name string) (RelationKind, bool) {
	for _, k := range RelationKinds {
		if k.Name == name {
			return k, true
		}
	}
	return RelationKind{}, false
}

// RelationKindOfClass returns the kind whose relation node has the given
// class IRI.
func RelationKindOfClass(class string) (RelationKind, bool) {
	for _, k := range RelationKinds {
		if k.Class == class {
			return k, true
		}
	}
	return RelationKind{}, false
}

// Canonical.Source values (pg:signalSource): where a canonical declaration
// was found. The fetcher finds the first two.
const (
	SourceHTMLLink   = "html-link"        // a link rel=canonical element in the page
	SourceLinkHeader = "http-link-header" // a Link response header with rel=canonical
	SourcePlatform   = "platform"         // stated by the hosting platform outside the page and its headers
)

// CanonicalSources lists the values Canonical.Source may take.
var CanonicalSources = []string{SourceHTMLLink, SourceLinkHeader, SourcePlatform}

// Formats are the values Relation.Format may take.
var Formats = []string{"amp", "print", "mobile", "pdf", "reader"}

// Integer is a JSON integer kept as its text. A quoted number is refused:
// the schema says number, and a string there is a sign of a broken
// producer.
type Integer string

// UnmarshalJSON implements json.Unmarshaler.
func (n *Integer) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] < '0' && b[0] != '-' || b[0] > '9' {
		what := "string"
		switch {
		case len(b) > 0 && b[0] == '{':
			what = "object"
		case len(b) > 0 && b[0] == '[':
			what = "array"
		case len(b) > 0 && (b[0] == 't' || b[0] == 'f'):
			what = "bool"
		case len(b) > 0 && b[0] == 'n':
			return nil // null: absent
		}
		return &json.UnmarshalTypeError{Value: what, Type: reflect.TypeOf(Integer(""))}
	}
	*n = Integer(b)
	return nil
}

// Digest returns a deterministic digest of the record's content: SHA-256
// over its canonical JSON form (fields in a fixed order, no whitespace), as
// "sha256:" and hex. Two lines that differ only in whitespace or field
// order have the same digest.
func (r *Record) Digest() string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // plain data
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ID returns the citation id: the given citation_id, or a digest of the
// record without it.
func (r *Record) ID() string {
	if r.CitationID != "" {
		return r.CitationID
	}
	d := r.Digest()
	return "c-" + d[len("sha256:"):len("sha256:")+32]
}

// FetchPolicy is the set of rules the retrievals of a resolve run follow,
// as the run's node records them (pg:maxRedirects and the rest). The
// fetcher (internal/resolve) applies it; internal/ingest records it.
type FetchPolicy struct {
	MaxRedirects int           // redirects followed at most
	MaxBodyBytes int64         // bytes of a final body read at most
	Timeout      time.Duration // per request, dialling to the end of the body
	UserAgent    string
	Schemes      []string // URL schemes fetched
	Ports        []int    // TCP ports connected to
	AllowPrivate bool     // non-public addresses and every port allowed
}
