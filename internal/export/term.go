package export

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/vocab"
)

// prefix is a namespace written with a short name in Turtle and JSON-LD.
type prefix struct{ name, ns string }

// prefixes are the namespaces Turtle and JSON-LD abbreviate, longest
// namespace first where one contains another.
var prefixes = []prefix{
	{"rdf", vocab.RDFNS},
	{"rdfs", vocab.RDFSNS},
	{"xsd", vocab.XSDNS},
	{"owl", OWLNS},
	{"prov", vocab.ProvNS},
	{"pg", vocab.NS},
	{"dcat", DCATNS},
	{"dct", DCTNS},
	{"void", VoIDNS},
	{"skos", SKOSNS},
}

// appendNQuad appends q as one N-Quads statement (N-Triples when q.G is
// zero), byte for byte what graph.AppendNQuad writes for a quad whose IRIs
// are valid (RepairIRI), which is every quad the stream hands on: an IRI
// is then copied as it is instead of being checked byte by byte again.
func appendNQuad(dst []byte, q graph.Quad) []byte {
	dst = appendNTTerm(dst, q.S)
	dst = append(dst, ' ')
	dst = appendNTTerm(dst, q.P)
	dst = append(dst, ' ')
	dst = appendNTTerm(dst, q.O)
	if !q.G.IsZero() {
		dst = append(dst, ' ')
		dst = appendNTTerm(dst, q.G)
	}
	return append(dst, " .\n"...)
}

func appendNTTerm(dst []byte, t graph.Term) []byte {
	switch t.Kind {
	case graph.KindIRI:
		dst = append(dst, '<')
		dst = append(dst, t.Value...)
		return append(dst, '>')
	case graph.KindBlank:
		return appendBlankLabel(append(dst, "_:"...), t.Value)
	case graph.KindLiteral:
		dst = append(dst, '"')
		dst = appendLiteralText(dst, t.Value)
		dst = append(dst, '"')
		switch {
		case t.Lang != "":
			dst = append(dst, '@')
			dst = append(dst, t.Lang...)
		case t.Datatype != "" && t.Datatype != graph.XSDString:
			dst = append(dst, "^^<"...)
			dst = append(dst, t.Datatype...)
			dst = append(dst, '>')
		}
	}
	return dst
}

// appendLiteralText writes s between the quotes of an N-Triples, N-Quads
// or Turtle string literal, with the escapes of graph.AppendNQuad:
// backslash, double quote, line feed, carriage return and tab as ECHARs,
// every other control as \uXXXX, everything else as UTF-8. A Go string
// holds no surrogate code point, and the store holds only valid UTF-8.
func appendLiteralText(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\uFFFD`...)
				i++
				start = i
				continue
			}
			i += n
			continue
		}
		var esc string
		switch c {
		case '\\':
			esc = `\\`
		case '"':
			esc = `\"`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		default:
			if c >= 0x20 && c != 0x7f {
				i++
				continue
			}
		}
		dst = append(dst, s[start:i]...)
		if esc != "" {
			dst = append(dst, esc...)
		} else {
			const hex = "0123456789ABCDEF"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// appendBlankLabel writes a blank node label as graph.AppendNQuad does,
// replacing what BLANK_NODE_LABEL does not allow with "_x" and hex.
func appendBlankLabel(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || (i > 0 && c == '-') {
			dst = append(dst, c)
		} else {
			dst = append(dst, "_x"...)
			dst = strconv.AppendUint(dst, uint64(c), 16)
		}
	}
	return dst
}

// turtleName returns the prefixed name of iri, or "" when it has none: the
// local part must be a non-empty simple PN_LOCAL (Turtle §6.5): letters,
// digits, "_" and "-", not starting with "-".
func turtleName(iri string) string {
	for _, p := range prefixes {
		if !strings.HasPrefix(iri, p.ns) {
			continue
		}
		local := iri[len(p.ns):]
		if local == "" {
			// "pg:" is valid Turtle, but knakk/rdf (ingest --format ttl)
			// misreads "pg:," and "pg: ;".
			return ""
		}
		for i := 0; i < len(local); i++ {
			c := local[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || i > 0 && c == '-') {
				return ""
			}
		}
		return p.name + ":" + local
	}
	return ""
}

// run is the statements about one subject that arrived one after the
// other, grouped by predicate in order of first appearance. Turtle and
// JSON-LD write a run as one subject block or node object. A subject whose
// statements are not consecutive gets several; a run is cut at maxRun
// statements, so memory stays bounded.
type run struct {
	subj  graph.Term
	preds []graph.Term
	objs  [][]graph.Term
	n     int
}

const maxRun = 4096

// add appends q to the run and reports true, or reports false when q
// starts another run.
func (r *run) add(q graph.Quad) bool {
	if r.n == 0 {
		r.subj = q.S
	} else if q.S != r.subj || r.n >= maxRun {
		return false
	}
	r.n++
	for i, p := range r.preds {
		if p == q.P {
			r.objs[i] = append(r.objs[i], q.O)
			return true
		}
	}
	r.preds = append(r.preds, q.P)
	if len(r.objs) < len(r.preds) {
		r.objs = append(r.objs, nil)
	}
	i := len(r.preds) - 1
	r.objs[i] = append(r.objs[i][:0], q.O)
	return true
}

func (r *run) reset() {
	r.preds = r.preds[:0]
	r.n = 0
}
