package normalize

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// paramMatcher matches query parameter names against exact names and
// "prefix*" patterns.
type paramMatcher struct {
	exact    map[string]bool
	byLen    [32][]string // exact names shorter than 32 bytes, by length
	long     bool         // some exact name is 32 bytes or longer
	prefixes []string
}

// entryError is an error about entry index of a list of a policy file.
type entryError struct {
	index int
	err   error
}

func (e *entryError) Error() string { return e.err.Error() }
func (e *entryError) Unwrap() error { return e.err }

func newParamMatcher(rules []ParamRule) (paramMatcher, error) {
	m := paramMatcher{exact: map[string]bool{}}
	for i, r := range rules {
		if r.Name == "" || r.Name == "*" {
			return m, &entryError{i, fmt.Errorf("entry %d: a name (or \"prefix*\") is required", i)}
		}
		if r.Reason == "" {
			return m, &entryError{i, fmt.Errorf("%q: missing reason: say why the parameter selects no content", r.Name)}
		}
		if strings.ContainsAny(r.Name, "&=#") {
			return m, &entryError{i, fmt.Errorf("%q: a parameter name cannot contain '&', '=' or '#'", r.Name)}
		}
		if p, ok := strings.CutSuffix(r.Name, "*"); ok {
			if strings.Contains(p, "*") {
				return m, &entryError{i, fmt.Errorf("%q: \"*\" is allowed only at the end", r.Name)}
			}
			m.prefixes = append(m.prefixes, p)
			continue
		}
		if strings.Contains(r.Name, "*") {
			return m, &entryError{i, fmt.Errorf("%q: \"*\" is allowed only at the end", r.Name)}
		}
		if m.exact[r.Name] {
			return m, &entryError{i, errors.New(r.Name + ": listed twice")}
		}
		m.exact[r.Name] = true
		if n := len(r.Name); n < len(m.byLen) {
			m.byLen[n] = append(m.byLen[n], r.Name)
		} else {
			m.long = true
		}
	}
	return m, nil
}

func (m *paramMatcher) empty() bool { return len(m.exact) == 0 && len(m.prefixes) == 0 }

func (m *paramMatcher) match(name string) bool {
	if n := len(name); n < len(m.byLen) {
		for _, e := range m.byLen[n] {
			if e == name {
				return true
			}
		}
	} else if m.long && m.exact[name] {
		return true
	}
	for _, p := range m.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// paramName returns the name part of one "name=value" query segment.
func paramName(seg string) string {
	if i := strings.IndexByte(seg, '='); i >= 0 {
		return seg[:i]
	}
	return seg
}

// dropParams removes the segments of search ("?" and a query) whose names m
// matches, keeping the order, duplicates and empty segments of the rest.
// out is prefix followed by the new search, which is empty when nothing
// remains, so the "?" goes too: built in one allocation, it can serve as the
// key. removed uses removedBuf when it is large enough.
func dropParams(search string, m *paramMatcher, prefix []byte, removedBuf []string) (out string, removed []string) {
	if m.empty() || len(search) < 2 {
		return search, nil
	}
	// One pass finds the segments to drop (most queries have none) and
	// remembers where each ends; queries of more than 32 segments take the
	// slow path.
	var ends [32]int32
	var hit uint64
	hits, n := 0, 0
	for start := 1; ; n++ {
		end := strings.IndexByte(search[start:], '&')
		if end < 0 {
			end = len(search)
		} else {
			end += start
		}
		name := search[start:end]
		if k := strings.IndexByte(name, '='); k >= 0 {
			name = name[:k]
		}
		if m.match(name) {
			hits++
			if n < len(ends) {
				hit |= 1 << n
			}
		}
		if n < len(ends) {
			ends[n] = int32(end)
		}
		if end == len(search) {
			n++
			break
		}
		start = end + 1
	}
	if hits == 0 {
		return search, nil
	}
	if n > len(ends) {
		s, removed := dropParamsSlow(search, m, hits)
		return string(prefix) + s, removed
	}
	if hits <= cap(removedBuf) {
		removed = removedBuf[:0]
	} else {
		removed = make([]string, 0, hits)
	}
	var sb [512]byte // a stack buffer for the usual URL; string(b) copies it once
	b := append(sb[:0], prefix...)
	for k, start := 0, 1; k < n; k++ {
		seg := search[start:int(ends[k])]
		if hit&(1<<k) != 0 {
			removed = append(removed, seg)
		} else {
			if len(b) == len(prefix) {
				b = append(b, '?')
			} else {
				b = append(b, '&')
			}
			b = append(b, seg...)
		}
		start = int(ends[k]) + 1
	}
	return string(b), removed
}

// dropParamsSlow is dropParams for queries with more than 32 segments.
func dropParamsSlow(search string, m *paramMatcher, hits int) (string, []string) {
	removed := make([]string, 0, hits)
	var b strings.Builder
	b.Grow(len(search))
	for rest := search[1:]; ; {
		seg, tail, more := strings.Cut(rest, "&")
		if m.match(paramName(seg)) {
			removed = append(removed, seg)
		} else {
			if b.Len() == 0 {
				b.WriteByte('?')
			} else {
				b.WriteByte('&')
			}
			b.WriteString(seg)
		}
		if !more {
			break
		}
		rest = tail
	}
	return b.String(), removed
}

// sortQuery orders query segments by name, stably, so equal names keep their
// relative order (their values may select different content together).
func sortQuery(query string) string {
	segs := strings.Split(query, "&")
	slices.SortStableFunc(segs, func(a, b string) int { return strings.Compare(paramName(a), paramName(b)) })
	return strings.Join(segs, "&")
}

// percentCase uppercases the hex digits of every valid percent-escape.
func percentCase(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b []byte
	for ; i+2 < len(s); i++ {
		if s[i] != '%' {
			j := strings.IndexByte(s[i:], '%')
			if j < 0 {
				break
			}
			i += j
			if i+2 >= len(s) {
				break
			}
		}
		if !isHex(s[i+1]) || !isHex(s[i+2]) {
			continue
		}
		for k := i + 1; k <= i+2; k++ {
			if c := s[k]; 'a' <= c && c <= 'f' {
				if b == nil {
					b = []byte(s)
				}
				b[k] = c - 'a' + 'A'
			}
		}
		i += 2
	}
	if b == nil {
		return s
	}
	return string(b)
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// decodeUnreserved decodes percent-escapes of unreserved characters and
// leaves every other escape as it is (RFC 3986 §6.2.2.2).
func decodeUnreserved(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b []byte
	for ; i < len(s); i++ {
		if b == nil && s[i] != '%' {
			j := strings.IndexByte(s[i:], '%')
			if j < 0 {
				break
			}
			i += j
		}
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			if c := unhex(s[i+1])<<4 | unhex(s[i+2]); isUnreserved(c) && !joinsStrayPercent(s, b, i, c) {
				if b == nil {
					b = append(make([]byte, 0, len(s)), s[:i]...)
				}
				b = append(b, c)
				i += 2
				continue
			}
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

// joinsStrayPercent reports whether decoding the escape at s[i:i+3] into c
// would turn a stray "%" before it (one not starting a valid escape, which a
// lenient policy tolerates) into a new escape: "%%41a" must not become "%Aa".
// out is the decoded prefix so far, or nil when nothing was decoded yet.
func joinsStrayPercent(s string, out []byte, i int, c byte) bool {
	if !isHex(c) {
		return false
	}
	var p1, p2 byte // the last and second-last bytes before the escape
	if out != nil {
		if n := len(out); n >= 1 {
			p1 = out[n-1]
			if n >= 2 {
				p2 = out[n-2]
			}
		}
	} else {
		if i >= 1 {
			p1 = s[i-1]
		}
		if i >= 2 {
			p2 = s[i-2]
		}
	}
	return p1 == '%' || p2 == '%' && isHex(p1)
}

// lowerPath lowercases ASCII letters of a path outside percent-escapes, so
// that the escapes keep their uppercase hex digits.
func lowerPath(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			i += 2
			continue
		}
		if 'A' <= c && c <= 'Z' {
			if b == nil {
				b = []byte(s)
			}
			b[i] = c + 'a' - 'A'
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}
