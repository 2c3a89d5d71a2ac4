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
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","position":"3"}`, "position", "cannot be a number"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","raw":"y"}`, "", `unknown field "raw"`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z"`, "", "invalid JSON"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z"} {}`, "", "more than one JSON value"},
		{`{"raw_url":7,"observed_at":"2025-01-01T00:00:00Z"}`, "raw_url", "cannot be a string"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b"}]}}`, "retrieval.hops[0].status", "required"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"hops":[{"from":"a","to":"b","status":700}]}}`, "retrieval.hops[0].status", "out of range"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"final_status":"200"}}`, "retrieval.final_status", "cannot be a number"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"canonical":[{"url":"u","source":"meta"}]}}`, "retrieval.canonical[0].source", `"meta" is not one of`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","retrieval":{"canonical_dropped":-1}}`, "retrieval.canonical_dropped", "negative"},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"copy_of","target":"t"}]}`, "relations[0].type", `"copy_of" is not one of`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"format_of","target":"t","format":"epub"}]}`, "relations[0].format", `"epub"`},
		{`{"raw_url":"x","observed_at":"2025-01-01T00:00:00Z","relations":[{"type":"archive_of","target":"t","captured_at":"2020"}]}`, "relations[0].captured_at", "RFC 3339"},
		{``, "", "empty line"},
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
