package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/capture"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/resolve"
	"github.com/provgraph/provgraph/internal/vocab"
)

// resolveSite serves a.test and b.test (both on one loopback server):
// a same-host redirect, a cross-host redirect, a page with conflicting
// canonical declarations, and pages that answer only when their request is
// cancelled.
func resolveSite(t testing.TB) (port string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://b.test:"+port+"/page", http.StatusFound)
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "<https://canonical.example/from-header>; rel=canonical")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<head><link rel=canonical href="/from-html"></head>page`)
	})
	mux.HandleFunc("/hang/", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

func testFetcher(t testing.TB) *resolve.Fetcher {
	t.Helper()
	f, err := resolve.New(&resolve.Options{
		Policy:  model.FetchPolicy{UserAgent: "provgraph-test", AllowPrivate: true, Timeout: 5 * time.Second},
		PerHost: 10, // every test URL is on a.test
		LookupHost: func(_ context.Context, host string) ([]netip.Addr, error) {
			if strings.HasSuffix(host, ".test") {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return nil, errors.New("no such host")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// citationsFile writes one citation per path, c1, c2, ... on a.test, the
// first one with a retrieval of its own from the input. Citation i is
// observed on November i (up to the 28th).
func citationsFile(t testing.TB, port string, paths ...string) string {
	t.Helper()
	var b strings.Builder
	for i, p := range paths {
		u := "http://a.test:" + port + p
		rt := ""
		if i == 0 {
			rt = `, "retrieval": {"retrieved_at": "2026-01-01T00:00:00Z", "final_url": "` + u + `", "final_status": 200, "content_hash": "sha256:00", "outcome": "ok"}`
		}
		fmt.Fprintf(&b, `{"citation_id": "c%d", "observed_at": "2026-11-%02dT00:00:00Z", "raw_url": %q%s}`+"\n", i+1, i%28+1, u+"#frag", rt)
	}
	// A raw URL the policy rejects is never resolved.
	b.WriteString(`{"citation_id": "bad", "observed_at": "2026-11-01T00:00:00Z", "raw_url": "http://exa mple.test/"}` + "\n")
	return writeFile(t, "cites.jsonl", b.String())
}

func retrievals(t testing.TB, st *graph.Store) map[string][]*query.Retrieval {
	t.Helper()
	snap, err := query.Load(context.Background(), citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*query.Retrieval{}
	for _, c := range snap.Citations {
		out[c.ID] = c.Retrievals
	}
	return out
}

func runResolve(t testing.TB, st *graph.Store, f *resolve.Fetcher, sel ingest.TargetOptions) ingest.ResolveSummary {
	t.Helper()
	targets, _, err := ingest.ResolveTargets(context.Background(), st, sel)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ingest.Resolve(context.Background(), st, targets, ingest.ResolveOptions{Policy: f.Policy(), Fetch: f.Fetch, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestResolveRecordsRetrievals(t *testing.T) {
	port := resolveSite(t)
	st := openStore(t)
	if _, err := ingestFile(t, st, citationsFile(t, port, "/moved", "/away", "/page"), false); err != nil {
		t.Fatal(err)
	}
	f := testFetcher(t)
	sum := runResolve(t, st, f, ingest.TargetOptions{})
	if sum.Targets != 3 || sum.Retrievals != 3 || sum.Redirected != 2 || sum.CrossHost != 1 || sum.Outcomes["ok"] != 3 || sum.Interrupted {
		t.Errorf("summary %+v, want 3 targets, 3 retrievals, 2 redirected, 1 cross-host, 3 ok", sum)
	}
	a := func(p string) string { return "http://a.test:" + port + p }
	got := retrievals(t, st)
	if n := len(got["c1"]); n != 2 {
		t.Fatalf("c1 has %d retrievals, want the input's and the new one", n)
	}
	if old := got["c1"][0]; old.RetrievedAt != "2026-01-01T00:00:00Z" || old.ContentHash != "sha256:00" {
		t.Errorf("c1's retrieval from the input changed: %+v", old)
	}
	moved := got["c1"][1]
	if len(moved.Hops) != 1 || moved.Hops[0].From != a("/moved") || moved.Hops[0].To != a("/page") || moved.Hops[0].CrossesHost || moved.Hops[0].Status != "301" {
		t.Errorf("c1 hops %+v, want one same-host 301 from /moved to /page", moved.Hops)
	}
	away := got["c2"][0]
	if len(away.Hops) != 1 || !away.Hops[0].CrossesHost || away.FinalURL != "http://b.test:"+port+"/page" {
		t.Errorf("c2 retrieval %+v, want one cross-host hop to b.test", away)
	}
	page := got["c3"][0]
	wantCanon := fmt.Sprint([]model.Canonical{{URL: a("/from-html"), Source: "html-link"}, {URL: "https://canonical.example/from-header", Source: "http-link-header"}})
	if fmt.Sprint(page.Canonicals) != wantCanon || page.Outcome != "ok" || !strings.HasPrefix(page.ContentHash, "sha256:") || page.ContentType != "text/html" {
		t.Errorf("c3 retrieval %+v, want both canonicals %s", page, wantCanon)
	}
	if len(got["bad"]) != 0 {
		t.Errorf("a rejected raw URL was resolved: %+v", got["bad"])
	}
	// The retrieval is tied to its run, which records the policy.
	runs, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.ResolveRun))
	if err != nil || len(runs) != 1 || runs[0] != sum.Run {
		t.Fatalf("resolve runs %v (%v), want %v", runs, err, sum.Run)
	}
	for pred, want := range map[string]string{
		vocab.RunStatus: "complete", vocab.MaxRedirects: "10", vocab.UserAgent: "provgraph-test",
		vocab.AllowPrivate: "true", vocab.AllowedPorts: "*", vocab.TimeoutMillis: "5000", vocab.Records: "3",
		vocab.MaxBodyBytes: fmt.Sprint(resolve.DefaultMaxBodyBytes), vocab.AllowedSchemes: "http https",
	} {
		objs, err := st.Objects(sum.Run, graph.IRI(pred))
		if err != nil || !hasValue(objs, want) {
			t.Errorf("run %s = %v, want %q", pred, objs, want)
		}
	}
	inRun, err := st.Subjects(graph.IRI(vocab.InRun), sum.Run)
	if err != nil || len(inRun) != 3 {
		t.Errorf("%d retrievals in the run (%v), want 3", len(inRun), err)
	}
}

func TestResolveAgainKeepsEarlierRetrievals(t *testing.T) {
	port := resolveSite(t)
	st := openStore(t)
	if _, err := ingestFile(t, st, citationsFile(t, port, "/page", "/moved"), false); err != nil {
		t.Fatal(err)
	}
	f := testFetcher(t)
	runResolve(t, st, f, ingest.TargetOptions{})
	first := retrievals(t, st)
	before := count(t, st)

	// --only-unresolved: everything has a retrieval now.
	targets, counts, err := ingest.ResolveTargets(context.Background(), st, ingest.TargetOptions{OnlyUnresolved: true})
	if err != nil || len(targets) != 0 || counts.Resolved != 2 || counts.Rejected != 1 {
		t.Errorf("only unresolved: %d targets, counts %+v, %v; want none, 2 resolved already, 1 rejected", len(targets), counts, err)
	}
	// --since: only c2 was observed on or after November 2nd.
	targets, counts, err = ingest.ResolveTargets(context.Background(), st, ingest.TargetOptions{Since: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)})
	if err != nil || len(targets) != 1 || counts.Before != 1 || targets[0].URL != "http://a.test:"+port+"/moved" || len(targets[0].Citations) != 1 {
		t.Errorf("since: targets %+v, counts %+v, %v; want only c2's /moved, 1 before", targets, counts, err)
	}

	runResolve(t, st, f, ingest.TargetOptions{})
	second := retrievals(t, st)
	if count(t, st) <= before {
		t.Errorf("re-resolving added nothing")
	}
	for _, id := range []string{"c1", "c2"} {
		if len(second[id]) != len(first[id])+1 {
			t.Errorf("%s: %d retrievals after re-resolving, want %d", id, len(second[id]), len(first[id])+1)
		}
		for i, r := range first[id] {
			if fmt.Sprint(second[id][i]) != fmt.Sprint(r) {
				t.Errorf("%s: retrieval %d changed:\n%+v\nwas\n%+v", id, i, second[id][i], r)
			}
		}
	}
}

// TestResolveInterrupted cancels a run while some retrievals hang: the
// finished ones are saved whole, the run is marked interrupted, and the
// database opens, checks and keeps every earlier record.
func TestResolveInterrupted(t *testing.T) {
	port := resolveSite(t)
	dbPath := t.TempDir() + "/interrupted.db"
	st, err := graph.Open(dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/page", "/moved", "/away", "/hang/1", "/hang/2", "/hang/3"}
	if _, err := ingestFile(t, st, citationsFile(t, port, paths...), false); err != nil {
		t.Fatal(err)
	}
	beforeQuads := count(t, st)
	beforeSnap, err := query.Load(context.Background(), citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	f := testFetcher(t)
	targets, _, err := ingest.ResolveTargets(context.Background(), st, ingest.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done atomic.Int32
	sum, err := ingest.Resolve(ctx, st, targets, ingest.ResolveOptions{
		Policy: f.Policy(), Fetch: f.Fetch, Concurrency: len(targets),
		Progress: func(n, total int) {
			if done.Add(1) == 3 {
				cancel() // the three that answer are in; the others hang
			}
		},
	})
	if !errors.Is(err, ingest.ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Resolve = %v, want ErrInterrupted and context.Canceled", err)
	}
	if sum.Retrievals != 3 || !sum.Interrupted {
		t.Errorf("summary %+v, want 3 retrievals, interrupted", sum)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = graph.Open(dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	status, _ := st.Objects(sum.Run, graph.IRI(vocab.RunStatus))
	records, _ := st.Objects(sum.Run, graph.IRI(vocab.Records))
	if !hasValue(status, "interrupted") || hasValue(status, "complete") || !hasValue(records, "3") {
		t.Errorf("run status %v, records %v; want interrupted, not complete, 3", status, records)
	}
	after, err := query.Load(context.Background(), citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Citations) != len(beforeSnap.Citations) || count(t, st) <= beforeQuads {
		t.Fatalf("%d citations after, %d before", len(after.Citations), len(beforeSnap.Citations))
	}
	resolved := 0
	for i, c := range after.Citations {
		b := beforeSnap.Citations[i]
		if c.ID != b.ID || c.Raw != b.Raw || fmt.Sprint(c.Norm) != fmt.Sprint(b.Norm) {
			t.Errorf("citation %s changed", c.ID)
		}
		for j, r := range b.Retrievals {
			if fmt.Sprint(c.Retrievals[j]) != fmt.Sprint(r) {
				t.Errorf("citation %s: earlier retrieval changed", c.ID)
			}
		}
		if len(c.Retrievals) > len(b.Retrievals) {
			resolved++
			// Whole: a retrieval with hops has every hop.
			r := c.Retrievals[len(c.Retrievals)-1]
			if r.Outcome != "ok" || r.ContentHash == "" || (strings.Contains(c.Raw, "/moved") || strings.Contains(c.Raw, "/away")) != (len(r.Hops) == 1) {
				t.Errorf("citation %s: retrieval not whole: %+v", c.ID, r)
			}
			if strings.Contains(c.Raw, "/hang/") {
				t.Errorf("citation %s: an abandoned retrieval was recorded", c.ID)
			}
		}
	}
	if resolved != 3 {
		t.Errorf("%d citations got a retrieval, want 3", resolved)
	}
}

// BenchmarkResolve resolves 1,000 citations of distinct URLs on a loopback
// server, half of them through one same-host redirect, into a fresh store
// per iteration: fetching, hashing, canonical parsing and recording, with
// the default concurrency and per-host limit raised to match it. It
// reports retrievals/s and quads per retrieval.
//
// Sub-benchmarks: "plain" is the run above on a tiny page; "article" and
// "article+capture+extract" fetch a real news article (the extractor's
// fixture news.html, 1,000 distinct URLs, half redirected) without and with
// WARC capture (synced before each batch, as resolve does) and extraction,
// and also report the database bytes per retrieval.
func BenchmarkResolve(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		port := resolveSite(b)
		benchResolve(b, port, "/moved", "/page", false)
	})
	article, err := os.ReadFile("../extract/testdata/pages/news.html")
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(article)
	})
	mux.HandleFunc("/m", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/a?"+r.URL.RawQuery, http.StatusMovedPermanently)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	b.Run("article", func(b *testing.B) { benchResolve(b, port, "/m", "/a", false) })
	b.Run("article+capture+extract", func(b *testing.B) { benchResolve(b, port, "/m", "/a", true) })
}

func benchResolve(b *testing.B, port, moved, page string, evidence bool) {
	const n = 1000
	paths := make([]string, n)
	for i := range paths {
		if i%2 == 0 {
			paths[i] = fmt.Sprintf("%s?n=%d", moved, i)
		} else {
			paths[i] = fmt.Sprintf("%s?n=%d", page, i)
		}
	}
	in := citationsFile(b, port, paths...)
	quads := 0
	var dbBytes int64
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		st, err := graph.Open(dir+"/b.db", &graph.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ingestFile(b, st, in, false); err != nil {
			b.Fatal(err)
		}
		targets, _, err := ingest.ResolveTargets(context.Background(), st, ingest.TargetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		fopts := &resolve.Options{
			Policy:  model.FetchPolicy{UserAgent: "provgraph-bench", AllowPrivate: true},
			PerHost: ingest.DefaultConcurrency,
			LookupHost: func(context.Context, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			},
		}
		var w *capture.Writer
		if evidence {
			if w, err = capture.Open(capture.Options{Dir: dir + "/warc"}); err != nil {
				b.Fatal(err)
			}
			fopts.Capture = w
		}
		f, err := resolve.New(fopts)
		if err != nil {
			b.Fatal(err)
		}
		before, _ := os.Stat(dir + "/b.db")
		opts := ingest.ResolveOptions{Policy: f.Policy(), Fetch: f.Fetch}
		if evidence {
			opts.FetchBody, opts.Sync = f.FetchBody, w.Sync
		}
		b.StartTimer()
		sum, err := ingest.Resolve(context.Background(), st, targets, opts)
		if err != nil || sum.Outcomes["ok"] != n {
			b.Fatalf("Resolve: %v, outcomes %v", err, sum.Outcomes)
		}
		if w != nil {
			w.Close()
		}
		quads += sum.QuadsAdded
		b.StopTimer()
		f.Close()
		st.Close()
		after, _ := os.Stat(dir + "/b.db")
		dbBytes += after.Size() - before.Size()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "retrievals/s")
	b.ReportMetric(float64(quads)/float64(n*b.N), "quads/retrieval")
	b.ReportMetric(float64(dbBytes)/float64(n*b.N), "db-bytes/retrieval")
}

// TestResolveRecordsDroppedCanonicals checks that a retrieval whose
// fetcher dropped canonical declarations says how many (issue 19), and one
// that dropped none says nothing.
func TestResolveRecordsDroppedCanonicals(t *testing.T) {
	port := resolveSite(t)
	st := openStore(t)
	if _, err := ingestFile(t, st, citationsFile(t, port, "/many", "/few"), false); err != nil {
		t.Fatal(err)
	}
	targets, _, err := ingest.ResolveTargets(context.Background(), st, ingest.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(_ context.Context, u string) (*model.Retrieval, error) {
		rt := &model.Retrieval{RetrievedAt: "2026-12-01T00:00:00Z", FinalURL: u, FinalStatus: "200", Outcome: "ok",
			Canonical: []model.Canonical{{URL: "https://example.com/c", Source: "html-link"}}}
		if strings.HasSuffix(u, "/many") {
			rt.CanonicalDropped = 12345
		}
		return rt, nil
	}
	if _, err := ingest.Resolve(context.Background(), st, targets, ingest.ResolveOptions{Fetch: fetch}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = st.Match(context.Background(), graph.Quad{P: graph.IRI(vocab.CanonicalDropped)}, func(q graph.Quad) error {
		urls, err := st.Objects(q.S, graph.IRI(vocab.FinalURL))
		if err != nil || len(urls) != 1 {
			return fmt.Errorf("final URL of %s: %v %v", q.S, urls, err)
		}
		got[urls[0].Value] = q.O.Value + " " + q.O.Datatype
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"http://a.test:" + port + "/many": "12345 " + graph.XSDInteger}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pg:canonicalDropped by final URL = %v, want %v", got, want)
	}
}

// TestOnlyUnresolvedRetriesFailures checks what --only-unresolved skips: a
// citation with a retrieval that did not fail (outcome ok, or none given),
// never one whose every retrieval failed (issue 18: citations refused by
// the guard were skipped as resolved already).
func TestOnlyUnresolvedRetriesFailures(t *testing.T) {
	st := openStore(t)
	in := writeFile(t, "given.jsonl", `{"citation_id": "given-no-outcome", "observed_at": "2026-11-01T00:00:00Z", "raw_url": "http://a.test/1", "retrieval": {"retrieved_at": "2026-01-01T00:00:00Z", "final_url": "http://a.test/1", "final_status": 200}}
{"citation_id": "given-failed", "observed_at": "2026-11-01T00:00:00Z", "raw_url": "http://a.test/2", "retrieval": {"retrieved_at": "2026-01-01T00:00:00Z", "outcome": "timeout"}}
{"citation_id": "none", "observed_at": "2026-11-01T00:00:00Z", "raw_url": "http://a.test/3"}
`)
	if _, err := ingestFile(t, st, in, false); err != nil {
		t.Fatal(err)
	}
	urls := func(targets []ingest.ResolveTarget) []string {
		var out []string
		for _, tg := range targets {
			out = append(out, tg.URL)
		}
		return out
	}
	only := ingest.TargetOptions{OnlyUnresolved: true}
	targets, counts, err := ingest.ResolveTargets(context.Background(), st, only)
	if err != nil || fmt.Sprint(urls(targets)) != "[http://a.test/2 http://a.test/3]" || counts.Resolved != 1 || counts.Retried != 1 {
		t.Errorf("before resolving: targets %v, counts %+v, %v; want /2 and /3, 1 resolved, 1 retried", urls(targets), counts, err)
	}
	// The guard blocks /2 again; /3 is fetched.
	fetch := func(_ context.Context, u string) (*model.Retrieval, error) {
		if strings.HasSuffix(u, "/2") {
			return &model.Retrieval{RetrievedAt: "2026-12-01T00:00:00Z", Outcome: "blocked-address", OutcomeError: "refused"}, nil
		}
		return &model.Retrieval{RetrievedAt: "2026-12-01T00:00:00Z", FinalURL: u, FinalStatus: "200", Outcome: "ok"}, nil
	}
	if _, err := ingest.Resolve(context.Background(), st, targets, ingest.ResolveOptions{Fetch: fetch}); err != nil {
		t.Fatal(err)
	}
	targets, counts, err = ingest.ResolveTargets(context.Background(), st, only)
	if err != nil || fmt.Sprint(urls(targets)) != "[http://a.test/2]" || counts.Resolved != 2 || counts.Retried != 1 {
		t.Errorf("after resolving: targets %v, counts %+v, %v; want /2 only, 2 resolved, 1 retried", urls(targets), counts, err)
	}
	if got := retrievals(t, st)["given-failed"]; len(got) != 2 {
		t.Errorf("given-failed has %d retrievals, want the failed one given and the failed one made, both kept", len(got))
	}
}
