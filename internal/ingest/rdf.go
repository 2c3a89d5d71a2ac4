package ingest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
)

// RDF formats that RDFFile reads.
const (
	FormatNTriples = "nt"
	FormatNQuads   = "nq"
	FormatTurtle   = "ttl"
)

// MaxStatementBytes bounds one statement of RDF input, which is read into
// memory whole: a line of N-Triples or N-Quads, and in Turtle each line and
// everything from the end of one statement to the end of the next (a long
// """literal""" counts in full).
const MaxStatementBytes = 16 << 20

// SyntaxError reports RDF input that cannot be read: the file, the line,
// the column (counted in bytes from 1; 0 when unknown) and what is wrong.
type SyntaxError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	if e.Column == 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// GenIDBase is the namespace of the IRIs that stand for blank nodes of RDF
// input (skolem IRIs, RDF 1.1 Concepts §3.5): GenIDBase, the first 128 bits
// of the input's SHA-256 in hex, "/", and the label, percent-encoded.
const GenIDBase = model.IDBase + ".well-known/genid/"

// RDFFile loads an RDF file (an export of provgraph or anything else) into
// st, keeping every literal's lexical form and datatype. name is how
// messages refer to the input.
//
// It keeps ingest's promises as File does. The whole input is parsed first
// and bad input stops the run with a *SyntaxError (file:line:column) before
// anything is written. The parsed statements are spooled to a temporary
// file, so the write pass writes exactly what was checked even if the input
// changes meanwhile. Writes go in batches; an interrupted run is completed
// by loading the same input again, which reuses its run node, and a repeated
// load adds only the record of a new run.
//
// Blank nodes are scoped to their input: each becomes a skolem IRI under
// GenIDBase made from the input's digest and its label, so the same file
// loaded twice gives the same nodes and two files never share one.
func RDFFile(ctx context.Context, st *graph.Store, path, name, format string, opts Options) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{Input: name}, err
	}
	defer f.Close()
	return RDF(ctx, st, f, name, format, opts)
}

// RDF loads RDF read from r, as RDFFile does. It reads r once, so standard
// input needs no copy: what the write pass reads is the spool of parsed
// statements.
func RDF(ctx context.Context, st *graph.Store, r io.Reader, name, format string, opts Options) (Summary, error) {
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
	switch format {
	case FormatNQuads, FormatNTriples, FormatTurtle:
	default:
		return sum, fmt.Errorf("unknown RDF format %q (want nt, nq or ttl)", format)
	}

	// Pass 1: parse everything into the spool and digest the input.
	spool, err := os.CreateTemp(opts.TempDir, "provgraph-rdf-*.spool")
	if err != nil {
		return sum, fmt.Errorf("rdf spool: %w", err)
	}
	// Unlinked at once, the spool lives only as long as its descriptor,
	// so not even kill -9 leaves it behind (where the system allows
	// removing an open file; elsewhere it goes at the end).
	unlinked := os.Remove(spool.Name()) == nil
	defer func() {
		spool.Close()
		if !unlinked {
			os.Remove(spool.Name())
		}
	}()
	sw := bufio.NewWriterSize(spool, 1<<20)
	h := sha256.New()
	var enc []byte
	n, err := eachRDF(ctx, r, name, format, h, func(q graph.Quad) error {
		enc = appendSpoolQuad(enc[:0], q)
		if _, err := sw.Write(enc); err != nil {
			return fmt.Errorf("rdf spool: %w", err)
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	if err := sw.Flush(); err != nil {
		return sum, fmt.Errorf("rdf spool: %w", err)
	}
	sum.Records = n
	digest := h.Sum(nil)
	sum.InputDigest = "sha256:" + hex.EncodeToString(digest)
	genid := GenIDBase + hex.EncodeToString(digest[:16]) + "/"

	// The run: complete an unfinished load of the same input, or start one.
	run, resumed, err := findUnfinishedRDFRun(st, sum.InputDigest)
	if err != nil {
		return sum, err
	}
	startText := start.UTC().Format(time.RFC3339Nano)
	if !resumed {
		run = citestore.Mint("ingest", sum.InputDigest, "rdf:"+format, startText, nonce())
		added, err := st.Add(runStarted(run, startText, sum.InputDigest, graph.Term{}))
		sum.QuadsAdded += added
		if err != nil {
			return sum, err
		}
	}
	sum.Run, sum.Resumed = run, resumed

	// Pass 2: write the spooled statements in batches.
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return sum, fmt.Errorf("rdf spool: %w", err)
	}
	sr := bufio.NewReaderSize(spool, 1<<20)
	buf := make([]graph.Quad, 0, batch)
	for read := 0; read < n; {
		q, err := readSpoolQuad(sr)
		if err != nil {
			return sum, fmt.Errorf("rdf spool: statement %d: %w", read+1, err)
		}
		buf = append(buf, skolemize(q, genid))
		read++
		if len(buf) < batch && read < n {
			continue
		}
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		// Arbitrary statements can change any citation: the grouping
		// views go with the first batch, in its transaction, and stay
		// gone until rebuilt.
		added, err := st.AddWith(buf, func(w *graph.Writer) error {
			for _, v := range w.Views() {
				if err := w.DropView(v); err != nil {
					return err
				}
				sum.ViewsDropped = true
			}
			return nil
		})
		sum.QuadsAdded += added
		if err != nil {
			return sum, fmt.Errorf("%s: writing statements up to %d: %w", name, read, err)
		}
		buf = buf[:0]
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: "write", Lines: read, TotalLines: n, QuadsAdded: sum.QuadsAdded})
		}
	}
	end := now()
	added, err := st.Add(runCompleted(run, end, n))
	sum.QuadsAdded += added
	sum.Elapsed = end.Sub(start)
	return sum, err
}

// eachRDF parses in and calls fn for every statement, writing every byte
// read to h. It returns how many statements there were.
func eachRDF(ctx context.Context, in io.Reader, name, format string, h io.Writer, fn func(graph.Quad) error) (int, error) {
	r := io.TeeReader(in, h)
	n := 0
	var err error
	each := func(q graph.Quad) error {
		if n++; n%10000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fn(q)
	}
	switch format {
	case FormatNQuads, FormatNTriples:
		_, err = eachNQuad(r, name, format == FormatNQuads, each)
	default:
		_, err = eachTurtle(r, name, each)
	}
	if err == nil {
		// The digest covers the whole file, also what follows the last
		// statement.
		_, err = io.Copy(io.Discard, r)
	}
	return n, err
}

// skolemize replaces q's blank nodes with their skolem IRIs under genid.
func skolemize(q graph.Quad, genid string) graph.Quad {
	for _, t := range []*graph.Term{&q.S, &q.O, &q.G} {
		if t.Kind == graph.KindBlank {
			*t = graph.IRI(genid + url.PathEscape(t.Value))
		}
	}
	return q
}

// The spool holds each statement as four terms, each a kind byte and, for
// a term that is not zero, its value, datatype and language as uvarint
// lengths and bytes.

func appendSpoolQuad(b []byte, q graph.Quad) []byte {
	for _, t := range []graph.Term{q.S, q.P, q.O, q.G} {
		b = append(b, byte(t.Kind))
		if t.Kind == graph.None {
			continue
		}
		for _, s := range []string{t.Value, t.Datatype, t.Lang} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

func readSpoolQuad(r *bufio.Reader) (graph.Quad, error) {
	var q graph.Quad
	for _, t := range []*graph.Term{&q.S, &q.P, &q.O, &q.G} {
		k, err := r.ReadByte()
		if err != nil {
			return q, noEOF(err)
		}
		t.Kind = graph.TermKind(k)
		if t.Kind == graph.None {
			continue
		}
		for _, s := range []*string{&t.Value, &t.Datatype, &t.Lang} {
			n, err := binary.ReadUvarint(r)
			if err != nil {
				return q, noEOF(err)
			}
			if n > MaxStatementBytes*4 {
				return q, errors.New("corrupt spool")
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				return q, noEOF(err)
			}
			*s = string(b)
		}
	}
	return q, nil
}

// noEOF reports an early end of the spool as such.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
