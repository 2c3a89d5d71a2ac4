package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
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
