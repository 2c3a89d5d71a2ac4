package citestore

import (
	"strconv"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/vocab"
)

// ResponseNode is the node of a retrieval's final response, which an
// extraction uses.
func ResponseNode(ret graph.Term) graph.Term { return Mint("response", ret.Value) }

// ExtractionNode is the node of the extraction of retrieval ret's response
// by extractor, from the capture used (or the body as fetched, when used is
// ""). The same three always name the same node, so extracting again with
// the same extractor adds nothing.
func ExtractionNode(ret graph.Term, extractor, used string) graph.Term {
	return Mint("extraction", ret.Value, extractor, used)
}

// ExtractionQuads appends to dst the quads of an extraction of retrieval
// ret's final response: the pg:Response (with its capture reference), the
// pg:Extraction that prov:used it, and the pg:ExtractedEvidence it
// generated. It returns the evidence node.
func (m *Mapper) ExtractionQuads(dst []graph.Quad, ret graph.Term, ex model.Extraction) ([]graph.Quad, graph.Term) {
	m.quads = dst
	resp := ResponseNode(ret)
	m.types(resp, vocab.Response, vocab.ProvEntity)
	m.add(resp, vocab.ProvWasGeneratedBy, ret)
	m.str(resp, vocab.CaptureRef, ex.Used)
	act := ExtractionNode(ret, ex.Extractor, ex.Used)
	m.types(act, vocab.Extraction, vocab.ProvActivity)
	m.add(act, vocab.OfRetrieval, ret)
	m.add(act, vocab.ProvWasInformedBy, ret)
	m.add(act, vocab.FromResponse, resp)
	m.add(act, vocab.ProvUsed, resp)
	m.add(act, vocab.ProvWasAssociatedWith, AgentIRI)
	m.str(act, vocab.Extractor, ex.Extractor)
	ev := Mint("evidence", act.Value)
	m.types(ev, vocab.ExtractedEvidence, vocab.ProvEntity)
	m.add(ev, vocab.ProvWasGeneratedBy, act)
	m.add(ev, vocab.ProvWasDerivedFrom, resp)
	m.str(ev, vocab.Extractor, ex.Extractor)
	m.str(ev, vocab.MediaType, ex.MediaType)
	m.str(ev, vocab.ExtractionMethod, ex.Method)
	m.str(ev, vocab.Title, ex.Title)
	m.str(ev, vocab.OgTitle, ex.OGTitle)
	m.str(ev, vocab.Language, ex.Language)
	if len(ex.Dates) > 0 {
		type date struct {
			Source string `json:"source"`
			Value  string `json:"value"`
		}
		ds := make([]date, len(ex.Dates))
		for i, d := range ex.Dates {
			ds[i] = date(d)
		}
		m.str(ev, vocab.DeclaredDates, jsonText(ds))
	}
	m.typed(ev, vocab.DatesDisagree, strconv.FormatBool(ex.DatesDisagree), graph.XSDBoolean)
	m.str(ev, vocab.TextDigest, ex.TextDigest)
	m.str(ev, vocab.SimHash, ex.SimHash)
	m.typed(ev, vocab.WordCount, strconv.Itoa(ex.Words), xsdInt)
	m.str(ev, vocab.SoftError, ex.SoftError)
	m.str(ev, vocab.ExtractionProblem, ex.Problem)
	return m.quads, ev
}

// PassageQuads appends to dst the quads of a check of citation cit's cited
// text against the evidence node ev.
func (m *Mapper) PassageQuads(dst []graph.Quad, cit, ev graph.Term, p model.PassageCheck) []graph.Quad {
	m.quads = dst
	node := Mint("passage", cit.Value, ev.Value)
	m.types(node, vocab.PassageCheck, vocab.ProvEntity)
	m.add(node, vocab.CheckOf, cit)
	m.add(node, vocab.CheckedAgainst, ev)
	m.add(node, vocab.ProvWasDerivedFrom, cit)
	m.add(node, vocab.ProvWasDerivedFrom, ev)
	m.typed(node, vocab.PassageFound, strconv.FormatBool(p.Found), graph.XSDBoolean)
	m.str(node, vocab.PassageScore, strconv.FormatFloat(p.Score, 'f', 4, 64))
	m.str(node, vocab.PassageMethod, p.Method)
	m.typed(node, vocab.SpanStart, strconv.Itoa(p.Start), xsdInt)
	m.typed(node, vocab.SpanEnd, strconv.Itoa(p.End), xsdInt)
	m.typed(node, vocab.LongestRun, strconv.Itoa(p.LongestRun), xsdInt)
	m.typed(node, vocab.PassageWords, strconv.Itoa(p.Words), xsdInt)
	return m.quads
}
