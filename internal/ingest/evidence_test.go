package ingest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/capture"
	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/resolve"
	"github.com/provgraph/provgraph/internal/resolve/fixtureweb"
	"github.com/provgraph/provgraph/internal/testenv"
	"github.com/provgraph/provgraph/internal/vocab"
)

// fixtureCitations are the citations of the fixture web that the evidence
// tests resolve: id, URL and cited text.
func fixtureCitations(web *fixtureweb.Web) [][3]string {
	return [][3]string{
		{"guide-utm", web.URL(fixtureweb.Guide) + "?utm_source=chatgpt.com", ""},
		{"present", web.URL(fixtureweb.Guide) + "#intro", fixtureweb.PassagePresent},
		{"paraphrased", web.URL(fixtureweb.Guide) + "#intro", fixtureweb.PassageParaphrased},
		{"absent", web.URL(fixtureweb.Guide) + "#intro", fixtureweb.PassageAbsent},
		{"moved", web.URL(fixtureweb.Moved), ""},
		{"changing-1", web.URL(fixtureweb.Changing) + "?from=a", ""},
		{"changing-2", web.URL(fixtureweb.Changing) + "?from=b", ""},
		{"amp", web.URL(fixtureweb.AMP), ""},
		{"print", web.URL(fixtureweb.Print), ""},
		{"syndicated", web.SyndicatedURL(), ""},
		{"login", web.URL(fixtureweb.Login), ""},
		{"soft404", web.URL(fixtureweb.Soft404), ""},
		{"404", web.URL(fixtureweb.NotFound), ""},
		{"dates", web.URL(fixtureweb.Dates), ""},
		{"huge", web.URL(fixtureweb.Huge), ""},
		{"deep", web.URL(fixtureweb.Deep), ""},
		{"latin1", web.URL(fixtureweb.BadCharset), ""},
	}
}

// resolveFixture ingests the fixture citations into a new store and
// resolves them with a fetcher that captures into dir through wrap (nil:
// the capture writer itself).
func resolveFixture(t *testing.T, web *fixtureweb.Web, dir string, wrap func(*capture.Writer) resolve.Capturer, syncer func(*graph.Store, *capture.Writer) func() error) (*graph.Store, ingest.ResolveSummary) {
	t.Helper()
	var in strings.Builder
	for _, c := range fixtureCitations(web) {
		line, _ := json.Marshal(map[string]string{"citation_id": c[0], "observed_at": "2026-11-01T00:00:00Z", "raw_url": c[1], "cited_text": c[2]})
		in.Write(line)
		in.WriteByte('\n')
	}
	st := openStore(t)
	if _, err := ingestFile(t, st, writeFile(t, "fixture.jsonl", in.String()), false); err != nil {
		t.Fatal(err)
	}
	w, err := capture.Open(capture.Options{Dir: dir, Software: "provgraph/test", Run: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	var c resolve.Capturer = w
	if wrap != nil {
		c = wrap(w)
	}
	f, err := resolve.New(&resolve.Options{
		Policy:     model.FetchPolicy{UserAgent: "provgraph-test", AllowPrivate: true, Timeout: 20 * time.Second},
		PerHost:    8,
		LookupHost: web.LookupHost,
		Capture:    c,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	targets, _, err := ingest.ResolveTargets(context.Background(), st, ingest.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sync := w.Sync
	if syncer != nil {
		sync = syncer(st, w)
	}
	sum, err := ingest.Resolve(context.Background(), st, targets, ingest.ResolveOptions{Policy: f.Policy(), FetchBody: f.FetchBody, Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st, sum
}

// recorded is what the graph holds for one citation's retrieval.
type recorded struct {
	retrieval map[string]string // pg: local name -> value
	evidence  map[string]string
	passage   map[string]string
}

func props(t *testing.T, st *graph.Store, node graph.Term) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := st.Match(context.Background(), graph.Quad{S: node}, func(q graph.Quad) error {
		if name, ok := strings.CutPrefix(q.P.Value, vocab.NS); ok {
			m[name] = q.O.Value
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// recordedOf reads, for every citation, its (one) retrieval, the evidence
// of that retrieval's (one) extraction and the citation's passage check.
func recordedOf(t *testing.T, st *graph.Store) map[string]recorded {
	t.Helper()
	out := map[string]recorded{}
	ctx := context.Background()
	err := st.Match(ctx, graph.Quad{P: graph.IRI(vocab.CitationId)}, func(q graph.Quad) error {
		rets, err := st.Objects(q.S, graph.IRI(vocab.RetrievedIn))
		if err != nil || len(rets) != 1 {
			return fmt.Errorf("citation %s: retrievals %v, %v", q.O.Value, rets, err)
		}
		r := recorded{retrieval: props(t, st, rets[0])}
		acts, err := st.Subjects(graph.IRI(vocab.OfRetrieval), rets[0])
		if err != nil || len(acts) > 1 {
			return fmt.Errorf("citation %s: extractions %v, %v", q.O.Value, acts, err)
		}
		if len(acts) == 1 {
			evs, err := st.Subjects(graph.IRI(vocab.ProvWasGeneratedBy), acts[0])
			if err != nil || len(evs) != 1 {
				return fmt.Errorf("citation %s: evidence %v, %v", q.O.Value, evs, err)
			}
			r.evidence = props(t, st, evs[0])
		}
		checks, err := st.Subjects(graph.IRI(vocab.CheckOf), q.S)
		if err != nil || len(checks) > 1 {
			return fmt.Errorf("citation %s: passage checks %v, %v", q.O.Value, checks, err)
		}
		if len(checks) == 1 {
			r.passage = props(t, st, checks[0])
		}
		out[q.O.Value] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func simDistance(t *testing.T, a, b string) int {
	t.Helper()
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil || len(a) != 16 || len(b) != 16 {
		t.Fatalf("SimHashes %q, %q are not 16 hex digits", a, b)
	}
	return extract.Distance(x, y)
}

// TestResolveEvidenceOnFixtureWeb resolves the fixture web with capture
// and extraction and checks the evidence recorded for each kind of page:
// bytes that change with text that does not, text that changes, variants
// and a syndicated copy, error pages, conflicting dates, hostile pages,
// and the cited passages (issue 14).
func TestResolveEvidenceOnFixtureWeb(t *testing.T) {
	web := fixtureweb.Start(t)
	dir := t.TempDir()
	st, sum := resolveFixture(t, web, dir, nil, nil)
	n := len(fixtureCitations(web))
	// Three citations share one raw URL, and so one retrieval.
	if sum.Retrievals != n-2 || sum.Extractions != n-2 || sum.Passages != 3 || sum.Found != 1 {
		t.Errorf("summary %+v: want %d retrievals and extractions, 3 passage checks, 1 found", sum, n-2)
	}
	rec := recordedOf(t, st)
	ev := func(id, name string) string { return rec[id].evidence[name] }

	// Bytes change per request, the article does not: different content
	// hashes, one text digest.
	g1, g2 := rec["guide-utm"], rec["present"]
	if g1.retrieval["contentHash"] == g2.retrieval["contentHash"] {
		t.Errorf("the guide's two fetches have one content hash %s; the fixture should change its bytes", g1.retrieval["contentHash"])
	}
	if ev("guide-utm", "textDigest") == "" || ev("guide-utm", "textDigest") != ev("present", "textDigest") {
		t.Errorf("the guide's text digests differ: %q, %q", ev("guide-utm", "textDigest"), ev("present", "textDigest"))
	}
	if ev("guide-utm", "title") != "Floating tidal turbine ends three-year trial off Ushant" || ev("guide-utm", "language") != "en" ||
		ev("guide-utm", "extractionMethod") != extract.MethodReadability || ev("guide-utm", "extractor") != extract.Version ||
		ev("guide-utm", "mediaType") != "text/html" || ev("guide-utm", "softError") != "" || ev("guide-utm", "ogTitle") == "" {
		t.Errorf("guide evidence %v", rec["guide-utm"].evidence)
	}
	if words, _ := strconv.Atoi(ev("guide-utm", "wordCount")); words < 100 {
		t.Errorf("guide word count %d: the article has more than 100 words", words)
	}
	// The redirect's target is the guide.
	if ev("moved", "textDigest") != ev("guide-utm", "textDigest") {
		t.Errorf("moved: text digest %q, want the guide's", ev("moved", "textDigest"))
	}
	// The article whose text changes: not even near-identical.
	if d := simDistance(t, ev("changing-1", "simHash"), ev("changing-2", "simHash")); ev("changing-1", "textDigest") == ev("changing-2", "textDigest") || d <= extract.NearThreshold {
		t.Errorf("the changing article: one text digest, or SimHash distance %d within %d, over two fetches", d, extract.NearThreshold)
	}
	// Variants and the syndicated copy: the guide's main text exactly,
	// whatever their templates.
	for _, id := range []string{"amp", "print", "syndicated"} {
		if ev(id, "textDigest") != ev("guide-utm", "textDigest") {
			t.Errorf("%s: text digest %s, want the guide's %s", id, ev(id, "textDigest"), ev("guide-utm", "textDigest"))
		}
	}
	// Error pages never read as pages.
	for id, want := range map[string]string{"login": extract.ClassLoginWall, "soft404": extract.ClassNotFound, "404": extract.ClassClientError} {
		if got := ev(id, "softError"); got != want {
			t.Errorf("%s: soft error %q, want %q", id, got, want)
		}
	}
	if rec["404"].retrieval["outcome"] != model.OutcomeHTTPError {
		t.Errorf("404: outcome %q", rec["404"].retrieval["outcome"])
	}
	// Conflicting declared dates.
	if ev("dates", "datesDisagree") != "true" || !strings.Contains(ev("dates", "declaredDates"), fixtureweb.DatesPublished) || !strings.Contains(ev("dates", "declaredDates"), fixtureweb.DatesOther) {
		t.Errorf("dates: disagree %q, dates %q", ev("dates", "datesDisagree"), ev("dates", "declaredDates"))
	}
	if ev("guide-utm", "datesDisagree") != "false" {
		t.Errorf("guide: datesDisagree %q", ev("guide-utm", "datesDisagree"))
	}
	// Hostile pages: a recorded problem, the retrieval ok.
	for id, want := range map[string]string{"huge": "body cut at", "deep": "nested", "latin1": "not valid in the declared charset"} {
		if !strings.Contains(ev(id, "extractionProblem"), want) || rec[id].retrieval["outcome"] != model.OutcomeOK {
			t.Errorf("%s: problem %q (want %q), outcome %q", id, ev(id, "extractionProblem"), want, rec[id].retrieval["outcome"])
		}
	}
	// The cited passages.
	for id, want := range map[string]string{"present": "true exact", "paraphrased": "false window", "absent": "false window"} {
		p := rec[id].passage
		if got := p["passageFound"] + " " + p["passageMethod"]; got != want {
			t.Errorf("%s: passage %v, want %s", id, p, want)
		}
	}
	if p := rec["present"].passage; p["passageScore"] != "1.0000" || p["spanStart"] == "0" || p["spanEnd"] <= p["spanStart"] {
		t.Errorf("present: passage %v, want score 1 and a span", p)
	}
	if p := rec["absent"].passage; p["passageScore"] >= "0.5" {
		t.Errorf("absent: score %s", p["passageScore"])
	}
	if rec["guide-utm"].passage != nil {
		t.Errorf("a citation without cited_text has a passage check: %v", rec["guide-utm"].passage)
	}

	// Every retrieval with a response names its capture, which reads back.
	for id, r := range rec {
		ref, err := capture.ParseRef(r.retrieval["snapshotRef"])
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		resp, err := capture.Read(dir, ref)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if resp.URL != r.retrieval["finalURL"] || strconv.Itoa(resp.Status) != r.retrieval["finalStatus"] {
			t.Errorf("%s: capture of %s %d, retrieval of %s %s", id, resp.URL, resp.Status, r.retrieval["finalURL"], r.retrieval["finalStatus"])
		}
		if r.retrieval["contentHash"] != "" && "sha256:"+sha256Hex(resp.Body) != r.retrieval["contentHash"] {
			t.Errorf("%s: captured body does not have the retrieval's content hash", id)
		}
		if id == "guide-utm" && !bytes.Contains(resp.Body, []byte(fixtureweb.Article[2])) {
			t.Errorf("guide: the captured body lacks the article")
		}
		if cr := rec[id].evidence; cr == nil {
			t.Errorf("%s: no evidence", id)
		}
	}
	verifyWARC(t, dir, n-2+1) // one exchange per retrieval, and the redirect's hop
}

// verifyWARC reads every WARC file in dir with warcio.js (the capture
// package's verify.mjs) and checks that every digest verifies and that
// there are exchanges response/request pairs besides the warcinfo records.
func verifyWARC(t *testing.T, dir string, exchanges int) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.MissingTool(t, "node is not installed (Debian package nodejs)")
	}
	js := filepath.Join("..", "capture", "testdata", "js")
	if _, err := os.Stat(filepath.Join(js, "node_modules", "warcio", "package.json")); err != nil {
		testenv.MissingTool(t, "npm package warcio is not installed: run npm ci --prefix internal/capture/testdata/js (.ci/run does)")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("no WARC file in %s", dir)
	}
	out, err := exec.Command(node, append([]string{filepath.Join(js, "verify.mjs")}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("warcio: %v\n%s", err, out)
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Type    string `json:"type"`
			BlockOK *bool  `json:"block_ok"`
			IP      string `json:"ip"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		counts[r.Type]++
		if r.Type != "warcinfo" && (r.BlockOK == nil || !*r.BlockOK || r.IP == "") {
			t.Errorf("record %s: block digest ok %v, IP %q", sc.Bytes(), r.BlockOK, r.IP)
		}
	}
	if counts["response"] != exchanges || counts["request"] != exchanges || counts["warcinfo"] != len(files) {
		t.Errorf("warcio read %v from %d files, want %d responses and requests", counts, len(files), exchanges)
	}
}

// fullDisk is a capture writer that fails like a full disk for one URL.
type fullDisk struct {
	w    *capture.Writer
	fail string
}

func (f fullDisk) Write(ex capture.Exchange) (capture.Ref, error) {
	if strings.HasSuffix(ex.URL, f.fail) {
		return capture.Ref{}, fmt.Errorf("capture: writing %s: %w", ex.URL, syscall.ENOSPC)
	}
	return f.w.Write(ex)
}

// TestResolveCaptureFullDisk: a capture that cannot be written is that
// retrieval's outcome, capture-error, with what was observed; every other
// retrieval and its evidence is recorded (issue 14).
func TestResolveCaptureFullDisk(t *testing.T) {
	web := fixtureweb.Start(t)
	st, sum := resolveFixture(t, web, t.TempDir(), func(w *capture.Writer) resolve.Capturer {
		return fullDisk{w, fixtureweb.Dates}
	}, nil)
	if sum.Outcomes[model.OutcomeCaptureError] != 1 {
		t.Errorf("outcomes %v, want one capture-error", sum.Outcomes)
	}
	rec := recordedOf(t, st)
	d := rec["dates"].retrieval
	if d["outcome"] != model.OutcomeCaptureError || !strings.Contains(d["outcomeError"], "no space left on device") ||
		d["snapshotRef"] != "" || d["finalStatus"] != "200" || d["contentHash"] == "" {
		t.Errorf("dates retrieval %v: want capture-error naming the full disk, no snapshot reference, the response kept", d)
	}
	if rec["dates"].evidence["datesDisagree"] != "true" {
		t.Errorf("dates: the evidence of the fetched body was lost: %v", rec["dates"].evidence)
	}
	for id, r := range rec {
		if id != "dates" && r.retrieval["snapshotRef"] == "" {
			t.Errorf("%s: no snapshot reference (outcome %s)", id, r.retrieval["outcome"])
		}
	}
}

// TestResolveSyncsBeforeWriting: the captures a batch names are made
// durable before the batch is written, and a failed sync writes nothing.
func TestResolveSyncsBeforeWriting(t *testing.T) {
	web := fixtureweb.Start(t)
	var stored []int // retrievals stored when Sync was called
	st, sum := resolveFixture(t, web, t.TempDir(), nil, func(st *graph.Store, w *capture.Writer) func() error {
		return func() error {
			rets, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.Retrieval))
			stored = append(stored, len(rets))
			if err != nil {
				return err
			}
			return w.Sync()
		}
	})
	if len(stored) == 0 || stored[0] != 0 {
		t.Errorf("Sync calls saw %v retrievals stored, want the first call before any", stored)
	}
	if rets, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.Retrieval)); len(rets) != sum.Retrievals {
		t.Errorf("%d retrievals stored, %d made", len(rets), sum.Retrievals)
	}

	// A sync that fails: the run stops with its error and no retrieval is
	// stored.
	var in strings.Builder
	fmt.Fprintf(&in, `{"citation_id": "x", "observed_at": "2026-11-01T00:00:00Z", "raw_url": %q}`+"\n", web.URL(fixtureweb.Guide))
	st2 := openStore(t)
	if _, err := ingestFile(t, st2, writeFile(t, "one.jsonl", in.String()), false); err != nil {
		t.Fatal(err)
	}
	w, err := capture.Open(capture.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := resolve.New(&resolve.Options{Policy: model.FetchPolicy{UserAgent: "t", AllowPrivate: true}, LookupHost: web.LookupHost, Capture: w})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	targets, _, _ := ingest.ResolveTargets(context.Background(), st2, ingest.TargetOptions{})
	_, err = ingest.Resolve(context.Background(), st2, targets, ingest.ResolveOptions{FetchBody: f.FetchBody, Sync: func() error { return syscall.EIO }})
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "durable") {
		t.Errorf("Resolve with a failing sync: %v", err)
	}
	if refs, _ := st2.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.Retrieval)); len(refs) != 0 {
		t.Errorf("%d retrievals stored although their captures were not durable", len(refs))
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestReextract derives the evidence again from the captures without
// fetching: a retrieval resolved without extraction gets one, a second run
// adds nothing, and a damaged or missing capture is that retrieval's error
// with nothing else lost (issue 14).
func TestReextract(t *testing.T) {
	web := fixtureweb.Start(t)
	dir := t.TempDir()
	st, sum := resolveFixture(t, web, dir, nil, nil)
	ctx := context.Background()

	// Extracted by resolve already, by this extractor: nothing to add.
	re, err := ingest.Reextract(ctx, st, dir)
	if err != nil || re.Extracted != 0 || re.UpToDate != sum.Retrievals || len(re.Failed) != 0 || re.QuadsAdded != 0 {
		t.Fatalf("Reextract after resolve: %+v, %v; want every retrieval up to date", re, err)
	}

	// Resolve again with a fetcher that captures but does not extract
	// (Fetch, not FetchBody); then Reextract extracts those, from the
	// captures alone.
	w, err := capture.Open(capture.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f, err := resolve.New(&resolve.Options{Policy: model.FetchPolicy{UserAgent: "t", AllowPrivate: true, Timeout: 20 * time.Second}, PerHost: 8, LookupHost: web.LookupHost, Capture: w})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	targets, _, err := ingest.ResolveTargets(ctx, st, ingest.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum2, err := ingest.Resolve(ctx, st, targets, ingest.ResolveOptions{Fetch: f.Fetch, Sync: w.Sync})
	if err != nil || sum2.Extractions != 0 {
		t.Fatalf("Resolve without extraction: %+v, %v", sum2, err)
	}
	w.Close()
	fetched := web.Requests()
	re, err = ingest.Reextract(ctx, st, dir)
	if err != nil || re.Extracted != sum2.Retrievals || re.UpToDate != sum.Retrievals || len(re.Failed) != 0 || re.Passages != 3 || re.Found != 1 {
		t.Fatalf("Reextract: %+v, %v; want %d extracted, %d up to date, 3 passages, 1 found", re, err, sum2.Retrievals, sum.Retrievals)
	}
	if web.Requests() != fetched {
		t.Errorf("Reextract fetched %d pages", web.Requests()-fetched)
	}
	again, err := ingest.Reextract(ctx, st, dir)
	if err != nil || again.Extracted != 0 || again.QuadsAdded != 0 {
		t.Errorf("Reextract twice: %+v, %v; want nothing added", again, err)
	}

	// A damaged capture: a byte changed inside one record is that
	// retrieval's error; the others are extracted.
	st2, _ := resolveFixture(t, web, t.TempDir(), nil, nil)
	// Fresh captures of st2 in a new directory, without extraction, then
	// damage one.
	dir3 := t.TempDir()
	w3, err := capture.Open(capture.Options{Dir: dir3})
	if err != nil {
		t.Fatal(err)
	}
	f3, err := resolve.New(&resolve.Options{Policy: model.FetchPolicy{UserAgent: "t", AllowPrivate: true, Timeout: 20 * time.Second}, PerHost: 8, LookupHost: web.LookupHost, Capture: w3})
	if err != nil {
		t.Fatal(err)
	}
	defer f3.Close()
	targets, _, _ = ingest.ResolveTargets(ctx, st2, ingest.TargetOptions{})
	sum3, err := ingest.Resolve(ctx, st2, targets, ingest.ResolveOptions{Fetch: f3.Fetch, Sync: w3.Sync})
	if err != nil {
		t.Fatal(err)
	}
	w3.Close()
	// A missing capture directory: every retrieval not extracted yet
	// fails, naming its file, and nothing is added.
	missing, err := ingest.Reextract(ctx, st2, filepath.Join(t.TempDir(), "nowhere"))
	if err != nil || missing.QuadsAdded != 0 || len(missing.Failed) != sum3.Retrievals || !strings.Contains(missing.Failed[0].Error(), "no WARC file") {
		t.Errorf("Reextract of a missing directory: %+v, %v; want %d failed", missing, err, sum3.Retrievals)
	}
	rets, err := st2.Subjects(graph.IRI(vocab.InRun), sum3.Run)
	if err != nil || len(rets) == 0 {
		t.Fatalf("retrievals of the run: %v, %v", rets, err)
	}
	refs, _ := st2.Objects(rets[0], graph.IRI(vocab.SnapshotRef))
	ref, err := capture.ParseRef(refs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir3, ref.File)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[ref.Offset+40] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dam, err := ingest.Reextract(ctx, st2, dir3)
	if err != nil || len(dam.Failed) != 1 || dam.Failed[0].Retrieval != rets[0].Value || dam.Extracted != sum3.Retrievals-1 {
		t.Fatalf("Reextract with one damaged capture: %+v, %v; want 1 failed (%s), %d extracted", dam, err, rets[0].Value, sum3.Retrievals-1)
	}
	if msg := dam.Failed[0].Error(); !strings.Contains(msg, ref.File) {
		t.Errorf("the error %q does not name the file", msg)
	}
	if acts, _ := st2.Subjects(graph.IRI(vocab.OfRetrieval), rets[0]); len(acts) != 0 {
		t.Errorf("the damaged retrieval has %d extractions, want none", len(acts))
	}
	if err := st2.Check(ctx); err != nil {
		t.Error(err)
	}
}
