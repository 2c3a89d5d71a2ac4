package export

import (
	"bufio"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/vocab"
)

// turtleSink writes Turtle (W3C Turtle, RDF 1.1): the prefixes, then one
// subject block for each run of statements about one subject. Vocabulary
// IRIs are prefixed names where the local part allows; instance IRIs are
// written in full. Literals are always quoted, with their datatype (the
// numeric and boolean shorthands would lose the lexical form "007"), and
// an xsd:string literal is written without one, which means the same.
type turtleSink struct {
	w   *bufio.Writer
	r   run
	buf []byte
}

func newTurtleSink(w *bufio.Writer) *turtleSink { return &turtleSink{w: w} }

func (s *turtleSink) begin() error {
	for _, p := range prefixes {
		s.buf = append(s.buf, "@prefix "...)
		s.buf = append(s.buf, p.name...)
		s.buf = append(s.buf, ": <"...)
		s.buf = append(s.buf, p.ns...)
		s.buf = append(s.buf, "> .\n"...)
	}
	s.buf = append(s.buf, '\n')
	_, err := s.w.Write(s.buf)
	return err
}

func (s *turtleSink) statement(q graph.Quad) error { return s.r.push(q, s.flush) }

func (s *turtleSink) end() error { return s.flush() }

func (s *turtleSink) flush() error {
	if s.r.n == 0 {
		return nil
	}
	b := s.appendTerm(s.buf[:0], s.r.subj)
	for i, p := range s.r.preds {
		if i == 0 {
			b = append(b, ' ')
		} else {
			b = append(b, " ;\n    "...)
		}
		if p.Value == vocab.RDFType {
			b = append(b, 'a')
		} else {
			b = s.appendTerm(b, p)
		}
		for j, o := range s.r.objs[i] {
			if j == 0 {
				b = append(b, ' ')
			} else {
				b = append(b, ", "...)
			}
			b = s.appendTerm(b, o)
		}
	}
	b = append(b, " .\n"...)
	s.buf = b
	s.r.reset()
	_, err := s.w.Write(b)
	return err
}

func (s *turtleSink) appendTerm(b []byte, t graph.Term) []byte {
	switch t.Kind {
	case graph.KindIRI:
		return appendTurtleIRI(b, t.Value)
	case graph.KindBlank:
		return graph.AppendBlankLabel(append(b, "_:"...), t.Value)
	case graph.KindLiteral:
		b = append(b, '"')
		b = graph.AppendLiteralText(b, t.Value)
		b = append(b, '"')
		switch {
		case t.Lang != "":
			b = append(b, '@')
			b = append(b, t.Lang...)
		case t.Datatype != "" && t.Datatype != graph.XSDString:
			b = append(b, "^^"...)
			b = appendTurtleIRI(b, t.Datatype)
		}
	}
	return b
}

// appendTurtleIRI writes iri as a prefixed name or an IRIREF. iri has been
// through RepairIRI, so it needs no escape.
func appendTurtleIRI(b []byte, iri string) []byte {
	if name := turtleName(iri); name != "" {
		return append(b, name...)
	}
	b = append(b, '<')
	b = append(b, iri...)
	return append(b, '>')
}
