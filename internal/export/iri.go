package export

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// IRIError reports a stored IRI that no repair can make an absolute IRI
// (RFC 3987 §2.2): it has no scheme, or its port is not a number. provgraph
// never mints such IRIs (every URL it is given is a literal); they can only
// come from RDF loaded from elsewhere.
type IRIError struct {
	IRI    string
	Reason string
}

func (e *IRIError) Error() string {
	return fmt.Sprintf("export: stored IRI %q is not an absolute IRI (RFC 3987) and cannot be repaired: %s", e.IRI, e.Reason)
}

// iriClass says which ASCII bytes may stand as themselves in an IRI
// (RFC 3987 §2.2: iunreserved, sub-delims, gen-delims and "%"). The
// structural delimiters among them ("#", "%", "[", "]") are checked where
// they stand.
var iriClass = func() (t [128]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&'()*+,;=:/?#[]@%" {
		t[c] = true
	}
	return t
}()

// ucschar reports whether r may appear outside the query (RFC 3987 §2.2
// ucschar); inQuery also admits iprivate.
func ucschar(r rune, inQuery bool) bool {
	switch {
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0x10000 && r <= 0xEFFFD:
		return r&0xFFFF <= 0xFFFD // not the last two code points of a plane
	case inQuery && (r >= 0xE000 && r <= 0xF8FF || r >= 0xF0000 && r <= 0xFFFFD || r >= 0x100000 && r <= 0x10FFFD):
		return true
	}
	return false
}

// iriOK is the fast check: s is an absolute IRI made of ASCII characters
// that stand as themselves, with no structural problem. Every IRI provgraph
// mints passes it.
func iriOK(s string) bool {
	colon, hash := -1, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || !iriClass[c] {
			return false
		}
		switch c {
		case ':':
			if colon < 0 {
				colon = i
			}
		case '#':
			if hash {
				return false
			}
			hash = true
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
		case '[', ']':
			return false // let RepairIRI look at these
		}
	}
	return colon > 0 && validScheme(s[:colon]) && validAuthority(s[colon+1:]) == ""
}

// validScheme reports whether s is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// authority returns the authority of the hierarchical part rest (the text
// after "scheme:"), or ok false when there is none.
func authority(rest string) (auth string, ok bool) {
	if !strings.HasPrefix(rest, "//") {
		return "", false
	}
	auth = rest[2:]
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	return auth, true
}

// validAuthority checks the port of the authority in rest, if any, and
// returns why it is invalid ("" when it is not). Other authority problems
// are repaired by percent-encoding.
func validAuthority(rest string) string {
	auth, ok := authority(rest)
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return "unclosed IP literal"
		}
		auth = auth[end+1:]
		if auth != "" && auth[0] != ':' {
			return "text after the IP literal"
		}
	}
	if i := strings.LastIndexByte(auth, ':'); i >= 0 {
		for _, c := range []byte(auth[i+1:]) {
			if c < '0' || c > '9' {
				return fmt.Sprintf("port %q is not a number", auth[i+1:])
			}
		}
	}
	return ""
}

// RepairIRI returns s as an absolute IRI valid per RFC 3987, and whether it
// had to change it. A character that cannot stand in an IRI (a space, a
// control, one of <>"{}|^`\, a code point outside ucschar, a "%" not
// followed by two hex digits, a second "#", a "[" or "]" outside an IP
// literal) is percent-encoded as its UTF-8 bytes (RFC 3987 §3.1), which is
// what a browser does with such a character in a URL. An IRI without a
// scheme or with a port that is not a number cannot be repaired: that is an
// *IRIError.
func RepairIRI(s string) (string, bool, error) {
	if iriOK(s) {
		return s, false, nil
	}
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !validScheme(s[:colon]) {
		return s, false, &IRIError{IRI: s, Reason: "no scheme"}
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:colon+1])
	rest := s[colon+1:]
	// The IP literal's brackets are the only ones allowed.
	ipStart, ipEnd := -1, -1
	if auth, ok := authority(rest); ok {
		host := auth
		at := strings.LastIndexByte(host, '@')
		if at >= 0 {
			host = host[at+1:]
		}
		if strings.HasPrefix(host, "[") {
			if end := strings.IndexByte(host, ']'); end >= 0 {
				ipStart = 2 + at + 1
				ipEnd = ipStart + end
			}
		}
	}
	inQuery, inFragment := false, false
	const hex = "0123456789ABCDEF"
	enc := func(p []byte) {
		for _, c := range p {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	for i := 0; i < len(rest); {
		c := rest[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(rest[i:])
			if r != utf8.RuneError && ucschar(r, inQuery && !inFragment) {
				b.WriteString(rest[i : i+n])
			} else {
				enc([]byte(rest[i : i+n]))
			}
			i += n
			continue
		}
		switch {
		case !iriClass[c]:
			enc([]byte{c})
		case c == '%':
			if i+2 < len(rest) && isHex(rest[i+1]) && isHex(rest[i+2]) {
				b.WriteByte('%')
			} else {
				b.WriteString("%25")
			}
		case c == '#':
			if inFragment {
				b.WriteString("%23")
			} else {
				inFragment = true
				b.WriteByte('#')
			}
		case c == '?':
			if !inFragment {
				inQuery = true
			}
			b.WriteByte('?')
		case c == '[' || c == ']':
			if i == ipStart || i == ipEnd {
				b.WriteByte(c)
			} else {
				enc([]byte{c})
			}
		default:
			b.WriteByte(c)
		}
		i++
	}
	out := b.String()
	if why := validAuthority(out[colon+1:]); why != "" {
		return s, false, &IRIError{IRI: s, Reason: why}
	}
	return out, out != s, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
