package ingest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

// DefaultBatchQuads is how many quads go into one transaction: large enough
// to amortize bbolt's commit, small enough that a crash loses little work
// and memory stays flat.
const DefaultBatchQuads = 50000

// MaxLineBytes bounds one input line.
const MaxLineBytes = 16 << 20

// Options configures a run. Policy is required; the zero value of every
// other field means its default.
type Options struct {
	Policy      *normalize.Policy
	SkipInvalid bool // write the valid records and report the others, instead of stopping
	BatchQuads  int  // quads per transaction; 0 means DefaultBatchQuads
	// Progress, when set, is called after each batch and at the end.
	Progress func(Progress)
	// Now returns the current time; nil means time.Now. Tests pass a clock.
	Now func() time.Time
}

// Progress reports how far a run has got.
type Progress struct {
	Phase      string // "validate" or "write"
	Lines      int    // input lines read in this phase
	TotalLines int    // lines in the input, known in the write phase
	QuadsAdded int
}

// Summary is the outcome of a run.
type Summary struct {
	Input       string // the input's name, for messages
	InputDigest string
	Run         graph.Term // the ingest run's node
	Resumed     bool       // an earlier, unfinished run of the same input was completed
	Records     int        // valid records
	Invalid     []*RecordError
	URLRejected int // records whose raw URL the policy rejected (stored with the error)
	QuadsAdded  int
	Elapsed     time.Duration
}

// ConflictError reports a citation id that already names different content,
// in the database or earlier in the input. Raw evidence is never
// overwritten, so this stops the run before anything is written.
type ConflictError struct {
	File       string
	Line       int
	CitationID string
	Where      string // "the database" or "line N"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s:%d: citation_id %q already exists in %s with different content; evidence is never overwritten: give the new observation its own citation_id", e.File, e.Line, e.CitationID, e.Where)
}

// ErrInvalidRecords is returned (wrapped) when SkipInvalid left some lines out.
var ErrInvalidRecords = errors.New("some input lines were rejected")

// File ingests the JSON Lines file at path into st. name is how messages
// refer to the input (the path, or "-" for standard input that the caller
// spooled to path).
//
// The whole input is validated first; with an invalid line and without
// SkipInvalid, nothing is written. Writes then go in batches of about
// BatchQuads quads, one transaction each. Every quad is minted from content,
// so a run that was interrupted can be repeated: the repeat completes the
// same ingest run, and the database ends exactly as one uninterrupted run
// would have left it.
func File(ctx context.Context, st *graph.Store, path, name string, opts Options) (Summary, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	sum := Summary{Input: name}
	if opts.Policy == nil {
		return sum, errors.New("ingest: no policy")
	}
	batch := opts.BatchQuads
	if batch <= 0 {
		batch = DefaultBatchQuads
	}
	mapper, err := NewMapper(opts.Policy)
	if err != nil {
		return sum, err
	}

	// Pass 1: validate everything, check citation ids against the input and
	// the database, and digest the input.
	invalid := map[int]bool{}
	// seen holds, per citation id of the input, its record digest and
	// line. Ids and digests are kept as 128-bit hashes: a million
	// citations then cost about 50 MB instead of 150.
	type seenRecord struct {
		digest [16]byte
		line   int
	}
	seen := map[[16]byte]seenRecord{}
	half := func(s string) (h [16]byte) {
		sum := sha256.Sum256([]byte(s))
		copy(h[:], sum[:])
		return h
	}
	h := sha256.New()
	lines, err := eachLine(path, name, h, func(lineNo int, line []byte) error {
		rec, err := ParseRecord(line, name, lineNo)
		if err != nil {
			var re *RecordError
			if opts.SkipInvalid && errors.As(err, &re) {
				sum.Invalid = append(sum.Invalid, re)
				invalid[lineNo] = true
				return nil
			}
			return err
		}
		id, digest := rec.ID(), rec.Digest()
		idKey, digestKey := half(id), half(digest)
		if prev, ok := seen[idKey]; ok {
			if prev.digest != digestKey {
				return &ConflictError{File: name, Line: lineNo, CitationID: id, Where: "line " + strconv.Itoa(prev.line)}
			}
			return nil
		}
		seen[idKey] = seenRecord{digestKey, lineNo}
		stored, err := st.Objects(mint("citation", id), graph.IRI(vocab.RecordDigest))
		if err != nil {
			return err
		}
		for _, d := range stored {
			if d.Value != digest {
				return &ConflictError{File: name, Line: lineNo, CitationID: id, Where: "the database"}
			}
		}
		sum.Records++
		if opts.Progress != nil && lineNo%10000 == 0 {
			opts.Progress(Progress{Phase: "validate", Lines: lineNo})
		}
		return ctx.Err()
	})
	if err != nil {
		return sum, err
	}
	sum.InputDigest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	seen = nil // pass 2 does not need it: let it go before the writes

	// The run: resume an unfinished run of the same input under the same
	// policy, or start a new one.
	run, resumed, err := findUnfinishedRun(st, sum.InputDigest, mapper.PolicyNode())
	if err != nil {
		return sum, err
	}
	startText := start.UTC().Format(time.RFC3339Nano)
	if !resumed {
		// A run is an event, not content: two runs of the same input are
		// two nodes even when they start in the same clock tick.
		run = mint("ingest", sum.InputDigest, opts.Policy.Digest(), startText, nonce())
	}
	sum.Run, sum.Resumed = run, resumed
	head := mapper.PolicyQuads()
	if !resumed {
		head = append(head, runStarted(run, startText, sum.InputDigest, mapper.PolicyNode())...)
	}
	added, err := st.Add(head)
	sum.QuadsAdded += added
	if err != nil {
		return sum, err
	}

	// Pass 2: write the records in batches. One goroutine reads, parses
	// and maps the records while this one writes the previous batch.
	type batchOf struct {
		quads    []graph.Quad
		lastLine int
		rejected int
	}
	batches := make(chan batchOf, 1)
	free := make(chan []graph.Quad, 2)
	free <- make([]graph.Quad, 0, batch+256)
	free <- make([]graph.Quad, 0, batch+256)
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		var buf []graph.Quad
		select {
		case buf = <-free:
		case <-pctx.Done():
			readErr <- pctx.Err()
			return
		}
		rejected := 0
		send := func(lineNo int) error {
			select {
			case batches <- batchOf{buf, lineNo, rejected}:
			case <-pctx.Done():
				return pctx.Err()
			}
			rejected = 0
			select {
			case buf = <-free:
				buf = buf[:0]
			case <-pctx.Done():
				return pctx.Err()
			}
			return nil
		}
		_, err := eachLine(path, name, nil, func(lineNo int, line []byte) error {
			if invalid[lineNo] {
				return nil
			}
			rec, err := ParseRecord(line, name, lineNo)
			if err != nil {
				return fmt.Errorf("%s changed while it was being read: %w", name, err)
			}
			var info Citation
			buf, info, err = mapper.Quads(buf, rec)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", name, lineNo, err)
			}
			if info.Rejected != nil {
				rejected++
			}
			if len(buf) >= batch {
				if err := pctx.Err(); err != nil {
					return err
				}
				return send(lineNo)
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			err = send(lines)
		}
		readErr <- err
	}()
	var writeErr error
	for b := range batches {
		if writeErr != nil {
			continue // drain, so that the reader ends
		}
		added, err := st.Add(b.quads)
		sum.QuadsAdded += added
		sum.URLRejected += b.rejected
		free <- b.quads
		if err != nil {
			writeErr = fmt.Errorf("%s: writing records up to line %d: %w", name, b.lastLine, err)
			stop()
			continue
		}
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: "write", Lines: b.lastLine, TotalLines: lines, QuadsAdded: sum.QuadsAdded})
		}
	}
	if err := <-readErr; writeErr == nil && err != nil {
		writeErr = err
	}
	if writeErr != nil {
		return sum, writeErr
	}

	end := now()
	added, err = st.Add(runCompleted(run, end, sum.Records))
	sum.QuadsAdded += added
	sum.Elapsed = end.Sub(start)
	if err != nil {
		return sum, err
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Phase: "done", Lines: lines, TotalLines: lines, QuadsAdded: sum.QuadsAdded})
	}
	if len(sum.Invalid) > 0 {
		return sum, fmt.Errorf("%s: %d of %d lines rejected: %w", name, len(sum.Invalid), sum.Records+len(sum.Invalid), ErrInvalidRecords)
	}
	return sum, nil
}

// nonce returns 64 random bits in hex.
func nonce() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// findUnfinishedRun returns an ingest run of the same input and policy that
// never recorded its completion.
func findUnfinishedRun(st *graph.Store, inputDigest string, policy graph.Term) (graph.Term, bool, error) {
	runs, err := st.Subjects(graph.IRI(vocab.InputDigest), graph.String(inputDigest))
	if err != nil {
		return graph.Term{}, false, err
	}
	for _, run := range runs {
		done, err := st.Has(graph.Quad{S: run, P: graph.IRI(vocab.RunStatus), O: graph.String("complete")})
		if err != nil {
			return graph.Term{}, false, err
		}
		samePolicy, err := st.Has(graph.Quad{S: run, P: graph.IRI(vocab.ProvUsed), O: policy})
		if err != nil {
			return graph.Term{}, false, err
		}
		if !done && samePolicy {
			return run, true, nil
		}
	}
	return graph.Term{}, false, nil
}

// eachLine calls fn for every non-blank line of the file, with 1-based line
// numbers, writing every byte read to h when h is not nil. It returns the
// number of lines.
func eachLine(path, name string, h io.Writer, fn func(lineNo int, line []byte) error) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if h != nil {
		r = io.TeeReader(f, h)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	lineNo := 0
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if len(long) > MaxLineBytes {
				return lineNo, &RecordError{File: name, Line: lineNo + 1, Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}
			}
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > 0 {
			lineNo++
			if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
				if ferr := fn(lineNo, trimmed); ferr != nil {
					return lineNo, ferr
				}
			}
		}
		if err == io.EOF {
			return lineNo, nil
		}
		if err != nil {
			return lineNo, fmt.Errorf("%s: reading after line %d: %w", name, lineNo, err)
		}
	}
}
