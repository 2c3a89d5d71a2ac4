package ingest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
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
	// The citations and their raw URLs, spooled to a temporary file
	// rather than held: at ten million citations the lists and maps of
	// them took 7 GB and more.
	sp, err := spoolCitations(ctx, st, opts.TempDir)
	if err != nil {
		return sum, err
	}
	defer sp.close()
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
	var pending []spooled  // read from the spool, not yet normalized
	for i := 0; i < sp.n; {
		// A chunk of citations: their raw URLs' texts and their base
		// URLs read by lookups, a raw URL once a chunk.
		pending = pending[:0]
		for len(pending) < renormChunk && i+len(pending) < sp.n {
			c, err := sp.next()
			if err != nil {
				return sum, err
			}
			pending = append(pending, c)
		}
		texts := map[string]string{}
		for _, c := range pending {
			if _, ok := texts[c.raw]; ok {
				continue
			}
			t, err := st.Objects(graph.IRI(c.raw), graph.IRI(vocab.Text))
			if err != nil {
				return sum, err
			}
			if len(t) == 0 {
				return sum, fmt.Errorf("renormalize: raw URL node %s has no text", c.raw)
			}
			texts[c.raw] = t[0].Value
		}
		for _, c := range pending {
			node := graph.IRI(c.node)
			base, err := st.Objects(node, graph.IRI(vocab.BaseURL))
			if err != nil {
				return sum, err
			}
			var b string
			if len(base) > 0 {
				b = base[0].Value
			}
			nodes = append(nodes, node)
			var nerr error
			var rej bool
			buf, rej, nerr = appendNorm(mapper, buf, node, graph.IRI(c.raw), texts[c.raw], b)
			if nerr != nil {
				return sum, nerr
			}
			if rej {
				sum.URLRejected++
			}
			sum.Records++
			i++
			if len(buf) >= batch || i == sp.n {
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
					opts.Progress(Progress{Phase: "write", Lines: i, TotalLines: sp.n, QuadsAdded: sum.QuadsAdded})
				}
			}
		}
		// The lookups' pages stay mapped until released.
		st.TrimMapped()
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
		if err == nil && opts.Progress != nil {
			opts.Progress(Progress{Phase: "done", Lines: sum.Records, TotalLines: sum.Records, QuadsAdded: sum.QuadsAdded})
		}
		return sum, err
	}
	var viewProgress func(done, total int)
	if opts.Progress != nil {
		viewProgress = func(done, total int) {
			opts.Progress(Progress{Phase: "view", Lines: done, TotalLines: total, QuadsAdded: sum.QuadsAdded})
		}
	}
	if _, err := cs.RebuildView(ctx, opts.Policy.Digest(), 0, viewProgress); err != nil {
		return sum, fmt.Errorf("renormalize: writing the grouping view of the policy: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Phase: "done", Lines: sum.Records, TotalLines: sum.Records, QuadsAdded: sum.QuadsAdded})
	}
	return sum, nil
}

func appendNorm(m *citestore.Mapper, dst []graph.Quad, cit, raw graph.Term, text, base string) ([]graph.Quad, bool, error) {
	out, nerr, err := m.NormalizationQuads(dst, cit, raw, text, base)
	return out, nerr != nil, err
}

// renormChunk is how many citations Renormalize reads from its spool and
// looks up at once.
var renormChunk = 4096 // a variable for tests

// spooled is a citation as spoolCitations wrote it: its node's IRI and
// its raw URL node's IRI.
type spooled struct{ node, raw string }

// citationSpool is the citations of a store, written to an unlinked
// temporary file and read back in order.
type citationSpool struct {
	f *os.File
	r *bufio.Reader
	n int // citations
}

// spoolCitations writes every citation of st (each pg:cites quad: the
// citation's node and its raw URL node, both IRIs) to a temporary file in
// dir (os.TempDir() when empty), unlinked at once so that no exit leaves
// it behind, and opens it for reading.
func spoolCitations(ctx context.Context, st *graph.Store, dir string) (*citationSpool, error) {
	f, err := os.CreateTemp(dir, "provgraph-renormalize-")
	if err != nil {
		return nil, fmt.Errorf("renormalize: temporary file: %w", err)
	}
	os.Remove(f.Name())
	sp := &citationSpool{f: f}
	w := bufio.NewWriterSize(f, 1<<20)
	var rec []byte
	err = st.Match(ctx, graph.Quad{P: graph.IRI(vocab.Cites)}, func(q graph.Quad) error {
		if q.S.Kind != graph.KindIRI || q.O.Kind != graph.KindIRI {
			return fmt.Errorf("renormalize: %w: %s %s %s: a citation and its raw URL are IRIs", graph.ErrCorrupt, q.S, q.P, q.O)
		}
		rec = binary.AppendUvarint(rec[:0], uint64(len(q.S.Value)))
		rec = append(rec, q.S.Value...)
		rec = binary.AppendUvarint(rec, uint64(len(q.O.Value)))
		rec = append(rec, q.O.Value...)
		sp.n++
		_, err := w.Write(rec)
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("renormalize: reading the citations: %w", err)
	}
	sp.r = bufio.NewReaderSize(f, 1<<20)
	return sp, nil
}

// next reads the next citation.
func (sp *citationSpool) next() (spooled, error) {
	var c spooled
	var err error
	if c.node, err = sp.str(); err == nil {
		c.raw, err = sp.str()
	}
	if err != nil {
		return c, fmt.Errorf("renormalize: reading back the temporary file: %w", err)
	}
	return c, nil
}

func (sp *citationSpool) str() (string, error) {
	n, err := binary.ReadUvarint(sp.r)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(sp.r, b)
	return string(b), err
}

func (sp *citationSpool) close() { sp.f.Close() }
