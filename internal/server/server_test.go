package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/server"
)

const group = "g-6e48bcc4a04d" // two W3C PROV-O citations in testdata/citations.jsonl

// open returns a store holding testdata/citations.jsonl, checked when the
// test ends.
func open(t *testing.T) *graph.Store {
	t.Helper()
	st, err := graph.Open(filepath.Join(t.TempDir(), "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(context.Background()); err != nil {
			t.Errorf("check: %v", err)
		}
		st.Close()
	})
	pol, _ := normalize.LoadPolicy("default")
	if _, err := ingest.File(context.Background(), st, "../../testdata/citations.jsonl", "citations.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	return st
}

// start serves st with o.
func start(t *testing.T, st *graph.Store, o server.Options) *httptest.Server {
	t.Helper()
	s, err := server.New(st, o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// do sends a request and returns the status and body.
func do(t *testing.T, ts *httptest.Server, method, path, ctype, body string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestAPIGroupsAndDecide: list, page, show, decide (201 with the stored
// decision), and see it in the group and the listing.
func TestAPIGroupsAndDecide(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{})
	code, body, hdr := do(t, ts, "GET", "/api/groups?sort=risk&limit=2", "", "")
	if code != 200 || hdr.Get("Content-Security-Policy") == "" || hdr.Get("X-Content-Type-Options") != "nosniff" || hdr.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("GET /api/groups: %d %v\n%s", code, hdr, body)
	}
	var page struct {
		Total  int
		Next   string
		Groups []struct {
			ID     string
			Review struct{ State string }
		}
	}
	json.Unmarshal([]byte(body), &page)
	if len(page.Groups) != 2 || page.Next == "" || page.Total < 3 || page.Groups[0].Review.State != "unreviewed" {
		t.Fatalf("first page: %+v", page)
	}
	code, body, _ = do(t, ts, "GET", "/api/groups?sort=risk&limit=2&cursor="+url.QueryEscape(page.Next), "", "")
	if code != 200 || strings.Contains(body, `"id": "`+page.Groups[0].ID+`"`) {
		t.Errorf("second page: %d\n%s", code, body)
	}
	code, body, hdr = do(t, ts, "POST", "/api/groups/"+group+"/reviews", "application/json", `{"decision":"same","rationale":"one W3C page","reviewer":"alice"}`)
	if code != http.StatusCreated || hdr.Get("Location") != "/api/groups/"+group {
		t.Fatalf("POST review: %d\n%s", code, body)
	}
	var d struct{ ID, Decision, Reviewer string }
	json.Unmarshal([]byte(body), &d)
	if d.Decision != "same" || d.Reviewer != "alice" || !strings.HasPrefix(d.ID, "r-") {
		t.Errorf("stored decision: %s", body)
	}
	code, body, _ = do(t, ts, "GET", "/api/groups/"+group, "", "")
	if code != 200 || !strings.Contains(body, `"state": "decided"`) || !strings.Contains(body, d.ID) {
		t.Errorf("GET group after decision: %d\n%s", code, body)
	}
	code, body, _ = do(t, ts, "GET", "/api/groups?state=decided", "", "")
	if code != 200 || !strings.Contains(body, `"total": 1`) {
		t.Errorf("GET groups?state=decided: %d\n%s", code, body)
	}
	// The engine and since filters test what a lean read leaves out.
	for _, q := range []string{"engine=perplexity", "since=2026-11-05", "engine=nobody", "since=2030-01-01"} {
		code, body, _ = do(t, ts, "GET", "/api/groups?all=true&"+q, "", "")
		var p struct{ Total int }
		json.Unmarshal([]byte(body), &p)
		if want := !strings.Contains(q, "nobody") && !strings.Contains(q, "2030"); code != 200 || (p.Total > 0) != want {
			t.Errorf("GET groups?%s: %d, %d groups\n%s", q, code, p.Total, body)
		}
	}
}

// TestAPIRejectsAndWritesNothing: bad JSON, an unknown decision or field,
// a missing group, an oversized body, a wrong content type or a
// cross-site request get a clear 4xx and write nothing.
func TestAPIRejectsAndWritesNothing(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{MaxBody: 1024})
	before, _ := st.Count()
	for _, tc := range []struct {
		name, path, ctype, body string
		status                  int
		says                    string
		hdr                     []string
	}{
		{"bad JSON", "/api/groups/" + group + "/reviews", "application/json", `{"decision":`, 400, "request body", nil},
		{"unknown decision", "/api/groups/" + group + "/reviews", "application/json", `{"decision":"maybe","reviewer":"a"}`, 400, `decision "maybe"`, nil},
		{"unknown field", "/api/groups/" + group + "/reviews", "application/json", `{"decision":"same","reviewer":"a","score":1}`, 400, "score", nil},
		{"no reviewer", "/api/groups/" + group + "/reviews", "application/json", `{"decision":"same"}`, 400, "reviewer", nil},
		{"missing group", "/api/groups/g-000000000000/reviews", "application/json", `{"decision":"same","reviewer":"a"}`, 404, "no such group", nil},
		{"oversized body", "/api/groups/" + group + "/reviews", "application/json", `{"decision":"same","reviewer":"a","rationale":"` + strings.Repeat("x", 2000) + `"}`, 413, "too large", nil},
		{"form content type", "/api/groups/" + group + "/reviews", "application/x-www-form-urlencoded", `decision=same`, 400, "Content-Type", nil},
		{"cross-site", "/api/groups/" + group + "/reviews", "application/json", `{"decision":"same","reviewer":"a"}`, 400, "cross-site", []string{"Sec-Fetch-Site", "cross-site"}},
		{"invalid ingest line", "/api/ingest", "application/x-ndjson", `{"raw_url":"https://a.test/"}` + "\n", 422, "observed_at", nil},
	} {
		code, body, _ := do(t, ts, "POST", tc.path, tc.ctype, tc.body, tc.hdr...)
		var e struct{ Error, Kind string }
		json.Unmarshal([]byte(body), &e)
		if code != tc.status || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s: %d %s; want %d saying %q", tc.name, code, body, tc.status, tc.says)
		}
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("rejected requests wrote %d quads", after-before)
	}
}

// TestAPITokens: with tokens, a missing or wrong token is 401 and writes
// nothing; a right one names the reviewer, which a body cannot override.
func TestAPITokens(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{Tokens: map[string]string{"0123456789abcdef-alice": "alice"}})
	before, _ := st.Count()
	for _, tok := range []string{"", "Bearer wrong-token-0000000000", "Bearer 0123456789abcdef-alicE"} {
		code, body, hdr := do(t, ts, "POST", "/api/groups/"+group+"/reviews", "application/json", `{"decision":"same"}`, "Authorization", tok)
		if code != 401 || hdr.Get("WWW-Authenticate") == "" || !strings.Contains(body, "token") {
			t.Errorf("token %q: %d %s", tok, code, body)
		}
	}
	if code, _, _ := do(t, ts, "GET", "/api/groups", "", "", "Authorization", "Bearer nope"); code != 401 {
		t.Errorf("GET with a wrong token: %d", code)
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("unauthenticated requests wrote %d quads", after-before)
	}
	auth := []string{"Authorization", "Bearer 0123456789abcdef-alice"}
	if code, body, _ := do(t, ts, "POST", "/api/groups/"+group+"/reviews", "application/json", `{"decision":"same","reviewer":"mallory"}`, auth...); code != 400 || !strings.Contains(body, "the token names") {
		t.Errorf("reviewer other than the token's: %d %s", code, body)
	}
	code, body, _ := do(t, ts, "POST", "/api/groups/"+group+"/reviews", "application/json", `{"decision":"unsure"}`, auth...)
	if code != 201 || !strings.Contains(body, `"reviewer": "alice"`) {
		t.Errorf("decision with a token: %d %s", code, body)
	}
	if code, _, hdr := do(t, ts, "GET", "/", "", ""); code != 200 && code != 303 || hdr.Get("Location") == "" && code == 303 {
		t.Errorf("UI without a session: %d", code)
	}
}

// TestAPIReadOnly: a read-only server answers reads and refuses writes.
func TestAPIReadOnly(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{ReadOnly: true})
	if code, _, _ := do(t, ts, "GET", "/api/groups", "", ""); code != 200 {
		t.Errorf("GET on a read-only server: %d", code)
	}
	for _, p := range []string{"/api/groups/" + group + "/reviews", "/api/ingest"} {
		if code, body, _ := do(t, ts, "POST", p, "application/json", `{}`); code != 405 || !strings.Contains(body, "read-only") {
			t.Errorf("POST %s on a read-only server: %d %s", p, code, body)
		}
	}
}

// TestAPILineageStatsQuery: lineage in three formats, stats with review
// counts, and Gizmo queries with their limits.
func TestAPILineageStatsQuery(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{QueryRows: 2})
	for format, ctype := range map[string]string{"json": "application/json", "dot": "text/vnd.graphviz", "svg": "image/svg+xml"} {
		code, body, hdr := do(t, ts, "GET", "/api/citations/gpt-17-1/lineage?format="+format, "", "")
		if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), ctype) || !strings.Contains(body, "gpt-17-1") {
			t.Errorf("lineage %s: %d %s\n%.200s", format, code, hdr.Get("Content-Type"), body)
		}
	}
	if code, _, _ := do(t, ts, "GET", "/api/citations/nobody/lineage", "", ""); code != 404 {
		t.Errorf("lineage of a missing citation: %d", code)
	}
	if code, body, _ := do(t, ts, "GET", "/api/stats", "", ""); code != 200 || !strings.Contains(body, `"reviews"`) || !strings.Contains(body, `"unreviewed_groups"`) {
		t.Errorf("stats: %d\n%s", code, body)
	}
	q := `{"query":"g.V().Has(\"<https://w3id.org/provgraph/ns#engineName>\").All()"}`
	code, body, _ := do(t, ts, "POST", "/api/query", "application/json", q)
	var res struct {
		Results   []map[string]any
		Truncated bool
	}
	json.Unmarshal([]byte(body), &res)
	if code != 200 || len(res.Results) != 2 || !res.Truncated {
		t.Errorf("query: %d %s", code, body)
	}
	if code, body, _ := do(t, ts, "POST", "/api/query", "application/json", `{"query":"g.V(.All()"}`); code != 400 || !strings.Contains(body, "query error") {
		t.Errorf("query syntax error: %d %s", code, body)
	}
	if code, _, _ := do(t, ts, "POST", "/api/query", "application/json", `{"query":"g.V()","language":"sparql"}`); code != 400 {
		t.Errorf("query in another language: %d", code)
	}
}

// TestAPIQueryTimeout: a query that runs past the time limit is stopped
// with 504.
func TestAPIQueryTimeout(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{QueryTimeout: 1})
	if code, body, _ := do(t, ts, "POST", "/api/query", "application/json", `{"query":"while (true) {}"}`); code != 504 || !strings.Contains(body, "query-timeout") {
		t.Errorf("endless query: %d %s", code, body)
	}
}

// TestAPIIngestAndReadsDuringWrites: an ingest through the server shows
// in the groups; while a decision is held before its commit, reads keep
// answering from the last committed state.
func TestAPIIngestAndReadsDuringWrites(t *testing.T) {
	st := open(t)
	held, release := make(chan string), make(chan struct{})
	ts := start(t, st, server.Options{BeforeCommit: func(g string) { held <- g; <-release }})
	code, body, _ := do(t, ts, "POST", "/api/ingest", "application/x-ndjson",
		`{"citation_id":"new-1","engine":"e","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://www.w3.org/TR/prov-o/?utm_campaign=x"}`+"\n")
	if code != 200 || !strings.Contains(body, `"records": 1`) {
		t.Fatalf("ingest: %d %s", code, body)
	}
	if _, body, _ := do(t, ts, "GET", "/api/groups/"+group, "", ""); !strings.Contains(body, "new-1") {
		t.Errorf("the ingested citation is not in its group:\n%s", body)
	}
	done := make(chan int)
	go func() {
		code, _, _ := do(t, ts, "POST", "/api/groups/"+group+"/reviews", "application/json", `{"decision":"different","reviewer":"bob"}`)
		done <- code
	}()
	<-held
	code, body, _ = do(t, ts, "GET", "/api/groups/"+group, "", "")
	if code != 200 || !strings.Contains(body, `"state": "unreviewed"`) {
		t.Errorf("read during a held decision: %d\n%s", code, body)
	}
	close(release)
	if code := <-done; code != 201 {
		t.Errorf("held decision: %d", code)
	}
}

// TestUI: the queue, a group page, the form's CSRF check and a decision
// by form, the lineage picture and the stats page; no path reaches a
// file outside the embedded assets.
func TestUI(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{})
	code, body, hdr := do(t, ts, "GET", "/", "", "")
	if code != 200 || !strings.Contains(body, group) || !strings.Contains(hdr.Get("Set-Cookie"), "pg_csrf=") {
		t.Fatalf("queue: %d\n%s", code, body)
	}
	csrf := strings.TrimPrefix(strings.Split(hdr.Get("Set-Cookie"), ";")[0], "pg_csrf=")
	if code, body, _ := do(t, ts, "GET", "/groups/"+group, "", ""); code != 200 || !strings.Contains(body, "decide-form") || !strings.Contains(body, "utm_source=chatgpt.com") {
		t.Errorf("group page: %d", code)
	}
	form := url.Values{"decision": {"same"}, "reviewer": {"carol"}, "csrf": {"wrong"}}.Encode()
	before, _ := st.Count()
	if code, _, _ := do(t, ts, "POST", "/groups/"+group+"/decide", "application/x-www-form-urlencoded", form, "Cookie", "pg_csrf="+csrf); code != 403 {
		t.Errorf("form with a wrong CSRF token: %d", code)
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("a refused form wrote %d quads", after-before)
	}
	form = url.Values{"decision": {"same"}, "reviewer": {"carol"}, "csrf": {csrf}}.Encode()
	ts.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if code, _, hdr := do(t, ts, "POST", "/groups/"+group+"/decide", "application/x-www-form-urlencoded", form, "Cookie", "pg_csrf="+csrf); code != 303 || !strings.Contains(hdr.Get("Location"), "decided=r-") {
		t.Errorf("form decision: %d %v", code, hdr)
	}
	if _, body, _ := do(t, ts, "GET", "/groups/"+group, "", ""); !strings.Contains(body, "carol") {
		t.Errorf("group page lacks the decision")
	}
	if code, body, _ := do(t, ts, "GET", "/citations/gpt-17-1/lineage", "", ""); code != 200 || !strings.Contains(body, "<svg") || !strings.Contains(body, "decision: same") {
		t.Errorf("lineage page: %d", code)
	}
	if code, _, _ := do(t, ts, "GET", "/stats", "", ""); code != 200 {
		t.Errorf("stats page: %d", code)
	}
	for _, p := range []string{"/static/app.js", "/static/app.css"} {
		if code, _, _ := do(t, ts, "GET", p, "", ""); code != 200 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	for _, p := range []string{"/static/../server.go", "/static/%2e%2e/server.go", "/static/../../go.mod", "/../go.mod", "/static/layout.html"} {
		if code, body, _ := do(t, ts, "GET", p, "", ""); code == 200 && (strings.Contains(body, "package server") || strings.Contains(body, "module ") || strings.Contains(body, "{{define")) {
			t.Errorf("GET %s reached a file outside the static assets", p)
		}
	}
}

// TestUIEscapesStoredText: a raw URL holding a bidirectional formatting
// character is shown quoted and escaped on the group page, never as the
// character itself, as the CLI shows it.
func TestUIEscapesStoredText(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{})
	lines := `{"citation_id":"bidi-1","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://example.com/a\u202e"}` + "\n" +
		`{"citation_id":"bidi-2","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://example.com/a%E2%80%AE"}` + "\n"
	if code, body, _ := do(t, ts, "POST", "/api/ingest", "application/x-ndjson", lines); code != 200 {
		t.Fatalf("ingest: %d %s", code, body)
	}
	_, body, _ := do(t, ts, "GET", "/api/groups?key="+url.QueryEscape("https://example.com/a%E2%80%AE"), "", "")
	var page struct{ Groups []struct{ ID string } }
	json.Unmarshal([]byte(body), &page)
	if len(page.Groups) != 1 {
		t.Fatalf("no group of the two citations: %s", body)
	}
	_, html, _ := do(t, ts, "GET", "/groups/"+page.Groups[0].ID, "", "")
	if strings.ContainsRune(html, '\u202e') || !strings.Contains(html, `\u202e`) {
		t.Errorf("group page shows the raw U+202E, or not its escape")
	}
}

// TestAPIPairAndRelationDecisions: POST /api/pairs/reviews and
// /api/relations/reviews store decisions about two citations and about a
// relation between two groups; the group's own state stays unreviewed,
// its page and GET /api/groups/{id} list them under subjects, the lineage
// of a citation shows them, and a wrong pair, an unknown citation or
// group get a 4xx and write nothing.
func TestAPIPairAndRelationDecisions(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{})
	const other = "g-f42986996d00" // gpt-17-2, a cross-host redirect to group
	code, body, hdr := do(t, ts, "POST", "/api/pairs/reviews", "application/json", `{"citations":["pplx-001-2","gpt-17-2"],"decision":"same","rationale":"one PROV-O","reviewer":"alice"}`)
	if code != http.StatusCreated || hdr.Get("Location") != "/api/citations/gpt-17-2/lineage" {
		t.Fatalf("POST pair review: %d %v\n%s", code, hdr, body)
	}
	var pair struct {
		ID, Subject string
		Citations   []string
	}
	json.Unmarshal([]byte(body), &pair)
	if pair.Subject != "pair" || strings.Join(pair.Citations, " ") != "gpt-17-2 pplx-001-2" {
		t.Errorf("stored pair decision: %s", body)
	}
	code, body, hdr = do(t, ts, "POST", "/api/relations/reviews", "application/json", `{"from":"`+other+`","to":"`+group+`","decision":"related","relation":"mirror_of","reviewer":"bob"}`)
	if code != http.StatusCreated || hdr.Get("Location") != "/api/groups/"+other {
		t.Fatalf("POST relation review: %d %v\n%s", code, hdr, body)
	}
	var rel struct{ ID, Subject, GroupID, RelatedTo string }
	json.Unmarshal([]byte(body), &rel)
	if rel.Subject != "relation" {
		t.Errorf("stored relation decision: %s", body)
	}
	before, _ := st.Count()
	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"/api/pairs/reviews", `{"citations":["gpt-17-2","gpt-17-2"],"decision":"same","reviewer":"a"}`, 400},
		{"/api/pairs/reviews", `{"citations":["gpt-17-2"],"decision":"same","reviewer":"a"}`, 400},
		{"/api/pairs/reviews", `{"citations":["gpt-17-2","nope"],"decision":"same","reviewer":"a"}`, 404},
		{"/api/pairs/reviews", `{"citations":["gpt-17-2","pplx-001-2"],"decision":"maybe","reviewer":"a"}`, 400},
		{"/api/relations/reviews", `{"from":"` + group + `","to":"g-000000000000","decision":"same","reviewer":"a"}`, 404},
		{"/api/relations/reviews", `{"from":"` + group + `","to":"` + group + `","decision":"same","reviewer":"a"}`, 400},
		{"/api/relations/reviews", `{"from":"` + group + `","to":"` + other + `","decision":"related","reviewer":"a"}`, 400},
	} {
		if code, body, _ := do(t, ts, "POST", tc.path, "application/json", tc.body); code != tc.want || !strings.Contains(body, `"error"`) {
			t.Errorf("POST %s %s: %d %s, want %d", tc.path, tc.body, code, body, tc.want)
		}
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("refused requests wrote %d quads", after-before)
	}
	var view struct {
		Review   struct{ State string }
		Subjects []struct {
			Subject string
			State   string
			Latest  struct{ ID string }
		}
	}
	code, body, _ = do(t, ts, "GET", "/api/groups/"+group, "", "")
	json.Unmarshal([]byte(body), &view)
	if code != 200 || view.Review.State != "unreviewed" || len(view.Subjects) != 2 ||
		view.Subjects[0].Latest.ID != rel.ID || view.Subjects[1].Latest.ID != pair.ID || view.Subjects[0].State != "decided" {
		t.Errorf("GET group after a pair and a relation decision: %d\n%s", code, body)
	}
	code, body, _ = do(t, ts, "GET", "/groups/"+group, "", "")
	if code != 200 || !strings.Contains(body, `id="subjects"`) || !strings.Contains(body, pair.ID) || !strings.Contains(body, rel.ID) || !strings.Contains(body, "No decision yet.") {
		t.Errorf("group page: %d, want the pair and relation decisions apart from an empty history\n%s", code, body)
	}
	code, body, _ = do(t, ts, "GET", "/api/citations/gpt-17-2/lineage", "", "")
	if code != 200 || !strings.Contains(body, pair.ID) || !strings.Contains(body, rel.ID) {
		t.Errorf("lineage of gpt-17-2: %d, want both decisions\n%s", code, body)
	}
}

// TestCachedPagesFollowWrites: the queue page and a group page, served
// from memory within a state, change with each decision and each ingest
// through the server.
func TestCachedPagesFollowWrites(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{})
	const q = "/api/groups?sort=risk&limit=50&state=decided"
	for range 2 { // the second is served from memory
		if code, body, _ := do(t, ts, "GET", q, "", ""); code != 200 || !strings.Contains(body, `"total": 0`) {
			t.Fatalf("GET %s before a decision: %d\n%s", q, code, body)
		}
		if code, body, _ := do(t, ts, "GET", "/groups/"+group, "", ""); code != 200 || !strings.Contains(body, "pplx-001-2") {
			t.Fatalf("group page: %d\n%s", code, body)
		}
	}
	if code, body, _ := do(t, ts, "POST", "/api/groups/"+group+"/reviews", "application/json", `{"decision":"same","reviewer":"alice"}`); code != http.StatusCreated {
		t.Fatalf("POST review: %d\n%s", code, body)
	}
	if code, body, _ := do(t, ts, "GET", q, "", ""); code != 200 || !strings.Contains(body, `"total": 1`) || !strings.Contains(body, group) {
		t.Errorf("GET %s after a decision: %d\n%s", q, code, body)
	}
	more := `{"citation_id":"new-1","engine":"e","observed_at":"2026-12-01T00:00:00Z","raw_url":"https://www.w3.org/TR/prov-o/?utm_source=new"}` + "\n"
	if code, body, _ := do(t, ts, "POST", "/api/ingest", "application/x-ndjson", more); code != 200 {
		t.Fatalf("POST ingest: %d\n%s", code, body)
	}
	if code, body, _ := do(t, ts, "GET", "/groups/"+group, "", ""); code != 200 || !strings.Contains(body, "new-1") || !strings.Contains(body, `id="review-state">stale`) {
		t.Errorf("group page after an ingest added a member: %d, want new-1 and stale\n%s", code, body)
	}
	if code, body, _ := do(t, ts, "GET", q, "", ""); code != 200 || !strings.Contains(body, `"total": 0`) {
		t.Errorf("GET %s after the ingest made the decision stale: %d\n%s", q, code, body)
	}
}

// TestUIPairAndRelationForms: the group page's forms decide a pair (two
// ticked members, or a member and a typed citation id) and a relation
// row, each checking the CSRF token and writing nothing when refused;
// the decisions are listed under the page's subjects and leave the
// group's own state alone. A read-only server shows no such form.
func TestUIPairAndRelationForms(t *testing.T) {
	st := open(t)
	ts := start(t, st, server.Options{})
	ts.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	code, body, hdr := do(t, ts, "GET", "/groups/"+group, "", "")
	if code != 200 || !strings.Contains(body, `id="pair-form"`) || !strings.Contains(body, `value="gpt-17-1" form="pair-form"`) || !strings.Contains(body, `action="/groups/`+group+`/decide-relation"`) {
		t.Fatalf("group page without the pair and relation forms: %d\n%s", code, body)
	}
	csrf := strings.TrimPrefix(strings.Split(hdr.Get("Set-Cookie"), ";")[0], "pg_csrf=")
	const other = "g-f42986996d00"
	post := func(path string, v url.Values) (int, string, http.Header) {
		t.Helper()
		return do(t, ts, "POST", path, "application/x-www-form-urlencoded", v.Encode(), "Cookie", "pg_csrf="+csrf)
	}
	before, _ := st.Count()
	for _, tc := range []struct {
		path string
		form url.Values
		want int
	}{
		{"/groups/" + group + "/decide-pair", url.Values{"citations": {"gpt-17-1", "pplx-001-2"}, "decision": {"same"}, "reviewer": {"carol"}, "csrf": {"wrong"}}, 403},
		{"/groups/" + group + "/decide-relation", url.Values{"to": {other}, "decision": {"same"}, "reviewer": {"carol"}}, 403},
		{"/groups/" + group + "/decide-pair", url.Values{"citations": {"gpt-17-1", ""}, "decision": {"same"}, "reviewer": {"carol"}, "csrf": {csrf}}, 400},
		{"/groups/" + group + "/decide-pair", url.Values{"citations": {"gpt-17-1", "nope"}, "decision": {"same"}, "reviewer": {"carol"}, "csrf": {csrf}}, 404},
		{"/groups/" + group + "/decide-relation", url.Values{"to": {"g-000000000000"}, "decision": {"same"}, "reviewer": {"carol"}, "csrf": {csrf}}, 404},
		{"/groups/" + group + "/decide-relation", url.Values{"to": {other}, "decision": {""}, "reviewer": {"carol"}, "csrf": {csrf}}, 400},
	} {
		if code, _, _ := post(tc.path, tc.form); code != tc.want {
			t.Errorf("POST %s %v: %d, want %d", tc.path, tc.form, code, tc.want)
		}
	}
	if after, _ := st.Count(); after != before {
		t.Errorf("refused forms wrote %d quads", after-before)
	}
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/groups/" + group + "/decide-pair", url.Values{"citations": {"gpt-17-1", "pplx-001-2", ""}, "decision": {"different"}, "rationale": {"fragment"}, "reviewer": {"carol"}, "csrf": {csrf}}},
		{"/groups/" + group + "/decide-pair", url.Values{"citations": {"gpt-17-1", " gpt-17-2 "}, "decision": {"same"}, "reviewer": {"carol"}, "csrf": {csrf}}},
		{"/groups/" + group + "/decide-relation", url.Values{"to": {other}, "decision": {"related"}, "relation": {"mirror_of"}, "reviewer": {"dave"}, "csrf": {csrf}}},
	} {
		if code, _, hdr := post(tc.path, tc.form); code != 303 || !strings.HasPrefix(hdr.Get("Location"), "/groups/"+group+"?decided=r-") {
			t.Errorf("POST %s %v: %d %v, want 303 to the group", tc.path, tc.form, code, hdr.Get("Location"))
		}
	}
	var view struct {
		Review   struct{ State string }
		Subjects []struct {
			Subject   string
			Citations []string
			From      string `json:"from_group"`
			To        string `json:"to_group"`
			Latest    struct{ Decision, Relation, Reviewer string }
		}
	}
	_, body, _ = do(t, ts, "GET", "/api/groups/"+group, "", "")
	if err := json.Unmarshal([]byte(body), &view); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range view.Subjects {
		got = append(got, s.Subject+" "+strings.Join(s.Citations, ",")+s.From+">"+s.To+" "+s.Latest.Decision+" "+s.Latest.Relation+" "+s.Latest.Reviewer)
	}
	want := []string{
		"relation " + group + ">" + other + " related mirror_of dave",
		"pair gpt-17-1,gpt-17-2> same  carol",
		"pair gpt-17-1,pplx-001-2> different  carol",
	}
	if view.Review.State != "unreviewed" || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the forms: state %q, subjects\n%s\nwant\n%s", view.Review.State, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, body, _ := do(t, ts, "GET", "/groups/"+group, "", ""); !strings.Contains(body, "mirror_of") || !strings.Contains(body, `id="review-state">unreviewed`) {
		t.Errorf("group page after the forms lacks the relation decision or changed state")
	}
	ro := start(t, st, server.Options{ReadOnly: true})
	if code, body, _ := do(t, ro, "GET", "/groups/"+group, "", ""); code != 200 || strings.Contains(body, "pair-form") || strings.Contains(body, "decide-relation") {
		t.Errorf("read-only group page shows decision forms: %d", code)
	}
}
