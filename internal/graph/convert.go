package graph

import (
	"fmt"
	"unicode/utf8"
)

// The stored form of terms and quads: what Add accepts, and the one form
// in which each term is kept, so that two equal terms always get the same
// dictionary id.

// normTerm checks the term-level rules (not where the term stands) and
// returns t in the one form the store keeps: a literal without a datatype
// becomes xsd:string (RDF 1.1 §3.3: a simple literal is an xsd:string), a
// language-tagged literal gets rdf:langString. The reason is empty when t
// is valid. A zero Term is valid here.
func normTerm(t Term) (Term, string) {
	if !utf8.ValidString(t.Value) || !utf8.ValidString(t.Datatype) || !utf8.ValidString(t.Lang) {
		// RDF terms are Unicode strings, and cayley's protobuf encoding
		// rejects invalid UTF-8 halfway through a transaction.
		return t, "text is not valid UTF-8"
	}
	switch t.Kind {
	case None:
		if t != (Term{}) {
			return t, "zero kind with a value"
		}
	case KindIRI:
		if t.Value == "" {
			return t, "empty IRI"
		}
		if t.Datatype != "" || t.Lang != "" {
			return t, "IRI with a datatype or language"
		}
	case KindBlank:
		if t.Value == "" {
			return t, "empty blank node label"
		}
		if t.Datatype != "" || t.Lang != "" {
			return t, "blank node with a datatype or language"
		}
	case KindLiteral:
		if t.Lang != "" {
			if t.Datatype == "" {
				t.Datatype = RDFLangStr
			}
			if t.Datatype != RDFLangStr {
				return t, "language tag on a literal whose datatype is not rdf:langString"
			}
			if !validLang(t.Lang) {
				return t, fmt.Sprintf("language tag %q is not [a-z]+(-[a-z0-9]+)* (use LangString, which lowercases)", t.Lang)
			}
			break
		}
		if t.Datatype == "" {
			t.Datatype = XSDString
		}
		if t.Datatype == RDFLangStr {
			return t, "rdf:langString literal without a language tag"
		}
	default:
		return t, fmt.Sprintf("unknown term kind %d", t.Kind)
	}
	return t, ""
}

// validLang reports whether tag is an N-Triples LANGTAG
// ([a-zA-Z]+ ('-' [a-zA-Z0-9]+)*, RDF 1.1 N-Triples §7) in lowercase, the
// form Term documents.
func validLang(tag string) bool {
	first, n := true, 0
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		switch {
		case c >= 'a' && c <= 'z':
			n++
		case c >= '0' && c <= '9' && !first:
			n++
		case c == '-' && n > 0:
			first, n = false, 0
		default:
			return false
		}
	}
	return n > 0
}

// normQuad checks q for Add and returns it in stored form.
func normQuad(q Quad) (Quad, string) {
	var why string
	for _, f := range []struct {
		t    *Term
		name string
	}{{&q.S, "subject"}, {&q.P, "predicate"}, {&q.O, "object"}, {&q.G, "graph"}} {
		if *f.t, why = normTerm(*f.t); why != "" {
			return q, f.name + ": " + why
		}
	}
	switch {
	case q.S.IsZero():
		return q, "subject is missing"
	case q.P.IsZero():
		return q, "predicate is missing"
	case q.O.IsZero():
		return q, "object is missing"
	case q.S.Kind == KindLiteral:
		return q, "subject must be an IRI or a blank node, not a literal"
	case q.P.Kind != KindIRI:
		return q, "predicate must be an IRI"
	case q.G.Kind == KindLiteral:
		return q, "graph must be an IRI or a blank node, not a literal"
	}
	return q, ""
}
