package export_test

// Checks of the export by parsers provgraph did not write: Serd (serdi),
// Raptor (rapper), rdflib, pyld and the prov package (Python), and
// Oxigraph (Node). .ci/run installs all of them; each test is skipped, with
// what to install, only when its tool is absent.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/export"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/testenv"
	"github.com/provgraph/provgraph/internal/vocab"
)

// corpusExport is the fixture corpus, with a resolve run and a
// renormalization, exported in every format with one clock reading,
// written once per test binary: files without and grouped with the review
// groups (Options.Groups with the groups command's defaults).
type corpusExport struct {
	dir         string
	db          string
	files       map[export.Format]string
	sums        map[export.Format]export.Summary
	grouped     map[export.Format]string
	groupedSums map[export.Format]export.Summary
	snap        *query.Snapshot
}

// corpusGroups are the options the grouped files were written with: those
// of provgraph groups by default.
var corpusGroups = export.GroupOptions{MinSize: 2}

// resolveCorpus records a resolve run over the first targets of st, with
// a fetch that answers without a network: a same-host redirect with its
// Location header, a final response with a content type and hash, and a
// failure, so that every predicate of a resolve run is in the corpus.
func resolveCorpus(ctx context.Context, st *graph.Store, now func() time.Time) error {
	targets, _, err := ingest.ResolveTargets(ctx, st, ingest.TargetOptions{})
	if err != nil {
		return err
	}
	targets = targets[:min(len(targets), 6)]
	n := 0
	var mu sync.Mutex
	fetch := func(_ context.Context, u string) (*model.Retrieval, error) {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		at := "2026-11-29T12:00:00Z"
		if i%3 == 0 {
			return &model.Retrieval{RetrievedAt: at, Outcome: "timeout", OutcomeError: "request took longer than 1s"}, nil
		}
		final := strings.TrimSuffix(u, "/") + "/final"
		return &model.Retrieval{
			RetrievedAt: at,
			Hops:        []model.Hop{{From: u, To: final, Status: "301", At: at, Location: "final"}},
			FinalURL:    final, FinalStatus: "200", ContentType: "text/html; charset=utf-8",
			ContentHash: "sha256:" + strings.Repeat(strconv.Itoa(i), 64)[:64], Outcome: "ok",
			Canonical: []model.Canonical{{URL: final, Source: "http-link-header"}},
		}, nil
	}
	policy := model.FetchPolicy{MaxRedirects: 10, MaxBodyBytes: 1 << 20, Timeout: time.Second, UserAgent: "provgraph-test", Schemes: []string{"http", "https"}, Ports: []int{80, 443}}
	_, err = ingest.Resolve(ctx, st, targets, ingest.ResolveOptions{Policy: policy, Fetch: fetch, Concurrency: 1, Now: now})
	return err
}

var (
	corpusOnce sync.Once
	corpus     *corpusExport
	corpusErr  error
)

func loadCorpus(t *testing.T) *corpusExport {
	t.Helper()
	corpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "provgraph-export-interop-")
		if err != nil {
			corpusErr = err
			return
		}
		c := &corpusExport{
			dir: dir, db: filepath.Join(dir, "corpus.db"),
			files: map[export.Format]string{}, sums: map[export.Format]export.Summary{},
			grouped: map[export.Format]string{}, groupedSums: map[export.Format]export.Summary{},
		}
		st, err := graph.Open(c.db, &graph.Options{NoSync: true})
		if err != nil {
			corpusErr = err
			return
		}
		defer st.Close()
		for _, f := range fixtures {
			if _, err := ingest.File(context.Background(), st, f, filepath.Base(f), ingest.Options{Policy: normalize.Default()}); err != nil {
				corpusErr = err
				return
			}
		}
		if corpusErr = resolveCorpus(context.Background(), st, clock(t, t1)); corpusErr != nil {
			return
		}
		if _, corpusErr = ingest.Renormalize(context.Background(), st, ingest.Options{Policy: normalize.Lenient(), Now: clock(t, t1)}); corpusErr != nil {
			return
		}
		for _, format := range export.Formats {
			path := filepath.Join(dir, "corpus."+string(format))
			sum, err := export.WriteFile(context.Background(), st, path, &export.Options{Format: format, Now: clock(t, t1), Version: "test"})
			if err != nil {
				corpusErr = err
				return
			}
			c.files[format], c.sums[format] = path, sum
			path = filepath.Join(dir, "grouped."+string(format))
			groups := corpusGroups
			sum, err = export.WriteFile(context.Background(), st, path, &export.Options{Format: format, Now: clock(t, t1), Version: "test", Groups: &groups})
			if err != nil {
				corpusErr = err
				return
			}
			c.grouped[format], c.groupedSums[format] = path, sum
		}
		c.snap, corpusErr = query.Load(context.Background(), citestore.New(st), "")
		corpus = c
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpus
}

func TestMain(m *testing.M) {
	code := m.Run()
	if corpus != nil {
		os.RemoveAll(corpus.dir)
	}
	os.Exit(code)
}

// need skips the test when a program is not installed.
func need(t *testing.T, prog, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(prog)
	if err != nil {
		testenv.MissingTool(t, fmt.Sprintf("%s is not installed (Debian package %s; .ci/run installs it): skipping this check", prog, pkg))
	}
	return path
}

// python returns a python3 that imports the modules, or skips the test.
// Debian's python3-* packages install into /usr/bin/python3, which may not
// be the first python3 on PATH.
func python(t *testing.T, modules ...string) string {
	t.Helper()
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		if exec.Command(p, "-c", "import "+strings.Join(modules, ", ")).Run() == nil {
			return p
		}
	}
	testenv.MissingTool(t, fmt.Sprintf("no python3 imports %s (Debian packages python3-rdflib, python3-pyld, python3-prov; .ci/run installs them): skipping this check", strings.Join(modules, ", ")))
	return ""
}

// rdfcheck runs testdata/rdfcheck.py and decodes its JSON output into v.
func rdfcheck(t *testing.T, v any, modules []string, args ...string) {
	t.Helper()
	py := python(t, modules...)
	var stderr bytes.Buffer
	cmd := exec.Command(py, append([]string{"testdata/rdfcheck.py"}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rdfcheck.py %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("rdfcheck.py %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var serdSyntax = map[export.Format]string{export.NTriples: "ntriples", export.NQuads: "nquads", export.Turtle: "turtle"}

// TestSerdiStrict parses the N-Triples, N-Quads and Turtle exports of the
// fixture corpus, and of a store holding literals and IRIs that need every
// escape, with serdi in its default strict mode: any error or warning
// fails. serdi's own N-Triples output must hold as many statements.
func TestSerdiStrict(t *testing.T) {
	need(t, "serdi", "serdi")
	c := loadCorpus(t)
	odd, _ := oddStore(t)
	for _, format := range []export.Format{export.NTriples, export.NQuads, export.Turtle} {
		oddPath, oddSum := exportFile(t, odd, format, t1)
		for _, in := range []struct {
			path string
			n    int64
		}{{c.files[format], c.sums[format].Statements()}, {c.grouped[format], c.groupedSums[format].Statements()}, {oddPath, oddSum.Statements()}} {
			var stderr bytes.Buffer
			cmd := exec.Command("serdi", "-i", serdSyntax[format], "-o", "nquads", in.path)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Errorf("serdi -i %s %s: %v\n%s", serdSyntax[format], filepath.Base(in.path), err, stderr.Bytes())
				continue
			}
			if n := int64(len(lines(out))); n != in.n {
				t.Errorf("serdi read %d statements from %s, provgraph wrote %d", n, filepath.Base(in.path), in.n)
			}
		}
	}
}

var rapperSyntax = map[export.Format]string{export.NTriples: "ntriples", export.NQuads: "nquads", export.Turtle: "turtle"}

// TestRapperCounts checks that Raptor counts, in every format it reads
// (it has no JSON-LD parser), as many statements as provgraph reports.
func TestRapperCounts(t *testing.T) {
	need(t, "rapper", "raptor2-utils")
	c := loadCorpus(t)
	for _, format := range []export.Format{export.NTriples, export.NQuads, export.Turtle} {
		for _, in := range []struct {
			path string
			n    int64
		}{{c.files[format], c.sums[format].Statements()}, {c.grouped[format], c.groupedSums[format].Statements()}} {
			out, err := exec.Command("rapper", "-i", rapperSyntax[format], "-c", in.path).CombinedOutput()
			if err != nil {
				t.Errorf("rapper -i %s -c %s: %v\n%s", rapperSyntax[format], filepath.Base(in.path), err, out)
				continue
			}
			m := regexp.MustCompile(`returned (\d+) triples`).FindSubmatch(out)
			if m == nil {
				t.Errorf("rapper printed no count:\n%s", out)
				continue
			}
			if n, _ := strconv.ParseInt(string(m[1]), 10, 64); n != in.n {
				t.Errorf("rapper counts %d statements in %s, provgraph reports %d", n, filepath.Base(in.path), in.n)
			}
		}
	}
}

// TestRDFLibCounts checks that rdflib counts, in every format, as many
// statements as provgraph reports, and that pyld's JSON-LD toRdf does too.
func TestRDFLibCounts(t *testing.T) {
	c := loadCorpus(t)
	for _, set := range []struct {
		files map[export.Format]string
		sums  map[export.Format]export.Summary
	}{{c.files, c.sums}, {c.grouped, c.groupedSums}} {
		for _, format := range export.Formats {
			var got struct{ Statements int64 }
			rdfcheck(t, &got, []string{"rdflib"}, "count", string(format), set.files[format])
			if got.Statements != set.sums[format].Statements() {
				t.Errorf("rdflib counts %d statements in %s, provgraph reports %d", got.Statements, filepath.Base(set.files[format]), set.sums[format].Statements())
			}
		}
		var got struct{ Statements int64 }
		rdfcheck(t, &got, []string{"rdflib", "pyld"}, "pyld-count", set.files[export.JSONLD])
		if got.Statements != set.sums[export.JSONLD].Statements() {
			t.Errorf("pyld makes %d statements of %s, provgraph reports %d", got.Statements, filepath.Base(set.files[export.JSONLD]), set.sums[export.JSONLD].Statements())
		}
	}
}

// TestRDFLibIsomorphic checks that rdflib reads the N-Triples, Turtle and
// JSON-LD exports (same clock, so the same description) as isomorphic
// graphs, and pyld's toRdf of the JSON-LD too; also for the store of odd
// literals.
func TestRDFLibIsomorphic(t *testing.T) {
	c := loadCorpus(t)
	odd, _ := oddStore(t)
	oddFiles := map[export.Format]string{}
	for _, format := range []export.Format{export.NTriples, export.Turtle, export.JSONLD} {
		oddFiles[format], _ = exportFile(t, odd, format, t1)
	}
	// The corpus with the ontology, whose owl:unionOf lists are blank nodes.
	ont := fixtureStore(t)
	ontFiles := map[export.Format]string{}
	for _, format := range []export.Format{export.NTriples, export.Turtle, export.JSONLD} {
		b, _ := exportBytes(t, ont, format, t1, true)
		ontFiles[format] = filepath.Join(t.TempDir(), "ontology."+string(format))
		if err := os.WriteFile(ontFiles[format], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, files := range map[string]map[export.Format]string{"corpus": c.files, "corpus and review groups": c.grouped, "odd literals": oddFiles, "corpus and ontology": ontFiles} {
		var got map[string]any
		rdfcheck(t, &got, []string{"rdflib", "pyld"}, "isomorphic", files[export.NTriples], files[export.Turtle], files[export.JSONLD])
		for _, k := range []string{"nt_ttl", "nt_jsonld", "nt_pyld"} {
			if got[k] != true {
				t.Errorf("%s: rdflib isomorphism %s is %v\n%v", name, k, got[k], got)
			}
		}
	}
}

// TestSPARQLGroups runs SPARQL in rdflib over the N-Triples export to list
// the citations by comparison key under the policy, and checks them
// against query.Groups: a group's members are exactly the citations whose
// key is one of the group's keys, every key belongs to one group, and the
// rejected citations are the same.
func TestSPARQLGroups(t *testing.T) {
	c := loadCorpus(t)
	var got struct {
		ByKey    map[string][]string `json:"by_key"`
		Rejected []string
	}
	rdfcheck(t, &got, []string{"rdflib"}, "groups", c.files[export.NTriples], c.snap.Policy.Digest)
	rep := query.Groups(c.snap, query.GroupOptions{})
	seen := map[string]bool{}
	for _, g := range rep.Groups {
		keys := g.Keys
		if len(keys) == 0 {
			keys = []string{g.Key}
		}
		var fromSPARQL, members []string
		for _, k := range keys {
			fromSPARQL = append(fromSPARQL, got.ByKey[k]...)
			seen[k] = true
		}
		for _, m := range g.Members {
			members = append(members, m.CitationID)
		}
		slices.Sort(fromSPARQL)
		slices.Sort(members)
		if !slices.Equal(fromSPARQL, members) {
			t.Errorf("group %s (keys %q): SPARQL finds %v, Groups %v", g.ID, keys, fromSPARQL, members)
		}
	}
	for k, ids := range got.ByKey {
		if !seen[k] {
			t.Errorf("SPARQL finds key %q (%v) in no group", k, ids)
		}
	}
	var rejected []string
	for _, r := range rep.Rejected {
		rejected = append(rejected, r.CitationID)
	}
	slices.Sort(rejected)
	if !slices.Equal(got.Rejected, rejected) {
		t.Errorf("rejected: SPARQL %v, Groups %v", got.Rejected, rejected)
	}
	if len(rep.Groups) < 10 || len(got.ByKey) < 10 {
		t.Errorf("only %d groups, %d keys: is the corpus loaded?", len(rep.Groups), len(got.ByKey))
	}
}

// TestSPARQLLineage runs SPARQL in rdflib over the N-Triples export to read
// every citation's retrievals (hops in order, canonical declarations) and
// relations (archive, format, mirror, syndication), and checks them
// against what provgraph's query snapshot reads from the database.
func TestSPARQLLineage(t *testing.T) {
	c := loadCorpus(t)
	type hop struct {
		Index            int
		From, To, Status string
	}
	type canonical struct{ URL, Source string }
	type relation struct {
		Type, Target, Evidence, Format string
		CapturedAt                     string `json:"captured_at"`
	}
	type lineage struct {
		Retrievals map[string]struct {
			Hops      []hop
			Canonical []canonical
		}
		Relations []relation
	}
	var got map[string]lineage
	rdfcheck(t, &got, []string{"rdflib"}, "lineage", c.files[export.NTriples])
	hops, canon, archives := 0, 0, 0
	for _, cit := range c.snap.Citations {
		l := got[cit.ID]
		if len(l.Retrievals) != len(cit.Retrievals) {
			t.Errorf("%s: SPARQL finds %d retrievals, provgraph %d", cit.ID, len(l.Retrievals), len(cit.Retrievals))
		}
		for _, r := range cit.Retrievals {
			sr := l.Retrievals[r.Node]
			var want []hop
			for _, h := range r.Hops {
				want = append(want, hop{h.Index, h.From, h.To, string(h.Status)})
			}
			if !slices.Equal(sr.Hops, want) {
				t.Errorf("%s: hops by SPARQL %+v, provgraph %+v", cit.ID, sr.Hops, want)
			}
			var wantC []canonical
			for _, cd := range r.Canonicals {
				wantC = append(wantC, canonical{cd.URL, cd.Source})
			}
			slices.SortFunc(wantC, func(a, b canonical) int { return strings.Compare(a.Source+" "+a.URL, b.Source+" "+b.URL) })
			if !slices.Equal(sr.Canonical, wantC) {
				t.Errorf("%s: canonical declarations by SPARQL %+v, provgraph %+v", cit.ID, sr.Canonical, wantC)
			}
			hops += len(want)
			canon += len(wantC)
		}
		var want []relation
		for _, r := range cit.Relations {
			want = append(want, relation{r.Type, r.Target, r.Evidence, r.Format, r.CapturedAt})
			if r.Type == "archive_of" {
				archives++
			}
		}
		if !slices.Equal(l.Relations, want) {
			t.Errorf("%s: relations by SPARQL %+v, provgraph %+v", cit.ID, l.Relations, want)
		}
	}
	if hops == 0 || canon == 0 || archives == 0 {
		t.Errorf("compared %d hops, %d canonical declarations, %d archive relations: the corpus should have each", hops, canon, archives)
	}

	// The lineage command's own reading, for citations with redirects,
	// canonical declarations and archive and format relations.
	st, err := graph.Open(c.db, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"moved-old", "xhost", "paywall-0", "canon", "archived", "article-amp", "syndicated", "gem-5-3"} {
		lin, err := query.LineageOf(context.Background(), citestore.New(st), id, nil)
		if err != nil {
			t.Fatalf("LineageOf(%q): %v", id, err)
		}
		l := got[id]
		if len(l.Retrievals) != len(lin.Retrievals) {
			t.Errorf("%s: SPARQL finds %d retrievals, lineage %d", id, len(l.Retrievals), len(lin.Retrievals))
		}
		for _, r := range lin.Retrievals {
			var want []hop
			for _, h := range r.Hops {
				want = append(want, hop{h.Index, h.From, h.To, string(h.Status)})
			}
			if sr := l.Retrievals[r.Node]; !slices.Equal(sr.Hops, want) {
				t.Errorf("%s: hops by SPARQL %+v, lineage %+v", id, sr.Hops, want)
			}
			var wantC []canonical
			for _, cd := range r.Canonicals {
				wantC = append(wantC, canonical{cd.URL, cd.Source})
			}
			slices.SortFunc(wantC, func(a, b canonical) int { return strings.Compare(a.Source+" "+a.URL, b.Source+" "+b.URL) })
			if sr := l.Retrievals[r.Node]; !slices.Equal(sr.Canonical, wantC) {
				t.Errorf("%s: canonical declarations by SPARQL %+v, lineage %+v", id, sr.Canonical, wantC)
			}
		}
		var want []relation
		for _, r := range lin.Relations {
			want = append(want, relation{r.Type, r.Target, r.Evidence, r.Format, r.CapturedAt})
		}
		slices.SortFunc(want, func(a, b relation) int {
			return strings.Compare(a.Type+"\x00"+a.Target+"\x00"+a.Evidence, b.Type+"\x00"+b.Target+"\x00"+b.Evidence)
		})
		if !slices.Equal(l.Relations, want) {
			t.Errorf("%s: relations by SPARQL %+v, lineage %+v", id, l.Relations, want)
		}
	}
}

// TestInputValuesVerbatim checks that every value of the input (raw URL,
// citation id, hop URLs, final and canonical URLs, relation targets,
// content hashes) is the lexical form of some literal rdflib reads from the
// export.
func TestInputValuesVerbatim(t *testing.T) {
	c := loadCorpus(t)
	var literals []string
	rdfcheck(t, &literals, []string{"rdflib"}, "literals", c.files[export.NTriples])
	have := map[string]bool{}
	for _, l := range literals {
		have[l] = true
	}
	n := 0
	check := func(file string, line int, field, v string) {
		if v == "" {
			return
		}
		n++
		if !have[v] {
			t.Errorf("%s:%d: %s %q is not a literal of the export", file, line, field, v)
		}
	}
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			rec, err := ingest.ParseRecord(line, f, i+1)
			if err != nil {
				t.Fatal(err)
			}
			check(f, i+1, "citation_id", rec.ID())
			check(f, i+1, "raw_url", *rec.RawURL)
			check(f, i+1, "base_url", rec.BaseURL)
			if r := rec.Retrieval; r != nil {
				for _, h := range r.Hops {
					check(f, i+1, "hop from", h.From)
					check(f, i+1, "hop to", h.To)
				}
				check(f, i+1, "final_url", r.FinalURL)
				check(f, i+1, "content_hash", r.ContentHash)
				for _, cd := range r.Canonical {
					check(f, i+1, "canonical url", cd.URL)
				}
			}
			for _, rel := range rec.Relations {
				check(f, i+1, "relation target", rel.Target)
			}
		}
	}
	if n < 100 {
		t.Errorf("checked only %d values", n)
	}
}

// TestProvPackage reads the PROV part of the N-Triples export (every
// statement about a node with a PROV class that is a PROV statement, a
// type, a literal or a link to another such node) with the prov package
// (PROV-O RDF in) and writes it as PROV-JSON. The package does not reason:
// it finds a record only through an explicit PROV base class
// (TestEveryNodeHasPROVBaseClass).
func TestProvPackage(t *testing.T) {
	c := loadCorpus(t)
	var got struct {
		Statements int
		ProvPart   int `json:"prov_part"`
		ProvNodes  int `json:"prov_nodes"`
		BaseNodes  int `json:"base_nodes"`
		Records    int
		ProvJSON   map[string]int
	}
	rdfcheck(t, &got, []string{"rdflib", "prov.model"}, "prov", c.files[export.NTriples])
	if got.Records == 0 || got.ProvJSON["entity"] == 0 || got.ProvJSON["activity"] == 0 || got.ProvJSON["agent"] == 0 {
		t.Errorf("prov read %+v", got)
	}
	var records int
	for _, n := range got.ProvJSON {
		records += n
	}
	if records != got.Records {
		t.Errorf("PROV-JSON has %d records, the document %d", records, got.Records)
	}
	// Every node typed prov:Entity, prov:Activity or prov:Agent is one
	// record of that kind; the others (associations, source relations) are
	// qualified relations.
	if n := got.ProvJSON["entity"] + got.ProvJSON["activity"] + got.ProvJSON["agent"]; n != got.BaseNodes {
		t.Errorf("%d nodes have a PROV base class, but prov made %d entity, activity and agent records: %+v", got.BaseNodes, n, got)
	}
	t.Logf("prov read %+v", got)

	// Without the explicit base classes the prov package fails: the check
	// can fail.
	b, err := os.ReadFile(c.files[export.NTriples])
	if err != nil {
		t.Fatal(err)
	}
	var stripped []string
	for _, l := range lines(b) {
		if !strings.HasSuffix(l, "<http://www.w3.org/ns/prov#Entity> .") && !strings.HasSuffix(l, "<http://www.w3.org/ns/prov#Agent> .") {
			stripped = append(stripped, l)
		}
	}
	path := filepath.Join(t.TempDir(), "stripped.nt")
	if err := os.WriteFile(path, []byte(strings.Join(stripped, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(python(t, "rdflib", "prov.model"), "testdata/rdfcheck.py", "prov", path).Run(); err == nil {
		t.Error("the prov package read a graph without prov:Entity and prov:Agent types: the check proves nothing")
	}
}

// TestProvPackageReadsFile reads each export file whole, as a researcher
// would (ProvDocument.deserialize(source=FILE, format="rdf")), in every
// format whose RDF has no named graphs (N-Triples, Turtle, JSON-LD): every
// node with a PROV base class must become a record (issue 18.1: the
// description's nodes used to have none, and prov failed with a KeyError).
// prov 2.0 turns a named graph into a bundle whose IRI must compact to a
// prefix it knows, which N-Quads cannot declare, so it reads no N-Quads
// file with named graphs: that file is not checked here.
func TestProvPackageReadsFile(t *testing.T) {
	c := loadCorpus(t)
	for _, format := range []export.Format{export.NTriples, export.Turtle, export.JSONLD} {
		for _, in := range []struct {
			path string
			n    int64
		}{{c.files[format], c.sums[format].Statements()}, {c.grouped[format], c.groupedSums[format].Statements()}} {
			var got struct {
				Statements int64
				BaseNodes  int `json:"base_nodes"`
				Missing    []string
				Records    int
				ProvJSON   map[string]int
			}
			rdfcheck(t, &got, []string{"rdflib", "prov.model"}, "prov-file", string(format), in.path)
			if got.Statements != in.n {
				t.Errorf("%s: rdflib read %d statements, provgraph wrote %d", filepath.Base(in.path), got.Statements, in.n)
			}
			if len(got.Missing) > 0 {
				t.Errorf("%s: prov made no record of %d nodes with a PROV base class, e.g. %v", filepath.Base(in.path), len(got.Missing), got.Missing)
			}
			if got.BaseNodes < 100 || got.ProvJSON["entity"] == 0 || got.ProvJSON["activity"] == 0 || got.ProvJSON["agent"] == 0 {
				t.Errorf("%s: prov read %+v", filepath.Base(in.path), got)
			}
		}
	}
}

// TestOxigraph loads the N-Quads export into Oxigraph (npm package
// oxigraph, which validates every IRI) and runs SPARQL checks: no literal
// is ill-typed for xsd:dateTime, xsd:integer or xsd:boolean, no datatype
// IRI is a prefixed name, and every datatype is one provgraph writes. A
// deliberately broken file checks that the checks can fail.
func TestOxigraph(t *testing.T) {
	need(t, "node", "nodejs")
	if _, err := os.Stat("testdata/js/node_modules/oxigraph/package.json"); err != nil {
		testenv.MissingTool(t, "npm package oxigraph is not installed: run npm ci --prefix internal/export/testdata/js (.ci/run does): skipping this check")
	}
	c := loadCorpus(t)
	type result struct {
		Quads             int64
		IllTypedDateTime  []map[string]string
		IllTypedInteger   []map[string]string
		IllTypedBoolean   []map[string]string
		Datatypes         []struct{ Dt, N string }
		PrefixedDatatypes []map[string]string
		Graphs            []struct{ G, N string }
	}
	oxigraph := func(path string) result {
		var stderr bytes.Buffer
		cmd := exec.Command("node", "testdata/js/oxcheck.mjs", path)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("oxcheck.mjs %s: %v\n%s", path, err, stderr.Bytes())
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("oxcheck.mjs: %v\n%s", err, out)
		}
		return r
	}

	r := oxigraph(c.files[export.NQuads])
	sum := c.sums[export.NQuads]
	if r.Quads != sum.Statements() {
		t.Errorf("Oxigraph loaded %d quads, provgraph wrote %d", r.Quads, sum.Statements())
	}
	for name, bad := range map[string][]map[string]string{"xsd:dateTime": r.IllTypedDateTime, "xsd:integer": r.IllTypedInteger, "xsd:boolean": r.IllTypedBoolean, "prefixed datatype": r.PrefixedDatatypes} {
		for _, b := range bad {
			t.Errorf("ill-typed %s: %v", name, b)
		}
	}
	allowed := map[string]bool{graph.XSDString: true, graph.XSDInteger: true, graph.XSDDateTime: true, graph.XSDBoolean: true}
	for _, d := range r.Datatypes {
		if !allowed[d.Dt] {
			t.Errorf("unexpected datatype %s (%s literals)", d.Dt, d.N)
		}
	}
	if len(r.Graphs) != 1 || r.Graphs[0].G != sum.DescriptionGraph.Value || r.Graphs[0].N != strconv.FormatInt(sum.Description, 10) {
		t.Errorf("named graphs %+v, want only the description's %d quads", r.Graphs, sum.Description)
	}

	// A file the checks must fail on.
	broken := filepath.Join(t.TempDir(), "broken.nq")
	if err := os.WriteFile(broken, []byte(`<http://a/s> <http://a/p> "2025-13-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<http://a/s> <http://a/p> "2025-01-01T00:00:00"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<http://a/s> <http://a/p> "1.0"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://a/s> <http://a/p> "1"^^<xsd:integer> .
<http://a/s> <http://a/p> "yes"^^<http://www.w3.org/2001/XMLSchema#boolean> .
`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := oxigraph(broken)
	if len(b.IllTypedDateTime) != 2 || len(b.IllTypedInteger) != 1 || len(b.IllTypedBoolean) != 1 || len(b.PrefixedDatatypes) != 1 {
		t.Errorf("the checks miss errors in a broken file: %+v", b)
	}
}

// TestOxigraphGroups loads the N-Quads export with the review groups into
// Oxigraph and checks, by SPARQL, that its groups are those provgraph
// groups lists with the same options (ids, verdicts, members by citation id
// read from the data, keys derived from), that every link of the groups
// graph leads to a node of the export, that no literal is ill-typed, and
// that the groups are in a named graph of their own (issue 18.2).
func TestOxigraphGroups(t *testing.T) {
	need(t, "node", "nodejs")
	if _, err := os.Stat("testdata/js/node_modules/oxigraph/package.json"); err != nil {
		testenv.MissingTool(t, "npm package oxigraph is not installed: run npm ci --prefix internal/export/testdata/js (.ci/run does): skipping this check")
	}
	c := loadCorpus(t)
	sum := c.groupedSums[export.NQuads]
	var stderr bytes.Buffer
	cmd := exec.Command("node", "testdata/js/oxcheck.mjs", c.grouped[export.NQuads])
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oxcheck.mjs: %v\n%s", err, stderr.Bytes())
	}
	var r struct {
		Quads                                              int64
		IllTypedDateTime, IllTypedInteger, IllTypedBoolean []map[string]string
		ReviewGroups                                       []struct{ ID, Verdict, Members, Citations string }
		GroupKeys                                          []struct{ ID, Key string }
		DanglingGroupLinks                                 []map[string]string
		Graphs                                             []struct{ G, N string }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("oxcheck.mjs: %v\n%s", err, out)
	}
	if r.Quads != sum.Statements() {
		t.Errorf("Oxigraph loaded %d quads, provgraph wrote %d", r.Quads, sum.Statements())
	}
	for _, bad := range [][]map[string]string{r.IllTypedDateTime, r.IllTypedInteger, r.IllTypedBoolean, r.DanglingGroupLinks} {
		for _, b := range bad {
			t.Errorf("ill-typed literal or dangling link: %v", b)
		}
	}
	wantGraphs := []struct{ G, N string }{
		{sum.DescriptionGraph.Value, strconv.FormatInt(sum.Description, 10)},
		{sum.GroupsGraph.Value, strconv.FormatInt(sum.Groups, 10)},
	}
	if !slices.Equal(r.Graphs, wantGraphs) {
		t.Errorf("named graphs %+v, want %+v", r.Graphs, wantGraphs)
	}

	st, err := graph.Open(c.db, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	set, err := query.LoadGroups(context.Background(), citestore.New(st), corpusGroups.Policy, query.GroupOptions{MinSize: corpusGroups.MinSize})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := set.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// SPARQL lists the groups by id, groups by key.
	slices.SortFunc(rep.Groups, func(a, b *query.Group) int { return strings.Compare(a.ID, b.ID) })
	keys := map[string][]string{}
	for _, k := range r.GroupKeys {
		keys[k.ID] = append(keys[k.ID], k.Key)
	}
	if len(r.ReviewGroups) != len(rep.Groups) || int64(len(rep.Groups)) != sum.ReviewGroups {
		t.Errorf("SPARQL finds %d groups, provgraph groups lists %d, Summary.ReviewGroups = %d", len(r.ReviewGroups), len(rep.Groups), sum.ReviewGroups)
	}
	for i, g := range rep.Groups {
		if i >= len(r.ReviewGroups) {
			break
		}
		got := r.ReviewGroups[i]
		var ids, wantKeys []string
		for _, m := range g.Members {
			ids = append(ids, m.CitationID)
			wantKeys = append(wantKeys, m.Key)
		}
		slices.Sort(ids)
		slices.Sort(wantKeys)
		wantKeys = slices.Compact(wantKeys)
		gotIDs := strings.Split(got.Citations, "\t")
		slices.Sort(gotIDs)
		if got.ID != g.ID || got.Verdict != g.Verdict || got.Members != strconv.Itoa(len(g.Members)) || !slices.Equal(gotIDs, ids) {
			t.Errorf("group %d: SPARQL finds %s %s with %s members %q; provgraph groups %s %s with %d members %q", i, got.ID, got.Verdict, got.Members, gotIDs, g.ID, g.Verdict, len(g.Members), ids)
		}
		if !slices.Equal(keys[g.ID], wantKeys) {
			t.Errorf("group %s is derived from the keys %q, its members have %q", g.ID, keys[g.ID], wantKeys)
		}
	}
	if len(rep.Groups) < 5 {
		t.Errorf("only %d groups: is the corpus loaded?", len(rep.Groups))
	}
}

// TestPredicatesDocumented checks that ontology/MODEL.md names every
// predicate of the data and the review groups in an export of the corpus,
// which holds ingest runs, a resolve run and a renormalization (issue 18.3:
// pg:engineName and pg:answerId were missing, and a reader had to read the
// N-Quads to write a SPARQL filter by engine). The description's own terms
// (DCAT, DCMI, VoID, SKOS) are documented in README.md.
func TestPredicatesDocumented(t *testing.T) {
	c := loadCorpus(t)
	model, err := os.ReadFile("../../ontology/MODEL.md")
	if err != nil {
		t.Fatal(err)
	}
	prefixes := map[string]string{"pg": vocab.NS, "prov": vocab.ProvNS, "rdf": vocab.RDFNS, "rdfs": vocab.RDFSNS}
	documented := map[string]bool{vocab.RDFType: true} // "a" in the edge listings
	for _, m := range regexp.MustCompile(`\b(pg|prov|rdf|rdfs):([A-Za-z][A-Za-z0-9]*)\b`).FindAllSubmatch(model, -1) {
		documented[prefixes[string(m[1])]+string(m[2])] = true
	}
	b, err := os.ReadFile(c.grouped[export.NQuads])
	if err != nil {
		t.Fatal(err)
	}
	desc := " <" + c.groupedSums[export.NQuads].DescriptionGraph.Value + "> ."
	seen := map[string]int{}
	for _, l := range lines(b) {
		if strings.HasSuffix(l, desc) {
			continue
		}
		_, rest, _ := strings.Cut(l, " ")
		p, _, _ := strings.Cut(rest, " ")
		seen[strings.Trim(p, "<>")]++
	}
	for _, p := range []string{vocab.EngineName, vocab.AnswerId, vocab.MaxRedirects, vocab.Location, vocab.GroupId, vocab.Reasons} {
		if seen[p] == 0 {
			t.Errorf("the corpus export has no %s: it does not cover what the test is for", p)
		}
	}
	for p, n := range seen {
		if !documented[p] {
			t.Errorf("%s (%d statements) is not in ontology/MODEL.md", p, n)
		}
	}
}
