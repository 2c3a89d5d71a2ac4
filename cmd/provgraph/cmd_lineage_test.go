package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/testenv"
)

// lineageDB ingests the bundled example and the extra lines (JSON Lines)
// into a database in dir and returns its path.
func lineageDB(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	db := filepath.Join(dir, "lineage.db")
	var stderr bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", db, "../../testdata/citations.jsonl"}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr.String())
	}
	if len(extra) > 0 {
		in := strings.NewReader(strings.Join(extra, "\n") + "\n")
		if code := Run(context.Background(), []string{"ingest", "--db", db, "-"}, in, io.Discard, &stderr); code != 0 {
			t.Fatalf("ingest extra lines: exit %d: %s", code, stderr.String())
		}
	}
	return db
}

// Three citations of one raw URL, and one of another raw URL with the same
// key.
var lineageExtra = []string{
	`{"citation_id":"x-2","engine":"claude","answer_id":"x","position":2,"question":"Where is a?","observed_at":"2026-12-01T10:00:00Z","raw_url":"https://Example.org/a?utm_source=x#top"}`,
	`{"citation_id":"x-1","engine":"claude","answer_id":"x","position":1,"question":"Where is a?","observed_at":"2026-12-01T10:00:00Z","raw_url":"https://Example.org/a?utm_source=x#top"}`,
	`{"citation_id":"y-1","engine":"copilot","answer_id":"y","position":1,"observed_at":"2026-12-01T11:00:00Z","raw_url":"https://Example.org/a?utm_source=x#top","retrieval":{"retrieved_at":"2026-12-01T11:01:00Z","hops":[{"from":"https://Example.org/a?utm_source=x","to":"https://example.org/a/?utm_source=x","status":308,"at":"2026-12-01T11:01:00Z"}],"final_url":"https://example.org/a/?utm_source=x","final_status":200,"content_hash":"sha256:2222222222222222222222222222222222222222222222222222222222222222","snapshot_ref":"warc://crawl-7/000123"}}`,
	`{"citation_id":"z-1","engine":"copilot","answer_id":"z","position":1,"observed_at":"2026-12-01T11:00:00Z","raw_url":"https://example.org/a"}`,
}

// TestLineageCLI runs each case in testdata/lineage/<name>/ against a
// database holding the example citations and lineageExtra: "args" is a
// JSON array in which "$DB" is that database, "stdout", "stderr" and "exit"
// the expected results (rewritten with -update, as for TestCLI). The
// database file must be byte for byte the same afterwards.
func TestLineageCLI(t *testing.T) {
	tmp := t.TempDir()
	db := lineageDB(t, tmp, lineageExtra...)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob("testdata/lineage/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases in testdata/lineage: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var args []string
			if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "args")), &args); err != nil {
				t.Fatalf("%s/args: %v", dir, err)
			}
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "$DB", db)
			}
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
			got := map[string][]byte{
				"stdout": scrub(stdout.Bytes(), tmp),
				"stderr": scrub(stderr.Bytes(), tmp),
				"exit":   []byte(strconv.Itoa(code) + "\n"),
			}
			for _, name := range []string{"stdout", "stderr", "exit"} {
				path := filepath.Join(dir, name)
				if *update {
					if err := os.WriteFile(path, got[name], 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if want := mustRead(t, path); !bytes.Equal(got[name], want) {
					t.Errorf("provgraph %s: %s differs from %s\n--- got ---\n%s\n--- want ---\n%s",
						strings.Join(args, " "), name, path, got[name], want)
				}
			}
		})
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("lineage changed the database file")
	}
}

// TestLineageJSONShape: the JSON output is an array with one object per
// citation, with the field names the groups command uses.
func TestLineageJSONShape(t *testing.T) {
	db := lineageDB(t, t.TempDir(), lineageExtra...)
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"lineage", "--db", db, "--format", "json", "--url", "https://Example.org/a?utm_source=x#top"}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d objects, want 3", len(got))
	}
	for _, o := range got {
		for _, f := range []string{"citation_id", "raw_url", "fragment", "key", "observed_at", "policy", "normalization", "retrievals", "relations", "content_hashes", "group"} {
			if _, ok := o[f]; !ok {
				t.Errorf("%v: no field %q", o["citation_id"], f)
			}
		}
		if o["raw_url"] != "https://Example.org/a?utm_source=x#top" || o["fragment"] != "top" || o["key"] != "https://example.org/a" {
			t.Errorf("%v: raw_url %v, fragment %v, key %v", o["citation_id"], o["raw_url"], o["fragment"], o["key"])
		}
		for _, f := range []string{"retrievals", "relations", "content_hashes"} {
			if _, ok := o[f].([]any); !ok {
				t.Errorf("%v: %s = %v, want an array ([] when empty)", o["citation_id"], f, o[f])
			}
		}
	}
}

// TestLineageDOT checks that Graphviz accepts the dot output of every
// example citation and of a citation whose raw URL holds quotes,
// backslashes, an entity reference, a control character and 300 bytes, and
// that the full raw URL survives in the SVG tooltip.
func TestLineageDOT(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		testenv.MissingTool(t, "Graphviz dot is not installed (apt-get install graphviz); the dot output is not checked")
	}
	long := "https://example.test/" + strings.Repeat("very-long-segment/", 15) + `a"b\c\n&amp;d?q=<x>&r=1`
	nasty, err := json.Marshal(map[string]any{"citation_id": "nasty-1", "engine": `en"gine\`, "observed_at": "2026-12-01T10:00:00Z", "raw_url": long,
		"relations": []map[string]string{{"type": "mirror_of", "target": `https://mirror.test/"q"\`}}})
	if err != nil {
		t.Fatal(err)
	}
	control := `{"citation_id":"ctl-1","observed_at":"2026-12-01T10:00:00Z","raw_url":"https://example.test/a\u0007b\u0000c"}`
	db := lineageDB(t, t.TempDir(), append(lineageExtra, string(nasty), control)...)

	ids := []string{"pplx-001-1", "pplx-001-2", "gpt-17-1", "gpt-17-2", "gem-5-1", "gem-5-2", "gem-5-3", "cop-9-1", "cop-9-2", "cop-9-3",
		"pplx-002-1", "pplx-002-2", "pplx-002-3", "nasty-1", "ctl-1"}
	runs := [][]string{{"--url", "https://Example.org/a?utm_source=x#top"}, {"--url", "../guide/install#linux"}}
	for _, id := range ids {
		runs = append(runs, []string{id})
	}
	for _, args := range runs {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), append([]string{"lineage", "--db", db, "--format", "dot"}, args...), nil, &stdout, &stderr); code != 0 {
			t.Fatalf("lineage %v: exit %d: %s", args, code, stderr.String())
		}
		cmd := exec.Command("dot", "-Tsvg")
		cmd.Stdin = &stdout
		var svg, dotErr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &svg, &dotErr
		if err := cmd.Run(); err != nil || dotErr.Len() > 0 {
			t.Errorf("dot -Tsvg on the lineage of %v: %v\n%s", args, err, dotErr.String())
			continue
		}
		if args[0] == "nasty-1" {
			titles := svgTitles(t, svg.Bytes())
			for _, want := range []string{long, `https://mirror.test/"q"\`, `answer engine en"gine\`} {
				if !titles[want] {
					t.Errorf("no SVG tooltip holds %q exactly; tooltips: %v", want, titles)
				}
			}
		}
	}
}

// svgTitles returns the set of xlink:title attribute values in svg.
func svgTitles(t *testing.T, svg []byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	d := xml.NewDecoder(bytes.NewReader(svg))
	d.Strict = false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("parse SVG: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Local == "title" {
					out[a.Value] = true
				}
			}
		}
	}
}

// lineageAgrees checks, for every citation in db, that lineage (in both
// group scopes) lists exactly the relations of the group that
// groups --min-size 1 lists the citation in, and returns how many
// citations had relations.
func lineageAgrees(t *testing.T, db string) int {
	t.Helper()
	type relation struct {
		Type, From, To, Evidence string
		ToURL                    string `json:"to_url"`
		Review                   bool
	}
	code, out, stderr := run(t, "groups", "--db", db, "--min-size", "1", "--format", "json")
	if code != 0 {
		t.Fatalf("groups: exit %d: %s", code, stderr)
	}
	var rep struct {
		Groups []struct {
			ID      string
			Members []struct {
				CitationID string `json:"citation_id"`
			}
			Relations []relation
		}
		Rejected, Unnormalized []any
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	related := 0
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			if len(g.Relations) > 0 {
				related++
			}
			for _, scope := range []string{"neighbourhood", "database"} {
				code, out, stderr := run(t, "lineage", "--db", db, "--format", "json", "--group-scope", scope, m.CitationID)
				if code != 0 {
					t.Fatalf("lineage %s: exit %d: %s", m.CitationID, code, stderr)
				}
				var ls []struct {
					Group struct {
						ID        string
						Relations []relation
					}
				}
				if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls) != 1 {
					t.Fatalf("lineage %s: %v", m.CitationID, err)
				}
				if got := ls[0].Group; got.ID != g.ID || !slices.Equal(got.Relations, g.Relations) {
					t.Errorf("%s: lineage (%s) says group %s with relations %+v; groups --min-size 1 says %s with %+v",
						m.CitationID, scope, got.ID, got.Relations, g.ID, g.Relations)
				}
			}
		}
	}
	return related
}

// Regression test for issue 18.7: lineage and groups agree on the relations
// of every citation's group, on the example, the query corpus (redirects
// across hosts, canonical declarations, archive, format, mirror and
// syndication relations, shared content hashes) and on retrievals resolve
// made.
func TestLineageRelationsAgreeWithGroups(t *testing.T) {
	for name, files := range map[string][]string{
		"example": {"../../testdata/citations.jsonl"},
		"corpus":  {"../../internal/query/testdata/corpus.jsonl"},
	} {
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "q.db")
			for _, f := range files {
				if code, _, stderr := run(t, "ingest", "--db", db, f); code != 0 {
					t.Fatalf("ingest %s: %d %s", f, code, stderr)
				}
			}
			if n := lineageAgrees(t, db); n == 0 {
				t.Error("no citation's group has relations: the corpus tests nothing")
			}
		})
	}
	t.Run("resolved", func(t *testing.T) {
		var port string
		body := `<!doctype html><html><head><link rel="canonical" href="http://localhost:PORT/page"></head><body>page</body></html>`
		mux := http.NewServeMux()
		for _, p := range []string{"/page", "/copy"} {
			mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, strings.ReplaceAll(body, "PORT", port))
			})
		}
		mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "page", http.StatusMovedPermanently) })
		mux.HandleFunc("/cross", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://localhost:"+port+"/page", http.StatusFound)
		})
		srv := httptest.NewServer(mux)
		defer srv.Close()
		_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
		var in strings.Builder
		for i, p := range []string{"/page", "/copy", "/moved", "/cross", "/page?utm_source=x"} {
			fmt.Fprintf(&in, `{"citation_id": "r%d", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "http://127.0.0.1:%s%s"}`+"\n", i+1, port, p)
		}
		db := filepath.Join(t.TempDir(), "r.db")
		var stderr bytes.Buffer
		if code := Run(context.Background(), []string{"ingest", "--db", db, "-"}, strings.NewReader(in.String()), io.Discard, &stderr); code != 0 {
			t.Fatalf("ingest: %d %s", code, stderr.String())
		}
		if code := Run(context.Background(), []string{"resolve", "--db", db, "--allow-private"}, nil, io.Discard, &stderr); code != 0 {
			t.Fatalf("resolve: %d %s", code, stderr.String())
		}
		if n := lineageAgrees(t, db); n == 0 {
			t.Error("no citation's group has relations: the resolved corpus tests nothing")
		}
	})
}
