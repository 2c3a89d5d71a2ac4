package export

import (
	"strings"

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

// push adds q to the run, first writing the run with flush (which resets
// it) when q starts another: the one way Turtle and JSON-LD group
// statements.
func (r *run) push(q graph.Quad, flush func() error) error {
	if r.add(q) {
		return nil
	}
	if err := flush(); err != nil {
		return err
	}
	r.add(q)
	return nil
}

func (r *run) reset() {
	r.preds = r.preds[:0]
	r.n = 0
}
