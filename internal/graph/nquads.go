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
// datatype.
func AppendNQuad(dst []byte, q Quad) []byte {
	dst = appendTerm(dst, q.S)
	dst = append(dst, ' ')
	dst = appendTerm(dst, q.P)
	dst = append(dst, ' ')
	dst = appendTerm(dst, q.O)
	if !q.G.IsZero() {
		dst = append(dst, ' ')
		dst = appendTerm(dst, q.G)
	}
	return append(dst, " .\n"...)
}

func appendTerm(dst []byte, t Term) []byte {
	switch t.Kind {
	case KindIRI:
		return appendIRI(dst, t.Value)
	case KindBlank:
		dst = append(dst, "_:"...)
		return appendBlankLabel(dst, t.Value)
	case KindLiteral:
		dst = append(dst, '"')
		dst = appendLiteralText(dst, t.Value)
		dst = append(dst, '"')
		switch {
		case t.Lang != "":
			dst = append(dst, '@')
			dst = append(dst, t.Lang...)
		case t.Datatype != "" && t.Datatype != XSDString:
			dst = append(dst, "^^"...)
			dst = appendIRI(dst, t.Datatype)
		}
		return dst
	}
	return dst
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

func appendLiteralText(dst []byte, s string) []byte {
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
		switch c {
		case '\\':
			dst = append(dst, `\\`...)
		case '"':
			dst = append(dst, `\"`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			if c < 0x20 || c == 0x7f {
				dst = appendUChar(dst, rune(c))
			} else {
				dst = append(dst, c)
			}
		}
		i++
	}
	return dst
}

// appendBlankLabel writes a blank node label, replacing characters that
// BLANK_NODE_LABEL does not allow with "_x" and their hex code.
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
