package graph

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendNQuad appends q in canonical N-Quads form (W3C N-Quads §2, with the
// canonical N-Triples escaping): one statement, terminated by " .\n".
// Literals escape backslash, double quote, line feed, carriage return and
// tab as ECHARs and every other control character as \uXXXX. An IRI that
// contains a character IRIREF forbids (space, <, >, ", {, }, |, ^, `, \ or
// a control) has it percent-encoded: an escaped \u0020 would parse but
// still be an invalid IRI (RFC 3987), which strict parsers refuse. provgraph
// never makes such IRIs (URLs are literals); this only matters for RDF
// loaded from elsewhere. An xsd:string literal is written without its
// datatype. It is provgraph's one N-Quads term writer: export's N-Triples,
// N-Quads, Turtle and JSON-LD writers call it and AppendLiteralText and
// AppendBlankLabel, so their terms cannot drift apart.
func AppendNQuad(dst []byte, q Quad) []byte { return appendNQuad(dst, q, true) }

// AppendValidNQuad appends q as AppendNQuad does when every IRI of q is
// already valid in an IRIREF (as export.RepairIRI makes them): the IRIs are
// copied without being checked byte by byte, which makes a large export
// faster. For such a quad the bytes are AppendNQuad's; for any other quad
// the line may not parse.
func AppendValidNQuad(dst []byte, q Quad) []byte { return appendNQuad(dst, q, false) }

func appendNQuad(dst []byte, q Quad, check bool) []byte {
	dst = appendTerm(dst, q.S, check)
	dst = append(dst, ' ')
	dst = appendTerm(dst, q.P, check)
	dst = append(dst, ' ')
	dst = appendTerm(dst, q.O, check)
	if !q.G.IsZero() {
		dst = append(dst, ' ')
		dst = appendTerm(dst, q.G, check)
	}
	return append(dst, " .\n"...)
}

func appendTerm(dst []byte, t Term, check bool) []byte {
	switch t.Kind {
	case KindIRI:
		return appendIRIRef(dst, t.Value, check)
	case KindBlank:
		dst = append(dst, "_:"...)
		return AppendBlankLabel(dst, t.Value)
	case KindLiteral:
		dst = append(dst, '"')
		dst = AppendLiteralText(dst, t.Value)
		dst = append(dst, '"')
		switch {
		case t.Lang != "":
			dst = append(dst, '@')
			dst = append(dst, t.Lang...)
		case t.Datatype != "" && t.Datatype != XSDString:
			dst = append(dst, "^^"...)
			dst = appendIRIRef(dst, t.Datatype, check)
		}
		return dst
	}
	return dst
}

func appendIRIRef(dst []byte, s string, check bool) []byte {
	if check {
		return appendIRI(dst, s)
	}
	dst = append(dst, '<')
	dst = append(dst, s...)
	return append(dst, '>')
}

func appendIRI(dst []byte, s string) []byte {
	dst = append(dst, '<')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = appendUChar(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		if c <= 0x20 || c == 0x7f || strings.IndexByte("<>\"{}|^`\\", c) >= 0 {
			const hex = "0123456789ABCDEF"
			dst = append(dst, '%', hex[c>>4], hex[c&15])
		} else {
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '>')
}

// AppendLiteralText appends s as it stands between the quotes of an
// N-Triples, N-Quads or Turtle string literal: backslash, double quote,
// line feed, carriage return and tab as ECHARs, every other control as
// \uXXXX, a byte that is not UTF-8 as \uFFFD, everything else as it is.
// Runs of bytes that need no escape are copied in one append.
func AppendLiteralText(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, s[start:i]...)
				dst = appendUChar(dst, utf8.RuneError)
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
			dst = appendUChar(dst, rune(c))
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// AppendBlankLabel appends the label of a blank node (without "_:"),
// replacing each byte that BLANK_NODE_LABEL (N-Quads §2.3, Turtle §6.5)
// does not allow with "_x" and its hex code.
func AppendBlankLabel(dst []byte, s string) []byte {
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

func appendUChar(dst []byte, r rune) []byte {
	const hex = "0123456789ABCDEF"
	if r > 0xFFFF {
		dst = append(dst, `\U`...)
		for shift := 28; shift >= 0; shift -= 4 {
			dst = append(dst, hex[(r>>shift)&0xF])
		}
		return dst
	}
	dst = append(dst, `\u`...)
	for shift := 12; shift >= 0; shift -= 4 {
		dst = append(dst, hex[(r>>shift)&0xF])
	}
	return dst
}
