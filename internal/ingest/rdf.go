package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/knakk/rdf"

	"github.com/provgraph/provgraph/internal/graph"
)

// RDF formats that RDFFile reads.
const (
	FormatNTriples = "nt"
	FormatNQuads   = "nq"
	FormatTurtle   = "ttl"
)

// RDFFile loads an RDF file (an export of provgraph or anything else) into
// st, keeping every literal's lexical form and datatype. Like File, it reads
// the whole input before writing anything, writes in batches, and records
// the load as an ingest run, which is the only thing a repeated load adds.
func RDFFile(ctx context.Context, st *graph.Store, path, name, format string, opts Options) (Summary, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	sum := Summary{Input: name}
	batch := opts.BatchQuads
	if batch <= 0 {
		batch = DefaultBatchQuads
	}
	h := sha256.New()
	n, err := eachRDF(path, name, format, h, func(graph.Quad) error { return ctx.Err() })
	if err != nil {
		return sum, err
	}
	sum.Records = n
	sum.InputDigest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	startText := start.UTC().Format(time.RFC3339Nano)
	run := mint("ingest", sum.InputDigest, "rdf:"+format, startText, nonce())
	sum.Run = run
	added, err := st.Add(runStarted(run, startText, sum.InputDigest, graph.Term{}))
	sum.QuadsAdded += added
	if err != nil {
		return sum, err
	}
	buf := make([]graph.Quad, 0, batch)
	read := 0
	flush := func() error {
		added, err := st.Add(buf)
		sum.QuadsAdded += added
		buf = buf[:0]
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: "write", Lines: read, TotalLines: n, QuadsAdded: sum.QuadsAdded})
		}
		return err
	}
	_, err = eachRDF(path, name, format, nil, func(q graph.Quad) error {
		read++
		buf = append(buf, q)
		if len(buf) >= batch {
			if err := ctx.Err(); err != nil {
				return err
			}
			return flush()
		}
		return nil
	})
	if err == nil && len(buf) > 0 {
		err = flush()
	}
	if err != nil {
		return sum, err
	}
	end := now()
	added, err = st.Add(runCompleted(run, end, n))
	sum.QuadsAdded += added
	sum.Elapsed = end.Sub(start)
	return sum, err
}

// eachRDF decodes the file and calls fn for every statement, returning how
// many there were.
func eachRDF(path, name, format string, h io.Writer, fn func(graph.Quad) error) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if h != nil {
		r = io.TeeReader(f, h)
	}
	n := 0
	wrap := func(err error) error {
		return fmt.Errorf("%s: statement %d: %w", name, n+1, err)
	}
	switch format {
	case FormatNQuads:
		dec := rdf.NewQuadDecoder(r, rdf.NQuads)
		for {
			q, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, wrap(err)
			}
			gq := graph.Quad{S: term(q.Subj), P: term(q.Pred), O: term(q.Obj), G: term(q.Ctx)}
			if b, ok := q.Ctx.(rdf.Blank); ok && b.String() == "defaultGraph" {
				// knakk/rdf reports a statement without a graph as one in
				// the blank node graph _:defaultGraph.
				gq.G = graph.Term{}
			}
			if err := fn(gq); err != nil {
				return n, err
			}
			n++
		}
	case FormatNTriples, FormatTurtle:
		f := rdf.NTriples
		if format == FormatTurtle {
			f = rdf.Turtle
		}
		dec := rdf.NewTripleDecoder(r, f)
		for {
			t, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, wrap(err)
			}
			if err := fn(graph.Quad{S: term(t.Subj), P: term(t.Pred), O: term(t.Obj)}); err != nil {
				return n, err
			}
			n++
		}
	}
	return 0, fmt.Errorf("unknown RDF format %q (want nt, nq or ttl)", format)
}

// term converts a knakk/rdf term, keeping a literal's lexical form.
func term(t rdf.Term) graph.Term {
	switch v := t.(type) {
	case nil:
		return graph.Term{}
	case rdf.IRI:
		return graph.IRI(v.String())
	case rdf.Blank:
		return graph.Blank(v.String())
	case rdf.Literal:
		if v.Lang() != "" {
			return graph.LangString(v.String(), v.Lang())
		}
		return graph.Literal(v.String(), v.DataType.String())
	}
	return graph.Term{}
}
