package export

import (
	"bufio"
	"strings"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/vocab"
)

// jsonldPrefixes are the @context of a JSON-LD export: the Turtle prefixes
// and pgid: for instance nodes (a JSON-LD compact IRI may hold "/").
var jsonldPrefixes = append(append([]prefix(nil), prefixes...), prefix{"pgid", model.IDBase})

// jsonldSink writes JSON-LD 1.1 in flattened form (JSON-LD 1.1 §4.2.2,
// but streamed): a @context that defines only prefixes, and a @graph with
// one node object for each run of statements about one subject, so a
// subject can have several node objects, which JSON-LD merges.
//
// Literals are value objects that keep the lexical form: an xsd:string is
// a JSON string (JSON-LD's native strings are xsd:string), any other
// datatype is {"@value": "...", "@type": "..."}, never a JSON number or
// boolean, which would lose "007"; a language-tagged string has
// "@language". rdf:type statements with an IRI object are "@type".
//
// An IRI whose scheme is one of the context's prefixes (an IRI such as
// "pg:x") would be read as a compact IRI; a node object that holds one is
// written with "@context": null and full IRIs.
type jsonldSink struct {
	w     *bufio.Writer
	r     run
	buf   []byte
	first bool
}

func newJSONLDSink(w *bufio.Writer) *jsonldSink { return &jsonldSink{w: w, first: true} }

func (s *jsonldSink) begin() error {
	b := append(s.buf[:0], "{\n  \"@context\": {"...)
	for i, p := range jsonldPrefixes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = appendJSONString(b, p.name)
		b = append(b, ": "...)
		b = appendJSONString(b, p.ns)
	}
	b = append(b, "\n  },\n  \"@graph\": ["...)
	s.buf = b
	_, err := s.w.Write(b)
	return err
}

func (s *jsonldSink) statement(q graph.Quad) error { return s.r.push(q, s.flush) }

func (s *jsonldSink) end() error {
	if err := s.flush(); err != nil {
		return err
	}
	_, err := s.w.WriteString("\n  ]\n}\n")
	return err
}

func (s *jsonldSink) flush() error {
	if s.r.n == 0 {
		return nil
	}
	compact := !s.r.clashes()
	b := s.buf[:0]
	if !s.first {
		b = append(b, ',')
	}
	s.first = false
	b = append(b, "\n    {"...)
	if !compact {
		b = append(b, `"@context": null, `...)
	}
	b = append(b, `"@id": `...)
	b = appendJSONString(b, nodeID(s.r.subj, compact))
	for i, p := range s.r.preds {
		objs := s.r.objs[i]
		if p.Value == vocab.RDFType && allIRIs(objs) {
			b = append(b, `, "@type": `...)
			b = s.appendValues(b, objs, compact, true)
			continue
		}
		b = append(b, ", "...)
		b = appendJSONString(b, jsonldIRI(p.Value, compact))
		b = append(b, ": "...)
		b = s.appendValues(b, objs, compact, false)
	}
	b = append(b, '}')
	s.buf = b
	s.r.reset()
	_, err := s.w.Write(b)
	return err
}

func allIRIs(ts []graph.Term) bool {
	for _, t := range ts {
		if t.Kind != graph.KindIRI {
			return false
		}
	}
	return true
}

func (s *jsonldSink) appendValues(b []byte, objs []graph.Term, compact, types bool) []byte {
	if len(objs) > 1 {
		b = append(b, '[')
	}
	for j, o := range objs {
		if j > 0 {
			b = append(b, ", "...)
		}
		switch {
		case types:
			b = appendJSONString(b, jsonldIRI(o.Value, compact))
		case o.Kind == graph.KindIRI || o.Kind == graph.KindBlank:
			b = append(b, `{"@id": `...)
			b = appendJSONString(b, nodeID(o, compact))
			b = append(b, '}')
		case o.Lang != "":
			b = append(b, `{"@value": `...)
			b = appendJSONString(b, o.Value)
			b = append(b, `, "@language": `...)
			b = appendJSONString(b, o.Lang)
			b = append(b, '}')
		case o.Datatype == "" || o.Datatype == graph.XSDString:
			b = appendJSONString(b, o.Value)
		default:
			b = append(b, `{"@value": `...)
			b = appendJSONString(b, o.Value)
			b = append(b, `, "@type": `...)
			b = appendJSONString(b, jsonldIRI(o.Datatype, compact))
			b = append(b, '}')
		}
	}
	if len(objs) > 1 {
		b = append(b, ']')
	}
	return b
}

// nodeID is the "@id" of an IRI or blank node.
func nodeID(t graph.Term, compact bool) string {
	if t.Kind == graph.KindBlank {
		return "_:" + string(graph.AppendBlankLabel(nil, t.Value))
	}
	return jsonldIRI(t.Value, compact)
}

// jsonldIRI returns iri as a compact IRI when compact and a prefix covers
// it with a non-empty local part that does not start with "//" (which would
// make it an absolute IRI, JSON-LD 1.1 §4.1.5).
func jsonldIRI(iri string, compact bool) string {
	if !compact {
		return iri
	}
	for _, p := range jsonldPrefixes {
		if local, ok := strings.CutPrefix(iri, p.ns); ok && local != "" && !strings.HasPrefix(local, "//") {
			return p.name + ":" + local
		}
	}
	return iri
}

// clashes reports whether the run holds an IRI that a JSON-LD processor
// would expand with a context prefix: one whose scheme is a prefix name
// and whose rest does not start with "//".
func (r *run) clashes() bool {
	clash := func(t graph.Term) bool {
		iri := t.Value
		if t.Kind == graph.KindLiteral {
			iri = t.Datatype
		} else if t.Kind != graph.KindIRI {
			return false
		}
		scheme, rest, ok := strings.Cut(iri, ":")
		if !ok || strings.HasPrefix(rest, "//") {
			return false
		}
		for _, p := range jsonldPrefixes {
			if scheme == p.name {
				return true
			}
		}
		return false
	}
	if clash(r.subj) {
		return true
	}
	for i, p := range r.preds {
		if clash(p) {
			return true
		}
		for _, o := range r.objs[i] {
			if clash(o) {
				return true
			}
		}
	}
	return false
}

// appendJSONString writes s as a JSON string (RFC 8259 §7): quote,
// backslash and the C0 controls escaped, everything else as UTF-8.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
