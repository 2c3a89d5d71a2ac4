package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestLineageShowsDroppedCanonicals: a retrieval whose response declared
// more canonical URLs than resolve keeps records how many it dropped, and
// lineage shows that count in text and JSON (a reviewer must see that the
// list is not whole).
func TestLineageShowsDroppedCanonicals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	in := `{"citation_id":"c1","observed_at":"2026-11-02T10:00:00Z","raw_url":"https://example.test/a","retrieval":{"retrieved_at":"2026-11-02T10:05:00Z","final_url":"https://example.test/a","final_status":200,"canonical":[{"url":"https://example.test/a","source":"html-link"}],"canonical_dropped":7}}
{"citation_id":"c2","observed_at":"2026-11-02T10:00:00Z","raw_url":"https://example.test/b","retrieval":{"retrieved_at":"2026-11-02T10:05:00Z","final_url":"https://example.test/b","final_status":200}}
`
	run := func(stdin string, args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	if _, errOut, code := run(in, "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	text, errOut, code := run("", "lineage", "--db", db, "c1")
	if code != 0 || !strings.Contains(text, "canonicals dropped: 7 more declared than were kept") {
		t.Errorf("lineage c1: exit %d, stderr %q, the text does not show the 7 dropped canonicals:\n%s", code, errOut, text)
	}
	if text, _, _ := run("", "lineage", "--db", db, "c2"); strings.Contains(text, "canonicals dropped") {
		t.Errorf("lineage c2 shows dropped canonicals it does not have:\n%s", text)
	}
	out, errOut, code := run("", "lineage", "--db", db, "--format", "json", "c1")
	var got []struct {
		Retrievals []struct {
			CanonicalDropped int `json:"canonical_dropped"`
		} `json:"retrievals"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) != 1 || len(got[0].Retrievals) != 1 || got[0].Retrievals[0].CanonicalDropped != 7 {
		t.Errorf("lineage --format json c1: exit %d, %v, stderr %q: want one retrieval with canonical_dropped 7:\n%s", code, err, errOut, out)
	}
}
