package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/export"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestRoundTrip exports the fixtures, ingests the export into an empty
// database (as ingest --format does), exports again and compares: the second
// export holds every statement of the first, the first one's description
// included, and nothing else but the record of the import run and its own
// description.
func TestRoundTrip(t *testing.T) {
	src := fixtureStore(t)
	first, firstSum := exportBytes(t, src, export.NTriples, t1, false)
	firstNQ, _ := exportBytes(t, src, export.NQuads, t1, false)
	for _, format := range []export.Format{export.NQuads, export.NTriples, export.Turtle} {
		t.Run(string(format), func(t *testing.T) {
			path, sum := exportFile(t, src, format, t1)
			if sum.Statements() != firstSum.Statements() || sum.Dataset != firstSum.Dataset {
				t.Fatalf("%s export: %+v, N-Triples export: %+v", format, sum, firstSum)
			}
			dst := newStore(t)
			in, err := ingest.RDFFile(context.Background(), dst, path, filepath.Base(path), string(format), ingest.Options{})
			if err != nil {
				t.Fatalf("ingest --format %s: %v", format, err)
			}
			if int64(in.Records) != sum.Statements() {
				t.Errorf("ingest read %d statements, export wrote %d", in.Records, sum.Statements())
			}
			second, sum2 := exportBytes(t, dst, export.NTriples, t2, false)
			got := lines(second)
			if lost := minus(lines(first), got); len(lost) > 0 {
				t.Errorf("%d statements of the first export are missing from the second, e.g.\n%s", len(lost), lost[0])
			}
			for _, l := range minus(got, lines(first)) {
				if !describes(l, sum2.Dataset.Value) && !strings.HasPrefix(l, "<"+in.Run.Value+">") {
					t.Errorf("the second export adds %s", l)
				}
			}
			if format != export.NQuads {
				return
			}
			// N-Quads keeps graphs: the first description stays in its graph.
			secondNQ, _ := exportBytes(t, dst, export.NQuads, t2, false)
			if lost := minus(lines(firstNQ), lines(secondNQ)); len(lost) > 0 {
				t.Errorf("%d quads of the first N-Quads export are missing from the second, e.g.\n%s", len(lost), lost[0])
			}
		})
	}
}

// TestDeterministic checks that the same database gives the same bytes with
// the same clock, and differs only in the description with another clock.
func TestDeterministic(t *testing.T) {
	st := fixtureStore(t)
	for _, format := range export.Formats {
		a, _ := exportBytes(t, st, format, t1, false)
		b, _ := exportBytes(t, st, format, t1, false)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two exports with the same clock differ", format)
		}
	}
	a, sa := exportBytes(t, st, export.NQuads, t1, false)
	b, sb := exportBytes(t, st, export.NQuads, t2, false)
	for _, l := range minus(lines(a), lines(b)) {
		if !describes(l, sa.Dataset.Value) {
			t.Errorf("only in the first export: %s", l)
		}
	}
	for _, l := range minus(lines(b), lines(a)) {
		if !describes(l, sb.Dataset.Value) {
			t.Errorf("only in the second export: %s", l)
		}
	}
}

// TestDescription checks that the description is complete and can be told
// apart: every statement has a subject under the dataset node and, in
// N-Quads, its own graph.
func TestDescription(t *testing.T) {
	st := fixtureStore(t)
	out, sum := exportBytes(t, st, export.NQuads, t1, false)
	ds := sum.Dataset.Value
	if !strings.HasPrefix(ds, model.IDBase+"export/") || sum.DescriptionGraph.Value != ds+"/description" {
		t.Fatalf("dataset %s, graph %s", ds, sum.DescriptionGraph.Value)
	}
	var desc []string
	for _, l := range lines(out) {
		inGraph := strings.HasSuffix(l, " <"+sum.DescriptionGraph.Value+"> .")
		if describes(l, ds) != inGraph {
			t.Errorf("subject and graph disagree on whether this is description: %s", l)
		}
		if inGraph {
			desc = append(desc, l)
		}
	}
	if int64(len(desc)) != sum.Description {
		t.Errorf("%d description lines, Summary.Description = %d", len(desc), sum.Description)
	}
	text := strings.Join(desc, "\n")
	pol := normalize.Default()
	want := []string{
		"<http://www.w3.org/ns/dcat#Dataset>",
		"<http://rdfs.org/ns/void#Dataset>",
		"<http://www.w3.org/ns/prov#wasGeneratedBy> <" + ds + "/activity>",
		`<http://rdfs.org/ns/void#triples> "` + strconv.FormatInt(sum.Data, 10) + `"^^<http://www.w3.org/2001/XMLSchema#integer>`,
		`<http://purl.org/dc/terms/issued> "` + t1 + `"^^<http://www.w3.org/2001/XMLSchema#dateTime>`,
		`<http://www.w3.org/ns/prov#endedAtTime> "` + t1 + `"^^<http://www.w3.org/2001/XMLSchema#dateTime>`,
		`<http://www.w3.org/2002/07/owl#versionInfo> "test"`,
		`<http://purl.org/dc/terms/title> "` + pol.Name() + `"`,
		`<http://www.w3.org/2002/07/owl#versionInfo> "` + pol.Version() + `"`,
		`<http://purl.org/dc/terms/identifier> "` + pol.Digest() + `"`,
		`<http://purl.org/dc/terms/title> "` + normalize.ParserName + `"`,
		`<http://www.w3.org/2002/07/owl#versionInfo> "` + normalize.ParserVersion + `"`,
		`<` + ds + `/convention/timestamps> <http://www.w3.org/1999/02/22-rdf-syntax-ns#value> <http://www.w3.org/2001/XMLSchema#dateTime>`,
		`<` + ds + `/convention/url-literals> <http://www.w3.org/1999/02/22-rdf-syntax-ns#value> <http://www.w3.org/2001/XMLSchema#string>`,
		`<http://www.w3.org/ns/prov#used> <` + model.IDBase + `policy/`,
	}
	for _, p := range pol.TrackingParams() {
		want = append(want, `<http://www.w3.org/2004/02/skos/core#notation> "`+p.Name+`"`)
		want = append(want, `<http://www.w3.org/2004/02/skos/core#definition> "`+p.Reason+`"`)
	}
	for _, v := range []string{model.VerdictIdentityConfirmed, model.VerdictNormalizedCompare, model.VerdictNeedsContentCheck, model.VerdictConflict} {
		want = append(want, `<http://www.w3.org/2004/02/skos/core#notation> "`+v+`"`)
	}
	for _, r := range model.GroupRelationKinds {
		want = append(want, `<http://www.w3.org/2004/02/skos/core#notation> "`+r.Name+`"`)
		want = append(want, `<http://www.w3.org/2004/02/skos/core#definition> "`+r.Description+`"`)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the description lacks %s", w)
		}
	}
	if n, want := strings.Count(text, "skos/core#notation"), len(pol.TrackingParams())+4+len(model.GroupRelationKinds); n != want {
		t.Errorf("%d skos:notation statements, want %d: %d tracking parameters, 4 verdicts and %d group relation kinds", n, want, len(pol.TrackingParams()), len(model.GroupRelationKinds))
	}
}

// TestEveryNodeHasPROVBaseClass checks MODEL.md rule 5 on the export: the
// prov package (TestProvPackage, TestProvPackageReadsFile) does not
// reason, so every subject must carry prov:Entity, prov:Activity,
// prov:Agent or a PROV influence class itself, the description's SKOS
// concepts and DCMI standards included: prov's reader fails on a typed
// node it cannot make a record of (issue 18.1).
func TestEveryNodeHasPROVBaseClass(t *testing.T) {
	st := fixtureStore(t)
	out, sum := exportBytes(t, st, export.NTriples, t1, false)
	base := map[string]bool{vocab.ProvEntity: true, vocab.ProvActivity: true, vocab.ProvAgent: true, vocab.ProvInfluence: true}
	subjects, typed := map[string]bool{}, map[string]bool{}
	for _, l := range lines(out) {
		s, rest, _ := strings.Cut(l, " ")
		subjects[s] = true
		if strings.HasPrefix(rest, "<"+vocab.RDFType+"> <") {
			class := strings.TrimSuffix(strings.TrimPrefix(rest, "<"+vocab.RDFType+"> <"), "> .")
			if base[class] {
				typed[s] = true
			}
		}
	}
	for s := range subjects {
		if !typed[s] {
			t.Errorf("%s has no PROV base class", s)
		}
	}
	for _, s := range []string{"<" + sum.Dataset.Value + ">", "<" + sum.Dataset.Value + "/activity>", "<" + sum.Dataset.Value + "/software>", "<" + sum.Dataset.Value + "/codebook>"} {
		if !typed[s] {
			t.Errorf("%s has no PROV base class", s)
		}
	}
}

// oddStore holds literals and IRIs that need every escape.
func oddStore(tb testing.TB) (*graph.Store, []graph.Quad) {
	st := newStore(tb)
	s := graph.IRI("https://w3id.org/provgraph/id/test/odd")
	p := func(n int) graph.Term { return graph.IRI("https://example.org/p" + strconv.Itoa(n)) }
	objs := []graph.Term{
		graph.String(`quote " backslash \ newline` + "\n" + `cr` + "\r" + `tab` + "\t" + `end`),
		graph.String("controls \x00\x01\x07\x08\x0b\x0c\x0e\x1f\x7f"),
		graph.String("é 中文 😀 \u2028\u2029\ufeff \U0010FFFD"),
		graph.String(""),
		graph.String(`\u0041 is not an escape here, nor "\n"`),
		graph.String("https://example.org/a b?q=<x>&y={z}|^`#frag#frag"),
		graph.Literal("007", graph.XSDInteger),
		graph.Literal("+1", graph.XSDInteger),
		graph.Literal("2025-01-01T01:00:00+01:00", graph.XSDDateTime),
		graph.Literal("2025-01-01T00:00:00Z", graph.XSDDateTime),
		graph.Literal("true", graph.XSDBoolean),
		graph.Literal("x", "urn:example:datatype"),
		graph.LangString("colour", "en-GB"),
		graph.IRI("https://example.org/é/中"),
		graph.IRI("urn:isbn:0451450523"),
		graph.Blank("b1"),
	}
	var quads []graph.Quad
	for i, o := range objs {
		quads = append(quads, graph.Quad{S: s, P: p(i), O: o})
	}
	quads = append(quads,
		graph.Quad{S: graph.Blank("b1"), P: p(100), O: graph.String("a blank subject")},
		graph.Quad{S: s, P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.ProvEntity)},
		graph.Quad{S: s, P: graph.IRI(vocab.RDFType), O: graph.Blank("class")},
		graph.Quad{S: s, P: p(0), O: graph.String("second value, not next to the first")},
	)
	if _, err := st.Add(quads); err != nil {
		tb.Fatal(err)
	}
	return st, quads
}

// unskolem turns a skolem IRI of ingest back into a blank node with its
// label.
func unskolem(t graph.Term) graph.Term {
	rest, ok := strings.CutPrefix(t.Value, ingest.GenIDBase)
	if t.Kind != graph.KindIRI || !ok {
		return t
	}
	_, label, _ := strings.Cut(rest, "/")
	label, err := url.PathUnescape(label)
	if err != nil {
		return t
	}
	return graph.Blank(label)
}

// TestLiteralsRoundTrip checks that every literal comes back exactly, with
// its datatype, through N-Triples, N-Quads and Turtle (read by
// knakk/rdf through ingest) and JSON-LD (read as JSON). Ingest scopes blank
// nodes to their input as skolem IRIs ending in the label; they are read
// back as blank nodes here.
func TestLiteralsRoundTrip(t *testing.T) {
	st, quads := oddStore(t)
	want := map[string]bool{}
	for _, q := range quads {
		want[q.String()] = true
	}
	for _, format := range []export.Format{export.NTriples, export.NQuads, export.Turtle} {
		path, sum := exportFile(t, st, format, t1)
		dst := newStore(t)
		if _, err := ingest.RDFFile(context.Background(), dst, path, "x", string(format), ingest.Options{}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		got := map[string]bool{}
		err := dst.Match(context.Background(), graph.Quad{}, func(q graph.Quad) error {
			if q.S.Kind == graph.KindIRI && (strings.HasPrefix(q.S.Value, sum.Dataset.Value) || strings.HasPrefix(q.S.Value, model.IDBase+"ingest/")) {
				return nil
			}
			q.G = graph.Term{}
			q.S, q.O = unskolem(q.S), unskolem(q.O)
			got[q.String()] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for w := range want {
			if !got[w] {
				t.Errorf("%s: lost %s", format, w)
			}
		}
		for g := range got {
			if !want[g] {
				t.Errorf("%s: gained %s", format, g)
			}
		}
	}

	// JSON-LD: the value objects, read with encoding/json.
	out, _ := exportBytes(t, st, export.JSONLD, t1, false)
	var doc struct {
		Context map[string]string `json:"@context"`
		Graph   []map[string]any  `json:"@graph"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("JSON-LD is not JSON: %v\n%s", err, out)
	}
	values := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			values[`"`+v+`"`] = true
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			if val, ok := v["@value"].(string); ok {
				key := `"` + val + `"`
				if dt, ok := v["@type"].(string); ok {
					key += "^^" + dt
				}
				if lang, ok := v["@language"].(string); ok {
					key += "@" + lang
				}
				values[key] = true
			}
		}
	}
	for _, node := range doc.Graph {
		for k, v := range node {
			if !strings.HasPrefix(k, "@") {
				walk(v)
			}
		}
	}
	for _, q := range quads {
		if q.O.Kind != graph.KindLiteral {
			continue
		}
		key := `"` + q.O.Value + `"`
		switch {
		case q.O.Lang != "":
			key += "@" + q.O.Lang
		case q.O.Datatype == graph.XSDInteger:
			key += "^^xsd:integer"
		case q.O.Datatype == graph.XSDDateTime:
			key += "^^xsd:dateTime"
		case q.O.Datatype == graph.XSDBoolean:
			key += "^^xsd:boolean"
		case q.O.Datatype != graph.XSDString:
			key += "^^" + q.O.Datatype
		}
		if !values[key] {
			t.Errorf("JSON-LD lacks the value %s", key)
		}
	}
}

// TestRepairedIRIs checks that IRIs the store holds but RFC 3987 forbids
// come out valid and are counted, and that one without a scheme stops the
// export.
func TestRepairedIRIs(t *testing.T) {
	st := newStore(t)
	s := graph.IRI("https://example.org/s")
	if _, err := st.Add([]graph.Quad{
		{S: s, P: graph.IRI("https://example.org/p"), O: graph.IRI("https://example.org/a b")},
		{S: s, P: graph.IRI("https://example.org/p"), O: graph.Literal("x", "https://example.org/dt#a#b")},
	}); err != nil {
		t.Fatal(err)
	}
	out, sum := exportBytes(t, st, export.NTriples, t1, false)
	if sum.RepairedIRIs != 2 || !bytes.Contains(out, []byte("<https://example.org/a%20b>")) || !bytes.Contains(out, []byte(`"x"^^<https://example.org/dt#a%23b>`)) {
		t.Errorf("RepairedIRIs = %d\n%s", sum.RepairedIRIs, out)
	}
	if _, err := st.Add([]graph.Quad{{S: s, P: graph.IRI("https://example.org/p"), O: graph.IRI("no-scheme")}}); err != nil {
		t.Fatal(err)
	}
	var ie *export.IRIError
	if _, err := export.Write(context.Background(), st, &bytes.Buffer{}, nil); !errors.As(err, &ie) {
		t.Errorf("Write with an IRI without a scheme = %v, want an *IRIError", err)
	}
}

var repairTests = []struct {
	in, want string
	changed  bool
	wantErr  bool
}{
	{"https://w3id.org/provgraph/id/citation/0123abcd", "https://w3id.org/provgraph/id/citation/0123abcd", false, false},
	{"https://w3id.org/provgraph/ns#Citation", "https://w3id.org/provgraph/ns#Citation", false, false},
	{"urn:isbn:0451450523", "urn:isbn:0451450523", false, false},
	{"http://[::1]:8080/a", "http://[::1]:8080/a", false, false},
	{"http://example.org/%7Euser", "http://example.org/%7Euser", false, false},
	{"https://example.org/é?ü#ö", "https://example.org/é?ü#ö", false, false},
	{"https://example.org/a b", "https://example.org/a%20b", true, false},
	{"https://example.org/<x>\"{}|^`\\", "https://example.org/%3Cx%3E%22%7B%7D%7C%5E%60%5C", true, false},
	{"https://example.org/%zz%4", "https://example.org/%25zz%254", true, false},
	{"https://example.org/a#b#c", "https://example.org/a#b%23c", true, false},
	{"https://example.org/[x]", "https://example.org/%5Bx%5D", true, false},
	{"https://example.org/\x00\x7f", "https://example.org/%00%7F", true, false},
	{"https://example.org/\ufffe", "https://example.org/%EF%BF%BE", true, false},
	{"https://example.org/?\ue000", "https://example.org/?\ue000", false, false}, // iprivate in a query
	{"https://example.org/\ue000", "https://example.org/%EE%80%80", true, false},
	{"https://example.org/#\ue000", "https://example.org/#%EE%80%80", true, false},
	{"no-scheme", "", false, true},
	{"1http://x", "", false, true},
	{":x", "", false, true},
	{"http://example.org:port/", "", false, true},
}

func TestRepairIRI(t *testing.T) {
	for _, tt := range repairTests {
		got, changed, err := export.RepairIRI(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("RepairIRI(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want || changed != tt.changed {
			t.Errorf("RepairIRI(%q) = %q, %v, %v, want %q, %v", tt.in, got, changed, err, tt.want, tt.changed)
			continue
		}
		// A repaired IRI is a fixed point.
		if again, changed, err := export.RepairIRI(got); again != got || changed || err != nil {
			t.Errorf("RepairIRI(%q) = %q, %v, %v: not a fixed point", got, again, changed, err)
		}
	}
}

func FuzzRepairIRI(f *testing.F) {
	for _, tt := range repairTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, _, err := export.RepairIRI(s)
		if err != nil {
			return
		}
		if again, changed, err := export.RepairIRI(got); err != nil || changed || again != got {
			t.Errorf("RepairIRI(%q) = %q, then %q, %v, %v", s, got, again, changed, err)
		}
		// Nothing IRIREF forbids (N-Triples §2.3, Turtle §6.5) is left.
		if i := strings.IndexFunc(got, func(r rune) bool {
			return r <= 0x20 || r == 0x7f || strings.ContainsRune("<>\"{}|^`\\", r) || r == utf8.RuneError
		}); i >= 0 {
			t.Errorf("RepairIRI(%q) = %q, which holds %q", s, got, got[i:])
		}
	})
}

// TestWriteFileAtomic checks that a failed export leaves the file as it
// was and no temporary file behind.
func TestWriteFileAtomic(t *testing.T) {
	st := fixtureStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.nq")
	if err := os.WriteFile(path, []byte("earlier content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := export.WriteFile(ctx, st, path, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteFile with a cancelled context = %v", err)
	}
	if _, err := export.WriteFile(context.Background(), st, path, &export.Options{Format: "xml"}); !errors.Is(err, export.ErrFormat) {
		t.Errorf("WriteFile with format xml = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "earlier content\n" {
		t.Errorf("a failed export changed the file: %q", b)
	}
	sum, err := export.WriteFile(context.Background(), st, path, &export.Options{Format: export.NQuads})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if n := len(lines(b)); int64(n) != sum.Statements() {
		t.Errorf("file has %d lines, Summary says %d statements", n, sum.Statements())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only out.nq", names)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
}

// TestIncludeOntology checks that the ontology is added, in its own graph,
// and counted.
func TestIncludeOntology(t *testing.T) {
	st := newStore(t)
	out, sum := exportBytes(t, st, export.NQuads, t1, true)
	if sum.Data != 0 || sum.Ontology < 300 {
		t.Fatalf("%+v", sum)
	}
	n := 0
	for _, l := range lines(out) {
		if strings.HasSuffix(l, " <"+export.OntologyIRI+"> .") {
			n++
		}
	}
	if int64(n) != sum.Ontology {
		t.Errorf("%d statements in the ontology graph, Summary.Ontology = %d", n, sum.Ontology)
	}
	if !bytes.Contains(out, []byte(`<`+vocab.Citation+`> <`+vocab.RDFSNS+`subClassOf> <`+vocab.ProvEntity+`> <`+export.OntologyIRI+`> .`)) {
		t.Error("the ontology lacks pg:Citation rdfs:subClassOf prov:Entity")
	}
}

// TestJSONLDContextNull checks that a node holding an IRI whose scheme is a
// context prefix is written without the context.
func TestJSONLDContextNull(t *testing.T) {
	st := newStore(t)
	if _, err := st.Add([]graph.Quad{
		{S: graph.IRI("pg:not-a-compact-iri"), P: graph.IRI("https://example.org/p"), O: graph.String("x")},
		{S: graph.IRI("https://example.org/s"), P: graph.IRI(vocab.Text), O: graph.String("y")},
	}); err != nil {
		t.Fatal(err)
	}
	out, _ := exportBytes(t, st, export.JSONLD, t1, false)
	for _, want := range []string{
		`{"@context": null, "@id": "pg:not-a-compact-iri", "https://example.org/p": "x"}`,
		`{"@id": "https://example.org/s", "pg:text": "y"}`,
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("JSON-LD lacks %s\n%s", want, out)
		}
	}
}

// TestSameAsAppendNQuad checks that the N-Quads writer gives exactly
// graph.AppendNQuad's canonical lines, for the corpus and for the odd
// literals.
func TestSameAsAppendNQuad(t *testing.T) {
	odd, _ := oddStore(t)
	for _, st := range []*graph.Store{fixtureStore(t), odd} {
		out, _ := exportBytes(t, st, export.NQuads, t1, false)
		var want []byte
		err := st.Match(context.Background(), graph.Quad{}, func(q graph.Quad) error {
			want = graph.AppendNQuad(want, q)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(out, want) {
			got := lines(out)
			for i, w := range lines(want) {
				if i >= len(got) || got[i] != w {
					t.Errorf("line %d: export writes\n%s\ngraph.AppendNQuad\n%s", i+1, got[i], w)
					break
				}
			}
		}
	}
}

// TestWriteFileSpecial checks that WriteFile writes a device or a named
// pipe directly, as `export -o /dev/null` needs (issue 18.15), and refuses
// a directory.
func TestWriteFileSpecial(t *testing.T) {
	st := fixtureStore(t)
	want, _ := exportBytes(t, st, export.NQuads, t1, false)
	opts := &export.Options{Format: export.NQuads, Now: clock(t, t1), Version: "test"}
	sum, err := export.WriteFile(context.Background(), st, os.DevNull, opts)
	if err != nil {
		t.Fatalf("WriteFile(%s): %v", os.DevNull, err)
	}
	if int64(len(lines(want))) != sum.Statements() {
		t.Errorf("WriteFile(%s) reports %d statements, want %d", os.DevNull, sum.Statements(), len(lines(want)))
	}

	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, err := os.ReadFile(fifo) // opens when the writer does
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	if _, err := export.WriteFile(context.Background(), st, fifo, opts); err != nil {
		t.Fatalf("WriteFile(fifo): %v", err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("the reader of the pipe got %d bytes, Write makes %d", len(b), len(want))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want only the pipe", len(entries))
	}
	if _, err := export.WriteFile(context.Background(), st, dir, opts); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("WriteFile(a directory) = %v", err)
	}
}

// TestGroups checks the review groups an export includes (issue 18.2):
// written after the data, which is the same as without them, every
// statement under the dataset node and in N-Quads in Summary.GroupsGraph,
// one pg:ReviewGroup per group query.Groups lists, every node with a PROV
// base class, the same bytes for the same clock; and a policy the database
// does not hold fails before anything is written.
func TestGroups(t *testing.T) {
	st := fixtureStore(t)
	write := func(g *export.GroupOptions) ([]byte, export.Summary, error) {
		var buf bytes.Buffer
		sum, err := export.Write(context.Background(), st, &buf, &export.Options{Format: export.NQuads, Now: clock(t, t1), Version: "test", Groups: g})
		return buf.Bytes(), sum, err
	}
	plain, plainSum, err := write(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, sum, err := write(&export.GroupOptions{MinSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if again, _, _ := write(&export.GroupOptions{MinSize: 1}); !bytes.Equal(out, again) {
		t.Error("two exports with groups and the same clock differ")
	}
	ds := sum.Dataset.Value
	if sum.GroupsGraph.Value != ds+"/groups" || plainSum.GroupsGraph.Value != "" {
		t.Errorf("groups graph %q, without groups %q", sum.GroupsGraph.Value, plainSum.GroupsGraph.Value)
	}
	all := lines(out)
	if !slices.Equal(all[:sum.Data], lines(plain)[:plainSum.Data]) {
		t.Error("the data statements differ with groups")
	}
	var groupLines []string
	groups := 0
	for _, l := range all[sum.Data : sum.Data+sum.Groups] {
		if !describes(l, ds) || !strings.HasSuffix(l, " <"+sum.GroupsGraph.Value+"> .") {
			t.Errorf("a groups statement outside the dataset node or the groups graph: %s", l)
		}
		if strings.Contains(l, "<"+vocab.RDFType+"> <"+vocab.ReviewGroup+">") {
			groups++
		}
		groupLines = append(groupLines, l)
	}
	for _, l := range all[sum.Data+sum.Groups:] {
		if !strings.HasSuffix(l, " <"+sum.DescriptionGraph.Value+"> .") {
			t.Errorf("after the groups, a statement outside the description: %s", l)
		}
	}
	snap, err := query.Load(context.Background(), citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	rep := query.Groups(snap, query.GroupOptions{MinSize: 1})
	if groups != len(rep.Groups) || sum.ReviewGroups != int64(len(rep.Groups)) || len(rep.Groups) < 10 {
		t.Errorf("%d pg:ReviewGroup nodes, Summary.ReviewGroups %d, query.Groups %d", groups, sum.ReviewGroups, len(rep.Groups))
	}
	text := strings.Join(groupLines, "\n")
	for _, g := range rep.Groups {
		if !strings.Contains(text, `<`+ds+`/group/`+g.ID+`> <`+vocab.GroupId+`> "`+g.ID+`"`) {
			t.Errorf("group %s is not in the export", g.ID)
		}
	}
	for _, w := range []string{
		`<` + ds + `/grouping> <` + vocab.MinSize + `> "1"^^<` + graph.XSDInteger + `>`,
		`<` + ds + `/grouping> <` + vocab.MaxShared + `> "3"^^<` + graph.XSDInteger + `>`,
		`<` + ds + `/grouping> <` + vocab.ProvUsed + `> <` + model.IDBase + `policy/`,
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the grouping lacks %s", w)
		}
	}
	// Every node, the groups' included, has a PROV base class.
	base := map[string]bool{vocab.ProvEntity: true, vocab.ProvActivity: true, vocab.ProvAgent: true, vocab.ProvInfluence: true}
	subjects, typed := map[string]bool{}, map[string]bool{}
	for _, l := range all {
		s, rest, _ := strings.Cut(l, " ")
		subjects[s] = true
		if c, ok := strings.CutPrefix(rest, "<"+vocab.RDFType+"> <"); ok && base[c[:strings.IndexByte(c, '>')]] {
			typed[s] = true
		}
	}
	for s := range subjects {
		if !typed[s] {
			t.Errorf("%s has no PROV base class", s)
		}
	}

	var buf bytes.Buffer
	_, err = export.Write(context.Background(), st, &buf, &export.Options{Groups: &export.GroupOptions{Policy: "no-such-policy"}})
	if !errors.Is(err, query.ErrNoPolicy) || buf.Len() > 0 {
		t.Errorf("groups under a policy the database lacks: %v, %d bytes written", err, buf.Len())
	}
}

// TestGroupsFromView: the groups read from the grouping view a few keys
// at a time are written exactly as the groups of every citation loaded at
// once, for each set of options; a database that keeps no view gives an
// error wrapping ErrNoView and writes nothing.
func TestGroupsFromView(t *testing.T) {
	st := fixtureStore(t)
	write := func(st *graph.Store, g *export.GroupOptions) ([]byte, error) {
		var buf bytes.Buffer
		_, err := export.Write(context.Background(), st, &buf, &export.Options{Format: export.NQuads, Now: clock(t, t1), Version: "test", Groups: g})
		return buf.Bytes(), err
	}
	for _, g := range []export.GroupOptions{{MinSize: 1}, {MinSize: 2, Review: true}, {MinSize: 1, MaxShared: 1}, {MinSize: 1, Verdict: "identity-confirmed"}} {
		scan, err := write(st, &g)
		if err != nil {
			t.Fatal(err)
		}
		v := g
		v.View = &query.ViewRead{Batch: 3} // batches smaller than a group's neighbourhood
		view, err := write(st, &v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(scan, view) {
			t.Errorf("%+v: the export from the view differs from the scan's:\n%s", g, firstDiff(lines(scan), lines(view)))
		}
		if !bytes.Contains(view, []byte(vocab.ReviewGroup)) {
			t.Errorf("%+v: no group written: the comparison proves nothing", g)
		}
	}
	bare := newStore(t)
	for _, f := range fixtures {
		if _, err := ingest.File(context.Background(), bare, f, filepath.Base(f), ingest.Options{Policy: normalize.Default(), NoView: true}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := write(bare, &export.GroupOptions{MinSize: 1, View: &query.ViewRead{}})
	if !errors.Is(err, export.ErrNoView) || len(out) > 0 {
		t.Errorf("from the view of a database without one: %v, %d bytes written", err, len(out))
	}
}

// firstDiff returns the first line where a and b differ.
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, a[i], b[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(a), len(b))
}

// TestDescriptionOncePerParser checks that two policies on one parser
// describe the parser once: the export had each of its statements twice,
// so readers counted fewer statements than Summary reported.
func TestDescriptionOncePerParser(t *testing.T) {
	st := fixtureStore(t)
	if _, err := ingest.Renormalize(context.Background(), st, ingest.Options{Policy: normalize.Lenient()}); err != nil {
		t.Fatal(err)
	}
	out, _ := exportBytes(t, st, export.NTriples, t1, false)
	seen := map[string]bool{}
	for _, l := range lines(out) {
		if seen[l] {
			t.Errorf("written twice: %s", l)
		}
		seen[l] = true
	}
}
