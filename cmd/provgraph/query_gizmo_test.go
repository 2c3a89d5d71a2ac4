package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
)

// The README's worked Gizmo examples, on testdata/citations.jsonl.
const (
	pgNS               = "https://w3id.org/provgraph/ns#"
	gizmoCrossHost     = `g.V().Has('<` + pgNS + `engineName>', 'chatgpt').In('<http://www.w3.org/ns/prov#wasAttributedTo>').In('<` + pgNS + `inAnswer>').Tag('citation').Out('<` + pgNS + `retrievedIn>').Out('<` + pgNS + `hop>').Has('<` + pgNS + `crossesHost>', '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>').Back('citation').Out('<` + pgNS + `citationId>').All()`
	gizmoArchives      = `g.V().Tag('snapshot').Out('<` + pgNS + `archiveOf>').Out('<` + pgNS + `text>').Filter(regex('^https?://([^/]*\\.)?example\\.test/')).Back('snapshot').Out('<` + pgNS + `text>').All()`
	gizmoAnswerLineage = `g.V().Has('<` + pgNS + `answerId>', 'gpt-17').In('<` + pgNS + `inAnswer>').Tag('citation').Out('<` + pgNS + `cites>').Out('<` + pgNS + `text>').Tag('raw').Back('citation').Out('<` + pgNS + `retrievedIn>').Out('<` + pgNS + `finalURL>').Tag('resolved').All()`
)

// TestQueryGizmoExamples runs the README's examples and checks their
// answers; a query that does not parse is a usage error.
func TestQueryGizmoExamples(t *testing.T) {
	db := filepath.Join(t.TempDir(), "q.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	run := func(q, tag string) []string {
		t.Helper()
		code, out, stderr := cli(t, "query", "--db", db, q)
		if code != exitOK {
			t.Fatalf("query %s: exit %d: %s", q, code, stderr)
		}
		var res struct{ Results []map[string]string }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Results {
			got = append(got, r[tag])
		}
		slices.Sort(got)
		return got
	}
	if got := run(gizmoCrossHost, "id"); !slices.Equal(got, []string{"gpt-17-2"}) {
		t.Errorf("chatgpt citations that redirected across hosts: %q", got)
	}
	if got := run(gizmoArchives, "id"); !slices.Equal(got, []string{"https://web.archive.org/web/20240115083000/https://example.test/report?id=3"}) {
		t.Errorf("archive snapshots of example.test: %q", got)
	}
	if got := run(gizmoAnswerLineage, "raw"); !slices.Equal(got, []string{"http://w3.org/TR/prov-o", "https://www.w3.org/TR/prov-o/?utm_source=chatgpt.com"}) {
		t.Errorf("raw URLs of answer gpt-17: %q", got)
	}
	if code, _, _ := cli(t, "query", "--db", db, "g.V(.All()"); code != exitUsage {
		t.Errorf("a query that does not parse: exit %d, want %d", code, exitUsage)
	}
}
