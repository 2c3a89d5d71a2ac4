package model

import "strings"

// Body is a final response's body as the fetcher read it: kept beside a
// retrieval (never inside it, so it is no part of the retrieval's identity
// or of the input) so that evidence can be extracted without reading the
// capture back.
type Body struct {
	Bytes []byte
	// Truncated reports that the body was cut at the policy's size limit.
	Truncated bool
}

// Extraction is the content evidence one extraction derived from one
// response (internal/extract), as the graph records it: a pg:Extraction
// activity that prov:used the retrieval's capture and generated a
// pg:ExtractedEvidence entity with these values.
type Extraction struct {
	Extractor     string // the extractor's name and version (extract.Version)
	MediaType     string
	Method        string // readability, body-text, plain-text or none
	Title         string
	OGTitle       string
	Language      string
	Dates         []DeclaredDate
	DatesDisagree bool
	TextDigest    string // "sha256:…" of the main text in normal form; empty when the body was cut
	SimHash       string // 16 lowercase hex digits; empty when the text has no word
	Words         int
	SoftError     string // ok, http-error, not-found, login-wall, ...
	Problem       string // why less was derived than a page would give; empty when nothing went wrong
	// Text is the main text in normal form. It is not stored in the graph
	// (the capture holds the bytes it is derived from); it is kept here for
	// the passage check.
	Text string
	// Used is the snapshot reference of the capture the evidence was
	// derived from (a "warc:" reference), or empty when it was derived from
	// the body as fetched without a capture.
	Used string
}

// DeclaredDate is a date a page declares: where (article:published_time,
// JSON-LD datePublished, time element, ...) and its value as written.
type DeclaredDate struct {
	Source string
	Value  string
}

// PassageCheck is whether a citation's cited_text is supported by the main
// text of one extraction (extract.MatchPassage).
type PassageCheck struct {
	Found      bool
	Score      float64
	Method     string // exact, window or none
	Start, End int    // byte offsets of the matched span in the normalized main text
	LongestRun int
	Words      int
}

// CompareExtractions orders the extractions of one retrieval by extractor,
// then evidence (text digest, SimHash, soft error): the greatest is the
// current one, the one the verdicts read (a re-extraction by a newer
// extractor supersedes the older, which is kept). Every reader of the
// evidence (internal/query, a backend's scan) decides it with this one
// order.
func CompareExtractions(a, b *Extraction) int {
	return strings.Compare(a.Extractor+"\x00"+a.TextDigest+"\x00"+a.SimHash+"\x00"+a.SoftError, b.Extractor+"\x00"+b.TextDigest+"\x00"+b.SimHash+"\x00"+b.SoftError)
}

// Successful reports whether a retrieval is content evidence, from its
// outcome, final status (as written, "" when not recorded) and the soft
// error of its current extraction ("" when it has none): its outcome is ok
// (or, for a retrieval given in the input, not recorded), its status, if
// recorded, is 2xx, and its current extraction found no soft error (an
// error page, a soft 404, a login wall, an empty page). An unsuccessful
// retrieval's hashes and texts never confirm identity, make a conflict or
// relate groups.
func Successful(outcome, status, softError string) bool {
	if outcome != "" && outcome != OutcomeOK {
		return false
	}
	if status != "" && (len(status) != 3 || status[0] != '2') {
		return false
	}
	return softError == ""
}
