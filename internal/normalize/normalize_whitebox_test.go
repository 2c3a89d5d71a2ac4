package normalize

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// FuzzEveryParseChangeIsLogged checks the invariant Normalize relies on to
// skip serializing: when the parse logs no step, the serialized URL is the
// input itself. A normalization that changed the URL without logging a step
// would break the promise that every transformation is in the log.
func FuzzEveryParseChangeIsLogged(f *testing.F) {
	data, err := os.ReadFile("testdata/adversarial.json")
	if err != nil {
		f.Fatal(err)
	}
	var a struct {
		Cases []struct{ Input string } `json:"cases"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		f.Fatal(err)
	}
	for _, c := range a.Cases {
		f.Add(c.Input)
	}
	p := Lenient()
	f.Fuzz(func(t *testing.T, in string) {
		r := run{p: p, in: in}
		u, err := r.parse(nil)
		if err != nil || r.nSteps > 0 {
			return
		}
		if href := string(u.appendHref(nil, true)); href != in {
			t.Fatalf("parse(%q) = %q with no step logged", in, href)
		}
	})
}

// FuzzDropParams checks the one-pass dropParams against the plain
// Cut-based version it replaced, including queries of more than 64
// segments, which take that version.
func FuzzDropParams(f *testing.F) {
	for _, s := range []string{
		"?utm_source=x", "?a=1&utm_source=x&b", "?&&utm_medium=&", "?fbclid", "?=utm_source",
		"?" + strings.Repeat("a=1&gclid=2&", 40) + "z",
	} {
		f.Add(s)
	}
	m := &Default().tracking
	f.Fuzz(func(t *testing.T, q string) {
		if !strings.HasPrefix(q, "?") {
			q = "?" + q
		}
		hits := 0
		for _, seg := range strings.Split(q[1:], "&") {
			if m.match(paramName(seg)) {
				hits++
			}
		}
		got, gotRemoved := dropParams(q, m, nil, nil)
		if hits == 0 {
			if got != q || gotRemoved != nil {
				t.Fatalf("dropParams(%q) = %q, %q; want it unchanged", q, got, gotRemoved)
			}
			return
		}
		want, wantRemoved := dropParamsSlow(q, m, hits)
		if got != want || !slices.Equal(gotRemoved, wantRemoved) {
			t.Fatalf("dropParams(%q) = %q, %q; want %q, %q", q, got, gotRemoved, want, wantRemoved)
		}
		const prefix = "https://example.test/p"
		got, gotRemoved = dropParams(q, m, []byte(prefix), make([]string, 1))
		if got != prefix+want || !slices.Equal(gotRemoved, wantRemoved) {
			t.Fatalf("dropParams(%q) with prefix = %q, %q; want %q, %q", q, got, gotRemoved, prefix+want, wantRemoved)
		}
	})
}

// FuzzFastPath checks that fastParse, when it accepts an input, gives
// exactly what the full parser gives, and that the full parser logs no step
// for it, under the default and the lenient policy.
func FuzzFastPath(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a/b?c=d#e", "http://a.b/./c", "https://x.test/a/..", "https://x.test/?'", "https://x.test/p#a#b",
		"https://1.2.3.4/", "https://a.0x1/", "https://xn--a.test/", "https://a.test./p", "https://a..b/p", "https://a.test/p?q#f?g",
		"https://a.test/p/.x/..y", "https://a.test/a'b", "https://A.test/", "https://a.test:80/", "https://a.test",
		"https://a.test/%7e/%2e/x?q=%41#%zz", "https://a.test/a/%2E%2e/b", "https://a.test/100%", "https://a.test/%2Fx?a=%26",
	} {
		f.Add(s)
	}
	policies := []*Policy{Default(), Lenient()}
	f.Fuzz(func(t *testing.T, in string) {
		for _, p := range policies {
			r := run{p: p, in: in}
			var fast url
			if !r.fastParse(in, &fast) {
				continue
			}
			full := run{p: p, in: in}
			u, err := full.parseFull(nil)
			if err != nil {
				t.Fatalf("fastParse(%q) accepted what the parser rejects: %v", in, err)
			}
			if full.nSteps > 0 {
				t.Fatalf("fastParse(%q) accepted an input the parser logs steps for: %+v", in, full.stepAt(0))
			}
			if fast != u {
				t.Fatalf("fastParse(%q) = %+v, parser = %+v", in, fast, u)
			}
		}
	})
}
