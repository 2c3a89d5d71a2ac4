package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

const twoRecords = `{"citation_id":"c1","raw_url":"https://e.test/original","observed_at":"2025-01-01T00:00:00Z"}
{"citation_id":"c2","raw_url":"https://e.test/other","observed_at":"2025-01-01T00:00:00Z"}
`

// ingestChanging ingests path, calling change when File reaches event.
func ingestChanging(t *testing.T, st *graph.Store, path, event string, change func()) (ingest.Summary, error) {
	t.Helper()
	opts := ingest.Options{Policy: normalize.Default(), Now: clock(), BatchQuads: 50}
	ingest.SetHook(&opts, func(e string) {
		if e == event {
			change()
		}
	})
	return ingest.File(context.Background(), st, path, filepath.Base(path), opts)
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func stored(t *testing.T, st *graph.Store, text string) bool {
	t.Helper()
	s, err := st.Subjects(graph.IRI(vocab.Text), graph.String(text))
	if err != nil {
		t.Fatal(err)
	}
	return len(s) > 0
}

// Regression test for issue 19.2: a line appended between the validation
// and the write pass, here a forged record reusing a citation_id, was
// written unchecked, and the original input could not be ingested again.
func TestIngestLineAppendedBetweenPasses(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "in.jsonl", twoRecords)
	_, err := ingestChanging(t, st, p, "validated", func() {
		appendTo(t, p, `{"citation_id":"c1","raw_url":"https://forged.test/","observed_at":"2025-01-01T00:00:00Z"}`+"\n")
	})
	if !errors.Is(err, ingest.ErrInputChanged) {
		t.Fatalf("ingest of a file appended to between the passes = %v, want ErrInputChanged", err)
	}
	if n := count(t, st); n != 0 {
		t.Errorf("%d quads written, want none", n)
	}
	// The original input still goes in, with one record digest for c1.
	if err := os.WriteFile(p, []byte(twoRecords), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingestFile(t, st, p, false); err != nil {
		t.Fatalf("ingest of the original input afterwards: %v", err)
	}
	c1, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.Citation))
	for _, c := range c1 {
		if d, _ := st.Objects(c, graph.IRI(vocab.RecordDigest)); len(d) != 1 {
			t.Errorf("citation %s has %d record digests, want 1", c.Value, len(d))
		}
	}
	if stored(t, st, "https://forged.test/") {
		t.Errorf("the appended record was stored")
	}
}

// TestIngestLineChangedBetweenPasses: a line changed in place (same
// length) after validation is caught before any line of its block is
// written.
func TestIngestLineChangedBetweenPasses(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "in.jsonl", twoRecords)
	_, err := ingestChanging(t, st, p, "validated", func() {
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, bytes.Replace(b, []byte("e.test/original"), []byte("e.test/forgery!"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if !errors.Is(err, ingest.ErrInputChanged) || !strings.Contains(err.Error(), "lines 1 to 2 differ") {
		t.Fatalf("ingest of a file changed between the passes = %v, want ErrInputChanged naming lines 1 to 2", err)
	}
	for _, u := range []string{"https://e.test/forgery!", "https://e.test/original", "https://e.test/other"} {
		if stored(t, st, u) {
			t.Errorf("%s was stored from a changed block", u)
		}
	}
}

// TestIngestChangeInLaterBlock: with an input of several blocks, the
// blocks before a changed one are written, the changed one is not.
func TestIngestChangeInLaterBlock(t *testing.T) {
	var b strings.Builder
	pad := strings.Repeat("x", 900)
	lines := 0
	for b.Len() < 3<<20>>1 { // 1.5 MiB: two blocks
		lines++
		fmt.Fprintf(&b, `{"citation_id":"c%d","raw_url":"https://e.test/%d","question":"%s","observed_at":"2025-01-01T00:00:00Z"}`+"\n", lines, lines, pad)
	}
	st := openStore(t)
	p := writeFile(t, "in.jsonl", b.String())
	last := fmt.Sprintf("https://e.test/%d", lines)
	forged := fmt.Sprintf("https://f.test/%d", lines) // the same length
	_, err := ingestChanging(t, st, p, "validated", func() {
		data, _ := os.ReadFile(p)
		data = bytes.Replace(data, []byte(`"`+last+`"`), []byte(`"`+forged+`"`), 1)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if !errors.Is(err, ingest.ErrInputChanged) || !strings.Contains(err.Error(), fmt.Sprintf("to %d differ", lines)) {
		t.Fatalf("ingest = %v, want ErrInputChanged for the last block", err)
	}
	if !stored(t, st, "https://e.test/1") {
		t.Errorf("the first block, unchanged, was not written")
	}
	if stored(t, st, last) || stored(t, st, forged) {
		t.Errorf("a line of the changed block was written")
	}
}

// TestIngestFileGrowsDuringWrites: lines appended while the records are
// written are not read; the run of the validated input completes and the
// caller hears of the rest.
func TestIngestFileGrowsDuringWrites(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "in.jsonl", twoRecords)
	sum, err := ingestChanging(t, st, p, "written", func() {
		appendTo(t, p, `{"citation_id":"c3","raw_url":"https://e.test/late","observed_at":"2025-01-01T00:00:00Z"}`+"\n")
	})
	if !errors.Is(err, ingest.ErrInputChanged) || !strings.Contains(err.Error(), "grew") {
		t.Fatalf("ingest = %v, want ErrInputChanged saying the file grew", err)
	}
	if !stored(t, st, "https://e.test/original") || stored(t, st, "https://e.test/late") {
		t.Errorf("want the validated records stored and the appended one not")
	}
	if status, _ := st.Objects(sum.Run, graph.IRI(vocab.RunStatus)); !hasValue(status, "complete") {
		t.Errorf("run status = %v, want complete: it ingested all it validated", status)
	}
}

// Regression test for issue 19.12: the line limit is exact.
func TestIngestLineLimit(t *testing.T) {
	record := func(size int) string {
		head := `{"raw_url":"https://e.test/","observed_at":"2025-01-01T00:00:00Z","question":"`
		return head + strings.Repeat("q", size-len(head)-2) + `"}`
	}
	st := openStore(t)
	p := writeFile(t, "max.jsonl", record(ingest.MaxLineBytes)+"\n")
	if _, err := ingestFile(t, st, p, false); err != nil {
		t.Errorf("a line of exactly MaxLineBytes: %v", err)
	}
	p = writeFile(t, "over.jsonl", "\n"+record(ingest.MaxLineBytes+1))
	_, err := ingestFile(t, st, p, false)
	var re *ingest.RecordError
	if !errors.As(err, &re) || re.Line != 2 || !strings.Contains(re.Msg, "longer than 16777216 bytes") {
		t.Errorf("a line of MaxLineBytes+1 = %v, want a RecordError at line 2", err)
	}
}

// TestIngestByteOrderMark: a UTF-8 byte-order mark at the start of the
// file is not part of the first record; one on a later line is named.
func TestIngestByteOrderMark(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "bom.jsonl", "\uFEFF"+twoRecords)
	if sum, err := ingestFile(t, st, p, false); err != nil || sum.Records != 2 {
		t.Fatalf("ingest with a byte-order mark = %+v, %v", sum, err)
	}
	p = writeFile(t, "bom2.jsonl", twoRecords+"\uFEFF"+twoRecords)
	_, err := ingestFile(t, st, p, false)
	if err == nil || !strings.Contains(err.Error(), "bom2.jsonl:3: the line starts with a byte-order mark") {
		t.Errorf("ingest with a byte-order mark on line 3 = %v", err)
	}
}

// TestIngestOpensStoreAfterValidation: given no store, File validates the
// input before it opens one, so a rejected input creates no database.
func TestIngestOpensStoreAfterValidation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	var st *graph.Store
	opts := ingest.Options{Policy: normalize.Default(), Now: clock(), Open: func() (*graph.Store, error) {
		var err error
		st, err = graph.Open(db, &graph.Options{NoSync: true})
		return st, err
	}}
	bad := writeFile(t, "bad.jsonl", twoRecords+"{\"raw_url\":\"x\"}\n")
	if _, err := ingest.File(context.Background(), nil, bad, "bad.jsonl", opts); err == nil {
		t.Fatal("a bad line was accepted")
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) || st != nil {
		t.Fatalf("a rejected input opened the database (stat: %v)", err)
	}
	good := writeFile(t, "good.jsonl", twoRecords)
	sum, err := ingest.File(context.Background(), nil, good, "good.jsonl", opts)
	if err != nil || st == nil {
		t.Fatalf("ingest = %v (store opened: %v)", err, st != nil)
	}
	defer st.Close()
	if n := count(t, st); int(n) != sum.QuadsAdded || !stored(t, st, "https://e.test/original") {
		t.Errorf("store has %d quads, summary says %d", n, sum.QuadsAdded)
	}
}

// TestIngestOpensStoreFilledMeanwhile: when the database that Open returns
// was created and filled by another process during validation, the input
// is checked against it before anything is written.
func TestIngestOpensStoreFilledMeanwhile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	other := writeFile(t, "other.jsonl", `{"citation_id":"c1","raw_url":"https://e.test/theirs","observed_at":"2025-01-01T00:00:00Z"}`+"\n")
	var st *graph.Store
	opts := ingest.Options{Policy: normalize.Default(), Now: clock(), Open: func() (*graph.Store, error) {
		var err error
		if st, err = graph.Open(db, &graph.Options{NoSync: true}); err != nil {
			return nil, err
		}
		// The other process's ingest, finished before this one opens.
		_, err = ingest.File(context.Background(), st, other, "other.jsonl", ingest.Options{Policy: normalize.Default()})
		return st, err
	}}
	p := writeFile(t, "in.jsonl", twoRecords)
	_, err := ingest.File(context.Background(), nil, p, "in.jsonl", opts)
	if st == nil {
		t.Fatal("Open was not called")
	}
	defer st.Close()
	var ce *ingest.ConflictError
	if !errors.As(err, &ce) || ce.CitationID != "c1" || ce.Where != "the database" {
		t.Fatalf("ingest = %v, want a conflict on c1 with the database", err)
	}
	if stored(t, st, "https://e.test/original") {
		t.Errorf("a record conflicting with the database was written")
	}
}
