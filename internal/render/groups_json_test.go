package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
)

// encodingJSON is what appendGroupJSON must equal: encoding/json with the
// report's settings, without the final newline.
func encodingJSON(t testing.TB, v any, prefix string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// TestGroupJSONMatchesEncodingJSON covers what the corpus report (in
// TestReportJSONStreams) does not: nil and empty slices, every optional
// field on and off, and strings that need escaping.
func TestGroupJSONMatchesEncodingJSON(t *testing.T) {
	frag := "sec\"tion\u2028<&>"
	odd := "a\x00b\x1f\b\f\n\r\t\\ \x7f é \xff\xfe 日本 \u2029"
	groups := []*query.Group{
		{},
		{ID: "g-1", Key: odd, Keys: []string{}, Members: []*query.Member{}, Relations: []*query.GroupRelation{}},
		{
			ID: "g-2", Key: "https://a.example/", Keys: []string{"https://a.example/", odd}, Verdict: model.VerdictConflict,
			Members: []*query.Member{
				{CitationID: "c1", RawURL: odd, Fragment: &frag, ResolvedURL: "https://a.example/x", Key: "k", Reasons: []string{"r1", odd}},
				{CitationID: "c2", RawURL: "https://a.example/", Key: "k"},
				{CitationID: "c3", Reasons: []string{}},
			},
			Relations: []*query.GroupRelation{
				{Type: query.RelCanonical, From: "g-2", To: "g-3", Evidence: odd, Review: true},
				{Type: "archive_of", From: "g-2", ToURL: "https://web.archive.org/x", Evidence: "e"},
			},
		},
	}
	for i, g := range groups {
		for _, prefix := range []string{"", "    "} {
			want := encodingJSON(t, g, prefix)
			if got := string(appendGroupJSON(nil, g, prefix)); got != want {
				t.Errorf("group %d, prefix %q:\n%s\nwant\n%s", i, prefix, got, want)
			}
		}
	}
}

// FuzzJSONString: appendJSONString quotes every string as encoding/json
// does without HTML escaping.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x01\x1f\x7f", "\b\f\n\r\t", "\xff", "\xe2\x80\xa8\xe2\x80\xa9", "<&>", "日本\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := encodingJSON(t, s, "")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}
