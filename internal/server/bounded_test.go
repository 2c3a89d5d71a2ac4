package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/server"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/provgraph/provgraph/internal/synth"
)

// openSynth returns a store holding testdata/citations.jsonl and n
// synthetic citations (synth, with few sites: many groups of several
// members, redirects, relations), checked when the test ends.
func openSynth(t *testing.T, n int) *graph.Store {
	t.Helper()
	st := open(t)
	var b bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 40}).Write(&b, n); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "synth.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(context.Background(), st, path, "synth.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	return st
}

// page is the JSON of GET /api/groups.
type page struct {
	Groups []struct {
		ID      string   `json:"id"`
		Verdict string   `json:"verdict"`
		Key     string   `json:"key"`
		Keys    []string `json:"keys"`
	} `json:"groups"`
	Total int    `json:"total"`
	Next  string `json:"next"`
}

// pagedBy3 pages through GET /api/groups?limit=3&filter on bs, following
// next, each page of 3 groups (fewer on the last only) with the total
// total, and returns the groups' ids in order.
func pagedBy3(t *testing.T, bs *httptest.Server, filter string, total int) []string {
	t.Helper()
	var ids []string
	for path, pages := "/api/groups?limit=3&"+filter, 0; path != ""; pages++ {
		var p page
		getJSON(t, bs, bs.URL, path, &p)
		if p.Total != total || len(p.Groups) > 3 || len(p.Groups) < 3 && p.Next != "" {
			t.Fatalf("%s: a page of %d groups, total %d, next %q; want pages of 3 and a total of %d", filter, len(p.Groups), p.Total, p.Next, total)
		}
		for _, g := range p.Groups {
			ids = append(ids, g.ID)
		}
		path = ""
		if p.Next != "" {
			path = "/api/groups?limit=3&" + filter + "&cursor=" + url.QueryEscape(p.Next)
		}
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
	}
	return ids
}

func getJSON(t *testing.T, ts interface {
	Client() *http.Client
}, base, path string, v any) string {
	t.Helper()
	resp, err := ts.Client().Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b.String())
	}
	if v != nil {
		if err := json.Unmarshal(b.Bytes(), v); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, b.String())
		}
	}
	return b.String()
}

// TestBoundedAnswersAsHeld: a server that holds no group (Bounded)
// answers the queue in key order, every group, the decisions of the three
// subjects, a citation's lineage and the review counts exactly as a
// server holding every group does, before and after decisions and an
// ingest through it; it builds the group records it pages from at start.
func TestBoundedAnswersAsHeld(t *testing.T) {
	st := openSynth(t, 1500)
	var notices []string
	bs := start(t, st, server.Options{Bounded: true, Notice: func(l string) { notices = append(notices, l) }})

	// compare checks the bounded server against a server that holds
	// every group, started now on the same store.
	compare := func(when string) (queued int, reviews string) {
		t.Helper()
		hs := start(t, st, server.Options{})
		var all page
		getJSON(t, hs, hs.URL, "/api/groups?limit=1000", &all)
		if len(all.Groups) < 100 || all.Next != "" {
			t.Fatalf("%s: the held queue has %d groups, next %q: want 100 to 1000 on one page", when, len(all.Groups), all.Next)
		}
		for _, q := range []string{"limit=1000", "limit=1000&summary=true", "limit=1000&summary=true&id=" + all.Groups[3].ID} {
			if h, b := getJSON(t, hs, hs.URL, "/api/groups?"+q, nil), getJSON(t, bs, bs.URL, "/api/groups?"+q, nil); h != b {
				t.Errorf("%s: GET /api/groups?%s differs:\nheld    %.600s\nbounded %.600s", when, q, h, b)
			}
		}
		// Paged by 7, following next: the same groups in the same order.
		var ids []string
		for path, pages := "/api/groups?limit=7", 0; path != ""; pages++ {
			var p page
			getJSON(t, bs, bs.URL, path, &p)
			if p.Total != all.Total {
				t.Fatalf("%s: bounded page total %d, held %d", when, p.Total, all.Total)
			}
			for _, g := range p.Groups {
				ids = append(ids, g.ID)
			}
			path = ""
			if p.Next != "" {
				path = "/api/groups?limit=7&cursor=" + url.QueryEscape(p.Next)
			}
			if pages > 1000 {
				t.Fatal("paging does not end")
			}
		}
		var want []string
		for _, g := range all.Groups {
			want = append(want, g.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: paged bounded queue\n%v\nwant\n%v", when, ids, want)
		}
		// By verdict: one page, and paged by 3 (a page reads on through
		// the records until it is full), the same groups and totals.
		verdicts := map[string][]string{}
		for _, g := range all.Groups {
			verdicts[g.Verdict] = append(verdicts[g.Verdict], g.ID)
		}
		if len(verdicts) < 2 {
			t.Fatalf("%s: the queue holds %d verdicts; the test needs two or more", when, len(verdicts))
		}
		for v, want := range verdicts {
			for _, q := range []string{"limit=1000&verdict=" + v, "limit=1000&summary=true&verdict=" + v} {
				if h, b := getJSON(t, hs, hs.URL, "/api/groups?"+q, nil), getJSON(t, bs, bs.URL, "/api/groups?"+q, nil); h != b {
					t.Errorf("%s: GET /api/groups?%s differs:\nheld    %.600s\nbounded %.600s", when, q, h, b)
				}
			}
			ids := pagedBy3(t, bs, "verdict="+v, len(want))
			if !slices.Equal(ids, want) {
				t.Errorf("%s: verdict %s: paged bounded queue\n%v\nwant\n%v", when, v, ids, want)
			}
		}
		// By domain, alone and with each verdict: one page, and paged by
		// 3, the same groups and totals as held; a domain no group has
		// none.
		var domains []string
		for _, g := range all.Groups {
			for _, k := range append([]string{g.Key}, g.Keys...) {
				if d := service.DomainOfKey(k); d != "" && !slices.Contains(domains, d) && len(domains) < 4 {
					domains = append(domains, d)
				}
			}
		}
		if len(domains) < 2 {
			t.Fatalf("%s: the queue's keys give %d domains; the test needs two or more", when, len(domains))
		}
		for _, d := range append(domains, "absent.test") {
			for _, q := range []string{"limit=1000&domain=" + d, "limit=1000&summary=true&domain=" + strings.ToUpper(d)} {
				if h, b := getJSON(t, hs, hs.URL, "/api/groups?"+q, nil), getJSON(t, bs, bs.URL, "/api/groups?"+q, nil); h != b {
					i := 0
					for i < min(len(h), len(b)) && h[i] == b[i] {
						i++
					}
					t.Errorf("%s: GET /api/groups?%s differs at byte %d:\nheld    %.300s\nbounded %.300s", when, q, i, h[max(0, i-100):], b[max(0, i-100):])
				}
			}
			for v := range verdicts {
				q := "limit=1000&summary=true&verdict=" + v + "&domain=" + d
				if h, b := getJSON(t, hs, hs.URL, "/api/groups?"+q, nil), getJSON(t, bs, bs.URL, "/api/groups?"+q, nil); h != b {
					t.Errorf("%s: GET /api/groups?%s differs:\nheld    %.600s\nbounded %.600s", when, q, h, b)
				}
			}
			var held page
			getJSON(t, hs, hs.URL, "/api/groups?limit=1000&domain="+d, &held)
			var want []string
			for _, g := range held.Groups {
				want = append(want, g.ID)
			}
			ids := pagedBy3(t, bs, "domain="+d, len(want))
			if !slices.Equal(ids, want) || d != "absent.test" && len(want) == 0 {
				t.Errorf("%s: domain %s: paged bounded queue\n%v\nwant\n%v", when, d, ids, want)
			}
		}
		// Every group, queued or not: its page in JSON, and found by id.
		var every page
		getJSON(t, hs, hs.URL, "/api/groups?all=true&limit=1000", &every)
		for _, g := range every.Groups {
			h := getJSON(t, hs, hs.URL, "/api/groups/"+g.ID, nil)
			if b := getJSON(t, bs, bs.URL, "/api/groups/"+g.ID, nil); h != b {
				t.Fatalf("%s: GET /api/groups/%s differs:\nheld    %.800s\nbounded %.800s", when, g.ID, h, b)
			}
		}
		for _, id := range want[:5] {
			h := getJSON(t, hs, hs.URL, "/api/groups?id="+id, nil)
			if b := getJSON(t, bs, bs.URL, "/api/groups?id="+id, nil); h != b {
				t.Errorf("%s: GET /api/groups?id=%s differs:\nheld    %s\nbounded %s", when, id, h, b)
			}
		}
		// The review counts and the groups by verdict.
		var hst, bst struct {
			ByVerdict map[string]int  `json:"groups_by_verdict"`
			Reviews   json.RawMessage `json:"reviews"`
		}
		getJSON(t, hs, hs.URL, "/api/stats", &hst)
		getJSON(t, bs, bs.URL, "/api/stats", &bst)
		if string(hst.Reviews) != string(bst.Reviews) {
			t.Errorf("%s: review counts differ:\nheld    %s\nbounded %s", when, hst.Reviews, bst.Reviews)
		}
		hv, _ := json.Marshal(hst.ByVerdict)
		bv, _ := json.Marshal(bst.ByVerdict)
		if string(hv) != string(bv) {
			t.Errorf("%s: groups by verdict differ: held %s, bounded %s", when, hv, bv)
		}
		for _, c := range []string{"pplx-001-2", "gpt-17-2"} {
			h := getJSON(t, hs, hs.URL, "/api/citations/"+c+"/lineage", nil)
			if b := getJSON(t, bs, bs.URL, "/api/citations/"+c+"/lineage", nil); h != b {
				t.Errorf("%s: lineage of %s differs", when, c)
			}
		}
		return all.Total, string(bst.Reviews)
	}
	queued, _ := compare("at start")
	if len(notices) != 2 || !strings.Contains(notices[0], "building the group records") {
		t.Errorf("notices at start: %q, want the records built", notices)
	}

	const other = "g-f42986996d00" // gpt-17-2, a cross-host redirect to group
	var q page
	getJSON(t, bs, bs.URL, "/api/groups?limit=3", &q)
	for _, d := range []struct{ path, body string }{
		{"/api/groups/" + group + "/reviews", `{"decision":"different","reviewer":"ann"}`},
		{"/api/groups/" + q.Groups[2].ID + "/reviews", `{"decision":"same","reviewer":"ann"}`},
		{"/api/groups/" + q.Groups[1].ID + "/reviews", `{"decision":"unsure","reviewer":"ann"}`},
		{"/api/pairs/reviews", `{"citations":["pplx-001-2","gpt-17-2"],"decision":"same","reviewer":"ann"}`},
		{"/api/relations/reviews", `{"from":"` + other + `","to":"` + group + `","decision":"related","relation":"mirror_of","reviewer":"bob"}`},
	} {
		if code, body, _ := do(t, bs, "POST", d.path, "application/json", d.body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", d.path, code, body)
		}
	}
	_, reviews := compare("after decisions")
	if !strings.Contains(reviews, `"decided_groups": 3`) || !strings.Contains(reviews, `"decisions": 5`) {
		t.Errorf("review counts after three group decisions: %s", reviews)
	}

	// An ingest through the bounded server: new citations of an existing
	// key and a new one, and one that makes a decided group stale.
	var b bytes.Buffer
	synth.New(synth.Options{Seed: 8, Sites: 40}).Write(&b, 300)
	more := strings.ReplaceAll(b.String(), `"citation_id":"`, `"citation_id":"more-`)
	if code, body, _ := do(t, bs, "POST", "/api/ingest", "application/x-ndjson", more); code != http.StatusOK {
		t.Fatalf("POST /api/ingest: %d %s", code, body)
	}
	if after, _ := compare("after an ingest"); after <= queued {
		t.Errorf("the queue held %d groups before the ingest, %d after: want more", queued, after)
	}
}

// TestBoundedRefusesWholeFilters: the filters that select among every
// group are refused with a message naming them and what to run; the UI
// queue says it pages by key and filters by verdict; a bad cursor or
// verdict is a usage error.
func TestBoundedRefusesWholeFilters(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{Bounded: true})
	for _, q := range []string{"sort=risk", "engine=perplexity", "since=2026-01-01", "state=decided", "all=true"} {
		code, body, _ := do(t, ts, "GET", "/api/groups?"+q, "", "")
		if code != http.StatusBadRequest || !strings.Contains(body, "bounded memory") || !strings.Contains(body, strings.SplitN(q, "=", 2)[0]) || !strings.Contains(body, "provgraph groups") {
			t.Errorf("GET /api/groups?%s: %d %s", q, code, body)
		}
	}
	if code, body, _ := do(t, ts, "GET", "/api/groups?verdict=bogus", "", ""); code != http.StatusBadRequest || !strings.Contains(body, "codebook") {
		t.Errorf("GET /api/groups?verdict=bogus: %d %s", code, body)
	}
	if code, body, _ := do(t, ts, "GET", "/api/groups?cursor=bm9wZQ", "", ""); code != http.StatusBadRequest || !strings.Contains(body, "cursor") {
		t.Errorf("a cursor the server did not give: %d %s", code, body)
	}
	code, body, _ := do(t, ts, "GET", "/", "", "")
	if code != http.StatusOK || !strings.Contains(body, "ordered by smallest key") || !strings.Contains(body, group) || !strings.Contains(body, `name="domain"`) || strings.Contains(body, `name="engine"`) {
		t.Errorf("GET /: %d %.2000s", code, body)
	}
	// And by domain: group g-6e48bcc4a04d's keys are on w3.org.
	if code, body, _ := do(t, ts, "GET", "/?domain=w3.org", "", ""); code != http.StatusOK || !strings.Contains(body, group) || !strings.Contains(body, "on w3.org in the queue") {
		t.Errorf("GET /?domain=w3.org: %d %.2000s", code, body)
	}
	if code, body, _ := do(t, ts, "GET", "/?domain=absent.test", "", ""); code != http.StatusOK || strings.Contains(body, group) || !strings.Contains(body, "0 groups on absent.test") {
		t.Errorf("GET /?domain=absent.test: %d %.2000s", code, body)
	}
	// The UI filters by verdict: group g-6e48bcc4a04d is identity-confirmed.
	if code, body, _ := do(t, ts, "GET", "/?verdict=identity-confirmed", "", ""); code != http.StatusOK || !strings.Contains(body, group) || !strings.Contains(body, "of verdict identity-confirmed") {
		t.Errorf("GET /?verdict=identity-confirmed: %d %.2000s", code, body)
	}
	if code, body, _ := do(t, ts, "GET", "/?verdict=conflict", "", ""); code != http.StatusOK || strings.Contains(body, group) || !strings.Contains(body, "0 groups of verdict conflict") {
		t.Errorf("GET /?verdict=conflict: %d %.2000s", code, body)
	}
	if code, body, _ := do(t, ts, "GET", "/groups/"+group, "", ""); code != http.StatusOK || !strings.Contains(body, "pplx-001-2") {
		t.Errorf("GET /groups/%s: %d %.1000s", group, code, body)
	}
	if code, body, _ := do(t, ts, "GET", "/stats", "", ""); code != http.StatusOK || !strings.Contains(body, "in the review queue") || !strings.Contains(body, "unreviewed groups") {
		t.Errorf("GET /stats: %d %.2000s", code, body)
	}
}

// TestBoundedReadOnlyNeedsRecords: a read-only bounded server cannot
// build the group records: it refuses to start and names the command
// that builds them; once built, it serves.
func TestBoundedReadOnlyNeedsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	st, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(context.Background(), st, "../../testdata/citations.jsonl", "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ro, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(ro, server.Options{DB: path, Bounded: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Warm(context.Background())
	ro.Close()
	if err == nil || !strings.Contains(err.Error(), "provgraph queue --build --db "+path) {
		t.Fatalf("read-only bounded server without records: %v, want the command that builds them", err)
	}
	// A server that writes builds them; then the read-only one serves.
	rw, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = server.New(rw, server.Options{DB: path, Bounded: true}); err == nil {
		err = s.Warm(context.Background())
	}
	rw.Close()
	if err != nil {
		t.Fatal(err)
	}
	ro, err = graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ts := start(t, ro, server.Options{DB: path, Bounded: true, ReadOnly: true})
	var p page
	getJSON(t, ts, ts.URL, "/api/groups", &p)
	if len(p.Groups) == 0 || p.Total != len(p.Groups) {
		t.Errorf("read-only bounded queue: %+v", p)
	}
}
