package graph

import (
	"fmt"
	"unicode/utf8"

	"github.com/cayleygraph/quad"
)

// Conversion between Terms and cayley's quad.Values.
//
// Only four value types are ever written: quad.IRI, quad.BNode,
// quad.TypedString (every literal without a language tag, xsd:string
// included) and quad.LangString. cayley's native types (quad.Int,
// quad.Time, quad.Bool, quad.Float) are never used: they would turn "007"
// into 7 and "2025-01-01T01:00:00+01:00" into the same node as
// "2025-01-01T00:00:00Z", merging evidence. A quad.TypedString is stored by
// pquads as its lexical form and datatype IRI and read back as a
// quad.TypedString; cayley parses it only if asked (TypedString.Native or
// ParseValue), which this package never does.
//
// Node identity in cayley is the SHA-1 of the value's N-Triples-like String
// form. That form escapes backslash and quote in literals and delimits IRIs
// and datatypes unambiguously, so two different Terms never share a node.

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

// toValue converts a valid, normalized Term to the quad.Value stored for
// it; the zero Term is nil (the default graph, or "any" in a pattern).
func toValue(t Term) quad.Value {
	switch t.Kind {
	case KindIRI:
		return quad.IRI(t.Value)
	case KindBlank:
		return quad.BNode(t.Value)
	case KindLiteral:
		if t.Lang != "" {
			return quad.LangString{Value: quad.String(t.Value), Lang: t.Lang}
		}
		return quad.TypedString{Value: quad.String(t.Value), Type: quad.IRI(t.Datatype)}
	}
	return nil
}

// fromValue converts a stored quad.Value back to a Term, exactly.
func fromValue(v quad.Value) (Term, error) {
	switch v := v.(type) {
	case nil:
		return Term{}, nil
	case quad.IRI:
		return Term{Kind: KindIRI, Value: string(v)}, nil
	case quad.BNode:
		return Term{Kind: KindBlank, Value: string(v)}, nil
	case quad.TypedString:
		return Term{Kind: KindLiteral, Value: string(v.Value), Datatype: string(v.Type)}, nil
	case quad.LangString:
		return Term{Kind: KindLiteral, Value: string(v.Value), Datatype: RDFLangStr, Lang: v.Lang}, nil
	}
	// quad.String, quad.Int, quad.Time, ... are never written by this
	// package; finding one means the file was written by something else.
	return Term{}, fmt.Errorf("stored value %v has cayley type %T, which provgraph never writes", v, v)
}

// toCayley converts a valid, normalized Quad.
func toCayley(q Quad) quad.Quad {
	return quad.Quad{Subject: toValue(q.S), Predicate: toValue(q.P), Object: toValue(q.O), Label: toValue(q.G)}
}
