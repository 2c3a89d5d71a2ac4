package normalize

import (
	"strings"
	"unicode/utf8"
)

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

// Byte classes for classify. One pass over a component tells which of the
// slower per-rule scans can find anything at all.
const (
	clsBadUnit   uint8 = 1 << iota // ASCII, not a URL code point, not "%"
	clsPercent                     // "%"
	clsNonASCII                    // a byte of a non-ASCII code point
	clsPathEnc                     // in pathSet
	clsQueryEnc                    // in specialQuerySet
	clsFragEnc                     // in fragmentSet
	clsBackslash                   // "\"
	clsDot                         // "."
)

var byteClass = func() (t [256]uint8) {
	for b := 0; b < 256; b++ {
		c := uint8(0)
		switch {
		case b >= utf8.RuneSelf:
			c |= clsNonASCII
		case b == '%':
			c |= clsPercent
		case !asciiURLUnit[b]:
			c |= clsBadUnit
		}
		if pathSet[b] {
			c |= clsPathEnc
		}
		if specialQuerySet[b] {
			c |= clsQueryEnc
		}
		if fragmentSet[b] {
			c |= clsFragEnc
		}
		if b == '\\' {
			c |= clsBackslash
		}
		if b == '.' {
			c |= clsDot
		}
		t[b] = c
	}
	return t
}()

// classify returns the union of the byte classes of s.
func classify(s string) uint8 {
	var m0, m1, m2, m3 uint8
	i := 0
	for ; i+4 <= len(s); i += 4 {
		t := s[i : i+4]
		m0 |= byteClass[t[0]]
		m1 |= byteClass[t[1]]
		m2 |= byteClass[t[2]]
		m3 |= byteClass[t[3]]
	}
	for ; i < len(s); i++ {
		m0 |= byteClass[s[i]]
	}
	return m0 | m1 | m2 | m3
}

// mayHaveBadNonASCII reports whether s, valid UTF-8, might hold a non-ASCII
// code point that is not a URL code point: a C1 control (U+0080..U+009F,
// which starts with 0xC2) or a noncharacter (U+FDD0..U+FDEF and
// U+FFFE/U+FFFF start with 0xEF; those of planes 1-16 end in 0xBF 0xBE or
// 0xBF 0xBF).
func mayHaveBadNonASCII(s string) bool {
	return strings.IndexByte(s, 0xC2) >= 0 || strings.IndexByte(s, 0xEF) >= 0 ||
		strings.Contains(s, "\xBF\xBE") || strings.Contains(s, "\xBF\xBF")
}

// firstBadPercent returns the offset of the first "%" of s not followed by
// two hex digits, or -1.
func firstBadPercent(s string) int {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '%')
		if j < 0 {
			return -1
		}
		i += j
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return i
		}
		i++
	}
}
