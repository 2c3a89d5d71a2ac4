package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/testenv"
)

func exchange(url string, status int, body string, extra string) Exchange {
	return Exchange{
		URL:          url,
		Date:         time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		IP:           "127.0.0.1",
		Request:      []byte("GET " + url[strings.Index(url[8:], "/")+8:] + " HTTP/1.1\r\nHost: example.test\r\nUser-Agent: provgraph-test\r\n\r\n"),
		ResponseHead: []byte(fmt.Sprintf("HTTP/1.1 %d X\r\nContent-Type: text/html; charset=utf-8\r\n%sContent-Length: %d\r\n\r\n", status, extra, len(body))),
		Body:         []byte(body),
	}
}

// writeChain writes a retrieval of two redirect hops and a final response,
// as resolve does, and returns the refs.
func writeChain(t *testing.T, w *Writer) []Ref {
	t.Helper()
	var refs []Ref
	for _, ex := range []Exchange{
		exchange("http://example.test/a", 301, "", "Location: https://example.test/a\r\n"),
		exchange("https://example.test/a", 302, "", "Location: https://example.test/b\r\n"),
		exchange("https://example.test/b", 200, "<html><title>B</title><p>The final page, with “UTF-8” text.</p></html>", ""),
	} {
		ref, err := w.Write(ex)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	return refs
}

// TestWriteRead writes a redirect chain and reads each response back by its
// reference: status, headers, body and the digests all survive.
func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir, Software: "provgraph/test", Run: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	refs := writeChain(t, w)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	// Readable while the file is still open (named .open).
	if _, err := Read(dir, refs[2]); err != nil {
		t.Fatalf("read before close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir, refs[2])
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != 200 || got.URL != "https://example.test/b" || !strings.Contains(string(got.Body), "“UTF-8”") || got.Truncated {
		t.Errorf("read back %+v", got)
	}
	hop, err := Read(dir, refs[0])
	if err != nil || hop.Status != 301 || hop.Header["Location"][0] != "https://example.test/a" {
		t.Errorf("hop: %+v, %v", hop, err)
	}
	// The reference round-trips through its stored form.
	back, err := ParseRef(refs[2].String())
	if err != nil || back != refs[2] {
		t.Errorf("ParseRef(%q) = %+v, %v", refs[2].String(), back, err)
	}
	// A wrong record id at a right offset is refused.
	wrong := refs[2]
	wrong.RecordID = "<urn:uuid:00000000-0000-0000-0000-000000000000>"
	if _, err := Read(dir, wrong); err == nil || !strings.Contains(err.Error(), "not <urn:uuid:0000") {
		t.Errorf("wrong id: %v", err)
	}
	// An offset that is not a record's start is refused with the file named.
	bad := refs[2]
	bad.Offset++
	if _, err := Read(dir, bad); err == nil || !strings.Contains(err.Error(), refs[2].File) {
		t.Errorf("bad offset: %v", err)
	}
}

func TestParseRefErrors(t *testing.T) {
	for _, s := range []string{"", "file#1;id", "warc:#1;id", "warc:f#x;id", "warc:f#-1;id", "warc:f#1;", "warc:../f#1;id", "warc:f;id"} {
		if _, err := ParseRef(s); err == nil {
			t.Errorf("ParseRef(%q) accepted", s)
		}
	}
}

// TestRotation: files rotate at the size limit, each with its warcinfo
// record, and every reference still reads.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir, MaxFileSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	var refs []Ref
	for i := 0; i < 20; i++ {
		body := strings.Repeat(fmt.Sprintf("page %d of random-ish text %x. ", i, i*7919), 60)
		ref, err := w.Write(exchange(fmt.Sprintf("https://example.test/%d", i), 200, body, ""))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) < 3 {
		t.Fatalf("%d files after 20 records at a 4 KiB limit", len(files))
	}
	if open, _ := filepath.Glob(filepath.Join(dir, "*.open")); len(open) != 0 {
		t.Errorf("files left open after Close: %v", open)
	}
	for i, ref := range refs {
		got, err := Read(dir, ref)
		if err != nil || got.URL != fmt.Sprintf("https://example.test/%d", i) {
			t.Errorf("ref %d: %+v %v", i, got.URL, err)
		}
	}
}

// TestTruncatedBody: a body cut at the fetcher's limit is kept as far as it
// was read and marked WARC-Truncated: length.
func TestTruncatedBody(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ex := exchange("https://example.test/big", 200, strings.Repeat("x", 1000), "")
	ex.Truncated = true
	ref, err := w.Write(ex)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := Read(dir, ref)
	if err != nil || !got.Truncated || len(got.Body) != 1000 {
		t.Errorf("truncated: %v %v %d", err, got.Truncated, len(got.Body))
	}
}

// TestWarcio reads every record of a chain's WARC file with webrecorder's
// warcio.js, an independent reader: each record parses, block and payload
// digests verify, responses and requests pair by WARC-Concurrent-To, and
// the file starts with a warcinfo record.
func TestWarcio(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.MissingTool(t, "node is not installed (Debian package nodejs)")
	}
	if _, err := os.Stat("testdata/js/node_modules/warcio/package.json"); err != nil {
		testenv.MissingTool(t, "npm package warcio is not installed: run npm ci --prefix internal/capture/testdata/js (.ci/run does)")
	}
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir, Software: "provgraph/test", Run: "https://provgraph.test/id/run/1"})
	if err != nil {
		t.Fatal(err)
	}
	refs := writeChain(t, w)
	trunc := exchange("https://example.test/big", 200, strings.Repeat("y", 500), "")
	trunc.Truncated = true
	if _, err := w.Write(trunc); err != nil {
		t.Fatal(err)
	}
	w.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	out, err := exec.Command(node, append([]string{"testdata/js/verify.mjs"}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("warcio: %v\n%s", err, out)
	}
	type rec struct {
		Type       string   `json:"type"`
		ID         string   `json:"id"`
		URI        string   `json:"uri"`
		Offset     int64    `json:"offset"`
		Concurrent []string `json:"concurrent"`
		Truncated  string   `json:"truncated"`
		IP         string   `json:"ip"`
		Status     int      `json:"status"`
		BlockOK    *bool    `json:"block_ok"`
		PayloadOK  *bool    `json:"payload_ok"`
	}
	var recs []rec
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r rec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		recs = append(recs, r)
	}
	if len(recs) != 1+2*4 || recs[0].Type != "warcinfo" {
		t.Fatalf("warcio read %d records, want a warcinfo and 4 response/request pairs:\n%s", len(recs), out)
	}
	byID := map[string]rec{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	for i, r := range recs[1:] {
		if r.BlockOK == nil || !*r.BlockOK {
			t.Errorf("record %d (%s %s): block digest missing or wrong", i, r.Type, r.URI)
		}
		if r.Type == "response" && (r.PayloadOK == nil || !*r.PayloadOK) {
			t.Errorf("record %d (%s): payload digest missing or wrong", i, r.URI)
		}
		if len(r.Concurrent) != 1 || byID[r.Concurrent[0]].URI != r.URI || byID[r.Concurrent[0]].Type == r.Type {
			t.Errorf("record %d (%s %s): WARC-Concurrent-To %v does not name its pair", i, r.Type, r.URI, r.Concurrent)
		}
		if r.IP != "127.0.0.1" {
			t.Errorf("record %d: WARC-IP-Address %q", i, r.IP)
		}
	}
	for i, ref := range refs {
		r, ok := byID[ref.RecordID]
		if !ok || r.Type != "response" || r.Offset != ref.Offset {
			t.Errorf("ref %d %+v: warcio sees %+v", i, ref, r)
		}
	}
	if last := recs[len(recs)-2]; last.Truncated != "length" {
		t.Errorf("the truncated response has WARC-Truncated %q", last.Truncated)
	}
}

// TestDamagedFile: a WARC file damaged on disk gives an error naming it,
// never a panic or wrong bytes.
func TestDamagedFile(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	refs := writeChain(t, w)
	w.Close()
	path := filepath.Join(dir, refs[2].File)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{refs[2].Offset + 2, refs[2].Offset + 40, int64(len(orig)) - 30} {
		b := bytes.Clone(orig)
		b[at] ^= 0x55
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Read(dir, refs[2])
		if err == nil && !bytes.Equal(got.Body, []byte("<html><title>B</title><p>The final page, with “UTF-8” text.</p></html>")) {
			t.Errorf("byte %d damaged: read wrong bytes without an error", at)
		}
		if err != nil && !strings.Contains(err.Error(), refs[2].File) {
			t.Errorf("byte %d damaged: error %v does not name the file", at, err)
		}
	}
	if err := os.Truncate(path, refs[2].Offset+10); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir, refs[2]); err == nil {
		t.Error("a truncated record read without an error")
	}
}

func FuzzParseRef(f *testing.F) {
	f.Add("warc:provgraph-20261201-00001.warc.gz#325;<urn:uuid:20d84126-b129-4626-8de7-d192141f238f>")
	f.Add("warc:f#0;x")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		back, err := ParseRef(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRef(%q) = %+v; its String %q reads back as %+v, %v", s, r, r.String(), back, err)
		}
	})
}

// TestWriteConcurrently writes from several goroutines at once, with
// files rotating, as resolve's parallel fetches do: every record reads
// back by its reference, and the records' ids are distinct. Under
// `go test -race` it also checks that the writes do not race in gowarc's
// record builders (which set a global of github.com/google/uuid each).
func TestWriteConcurrently(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir, MaxFileSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 6, 15
	refs := make([][]Ref, writers)
	errs := make(chan error, writers)
	for g := range writers {
		go func() {
			for i := range each {
				url := fmt.Sprintf("https://example.test/%d/%d", g, i)
				ref, err := w.Write(exchange(url, 200, strings.Repeat(url+" ", 40), ""))
				if err != nil {
					errs <- err
					return
				}
				refs[g] = append(refs[g], ref)
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for g := range writers {
		for i, ref := range refs[g] {
			got, err := Read(dir, ref)
			if want := fmt.Sprintf("https://example.test/%d/%d", g, i); err != nil || got.URL != want {
				t.Fatalf("ref of %s: %q, %v", want, got.URL, err)
			}
			if ids[ref.RecordID] {
				t.Fatalf("record id %s given twice", ref.RecordID)
			}
			ids[ref.RecordID] = true
		}
	}
}
