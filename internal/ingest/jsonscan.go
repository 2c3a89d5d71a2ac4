package ingest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
)

// shape is the set of field names one JSON object of the input may have,
// read from the json tags of the Go type that decodes it, so that the two
// cannot drift apart.
type shape struct {
	fields []shapeField
}

type shapeField struct {
	name  string
	child *shape // the shape of an object value, or of an array's objects
}

// recordShape is the shape of one input line.
var recordShape = shapeOf(reflect.TypeOf(model.Record{}))

func shapeOf(t reflect.Type) *shape {
	s := &shape{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		sf := shapeField{name: name}
		if ft.Kind() == reflect.Struct {
			sf.child = shapeOf(ft)
		}
		s.fields = append(s.fields, sf)
	}
	if len(s.fields) > 64 {
		panic("ingest: a record object has more than 64 fields") // the seen mask in object is a uint64
	}
	return s
}

// index returns the position of the field named exactly key, or -1.
func (s *shape) index(key []byte) int {
	for i := range s.fields {
		if s.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

// suggest returns the known field an unknown key was probably meant to be,
// or "": one that differs only in case (encoding/json would silently take
// it), in "_" and "-", by at most two edits, or that has the key as one of
// its "_"-separated words ("url" for "raw_url").
func (s *shape) suggest(key string) string {
	for _, f := range s.fields {
		if strings.EqualFold(f.name, key) {
			return f.name
		}
	}
	squash := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
	}
	k := squash(key)
	best, bestDist := "", 3
	for _, f := range s.fields {
		if squash(f.name) == k {
			return f.name
		}
		if d := normalize.EditDistance(strings.ToLower(key), f.name); d < bestDist && d < len(f.name) {
			best, bestDist = f.name, d
		}
	}
	if best != "" {
		return best
	}
	for _, f := range s.fields {
		for _, w := range strings.Split(f.name, "_") {
			if w == strings.ToLower(key) {
				return f.name
			}
		}
	}
	return ""
}

// lineProblem is what scanLine found wrong with a line: the field (a JSON
// path, or "" for the line) and why.
type lineProblem struct {
	field string
	msg   string
}

// scanLine checks, in one pass over the raw bytes of a JSON line, what
// encoding/json would let through silently and so lose or change evidence:
//   - text that is not valid UTF-8, and \uD800-\uDFFF escapes that do not
//     form a pair (both would become U+FFFD);
//   - a field given twice (the decoder keeps the last), and a field name
//     that differs from a known one only in case (the decoder matches
//     names case-insensitively, so "RAW_URL" would fill raw_url);
//   - an unknown field, which it names with a suggestion.
//
// Anything else malformed is left to the decoder, which reports JSON syntax
// and type errors: when the scan meets a syntax error it stops and reports
// nothing.
func scanLine(line []byte) *lineProblem {
	s := scanner{b: line}
	s.ws()
	s.value(recordShape)
	return s.problem
}

type scanner struct {
	b []byte
	i int
	// path holds the fields and array elements around the position, up to
	// depth. It is an array, not a slice, so that a scan allocates nothing.
	path    [maxDepth]pathElem
	depth   int
	problem *lineProblem
	stop    bool // a problem was found, or a syntax error that the decoder reports
}

// pathElem is one step of a JSON path: a field name, or an array index
// when key is nil.
type pathElem struct {
	key   []byte
	index int
}

// special marks the bytes a string scan must look at: the closing quote,
// a backslash, control characters and the start of multi-byte UTF-8.
var special = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// maxDepth bounds the nesting the scan follows. The input's objects nest
// four deep (retrieval.hops[0].status); deeper nesting is a type error that
// the decoder reports.
const maxDepth = 8

func (s *scanner) push(e pathElem) bool {
	if s.depth == maxDepth {
		s.stop = true
		return false
	}
	s.path[s.depth] = e
	s.depth++
	return true
}

func (s *scanner) fail(field, format string, args ...any) {
	s.problem = &lineProblem{field: field, msg: fmt.Sprintf(format, args...)}
	s.stop = true
}

// pathString renders the current path, plus key when it is not nil, as
// RecordError.Field does: "retrieval.hops[1].status".
func (s *scanner) pathString(key []byte) string {
	var b strings.Builder
	for _, e := range s.path[:s.depth] {
		if e.key == nil {
			fmt.Fprintf(&b, "[%d]", e.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(e.key)
	}
	if key != nil {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(key)
	}
	return b.String()
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// value scans one JSON value; sh is its shape when it should be an object
// (or an array of objects) of the input, else nil.
func (s *scanner) value(sh *shape) {
	if s.i >= len(s.b) {
		s.stop = true
		return
	}
	switch s.b[s.i] {
	case '{':
		s.object(sh)
	case '[':
		s.array(sh)
	case '"':
		s.str()
	default:
		// A number, true, false or null: the decoder checks it.
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
			s.i++
		}
	}
}

func (s *scanner) array(sh *shape) {
	s.i++ // [
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return
	}
	for n := 0; !s.stop; n++ {
		if !s.push(pathElem{index: n}) {
			return
		}
		s.ws()
		s.value(sh)
		s.depth--
		s.ws()
		if s.stop || s.i >= len(s.b) {
			s.stop = true
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.stop = true
		}
	}
}

func (s *scanner) object(sh *shape) {
	s.i++ // {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return
	}
	var seen uint64
	for !s.stop {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			s.stop = true
			return
		}
		start := s.i + 1
		escaped := s.str()
		if s.stop {
			return
		}
		key := s.b[start : s.i-1]
		if escaped {
			// Rare: the decoder compares the unescaped name.
			var k string
			if json.Unmarshal(s.b[start-1:s.i], &k) != nil {
				s.stop = true
				return
			}
			key = []byte(k)
		}
		var child *shape
		if sh != nil {
			k := sh.index(key)
			switch {
			case k < 0:
				if hint := sh.suggest(string(key)); hint != "" {
					cased := ""
					if strings.EqualFold(hint, string(key)) {
						cased = "field names are case-sensitive: "
					}
					s.fail(s.pathString(nil), "unknown field %q (%sdid you mean %q?)", key, cased, hint)
				} else {
					s.fail(s.pathString(nil), "unknown field %q (the fields are listed in README.md)", key)
				}
				return
			case seen&(1<<k) != 0:
				s.fail(s.pathString(key), "the field is given more than once on the line; give each field once, so that no value is dropped")
				return
			}
			seen |= 1 << k
			child = sh.fields[k].child
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.stop = true
			return
		}
		s.i++
		s.ws()
		if !s.push(pathElem{key: key}) {
			return
		}
		s.value(child)
		s.depth--
		s.ws()
		if s.stop || s.i >= len(s.b) {
			s.stop = true
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.stop = true
		}
	}
}

// str scans a string starting at its opening quote and leaves s.i after the
// closing one. It reports whether the string has escapes. A problem names
// the current path: the value's field, or for a key the object's.
func (s *scanner) str() (escaped bool) {
	b := s.b
	i := s.i + 1
	for i < len(b) {
		c := b[i]
		if !special[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return escaped
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				s.stop = true
				return
			}
			if b[i+1] != 'u' {
				i += 2
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				s.stop = true // the decoder reports the bad escape
				return
			}
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if r2, ok := hex4(b, i+8); ok && b[i+6] == '\\' && b[i+7] == 'u' && r2 >= 0xDC00 && r2 < 0xE000 {
					i += 12
					continue
				}
				s.fail(s.pathString(nil), "%s at byte offset %d of the line is a lone UTF-16 surrogate, which encodes no character; the line is rejected rather than the escape replaced by U+FFFD: fix the producer's JSON encoder", b[i:i+6], i)
				return
			case r >= 0xDC00 && r < 0xE000:
				s.fail(s.pathString(nil), "%s at byte offset %d of the line is a lone UTF-16 surrogate, which encodes no character; the line is rejected rather than the escape replaced by U+FFFD: fix the producer's JSON encoder", b[i:i+6], i)
				return
			}
			i += 6
		case c < 0x20:
			s.stop = true // the decoder reports the control character
			return
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				s.fail(s.pathString(nil), "not valid UTF-8: byte 0x%02X at byte offset %d of the line; evidence is stored exactly or not at all, so the line is rejected rather than the byte replaced by U+FFFD: have the producer write UTF-8 (in a URL, percent-encode other bytes)", c, i)
				return
			}
			i += n
		}
	}
	s.stop = true // unterminated: the decoder reports it
	return escaped
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
