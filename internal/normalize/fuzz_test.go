package normalize_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

// FuzzNormalize checks, for any input, under the default and the lenient
// policy: no panic; a rejection is an *Error; the raw input is returned
// unchanged; the key normalizes again to itself (idempotence) and so does
// the parsed href; and, under the default policy, flipping the case of a
// letter of the key's path gives a different key (path case is never
// folded without a host rule).
func FuzzNormalize(f *testing.F) {
	for _, c := range loadAdversarial(f).Cases {
		f.Add(c.Input)
	}
	for _, s := range []string{
		"http://example.com/Users/Alice", "https://a.b/%2e%2E/x?utm_source=1#f",
		"http://[::1]:80/a/../b", "http://0x7f.1/", "https://xn--bcher-kva.example/Ä",
		"http://example.com/a%2Fb?%41=%7e", "//x", "http:\\\\h\\p", " http://h/\t ",
	} {
		f.Add(s)
	}
	strict := mustNormalizer(f, "default", "")
	lenient := mustNormalizer(f, "lenient", "")
	f.Fuzz(func(t *testing.T, in string) {
		for _, n := range []*normalize.Normalizer{strict, lenient} {
			res, err := n.Normalize(in)
			if res.Raw != in {
				t.Fatalf("Raw = %q, want %q", res.Raw, in)
			}
			if err != nil {
				var e *normalize.Error
				if !errors.As(err, &e) || e.Code == "" {
					t.Fatalf("Normalize(%q) error %v is not a coded *Error", in, err)
				}
				continue
			}
			again, err := n.Normalize(res.Key)
			if err != nil {
				t.Fatalf("Normalize(%q) = %q, which is rejected: %v", in, res.Key, err)
			}
			if again.Key != res.Key {
				t.Fatalf("not idempotent: Normalize(%q) = %q, Normalize(%q) = %q", in, res.Key, res.Key, again.Key)
			}
			reparsed, err := lenient.Normalize(res.Parsed)
			if err != nil || reparsed.Parsed != res.Parsed {
				t.Fatalf("href not a fixed point: Parse(%q) = %q, Parse(%q) = %q, %v", in, res.Parsed, res.Parsed, reparsed.Parsed, err)
			}
			if n != strict {
				continue
			}
			flipped, ok := flipPathCase(res.Key)
			if !ok {
				continue
			}
			fres, err := strict.Normalize(flipped)
			if err == nil && fres.Key == res.Key {
				t.Fatalf("path case folded: %q and %q share key %q", res.Key, flipped, res.Key)
			}
		}
	})
}

// flipPathCase flips the case of the first ASCII letter of the path of an
// absolute http(s) URL, outside percent-escapes.
func flipPathCase(key string) (string, bool) {
	i := strings.Index(key, "://")
	if i < 0 {
		return "", false
	}
	start := strings.IndexByte(key[i+3:], '/')
	if start < 0 {
		return "", false
	}
	start += i + 3
	end := len(key)
	if q := strings.IndexAny(key[start:], "?#"); q >= 0 {
		end = start + q
	}
	b := []byte(key)
	for j := start; j < end; j++ {
		c := b[j]
		if c == '%' {
			j += 2
			continue
		}
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			b[j] = c ^ 0x20
			return string(b), true
		}
	}
	return "", false
}
