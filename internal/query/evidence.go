package query

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/model"
)

// This file is the read side of the content evidence resolve and extract
// record (ontology/MODEL.md, "Content evidence"): each retrieval's
// extractions, each citation's passage checks, and which retrievals count
// as content evidence at all.

// buildExtraction builds the extraction act, which generated the evidence
// ev; resp is the response it used. lean reads only what grouping needs.
func buildExtraction[N comparable, R nodes[N]](rd R, ev, resp N, lean bool) *Extraction {
	x := &Extraction{
		Extractor: rd.lit(pExtractor, ev), TextDigest: rd.lit(pTextDigest, ev),
		SimHash: rd.lit(pSimHash, ev), SoftError: rd.lit(pSoftError, ev),
	}
	if lean {
		return x
	}
	x.CaptureRef = rd.lit(pCaptureRef, resp)
	x.MediaType, x.Method = rd.lit(pMediaType, ev), rd.lit(pExtractionMethod, ev)
	x.Title, x.OGTitle, x.Language = rd.lit(pTitle, ev), rd.lit(pOgTitle, ev), rd.lit(pLanguage, ev)
	x.DatesDisagree = rd.lit(pDatesDisagree, ev) == "true"
	x.Words, _ = strconv.Atoi(rd.lit(pWordCount, ev))
	x.Problem = rd.lit(pExtractionProblem, ev)
	if d := rd.lit(pDeclaredDates, ev); d != "" {
		_ = json.Unmarshal([]byte(d), &x.Dates)
	}
	return x
}

// buildPassage builds the passage check p, made against x.
func buildPassage[N comparable, R nodes[N]](rd R, p N, x *Extraction) *Passage {
	ps := &Passage{Found: rd.lit(pPassageFound, p) == "true", Method: rd.lit(pPassageMethod, p), Extractor: x.Extractor, Against: x}
	ps.Score, _ = strconv.ParseFloat(rd.lit(pPassageScore, p), 64)
	start, err1 := strconv.Atoi(rd.lit(pSpanStart, p))
	end, err2 := strconv.Atoi(rd.lit(pSpanEnd, p))
	if err1 == nil && err2 == nil && end > start {
		ps.Span = &Span{Start: start, End: end}
	}
	return ps
}

// evidenceOf builds the extractions of a retrieval and the passage checks
// of its citation made against them. exts are the retrieval's extraction
// activities; evOf and respOf give an extraction's evidence and response
// nodes; passages are the citation's passage checks, againstOf the
// evidence each was checked against.
func evidenceOf[N comparable, R nodes[N]](rd R, rt *Retrieval, exts []N, evOf, respOf func(N) N, passages []N, againstOf func(N) N, lean bool, c *Citation) {
	for _, act := range exts {
		ev := evOf(act)
		var zero N
		if ev == zero {
			continue
		}
		x := buildExtraction(rd, ev, respOf(act), lean)
		rt.Extractions = append(rt.Extractions, x)
		for _, p := range passages {
			if againstOf(p) == ev {
				c.Passages = append(c.Passages, buildPassage(rd, p, x))
			}
		}
	}
	slices.SortFunc(rt.Extractions, cmpExtraction)
}

// cmpExtraction orders extractions by extractor, then evidence: the last
// is the one the verdicts read (Current).
func cmpExtraction(a, b *Extraction) int {
	return model.CompareExtractions(&model.Extraction{Extractor: a.Extractor, TextDigest: a.TextDigest, SimHash: a.SimHash, SoftError: a.SoftError},
		&model.Extraction{Extractor: b.Extractor, TextDigest: b.TextDigest, SimHash: b.SimHash, SoftError: b.SoftError})
}

// successful is Successful of a retrieval's outcome, status and current
// extraction (nil for none).
func successful(outcome, status string, x *Extraction) bool {
	soft := ""
	if x != nil {
		soft = x.SoftError
	}
	return model.Successful(outcome, status, soft)
}

// whyUnsuccessful says why r is not content evidence.
func whyUnsuccessful(r *Retrieval) string {
	switch x := r.Current(); {
	case r.Outcome != "" && r.Outcome != model.OutcomeOK:
		return "outcome " + r.Outcome
	case x != nil && x.SoftError != "":
		return x.SoftError
	default:
		return "status " + string(r.FinalStatus)
	}
}

// passage is the check of c's cited_text against the current extraction of
// its latest successful retrieval that has one, nil when there is none.
func passage(c *Citation) *Passage {
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

// textEvidence is what grouping compares of a successful retrieval: the
// current extraction's text digest and SimHash.
func textEvidence(r *Retrieval) (digest string, sim uint64, hasSim bool) {
	x := r.Current()
	if x == nil {
		return "", 0, false
	}
	if x.SimHash != "" {
		if v, err := strconv.ParseUint(x.SimHash, 16, 64); err == nil {
			sim, hasSim = v, true
		}
	}
	return x.TextDigest, sim, hasSim
}

// near reports whether two SimHashes are near-identical
// (extract.NearThreshold), and their distance.
func near(a, b uint64) (int, bool) {
	d := extract.Distance(a, b)
	return d, d <= extract.NearThreshold
}
