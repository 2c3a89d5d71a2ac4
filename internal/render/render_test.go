package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The results in testdata/in are what the CLI printed with --format json
// for internal/query/testdata/corpus.jsonl (report, stats, explain,
// policy-diff, lineage: ingested, then renormalized under its
// hostrules.toml) and for the hostile lines of
// cmd/provgraph/textsafe_cli_test.go (report-hostile, lineage-hostile:
// terminal escapes, bidirectional overrides, credentials). They are frozen
// here, so that a change of the query code does not change these goldens:
// only a change of a writer does.

// load decodes testdata/in/name into v and checks that render.JSON gives
// back the same JSON values, so that no field of the fixture was lost in
// decoding (and the goldens below show every field).
func load(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "in", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(decodable(t, data), v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var again bytes.Buffer
	if err := render.JSON(&again, v); err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s does not round-trip through its Go type:\n%s", name, again.String())
	}
}

// decodable rewrites the JSON forms that marshal one way only (query.Hop,
// query.Integer) into their Go fields.
func decodable(t *testing.T, data []byte) []byte {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"position", "final_status"} {
				if n, ok := v[k].(float64); ok {
					v[k] = fmt.Sprint(n)
				}
			}
			if n, ok := v["number"].(float64); ok {
				v["Index"], v["CrossesHost"] = n-1, v["crosses_host"]
				delete(v, "number")
				delete(v, "crosses_host")
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s\nwant\n%s", name, got, want)
	}
}

func render1(t *testing.T, write func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGroupsGolden(t *testing.T) {
	for _, in := range []string{"report", "report-hostile"} {
		var rep query.Report
		load(t, in+".json", &rep)
		for _, format := range []string{"table", "json", "csv"} {
			for _, redact := range []bool{false, true} {
				name := in + "." + format
				gw := render.ReportGroups(&rep)
				pol, warnings := rep.Policy, rep.Warnings
				if redact {
					name += ".redacted"
					gw, pol, warnings = render.RedactGroups(gw), render.Redacted(pol), render.Redacted(warnings)
				}
				t.Run(name, func(t *testing.T) {
					golden(t, name, render1(t, func(w io.Writer) error { return render.Groups(context.Background(), w, format, pol, warnings, gw) }))
				})
			}
		}
	}
}

// TestGroupsJSONIsEncodingJSON: the streamed JSON of Groups is what
// encoding/json writes for the whole report.
func TestGroupsJSONIsEncodingJSON(t *testing.T) {
	for _, in := range []string{"report", "report-hostile"} {
		var rep query.Report
		load(t, in+".json", &rep)
		streamed := render1(t, func(w io.Writer) error { return render.ReportJSON(w, &rep) })
		whole := render1(t, func(w io.Writer) error { return render.JSON(w, &rep) })
		if !bytes.Equal(streamed, whole) {
			t.Errorf("%s: streamed JSON differs from encoding/json:\n%s\nwant\n%s", in, streamed, whole)
		}
	}
}

// errWriter fails every write.
type errWriter struct{}

var errWrite = errors.New("disk full")

func (errWriter) Write([]byte) (int, error) { return 0, errWrite }

// TestWritersReturnWriteErrors: a writer that cannot write says so; the
// CLI turns this into exit status 3.
func TestWritersReturnWriteErrors(t *testing.T) {
	var rep query.Report
	load(t, "report.json", &rep)
	var ls []*query.Lineage
	load(t, "lineage.json", &ls)
	var s query.Stats
	load(t, "stats.json", &s)
	for name, write := range map[string]func(io.Writer) error{
		"groups table": func(w io.Writer) error {
			return render.Groups(context.Background(), w, "table", rep.Policy, nil, render.ReportGroups(&rep))
		},
		"groups json": func(w io.Writer) error { return render.ReportJSON(w, &rep) },
		"stats table": func(w io.Writer) error { return render.StatsTable(w, &s) },
		"json":        func(w io.Writer) error { return render.JSON(w, ls) },
	} {
		if err := write(errWriter{}); !errors.Is(err, errWrite) {
			t.Errorf("%s: error %v, want %v", name, err, errWrite)
		}
	}
}

func TestLineageGolden(t *testing.T) {
	for _, in := range []string{"lineage", "lineage-hostile"} {
		var ls []*query.Lineage
		load(t, in+".json", &ls)
		// Retrieval nodes are not in the JSON; DOT identifies retrievals
		// by them.
		for i, l := range ls {
			for j, r := range l.Retrievals {
				r.Node = fmt.Sprintf("r%d.%d", i, j)
			}
		}
		for _, redact := range []bool{false, true} {
			shown, suffix := ls, ""
			if redact {
				shown, suffix = render.Redacted(ls), ".redacted"
			}
			t.Run(in+suffix, func(t *testing.T) {
				golden(t, in+".text"+suffix, render1(t, func(w io.Writer) error { return render.LineageText(w, shown) }))
				golden(t, in+".json"+suffix, render1(t, func(w io.Writer) error { return render.JSON(w, shown) }))
				golden(t, in+".dot"+suffix, render1(t, func(w io.Writer) error { return render.LineageDOT(w, shown, ls) }))
			})
		}
	}
}

func TestStatsGolden(t *testing.T) {
	var s query.Stats
	load(t, "stats.json", &s)
	golden(t, "stats.table", render1(t, func(w io.Writer) error { return render.StatsTable(w, &s) }))
	golden(t, "stats.json", render1(t, func(w io.Writer) error { return render.JSON(w, &s) }))
	var lines []query.ExplainLine
	load(t, "explain-groups.json", &lines)
	golden(t, "explain-groups.table", render1(t, func(w io.Writer) error { return render.Explain(w, "groups", s.Policy, lines) }))
}

func TestPolicyDiffGolden(t *testing.T) {
	var d query.PolicyDiff
	load(t, "policy-diff.json", &d)
	golden(t, "policy-diff.table", render1(t, func(w io.Writer) error { return render.PolicyDiff(w, &d) }))
}

// toolchain replaces what depends on the build (the parser's Go, x/net
// and Unicode versions, which are part of a built-in policy's version and
// digest) with placeholders, so that the goldens hold across toolchains.
func toolchain(out []byte, p *normalize.Policy) []byte {
	pi := normalize.ParserInfo()
	r := strings.NewReplacer(p.Version(), "VERSION", p.Digest(), "DIGEST", pi.Go, "GO", pi.XNet, "XNET", pi.Unicode, "UNICODE")
	return []byte(r.Replace(string(out)))
}

var normalizeInputs = []string{
	"HTTP://Example.com:80/guide?utm_source=chat&b=2#pricing",
	"https://user:secret@example.org/a\u202ecod.exe?utm_medium=x",
	"https://example.test/a b",
	"../relative",
	"https://xn--nxasmq6b.example/%7Efoo/./bar/../baz",
	"https://example.test/\xff\x1b[2K",
}

func TestNormalizeGolden(t *testing.T) {
	// The lenient policy accepts the base's credentials, which the text
	// output shows (and redacts).
	pol, err := normalize.LoadPolicy("lenient")
	if err != nil {
		t.Fatal(err)
	}
	n, err := normalize.New(pol, &normalize.Options{Base: "https://u:p@example.test/docs/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		for _, redact := range []bool{false, true} {
			name := "normalize." + format
			if redact {
				name += ".redacted"
			}
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				var w render.NormalizeWriter
				if format == "json" {
					w = render.NewNormalizeJSON(&b, pol, redact)
				} else {
					w = render.NewNormalizeText(&b, pol, "https://u:p@example.test/docs/", redact)
				}
				for _, raw := range normalizeInputs {
					res, err := n.Normalize(raw)
					var nerr *normalize.Error
					if err != nil && !errors.As(err, &nerr) {
						t.Fatal(err)
					}
					if err := w.Write(res, nerr); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				golden(t, name, toolchain(b.Bytes(), pol))
			})
		}
	}
}

func TestPolicyCheckGolden(t *testing.T) {
	pol, err := normalize.LoadPolicy("default")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "policy-check.default", toolchain(render1(t, func(w io.Writer) error { return render.PolicyCheck(w, pol) }), pol))
}

func TestCheckGolden(t *testing.T) {
	golden(t, "check", render1(t, func(w io.Writer) error {
		if err := render.CheckCounters(w, render.StoreCounters{Path: "a.db", Format: "provgraph-store", Version: 3, Quads: 1031, Terms: 1, HashRuns: 2, QuadRuns: 0, FileBytes: 1 << 20}); err != nil {
			return err
		}
		// A quarter of the file free or more: vacuum named; less: not.
		for _, free := range []int64{300 << 20, 200 << 20} {
			if err := render.CheckCounters(w, render.StoreCounters{Path: "b.db", Format: "provgraph-store", Version: 7, Quads: 5, Terms: 9, HashRuns: 1, QuadRuns: 2, FileBytes: 1 << 30, FreeBytes: free}); err != nil {
				return err
			}
		}
		return render.CheckConsistent(w, 1234567*time.Microsecond)
	}))
}

// TestLineageTextEscapesGroupRelations: the relations of a citation's
// group are shown escaped in lineage's text, as groups shows them: their
// evidence quotes the URLs of redirects and declarations, which come from
// fetched pages.
func TestLineageTextEscapesGroupRelations(t *testing.T) {
	var ls []*query.Lineage
	load(t, "lineage.json", &ls)
	var l *query.Lineage
	for _, c := range ls {
		if c.Group != nil && len(c.Group.Relations) > 0 {
			l = c
			break
		}
	}
	if l == nil {
		t.Fatal("no lineage in lineage.json has group relations")
	}
	r := l.Group.Relations[0]
	r.Type, r.To, r.Evidence = "mirror_of\x1b[2K", "g-\u202e1", "https://a.example/ redirects to https://b.example/\x1b]8;;x\x07 (1 hop)"
	out := string(render1(t, func(w io.Writer) error { return render.LineageText(w, []*query.Lineage{l}) }))
	for i, c := range out {
		if c != '\n' && render.IsUnsafeRune(c) {
			t.Fatalf("lineage text holds %U at byte %d, after %q", c, i, out[max(0, i-40):i])
		}
	}
	for _, want := range []string{`"mirror_of\x1b[2K"`, `"g-\u202e1"`, `https://b.example/\x1b]8;;x\x07 (1 hop)`} {
		if !strings.Contains(out, want) {
			t.Errorf("lineage text lacks %s:\n%s", want, out)
		}
	}
}

// TestExplainEachAsWhole: the explanation written a line at a time, in
// the table format and in JSON, is byte for byte what the whole slice
// gives (Explain, JSON), for no line, one, and several with texts JSON
// escapes and HTML characters it must leave alone.
func TestExplainEachAsWhole(t *testing.T) {
	var pol query.PolicyRef
	pol.Name, pol.Version, pol.Digest = "p", "1", "sha256:00"
	for _, lines := range [][]query.ExplainLine{
		{},
		{{Item: "https://a.test/", Members: []string{"c1"}}},
		{{Item: "https://a.test/?a=1&b=<2>", Group: "g-1", Members: []string{"c1", "c\"2"}}, {Item: "x\ny\u2028", Members: []string{"c3"}}},
	} {
		var whole, each bytes.Buffer
		if err := render.Explain(&whole, "raw-urls", pol, lines); err != nil {
			t.Fatal(err)
		}
		feed := func(fn func(query.ExplainLine) error) error {
			for _, l := range lines {
				if err := fn(l); err != nil {
					return err
				}
			}
			return nil
		}
		if err := render.ExplainEach(&each, "raw-urls", pol, len(lines), feed); err != nil {
			t.Fatal(err)
		}
		if each.String() != whole.String() {
			t.Errorf("table a line at a time:\n%s\nwant\n%s", each.String(), whole.String())
		}
		whole.Reset()
		each.Reset()
		if err := render.JSON(&whole, lines); err != nil {
			t.Fatal(err)
		}
		if err := render.ExplainJSON(&each, feed); err != nil {
			t.Fatal(err)
		}
		if each.String() != whole.String() {
			t.Errorf("JSON a line at a time:\n%s\nwant\n%s", each.String(), whole.String())
		}
	}
}
