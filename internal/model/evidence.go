package model

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
