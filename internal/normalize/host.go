package normalize

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile is UTS #46 ToASCII with the URL Standard's parameters for
// domain to ASCII with beStrict false (§3.3): CheckHyphens false, CheckBidi
// true, CheckJoiners true, UseSTD3ASCIIRules false, Transitional_Processing
// false, VerifyDnsLength false.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.VerifyDNSLength(false),
)

// idnaMapper maps a domain the way UTS #46 processing does (§4 step 1,
// mapping with UseSTD3ASCIIRules false), for aceLabelError. Its ToUnicode
// also decodes "xn--" labels, so it is only used on single code points.
var idnaMapper = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// aceLabelError reports the UTS #46 errors in a Punycode ("xn--") label of a
// non-ASCII domain that golang.org/x/net/idna v0.62.0 misses, or "" when
// there is none. x/net decodes "xn--" to the empty label and drops it
// ("a.xn--.ß" becomes "a..xn--zca"), and copies the basic part of a
// Punycode label without checking that it is ASCII ("xn--ä-" becomes "ä").
// UTS #46 records an error for both (§4 Processing, step 4.1: a label that
// starts with "xn--" must be ASCII and must not decode to the empty
// label), and since Unicode 16.0 also for a label that decodes to one
// starting with "xn--" (§4.1 Validity Criteria, 4, with CheckHyphens
// false). Each is a failure of domain to ASCII for a non-ASCII domain.
//
// Such a label needs "--" after mapping, and only "-", U+FE63 and U+FF0D
// map to "-" (TestIDNAHyphens checks this against the tables), so domains
// with fewer than two of them skip the mapping.
func aceLabelError(domain string) string {
	hyphens := 0
	for _, c := range domain {
		if c == '-' || c == '\uFE63' || c == '\uFF0D' {
			hyphens++
		}
	}
	if hyphens < 2 {
		return ""
	}
	var b strings.Builder
	for _, c := range domain {
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteRune(c)
			continue
		}
		m, _ := idnaMapper.ToUnicode(string(c)) // errors are ToASCII's to report
		b.WriteString(m)
	}
	return punycodeLabelError(b.String())
}

// punycodeLabelError reports the UTS #46 errors of the "xn--" labels of a
// mapped domain that golang.org/x/net/idna v0.62.0 misses (see
// aceLabelError), or "" when there is none. parseHost also runs it on ASCII
// domains: x/net accepts "xn--" alone, which UTS #46 §4 step 4.1 records as
// an error, so the strict default would otherwise accept "https://xn--/x"
// while rejecting "https://xn--a/x".
func punycodeLabelError(domain string) string {
	for _, label := range strings.Split(domain, ".") {
		if !strings.HasPrefix(label, "xn--") {
			continue
		}
		if !isASCII(label) {
			return "Punycode label " + strconv.Quote(label) + " is not ASCII"
		}
		if label == "xn--" {
			return "Punycode label \"xn--\" is empty"
		}
		if u, err := idna.Punycode.ToUnicode(label); err == nil && strings.HasPrefix(u, "xn--") {
			return "Punycode label " + strconv.Quote(label) + " decodes to " + strconv.Quote(u) + ", which starts with \"xn--\""
		}
	}
	return ""
}

// forbiddenDomain marks the forbidden domain code points of §3.2: the
// forbidden host code points, C0 controls, "%" and DEL.
var forbiddenDomain = func() (t [128]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for _, c := range "\x00\t\n\r #/:<>?@[\\]^|%\x7f" {
		t[c] = true
	}
	return t
}()

// parseHost turns the host text of a special URL into its serialization,
// logging each of the Standard's host normalizations as a step (§3.5 host
// parsing).
func (r *run) parseHost(raw string, off int) (string, error) {
	if raw[0] == '[' {
		if raw[len(raw)-1] != ']' {
			return "", r.fail(CodeInvalidIPv6, off, "IPv6 address is missing its closing \"]\" [IPv6-unclosed]")
		}
		addr, msg := parseIPv6(raw[1 : len(raw)-1])
		if msg != "" {
			return "", r.fail(CodeInvalidIPv6, off, msg)
		}
		ser := serializeIPv6(addr)
		if ser != raw {
			if err := r.apply(idIPv6, raw, ser, off); err != nil {
				return "", err
			}
		}
		return ser, nil
	}
	h := raw
	hm := classifyHost(h)
	if hm&hostPercent != 0 {
		dec := percentDecode(h)
		if err := r.apply(idHostPercentDecode, h, dec, off); err != nil {
			return "", err
		}
		if !utf8.ValidString(dec) {
			return "", r.fail(CodeInvalidHost, off, "percent-decoded host is not valid UTF-8 [domain-to-ASCII]")
		}
		h = dec
		hm = classifyHost(h)
	}
	var ascii string
	if hm&hostNonASCII == 0 {
		// §3.3 domain to ASCII with beStrict false: an ASCII domain is
		// ASCII-lowercased, "xn--" labels included. A UTS #46 error on it
		// (such as Punycode that does not decode to a valid label) is only
		// a validation error (whatwg/url#914, 2026; WPT "IDNA cannot fail
		// ASCII domains, even if they start with xn--").
		ascii = h
		if hm&hostUpper != 0 {
			ascii = asciiLower(h)
			if err := r.apply(idLowercaseHost, h, ascii, off); err != nil {
				return "", err
			}
		}
		if hasPunycodeLabel(ascii) {
			if _, err := idnaProfile.ToASCII(ascii); err != nil || punycodeLabelError(ascii) != "" {
				if err := r.apply(idInvalidPunycode, ascii, ascii, off); err != nil {
					return "", err
				}
			}
		}
	} else {
		in := h
		if strings.Contains(in, "\u1E9E") {
			// UTS #46 since Unicode 15.1 maps U+1E9E LATIN CAPITAL LETTER
			// SHARP S to "ß", which non-transitional processing keeps
			// ("xn--zca"); the Unicode 15.0 tables of x/net/idna under
			// go1.26 still map it to "ss", a different host. Map it first.
			in = strings.ReplaceAll(in, "\u1E9E", "\u00DF")
		}
		a, err := idnaProfile.ToASCII(in)
		if err != nil || a == "" {
			msg := "UTS #46 ToASCII failed [domain-to-ASCII]"
			if err != nil {
				msg = "UTS #46 ToASCII: " + strings.TrimPrefix(err.Error(), "idna: ") + " [domain-to-ASCII]"
			}
			return "", r.fail(CodeInvalidHost, off, msg)
		}
		if msg := aceLabelError(in); msg != "" {
			return "", r.fail(CodeInvalidHost, off, "UTS #46 ToASCII: "+msg+" [domain-to-ASCII]")
		}
		if hasLongLabel(a) {
			// The key must normalize to itself. x/net/idna encodes labels
			// of any length but refuses to decode one of 1024 code points
			// or more (punycode.go), so a very long label gives a key the
			// default policy would reject; such a host is rejected here
			// instead. Labels of DNS length (63 bytes) always decode, so
			// only longer ones are checked.
			if _, err := idnaProfile.ToASCII(a); err != nil {
				return "", r.fail(CodeInvalidHost, off, "UTS #46 ToASCII gives "+strconv.Quote(a)+", which does not validate again: "+strings.TrimPrefix(err.Error(), "idna: ")+" [domain-to-ASCII]")
			}
		}
		ascii = a
		if ascii != h {
			if err := r.apply(idHostIDNA, h, ascii, off); err != nil {
				return "", err
			}
		}
	}
	for i := 0; i < len(ascii) && hm&(hostForbidden|hostNonASCII) != 0; i++ {
		if c := ascii[i]; c < 0x80 && forbiddenDomain[c] {
			return "", r.fail(CodeForbiddenHostCodePoint, off, "host contains forbidden code point "+strconv.QuoteRune(rune(c))+" [domain-invalid-code-point]")
		}
	}
	if endsInNumber(ascii) {
		v, nonstandard, msg := parseIPv4(ascii)
		if msg != "" {
			return "", r.fail(CodeInvalidIPv4, off, msg)
		}
		if nonstandard {
			if err := r.apply(idIPv4Nonstandard, ascii, ascii, off); err != nil {
				return "", err
			}
		}
		ser := serializeIPv4(v)
		if ser != ascii {
			if err := r.apply(idIPv4, ascii, ser, off); err != nil {
				return "", err
			}
		}
		return ser, nil
	}
	return ascii, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// hasLongLabel reports whether a label of s is longer than 63 bytes, the
// DNS limit.
func hasLongLabel(s string) bool {
	for len(s) > 63 {
		i := strings.IndexByte(s, '.')
		if i < 0 || i > 63 {
			return true
		}
		s = s[i+1:]
	}
	return false
}

// hasPunycodeLabel reports whether a label of the lowercase ASCII host s
// starts with "xn--".
func hasPunycodeLabel(s string) bool {
	for {
		i := strings.Index(s, "xn--")
		if i < 0 {
			return false
		}
		if i == 0 || s[i-1] == '.' {
			return true
		}
		s = s[i+4:]
	}
}

// percentDecode decodes every valid percent-escape of s (§1.3 percent-decode).
func percentDecode(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			if b == nil {
				b = append(make([]byte, 0, len(s)), s[:i]...)
			}
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		if b != nil {
			b = append(b, s[i])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

// endsInNumber implements the ends-in-a-number checker (§3.5).
func endsInNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	last := s[strings.LastIndexByte(s, '.')+1:]
	// Every IPv4 number, decimal, octal or "0x" hex, starts with a digit:
	// most hosts end in a name and are done here.
	if last == "" || last[0] < '0' || last[0] > '9' {
		return false
	}
	digits := true
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	_, _, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4Number parses one IPv4 part in decimal, octal (leading 0) or hex
// (leading 0x). overflow is set for a value too large for any IPv4 part.
func parseIPv4Number(s string) (v uint64, nonDecimal bool, ok bool) {
	if s == "" {
		return 0, false, false
	}
	base := uint64(10)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, base, nonDecimal = s[2:], 16, true
	} else if len(s) >= 2 && s[0] == '0' {
		s, base, nonDecimal = s[1:], 8, true
	}
	if s == "" {
		return 0, nonDecimal, true
	}
	for i := 0; i < len(s); i++ {
		var d uint64
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, nonDecimal, false
		}
		if d >= base {
			return 0, nonDecimal, false
		}
		if v < 1<<40 { // saturate: anything this large is out of range
			v = v*base + d
		}
	}
	return v, nonDecimal, true
}

// parseIPv4 implements the IPv4 parser (§3.5). nonstandard reports the
// validation errors IPv4-non-decimal-part, IPv4-empty-part and
// IPv4-out-of-range-part (of the last part); msg is set on failure.
func parseIPv4(s string) (v uint32, nonstandard bool, msg string) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		nonstandard = true // IPv4-empty-part
		if len(parts) > 1 {
			parts = parts[:len(parts)-1]
		}
	}
	if len(parts) > 4 {
		return 0, false, "IPv4 address has more than four parts [IPv4-too-many-parts]"
	}
	var nums [4]uint64
	for i, p := range parts {
		n, nd, ok := parseIPv4Number(p)
		if !ok {
			return 0, false, "IPv4 part " + strconv.Quote(p) + " is not a number [IPv4-non-numeric-part]"
		}
		nonstandard = nonstandard || nd
		nums[i] = n
	}
	last := len(parts) - 1
	if nums[last] > 255 {
		nonstandard = true // IPv4-out-of-range-part, a validation error for the last part
	}
	for i := 0; i < last; i++ {
		if nums[i] > 255 {
			return 0, false, "IPv4 part " + strconv.Quote(parts[i]) + " is above 255 [IPv4-out-of-range-part]"
		}
	}
	if nums[last] >= 1<<(8*(5-len(parts))) {
		return 0, false, "IPv4 address is out of range [IPv4-out-of-range-part]"
	}
	ipv4 := nums[last]
	for i := 0; i < last; i++ {
		ipv4 += nums[i] << (8 * (3 - i))
	}
	return uint32(ipv4), nonstandard, ""
}

func serializeIPv4(v uint32) string {
	b := make([]byte, 0, 15)
	for i := 3; i >= 0; i-- {
		b = strconv.AppendUint(b, uint64(v>>(8*i)&0xff), 10)
		if i > 0 {
			b = append(b, '.')
		}
	}
	return string(b)
}

// parseIPv6 implements the IPv6 parser (§3.5). msg is set on failure.
func parseIPv6(s string) (addr [8]uint16, msg string) {
	pieceIndex, compress := 0, -1
	i := 0
	at := func(j int) byte {
		if j < len(s) {
			return s[j]
		}
		return 0
	}
	if at(0) == ':' {
		if at(1) != ':' {
			return addr, "IPv6 address starts with a single \":\" [IPv6-invalid-compression]"
		}
		i += 2
		pieceIndex++
		compress = pieceIndex
	}
	for i < len(s) {
		if pieceIndex == 8 {
			return addr, "IPv6 address has more than eight pieces [IPv6-too-many-pieces]"
		}
		if s[i] == ':' {
			if compress >= 0 {
				return addr, "IPv6 address has more than one \"::\" [IPv6-multiple-compression]"
			}
			i++
			pieceIndex++
			compress = pieceIndex
			continue
		}
		value, length := 0, 0
		for length < 4 && i < len(s) && isHex(s[i]) {
			value = value*16 + int(unhex(s[i]))
			i++
			length++
		}
		if at(i) == '.' {
			if length == 0 {
				return addr, "IPv4 part of IPv6 address is empty [IPv4-in-IPv6-invalid-code-point]"
			}
			i -= length
			if pieceIndex > 6 {
				return addr, "IPv6 address with IPv4 part has too many pieces [IPv4-in-IPv6-too-many-pieces]"
			}
			numbersSeen := 0
			for i < len(s) {
				ipv4Piece := -1
				if numbersSeen > 0 {
					if s[i] == '.' && numbersSeen < 4 {
						i++
					} else {
						return addr, "invalid IPv4 part in IPv6 address [IPv4-in-IPv6-invalid-code-point]"
					}
				}
				if i >= len(s) || s[i] < '0' || s[i] > '9' {
					return addr, "invalid IPv4 part in IPv6 address [IPv4-in-IPv6-invalid-code-point]"
				}
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					n := int(s[i] - '0')
					switch {
					case ipv4Piece == -1:
						ipv4Piece = n
					case ipv4Piece == 0:
						return addr, "leading zero in IPv4 part of IPv6 address [IPv4-in-IPv6-invalid-code-point]"
					default:
						ipv4Piece = ipv4Piece*10 + n
					}
					if ipv4Piece > 255 {
						return addr, "IPv4 part of IPv6 address is above 255 [IPv4-in-IPv6-out-of-range-part]"
					}
					i++
				}
				addr[pieceIndex] = addr[pieceIndex]*0x100 + uint16(ipv4Piece)
				numbersSeen++
				if numbersSeen == 2 || numbersSeen == 4 {
					pieceIndex++
				}
			}
			if numbersSeen != 4 {
				return addr, "IPv4 part of IPv6 address has too few parts [IPv4-in-IPv6-too-few-parts]"
			}
			break
		} else if at(i) == ':' {
			i++
			if i >= len(s) {
				return addr, "IPv6 address ends with a single \":\" [IPv6-invalid-code-point]"
			}
		} else if i < len(s) {
			return addr, "invalid code point " + strconv.QuoteRune(rune(s[i])) + " in IPv6 address [IPv6-invalid-code-point]"
		}
		addr[pieceIndex] = uint16(value)
		pieceIndex++
	}
	if compress >= 0 {
		swaps := pieceIndex - compress
		pieceIndex = 7
		for pieceIndex != 0 && swaps > 0 {
			addr[pieceIndex], addr[compress+swaps-1] = addr[compress+swaps-1], addr[pieceIndex]
			pieceIndex--
			swaps--
		}
	} else if pieceIndex != 8 {
		return addr, "IPv6 address has fewer than eight pieces [IPv6-too-few-pieces]"
	}
	return addr, ""
}

// serializeIPv6 implements the IPv6 serializer (§3.7), brackets included:
// lowercase hex, no leading zeros, the first longest run of two or more zero
// pieces compressed to "::".
func serializeIPv6(a [8]uint16) string {
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if a[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && a[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	b := make([]byte, 0, 41)
	b = append(b, '[')
	ignore0 := false
	for i := 0; i < 8; i++ {
		if ignore0 && a[i] == 0 {
			continue
		}
		ignore0 = false
		if best == i {
			if i == 0 {
				b = append(b, "::"...)
			} else {
				b = append(b, ':')
			}
			ignore0 = true
			continue
		}
		b = strconv.AppendUint(b, uint64(a[i]), 16)
		if i != 7 {
			b = append(b, ':')
		}
	}
	return string(append(b, ']'))
}

// Byte classes of a host for classifyHost.
const (
	hostPercent uint8 = 1 << iota
	hostNonASCII
	hostUpper
	hostForbidden
)

var hostClass = func() (t [256]uint8) {
	for b := 0; b < 256; b++ {
		switch {
		case b >= utf8.RuneSelf:
			t[b] = hostNonASCII
		case forbiddenDomain[b]:
			t[b] = hostForbidden
		case 'A' <= b && b <= 'Z':
			t[b] = hostUpper
		}
	}
	t['%'] |= hostPercent
	return t
}()

// classifyHost returns the union of the host byte classes of s.
func classifyHost(s string) uint8 {
	var m uint8
	for i := 0; i < len(s); i++ {
		m |= hostClass[s[i]]
	}
	return m
}
