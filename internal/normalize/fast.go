package normalize

import "strings"

// The fast path. Most cited URLs are already in the form the URL Standard
// would produce: lowercase "http" or "https", a lowercase ASCII host name,
// a path, maybe a query and a fragment, and nothing to encode, decode or
// resolve. For those the full parse would log no step and return the input
// unchanged, so fastParse recognises them in one pass and slices the
// components out. Anything else, however harmless, takes the full parser.
// FuzzFastPath checks that both agree on every input fastParse accepts.

// Byte classes of the fast path.
const (
	fastBad   = 1 << iota // not allowed as is anywhere after the host
	fastHostB             // may appear in a host that needs no change: a-z 0-9 . -
	fastQuote             // "'", which the special-query set encodes
	fastDot               // ".", which may start a dot segment
	fastHash              // "#"
	fastPct               // "%", which must start a valid escape
)

var fastClass = func() (t [256]uint8) {
	for i := range t {
		t[i] = fastBad
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = fastHostB
		t[c-'a'+'A'] = 0
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = fastHostB
	}
	t['.'] = fastHostB | fastDot
	t['-'] = fastHostB
	// The other URL code points, without "%" (an escape may need its case
	// or meaning changed) and "\" (a separator in special URLs).
	for _, c := range "!$&()*+,/:;=?@_~" {
		t[c] = 0
	}
	t['\''] = fastQuote
	t['#'] = fastHash
	t['%'] = fastPct
	return t
}()

// fastClassify returns the union of the fast-path classes of the bytes of
// s, four at a time.
func fastClassify(s string) uint8 {
	var m0, m1, m2, m3 uint8
	i := 0
	for ; i+4 <= len(s); i += 4 {
		t := s[i : i+4]
		m0 |= fastClass[t[0]]
		m1 |= fastClass[t[1]]
		m2 |= fastClass[t[2]]
		m3 |= fastClass[t[3]]
	}
	for ; i < len(s); i++ {
		m0 |= fastClass[s[i]]
	}
	return m0 | m1 | m2 | m3
}

// fastParse fills u with the components of s and reports true when s needs
// no parse step at all; otherwise it reports false and u is to be ignored.
func (r *run) fastParse(s string, u *url) bool {
	var rest string
	switch {
	case strings.HasPrefix(s, "https://"):
		u.scheme, rest = "https", s[len("https://"):]
	case strings.HasPrefix(s, "http://"):
		u.scheme, rest = "http", s[len("http://"):]
	default:
		return false
	}
	if !r.p.acceptsScheme(u.scheme) {
		return false
	}
	i := 0
	for i < len(rest) && fastClass[rest[i]]&fastHostB != 0 {
		// No Punycode label: it would need validating.
		if rest[i] == 'x' && (i == 0 || rest[i-1] == '.') && strings.HasPrefix(rest[i:], "xn--") {
			return false
		}
		i++
	}
	// The host must be followed by the path: no userinfo, no port, no
	// empty path.
	if i == 0 || i == len(rest) || rest[i] != '/' {
		return false
	}
	host := rest[:i]
	// Not a host that ends in a number (an IPv4 address: every IPv4 part
	// starts with a digit).
	last := host[strings.LastIndexByte(strings.TrimSuffix(host, "."), '.')+1:]
	if last == "" || last[0] <= '9' {
		return false
	}
	p := rest[i:]
	m := fastClassify(p)
	if m&fastBad != 0 {
		return false
	}
	end := len(p)
	if m&fastHash != 0 {
		h := strings.IndexByte(p, '#')
		if strings.IndexByte(p[h+1:], '#') >= 0 {
			return false // "#" in a fragment is an invalid URL unit
		}
		u.hash, u.rawFrag, end = p[h:], p[h+1:], h
	}
	pathEnd := end
	if q := strings.IndexByte(p[:end], '?'); q >= 0 {
		if m&fastQuote != 0 && strings.IndexByte(p[q:end], '\'') >= 0 {
			return false // the special-query set encodes "'"
		}
		u.search, pathEnd = p[q:end], q
	}
	u.host, u.path = host, p[:pathEnd]
	if m&fastPct != 0 {
		// Every "%" must start an escape (else invalid-percent-escape),
		// and "%2e" segments are dot segments.
		if firstBadPercent(p) >= 0 || hasDotSegment(u.path) {
			return false
		}
		u.pathPct = strings.IndexByte(u.path, '%') >= 0
		u.searchPct = strings.IndexByte(u.search, '%') >= 0
	} else if m&fastDot != 0 && hasDotSegmentASCII(u.path) {
		return false
	}
	return true
}
