package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestResolveCLI runs provgraph resolve against a loopback server: first
// with the default guard, which refuses it (and the summary names
// --allow-private), then with --allow-private, then with --only-unresolved,
// which retries the citations whose retrievals failed (issue 18).
// What each run prints and the retrievals lineage then shows are compared
// with testdata/resolve/ (rewrite with -update), after the server's port,
// times and durations are replaced by placeholders.
func TestResolveCLI(t *testing.T) {
	var port string
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<https://canonical.example/header>; rel="canonical"`)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><link rel="canonical" href="/html"></head><body>page</body></html>`)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/cross", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/page", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())

	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	var in bytes.Buffer
	for i, p := range []string{"/page", "/moved", "/cross", "/loop", "/slow"} {
		fmt.Fprintf(&in, `{"citation_id": "r%d", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "http://127.0.0.1:%s%s#x"}`+"\n", i+1, port, p)
	}
	// Observed earlier, so that --since leaves it out once the guard is off:
	// whether something answers on port 80 depends on the machine.
	in.WriteString(`{"citation_id": "r6", "observed_at": "2026-11-01T10:00:00Z", "raw_url": "http://127.0.0.1/admin"}` + "\n")
	run := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, bytes.NewReader(in.Bytes()), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	if _, stderr, code := run("ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	scrubRE := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z`)
	// The captures' file names hold the time and their record ids are
	// random.
	warcRefRE := regexp.MustCompile(`warc:[^#"]+#\d+;<urn:uuid:[0-9a-f-]+>`)
	clean := func(s string) string {
		s = regexp.MustCompile(`\b`+port+`\b`).ReplaceAllString(s, "PORT")
		s = string(scrub([]byte(s), dir))
		s = warcRefRE.ReplaceAllString(s, "warc:FILE#OFFSET;<urn:uuid:ID>")
		return scrubRE.ReplaceAllString(s, "TIME")
	}
	var got bytes.Buffer
	for _, args := range [][]string{
		{"resolve", "--db", db},
		{"resolve", "--db", db, "--allow-private", "--timeout", "1s", "--since", "2026-11-02T00:00:00Z"},
		// The loop and the timeout failed: --only-unresolved retries them.
		{"resolve", "--db", db, "--allow-private", "--timeout", "1s", "--since", "2026-11-02T00:00:00Z", "--only-unresolved"},
		{"resolve", "--db", db, "--since", "yesterday"},
	} {
		stdout, stderr, code := run(args...)
		fmt.Fprintf(&got, "$ provgraph %s\n%s%s[exit %d]\n\n", clean(strings.Join(args, " ")), clean(stdout), clean(stderr), code)
	}
	for i := 1; i <= 6; i++ {
		stdout, stderr, code := run("lineage", "--db", db, "--format", "json", "r"+strconv.Itoa(i))
		if code != 0 {
			t.Fatalf("lineage r%d: exit %d: %s", i, code, stderr)
		}
		var l []struct {
			ID         string          `json:"citation_id"`
			Retrievals json.RawMessage `json:"retrievals"`
		}
		if err := json.Unmarshal([]byte(stdout), &l); err != nil || len(l) != 1 {
			t.Fatalf("lineage r%d: %v: %s", i, err, stdout)
		}
		var pretty bytes.Buffer
		json.Indent(&pretty, l[0].Retrievals, "", "  ")
		fmt.Fprintf(&got, "# %s retrievals\n%s\n\n", l[0].ID, clean(pretty.String()))
	}
	golden := filepath.Join("testdata", "resolve", "runs.txt")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := mustRead(t, golden); !bytes.Equal(got.Bytes(), want) {
		t.Errorf("resolve runs differ from %s\n--- got ---\n%s", golden, got.Bytes())
	}
	st, err := graph.Open(db, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestResolveMaxRedirectsZero checks that --max-redirects 0 records the
// first response and follows no redirect, and that the run records the
// limit 0 (issue 18: it was refused); a negative limit is a usage error.
func TestResolveMaxRedirectsZero(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "page")
	}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "z.db")
	in := `{"citation_id": "z1", "observed_at": "2026-11-02T10:00:00Z", "raw_url": "` + srv.URL + `/moved"}` + "\n"
	run := func(args ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(in), &stdout, &stderr)
		return stderr.String(), code
	}
	if stderr, code := run("ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	if stderr, code := run("resolve", "--db", db, "--max-redirects", "-1"); code != 2 || !strings.Contains(stderr, "--max-redirects -1: want 0 or more") {
		t.Errorf("--max-redirects -1: exit %d: %s; want 2 and a usage error", code, stderr)
	}
	stderr, code := run("resolve", "--db", db, "--allow-private", "--max-redirects", "0")
	if code != 0 || !strings.Contains(stderr, "1 failed (too-many-redirects 1)") {
		t.Fatalf("--max-redirects 0: exit %d: %s; want 0 and one too-many-redirects", code, stderr)
	}
	st, err := graph.Open(db, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.ResolveRun))
	if err != nil || len(runs) != 1 {
		t.Fatalf("resolve runs %v, %v; want one", runs, err)
	}
	if limit, _ := st.Objects(runs[0], graph.IRI(vocab.MaxRedirects)); len(limit) != 1 || limit[0].Value != "0" {
		t.Errorf("the run's pg:maxRedirects = %v, want 0", limit)
	}
	hops, _ := st.Subjects(graph.IRI(vocab.Status), graph.Literal("301", graph.XSDInteger))
	if len(hops) != 1 {
		t.Errorf("%d hops with status 301, want the one redirect recorded", len(hops))
	}
}

// TestResolveWorkMem: resolve, which holds the selected citations' facts,
// refuses a selection that would take more than --work-mem (or
// $PROVGRAPH_WORK_MEM): exit 2, a message naming how many were selected,
// how to select fewer and the flag, nothing fetched, no WARC directory
// made, nothing written to the database; a narrower selection (--since)
// under the same --work-mem goes on.
func TestResolveWorkMem(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "d.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if 15*resolveBytesPerCitation <= 16<<10 {
		t.Fatalf("15 citations at %d bytes fit in 16 KiB: the test needs a smaller --work-mem", resolveBytesPerCitation)
	}
	for _, c := range []struct {
		args []string
		env  string
	}{{[]string{"--work-mem", "16KiB"}, ""}, {nil, "16KiB"}} {
		t.Setenv(workMemEnv, c.env)
		code, out, stderr := cli(t, append([]string{"resolve", "--db", db}, c.args...)...)
		if code != exitUsage || out != "" {
			t.Errorf("resolve %v with %s=%q: exit %d, output %q; want exit 2 and nothing", c.args, workMemEnv, c.env, code, out)
		}
		for _, w := range []string{"resolve of " + db, "13 of the 15 citations selected, 4 at most", "--since, --only-unresolved", "--work-mem"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("resolve %v with %s=%q: stderr %q, want it to say %q", c.args, workMemEnv, c.env, stderr, w)
			}
		}
	}
	// A narrower selection fits: here none at all.
	t.Setenv(workMemEnv, "")
	if code, _, stderr := cli(t, "resolve", "--db", db, "--work-mem", "16KiB", "--since", "2100-01-01T00:00:00Z"); code != exitOK || !strings.Contains(stderr, "nothing to resolve among 15 citations") {
		t.Errorf("resolve --since 2100 --work-mem 16KiB: exit %d, want 0 and nothing to resolve\n%s", code, stderr)
	}
	if _, err := os.Stat(db + ".warc"); !os.IsNotExist(err) {
		t.Errorf("a refused or empty resolve made the WARC directory: %v", err)
	}
	if after, err := os.ReadFile(db); err != nil || !bytes.Equal(after, before) {
		t.Errorf("a refused resolve changed the database file (%v)", err)
	}
}
