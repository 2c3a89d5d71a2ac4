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
		if got, _ := resolve.LinkCanonicals(tc.header, resolve.MaxCanonicals); fmt.Sprint(got) != fmt.Sprint(tc.want) {
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
		hrefs, base, _ := resolve.HTMLCanonicals(strings.NewReader(tc.doc), resolve.MaxCanonicals)
		if fmt.Sprint(hrefs) != fmt.Sprint(tc.hrefs) || base != tc.base {
			t.Errorf("HTMLCanonicals(%q) = %q, %q; want %q, %q", tc.doc, hrefs, base, tc.hrefs, tc.base)
		}
	}
}

// TestCanonicalsBounded checks that both parsers keep distinct URLs only,
// at most the limit of them, and count the further ones they drop
// (issue 19: a head with 160,000 canonical links took 34 s and 1.2 GB).
func TestCanonicalsBounded(t *testing.T) {
	tests := []struct {
		targets []string // the canonical targets written, in order
		limit   int
		want    []string
		dropped int
	}{
		{[]string{"/a", "/a", "/b", "/a"}, 5, []string{"/a", "/b"}, 0},
		{[]string{"/a", "/b", "/c", "/d"}, 2, []string{"/a", "/b"}, 2},
		{[]string{"/a", "/b", "/a", "/c", "/c"}, 2, []string{"/a", "/b"}, 2}, // a repeat of a kept one is not counted; of a dropped one it is
		{[]string{"/a"}, 0, nil, 1},
		{nil, 3, nil, 0},
	}
	for _, tc := range tests {
		var header []string
		var doc strings.Builder
		for _, u := range tc.targets {
			header = append(header, "<"+u+">; rel=canonical")
			doc.WriteString(`<link rel=canonical href="` + u + `">`)
		}
		got, dropped := resolve.LinkCanonicals(header, tc.limit)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || dropped != tc.dropped {
			t.Errorf("LinkCanonicals(%q, %d) = %q, %d; want %q, %d", header, tc.limit, got, dropped, tc.want, tc.dropped)
		}
		got, _, dropped = resolve.HTMLCanonicals(strings.NewReader(doc.String()), tc.limit)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || dropped != tc.dropped {
			t.Errorf("HTMLCanonicals(%q, %d) = %q, %d; want %q, %d", doc.String(), tc.limit, got, dropped, tc.want, tc.dropped)
		}
	}
}

// FuzzParseLinkHeader checks that the parser never panics, that every
// target it returns was written between < and > in the input, that
// LinkCanonicals keeps distinct targets within its limit, and that a link
// written from its parts (with quoted-string escapes) parses back to the
// same parts.
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
		checkBounded(t, "LinkCanonicals", header, func(limit int) ([]string, int) {
			return resolve.LinkCanonicals([]string{header, header}, limit)
		})
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

// FuzzHTMLCanonicals checks that extraction never panics on any input,
// keeps distinct hrefs within its limit, and finds a canonical link written
// with any href, entity-escaped, at the start of the head.
func FuzzHTMLCanonicals(f *testing.F) {
	f.Add(`<head><link rel=canonical href=/a>`, "/b")
	f.Add(`<script>`, "https://example.com/?a=1&b=2")
	f.Add(strings.Repeat(`<link rel=canonical href=/a><link rel=canonical href=/b>`, 3), "/a")
	f.Fuzz(func(t *testing.T, doc, href string) {
		checkBounded(t, "HTMLCanonicals", doc, func(limit int) ([]string, int) {
			hrefs, _, dropped := resolve.HTMLCanonicals(strings.NewReader(doc), limit)
			return hrefs, dropped
		})
		if strings.ContainsRune(href, 0) || !isValidUTF8(href) || strings.ContainsRune(href, '\r') {
			return // the tokenizer replaces NUL and U+FFFD-s bad bytes, and folds CR: not what was written
		}
		written := `<head><link rel="canonical" href="` + html.EscapeString(href) + `">` + doc
		hrefs, _, _ := resolve.HTMLCanonicals(strings.NewReader(written), resolve.MaxCanonicals)
		if len(hrefs) == 0 || hrefs[0] != href {
			t.Errorf("HTMLCanonicals(%q) = %q, want %q first", written, hrefs, href)
		}
	})
}

// checkBounded checks a canonical parser on one input: with limit 1 it
// keeps at most one URL, and what a limit keeps and drops adds up to the
// same for limits 1 and MaxCanonicals, with no URL kept twice.
func checkBounded(t *testing.T, name, input string, parse func(limit int) ([]string, int)) {
	t.Helper()
	all, none := parse(resolve.MaxCanonicals)
	one, dropped := parse(1)
	seen := map[string]bool{}
	for _, u := range all {
		if seen[u] {
			t.Errorf("%s(%q) kept %q twice", name, input, u)
		}
		seen[u] = true
	}
	if len(all) > resolve.MaxCanonicals || len(one) > 1 {
		t.Errorf("%s(%q): %d kept with limit %d, %d with limit 1", name, input, len(all), resolve.MaxCanonicals, len(one))
	}
	if len(all) < resolve.MaxCanonicals && (none != 0 || len(one)+dropped < len(all)) {
		t.Errorf("%s(%q): limit %d keeps %d and drops %d, limit 1 keeps %d and drops %d", name, input, resolve.MaxCanonicals, len(all), none, len(one), dropped)
	}
	if len(all) > 0 && (len(one) != 1 || one[0] != all[0]) {
		t.Errorf("%s(%q): limit 1 kept %q, limit %d began with %q", name, input, one, resolve.MaxCanonicals, all[0])
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
