package normalize

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// This file turns problems in a policy file into errors a policy author can
// act on: the line of the key concerned, the expected type in the policy's
// own terms rather than Go's, and the nearest known name for a misspelt rule
// or key.

// MaxPolicyBytes is the largest policy file LoadPolicy reads. The built-in
// policies are under 10 KiB; the limit keeps a wrong path (--policy
// /dev/zero, a database file) from being read into memory without end.
const MaxPolicyBytes = 1 << 20

// keyLocator finds the line of a key in a policy file that parsed. It
// decodes the file a second time into toml.Primitive values and decodes the
// wanted one into a value that always fails: the library's ParseError then
// carries the key's position, which MetaData does not otherwise expose.
type keyLocator struct {
	text string
	md   toml.MetaData
	top  map[string]toml.Primitive
	ok   bool
}

func newKeyLocator(data []byte) *keyLocator {
	l := &keyLocator{text: string(data)}
	md, err := toml.Decode(l.text, &l.top)
	l.md, l.ok = md, err == nil
	return l
}

// errLineProbe is what lineProbe fails with; only its position is used.
var errLineProbe = errors.New("line probe")

type lineProbe struct{}

func (lineProbe) UnmarshalTOML(any) error { return errLineProbe }

// line returns the 1-based line of the key at path (strings for keys, ints
// for the elements of an array of tables), or 0 when it cannot be found.
// The library records one position per key name, not per element of an
// array of tables, so an element is placed by its "[[name]]" header.
func (l *keyLocator) line(path ...any) int {
	if l == nil || !l.ok || len(path) == 0 {
		return 0
	}
	var keys []string
	for i, p := range path {
		switch p := p.(type) {
		case string:
			keys = append(keys, p)
		case int:
			n := l.header(keys, p)
			if n == 0 {
				return l.keyLine(keys)
			}
			if k, ok := path[len(path)-1].(string); ok && i == len(path)-2 {
				if kn := l.keyInSection(n, k); kn > 0 {
					return kn
				}
			}
			return n
		}
	}
	return l.keyLine(keys)
}

// keyInSection returns the line of "key =" in the table whose header is on
// line header, or 0.
func (l *keyLocator) keyInSection(header int, key string) int {
	lines := strings.Split(l.text, "\n")
	for i := header; i < len(lines); i++ {
		s := strings.TrimSpace(lines[i])
		if strings.HasPrefix(s, "[") {
			return 0
		}
		rest, ok := strings.CutPrefix(s, key)
		if !ok {
			rest, ok = strings.CutPrefix(s, `"`+key+`"`)
		}
		if ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
			return i + 1
		}
	}
	return 0
}

func (l *keyLocator) keyLine(keys []string) int {
	if len(keys) == 0 {
		return 0
	}
	cur, ok := l.top[keys[0]]
	if !ok {
		return 0
	}
	for _, k := range keys[1:] {
		// An array of tables first: decoding one into a map succeeds, empty.
		var arr []map[string]toml.Primitive
		if err := l.md.PrimitiveDecode(cur, &arr); err == nil {
			found := false
			for _, t := range arr {
				if p, ok := t[k]; ok {
					cur, found = p, true
					break
				}
			}
			if !found {
				return 0
			}
			continue
		}
		var m map[string]toml.Primitive
		if err := l.md.PrimitiveDecode(cur, &m); err != nil {
			return 0
		}
		if cur, ok = m[k]; !ok {
			return 0
		}
	}
	var pe toml.ParseError
	if errors.As(l.md.PrimitiveDecode(cur, &lineProbe{}), &pe) {
		return pe.Position.Line
	}
	return 0
}

// header returns the line of the n-th (0-based) "[[name]]" header, where
// name is keys joined by dots, or 0.
func (l *keyLocator) header(keys []string, n int) int {
	name := strings.Join(keys, ".")
	for i, s := range strings.Split(l.text, "\n") {
		s = strings.TrimSpace(s)
		rest, ok := strings.CutPrefix(s, "[[")
		if !ok {
			continue
		}
		end := strings.Index(rest, "]]")
		if end < 0 {
			continue
		}
		h := strings.NewReplacer(" ", "", "\t", "", `"`, "", "'", "").Replace(rest[:end])
		if h != name {
			continue
		}
		if n == 0 {
			return i + 1
		}
		n--
	}
	return 0
}

// shape is the TOML type a key of a policy file takes, named as the file
// format's documentation names it.
type shape struct {
	want   string           // "a string", "an integer port number", ...
	check  func(any) bool   // for a leaf
	fields map[string]shape // for a table with known keys
	values *shape           // for a table whose keys are free (rules, default_ports)
	elems  *shape           // for an array of tables
}

// foldedName returns the known key of s that k names: itself, or the one
// it matches ignoring letter case.
func foldedName(s shape, k string) string {
	if _, ok := s.fields[k]; ok {
		return k
	}
	for name := range s.fields {
		if strings.EqualFold(name, k) {
			return name
		}
	}
	return ""
}

// field returns the shape of key k of a table, matched as the TOML
// library matches struct fields: exactly, or else ignoring letter case.
func (s shape) field(k string) (shape, bool) {
	if f, ok := s.fields[k]; ok {
		return f, true
	}
	for name, f := range s.fields {
		if strings.EqualFold(name, k) {
			return f, true
		}
	}
	return shape{}, false
}

func isString(v any) bool { _, ok := v.(string); return ok }
func isInt(v any) bool    { _, ok := v.(int64); return ok }
func isStrings(v any) bool {
	a, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range a {
		if !isString(e) {
			return false
		}
	}
	return true
}

var (
	stringShape = shape{want: "a string in quotes", check: isString}
	paramShape  = shape{want: `a list of tables, each with name and reason`, fields: map[string]shape{
		"name":   stringShape,
		"reason": stringShape,
	}}
	// policyShape is the shape of a policy file (policyFile).
	policyShape = shape{want: "a table", fields: map[string]shape{
		"name":            stringShape,
		"version":         stringShape,
		"description":     stringShape,
		"schemes":         {want: `a list of scheme names, such as ["http", "https"]`, check: isStrings},
		"default_ports":   {want: "a table of scheme = port lines, such as [default_ports] with https = 443", values: &shape{want: "an integer port number, such as 443 (no quotes)", check: isInt}},
		"rules":           {want: "a table of rule = action lines, under [rules]", values: &shape{want: `an action in quotes: "apply", "reject" or "off"`, check: isString}},
		"tracking_params": {want: "a list of tables, each under its own [[tracking_params]] header, with name and reason", elems: &paramShape},
		"host": {want: "a list of tables, each under its own [[host]] header", elems: &shape{fields: map[string]shape{
			"name":           stringShape,
			"hosts":          {want: `a list of hostnames, such as ["example.com", "*.example.com"]`, check: isStrings},
			"path_case":      {want: `"insensitive" or "sensitive" in quotes`, check: isString},
			"trailing_slash": {want: `"insensitive" or "sensitive" in quotes`, check: isString},
			"drop_params":    {want: "a list of tables, each under its own [[host.drop_params]] header, with name and reason", elems: &paramShape},
			"reason":         stringShape,
		}}},
	}}
)

// describe names the TOML type of a decoded value.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("%v (a boolean)", v)
	case time.Time:
		return "a date or time"
	case []map[string]any:
		return "a list of tables"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return "a date or time" // the library's local date and time types
}

// checkShape reports the first key of v (at path) whose value does not have
// the shape s wants, with its line. Keys the shape does not know are left to
// the unknown-key check.
func checkShape(v any, s shape, path []any, at func(path ...any) int, source string) error {
	bad := func() error {
		return &PolicyError{Source: source, Line: at(path...),
			Msg: fmt.Sprintf("%s: want %s, not %s", keyName(path), s.want, describe(v))}
	}
	switch {
	case s.check != nil:
		if !s.check(v) {
			return bad()
		}
	case s.elems != nil:
		var tables []map[string]any
		switch a := v.(type) {
		case []map[string]any:
			tables = a
		case []any:
			for _, e := range a {
				t, ok := e.(map[string]any)
				if !ok {
					return bad()
				}
				tables = append(tables, t)
			}
		default:
			return bad()
		}
		for i, t := range tables {
			if err := checkShape(t, *s.elems, append(path[:len(path):len(path)], i), at, source); err != nil {
				return err
			}
		}
	default:
		t, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		// Sorted, so that the error reported does not vary between runs.
		var named map[string]string // known key -> the file's spelling of it
		for _, k := range slices.Sorted(maps.Keys(t)) {
			sub := s.values
			if sub == nil {
				f, ok := s.field(k)
				if !ok {
					continue
				}
				// The TOML library decodes a key into the field it names
				// ignoring letter case; two keys of one table naming the
				// same field would leave which one wins to map order, so
				// a policy's meaning (and digest) would vary between runs.
				name := foldedName(s, k)
				if other, dup := named[name]; dup {
					odd := k // the line named is the variant's, not the exact key's
					if k == name {
						odd = other
					}
					return &PolicyError{Source: source, Line: at(append(path[:len(path):len(path)], odd)...),
						Msg: fmt.Sprintf("keys %q and %q both name %q (keys match it ignoring letter case): keep one", keyName(append(path[:len(path):len(path)], other)), keyName(append(path[:len(path):len(path)], k)), name)}
				}
				if named == nil {
					named = map[string]string{}
				}
				named[name] = k
				sub = &f
			}
			if err := checkShape(t[k], *sub, append(path[:len(path):len(path)], k), at, source); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyName writes a key path as the file would: rules.sort-query,
// host[1].hosts.
func keyName(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		}
	}
	return b.String()
}

// fieldsAt returns the known keys of the table at a key path (as the
// library's Undecoded reports it, without array indexes), for suggestions.
func fieldsAt(key toml.Key) []string {
	s := policyShape
	for _, k := range key {
		f, ok := s.fields[k]
		if !ok {
			return nil
		}
		s = f
		if s.elems != nil {
			s = *s.elems
		}
	}
	var out []string
	for k := range s.fields {
		out = append(out, k)
	}
	return out
}

// didYouMean returns ` (did you mean "x"?)` for the known name nearest to
// name (see nearest), or "".
func didYouMean(name string, known []string) string {
	if n := nearest(name, known); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

// nearest returns the known name nearest to name when it is near enough to
// be a misspelling of it, or "".
func nearest(name string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		d := EditDistance(strings.ToLower(name), strings.ToLower(k))
		if best == "" || d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	// Two edits, more for long names: "sort-qurey" and "tracking_param"
	// are typos; "lowercase-path" is not "lowercase-host".
	if best == "" || bestD > max(2, len(name)/5) || name == best {
		return ""
	}
	return best
}

// EditDistance is the optimal string alignment distance of two short
// strings, in bytes: an insertion, a deletion, a substitution or a
// transposition of two adjacent bytes each counts one, so "sort-qurey" is
// one edit from "sort-query". Callers compare lower-cased names. It lives
// here, beside the policy diagnostics that need it, and ingest's unknown
// field hints use it too.
func EditDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
