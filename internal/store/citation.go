package store

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
)

// This file holds the read side's domain values: a citation as a backend
// hands it over (Citation, with its Normalization under one policy, its
// Retrievals with their Hops and Extractions, its Passage checks and
// Relations) and the policy it was read under (PolicyRef). They live here,
// not in internal/model, because they are stored answers, not
// observations: they carry what storing added (a node name, a hop's
// index and host change, whether a relation was declared or detected, a
// policy's text and last run) and are what every backend must build,
// whereas model's nouns are the input a backend is given. Every string is
// a stored literal, never derived or rewritten.

// PolicyRef is a normalization policy stored in the database: its name
// (model.PolicyRef), and the node, text and last run the queries need to
// choose it and rebuild its normalizer.
type PolicyRef struct {
	model.PolicyRef
	// Node is the policy's node (its IRI in the bbolt backend), Text the
	// policy as written, LastRun the start of the last ingest run that
	// used it ("" and zero when none).
	Node    string    `json:"-"`
	Text    string    `json:"-"`
	LastRun time.Time `json:"-"`
}

// Citation is one citation as stored, with what the queries need of it.
// Nothing here is derived or rewritten: every string is a stored literal.
type Citation struct {
	Node       string `json:"-"`
	ID         string `json:"citation_id"`
	Engine     string `json:"engine,omitempty"`
	AnswerID   string `json:"answer_id,omitempty"`
	Question   string `json:"question,omitempty"`
	Position   string `json:"position,omitempty"`
	ObservedAt string `json:"observed_at"`
	BaseURL    string `json:"base_url,omitempty"`
	Raw        string `json:"raw_url"`
	RawNode    string `json:"-"`
	Fragment   *string
	// Norm is the normalization under the snapshot's policy, nil when the
	// citation was never normalized under it.
	Norm       *Normalization
	Retrievals []*Retrieval
	Relations  []*Relation
	// Passages are the checks of the citation's cited_text against its
	// retrievals' extractions, empty without cited_text.
	Passages []*Passage `json:"-"`
	// Under names (name@version) every policy the citation was
	// normalized under, sorted: Lookup.Citations fills it, a scan does
	// not.
	Under []string `json:"-"`
}

// Normalization is one normalization of a raw URL.
type Normalization struct {
	Node string
	// Policy is the policy it is under, shared by all its normalizations.
	Policy *PolicyRef
	// Steps is the step log. Lineage, which shows it, fills it; Load
	// leaves it nil, because the queries over a whole database need only
	// Rules, and parsing a million step logs would cost as much as the
	// rest of the load.
	Steps []normalize.Step
	// Rules are the rules the step log names, each once, in the order of
	// their first step.
	Rules         []string
	ErrorCode     string
	ErrorMessage  string
	Key           string
	Compare       string
	Parsed        string
	HostRule      string
	RemovedParams []string
}

// Rejected reports whether the policy rejected the raw URL.
func (n *Normalization) Rejected() bool { return n.ErrorCode != "" }

// Retrieval is one fetch of a raw URL as stored. It is not model.Retrieval
// because the two marshal differently and model's JSON is fixed: model's is
// the input line (feeding Record.Digest, so its field order and string
// integers cannot change), this one is the queries' output, with the hops
// numbered and flagged (Hop), the status as a JSON number and empty lists
// written as []. The observed fields mean the same in both.
type Retrieval struct {
	Node         string            `json:"-"`
	RetrievedAt  string            `json:"retrieved_at,omitempty"`
	FinalURL     string            `json:"final_url,omitempty"`
	FinalStatus  Integer           `json:"final_status,omitempty"`
	ContentHash  string            `json:"content_hash,omitempty"`
	ContentType  string            `json:"content_type,omitempty"`
	SnapshotRef  string            `json:"snapshot_ref,omitempty"`
	Outcome      string            `json:"outcome,omitempty"`
	OutcomeError string            `json:"outcome_error,omitempty"`
	Hops         []Hop             `json:"hops"`
	Canonicals   []model.Canonical `json:"canonical"`
	// CanonicalDropped counts the canonical declarations the response made
	// beyond those kept (resolve keeps 100 per source); absent when none
	// were dropped.
	CanonicalDropped Integer `json:"canonical_dropped,omitempty"`
	// Extractions are the content evidence extracted from the final
	// response, in extractor order (Current is the last).
	Extractions []*Extraction `json:"extractions,omitempty"`
}

// CrossesHost reports whether any hop changed host.
func (r *Retrieval) CrossesHost() bool {
	for _, h := range r.Hops {
		if h.CrossesHost {
			return true
		}
	}
	return false
}

// Hop is one redirect as stored: the observation (model.Hop) with what the
// store adds to it, its position and whether it changed host. Index is
// pg:hopIndex, counted from 0; JSON has number, counted from 1 as the text
// output numbers hops (MarshalJSON).
type Hop struct {
	model.Hop
	Index       int
	CrossesHost bool
}

// Relation is a relation of the cited resource as stored: the observation
// (model.Relation), and whether the input declared it or ingest detected
// it. Embedding keeps the JSON fields in the input's order, then evidence.
type Relation struct {
	model.Relation
	Evidence string `json:"evidence"` // model.EvidenceDeclared or model.EvidenceDetected
}

// Extraction is the evidence one extraction derived from a retrieval's
// final response, as stored (a pg:Extraction and the pg:ExtractedEvidence
// it generated). A lean load reads only what grouping compares (extractor,
// text digest, SimHash, soft error).
type Extraction struct {
	Extractor string `json:"extractor"`
	// CaptureRef is where the bytes it was derived from are kept (the
	// response's pg:captureRef: a "warc:" reference), empty when it was
	// derived from the body as fetched.
	CaptureRef    string         `json:"capture_ref,omitempty"`
	MediaType     string         `json:"media_type,omitempty"`
	Method        string         `json:"method,omitempty"`
	Title         string         `json:"title,omitempty"`
	OGTitle       string         `json:"og_title,omitempty"`
	Language      string         `json:"language,omitempty"`
	Dates         []DeclaredDate `json:"dates,omitempty"`
	DatesDisagree bool           `json:"dates_disagree,omitempty"`
	TextDigest    string         `json:"text_digest,omitempty"`
	SimHash       string         `json:"simhash,omitempty"`
	Words         int            `json:"words"`
	SoftError     string         `json:"soft_error,omitempty"`
	Problem       string         `json:"problem,omitempty"`
}

// DeclaredDate is a date a page declares, as stored in pg:declaredDates.
type DeclaredDate struct {
	Source string `json:"source"`
	Value  string `json:"value"`
}

// Passage is the check of a citation's cited_text against the main text of
// one extraction (pg:PassageCheck): found, its score, how it was matched
// (exact, window, none) and the matched span's byte offsets in the
// normalized main text.
type Passage struct {
	Found     bool    `json:"found"`
	Score     float64 `json:"score"`
	Method    string  `json:"method,omitempty"`
	Span      *Span   `json:"span,omitempty"`
	Extractor string  `json:"extractor,omitempty"`
	// Against is the extraction it was checked against, one of the
	// citation's retrievals' Extractions.
	Against *Extraction `json:"-"`
}

// Span is a byte range [Start, End) of a normalized main text.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Current is the extraction of r the verdicts read: the one by the
// greatest extractor name and version (a re-extraction by a newer
// extractor supersedes the older, which is kept), nil when there is none.
func (r *Retrieval) Current() *Extraction {
	if len(r.Extractions) == 0 {
		return nil
	}
	return r.Extractions[len(r.Extractions)-1]
}

// Successful reports whether r is content evidence: its outcome is ok (or,
// for a retrieval given in the input, not recorded), its final status, if
// recorded, is 2xx, and its current extraction, if any, found no soft
// error (an error page, a soft 404, a login wall, an empty page). An
// unsuccessful retrieval's hashes and texts never confirm identity, make a
// conflict or relate groups.
func (r *Retrieval) Successful() bool {
	soft := ""
	if x := r.Current(); x != nil {
		soft = x.SoftError
	}
	return model.Successful(r.Outcome, string(r.FinalStatus), soft)
}

// Integer is an xsd:integer literal in the lexical form stored (a
// position, an HTTP status). JSON has it as a number (model.Integer, the
// input's, marshals as a string, which Record.Digest depends on); a stored form that
// is not an integer (possible only in RDF loaded from elsewhere) stays a
// string there, as it is: nothing is invented.
type Integer string

// MarshalJSON writes n as a JSON number when it is an integer.
func (n Integer) MarshalJSON() ([]byte, error) {
	if v, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return strconv.AppendInt(nil, v, 10), nil
	}
	return appendJSONText(nil, string(n)), nil
}

// MarshalJSON writes a hop with number, counted from 1 as the text output
// counts hops (Index is counted from 0, as pg:hopIndex), and its status as
// a number.
func (h Hop) MarshalJSON() ([]byte, error) {
	return marshalText(struct {
		Number      int     `json:"number"`
		From        string  `json:"from"`
		To          string  `json:"to"`
		Status      Integer `json:"status"`
		At          string  `json:"at,omitempty"`
		CrossesHost bool    `json:"crosses_host"`
		Location    string  `json:"location,omitempty"`
	}{h.Index + 1, h.From, h.To, Integer(h.Status), h.At, h.CrossesHost, h.Location})
}

// marshalText is json.Marshal without HTML escaping: the URLs are
// evidence, written as they are.
func marshalText(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// appendJSONText appends s as a JSON string, without HTML escaping.
func appendJSONText(b []byte, s string) []byte {
	q, _ := marshalText(s) // a string always encodes
	return append(b, q...)
}

// CheckedPassage is the check of c's cited_text that a listed member
// shows: against the current extraction of its latest successful
// retrieval that has one; nil when there is none.
func (c *Citation) CheckedPassage() *Passage {
	if len(c.Passages) == 0 {
		return nil
	}
	for i := len(c.Retrievals) - 1; i >= 0; i-- {
		r := c.Retrievals[i]
		x := r.Current()
		if x == nil || !r.Successful() {
			continue
		}
		for _, p := range c.Passages {
			if p.Against == x {
				return p
			}
		}
	}
	return nil
}
