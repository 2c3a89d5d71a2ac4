package graph_test

import (
	"bytes"
	"strings"
	"testing"

	knakk "github.com/knakk/rdf"

	"github.com/provgraph/provgraph/internal/graph"
)

var nquadTests = []struct {
	q    graph.Quad
	want string
}{
	{graph.Quad{S: graph.IRI("http://e.test/s"), P: graph.IRI("http://e.test/p"), O: graph.String("plain")},
		`<http://e.test/s> <http://e.test/p> "plain" .` + "\n"},
	{graph.Quad{S: graph.IRI("http://e.test/s"), P: graph.IRI("http://e.test/p"), O: graph.Literal("007", graph.XSDInteger)},
		`<http://e.test/s> <http://e.test/p> "007"^^<http://www.w3.org/2001/XMLSchema#integer> .` + "\n"},
	{graph.Quad{S: graph.IRI("http://e.test/s"), P: graph.IRI("http://e.test/p"), O: graph.String("a \"q\" \\ \n\r\t \x00\x1f\x7f é 日本")},
		`<http://e.test/s> <http://e.test/p> "a \"q\" \\ \n\r\t \u0000\u001F\u007F é 日本" .` + "\n"},
	{graph.Quad{S: graph.IRI("http://e.test/a b<c>{|}^`\\"), P: graph.IRI("http://e.test/p"), O: graph.LangString("chat", "FR")},
		`<http://e.test/a%20b%3Cc%3E%7B%7C%7D%5E%60%5C> <http://e.test/p> "chat"@fr .` + "\n"},
	{graph.Quad{S: graph.Blank("b1"), P: graph.IRI("http://e.test/p"), O: graph.IRI("http://e.test/o"), G: graph.IRI("http://e.test/g")},
		`_:b1 <http://e.test/p> <http://e.test/o> <http://e.test/g> .` + "\n"},
}

func TestAppendNQuad(t *testing.T) {
	for _, tc := range nquadTests {
		if got := string(graph.AppendNQuad(nil, tc.q)); got != tc.want {
			t.Errorf("AppendNQuad(%v) =\n %s want\n %s", tc.q, got, tc.want)
		}
	}
}

// TestAppendNQuadParsesBack: an independent parser reads every statement
// back to the same lexical forms and datatypes.
func TestAppendNQuadParsesBack(t *testing.T) {
	for _, tc := range nquadTests {
		dec := knakk.NewQuadDecoder(bytes.NewReader(graph.AppendNQuad(nil, tc.q)), knakk.NQuads)
		q, err := dec.Decode()
		if err != nil {
			t.Errorf("knakk/rdf cannot parse %q: %v", tc.want, err)
			continue
		}
		lit, ok := q.Obj.(knakk.Literal)
		if tc.q.O.Kind == graph.KindLiteral {
			if !ok || lit.String() != tc.q.O.Value {
				t.Errorf("literal read back as %#v, want %q", q.Obj, tc.q.O.Value)
			}
			continue
		}
		if q.Obj.String() != tc.q.O.Value {
			t.Errorf("object read back as %q, want %q", q.Obj.String(), tc.q.O.Value)
		}
	}
}

// TestAppendValidNQuad checks that the unchecked writer export uses gives
// AppendNQuad's bytes for every quad whose IRIs are valid, so the two
// cannot drift apart the way export's copy of the term writer could.
func TestAppendValidNQuad(t *testing.T) {
	for _, tc := range nquadTests {
		if strings.Contains(tc.want, "%") {
			continue // the IRI needed repair: AppendValidNQuad is not for it
		}
		if got := string(graph.AppendValidNQuad(nil, tc.q)); got != tc.want {
			t.Errorf("AppendValidNQuad(%v) =\n %s want\n %s", tc.q, got, tc.want)
		}
	}
}

var literalTextTests = []struct{ in, want string }{
	{"", ""},
	{"plain", "plain"},
	{"a\"b\\c", `a\"b\\c`},
	{"\x00\x1f\x7f\t\n\r", `\u0000\u001F\u007F\t\n\r`},
	{"é\xff日\xc3", `é\uFFFD日\uFFFD`},
	{"x\U0001F600y", "x\U0001F600y"},
}

func TestAppendLiteralText(t *testing.T) {
	for _, tc := range literalTextTests {
		if got := string(graph.AppendLiteralText([]byte("<"), tc.in)); got != "<"+tc.want {
			t.Errorf("AppendLiteralText(%q) = %q, want %q", tc.in, got, "<"+tc.want)
		}
	}
}

func TestAppendBlankLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"b1", "b1"},
		{"a-b_c", "a-b_c"},
		{"-a", "_x2da"},
		{"a.b c", "a_x2eb_x20c"},
	} {
		if got := string(graph.AppendBlankLabel(nil, tc.in)); got != tc.want {
			t.Errorf("AppendBlankLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
