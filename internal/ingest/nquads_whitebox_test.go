package ingest

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/graph"
)

func parseNQuads(b []byte) ([]graph.Quad, error) {
	var qs []graph.Quad
	_, err := eachNQuad(bytes.NewReader(b), "f", true, func(q graph.Quad) error {
		qs = append(qs, q)
		return nil
	})
	return qs, err
}

// FuzzNQuads checks that the N-Quads parser never panics, fails only with
// a *SyntaxError, returns valid UTF-8, and reads back what provgraph
// writes: the canonical N-Quads of what it parsed parse again to the same
// text.
func FuzzNQuads(f *testing.F) {
	for _, s := range []string{
		"<http://a/s> <http://a/p> \"x\\u00e9\\n\"@en-GB <http://a/g> .\n",
		"_:b.1 <http://a/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> _:g . # c\r\n",
		"<http://a/s\\u0041> <http://a/p> <http://a/o> .\r<http://a/s> <http://a/p> \"\\U0001F600\" .",
		"<http://a/s> <http://a/p> \"\\uD800\" .\n",
		"<s> <p> <o> .\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		qs, err := parseNQuads(in)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("parse(%q) = %v, not a *SyntaxError", in, err)
			}
			return
		}
		var out []byte
		for _, q := range qs {
			for _, term := range []graph.Term{q.S, q.P, q.O, q.G} {
				if !utf8.ValidString(term.Value) || !utf8.ValidString(term.Datatype) {
					t.Fatalf("parse(%q) gave text that is not UTF-8: %v", in, q)
				}
			}
			out = graph.AppendNQuad(out, q)
		}
		again, err := parseNQuads(out)
		if err != nil {
			t.Fatalf("parse(%q) = %v, and its N-Quads %q do not parse: %v", in, qs, out, err)
		}
		var out2 []byte
		for _, q := range again {
			out2 = graph.AppendNQuad(out2, q)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("N-Quads %q parse and write as %q", out, out2)
		}
	})
}

// FuzzTurtle checks that the Turtle parser never panics, fails only with
// a *SyntaxError, and that the canonical N-Quads of what it parsed parse
// again (as N-Quads) to the same text. (knakk/rdf, used before, panicked
// in its lexer's goroutine on ".5" at the start of a line and on
// """"0""0".)
func FuzzTurtle(f *testing.F) {
	for _, s := range []string{
		"@prefix ex: <http://a/> .\nex:s ex:p \"x\"@en, 1, 2.5, true, [ ex:q ( 1 2 ) ] ; a ex:C .\n",
		"<http://a/s> <http://a/p> \"\"\"one\ntwo \\u00e9\"\"\" .\n",
		"_:b1 <http://a/p> [] .\n# comment\nPREFIX ex: <http://a/>\nex:a_:b ex:p ex:o .\n",
		"<http://a/s> [ <http://a/p> 1 ] <http://a/o> .\n",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(".5 <http://a/p> 1 .\n"))
	f.Add([]byte(`""""0""0"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out []byte
		_, err := eachTurtle(bytes.NewReader(in), "f", func(q graph.Quad) error {
			out = graph.AppendNQuad(out, q)
			return nil
		})
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("eachTurtle(%q) = %v, not a *SyntaxError", in, err)
			}
			return
		}
		again, err := parseNQuads(out)
		if err != nil {
			t.Fatalf("eachTurtle(%q) wrote N-Quads %q that do not parse: %v", in, out, err)
		}
		var out2 []byte
		for _, q := range again {
			out2 = graph.AppendNQuad(out2, q)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("N-Quads %q parse and write as %q", out, out2)
		}
	})
}
