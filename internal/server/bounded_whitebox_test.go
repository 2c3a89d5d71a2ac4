package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestBoundedRows: the UI queue of a bounded server, made from the group
// records without reading the groups (but those with a decided member),
// has the rows of a server holding every group, in the groups' own order:
// the same ids, verdicts, member counts, keys, relations to review and
// review states, before and after decisions; only the relation counts
// of the unread groups are left out.
func TestBoundedRows(t *testing.T) {
	ctx := context.Background()
	st, err := graph.Open(filepath.Join(t.TempDir(), "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var b bytes.Buffer
	b.WriteString(mustRead(t, "../../testdata/citations.jsonl"))
	if err := synth.New(synth.Options{Seed: 7, Sites: 40}).Write(&b, 1500); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(ctx, st, in, "in.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	bs, err := New(st, Options{Bounded: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(bs.Handler())
	defer ts.Close()

	check := func(when string, wantDecided int) {
		t.Helper()
		q, err := bs.boundedRows(ctx, service.GroupFilter{Queue: true, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		hs, err := New(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rv, err := hs.reviewed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, err := rv.Filter(service.GroupFilter{Queue: true, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(q.rows) != len(p.Groups) || q.total != p.Total || q.next != "" || len(p.Groups) < 100 {
			t.Fatalf("%s: %d rows of %d, next %q; held: %d of %d", when, len(q.rows), q.total, q.next, len(p.Groups), p.Total)
		}
		decided := 0
		for i, g := range p.Groups {
			want := rowOf(g, rv.Status(g))
			got := q.rows[i]
			if got.Relations == -1 {
				want.Relations = -1
			}
			if got.ID != want.ID || got.Verdict != want.Verdict || got.Key != want.Key || got.Members != want.Members ||
				got.Relations != want.Relations || got.Review != want.Review || got.Status.State != want.Status.State || latestID(got.Status) != latestID(want.Status) {
				t.Errorf("%s: row %d\n got %+v %+v\nwant %+v %+v", when, i, got, got.Status, want, want.Status)
			}
			if want.Status.State != review.StateUnreviewed {
				decided++
			}
		}
		if decided != wantDecided {
			t.Errorf("%s: %d rows not unreviewed, want %d", when, decided, wantDecided)
		}
		// Filtered by verdict: the held queue's groups of that verdict,
		// each row as held, and their number.
		seen := map[string]bool{}
		for _, g := range p.Groups {
			if seen[g.Verdict] {
				continue
			}
			seen[g.Verdict] = true
			f := service.GroupFilter{Queue: true, Limit: 1000, Verdict: g.Verdict}
			q, err := bs.boundedRows(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			hp, err := rv.Filter(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(q.rows) != len(hp.Groups) || q.total != hp.Total || len(q.rows) == 0 {
				t.Fatalf("%s: verdict %s: %d rows of %d; held: %d of %d", when, g.Verdict, len(q.rows), q.total, len(hp.Groups), hp.Total)
			}
			for i, hg := range hp.Groups {
				if got := q.rows[i]; got.ID != hg.ID || got.Verdict != g.Verdict || got.Status.State != rv.Status(hg).State {
					t.Errorf("%s: verdict %s: row %d %+v, want group %s", when, g.Verdict, i, got, hg.ID)
				}
			}
		}
		if len(seen) < 2 {
			t.Errorf("%s: %d verdicts in the queue; the test needs two or more", when, len(seen))
		}
	}
	check("before decisions", 0)
	q, err := bs.boundedRows(ctx, service.GroupFilter{Queue: true, Limit: 40})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range []string{"same", "different", "unsure"} {
		resp, err := http.Post(ts.URL+"/api/groups/"+q.rows[10*i+3].ID+"/reviews", "application/json", strings.NewReader(`{"decision":"`+d+`","reviewer":"ann"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("decide %s: %s", d, resp.Status)
		}
	}
	check("after decisions", 3)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func latestID(s *review.Status) string {
	if s.Latest == nil {
		return ""
	}
	return s.Latest.ID
}

// TestReadersBounded: no more requests read the store at once than the
// server has slots for: with every slot taken, a request waits, one whose
// client has gone away ends without an answer, the assets are served
// anyway, and a request answers once a slot is free.
func TestReadersBounded(t *testing.T) {
	st := citationsStore(t)
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	for range cap(s.readers) {
		s.readers <- struct{}{}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/static/app.css", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
		t.Errorf("an asset with every slot taken: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/stats", nil).WithContext(ctx))
	if rec.Body.Len() != 0 {
		t.Errorf("a request whose client went away while it waited was answered: %s", rec.Body.String())
	}
	answered := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/stats", nil))
		answered <- rec.Code
	}()
	<-s.readers // a slot frees: the waiting request reads
	if code := <-answered; code != http.StatusOK {
		t.Errorf("GET /api/stats once a slot was free: %d", code)
	}
	if len(s.readers) != cap(s.readers)-1 {
		t.Errorf("after the answer, %d slots taken, want %d", len(s.readers), cap(s.readers)-1)
	}
}

// TestBoundedRecordsBusy: while the group records lack their marker (an
// ingest through the server is building them again), the queue answers
// 503 with Retry-After, in the API and in the UI, rather than a partial
// page; once they are complete again, it answers.
func TestBoundedRecordsBusy(t *testing.T) {
	ctx := context.Background()
	st := citationsStore(t)
	s, err := New(st, Options{Bounded: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	if rec := get("/api/groups"); rec.Code != http.StatusOK {
		t.Fatalf("GET /api/groups: %d %s", rec.Code, rec.Body)
	}
	rs := citestore.New(st).Records(s.bs.pol.Digest, 0)
	if err := rs.Unmark(ctx); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/groups?limit=7", "/?limit=7"} {
		rec := get(path)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "being built again") {
			t.Errorf("GET %s with the records unmarked: %d, Retry-After %q, %.300s", path, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	if _, err := rs.Finish(ctx, "build", time.Now()); err != nil {
		t.Fatal(err)
	}
	if rec := get("/api/groups?limit=7"); rec.Code != http.StatusOK {
		t.Errorf("GET /api/groups once complete again: %d %s", rec.Code, rec.Body)
	}
}

// TestBoundedRecordsBehind: group records left behind by a run that
// stopped before its end (an ingest whose keys were marked, its refresh
// never run, as after kill -9) are refused by a read-only bounded server,
// naming the command that builds them, and refreshed at start by one that
// writes, whose queue then holds the new citations' groups.
func TestBoundedRecordsBehind(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	st, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(ctx, st, "../../testdata/citations.jsonl", "c.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{DB: path, Bounded: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Warm(ctx); err != nil { // builds the records
		t.Fatal(err)
	}
	before := s.bs.totals.Queued
	// More citations, written as an ingest writes them; the refresh at
	// the end of a run (service.KeepRecords) is not run.
	var b bytes.Buffer
	if err := synth.New(synth.Options{Seed: 5, Sites: 20}).Write(&b, 300); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "more.jsonl")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(ctx, st, in, "more.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	d := s.bs.pol.Digest
	if n, err := citestore.New(st).Records(d, 0).Dirty(ctx); err != nil || n == 0 {
		t.Fatalf("records after an ingest without its refresh: %d dirty keys, %v; want some", n, err)
	}
	st.Close()

	ro, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := New(ro, Options{DB: path, Bounded: true, ReadOnly: true})
	if err == nil {
		err = rs.Warm(ctx)
	}
	ro.Close()
	if err == nil || !strings.Contains(err.Error(), "behind a run that stopped") || !strings.Contains(err.Error(), "provgraph queue --build --db "+path) {
		t.Errorf("read-only bounded server on records behind: %v", err)
	}

	rw, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	ws, err := New(rw, Options{DB: path, Bounded: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := citestore.New(rw).Records(d, 0).Dirty(ctx); err != nil || n != 0 {
		t.Errorf("after a writing server's start: %d dirty keys, %v; want none", n, err)
	}
	if after := ws.bs.totals.Queued; after <= before {
		t.Errorf("queued groups: %d before the ingest, %d after the refresh; want more", before, after)
	}
	// The records equal a fresh build's: the queue a whole grouping gives.
	hs, err := New(rw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := hs.reviewed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rv.Filter(service.GroupFilter{Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if ws.bs.totals.Queued != p.Total {
		t.Errorf("refreshed records queue %d groups, a whole grouping %d", ws.bs.totals.Queued, p.Total)
	}
}

// citationsStore returns a store holding testdata/citations.jsonl, closed
// when the test ends.
func citationsStore(t *testing.T) *graph.Store {
	t.Helper()
	st, err := graph.Open(filepath.Join(t.TempDir(), "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(context.Background(), st, "../../testdata/citations.jsonl", "c.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	return st
}
