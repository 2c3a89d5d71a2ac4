package ingest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/testenv"
)

// rdflibPython returns a python3 that imports rdflib, or skips the test.
// Debian's python3-rdflib installs into /usr/bin/python3, which may not be
// the first python3 on PATH.
func rdflibPython(t *testing.T) string {
	t.Helper()
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		if exec.Command(p, "-c", "import rdflib").Run() == nil {
			return p
		}
	}
	testenv.MissingTool(t, "no python3 imports rdflib (Debian package python3-rdflib; .ci/run installs it): skipping this check")
	return ""
}

// isomorphic.py reads a Turtle file with rdflib and an N-Triples file and
// prints "ok" when the two graphs are isomorphic, or the differences.
const isomorphicPy = `
import sys
from rdflib import Graph
from rdflib.compare import to_isomorphic, graph_diff
ttl, nt = sys.argv[1], sys.argv[2]
from rdflib import Literal, XSD
def plain(g):
    # RDF 1.1 §3.3: "x" and "x"^^xsd:string are one literal; rdflib 6
    # keeps both.
    out = Graph()
    for s, p, o in g:
        if isinstance(o, Literal) and o.datatype == XSD.string:
            o = Literal(str(o))
        if isinstance(o, Literal) and o.language:
            # Language tags compare without case (RDF 1.1 §3.3); provgraph
            # keeps them lowercase.
            o = Literal(str(o), lang=o.language.lower())
        out.add((s, p, o))
    return out
a = Graph(); a.parse(ttl, format="turtle"); a = plain(a)
b = Graph(); b.parse(nt, format="nt"); b = plain(b)
ia, ib = to_isomorphic(a), to_isomorphic(b)
if ia == ib:
    print("ok", len(a))
else:
    both, only_a, only_b = graph_diff(ia, ib)
    for t in sorted(only_a.serialize(format="nt").splitlines()):
        print("rdflib only:", t)
    for t in sorted(only_b.serialize(format="nt").splitlines()):
        print("provgraph only:", t)
`

// TestTurtleAgainstRdflib is a differential test: each Turtle document in
// testdata/turtle (the W3C Turtle examples and the corners of the grammar)
// read by provgraph's parser and written as N-Triples must be isomorphic
// to the graph rdflib reads from it.
func TestTurtleAgainstRdflib(t *testing.T) {
	py := rdflibPython(t)
	files, err := filepath.Glob("testdata/turtle/*.ttl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Turtle files in testdata/turtle: %v", err)
	}
	script := filepath.Join(t.TempDir(), "isomorphic.py")
	if err := os.WriteFile(script, []byte(isomorphicPy), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var nt []byte
			n, err := eachTurtle(f, path, func(q graph.Quad) error {
				nt = graph.AppendNQuad(nt, q)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			ntPath := filepath.Join(t.TempDir(), "out.nt")
			if err := os.WriteFile(ntPath, nt, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(py, script, path, ntPath).CombinedOutput()
			if err != nil {
				t.Fatalf("rdflib: %v\n%s", err, out)
			}
			distinct := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(string(nt)), "\n") {
				distinct[l] = true
			}
			if !bytes.HasPrefix(out, []byte("ok ")) {
				t.Errorf("provgraph's %d triples differ from rdflib's:\n%s", n, out)
			} else if got := strings.TrimSpace(string(out[3:])); got != strconv.Itoa(len(distinct)) {
				t.Errorf("rdflib reads %s distinct triples, provgraph %d", got, len(distinct))
			}
		})
	}
}

// TestResolveIRI checks relative IRI resolution against the examples of
// RFC 3986 §5.4.1 (normal) and §5.4.2 (abnormal), base
// http://a/b/c/d;p?q.
func TestResolveIRI(t *testing.T) {
	const base = "http://a/b/c/d;p?q"
	tests := []struct{ ref, want string }{
		{"g:h", "g:h"}, {"g", "http://a/b/c/g"}, {"./g", "http://a/b/c/g"},
		{"g/", "http://a/b/c/g/"}, {"/g", "http://a/g"}, {"//g", "http://g"},
		{"?y", "http://a/b/c/d;p?y"}, {"g?y", "http://a/b/c/g?y"}, {"#s", "http://a/b/c/d;p?q#s"},
		{"g#s", "http://a/b/c/g#s"}, {"g?y#s", "http://a/b/c/g?y#s"}, {";x", "http://a/b/c/;x"},
		{"g;x", "http://a/b/c/g;x"}, {"g;x?y#s", "http://a/b/c/g;x?y#s"}, {"", "http://a/b/c/d;p?q"},
		{".", "http://a/b/c/"}, {"./", "http://a/b/c/"}, {"..", "http://a/b/"},
		{"../", "http://a/b/"}, {"../g", "http://a/b/g"}, {"../..", "http://a/"},
		{"../../", "http://a/"}, {"../../g", "http://a/g"},
		{"../../../g", "http://a/g"}, {"../../../../g", "http://a/g"}, {"/./g", "http://a/g"},
		{"/../g", "http://a/g"}, {"g.", "http://a/b/c/g."}, {".g", "http://a/b/c/.g"},
		{"g..", "http://a/b/c/g.."}, {"..g", "http://a/b/c/..g"}, {"./../g", "http://a/b/g"},
		{"./g/.", "http://a/b/c/g/"}, {"g/./h", "http://a/b/c/g/h"}, {"g/../h", "http://a/b/c/h"},
		{"g;x=1/./y", "http://a/b/c/g;x=1/y"}, {"g;x=1/../y", "http://a/b/c/y"},
		{"g?y/./x", "http://a/b/c/g?y/./x"}, {"g?y/../x", "http://a/b/c/g?y/../x"},
		{"g#s/./x", "http://a/b/c/g#s/./x"}, {"g#s/../x", "http://a/b/c/g#s/../x"},
		{"http:g", "http:g"},
	}
	for _, tt := range tests {
		if got := resolveIRI(base, tt.ref); got != tt.want {
			t.Errorf("resolveIRI(%q, %q) = %q, want %q", base, tt.ref, got, tt.want)
		}
	}
}
