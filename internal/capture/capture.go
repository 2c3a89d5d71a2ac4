// Package capture keeps what a retrieval fetched as WARC 1.1 records (ISO
// 28500:2017), the format every web archive reads, and reads a record back
// by its reference.
//
// Why: a review decision is only as good as the evidence it can be checked
// against later. The graph stores digests and derived evidence; the capture
// keeps the bytes themselves, so that a reviewer can see exactly what was
// served, and so that evidence can be derived again (a better extractor, a
// fixed bug) without fetching a page that may have changed or gone.
//
// Each exchange of a retrieval, every redirect hop and the final response,
// is written as a response record followed by its request record (each
// naming the other in WARC-Concurrent-To), with WARC-Target-URI, WARC-Date,
// WARC-IP-Address where known, WARC-Block-Digest and, for responses,
// WARC-Payload-Digest, both SHA-256 in hex ("sha256:…", the form of
// provgraph's content hashes). Each file starts with a warcinfo record naming
// the software and the resolve run. Files are gzip-compressed record by
// record (so that a record can be read from its offset alone) and rotate at a
// size limit; a file being written ends in ".open" and is renamed when it is
// closed. The writer is github.com/nlnwa/gowarc/v3.
//
// A body cut at the fetcher's size limit is written as far as it was read,
// with WARC-Truncated: length. The package knows nothing of the graph or of
// HTTP clients: the resolver gives it bytes, and it gives back a Ref.
//
// capture imports no provgraph package, and must not: internal/resolve
// writes through it and a reviewer's tool reads through it, neither of which
// should link the store (internal/graph) or the model of the graph.
package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// DefaultMaxFileSize is the size at which a WARC file is closed and the next
// one begun: 1 GiB, the WARC 1.1 standard's recommendation (Annex C).
const DefaultMaxFileSize = 1 << 30

// Options configure a Writer. The zero value of every field but Dir is a
// sensible default.
type Options struct {
	// Dir is the directory the WARC files are written to. It is created if
	// it does not exist.
	Dir string
	// Prefix starts every file name; the rest is a UTC timestamp and a
	// serial number, as the WARC standard recommends.
	Prefix string
	// MaxFileSize is the compressed size past which a new file is begun
	// (DefaultMaxFileSize when 0). A single record larger than it is still
	// written whole, alone in its file.
	MaxFileSize int64
	// Software names the writer in the warcinfo record, e.g.
	// "provgraph/1.2.3".
	Software string
	// Run identifies the resolve run in the warcinfo record.
	Run string
}

// Exchange is one HTTP request and its response, as fetched.
type Exchange struct {
	// URL is the URL requested, WARC-Target-URI of both records.
	URL string
	// Date is when the request was sent.
	Date time.Time
	// IP is the server's address, if known (WARC-IP-Address).
	IP string
	// Request is the request head as sent: request line and header fields,
	// each line ending in CRLF, and the empty line.
	Request []byte
	// ResponseHead is the response's status line and header fields, each
	// line ending in CRLF, and the empty line.
	ResponseHead []byte
	// Body is the response body as read (with any transfer coding removed).
	Body []byte
	// Truncated reports that Body was cut at the fetcher's size limit.
	Truncated bool
}

// Ref locates one response record: the file (its name, without directory
// or ".open"), the offset of the record's gzip member, and its
// WARC-Record-ID as written in the record ("<urn:uuid:…>").
type Ref struct {
	File     string
	Offset   int64
	RecordID string
}

// String writes a Ref in the form stored as a retrieval's snapshot
// reference: "warc:FILE#OFFSET;RECORD-ID".
func (r Ref) String() string {
	return "warc:" + r.File + "#" + strconv.FormatInt(r.Offset, 10) + ";" + r.RecordID
}

// ParseRef reads the form String writes.
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, "warc:")
	if !ok {
		return Ref{}, fmt.Errorf("capture: reference %q does not start with warc:", s)
	}
	file, rest, ok1 := strings.Cut(rest, "#")
	off, id, ok2 := strings.Cut(rest, ";")
	n, err := strconv.ParseInt(off, 10, 64)
	if !ok1 || !ok2 || err != nil || n < 0 || file == "" || id == "" || strings.ContainsAny(file, `/\`) {
		return Ref{}, fmt.Errorf("capture: reference %q is not warc:FILE#OFFSET;RECORD-ID", s)
	}
	return Ref{File: file, Offset: n, RecordID: id}, nil
}

// Writer writes exchanges to WARC files. It is safe for concurrent use.
type Writer struct {
	dir string
	w   *gowarc.WarcFileWriter

	mu      sync.Mutex
	touched map[string]bool // files written since the last Sync
}

// Open prepares a Writer; the first file is created by the first Write.
func Open(opts Options) (*Writer, error) {
	if opts.Dir == "" {
		return nil, errors.New("capture: no directory for the WARC files")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	max := opts.MaxFileSize
	if max <= 0 {
		max = DefaultMaxFileSize
	}
	prefix := opts.Prefix
	if prefix == "" {
		prefix = "provgraph-"
	}
	info := func(b gowarc.WarcRecordBuilder) error {
		software := opts.Software
		if software == "" {
			software = "provgraph"
		}
		fields := "software: " + software + "\r\n" +
			"format: WARC File Format 1.1\r\n" +
			"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
		if opts.Run != "" {
			fields += "description: resolve run " + opts.Run + "\r\n"
		}
		_, err := b.WriteString(fields)
		return err
	}
	w := gowarc.NewWarcFileWriter(
		gowarc.WithFileNameGenerator(&gowarc.PatternNameGenerator{
			Directory: opts.Dir,
			Prefix:    prefix,
			Pattern:   "%{prefix}s%{ts}s-%05{serial}d.%{ext}s",
		}),
		gowarc.WithMaxFileSize(max),
		gowarc.WithCompression(true),
		gowarc.WithAddWarcConcurrentToHeader(true),
		gowarc.WithWarcInfoFunc(info),
		gowarc.WithRecordOptions(recordOptions()...),
	)
	return &Writer{dir: opts.Dir, w: w, touched: map[string]bool{}}, nil
}

// records serializes Write: every record builder gowarc makes (ours, and
// the warcinfo record its file writer makes for each new file) sets
// github.com/google/uuid's global switch for its pool of random bytes
// (uuid.EnableRandPool, in gowarc's default options), and each Build's
// uuid.New reads it, with no synchronization. Captures written on
// several goroutines at once (resolve's parallel fetches) raced there
// (go test -race).
var records sync.Mutex

func recordOptions() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithVersion(gowarc.V1_1),
		gowarc.WithDefaultDigestAlgorithm("sha256"),
		gowarc.WithDefaultDigestEncoding(gowarc.Base16),
		gowarc.WithAddMissingDigest(true),
		gowarc.WithAddMissingRecordId(true),
		gowarc.WithAddMissingContentLength(true),
	}
}

// Write writes the exchange's response record and request record together
// and returns the response record's Ref. The bytes are in the operating
// system's hands when it returns; Sync makes them durable.
func (w *Writer) Write(ex Exchange) (Ref, error) {
	records.Lock()
	defer records.Unlock()
	date := ex.Date.UTC()
	if date.IsZero() {
		date = time.Now().UTC()
	}
	resp := gowarc.NewRecordBuilder(gowarc.Response, recordOptions()...)
	resp.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	resp.AddWarcHeaderTime(gowarc.WarcDate, date)
	resp.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
	if ex.IP != "" {
		resp.AddWarcHeader(gowarc.WarcIPAddress, ex.IP)
	}
	if ex.Truncated {
		resp.AddWarcHeader(gowarc.WarcTruncated, "length")
	}
	if _, err := resp.Write(ex.ResponseHead); err != nil {
		return Ref{}, fmt.Errorf("capture: %w", err)
	}
	if _, err := resp.Write(ex.Body); err != nil {
		return Ref{}, fmt.Errorf("capture: %w", err)
	}
	respRec, _, err := resp.Build()
	if err != nil {
		return Ref{}, fmt.Errorf("capture: response record of %s: %w", ex.URL, err)
	}
	req := gowarc.NewRecordBuilder(gowarc.Request, recordOptions()...)
	req.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	req.AddWarcHeaderTime(gowarc.WarcDate, date)
	req.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=request")
	if ex.IP != "" {
		req.AddWarcHeader(gowarc.WarcIPAddress, ex.IP)
	}
	if _, err := req.Write(ex.Request); err != nil {
		respRec.Close()
		return Ref{}, fmt.Errorf("capture: %w", err)
	}
	reqRec, _, err := req.Build()
	if err != nil {
		respRec.Close()
		return Ref{}, fmt.Errorf("capture: request record of %s: %w", ex.URL, err)
	}
	id := "<" + strings.Trim(respRec.RecordId(), "<>") + ">"
	res := w.w.Write(respRec, reqRec)
	if res == nil {
		return Ref{}, errors.New("capture: the writer is closed")
	}
	for _, r := range res {
		if r.Err != nil {
			return Ref{}, fmt.Errorf("capture: writing %s to %s: %w", ex.URL, filepath.Join(w.dir, r.FileName), r.Err)
		}
	}
	w.mu.Lock()
	w.touched[res[0].FileName] = true
	w.mu.Unlock()
	return Ref{File: res[0].FileName, Offset: res[0].FileOffset, RecordID: id}, nil
}

// Sync makes every record written so far durable (fsync of each file
// written since the last Sync). Call it before recording references to the
// records elsewhere, so that no reference outlives a crash that its record
// did not.
func (w *Writer) Sync() error {
	w.mu.Lock()
	files := w.touched
	w.touched = map[string]bool{}
	w.mu.Unlock()
	for name := range files {
		path, err := locate(w.dir, name)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("capture: sync %s: %w", path, err)
		}
	}
	return nil
}

// Close closes the current file (renaming it from its ".open" name) and
// makes everything written durable.
func (w *Writer) Close() error {
	w.w.Close()
	w.mu.Lock()
	w.touched = map[string]bool{}
	w.mu.Unlock()
	d, err := os.Open(w.dir)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("capture: sync %s: %w", w.dir, err)
	}
	return nil
}

// locate finds a file by its final name, or by its ".open" name while it is
// still being written or after a crash left it so.
func locate(dir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, name+".open")} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("capture: no WARC file %s (or %s.open) in %s", name, name, dir)
}

// Response is a response record read back.
type Response struct {
	URL       string
	Date      time.Time
	Status    int
	Header    map[string][]string // response header fields, names canonical
	Body      []byte
	Truncated bool
}

// MaxReadBody bounds the body Read returns.
const MaxReadBody = 64 << 20

// Read reads the response record at ref from the WARC files in dir. It
// checks that the record there has the expected id and that its block
// digest verifies.
func Read(dir string, ref Ref) (Response, error) {
	path, err := locate(dir, ref.File)
	if err != nil {
		return Response{}, err
	}
	r, err := gowarc.NewWarcFileReader(path, ref.Offset, gowarc.WithBlockErrorPolicy(gowarc.ErrFail))
	if err != nil {
		return Response{}, fmt.Errorf("capture: %s: %w", path, err)
	}
	defer r.Close()
	rec, err := r.Next()
	if err != nil {
		return Response{}, fmt.Errorf("capture: %s at offset %d: %w", path, ref.Offset, err)
	}
	defer rec.WarcRecord.Close()
	wr := rec.WarcRecord
	if strings.Trim(wr.RecordId(), "<>") != strings.Trim(ref.RecordID, "<>") {
		return Response{}, fmt.Errorf("capture: %s at offset %d holds record %s, not %s", path, ref.Offset, wr.RecordId(), ref.RecordID)
	}
	if wr.Type() != gowarc.Response {
		return Response{}, fmt.Errorf("capture: %s at offset %d is a %s record, not a response", path, ref.Offset, wr.Type())
	}
	hb, ok := wr.Block().(gowarc.HttpResponseBlock)
	if !ok {
		return Response{}, fmt.Errorf("capture: %s at offset %d: the response record holds no HTTP response", path, ref.Offset)
	}
	out := Response{URL: wr.WarcHeader().Get(gowarc.WarcTargetURI), Truncated: wr.WarcHeader().Has(gowarc.WarcTruncated)}
	out.Date, _ = wr.Date()
	out.Status = hb.HttpStatusCode()
	out.Header = map[string][]string{}
	if h := hb.HttpHeader(); h != nil {
		for k, v := range *h {
			out.Header[k] = v
		}
	}
	pr, err := hb.PayloadBytes()
	if err != nil {
		return Response{}, fmt.Errorf("capture: %s at offset %d: %w", path, ref.Offset, err)
	}
	out.Body, err = io.ReadAll(io.LimitReader(bufio.NewReader(pr), MaxReadBody))
	if err != nil {
		return Response{}, fmt.Errorf("capture: %s at offset %d: %w", path, ref.Offset, err)
	}
	if v, err := wr.ValidateDigest(); err != nil || len(v) > 0 {
		if err == nil {
			err = v[0]
		}
		return Response{}, fmt.Errorf("capture: %s at offset %d: digest: %w", path, ref.Offset, err)
	}
	return out, nil
}
