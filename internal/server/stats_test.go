package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/render"
)

// TestStatsCachedPerState: GET /api/stats computes the counts once per
// committed state: asked twice it answers the same computation; after a
// decision and after an ingest through the server it answers new counts.
func TestStatsCachedPerState(t *testing.T) {
	st, err := graph.Open(filepath.Join(t.TempDir(), "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pol, _ := normalize.LoadPolicy("default")
	ctx := context.Background()
	if _, err := ingest.File(ctx, st, "../../testdata/citations.jsonl", "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	post := func(path, ctype, body string) {
		t.Helper()
		resp, err := http.Post(ts.URL+path, ctype, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
	stats := func() *statsView {
		t.Helper()
		v, err := s.stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := stats()
	if again := stats(); again != first {
		t.Errorf("stats of one state computed twice")
	}
	post("/api/groups/g-6e48bcc4a04d/reviews", "application/json", `{"decision":"same","reviewer":"ann"}`)
	decided := stats()
	if decided == first || decided.Reviews.Decisions != 1 {
		t.Errorf("stats after a decision: %d decisions, want 1 (a new computation: %v)", decided.Reviews.Decisions, decided != first)
	}
	if again := stats(); again != decided {
		t.Errorf("stats after the decision computed twice")
	}
	post("/api/ingest", "application/x-ndjson", `{"citation_id":"new-1","engine":"e","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://example.org/new"}`+"\n")
	if ingested := stats(); ingested == decided || ingested.Citations != first.Citations+1 {
		t.Errorf("stats after an ingest: %d citations, want %d", ingested.Citations, first.Citations+1)
	}
}

// TestStatsAfterDecisionCountsReviewsOnly: after a decision (about a
// group, a pair, a relation) GET /api/stats answers what a full
// computation on the same state answers, the whole JSON, without
// computing again what a decision cannot change (the groups, URLs and
// keys); an ingest computes everything again.
func TestStatsAfterDecisionCountsReviewsOnly(t *testing.T) {
	st, err := graph.Open(filepath.Join(t.TempDir(), "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pol, _ := normalize.LoadPolicy("default")
	ctx := context.Background()
	if _, err := ingest.File(ctx, st, "../../testdata/citations.jsonl", "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	post := func(path, ctype, body string) {
		t.Helper()
		resp, err := http.Post(ts.URL+path, ctype, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
	get := func() string {
		t.Helper()
		resp, err := http.Get(ts.URL + "/api/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/stats: %s %s", resp.Status, b)
		}
		return string(b)
	}
	full := func() string {
		t.Helper()
		rv, err := s.reviewed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.computeStats(ctx, rv)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		render.JSON(&b, v)
		return b.String()
	}
	before := get()
	if n := s.statsComputed.Load(); n != 1 {
		t.Fatalf("first stats: %d full computations, want 1", n)
	}
	const group, other = "g-6e48bcc4a04d", "g-f42986996d00"
	for _, d := range []struct{ path, body, want string }{
		{"/api/groups/" + group + "/reviews", `{"decision":"different","reviewer":"ann"}`, `"splits": 1`},
		{"/api/pairs/reviews", `{"citations":["pplx-001-2","gpt-17-2"],"decision":"same","reviewer":"ann"}`, `"decisions": 2`},
		{"/api/relations/reviews", `{"from":"` + other + `","to":"` + group + `","decision":"related","relation":"mirror_of","reviewer":"bob"}`, `"decisions": 3`},
		{"/api/groups/" + group + "/reviews", `{"decision":"same","reviewer":"bob"}`, `"splits": 0`},
	} {
		post(d.path, "application/json", d.body)
		n := s.statsComputed.Load()
		got := get()
		if s.statsComputed.Load() != n {
			t.Errorf("after POST %s: the stats were computed in full again", d.path)
		}
		if want := full(); got != want {
			t.Errorf("after POST %s: GET /api/stats =\n%s\nwant (a full computation)\n%s", d.path, got, want)
		}
		if !strings.Contains(got, d.want) {
			t.Errorf("after POST %s: GET /api/stats has no %s:\n%s", d.path, d.want, got)
		}
		if got == before {
			t.Errorf("after POST %s: the stats did not change", d.path)
		}
		before = got
	}
	post("/api/ingest", "application/x-ndjson", `{"citation_id":"new-1","engine":"e","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://example.org/new"}`+"\n")
	n := s.statsComputed.Load()
	if got := get(); s.statsComputed.Load() != n+1 || got != full() {
		t.Errorf("after an ingest: %d full computations, want 1; stats\n%s", s.statsComputed.Load()-n, got)
	}
}
