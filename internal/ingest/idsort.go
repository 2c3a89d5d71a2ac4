package ingest

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
)

// DefaultWorkMem is the default working set of the validation pass's check
// of citation ids, in bytes (64 MiB: about 1.6 million ids). An input with
// more ids is sorted in runs on disk and merged, so that the pass needs
// the same memory for ten million citations as for two million.
const DefaultWorkMem = 64 << 20

// MinWorkMem is the smallest working set the check accepts; a smaller
// Options.WorkMem is raised to it.
const MinWorkMem = 16 << 10

// idRecordBytes is the size of one idRecord, in memory and on disk.
const idRecordBytes = 16 + 16 + 8

// idRecord is what the validation pass keeps of one valid line: its
// citation id and record digest, each as 128 bits of a SHA-256 (as exact
// as the check needs: a collision among 10^10 ids has a chance near
// 10^-19), and its line number.
type idRecord struct {
	id     [16]byte
	digest [16]byte
	line   int64
}

// compareIDRecords orders records by id, then by line: the first record of
// an id is its first occurrence in the input.
func compareIDRecords(a, b idRecord) int {
	if c := bytes.Compare(a.id[:], b.id[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.line, b.line)
}

// idKey is the 128 bits of a citation id that the check compares.
func idKey(id string) (k [16]byte) {
	sum := sha256.Sum256([]byte(id))
	copy(k[:], sum[:])
	return k
}

// digestKey is the 128 bits of a record digest ("sha256:" and hex) that
// the check compares: its first 16 bytes, or a SHA-256 of any other form.
func digestKey(digest string) (k [16]byte) {
	const prefix = "sha256:"
	if len(digest) >= len(prefix)+32 && digest[:len(prefix)] == prefix {
		if _, err := hex.Decode(k[:], []byte(digest[len(prefix):len(prefix)+32])); err == nil {
			return k
		}
	}
	return idKey(digest)
}

// idSorter collects the idRecords of an input and finds, exactly, the
// first line whose citation id was given earlier with other content. It
// holds at most its working set of records in memory: past it, each
// full set is sorted and written as a run to a temporary file, and the
// runs are merged, in several passes when they are more than the working
// set can read at once. The files are unlinked as soon as they are
// created, so that no exit, not even kill -9, leaves them behind; their
// space is freed when they are closed.
type idSorter struct {
	dir     string // where the runs go; "" means os.TempDir()
	mem     int64  // the working set, in bytes
	maxRecs int    // records held in memory before a spill
	buf     []idRecord
	files   [2]*os.File // runs are read from files[0], merged into files[1]
	end     int64       // bytes written to files[0]
	runs    []sortRun   // the runs in files[0]
	spills  int         // runs written, merges included (for tests)
	onSpill func()      // called after each run of the records in memory is written
}

// sortRun is a sorted stretch of records in a spill file.
type sortRun struct {
	off, n int64 // offset in bytes, and number of records
}

// idConflict is a line whose citation id was given at an earlier line
// with another digest.
type idConflict struct {
	line, first int64
	id          [16]byte
}

func newIDSorter(dir string, mem int64) *idSorter {
	if mem <= 0 {
		mem = DefaultWorkMem
	}
	mem = max(mem, MinWorkMem)
	return &idSorter{dir: dir, mem: mem, maxRecs: int(mem / idRecordBytes)}
}

// add keeps r, writing a sorted run to disk first when the working set is
// full.
func (s *idSorter) add(r idRecord) error {
	if len(s.buf) == s.maxRecs {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if len(s.buf) == cap(s.buf) {
		// Grow by doubling, but never past the working set.
		grown := make([]idRecord, len(s.buf), min(max(2*cap(s.buf), 1024), s.maxRecs))
		copy(grown, s.buf)
		s.buf = grown
	}
	s.buf = append(s.buf, r)
	return nil
}

// tempFile creates a file in s.dir and unlinks it at once.
func (s *idSorter) tempFile() (*os.File, error) {
	f, err := os.CreateTemp(s.dir, "provgraph-ingest-ids-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("sort citation ids: %w (--tmp names the directory for temporary files)", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("sort citation ids: %w", err)
	}
	return f, nil
}

// spill sorts the records in memory and appends them to files[0] as a run.
func (s *idSorter) spill() error {
	if s.files[0] == nil {
		f, err := s.tempFile()
		if err != nil {
			return err
		}
		s.files[0] = f
	}
	slices.SortFunc(s.buf, compareIDRecords)
	w := newRunWriter(s.files[0], s.end, s.readBufBytes())
	for _, r := range s.buf {
		w.write(r)
	}
	if err := w.flush(); err != nil {
		return err
	}
	s.runs = append(s.runs, sortRun{s.end, int64(len(s.buf))})
	s.end = w.off
	s.spills++
	s.buf = s.buf[:0]
	if s.onSpill != nil {
		s.onSpill()
	}
	return nil
}

// readBufBytes is the buffer of each run read in a merge: with fanIn runs
// at once, the merge stays within the working set.
func (s *idSorter) readBufBytes() int {
	return int(min(max(s.mem/16, 4<<10), 64<<10))
}

// fanIn is how many runs one merge reads at once.
func (s *idSorter) fanIn() int {
	return max(2, int(s.mem)/s.readBufBytes())
}

// check returns the first conflict by line, if any, and the number of
// distinct citation ids. It consumes the records: call it once.
func (s *idSorter) check() (*idConflict, int, error) {
	var (
		c        *idConflict
		distinct int
		first    idRecord
	)
	err := s.sorted(func(r idRecord) {
		if distinct == 0 || r.id != first.id {
			distinct++
			first = r
			return
		}
		if r.digest != first.digest && (c == nil || r.line < c.line) {
			c = &idConflict{line: r.line, first: first.line, id: r.id}
		}
	})
	return c, distinct, err
}

// sorted calls fn with every record, in the order of compareIDRecords.
func (s *idSorter) sorted(fn func(idRecord)) error {
	if len(s.runs) == 0 {
		slices.SortFunc(s.buf, compareIDRecords)
		for _, r := range s.buf {
			fn(r)
		}
		s.buf = nil
		return nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.buf = nil // the merges' buffers take its place
	for len(s.runs) > s.fanIn() {
		if err := s.mergePass(); err != nil {
			return err
		}
	}
	return s.merge(s.files[0], s.runs, fn)
}

// mergePass merges the runs of files[0] fanIn at a time into files[1],
// which then takes files[0]'s place.
func (s *idSorter) mergePass() error {
	if s.files[1] == nil {
		f, err := s.tempFile()
		if err != nil {
			return err
		}
		s.files[1] = f
	}
	w := newRunWriter(s.files[1], 0, s.readBufBytes())
	var merged []sortRun
	for i := 0; i < len(s.runs); i += s.fanIn() {
		group := s.runs[i:min(i+s.fanIn(), len(s.runs))]
		start, n := w.off, int64(0)
		err := s.merge(s.files[0], group, func(r idRecord) {
			w.write(r)
			n++
		})
		if err == nil {
			err = w.flush()
		}
		if err != nil {
			return err
		}
		merged = append(merged, sortRun{start, n})
		s.spills++
	}
	if err := s.files[0].Truncate(0); err != nil {
		return fmt.Errorf("sort citation ids: %w", err)
	}
	s.files[0], s.files[1] = s.files[1], s.files[0]
	s.runs, s.end = merged, w.off
	return nil
}

// merge calls fn with the records of runs of f in order.
func (s *idSorter) merge(f *os.File, runs []sortRun, fn func(idRecord)) error {
	h := make(runHeap, 0, len(runs))
	for _, run := range runs {
		rr := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(f, run.off, run.n*idRecordBytes), s.readBufBytes()), left: run.n}
		if ok, err := rr.next(); err != nil {
			return err
		} else if ok {
			h = append(h, rr)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		rr := h[0]
		fn(rr.cur)
		ok, err := rr.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// close closes the spill files, which frees their space.
func (s *idSorter) close() {
	for _, f := range s.files {
		if f != nil {
			f.Close()
		}
	}
	s.buf = nil
}

// runWriter appends encoded records to a file from an offset.
type runWriter struct {
	w   *bufio.Writer
	off int64 // the offset past the last record written
	err error
}

func newRunWriter(f *os.File, off int64, size int) *runWriter {
	return &runWriter{w: bufio.NewWriterSize(io.NewOffsetWriter(f, off), size), off: off}
}

func (w *runWriter) write(r idRecord) {
	if w.err != nil {
		return
	}
	var b [idRecordBytes]byte
	copy(b[:16], r.id[:])
	copy(b[16:32], r.digest[:])
	binary.BigEndian.PutUint64(b[32:], uint64(r.line))
	_, w.err = w.w.Write(b[:])
	w.off += idRecordBytes
}

func (w *runWriter) flush() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("sort citation ids: write a run: %w", w.err)
	}
	return nil
}

// runReader reads one run's records in order.
type runReader struct {
	r    *bufio.Reader
	left int64
	cur  idRecord
}

// next reads the next record into cur; false at the end of the run.
func (rr *runReader) next() (bool, error) {
	if rr.left == 0 {
		return false, nil
	}
	var b [idRecordBytes]byte
	if _, err := io.ReadFull(rr.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("sort citation ids: read a run: %w", err)
	}
	copy(rr.cur.id[:], b[:16])
	copy(rr.cur.digest[:], b[16:32])
	rr.cur.line = int64(binary.BigEndian.Uint64(b[32:]))
	rr.left--
	return true, nil
}

// runHeap orders run readers by their current record.
type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return compareIDRecords(h[i].cur, h[j].cur) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// conflictAt returns the ConflictError of c, with the citation id read
// again from its line of f (the sort keeps only 128 bits of it). in is
// what the validation pass read, whole or up to where it stopped: its
// blocks say where to start reading.
func conflictAt(f *os.File, name string, in validated, c *idConflict) error {
	var start int64
	lineNo := 0
	for _, b := range in.blocks {
		if int64(b.lines) >= c.line {
			break
		}
		start, lineNo = b.end, b.lines
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, start, in.size-start), 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			lineNo++
			if int64(lineNo) == c.line {
				if content := lineContent(line, lineNo); content != nil {
					if rec, err := ParseRecord(content, name, lineNo); err == nil && idKey(rec.ID()) == c.id {
						return &ConflictError{File: name, Line: lineNo, CitationID: rec.ID(), Where: "line " + strconv.FormatInt(c.first, 10)}
					}
				}
				break
			}
		}
		if err != nil {
			break
		}
	}
	return fmt.Errorf("%s: line %d differs from what was validated: %w", name, c.line, ErrInputChanged)
}
