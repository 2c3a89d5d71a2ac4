package citestore

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
)

// nodes is what building a citation's parts reads of the RDF model: a
// node's literals, its object nodes and its IRI. Both readers provide it
// (the loader by term id, idNodes; the lineage reader by IRI, iriNodes),
// so a normalization, retrieval or relation is built by one function,
// from the same predicates, whichever reader read it.
type nodes[N comparable] interface {
	// lit is the first object of (n, p) as text, "" if none.
	lit(p pred, n N) string
	// first is the first object of (n, p), the zero N if none.
	first(p pred, n N) N
	// objs is every object of (n, p).
	objs(p pred, n N) []N
	// iri is the node's IRI ("" where the reader did not decode it).
	iri(n N) string
}

// idNodes is the loader's nodes. It is a struct, not *loader, so that the
// builders are compiled for it alone and call its methods directly: they
// run for every member of every listed group.
type idNodes struct{ l *loader }

func (a idNodes) lit(p pred, n graph.ID) string      { return a.l.one(p, n) }
func (a idNodes) first(p pred, n graph.ID) graph.ID  { return a.l.get(p, n) }
func (a idNodes) objs(p pred, n graph.ID) []graph.ID { return a.l.all(p, n) }
func (a idNodes) iri(n graph.ID) string              { return a.l.names.at(n) }

// iriNodes is the lineage reader's nodes: nodes are their IRIs (or, for
// literals, their text), read into r.p by r.Node.
type iriNodes struct{ r *Reader }

func (a iriNodes) lit(p pred, n string) string    { return a.r.One(predIRIs[p], n) }
func (a iriNodes) first(p pred, n string) string  { return a.r.One(predIRIs[p], n) }
func (a iriNodes) objs(p pred, n string) []string { return a.r.All(predIRIs[p], n) }
func (a iriNodes) iri(n string) string            { return n }

// normOptions are how the two readers' normalizations differ.
type normOptions[N comparable] struct {
	// steps parses the step log into Steps (lineage shows it); otherwise
	// only Rules are read out of it (stepRules), which is what the
	// queries over a whole database need.
	steps bool
	// lean leaves Node empty (a lean load does not decode node IRIs).
	lean bool
	// params, if not nil, caches parsed lists of removed parameters by
	// their literal's node.
	params map[N][]string
}

// buildNormalization builds the normalization nrm, with its comparison key
// key (the zero N if the policy rejected the URL), under pol.
func buildNormalization[N comparable, R nodes[N]](rd R, nrm, key N, pol *store.PolicyRef, o normOptions[N]) *store.Normalization {
	n := &store.Normalization{
		Policy: pol, ErrorCode: rd.lit(pErrorCode, nrm), ErrorMessage: rd.lit(pErrorMessage, nrm),
	}
	if !o.lean {
		n.Node = rd.iri(nrm)
	}
	if o.steps {
		_ = json.Unmarshal([]byte(rd.lit(pSteps, nrm)), &n.Steps)
		n.Rules = rulesOf(n.Steps)
	} else {
		n.Rules = stepRules(rd.lit(pSteps, nrm))
	}
	var zero N
	if key != zero {
		n.Key = rd.lit(pText, key)
		n.Compare = rd.lit(pCompare, key)
		n.Parsed = rd.lit(pParsed, key)
		n.HostRule = rd.lit(pHostRule, key)
		pid := rd.first(pRemovedParams, key)
		removed, ok := o.params[pid]
		if !ok {
			_ = json.Unmarshal([]byte(rd.lit(pRemovedParams, key)), &removed)
			if o.params != nil {
				o.params[pid] = removed
			}
		}
		n.RemovedParams = removed
	}
	return n
}

// buildRetrieval builds the retrieval r, with its canonical declarations
// decls.
func buildRetrieval[N comparable, R nodes[N]](rd R, r N, decls []N) *store.Retrieval {
	rt := &store.Retrieval{
		Node: rd.iri(r), RetrievedAt: rd.lit(pRetrievedAt, r), FinalURL: rd.lit(pFinalURL, r),
		FinalStatus: store.Integer(rd.lit(pFinalStatus, r)), ContentHash: rd.lit(pContentHash, r),
		ContentType: rd.lit(pContentType, r), SnapshotRef: rd.lit(pSnapshotRef, r),
		CanonicalDropped: store.Integer(rd.lit(pCanonicalDropped, r)),
		Outcome:          rd.lit(pOutcome, r), OutcomeError: rd.lit(pOutcomeError, r),
		Hops: []store.Hop{}, Canonicals: []model.Canonical{},
	}
	for _, h := range rd.objs(pHop, r) {
		idx, _ := strconv.Atoi(rd.lit(pHopIndex, h))
		rt.Hops = append(rt.Hops, store.Hop{
			Hop: model.Hop{
				From: rd.lit(pFrom, h), To: rd.lit(pTo, h),
				Status: model.Integer(rd.lit(pStatus, h)), At: rd.lit(pAt, h),
				Location: rd.lit(pLocation, h),
			},
			Index: idx, CrossesHost: rd.lit(pCrossesHost, h) == "true",
		})
	}
	slices.SortFunc(rt.Hops, func(a, b store.Hop) int { return a.Index - b.Index })
	for _, d := range decls {
		rt.Canonicals = append(rt.Canonicals, model.Canonical{URL: rd.lit(pDeclaredURL, d), Source: rd.lit(pSignalSource, d)})
	}
	slices.SortFunc(rt.Canonicals, func(a, b model.Canonical) int { return strings.Compare(a.Source+a.URL, b.Source+b.URL) })
	return rt
}

// buildRelation builds the qualified relation rel, of the relation kind
// named kind (model.RelationKinds).
func buildRelation[N comparable, R nodes[N]](rd R, rel N, kind string) *store.Relation {
	return &store.Relation{
		Relation: model.Relation{
			Type:   kind,
			Target: rd.lit(pText, rd.first(pTarget, rel)), Format: rd.lit(pFormat, rel),
			CapturedAt: rd.lit(pCapturedAt, rel),
		},
		Evidence: rd.lit(pEvidence, rel),
	}
}

// buildExtraction builds the extraction act, which generated the evidence
// ev; resp is the response it used. lean reads only what grouping needs.
func buildExtraction[N comparable, R nodes[N]](rd R, ev, resp N, lean bool) *store.Extraction {
	x := &store.Extraction{
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
func buildPassage[N comparable, R nodes[N]](rd R, p N, x *store.Extraction) *store.Passage {
	ps := &store.Passage{Found: rd.lit(pPassageFound, p) == "true", Method: rd.lit(pPassageMethod, p), Extractor: x.Extractor, Against: x}
	ps.Score, _ = strconv.ParseFloat(rd.lit(pPassageScore, p), 64)
	start, err1 := strconv.Atoi(rd.lit(pSpanStart, p))
	end, err2 := strconv.Atoi(rd.lit(pSpanEnd, p))
	if err1 == nil && err2 == nil && end > start {
		ps.Span = &store.Span{Start: start, End: end}
	}
	return ps
}

// evidenceOf builds the extractions of a retrieval and the passage checks
// of its citation made against them. exts are the retrieval's extraction
// activities; evOf and respOf give an extraction's evidence and response
// nodes; passages are the citation's passage checks, againstOf the
// evidence each was checked against.
func evidenceOf[N comparable, R nodes[N]](rd R, rt *store.Retrieval, exts []N, evOf, respOf func(N) N, passages []N, againstOf func(N) N, lean bool, c *store.Citation) {
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
func cmpExtraction(a, b *store.Extraction) int {
	return model.CompareExtractions(&model.Extraction{Extractor: a.Extractor, TextDigest: a.TextDigest, SimHash: a.SimHash, SoftError: a.SoftError},
		&model.Extraction{Extractor: b.Extractor, TextDigest: b.TextDigest, SimHash: b.SimHash, SoftError: b.SoftError})
}
