package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/model"
)

// RecordError says what is wrong with one input line: the file, the line,
// the field (a JSON path such as "retrieval.hops[1].status") and why.
type RecordError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *RecordError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// ParseRecord decodes and validates one JSON line. Unknown fields are an
// error, not silently dropped: everything given must be stored. So are a
// field given twice, a field name in another case than the known one, text
// that is not valid UTF-8 and lone surrogate escapes such as "\uD800":
// the decoder would keep one of the values, or replace the text by U+FFFD,
// and the stored evidence would not be what the input said.
func ParseRecord(line []byte, file string, lineNo int) (*model.Record, error) {
	fail := func(field, format string, args ...any) error {
		return &RecordError{File: file, Line: lineNo, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if msg := notAnObject(line); msg != "" {
		return nil, fail("", "%s", msg)
	}
	if p := scanLine(line); p != nil {
		return nil, fail(p.field, "%s", p.msg)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var r model.Record
	if err := dec.Decode(&r); err != nil {
		msg := jsonErrorMessage(err)
		if err == io.ErrUnexpectedEOF {
			msg += "; ingest expects JSON Lines, one whole object per line (pretty-printed JSON? compact it, e.g. with jq -c .)"
		}
		return nil, fail(jsonErrorField(err), "%s", msg)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail("", "more than one JSON value on the line")
	}
	if r.RawURL == nil {
		return nil, fail("raw_url", "required field is missing")
	}
	if r.ObservedAt == "" {
		return nil, fail("observed_at", "required field is missing")
	}
	if err := checkTime(r.ObservedAt); err != nil {
		return nil, fail("observed_at", "%v", err)
	}
	if r.Position != "" {
		if err := checkInteger(r.Position, 0, 1<<31); err != nil {
			return nil, fail("position", "%v", err)
		}
	}
	if r.Retrieval != nil {
		rt := r.Retrieval
		if rt.RetrievedAt != "" {
			if err := checkTime(rt.RetrievedAt); err != nil {
				return nil, fail("retrieval.retrieved_at", "%v", err)
			}
		}
		if rt.FinalStatus != "" {
			if err := checkInteger(rt.FinalStatus, 100, 599); err != nil {
				return nil, fail("retrieval.final_status", "%v", err)
			}
		}
		for i, h := range rt.Hops {
			f := fmt.Sprintf("retrieval.hops[%d]", i)
			if h.From == "" {
				return nil, fail(f+".from", "required field is missing")
			}
			if h.To == "" {
				return nil, fail(f+".to", "required field is missing")
			}
			if h.Status == "" {
				return nil, fail(f+".status", "required field is missing")
			}
			if err := checkInteger(h.Status, 100, 599); err != nil {
				return nil, fail(f+".status", "%v", err)
			}
			if h.At != "" {
				if err := checkTime(h.At); err != nil {
					return nil, fail(f+".at", "%v", err)
				}
			}
		}
		if rt.CanonicalDropped < 0 {
			return nil, fail("retrieval.canonical_dropped", "%d is negative", rt.CanonicalDropped)
		}
		for i, c := range rt.Canonical {
			f := fmt.Sprintf("retrieval.canonical[%d]", i)
			if c.URL == "" {
				return nil, fail(f+".url", "required field is missing")
			}
			if !contains(model.CanonicalSources, c.Source) {
				return nil, fail(f+".source", "%q is not one of %s", c.Source, strings.Join(model.CanonicalSources, ", "))
			}
		}
	}
	for i, rel := range r.Relations {
		f := fmt.Sprintf("relations[%d]", i)
		if _, ok := model.RelationKindNamed(rel.Type); !ok {
			return nil, fail(f+".type", "%q is not one of %s", rel.Type, relationNames())
		}
		if rel.Target == "" {
			return nil, fail(f+".target", "required field is missing")
		}
		if rel.Format != "" && !contains(model.Formats, rel.Format) {
			return nil, fail(f+".format", "%q is not one of %s", rel.Format, strings.Join(model.Formats, ", "))
		}
		if rel.CapturedAt != "" {
			if err := checkTime(rel.CapturedAt); err != nil {
				return nil, fail(f+".captured_at", "%v", err)
			}
		}
	}
	return &r, nil
}

// relationNames lists the relation kinds' names for an error message.
func relationNames() string {
	var names []string
	for _, k := range model.RelationKinds {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkTime accepts an RFC 3339 timestamp whose lexical form is also a valid
// xsd:dateTime: uppercase "T" and "Z", and an explicit offset so that the
// instant is unambiguous. The text is stored as given, never reformatted.
func checkTime(s string) error {
	if strings.ContainsAny(s, "tz") {
		if _, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s)); err == nil {
			return fmt.Errorf("%q: write \"T\" and \"Z\" in uppercase (RFC 3339 as xsd:dateTime)", s)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("%q is not an RFC 3339 timestamp such as 2025-01-01T12:00:00Z", s)
	}
	// XSD 1.1 Part 2 §D.3.3 timezoneFrag: an offset is at most 14:00 either
	// way, so a wider one would be an ill-typed xsd:dateTime in every export.
	if _, off := t.Zone(); off > 14*3600 || off < -14*3600 {
		return fmt.Errorf("%q: the offset %s is outside -14:00..+14:00, the range xsd:dateTime allows", s, s[len(s)-6:])
	}
	if strings.ContainsAny(s, "tz ") {
		return fmt.Errorf("%q: write \"T\" and \"Z\" in uppercase (RFC 3339 as xsd:dateTime)", s)
	}
	return nil
}

// checkInteger accepts a JSON number that is a plain integer (no fraction,
// exponent or sign) within [lo, hi].
func checkInteger(n model.Integer, lo, hi int64) error {
	s := string(n)
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return fmt.Errorf("%s is not a whole number", s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		return fmt.Errorf("%s is out of range %d..%d", s, lo, hi)
	}
	return nil
}

// jsonErrorField names the field a decoding error concerns, when known.
func jsonErrorField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

func jsonErrorMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		got := te.Value
		if strings.HasPrefix(got, "number") {
			got = "number" // "number 1.5": the value is in the line already
		} else if got == "bool" {
			got = "boolean"
		}
		return fmt.Sprintf("must be a JSON %s, got %s %s", jsonTypeName(te.Type.String()), article(got), got)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, err)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + f + " (the fields are listed in README.md)"
	}
	if err == io.EOF {
		return "empty line"
	}
	if err == io.ErrUnexpectedEOF {
		return "invalid JSON: the line ends inside a JSON value"
	}
	return strings.TrimPrefix(msg, "json: ")
}

func jsonTypeName(t string) string {
	switch {
	case t == "string" || t == "*string":
		return "string"
	case t == "model.Integer":
		return "integer"
	case strings.HasPrefix(t, "[]"):
		return "array"
	default:
		return "object"
	}
}

func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}

// notAnObject explains a line that is not a JSON object, which is most
// often a whole file in another format: CSV, a JSON array, or JSON
// pretty-printed over several lines.
func notAnObject(line []byte) string {
	line = bytes.TrimLeft(line, " \t\r\n")
	switch {
	case len(line) == 0:
		return "" // the decoder says "empty line"
	case line[0] == '{':
		return ""
	case bytes.HasPrefix(line, []byte("\uFEFF")):
		return "the line starts with a byte-order mark (U+FEFF), which only the first line of the file may have; remove it (files joined with cat?)"
	case line[0] == '[':
		return "the line is a JSON array; ingest expects JSON Lines, one citation object per line (convert an array with jq -c '.[]')"
	case line[0] == '<', line[0] == '_' && bytes.HasPrefix(line, []byte("_:")), line[0] == '@' && (bytes.HasPrefix(line, []byte("@prefix")) || bytes.HasPrefix(line, []byte("@base"))):
		return fmt.Sprintf("the line starts with %q, as RDF does (N-Quads, N-Triples, Turtle); ingest reads JSON Lines unless told: give --format nq, nt or ttl", firstRune(line))
	default:
		return fmt.Sprintf("the line starts with %q, not \"{\"; ingest expects JSON Lines, one citation object per line (a CSV file, or pretty-printed JSON?)", firstRune(line))
	}
}

func firstRune(b []byte) string {
	r, _ := utf8.DecodeRune(b)
	return string(r)
}
