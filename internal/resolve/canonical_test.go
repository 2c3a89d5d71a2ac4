package resolve_test

import (
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/resolve"
)

func TestLinkCanonicals(t *testing.T) {
	tests := []struct {
		header []string
		want   []string
	}{
		{[]string{`<https://example.com/a>; rel="canonical"`}, []string{"https://example.com/a"}},
		{[]string{`<https://example.com/a>; rel=canonical`}, []string{"https://example.com/a"}},
		{[]string{`<https://example.com/a>;REL="Canonical"`}, []string{"https://example.com/a"}},
		{[]string{`</a>; rel="alternate canonical"`}, []string{"/a"}},
		{[]string{`</s.css>; rel=preload, </c>; rel=canonical`}, []string{"/c"}},
		{[]string{`</x>; title="a, b; rel=canonical"; rel=next, </c>; rel=canonical`}, []string{"/c"}},
		{[]string{`</one>; rel=canonical`, `</two>; rel="canonical"`}, []string{"/one", "/two"}},
		{[]string{`</first>; rel=next; rel=canonical`}, nil}, // RFC 8288 §3.3: only the first rel counts
		{[]string{`garbage, </c>; rel=canonical`}, []string{"/c"}},
		{[]string{`</c>; rel="canonical`}, nil},
		{[]string{`</c>;; rel=canonical;`}, []string{"/c"}},
		{[]string{`</c>; title="say \"hi\""; rel=canonical`}, []string{"/c"}},
		{[]string{`<https://example.com/a,b>; rel=canonical`}, []string{"https://example.com/a,b"}},
		{[]string{`</c>; rel=canonicalx`}, nil},
		{nil, nil},
	}
	for _, tc := range tests {
		if got := resolve.LinkCanonicals(tc.header); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("LinkCanonicals(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
}

func TestHTMLCanonicals(t *testing.T) {
	tests := []struct {
		doc   string
		hrefs []string
		base  string
	}{
		{`<link rel=canonical href="/a">`, []string{"/a"}, ""},
		{`<html><head><link rel="CANONICAL" href="/a"><link rel=canonical href='/b'></head>`, []string{"/a", "/b"}, ""},
		{`<head><base href="https://cdn.example/x/"><base href="/ignored/"><link rel=canonical href=a></head>`, []string{"a"}, "https://cdn.example/x/"},
		{`<head><title><link rel=canonical href=/no></title><link rel=canonical href=/yes>`, []string{"/yes"}, ""},
		{`<head><script><link rel=canonical href=/no></script><noscript><link rel=canonical href=/no2></noscript>`, nil, ""},
		{`<head></head><link rel=canonical href=/after-head>`, nil, ""},
		{`<body><link rel=canonical href=/in-body>`, nil, ""},
		{`<div></div><link rel=canonical href=/after-div>`, nil, ""},
		{`text first <link rel=canonical href=/after-text>`, nil, ""},
		{`<link rel=canonical><link rel=canonical href="">`, []string{""}, ""},
		{`<link rel=canonical href="/x?a=1&amp;b=2">`, []string{"/x?a=1&b=2"}, ""},
		{`<svg><link rel=canonical href=/svg>`, nil, ""},
	}
	for _, tc := range tests {
		hrefs, base := resolve.HTMLCanonicals(strings.NewReader(tc.doc))
		if fmt.Sprint(hrefs) != fmt.Sprint(tc.hrefs) || base != tc.base {
			t.Errorf("HTMLCanonicals(%q) = %q, %q; want %q, %q", tc.doc, hrefs, base, tc.hrefs, tc.base)
		}
	}
}

// FuzzParseLinkHeader checks that the parser never panics, that every
// target it returns was written between < and > in the input, and that a
// link written from its parts (with quoted-string escapes) parses back to
// the same parts.
func FuzzParseLinkHeader(f *testing.F) {
	for _, s := range []string{
		`<https://example.com/a>; rel="canonical"`, `</s.css>; rel=preload; as=style, </c>; rel=canonical`,
		`</x>; title="a, b"; rel=next`, `<`, `"<`, `</c>; rel="a\"b"`, `,,, ;; <>`,
	} {
		f.Add(s, "/target", "canonical next")
	}
	f.Fuzz(func(t *testing.T, header, target, rel string) {
		for _, l := range resolve.ParseLinkHeader([]string{header}) {
			if !strings.Contains(header, "<"+l.Target+">") {
				t.Errorf("ParseLinkHeader(%q): target %q was not in the input between < and >", header, l.Target)
			}
		}
		if strings.ContainsAny(target, "<>") {
			return
		}
		quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(rel)
		written := "<" + target + `>; rel="` + quoted + `"`
		links := resolve.ParseLinkHeader([]string{written})
		if len(links) != 1 || links[0].Target != target || len(links[0].Params) != 1 || links[0].Params[0].Value != rel {
			t.Errorf("ParseLinkHeader(%q) = %+v, want target %q and rel %q", written, links, target, rel)
		}
	})
}

// FuzzHTMLCanonicals checks that extraction never panics on any input and
// finds a canonical link written with any href, entity-escaped, at the
// start of the head.
func FuzzHTMLCanonicals(f *testing.F) {
	f.Add(`<head><link rel=canonical href=/a>`, "/b")
	f.Add(`<script>`, "https://example.com/?a=1&b=2")
	f.Fuzz(func(t *testing.T, doc, href string) {
		resolve.HTMLCanonicals(strings.NewReader(doc))
		if strings.ContainsRune(href, 0) || !isValidUTF8(href) || strings.ContainsRune(href, '\r') {
			return // the tokenizer replaces NUL and U+FFFD-s bad bytes, and folds CR: not what was written
		}
		written := `<head><link rel="canonical" href="` + html.EscapeString(href) + `">` + doc
		hrefs, _ := resolve.HTMLCanonicals(strings.NewReader(written))
		if len(hrefs) == 0 || hrefs[0] != href {
			t.Errorf("HTMLCanonicals(%q) = %q, want %q first", written, hrefs, href)
		}
	})
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
