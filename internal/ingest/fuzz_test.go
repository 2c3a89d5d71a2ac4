package ingest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
)

// FuzzParseRecord checks that ParseRecord never panics and that a line it
// accepts loses nothing to the decoder's leniency (issues 19.4, 19.5): the
// line is valid UTF-8, no object repeats a key, no key is a case variant
// of a field name, and U+FFFD appears in a value only where the line wrote
// it. The key check walks the line with json.Decoder's tokens, apart from
// ParseRecord's own scan.
func FuzzParseRecord(f *testing.F) {
	example, err := os.ReadFile("../../testdata/citations.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(example, []byte("\n")) {
		f.Add(line)
	}
	for _, s := range []string{
		`{"raw_url":"a","raw_url":"b","observed_at":"2025-01-01T00:00:00Z"}`,
		`{"raw_url":"a","RAW_URL":"b","observed_at":"2025-01-01T00:00:00Z"}`,
		`{"raw_url":"a\uD800","observed_at":"2025-01-01T00:00:00Z"}`,
		`{"raw_url":"a\ud83d\ude00\ufffd","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b","status":301}]}}`,
		"{\"raw_url\":\"a\xff\",\"observed_at\":\"2025-01-01T00:00:00Z\"}",
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"format_of","target":"t","format":"amp"}]}`,
	} {
		f.Add([]byte(s))
	}
	names := fieldNames(reflect.TypeOf(model.Record{}), map[string]bool{})
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ingest.ParseRecord(line, "in.jsonl", 1)
		if err != nil {
			var re *ingest.RecordError
			if !errors.As(err, &re) {
				t.Fatalf("ParseRecord(%q) = %v, want a *RecordError", line, err)
			}
			return
		}
		if !utf8.Valid(line) {
			t.Fatalf("ParseRecord accepted %q, which is not valid UTF-8", line)
		}
		if err := checkKeys(line, names); err != nil {
			t.Fatalf("ParseRecord accepted %q: %v", line, err)
		}
		b, _ := json.Marshal(r)
		lower := strings.ToLower(string(line))
		if bytes.Contains(b, []byte("\ufffd")) && !strings.Contains(lower, "\ufffd") && !strings.Contains(lower, `\ufffd`) {
			t.Fatalf("ParseRecord accepted %q and made U+FFFD: %s", line, b)
		}
	})
}

// fieldNames collects the json names of the fields of t and its nested
// record types.
func fieldNames(t reflect.Type, names map[string]bool) map[string]bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names[name] = true
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			fieldNames(ft, names)
		}
	}
	return names
}

// checkKeys walks the first JSON value of line and reports a repeated key
// in an object, or a key that differs from a field name only in case.
func checkKeys(line []byte, names map[string]bool) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	type frame struct {
		object    bool
		expectKey bool
		keys      map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // ParseRecord accepted only the first value
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return nil
				}
				continue
			}
			key := tok.(string)
			if top.keys[key] {
				return errors.New("key " + key + " repeated")
			}
			top.keys[key] = true
			if !names[key] {
				for n := range names {
					if strings.EqualFold(n, key) {
						return errors.New("key " + key + " is a case variant of " + n)
					}
				}
			}
			top.expectKey = false
			continue
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, &frame{object: true, expectKey: true, keys: map[string]bool{}})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			case ']', '}':
				stack = stack[:len(stack)-1]
			}
		}
		if len(stack) == 0 {
			return nil
		}
		if top := stack[len(stack)-1]; top.object {
			top.expectKey = true
		}
	}
}
