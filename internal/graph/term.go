package graph

import (
	"fmt"
	"strings"
)

// XSD datatype IRIs used by provgraph literals.
const (
	XSDString   = "http://www.w3.org/2001/XMLSchema#string"
	XSDInteger  = "http://www.w3.org/2001/XMLSchema#integer"
	XSDDateTime = "http://www.w3.org/2001/XMLSchema#dateTime"
	XSDBoolean  = "http://www.w3.org/2001/XMLSchema#boolean"
	RDFLangStr  = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
)

// TermKind says what an RDF term is.
type TermKind uint8

const (
	// None is the zero Term: "any term" in a pattern, "default graph" as a
	// quad's graph.
	None TermKind = iota
	KindIRI
	KindLiteral
	KindBlank
)

// Term is an RDF term. A literal keeps its lexical form and its datatype IRI
// exactly as given: "007"^^xsd:integer stays "007", and two dateTimes that
// denote the same instant in different offsets stay two literals. The store
// never interprets a literal's value.
type Term struct {
	Kind     TermKind
	Value    string // the IRI, the lexical form, or the blank node label
	Datatype string // literals only: the datatype IRI (RDFLangStr when Lang is set)
	Lang     string // literals only: the language tag, lowercase
}

// IRI returns an IRI term.
func IRI(iri string) Term { return Term{Kind: KindIRI, Value: iri} }

// Literal returns a literal with the given lexical form and datatype IRI.
// An empty datatype means xsd:string.
func Literal(lexical, datatype string) Term {
	if datatype == "" {
		datatype = XSDString
	}
	return Term{Kind: KindLiteral, Value: lexical, Datatype: datatype}
}

// String returns an xsd:string literal.
func String(s string) Term { return Term{Kind: KindLiteral, Value: s, Datatype: XSDString} }

// LangString returns a language-tagged literal.
func LangString(s, lang string) Term {
	return Term{Kind: KindLiteral, Value: s, Datatype: RDFLangStr, Lang: strings.ToLower(lang)}
}

// Blank returns a blank node with the given label.
func Blank(label string) Term { return Term{Kind: KindBlank, Value: label} }

// IsZero reports whether t is the zero Term.
func (t Term) IsZero() bool { return t.Kind == None }

// String formats t in N-Triples syntax, for messages and tests.
func (t Term) String() string {
	switch t.Kind {
	case KindIRI:
		return "<" + t.Value + ">"
	case KindBlank:
		return "_:" + t.Value
	case KindLiteral:
		q := fmt.Sprintf("%q", t.Value)
		if t.Lang != "" {
			return q + "@" + t.Lang
		}
		if t.Datatype == XSDString {
			return q
		}
		return q + "^^<" + t.Datatype + ">"
	}
	return "(any)"
}

// Quad is an RDF statement in a graph. A zero G is the default graph.
type Quad struct {
	S, P, O, G Term
}

// String formats q in N-Quads-like syntax, for messages and tests.
func (q Quad) String() string {
	s := q.S.String() + " " + q.P.String() + " " + q.O.String()
	if !q.G.IsZero() {
		s += " " + q.G.String()
	}
	return s + " ."
}
