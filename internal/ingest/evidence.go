package ingest

import (
	"net/url"
	"strconv"

	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/model"
)

// ExtractBody derives the content evidence of a retrieval's final response
// from its body (extract.Extract). used is the snapshot reference of the
// capture the body was read from or written to, or "".
func ExtractBody(rt *model.Retrieval, body *model.Body, used string) model.Extraction {
	in := extract.Input{Body: body.Bytes, ContentType: rt.ContentType, Truncated: body.Truncated}
	in.Status, _ = strconv.Atoi(string(rt.FinalStatus))
	if u, err := url.Parse(rt.FinalURL); err == nil && rt.FinalURL != "" {
		in.URL = u
	}
	return Extraction(extract.Extract(in), used)
}

// Extraction converts an extractor's evidence to the domain noun the graph
// records.
func Extraction(ev extract.Evidence, used string) model.Extraction {
	ex := model.Extraction{
		Extractor: ev.Version, MediaType: ev.MediaType, Method: ev.Method,
		Title: ev.Title, OGTitle: ev.OGTitle, Language: ev.Language,
		DatesDisagree: ev.DatesDisagree, TextDigest: ev.TextDigest, Words: ev.Words,
		SoftError: ev.SoftError, Problem: ev.Problem, Text: ev.Text, Used: used,
	}
	for _, d := range ev.Dates {
		ex.Dates = append(ex.Dates, model.DeclaredDate{Source: d.Source, Value: d.Value})
	}
	if ev.HasSimHash {
		ex.SimHash = extract.HexHash(ev.SimHash)
	}
	return ex
}

// CheckPassage checks a cited passage against an extraction's main text.
func CheckPassage(passage string, ex model.Extraction) model.PassageCheck {
	p := extract.MatchPassage(passage, ex.Text)
	return model.PassageCheck{Found: p.Found, Score: p.Score, Method: p.Method,
		Start: p.Start, End: p.End, LongestRun: p.LongestRun, Words: p.Words}
}
