package ingest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/ingest"
)

func TestParseRecordErrors(t *testing.T) {
	for _, tc := range []struct {
		line      string
		wantField string
		wantMsg   string
	}{
		{`{"observed_at":"2025-01-01T00:00:00Z"}`, "raw_url", "required field is missing"},
		{`{"raw_url":"https://example.com/"}`, "observed_at", "required field is missing"},
		{`{"raw_url":"x","observed_at":"yesterday"}`, "observed_at", "not an RFC 3339 timestamp"},
		{`{"raw_url":"x","observed_at":"2025-01-01t00:00:00z"}`, "observed_at", "uppercase"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00"}`, "observed_at", "not an RFC 3339"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","position":3.5}`, "position", "not a whole number"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","position":-1}`, "position", "not a whole number"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","position":"3"}`, "position", "must be a JSON integer, got a string"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","raw":"y"}`, "", `unknown field "raw"`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z"`, "", "invalid JSON"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z"} {}`, "", "more than one JSON value"},
		{`{"raw_url":7,"observed_at":"2025-01-01T00:00:00Z"}`, "raw_url", "must be a JSON string, got a number"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b"}]}}`, "retrieval.hops[0].status", "required"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b","status":700}]}}`, "retrieval.hops[0].status", "out of range"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"final_status":"200"}}`, "retrieval.final_status", "must be a JSON integer, got a string"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"canonical":[{"url":"u","source":"meta"}]}}`, "retrieval.canonical[0].source", `"meta" is not one of`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"canonical_dropped":-1}}`, "retrieval.canonical_dropped", "negative"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"copy_of","target":"t"}]}`, "relations[0].type", `"copy_of" is not one of`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"format_of","target":"t","format":"epub"}]}`, "relations[0].format", `"epub"`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"archive_of","target":"t","captured_at":"2020"}]}`, "relations[0].captured_at", "RFC 3339"},
		{``, "", "empty line"},

		// Regression tests for issue 19.5: a repeated key, or one in another
		// case, would leave one value of two unstored.
		{`{"raw_url":"https://e.test/first","raw_url":"https://e.test/second","observed_at":"2025-01-01T00:00:00Z"}`, "raw_url", "given more than once"},
		{`{"raw_url":"https://e.test/a","RAW_URL":"https://e.test/b","observed_at":"2025-01-01T00:00:00Z"}`, "", `unknown field "RAW_URL" (field names are case-sensitive: did you mean "raw_url"?)`},
		{`{"Raw_Url":"https://e.test/a","observed_at":"2025-01-01T00:00:00Z"}`, "", `unknown field "Raw_Url" (field names are case-sensitive: did you mean "raw_url"?)`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b","status":301},{"from":"a","to":"b","status":301,"status":302}]}}`, "retrieval.hops[1].status", "given more than once"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"ſtatus":1}}`, "retrieval", `unknown field "ſtatus"`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"format_of","Target":"t"}]}`, "relations[0]", `did you mean "target"?`},
		{"{\"raw_\\u0075rl\":\"a\",\"raw_url\":\"b\",\"observed_at\":\"2025-01-01T00:00:00Z\"}", "raw_url", "given more than once"},

		// Issue 18.13: an unknown field gets a suggestion.
		{`{"url":"https://e.test/","observed_at":"2025-01-01T00:00:00Z"}`, "", `unknown field "url" (did you mean "raw_url"?)`},
		{`{"raw_url":"x","observed":"2025-01-01T00:00:00Z"}`, "", `did you mean "observed_at"?`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"form":"a"}]}}`, "retrieval.hops[0]", `unknown field "form" (did you mean "from"?)`},

		// Regression tests for issue 19.4: text that is not valid UTF-8, or a
		// lone surrogate escape, would be stored as U+FFFD.
		{"{\"raw_url\":\"https://e.test/caf\xe9\",\"observed_at\":\"2025-01-01T00:00:00Z\"}", "raw_url", "not valid UTF-8: byte 0xE9 at byte offset 30"},
		{`{"raw_url":"https://e.test/\uD800","observed_at":"2025-01-01T00:00:00Z"}`, "raw_url", `\uD800 at byte offset 27 of the line is a lone UTF-16 surrogate`},
		{`{"raw_url":"https://e.test/\udc00x","observed_at":"2025-01-01T00:00:00Z"}`, "raw_url", `lone UTF-16 surrogate`},
		{`{"raw_url":"https://e.test/\uD800\u0041","observed_at":"2025-01-01T00:00:00Z"}`, "raw_url", `lone UTF-16 surrogate`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b\uDFFF","status":301}]}}`, "retrieval.hops[0].to", `lone UTF-16 surrogate`},
		{"{\"raw_url\":\"x\",\"observed_at\":\"2025-01-01T00:00:00Z\",\"ques\xfftion\":\"q\"}", "", "not valid UTF-8: byte 0xFF"},

		// Regression test for issue 19.10: XSD limits offsets to ±14:00.
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00+23:59"}`, "observed_at", "offset +23:59 is outside -14:00..+14:00"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00-14:01"}`, "observed_at", "outside -14:00..+14:00"},

		// Issue 18.13: whole files in another format are named.
		{`raw_url,observed_at`, "", `the line starts with "r", not "{"; ingest expects JSON Lines, one citation object per line (a CSV file, or pretty-printed JSON?)`},
		{`<https://a.example/s> <https://a.example/p> "o" <https://a.example/g> .`, "", `as RDF does (N-Quads, N-Triples, Turtle); ingest reads JSON Lines unless told: give --format nq, nt or ttl`},
		{`@prefix prov: <http://www.w3.org/ns/prov#> .`, "", `give --format nq, nt or ttl`},
		{`_:b0 <https://a.example/p> "o" .`, "", `give --format nq, nt or ttl`},
		{`  "raw_url": "x",`, "", `starts with "\"", not "{"`},
		{`{`, "", "ingest expects JSON Lines, one whole object per line (pretty-printed JSON?"},
		{`[{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z"}]`, "", "the line is a JSON array; ingest expects JSON Lines, one citation object per line"},
		{"\uFEFF{}", "", "byte-order mark"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":[]}`, "retrieval", "must be a JSON object, got an array"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","position":true}`, "position", "must be a JSON integer, got a boolean"},
	} {
		_, err := ingest.ParseRecord([]byte(tc.line), "in.jsonl", 7)
		var re *ingest.RecordError
		if !errors.As(err, &re) {
			t.Errorf("ParseRecord(%s) = %v, want a *RecordError", tc.line, err)
			continue
		}
		if re.File != "in.jsonl" || re.Line != 7 || re.Field != tc.wantField || !strings.Contains(re.Msg, tc.wantMsg) {
			t.Errorf("ParseRecord(%s) = %q (field %q), want field %q and a message containing %q", tc.line, err, re.Field, tc.wantField, tc.wantMsg)
		}
		if !strings.HasPrefix(err.Error(), "in.jsonl:7: ") {
			t.Errorf("error %q does not start with file:line", err)
		}
	}
}

// TestParseRecordAccepts checks lines near the rejected ones above.
func TestParseRecordAccepts(t *testing.T) {
	for _, line := range []string{
		`{"raw_url":"https://e.test/\uD83D\uDE00 caf\u00e9 é 😀","observed_at":"2025-01-01T00:00:00Z"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00+14:00"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00-14:00"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b","status":301},{"from":"a","to":"b","status":302}],"canonical":[]},"relations":null}`,
		` { "raw_url" : "x" , "observed_at" : "2025-01-01T00:00:00Z" } `,
	} {
		if _, err := ingest.ParseRecord([]byte(line), "in.jsonl", 1); err != nil {
			t.Errorf("ParseRecord(%s) = %v, want it accepted", line, err)
		}
	}
}

func TestParseRecordKeepsLexicalForms(t *testing.T) {
	line := `{"citation_id":"c1","raw_url":" HTTP://Example.com/a b#F ","observed_at":"2025-01-01T01:00:00+01:00","position":3,
		"retrieval":{"final_status":200,"hops":[{"from":"a","to":"b","status":301,"at":"2025-01-01T00:00:00.500Z"}]}}`
	r, err := ingest.ParseRecord([]byte(line), "in", 1)
	if err != nil {
		t.Fatal(err)
	}
	if *r.RawURL != " HTTP://Example.com/a b#F " {
		t.Errorf("raw_url = %q: the raw text must be kept exactly", *r.RawURL)
	}
	if r.ObservedAt != "2025-01-01T01:00:00+01:00" || r.Position != "3" || r.Retrieval.Hops[0].At != "2025-01-01T00:00:00.500Z" {
		t.Errorf("lexical forms changed: %+v", r)
	}
}

func TestRecordIDAndDigest(t *testing.T) {
	a, _ := ingest.ParseRecord([]byte(`{"raw_url":"https://e.test/","observed_at":"2025-01-01T00:00:00Z","engine":"x"}`), "in", 1)
	b, _ := ingest.ParseRecord([]byte(`{ "engine": "x", "observed_at": "2025-01-01T00:00:00Z", "raw_url": "https://e.test/" }`), "in", 2)
	c, _ := ingest.ParseRecord([]byte(`{"raw_url":"https://e.test/","observed_at":"2025-01-01T00:00:00Z","engine":"y"}`), "in", 3)
	if a.ID() != b.ID() || a.Digest() != b.Digest() {
		t.Errorf("field order or whitespace changed the id: %s %s", a.ID(), b.ID())
	}
	if a.ID() == c.ID() {
		t.Errorf("different records share id %s", a.ID())
	}
	d, _ := ingest.ParseRecord([]byte(`{"citation_id":"given","raw_url":"https://e.test/","observed_at":"2025-01-01T00:00:00Z"}`), "in", 4)
	if d.ID() != "given" {
		t.Errorf("ID() = %q, want the given citation_id", d.ID())
	}
}
