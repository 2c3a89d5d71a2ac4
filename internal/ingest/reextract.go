package ingest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/provgraph/provgraph/internal/capture"
	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

// ReextractSummary is the outcome of Reextract.
type ReextractSummary struct {
	Retrievals int // retrievals with a WARC snapshot reference
	Extracted  int // extractions added
	UpToDate   int // skipped: extracted already by this extractor version
	Passages   int // passage checks added
	Found      int // of them, passages found
	QuadsAdded int
	// Failed lists, for each retrieval whose capture could not be read,
	// the retrieval, its reference and why; nothing was added for it.
	Failed []ReextractError
}

// ReextractError is a retrieval whose capture could not be read.
type ReextractError struct {
	Retrieval string
	Ref       string
	Err       error
}

func (e ReextractError) Error() string {
	return fmt.Sprintf("retrieval %s: capture %s: %v", e.Retrieval, e.Ref, e.Err)
}

// Reextract derives the content evidence of every retrieval with a WARC
// snapshot reference ("warc:…", as resolve writes) again from its capture
// in dir, without fetching, and adds an extraction by the current
// extractor (extract.Version) beside the earlier ones, with the passage
// checks of its citations. A retrieval extracted by this version from the
// same capture already is skipped, so running it twice adds nothing. A
// capture that is missing or damaged is listed in Failed and nothing is
// added for it; the others are extracted all the same.
func Reextract(ctx context.Context, st *graph.Store, dir string) (ReextractSummary, error) {
	var sum ReextractSummary
	refs := map[string]string{}
	err := st.Match(ctx, graph.Quad{P: graph.IRI(vocab.SnapshotRef)}, func(q graph.Quad) error {
		if strings.HasPrefix(q.O.Value, "warc:") {
			refs[q.S.Value] = q.O.Value
		}
		return nil
	})
	if err != nil {
		return sum, fmt.Errorf("extract: reading snapshot references: %w", err)
	}
	rets := make([]string, 0, len(refs))
	for r := range refs {
		rets = append(rets, r)
	}
	slices.Sort(rets)
	mapper, err := newEvidenceMapper()
	if err != nil {
		return sum, err
	}
	var buf []graph.Quad
	var written []graph.Term // the retrievals of buf
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		added, err := addEvidence(ctx, st, buf, written)
		sum.QuadsAdded += added
		buf, written = buf[:0], written[:0]
		if err != nil {
			return fmt.Errorf("extract: writing: %w", err)
		}
		return nil
	}
	for _, r := range rets {
		if err := ctx.Err(); err != nil {
			if ferr := flush(); ferr != nil {
				return sum, ferr
			}
			return sum, fmt.Errorf("extract: %w", err)
		}
		sum.Retrievals++
		ret, ref := graph.IRI(r), refs[r]
		has, err := st.Has(graph.Quad{S: citestore.ExtractionNode(ret, extract.Version, ref), P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.Extraction)})
		if err != nil {
			return sum, fmt.Errorf("extract: %w", err)
		}
		if has {
			sum.UpToDate++
			continue
		}
		cref, err := capture.ParseRef(ref)
		if err != nil {
			sum.Failed = append(sum.Failed, ReextractError{r, ref, err})
			continue
		}
		resp, err := capture.Read(dir, cref)
		if err != nil {
			sum.Failed = append(sum.Failed, ReextractError{r, ref, err})
			continue
		}
		ct := ""
		if v := resp.Header["Content-Type"]; len(v) > 0 {
			ct = v[0]
		}
		rt := &model.Retrieval{FinalURL: resp.URL, FinalStatus: model.Integer(strconv.Itoa(resp.Status)), ContentType: ct}
		ex := ExtractBody(rt, &model.Body{Bytes: resp.Body, Truncated: resp.Truncated}, ref)
		var ev graph.Term
		buf, ev = mapper.ExtractionQuads(buf, ret, ex)
		written = append(written, ret)
		sum.Extracted++
		cits, err := st.Subjects(graph.IRI(vocab.RetrievedIn), ret)
		if err != nil {
			return sum, fmt.Errorf("extract: %w", err)
		}
		for _, c := range cits {
			texts, err := st.Objects(c, graph.IRI(vocab.CitedText))
			if err != nil {
				return sum, fmt.Errorf("extract: %w", err)
			}
			if len(texts) == 0 || texts[0].Value == "" {
				continue
			}
			p := CheckPassage(texts[0].Value, ex)
			buf = mapper.PassageQuads(buf, c, ev, p)
			sum.Passages++
			if p.Found {
				sum.Found++
			}
		}
		if len(buf) >= 4096 {
			if err := flush(); err != nil {
				return sum, err
			}
		}
	}
	return sum, flush()
}

// newEvidenceMapper returns a Mapper for writing evidence, which depends on
// no normalization policy.
func newEvidenceMapper() (*citestore.Mapper, error) {
	return citestore.NewMapper(normalize.Lenient())
}
