package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Renormalize adds, for every citation in st, a normalization under
// opts.Policy beside the ones already there. Nothing is replaced: the
// earlier normalizations and their keys stay, so counts made under an
// earlier policy can always be made again. It is recorded as an ingest run
// that used the policy; repeating it adds only that record.
func Renormalize(ctx context.Context, st *graph.Store, opts Options) (Summary, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	sum := Summary{Input: "renormalize"}
	if opts.Policy == nil {
		return sum, errors.New("renormalize: no policy")
	}
	batch := opts.BatchQuads
	if batch <= 0 {
		batch = DefaultBatchQuads
	}
	mapper, err := citestore.NewMapper(opts.Policy)
	if err != nil {
		return sum, err
	}
	// Read every citation's raw URL and base URL.
	type cite struct {
		node, raw graph.Term
		base      string
	}
	var cites []cite
	texts := map[string]string{}
	bases := map[string]string{}
	if err := st.Match(ctx, graph.Quad{P: graph.IRI(vocab.BaseURL)}, func(q graph.Quad) error {
		bases[q.S.Value] = q.O.Value
		return nil
	}); err != nil {
		return sum, err
	}
	if err := st.Match(ctx, graph.Quad{P: graph.IRI(vocab.Cites)}, func(q graph.Quad) error {
		cites = append(cites, cite{node: q.S, raw: q.O, base: bases[q.S.Value]})
		texts[q.O.Value] = ""
		return nil
	}); err != nil {
		return sum, err
	}
	for raw := range texts {
		t, err := st.Objects(graph.IRI(raw), graph.IRI(vocab.Text))
		if err != nil {
			return sum, err
		}
		if len(t) == 0 {
			return sum, fmt.Errorf("renormalize: raw URL node %s has no text", raw)
		}
		texts[raw] = t[0].Value
	}
	sum.InputDigest = "renormalize:" + opts.Policy.Digest()
	startText := start.UTC().Format(time.RFC3339Nano)
	run := citestore.Mint("ingest", sum.InputDigest, opts.Policy.Digest(), startText, nonce())
	sum.Run = run
	head := append(mapper.PolicyQuads(), runStarted(run, startText, sum.InputDigest, mapper.PolicyNode())...)
	added, err := st.Add(head)
	sum.QuadsAdded += added
	if err != nil {
		return sum, err
	}
	buf := make([]graph.Quad, 0, batch+64)
	var nodes []graph.Term // the citations of buf
	for i, c := range cites {
		nodes = append(nodes, c.node)
		var nerr error
		var rej bool
		buf, rej, nerr = appendNorm(mapper, buf, c.node, c.raw, texts[c.raw.Value], c.base)
		if nerr != nil {
			return sum, nerr
		}
		if rej {
			sum.URLRejected++
		}
		sum.Records++
		if len(buf) >= batch || i == len(cites)-1 {
			if err := ctx.Err(); err != nil {
				return sum, err
			}
			// A view of the policy kept already is kept current; one
			// not kept is built once every normalization is written.
			added, err := st.AddWith(buf, func(w *graph.Writer) error {
				return citestore.WritePolicyViewRows(context.WithoutCancel(ctx), w, opts.Policy.Digest(), nodes)
			})
			sum.QuadsAdded += added
			buf, nodes = buf[:0], nodes[:0]
			if err != nil {
				return sum, err
			}
			if opts.Progress != nil {
				opts.Progress(Progress{Phase: "write", Lines: i + 1, TotalLines: len(cites), QuadsAdded: sum.QuadsAdded})
			}
		}
	}
	end := now()
	added, err = st.Add(runCompleted(run, end, sum.Records))
	sum.QuadsAdded += added
	sum.Elapsed = end.Sub(start)
	if err != nil {
		return sum, err
	}
	cs := citestore.New(st)
	if has, err := cs.HasView(ctx, opts.Policy.Digest()); err != nil || has {
		return sum, err
	}
	if _, err := cs.RebuildView(ctx, opts.Policy.Digest(), 0, nil); err != nil {
		return sum, fmt.Errorf("renormalize: writing the grouping view of the policy: %w", err)
	}
	return sum, nil
}

func appendNorm(m *citestore.Mapper, dst []graph.Quad, cit, raw graph.Term, text, base string) ([]graph.Quad, bool, error) {
	out, nerr, err := m.NormalizationQuads(dst, cit, raw, text, base)
	return out, nerr != nil, err
}
