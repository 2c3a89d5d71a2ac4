package normalize

import "unicode/utf8"

// encodeSet is a percent-encode set over bytes (URL Standard §1.3). Every
// byte of a non-ASCII code point is in every set, which encodes non-ASCII
// text as UTF-8 the way the Standard does.
type encodeSet [256]bool

func makeSet(base *encodeSet, extra string) *encodeSet {
	var s encodeSet
	if base != nil {
		s = *base
	} else {
		// C0 control percent-encode set: C0 controls and everything above
		// U+007E.
		for b := 0; b < 0x20; b++ {
			s[b] = true
		}
		for b := 0x7F; b < 0x100; b++ {
			s[b] = true
		}
	}
	for i := 0; i < len(extra); i++ {
		s[extra[i]] = true
	}
	return &s
}

var (
	c0Set = makeSet(nil, "")
	// fragmentSet: C0 set and space " < > ` (§1.3 fragment percent-encode set).
	fragmentSet = makeSet(c0Set, " \"<>`")
	// querySet: C0 set and space " # < > (§1.3 query percent-encode set).
	querySet = makeSet(c0Set, " \"#<>")
	// specialQuerySet: query set and ' (§1.3 special-query percent-encode set).
	specialQuerySet = makeSet(querySet, "'")
	// pathSet: query set and ? ^ ` { } (§1.3 path percent-encode set).
	pathSet = makeSet(querySet, "?^`{}")
	// userinfoSet: path set and / : ; = @ [ \ ] | (§1.3 userinfo
	// percent-encode set).
	userinfoSet = makeSet(pathSet, "/:;=@[\\]|")
)

const upperHex = "0123456789ABCDEF"

// Byte classes, so that one pass over a component tells which of the
// costlier checks and rewrites it can need at all.
const (
	cNotUnit   = 1 << iota // ASCII, not a URL code point and not "%"
	cPercent               // "%"
	cPathEnc               // ASCII byte in the path percent-encode set
	cQueryEnc              // ASCII byte in the special-query percent-encode set
	cFragEnc               // ASCII byte in the fragment percent-encode set
	cBackslash             // "\"
	cDot                   // "."
	cHigh                  // a byte of a non-ASCII code point
)

var classes = func() (t [256]uint8) {
	for b := 0; b < 256; b++ {
		c := byte(b)
		var k uint8
		switch {
		case c >= 0x80:
			k = cHigh
		case c == '%':
			k = cPercent
		case !asciiURLUnit[c]:
			k = cNotUnit
		}
		if c < 0x80 {
			if pathSet[c] {
				k |= cPathEnc
			}
			if specialQuerySet[c] {
				k |= cQueryEnc
			}
			if fragmentSet[c] {
				k |= cFragEnc
			}
		}
		if c == '\\' {
			k |= cBackslash
		}
		if c == '.' {
			k |= cDot
		}
		t[b] = k
	}
	return t
}()

// classify returns the union of the classes of the bytes of s.
func classify(s string) (acc uint8) {
	for i := 0; i < len(s); i++ {
		acc |= classes[s[i]]
	}
	return acc
}

// needsEncoding reports whether any byte of s is in set.
func needsEncoding(s string, set *encodeSet) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

// appendEncoded appends s to dst with every byte in set percent-encoded with
// uppercase hex digits. "%" is never in a set, so existing escapes survive.
func appendEncoded(dst []byte, s string, set *encodeSet) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if set[c] {
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}

func encode(s string, set *encodeSet) string {
	if !needsEncoding(s, set) {
		return s
	}
	return string(appendEncoded(make([]byte, 0, len(s)+16), s, set))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// asciiURLUnit marks the ASCII URL code points (§4.2): alphanumerics and
// !$&'()*+,-./:;=?@_~.
var asciiURLUnit = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!$&'()*+,-./:;=?@_~" {
		t[c] = true
	}
	return t
}()

// scanUnits finds the first code point of s that is not a URL code point and
// not "%" (invalid-URL-unit), and the first "%" that does not start a
// percent-escape. Each offset is -1 when there is none. s must be valid UTF-8.
func scanUnits(s string) (badUnit, badPercent int) {
	badUnit, badPercent = -1, -1
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '%' {
				if badPercent < 0 && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
					badPercent = i
				}
			} else if badUnit < 0 && !asciiURLUnit[c] {
				badUnit = i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if badUnit < 0 && (r < 0xA0 || isNoncharacter(r)) {
			// URL code points start at U+00A0: the C1 controls are not.
			badUnit = i
		}
		i += n
	}
	return badUnit, badPercent
}

// isNoncharacter reports whether r is a Unicode noncharacter, which the URL
// Standard excludes from URL code points.
func isNoncharacter(r rune) bool {
	return r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE
}
