// Package extract derives content evidence from a retrieved response body:
// the title, the declared dates and language, the main text with its
// boilerplate (navigation, asides, footers, scripts) removed, a digest and a
// 64-bit SimHash of that text, a soft-error class, and whether a cited
// passage is supported by the text.
//
// Why: the SHA-256 of a body's bytes changes on every fetch of most real
// pages (a render timestamp, a rotating "trending" box, a CSRF token), so
// byte equality confirms almost nothing and byte difference proves nothing.
// Two retrievals whose main texts agree, exactly or within a small SimHash
// distance, are much better evidence that two citations point at one
// resource; an error page or a login wall is evidence of nothing.
//
// # What it owns
//
// The extraction and its version ([Version], recorded with every result, as
// the normalization policy's version is); the text normalization behind the
// digest ([NormalizeText]); the SimHash and its threshold ([SimHash],
// [NearDuplicate]); the soft-error rules ([Classify]); the passage matcher
// ([MatchPassage]). It knows nothing of the graph, of HTTP or of WARC files:
// it takes bytes and returns values, so that the same evidence can be derived
// again from stored captures without fetching.
//
// # Caveats
//
// Every result is evidence for a reviewer, never proof. The main-text
// extractor is Mozilla Readability's algorithm in Go
// (codeberg.org/readeck/go-readability/v2), chosen by measurement on
// testdata/pages (EXTRACTOR.md); a page it cannot find an
// article in yields the text of its body with scripts and styles removed,
// and says so in [Evidence.Method]. Work is bounded: a body larger than
// [MaxBody] is cut, a document deeper than [MaxDepth] or with more than
// [MaxElements] elements is not given to Readability.
//
// extract imports no provgraph package, and must not: it is a pure function of
// the bytes it is given, so that evidence can be derived again from a capture
// (internal/capture) without a store, a network or the ingest pipeline.
package extract
