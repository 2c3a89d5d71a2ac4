package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

// openStore opens a fresh store and checks its consistency when the test
// ends.
func openStore(t testing.TB) *graph.Store {
	t.Helper()
	st, err := graph.Open(filepath.Join(t.TempDir(), "test.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(context.Background()); err != nil {
			t.Errorf("store check: %v", err)
		}
		st.Close()
	})
	return st
}

func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// clock returns a fake clock that advances one second per call.
func clock() func() time.Time {
	t := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func ingestFile(t testing.TB, st *graph.Store, path string, skip bool) (ingest.Summary, error) {
	t.Helper()
	return ingest.File(context.Background(), st, path, filepath.Base(path), ingest.Options{
		Policy: normalize.Default(), SkipInvalid: skip, Now: clock(), BatchQuads: 50,
	})
}

func count(t testing.TB, st *graph.Store) int64 {
	t.Helper()
	n, err := st.Count()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIngestExample(t *testing.T) {
	st := openStore(t)
	sum, err := ingestFile(t, st, "../../testdata/citations.jsonl", false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 15 || sum.URLRejected != 2 || len(sum.Invalid) != 0 {
		t.Errorf("summary = %+v, want 15 records, 2 raw URLs rejected by the policy", sum)
	}
	if n := count(t, st); int(n) != sum.QuadsAdded {
		t.Errorf("Count() = %d, summary says %d quads added", n, sum.QuadsAdded)
	}
	// A rejected raw URL is stored with its exact text and its error.
	raws, err := st.Subjects(graph.IRI(vocab.Text), graph.String("https://user:secret@files.example.test/private"))
	if err != nil || len(raws) != 1 {
		t.Fatalf("raw URL node for the rejected URL: %v, %v", raws, err)
	}
	norms, _ := st.Subjects(graph.IRI(vocab.ProvUsed), raws[0])
	var codes []graph.Term
	for _, n := range norms {
		c, _ := st.Objects(n, graph.IRI(vocab.ErrorCode))
		codes = append(codes, c...)
	}
	if len(codes) != 1 || codes[0].Value != "userinfo" {
		t.Errorf("error code of the rejected raw URL = %v, want userinfo", codes)
	}
	// The run finished.
	status, _ := st.Objects(sum.Run, graph.IRI(vocab.RunStatus))
	if !hasValue(status, "complete") {
		t.Errorf("run status = %v, want complete", status)
	}
}

func hasValue(ts []graph.Term, v string) bool {
	for _, t := range ts {
		if t.Value == v {
			return true
		}
	}
	return false
}

// TestIngestTwiceAddsOnlyTheRun: ingest is idempotent; the second run adds
// its own record and nothing else.
func TestIngestTwiceAddsOnlyTheRun(t *testing.T) {
	st := openStore(t)
	first, err := ingestFile(t, st, "../../testdata/citations.jsonl", false)
	if err != nil {
		t.Fatal(err)
	}
	before := count(t, st)
	second, err := ingestFile(t, st, "../../testdata/citations.jsonl", false)
	if err != nil {
		t.Fatal(err)
	}
	if second.Run == first.Run {
		t.Fatalf("second run reused the first run's node %v", first.Run)
	}
	var runQuads int64
	st.Match(context.Background(), graph.Quad{S: second.Run}, func(graph.Quad) error { runQuads++; return nil })
	if got := count(t, st) - before; got != runQuads || int64(second.QuadsAdded) != runQuads {
		t.Errorf("second ingest added %d quads (summary %d); only the %d quads about its run are new", got, second.QuadsAdded, runQuads)
	}
}

func TestIngestBadLineWritesNothing(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "in.jsonl", `{"raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z"}
{"raw_url":"https://b.test/","observed_at":"2025-01-01T00:00:00Z"}

{"raw_url":"https://c.test/","observed_at":"2025-13-01T00:00:00Z"}
`)
	_, err := ingestFile(t, st, p, false)
	var re *ingest.RecordError
	if !errors.As(err, &re) || re.Line != 4 || re.Field != "observed_at" {
		t.Fatalf("ingest = %v, want a RecordError at line 4, field observed_at", err)
	}
	if n := count(t, st); n != 0 {
		t.Errorf("%d quads written by a run that stopped on line 4", n)
	}
}

func TestIngestSkipInvalid(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "in.jsonl", `{"raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z"}
not json
{"raw_url":"https://c.test/"}
{"raw_url":"https://d.test/","observed_at":"2025-01-01T00:00:00Z"}
`)
	sum, err := ingestFile(t, st, p, true)
	if !errors.Is(err, ingest.ErrInvalidRecords) {
		t.Fatalf("ingest --skip-invalid = %v, want ErrInvalidRecords", err)
	}
	if sum.Records != 2 || len(sum.Invalid) != 2 || sum.Invalid[0].Line != 2 || sum.Invalid[1].Line != 3 || sum.Invalid[1].Field != "observed_at" {
		t.Errorf("summary = %+v, invalid = %v", sum, sum.Invalid)
	}
	for _, u := range []string{"https://a.test/", "https://d.test/"} {
		if s, _ := st.Subjects(graph.IRI(vocab.Text), graph.String(u)); len(s) == 0 {
			t.Errorf("valid record %s was not written", u)
		}
	}
}

func TestIngestConflictingCitationID(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "a.jsonl", `{"citation_id":"c1","raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z"}`+"\n")
	if _, err := ingestFile(t, st, p, false); err != nil {
		t.Fatal(err)
	}
	before := count(t, st)
	q := writeFile(t, "b.jsonl", `{"citation_id":"c2","raw_url":"https://x.test/","observed_at":"2025-01-01T00:00:00Z"}
{"citation_id":"c1","raw_url":"https://a.test/changed","observed_at":"2025-01-01T00:00:00Z"}
`)
	_, err := ingestFile(t, st, q, false)
	var ce *ingest.ConflictError
	if !errors.As(err, &ce) || ce.CitationID != "c1" || ce.Line != 2 || ce.Where != "the database" {
		t.Fatalf("ingest = %v, want a conflict on c1 at line 2", err)
	}
	if count(t, st) != before {
		t.Errorf("a conflicting run wrote quads")
	}
	// Within one input, too.
	r := writeFile(t, "c.jsonl", `{"citation_id":"c9","raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z"}
{"citation_id":"c9","raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z"}
{"citation_id":"c9","raw_url":"https://a.test/","observed_at":"2025-01-02T00:00:00Z"}
`)
	_, err = ingestFile(t, st, r, false)
	if !errors.As(err, &ce) || ce.Line != 3 || ce.Where != "line 1" {
		t.Fatalf("ingest = %v, want a conflict at line 3 with line 1", err)
	}
}

// TestIngestKeepsLexicalForms: literals reach the store exactly as given.
// Two timestamps of the same instant stay two literals.
func TestIngestKeepsLexicalForms(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "in.jsonl", `{"citation_id":"a","raw_url":"HTTP://Example.COM/A","observed_at":"2025-01-01T01:00:00+01:00","position":7}
{"citation_id":"b","raw_url":"http://example.com/A","observed_at":"2025-01-01T00:00:00Z","position":7}
`)
	if _, err := ingestFile(t, st, p, false); err != nil {
		t.Fatal(err)
	}
	var times []string
	st.Match(context.Background(), graph.Quad{P: graph.IRI(vocab.ObservedAt)}, func(q graph.Quad) error {
		if q.O.Datatype != graph.XSDDateTime {
			t.Errorf("observedAt datatype = %s", q.O.Datatype)
		}
		times = append(times, q.O.Value)
		return nil
	})
	if len(times) != 2 || !(contains(times, "2025-01-01T01:00:00+01:00") && contains(times, "2025-01-01T00:00:00Z")) {
		t.Errorf("observedAt literals = %q, want both lexical forms kept", times)
	}
	raws, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.RawURL))
	if len(raws) != 2 {
		t.Errorf("%d raw URL nodes for two different raw texts, want 2 (never merged)", len(raws))
	}
	keys := map[string]int{}
	st.Match(context.Background(), graph.Quad{P: graph.IRI(vocab.Text)}, func(q graph.Quad) error {
		keys[q.O.Value]++
		return nil
	})
	// "http://example.com/A" is b's raw text and both citations' key.
	if keys["http://example.com/A"] != 3 || keys["HTTP://Example.COM/A"] != 1 {
		t.Errorf("text literals = %v: want each raw text once and the key on two key nodes", keys)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestIngestResumesUnfinishedRun simulates a crash after the first batch:
// a second run of the same input completes the first run's record, and the
// database ends as one uninterrupted run leaves it.
func TestIngestResumesUnfinishedRun(t *testing.T) {
	input := "../../testdata/citations.jsonl"
	ctx, cancel := context.WithCancel(context.Background())
	st := openStore(t)
	batches := 0
	_, err := ingest.File(ctx, st, input, "citations.jsonl", ingest.Options{
		Policy: normalize.Default(), Now: clock(), BatchQuads: 40,
		Progress: func(p ingest.Progress) {
			if p.Phase == "write" {
				if batches++; batches == 2 {
					cancel()
				}
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted ingest = %v, want context.Canceled", err)
	}
	sum, err := ingestFile(t, st, input, false)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed {
		t.Errorf("second run did not resume the unfinished one")
	}
	status, _ := st.Objects(sum.Run, graph.IRI(vocab.RunStatus))
	if !hasValue(status, "complete") {
		t.Errorf("resumed run status = %v", status)
	}

	clean := openStore(t)
	if _, err := ingestFile(t, clean, input, false); err != nil {
		t.Fatal(err)
	}
	if a, b := dumpWithoutRuns(t, st), dumpWithoutRuns(t, clean); a != b {
		t.Errorf("resumed database differs from an uninterrupted one:\n%s\n---\n%s", a, b)
	}
}

// TestIngestResumesAfterLinesWritten: each batch but the last records the
// lines its run has written (pg:linesWritten, in the batch's own
// transaction), and a run resumed on the same input starts after them: it
// writes only the batches past the mark, does not look up again the ids
// of the lines up to it, and ends as an uninterrupted run.
func TestIngestResumesAfterLinesWritten(t *testing.T) {
	// The corpus backwards: its raw URLs that the policy rejects, near
	// its end, come among the lines the interrupted run writes.
	data, err := os.ReadFile("../../testdata/citations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	slices.Reverse(lines)
	input := writeFile(t, "citations.jsonl", strings.Join(lines, "\n")+"\n")
	opts := func(progress func(ingest.Progress), hook func(string)) ingest.Options {
		o := ingest.Options{Policy: normalize.Default(), Now: clock(), BatchQuads: 40, Progress: progress}
		ingest.SetHook(&o, hook)
		return o
	}
	// An uninterrupted run, for its batches and its quads.
	clean := openStore(t)
	all := 0
	var cleanSum ingest.Summary
	cleanSum, err = ingest.File(context.Background(), clean, input, "citations.jsonl", opts(func(p ingest.Progress) {
		if p.Phase == "write" {
			all++
		}
	}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if cleanSum.URLRejected == 0 {
		t.Fatal("the input has no rejected raw URL: the test of the resumed run's count would prove nothing")
	}
	if all < 4 {
		t.Fatalf("the input makes %d batches, want several", all)
	}
	interrupted := func(t *testing.T) (*graph.Store, int) {
		st := openStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		batches, last := 0, 0
		_, err := ingest.File(ctx, st, input, "citations.jsonl", opts(func(p ingest.Progress) {
			if p.Phase == "write" {
				last = p.Lines
				if batches++; batches == 2 {
					cancel()
				}
			}
		}, nil))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted ingest = %v, want context.Canceled", err)
		}
		runs, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.IngestRun))
		if len(runs) != 1 {
			t.Fatalf("%d runs after the interruption, want 1", len(runs))
		}
		marks, _ := st.Objects(runs[0], graph.IRI(vocab.LinesWritten))
		if !hasValue(marks, strconv.Itoa(last)) {
			t.Fatalf("the interrupted run says it wrote %v lines, want %d among them (its last batch's)", marks, last)
		}
		return st, last
	}

	t.Run("writes only past the mark", func(t *testing.T) {
		st, written := interrupted(t)
		batches, first, known := 0, 0, false
		sum, err := ingest.File(context.Background(), st, input, "citations.jsonl", opts(func(p ingest.Progress) {
			if p.Phase == "write" {
				if batches++; batches == 1 {
					first = p.Lines
				}
			}
		}, func(e string) { known = known || e == "resume-known" }))
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Resumed || !known {
			t.Fatalf("resumed %v, knew where the run stopped %v; want both", sum.Resumed, known)
		}
		if batches >= all || first <= written {
			t.Errorf("the resumed run wrote %d batches, the first up to line %d; want fewer than %d, past line %d", batches, first, all, written)
		}
		// Its summary counts the rejections of the whole input, those of
		// the lines it did not write again included.
		if sum.URLRejected != cleanSum.URLRejected {
			t.Errorf("the resumed run counts %d raw URLs rejected, an uninterrupted one %d", sum.URLRejected, cleanSum.URLRejected)
		}
		if a, b := dumpWithoutRuns(t, st), dumpWithoutRuns(t, clean); a != b {
			t.Errorf("resumed database differs from an uninterrupted one:\n%s\n---\n%s", a, b)
		}
	})

	t.Run("refuses an input changed after the run was found", func(t *testing.T) {
		st, _ := interrupted(t)
		before := count(t, st)
		data, err := os.ReadFile(input)
		if err != nil {
			t.Fatal(err)
		}
		changed := bytes.Replace(data, []byte("https://"), []byte("https:_/"), 1)
		if len(changed) != len(data) || bytes.Equal(changed, data) {
			t.Fatal("the change must keep the input's length and change its bytes")
		}
		defer os.WriteFile(input, data, 0o644)
		_, err = ingest.File(context.Background(), st, input, "citations.jsonl", opts(nil, func(e string) {
			if e == "resume-known" {
				if err := os.WriteFile(input, changed, 0o644); err != nil {
					t.Error(err)
				}
			}
		}))
		if !errors.Is(err, ingest.ErrInputChanged) {
			t.Fatalf("resumed run of an input changed meanwhile: %v, want ErrInputChanged", err)
		}
		if after := count(t, st); after != before {
			t.Errorf("%d quads written by the refused run", after-before)
		}
	})

	t.Run("looks up no id up to the mark", func(t *testing.T) {
		st, _ := interrupted(t)
		// A second digest for the first line's citation: looked up, it
		// would be a conflict with the database.
		var line1 struct {
			ID string `json:"citation_id"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &line1); err != nil {
			t.Fatal(err)
		}
		first := citestore.Mint("citation", line1.ID)
		if ds, _ := st.Objects(first, graph.IRI(vocab.RecordDigest)); len(ds) != 1 {
			t.Fatalf("citation %s has digests %v, want one (is it the input's first line?)", first.Value, ds)
		}
		if _, err := st.Add([]graph.Quad{{S: first, P: graph.IRI(vocab.RecordDigest), O: graph.String("sha256:other")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := ingest.File(context.Background(), st, input, "citations.jsonl", opts(nil, nil)); err != nil {
			t.Fatalf("resumed run looked up an id its run had written: %v", err)
		}
	})
}

// dumpWithoutRuns lists every quad, sorted, leaving out those about ingest
// runs (their times and IRIs differ from run to run by design).
func dumpWithoutRuns(t testing.TB, st *graph.Store) string {
	t.Helper()
	runs := map[graph.Term]bool{}
	rs, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.IngestRun))
	for _, r := range rs {
		runs[r] = true
	}
	var lines []string
	st.Match(context.Background(), graph.Quad{}, func(q graph.Quad) error {
		if !runs[q.S] {
			lines = append(lines, q.String())
		}
		return nil
	})
	sortStrings(lines)
	return strings.Join(lines, "\n")
}

func sortStrings(s []string) { slices.Sort(s) }

// TestIngestConflictWithTwoStoredDigests: a citation that RDF input gave a
// second record digest differs from every record, so ingesting even its
// original line again is a conflict, found through store.Lookup as it was
// through the quads.
func TestIngestConflictWithTwoStoredDigests(t *testing.T) {
	st := openStore(t)
	p := writeFile(t, "a.jsonl", `{"citation_id":"c1","raw_url":"https://a.test/","observed_at":"2025-01-01T00:00:00Z"}`+"\n")
	if _, err := ingestFile(t, st, p, false); err != nil {
		t.Fatal(err)
	}
	second := graph.Quad{S: graph.IRI(model.Mint("citation", "c1")), P: graph.IRI(vocab.RecordDigest), O: graph.String("sha256:another")}
	if _, err := st.Add([]graph.Quad{second}); err != nil {
		t.Fatal(err)
	}
	before := count(t, st)
	_, err := ingestFile(t, st, p, false)
	var ce *ingest.ConflictError
	if !errors.As(err, &ce) || ce.CitationID != "c1" || ce.Line != 1 || ce.Where != "the database" {
		t.Fatalf("ingest = %v, want a conflict on c1 at line 1 with the database", err)
	}
	if count(t, st) != before {
		t.Errorf("a conflicting run wrote quads")
	}
}
