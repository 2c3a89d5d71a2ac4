package graph

import (
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Term encoding: how a Term is written in the dictionary.
//
// The first byte is a tag saying what follows; the rest is the term's text,
// sometimes after a compact prefix. The encoding is a bijection between
// Terms in stored form (normTerm) and byte strings, so two terms share a
// dictionary entry exactly when they are equal.
//
//	tagIRI       IRI text
//	tagBlank     blank node label
//	tagString    xsd:string lexical form
//	tagInteger   xsd:integer lexical form
//	tagDateTime  xsd:dateTime lexical form
//	tagBoolean   xsd:boolean lexical form
//	tagLang      len(lang) (1 byte), lang, lexical form
//	tagTyped     uvarint len(datatype), datatype IRI, lexical form
//	tagMinted    len(kind) (1 byte), kind, 16 bytes: an IRI of the form
//	             https://w3id.org/provgraph/id/<kind>/<32 lowercase hex>
//	tagNS+i      an IRI starting with namespaces[i]; the rest of the IRI
//
// The lexical form is stored exactly: "007"^^xsd:integer stays "007".
// Minted IRIs are most of a provenance graph's nodes; storing their 128-bit
// digest as bytes instead of 32 hex digits and a 30-byte prefix saves about
// 50 bytes per node. Only lowercase hex takes that form, so decoding gives
// back the exact text.
const (
	tagIRI      = 1
	tagBlank    = 2
	tagString   = 3
	tagInteger  = 4
	tagDateTime = 5
	tagBoolean  = 6
	tagLang     = 7
	tagTyped    = 8
	tagMinted   = 9
	tagNS       = 16 // tagNS+i for namespaces[i]
)

// mintedPrefix is the namespace of provgraph's minted instance IRIs
// (model.IDBase) as this file format stores them. It is part of the format,
// like namespaces below, so it stays a literal here: were the domain's
// namespace ever to change, files written before must still decode to the
// IRIs they stored.
const mintedPrefix = "https://w3id.org/provgraph/id/"

// namespaces are IRI prefixes stored as one byte. The list is part of the
// file format: entries may be appended in a new format version, never
// changed or reordered.
var namespaces = [...]string{
	"https://w3id.org/provgraph/ns#",
	"http://www.w3.org/ns/prov#",
	"http://www.w3.org/1999/02/22-rdf-syntax-ns#",
	"http://www.w3.org/2000/01/rdf-schema#",
	"http://www.w3.org/2001/XMLSchema#",
	"https://w3id.org/provgraph/id/",
	"http://www.w3.org/2002/07/owl#",
	"http://purl.org/dc/terms/",
	"http://www.w3.org/ns/dcat#",
	"http://rdfs.org/ns/void#",
	"https://",
	"http://",
}

// appendTermCode appends the encoding of t, a valid Term in stored form, to dst.
func appendTermCode(dst []byte, t Term) []byte {
	switch t.Kind {
	case KindBlank:
		return append(append(dst, tagBlank), t.Value...)
	case KindLiteral:
		switch {
		case t.Lang != "":
			dst = append(dst, tagLang, byte(len(t.Lang)))
			dst = append(dst, t.Lang...)
			return append(dst, t.Value...)
		case t.Datatype == XSDString:
			return append(append(dst, tagString), t.Value...)
		case t.Datatype == XSDInteger:
			return append(append(dst, tagInteger), t.Value...)
		case t.Datatype == XSDDateTime:
			return append(append(dst, tagDateTime), t.Value...)
		case t.Datatype == XSDBoolean:
			return append(append(dst, tagBoolean), t.Value...)
		}
		dst = append(dst, tagTyped)
		dst = appendUvarint(dst, uint64(len(t.Datatype)))
		dst = append(dst, t.Datatype...)
		return append(dst, t.Value...)
	}
	iri := t.Value
	if rest, ok := strings.CutPrefix(iri, mintedPrefix); ok {
		if kind, hx, ok := strings.Cut(rest, "/"); ok && len(kind) > 0 && len(kind) < 256 && isLowerHex32(hx) {
			dst = append(dst, tagMinted, byte(len(kind)))
			dst = append(dst, kind...)
			var b [16]byte
			hex.Decode(b[:], []byte(hx))
			return append(dst, b[:]...)
		}
	}
	for i, ns := range namespaces {
		if strings.HasPrefix(iri, ns) {
			return append(append(dst, byte(tagNS+i)), iri[len(ns):]...)
		}
	}
	return append(append(dst, tagIRI), iri...)
}

func isLowerHex32(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

var errBadTerm error = corruptError("undecodable term")

// decodeTerm decodes an encoding made by appendTermCode.
func decodeTerm(b []byte) (Term, error) {
	if len(b) == 0 {
		return Term{}, fmt.Errorf("%w: empty", errBadTerm)
	}
	tag, rest := b[0], b[1:]
	var t Term
	switch tag {
	case tagIRI:
		t = Term{Kind: KindIRI, Value: string(rest)}
	case tagBlank:
		t = Term{Kind: KindBlank, Value: string(rest)}
	case tagString:
		t = Term{Kind: KindLiteral, Value: string(rest), Datatype: XSDString}
	case tagInteger:
		t = Term{Kind: KindLiteral, Value: string(rest), Datatype: XSDInteger}
	case tagDateTime:
		t = Term{Kind: KindLiteral, Value: string(rest), Datatype: XSDDateTime}
	case tagBoolean:
		t = Term{Kind: KindLiteral, Value: string(rest), Datatype: XSDBoolean}
	case tagLang:
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) || rest[0] == 0 {
			return Term{}, fmt.Errorf("%w: truncated language tag", errBadTerm)
		}
		n := int(rest[0])
		t = Term{Kind: KindLiteral, Lang: string(rest[1 : 1+n]), Value: string(rest[1+n:]), Datatype: RDFLangStr}
	case tagTyped:
		n, k := uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < n {
			return Term{}, fmt.Errorf("%w: truncated datatype", errBadTerm)
		}
		t = Term{Kind: KindLiteral, Datatype: string(rest[k : k+int(n)]), Value: string(rest[k+int(n):])}
	case tagMinted:
		if len(rest) < 1 || len(rest) != 1+int(rest[0])+16 || rest[0] == 0 {
			return Term{}, fmt.Errorf("%w: minted IRI of %d bytes", errBadTerm, len(b))
		}
		n := int(rest[0])
		t = Term{Kind: KindIRI, Value: mintedPrefix + string(rest[1:1+n]) + "/" + hex.EncodeToString(rest[1+n:])}
	default:
		i := int(tag) - tagNS
		if i < 0 || i >= len(namespaces) {
			return Term{}, fmt.Errorf("%w: unknown tag %d", errBadTerm, tag)
		}
		t = Term{Kind: KindIRI, Value: namespaces[i] + string(rest)}
	}
	if !utf8.ValidString(t.Value) {
		return Term{}, fmt.Errorf("%w: text is not UTF-8", errBadTerm)
	}
	return t, nil
}

// appendTermValue appends the value of the term encoded in b (what
// decodeTerm puts in Term.Value: the IRI, the blank node label or the
// lexical form) to dst, without allocating a Term. It accepts exactly the
// encodings decodeTerm accepts.
func appendTermValue(dst, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return dst, fmt.Errorf("%w: empty", errBadTerm)
	}
	start := len(dst)
	tag, rest := b[0], b[1:]
	switch tag {
	case tagIRI, tagBlank, tagString, tagInteger, tagDateTime, tagBoolean:
		dst = append(dst, rest...)
	case tagLang:
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) || rest[0] == 0 {
			return dst[:start], fmt.Errorf("%w: truncated language tag", errBadTerm)
		}
		dst = append(dst, rest[1+int(rest[0]):]...)
	case tagTyped:
		n, k := uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < n {
			return dst[:start], fmt.Errorf("%w: truncated datatype", errBadTerm)
		}
		dst = append(dst, rest[k+int(n):]...)
	case tagMinted:
		if len(rest) < 1 || len(rest) != 1+int(rest[0])+16 || rest[0] == 0 {
			return dst[:start], fmt.Errorf("%w: minted IRI of %d bytes", errBadTerm, len(b))
		}
		n := int(rest[0])
		dst = append(append(append(dst, mintedPrefix...), rest[1:1+n]...), '/')
		dst = hex.AppendEncode(dst, rest[1+n:])
	default:
		i := int(tag) - tagNS
		if i < 0 || i >= len(namespaces) {
			return dst[:start], fmt.Errorf("%w: unknown tag %d", errBadTerm, tag)
		}
		dst = append(append(dst, namespaces[i]...), rest...)
	}
	if !utf8.Valid(dst[start:]) {
		return dst[:start], fmt.Errorf("%w: text is not UTF-8", errBadTerm)
	}
	return dst, nil
}

func appendUvarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// uvarint decodes a uvarint from b, returning the value and the number of
// bytes read (0 or less on error, as binary.Uvarint).
func uvarint(b []byte) (uint64, int) {
	var x uint64
	var s uint
	for i, c := range b {
		if i == 10 {
			return 0, -(i + 1)
		}
		if c < 0x80 {
			if i == 9 && c > 1 {
				return 0, -(i + 1)
			}
			return x | uint64(c)<<s, i + 1
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}
