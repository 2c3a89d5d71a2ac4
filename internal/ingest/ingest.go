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
	"slices"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// DefaultBatchQuads is how many quads go into one transaction: large enough
// to amortize bbolt's commit, small enough that a crash loses little work
// and memory stays flat.
const DefaultBatchQuads = 50000

// MaxLineBytes bounds one input line: at most 16 MiB (16,777,216 bytes),
// not counting its newline. A longer line is an error, not split or cut.
const MaxLineBytes = 16 << 20

// blockBytes is about how much input each digest that the validation pass
// records covers (blocks end at a line's end). The write pass checks each
// block against its digest before it maps a line of it, so a file changed
// between the passes never has a changed line written, at the cost of one
// more SHA-256 over the input and one 32-byte digest per MiB.
const blockBytes = 1 << 20

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
	// Open, used when File is given no store, opens (or creates) the
	// database once the input has been validated, so that a rejected
	// input leaves no new database file behind. The caller closes the
	// store it returns.
	Open func() (*graph.Store, error)
	// WorkMem bounds the memory of the validation pass's check of citation
	// ids, in bytes (40 bytes an id): an input with more ids is sorted in
	// runs in TempDir and merged. 0 means DefaultWorkMem; less than
	// MinWorkMem means MinWorkMem.
	WorkMem int64
	// TempDir is the directory of the check's temporary files, which are
	// unlinked as soon as they are created; "" means os.TempDir().
	TempDir string
	// NoView keeps a new database from starting a grouping view of the
	// policy. A view costs about half again the CPU of a bulk load (each
	// row is a write at a random place of its B-tree); a database loaded
	// without one gets it later from `provgraph view rebuild`. A database
	// that already keeps views goes on keeping them whatever NoView says:
	// a view missing rows would answer wrongly.
	NoView bool

	// hook, when set, is called between the steps named by its argument;
	// tests use it to change the input at a known point.
	hook func(event string)
}

// Progress reports how far a run has got.
type Progress struct {
	Phase      string // "validate", "write", "view" (renormalize's grouping view, in citations) or "done"
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
	// NoView says the database keeps no grouping view of the run's policy
	// (a database of format 4 or earlier, or one whose view of it was
	// never built): queries scan instead, until `provgraph view rebuild`.
	NoView bool
	// ViewsDropped says an RDF load removed the grouping views: its
	// statements may change any citation.
	ViewsDropped bool
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

// ErrInputChanged is returned (wrapped) when the input file changed after
// it was validated. Only what was validated is written: a change found
// before the writes stops the run with nothing written; one found during
// them stops it before the changed lines; lines appended meanwhile are
// not read.
var ErrInputChanged = errors.New("the input file changed while it was being ingested; write it completely (e.g. to a temporary name, then rename it) before ingesting it")

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
//
// The write pass reads the file again and writes exactly what the
// validation pass checked: it stops at the validated length and checks
// every block against the digest recorded in the first pass before
// writing any of its lines. A file that changed in between is an error
// that wraps ErrInputChanged.
//
// st may be nil when opts.Open is set: the input is then validated as for
// an empty database, and Open is called before the first write.
func File(ctx context.Context, st *graph.Store, path, name string, opts Options) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{Input: name}, err
	}
	defer f.Close()
	return FromFile(ctx, st, f, name, opts)
}

// FromFile is File on a file already open, read from its start and not
// closed: a spool its caller has unlinked at creation, so that no exit,
// kill -9 included, leaves it behind.
func FromFile(ctx context.Context, st *graph.Store, f *os.File, name string, opts Options) (Summary, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Summary{Input: name}, err
	}
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
	if st == nil && opts.Open == nil {
		return sum, errors.New("ingest: no store")
	}
	mapper, err := citestore.NewMapper(opts.Policy)
	if err != nil {
		return sum, err
	}
	hook := opts.hook
	if hook == nil {
		hook = func(string) {}
	}

	// Pass 1: validate everything, check citation ids against the input and
	// the database (through store.Lookup), and digest the input.
	var look store.Lookup
	if st != nil {
		look = citestore.New(st)
	}
	// A run of this input interrupted after some batches (resumeFrom)
	// wrote every line up to written: their ids need no lookup here, and
	// pass 2 does not write them again.
	written, writtenOf, err := resumeFrom(st, f, mapper.PolicyNode())
	if err != nil {
		return sum, err
	}
	if written > 0 {
		hook("resume-known")
	}
	invalid := map[int]bool{}
	// ids keeps (citation id, digest, line) of every valid line, within
	// the working set in memory and past it sorted on disk; after the pass
	// it finds the first line whose id was given earlier with other
	// content. A line whose id the database holds with other content
	// stops the pass there, as a parse error does: what the sort then
	// finds at or before that line comes first, as the conflict that one
	// read in line order would have met first. (Only the first occurrence
	// of an id is its own conflict with the database: at a later one with
	// the same content the first would have stopped the pass, and one
	// with other content conflicts with the first.)
	ids := newIDSorter(opts.TempDir, opts.WorkMem)
	defer ids.close()
	ids.onSpill = func() { hook("ids-spilled") }
	check := newParallelCheck(func(lineNo int, line []byte) (string, string, error) {
		rec, err := ParseRecord(line, name, lineNo)
		if err != nil {
			return "", "", err
		}
		return rec.ID(), rec.Digest(), nil
	}, func(l *parsedLine) error {
		lineNo, id, digest := l.lineNo, l.id, l.digest
		if err := l.err; err != nil {
			var re *RecordError
			if opts.SkipInvalid && errors.As(err, &re) {
				sum.Invalid = append(sum.Invalid, re)
				invalid[lineNo] = true
				return nil
			}
			return err
		}
		if err := ids.add(idRecord{idKey(id), digestKey(digest), int64(lineNo)}); err != nil {
			return fmt.Errorf("%s: line %d: %w", name, lineNo, err)
		}
		if look != nil && lineNo > written {
			stored, ok, err := look.Digest(ctx, id)
			if err != nil && !errors.Is(err, store.ErrConflict) {
				return err
			}
			if err != nil || ok && stored != digest {
				return &ConflictError{File: name, Line: lineNo, CitationID: id, Where: "the database"}
			}
		}
		if opts.Progress != nil && lineNo%10000 == 0 {
			opts.Progress(Progress{Phase: "validate", Lines: lineNo})
		}
		return ctx.Err()
	})
	in, err := validateLines(f, name, check.add)
	err = check.finish(err)
	if err != nil && ctx.Err() != nil {
		return sum, err
	}
	c, distinct, cerr := ids.check()
	ids.close() // pass 2 does not need it: let it go before the writes
	if cerr != nil {
		if err != nil {
			return sum, err
		}
		return sum, fmt.Errorf("%s: checking the citation ids: %w", name, cerr)
	}
	if c != nil {
		return sum, conflictAt(f, name, in, c)
	}
	if err != nil {
		return sum, err
	}
	sum.Records = distinct
	lines := in.lines
	sum.InputDigest = in.digest
	hook("validated")
	if written > 0 && in.digest != writtenOf {
		// The lines skipped were another input's: nothing is written.
		return sum, fmt.Errorf("%s: the file changed between its first read and its validation; nothing was written: %w", name, ErrInputChanged)
	}

	// A file that grew or shrank since is refused before anything is
	// written; one changed in place is caught block by block in pass 2.
	if fi, err := f.Stat(); err != nil {
		return sum, err
	} else if fi.Size() != in.size {
		return sum, fmt.Errorf("%s: %d bytes were validated, the file now has %d; nothing was written: %w", name, in.size, fi.Size(), ErrInputChanged)
	}
	if st == nil {
		if st, err = opts.Open(); err != nil {
			return sum, err
		}
		if n, err := st.Count(); err != nil {
			return sum, err
		} else if n > 0 {
			// Another process created the database meanwhile: check the
			// input against what it holds.
			return FromFile(ctx, st, f, name, opts)
		}
	}

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
		run = citestore.Mint("ingest", sum.InputDigest, opts.Policy.Digest(), startText, nonce())
	}
	sum.Run, sum.Resumed = run, resumed
	head := mapper.PolicyQuads()
	if !resumed {
		head = append(head, runStarted(run, startText, sum.InputDigest, mapper.PolicyNode())...)
	}
	// A new database gets a grouping view of the policy from its first
	// batch (unless opts.NoView); one without a view of it keeps none until
	// it is rebuilt.
	stored, err := st.Count()
	if err != nil {
		return sum, err
	}
	added, err := st.AddWith(head, func(w *graph.Writer) error {
		if stored == 0 && !opts.NoView {
			return citestore.StartView(w, opts.Policy.Digest(), start)
		}
		return nil
	})
	sum.QuadsAdded += added
	if err != nil {
		return sum, err
	}
	if has, err := citestore.New(st).HasView(ctx, opts.Policy.Digest()); err != nil {
		return sum, err
	} else {
		sum.NoView = !has
	}

	// Pass 2: write the records in batches. One goroutine reads, parses
	// and maps the records while this one writes the previous batch.
	type batchOf struct {
		prep     *graph.Prepared      // the batch's quads, checked and looked up (graph.Store.Prepare)
		cits     []citestore.Citation // the citations of the batch, whose view rows it writes
		lastLine int
		rejected int
	}
	// Unbuffered: one batch is written while the next is mapped and
	// prepared, and no third one holds memory meanwhile.
	batches := make(chan batchOf)
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		buf := make([]graph.Quad, 0, batch+256)
		rejected := 0
		var cits []citestore.Citation
		send := func(lineNo int) error {
			// Each batch but the last says how far the run has written, in
			// its own transaction (resumeFrom reads it); after the last the
			// run's completion is written.
			if lineNo < lines {
				buf = append(buf, linesWritten(run, lineNo))
			}
			// The batch is checked and its terms looked up here, while the
			// previous batch is being written; buf is free again after.
			prep, err := st.Prepare(buf)
			if err != nil {
				return fmt.Errorf("%s: records up to line %d: %w", name, lineNo, err)
			}
			select {
			case batches <- batchOf{prep, cits, lineNo, rejected}:
			case <-pctx.Done():
				return pctx.Err()
			}
			rejected, cits, buf = 0, nil, buf[:0]
			return nil
		}
		err := rereadLines(f, name, in, func(lineNo int, line []byte) error {
			if invalid[lineNo] {
				return nil
			}
			rec, err := ParseRecord(line, name, lineNo)
			if err != nil {
				return err // the same bytes were valid in pass 1
			}
			if lineNo <= written {
				// Written before the interruption: only its rejection
				// is counted, for the run's summary.
				rej, err := mapper.Rejects(rec)
				if err != nil {
					return fmt.Errorf("%s:%d: %w", name, lineNo, err)
				}
				if rej {
					rejected++
				}
				return nil
			}
			var info citestore.Citation
			buf, info, err = mapper.Quads(buf, rec)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", name, lineNo, err)
			}
			if info.Rejected != nil {
				rejected++
			}
			cits = append(cits, info)
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
	var rows citestore.NewRows // the view rows of each batch, one goroutine
	for b := range batches {
		if writeErr != nil {
			continue // drain, so that the reader ends
		}
		// The view rows go with the batch's quads, whatever ctx says
		// meanwhile: the batch is written whole or not at all, and the
		// next check of ctx stops the run.
		added, err := st.AddPreparedWith(b.prep, func(w *graph.Writer) error {
			return rows.Write(context.WithoutCancel(ctx), w, opts.Policy.Digest(), b.cits)
		})
		sum.QuadsAdded += added
		sum.URLRejected += b.rejected
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
	hook("written")

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
	// The run is complete: it ingested exactly the validated input. Lines
	// appended since were not read, which the caller must hear about.
	var one [1]byte
	if n, _ := f.ReadAt(one[:], in.size); n > 0 {
		return sum, fmt.Errorf("%s: the file grew while it was being ingested; its %d validated lines were ingested and the lines added since were not (ingest it again to add them): %w", name, lines, ErrInputChanged)
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

// validated is what the validation pass read: the input's length, lines
// and digest, and the digest of each block.
type validated struct {
	size   int64
	lines  int
	digest string // "sha256:" and hex: the run's input digest
	blocks []block
}

// block is a stretch of whole lines of the input.
type block struct {
	end   int64 // the offset just past the block's last line
	lines int   // the number of lines up to and including the block
	sum   [sha256.Size]byte
}

// utf8BOM is the byte-order mark that some tools write at the start of a
// UTF-8 file. It is not part of the first line.
var utf8BOM = []byte("\uFEFF")

// validateLines reads r to its end and calls fn for every non-blank line,
// with 1-based line numbers, recording the digests that rereadLines checks.
// A line longer than MaxLineBytes is an error.
func validateLines(r io.Reader, name string, fn func(lineNo int, line []byte) error) (validated, error) {
	var in validated
	whole, part := sha256.New(), sha256.New()
	var partStart int64
	endBlock := func() {
		b := block{end: in.size, lines: in.lines}
		part.Sum(b.sum[:0])
		in.blocks = append(in.blocks, b)
		part.Reset()
		partStart = in.size
	}
	tooLong := func(lineNo int) error {
		return &RecordError{File: name, Line: lineNo, Msg: fmt.Sprintf("the line is longer than %d bytes (16 MiB), the limit for one JSON Lines record", MaxLineBytes)}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if len(long) > MaxLineBytes {
				return in, tooLong(in.lines + 1)
			}
			continue
		}
		line := chunk
		if len(long) > 0 {
			line = append(long, chunk...)
			long = long[:0]
		}
		if len(line) > 0 {
			whole.Write(line)
			part.Write(line)
			in.size += int64(len(line))
			in.lines++
			if len(bytes.TrimSuffix(line, []byte("\n"))) > MaxLineBytes {
				return in, tooLong(in.lines)
			}
			if content := lineContent(line, in.lines); content != nil {
				if ferr := fn(in.lines, content); ferr != nil {
					return in, ferr
				}
			}
			if in.size-partStart >= blockBytes {
				endBlock()
			}
		}
		if err == io.EOF {
			if in.size > partStart {
				endBlock()
			}
			in.digest = "sha256:" + hex.EncodeToString(whole.Sum(nil))
			return in, nil
		}
		if err != nil {
			return in, fmt.Errorf("%s: reading after line %d: %w", name, in.lines, err)
		}
	}
}

// rereadLines reads the input that validateLines read, from the start of
// f, and calls fn for the same lines. Each block is read whole and checked
// against its digest before fn sees any of its lines; a difference is an
// error that wraps ErrInputChanged. It reads no further than the validated
// length.
func rereadLines(f *os.File, name string, in validated, fn func(lineNo int, line []byte) error) error {
	var buf []byte
	var start int64
	lineNo := 0
	for _, b := range in.blocks {
		buf = slices.Grow(buf[:0], int(b.end-start))[:b.end-start]
		if _, err := f.ReadAt(buf, start); err == io.EOF {
			return fmt.Errorf("%s: the file is shorter than when it was validated (line %d on): %w", name, lineNo+1, ErrInputChanged)
		} else if err != nil {
			return fmt.Errorf("%s: reading line %d on: %w", name, lineNo+1, err)
		}
		if sha256.Sum256(buf) != b.sum {
			return fmt.Errorf("%s: lines %d to %d differ from what was validated; none of them was written: %w", name, lineNo+1, b.lines, ErrInputChanged)
		}
		for rest := buf; len(rest) > 0; {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			rest = rest[len(line):]
			lineNo++
			if content := lineContent(line, lineNo); content != nil {
				if err := fn(lineNo, content); err != nil {
					return err
				}
			}
		}
		start = b.end
	}
	return nil
}

// lineContent returns what ParseRecord is given of a line read with its
// newline: the line without the newline, and on the first line without a
// byte-order mark; nil for a blank line.
func lineContent(line []byte, lineNo int) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if lineNo == 1 {
		line = bytes.TrimPrefix(line, utf8BOM)
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	return line
}
