package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/service"
)

// TestPageCache: readers of one key in one state share one computation
// (the others wait for it); the next state starts empty; a reader still
// holding an earlier state computes its own value and never replaces the
// newer state's; an error is not kept.
func TestPageCache(t *testing.T) {
	var c pageCache
	s1, s2 := &service.Reviewed{}, &service.Reviewed{}
	cur := s1
	current := func(r *service.Reviewed) func() bool { return func() bool { return r == cur } }
	var calls atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	compute := func() (any, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-release
		}
		return "v1", nil
	}
	var wg sync.WaitGroup
	got := make([]any, 8)
	wg.Add(1)
	go func() { defer wg.Done(); got[0], _ = c.get(s1, current(s1), "k", compute) }()
	<-started // the first computation runs; the others must wait for it
	for i := 1; i < len(got); i++ {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = c.get(s1, current(s1), "k", compute) }()
	}
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != "v1" {
			t.Errorf("reader %d got %v, want v1", i, v)
		}
	}
	// The waiting readers may have arrived after the computation ended;
	// either way it ran once.
	if n := calls.Load(); n != 1 {
		t.Errorf("%d computations for one key in one state, want 1", n)
	}
	cur = s2
	if v, _ := c.get(s2, current(s2), "k", func() (any, error) { return "v2", nil }); v != "v2" {
		t.Errorf("next state: %v, want v2 (a new computation)", v)
	}
	if v, _ := c.get(s1, current(s1), "k", func() (any, error) { return "old", nil }); v != "old" {
		t.Errorf("a reader of the earlier state got %v, want its own value", v)
	}
	if v, _ := c.get(s2, current(s2), "k", func() (any, error) { return "v3", nil }); v != "v2" {
		t.Errorf("after a reader of the earlier state: %v, want v2 still cached", v)
	}
	boom := errors.New("boom")
	if _, err := c.get(s2, current(s2), "e", func() (any, error) { return nil, boom }); err != boom {
		t.Errorf("error = %v, want boom", err)
	}
	if v, err := c.get(s2, current(s2), "e", func() (any, error) { return "ok", nil }); v != "ok" || err != nil {
		t.Errorf("after an error: %v %v, want a new computation", v, err)
	}
}

// TestPageCacheBytes: the encoded pages a cache keeps are bounded in
// bytes: past maxCachedBytes the cache starts again empty, so that large
// pages cannot hold more memory than that, however few.
func TestPageCacheBytes(t *testing.T) {
	var c pageCache
	s := &service.Reviewed{}
	current := func() bool { return true }
	page := make([]byte, maxCachedBytes/4+1)
	for i := range 4 {
		c.get(s, current, fmt.Sprint("p", i), func() (any, error) { return page, nil })
	}
	if c.bytes != 4*len(page) || len(c.m) != 4 {
		t.Fatalf("after four pages: %d bytes in %d entries", c.bytes, len(c.m))
	}
	// The fifth finds the cache past its bytes: it starts again with it.
	c.get(s, current, "p4", func() (any, error) { return page, nil })
	if c.bytes != len(page) || len(c.m) != 1 {
		t.Errorf("after the fifth page: %d bytes in %d entries, want %d in 1", c.bytes, len(c.m), len(page))
	}
	computed := false
	c.get(s, current, "p0", func() (any, error) { computed = true; return page, nil })
	if !computed {
		t.Error("a page dropped with the cache was not computed again")
	}
	// Values other than encoded pages count no bytes.
	c.get(s, current, "v", func() (any, error) { return "value", nil })
	if c.bytes != 2*len(page) {
		t.Errorf("after a value: %d bytes, want %d", c.bytes, 2*len(page))
	}
}

// TestLineagesKeptAcrossDecisions: a group page's lineages are read once
// per groups state, those of the first page of the queue before the state
// is served: a decision (which changes no lineage) keeps them, an ingest
// through the server reads them again.
func TestLineagesKeptAcrossDecisions(t *testing.T) {
	st, err := graph.Open(filepath.Join(t.TempDir(), "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(context.Background(), st, "../../testdata/citations.jsonl", "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	const g = "g-6e48bcc4a04d"
	// The first page of the queue is read before the first request.
	if err := s.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	rv, _ := s.reviewed(context.Background())
	head, _ := rv.Filter(service.GroupFilter{Queue: true, Sort: "risk", Limit: DefaultPageSize})
	for _, hg := range head.Groups {
		s.lineages.mu.Lock()
		e := s.lineages.m[hg.ID]
		s.lineages.mu.Unlock()
		if e == nil {
			t.Errorf("the lineages of %s, on the first page of the queue, were not read before serving", hg.ID)
		}
	}
	send := func(method, path, ctype, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %s", method, path, resp.Status)
		}
	}
	entry := func() *cached {
		s.lineages.mu.Lock()
		defer s.lineages.mu.Unlock()
		return s.lineages.m[g]
	}
	send("GET", "/groups/"+g, "", "")
	first := entry()
	if first == nil {
		t.Fatal("the group page's lineages are not kept")
	}
	send("POST", "/api/groups/"+g+"/reviews", "application/json", `{"decision":"same","reviewer":"alice"}`)
	send("GET", "/groups/"+g, "", "")
	if entry() != first {
		t.Error("a decision made the group page read its lineages again")
	}
	send("POST", "/api/ingest", "application/x-ndjson", `{"citation_id":"new-1","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://www.w3.org/TR/prov-o/?utm_source=new"}`+"\n")
	send("GET", "/groups/"+g, "", "")
	if e := entry(); e == nil || e == first {
		t.Error("after an ingest the group page kept the lineages read before it")
	}
}
