package normalize_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

// adversarial is the shape of testdata/adversarial.json: single-input cases
// that pin the key and the preserved evidence, and groups of inputs whose
// keys must all differ or all agree under the default policy.
type adversarial struct {
	Cases []struct {
		Name      string   `json:"name"`
		Policy    string   `json:"policy"`
		Base      string   `json:"base"`
		Input     string   `json:"input"`
		Key       string   `json:"key"`
		Fragment  *string  `json:"fragment"`
		Removed   []string `json:"removed"`
		Compare   string   `json:"compare"`
		HostRule  string   `json:"host_rule"`
		Rules     []string `json:"rules"`
		Error     string   `json:"error"`
		ErrorRule string   `json:"error_rule"`
	} `json:"cases"`
	Distinct []group `json:"distinct"`
	Same     []group `json:"same"`
}

type group struct {
	Why    string   `json:"why"`
	Inputs []string `json:"inputs"`
}

func loadAdversarial(t testing.TB) adversarial {
	t.Helper()
	data, err := os.ReadFile("testdata/adversarial.json")
	if err != nil {
		t.Fatal(err)
	}
	var a adversarial
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("testdata/adversarial.json: %v", err)
	}
	return a
}

func mustNormalizer(t testing.TB, policy, base string) *normalize.Normalizer {
	t.Helper()
	p, err := normalize.LoadPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	n, err := normalize.New(p, &normalize.Options{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func stepRules(steps []normalize.Step) []string {
	out := []string{}
	for _, s := range steps {
		out = append(out, string(s.Rule))
	}
	return out
}

func TestAdversarialFixtures(t *testing.T) {
	a := loadAdversarial(t)
	for _, c := range a.Cases {
		t.Run(c.Name, func(t *testing.T) {
			n := mustNormalizer(t, c.Policy, c.Base)
			res, err := n.Normalize(c.Input)
			if res.Raw != c.Input {
				t.Errorf("Normalize(%q).Raw = %q: the raw evidence was changed", c.Input, res.Raw)
			}
			if c.Error != "" {
				var e *normalize.Error
				if !errors.As(err, &e) {
					t.Fatalf("Normalize(%q) = %q, %v; want rejection %s", c.Input, res.Key, err, c.Error)
				}
				if string(e.Code) != c.Error {
					t.Errorf("Normalize(%q) code = %s (%s), want %s", c.Input, e.Code, e.Msg, c.Error)
				}
				if c.ErrorRule != "" && string(e.Rule) != c.ErrorRule {
					t.Errorf("Normalize(%q) rule = %q, want %q", c.Input, e.Rule, c.ErrorRule)
				}
				if !errors.Is(err, normalize.ErrRejected) {
					t.Errorf("errors.Is(%v, ErrRejected) = false", err)
				}
				if res.Key != "" {
					t.Errorf("Normalize(%q) rejected but Key = %q", c.Input, res.Key)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%q) error: %v", c.Input, err)
			}
			if res.Key != c.Key {
				t.Errorf("Normalize(%q) = %q, want %q", c.Input, res.Key, c.Key)
			}
			if c.Fragment == nil && res.HasFragment {
				t.Errorf("Normalize(%q) fragment = %q, want none", c.Input, res.Fragment)
			}
			if c.Fragment != nil && (!res.HasFragment || res.Fragment != *c.Fragment) {
				t.Errorf("Normalize(%q) fragment = %q (present %v), want %q", c.Input, res.Fragment, res.HasFragment, *c.Fragment)
			}
			if !slices.Equal(res.RemovedParams(), c.Removed) {
				t.Errorf("Normalize(%q) removed = %q, want %q", c.Input, res.RemovedParams(), c.Removed)
			}
			wantCompare := c.Compare
			if wantCompare == "" {
				wantCompare = string(normalize.CompareNormalized)
			}
			if string(res.Compare) != wantCompare {
				t.Errorf("Normalize(%q) compare = %s, want %s", c.Input, res.Compare, wantCompare)
			}
			if res.HostRule != c.HostRule {
				t.Errorf("Normalize(%q) host rule = %q, want %q", c.Input, res.HostRule, c.HostRule)
			}
			if got, want := stepRules(res.Steps()), append([]string{}, c.Rules...); !slices.Equal(got, want) {
				t.Errorf("Normalize(%q) steps = %v, want %v\n%+v", c.Input, got, want, res.Steps())
			}
			// The key is a fixed point: normalizing it again changes nothing.
			again, err := mustNormalizer(t, c.Policy, "").Normalize(res.Key)
			if err != nil || again.Key != res.Key {
				t.Errorf("Normalize(Normalize(%q)) = %q, %v; want %q", c.Input, again.Key, err, res.Key)
			}
		})
	}
}

func TestDistinctKeys(t *testing.T) {
	n := mustNormalizer(t, "default", "")
	for _, g := range loadAdversarial(t).Distinct {
		seen := map[string]string{}
		for _, in := range g.Inputs {
			res, err := n.Normalize(in)
			if err != nil {
				t.Fatalf("%s: Normalize(%q): %v", g.Why, in, err)
			}
			if prev, ok := seen[res.Key]; ok {
				t.Errorf("%s: Normalize(%q) and Normalize(%q) share key %q", g.Why, prev, in, res.Key)
			}
			seen[res.Key] = in
		}
	}
}

func TestSameKeys(t *testing.T) {
	n := mustNormalizer(t, "default", "")
	for _, g := range loadAdversarial(t).Same {
		var first string
		for i, in := range g.Inputs {
			res, err := n.Normalize(in)
			if err != nil {
				t.Fatalf("%s: Normalize(%q): %v", g.Why, in, err)
			}
			if i == 0 {
				first = res.Key
			} else if res.Key != first {
				t.Errorf("%s: Normalize(%q) = %q, want %q (the key of %q)", g.Why, in, res.Key, first, g.Inputs[0])
			}
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	n := mustNormalizer(t, "lenient", "")
	in := "http://example.com/a\xffb"
	res, err := n.Normalize(in)
	var e *normalize.Error
	if !errors.As(err, &e) || e.Code != normalize.CodeInvalidUTF8 || e.Offset != 20 {
		t.Fatalf("Normalize(%q) = %q, %v; want invalid-utf8 at byte 20", in, res.Key, err)
	}
	if res.Raw != in {
		t.Errorf("Raw = %q, want %q", res.Raw, in)
	}
}

// TestErrorOffsetsPointAtInput checks that offsets index the input as given,
// even after preprocessing moved the text.
func TestErrorOffsetsPointAtInput(t *testing.T) {
	n := mustNormalizer(t, "lenient", "")
	for _, tc := range []struct {
		in   string
		code normalize.Code
		at   string // the input text the offset must point at
	}{
		{"http://example.com:8a/", normalize.CodeInvalidPort, "a/"},
		{"  http://example.com:8a/", normalize.CodeInvalidPort, "a/"},
		{"ht\ttp://ex\nample.com:8a/", normalize.CodeInvalidPort, "a/"},
		{"http://[::1/", normalize.CodeInvalidIPv6, "[::1"},
	} {
		_, err := n.Normalize(tc.in)
		var e *normalize.Error
		if !errors.As(err, &e) || e.Code != tc.code {
			t.Errorf("Normalize(%q) error = %v, want %s", tc.in, err, tc.code)
			continue
		}
		if e.Offset < 0 || !strings.HasPrefix(tc.in[e.Offset:], tc.at) {
			t.Errorf("Normalize(%q) offset %d points at %q, want %q", tc.in, e.Offset, tc.in[max(0, e.Offset):], tc.at)
		}
	}
}

func TestInvalidBase(t *testing.T) {
	_, err := normalize.New(normalize.Default(), &normalize.Options{Base: "not a url"})
	var e *normalize.Error
	if !errors.As(err, &e) || e.Code != normalize.CodeInvalidBase {
		t.Fatalf("New with bad base = %v, want invalid-base", err)
	}
}

// TestStrictRejectsOnlyValidationErrors checks the default policy's promise
// on the fixtures: whatever it rejects and the lenient policy accepts was
// rejected by a named rule, that is, a documented validation error.
func TestStrictRejectsOnlyValidationErrors(t *testing.T) {
	strict := mustNormalizer(t, "default", "")
	lenient := mustNormalizer(t, "lenient", "")
	for _, c := range loadAdversarial(t).Cases {
		if c.Base != "" {
			continue
		}
		_, serr := strict.Normalize(c.Input)
		lres, lerr := lenient.Normalize(c.Input)
		var e *normalize.Error
		if serr != nil && lerr == nil {
			if !errors.As(serr, &e) || e.Rule == "" {
				t.Errorf("default rejects %q (%v) without naming a rule, lenient gives %q", c.Input, serr, lres.Key)
			}
			if kind, _ := e.Rule.Kind(); kind != normalize.ParseRule {
				t.Errorf("default rejects %q by %s, which is not a parse rule", c.Input, e.Rule)
			}
		}
		if serr == nil && lerr != nil {
			t.Errorf("default accepts %q but lenient rejects it: %v", c.Input, lerr)
		}
	}
}

// TestIDNAOutputMustValidateAgain: x/net/idna encodes a very long
// non-ASCII label into Punycode it then refuses to decode. Such a host is
// rejected, so that every key normalizes to itself (found by FuzzNormalize;
// testdata/fuzz/FuzzNormalize/229bdff096b38a5e).
func TestIDNAOutputMustValidateAgain(t *testing.T) {
	n := mustNormalizer(t, "lenient", "")
	in := "http://a" + strings.Repeat("b", 3000) + "ß.example/"
	_, err := n.Normalize(in)
	var e *normalize.Error
	if !errors.As(err, &e) || e.Code != normalize.CodeInvalidHost {
		t.Fatalf("Normalize(long IDN label) = %v, want invalid-host", err)
	}
	if res, err := n.Normalize("http://abß.example/"); err != nil || res.Key != "http://xn--ab-hia.example/" {
		t.Errorf("Normalize(short IDN label) = %q, %v", res.Key, err)
	}
}
