package normalize_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

func builtinText(t testing.TB, name string) string {
	t.Helper()
	b, err := normalize.BuiltinPolicy(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuiltinPoliciesLoad(t *testing.T) {
	for _, name := range []string{"default", "lenient"} {
		p, err := normalize.LoadPolicy(name)
		if err != nil {
			t.Fatalf("LoadPolicy(%q): %v", name, err)
		}
		if !strings.HasPrefix(p.Digest(), "sha256:") || len(p.Digest()) != len("sha256:")+64 {
			t.Errorf("%s digest = %q", name, p.Digest())
		}
		if want := p.DeclaredVersion() + "+" + normalize.EngineFingerprint(); p.Version() != want {
			t.Errorf("%s Version() = %q, want %q", name, p.Version(), want)
		}
	}
	if normalize.Default().Digest() == normalize.Lenient().Digest() {
		t.Error("default and lenient policies share a digest")
	}
}

// TestLenientToleratesEveryParseRule: the conformance profile must never
// reject by rule, or its parse would not be the Standard's.
func TestLenientToleratesEveryParseRule(t *testing.T) {
	p := normalize.Lenient()
	for _, r := range normalize.Rules() {
		if p.Action(r) == normalize.Reject {
			t.Errorf("lenient policy rejects rule %s", r)
		}
	}
}

func TestDefaultPolicyRejectsOnlyValidationErrors(t *testing.T) {
	// The rules the URL Standard names as validation errors. The default
	// policy may reject these and nothing else.
	validation := map[normalize.Rule]bool{
		normalize.RuleStripC0Space: true, normalize.RuleStripTabNewline: true,
		normalize.RuleBackslash: true, normalize.RuleAuthoritySlashes: true,
		normalize.RuleUserinfo: true, normalize.RuleIPv4Nonstandard: true, normalize.RuleInvalidPunycode: true,
		normalize.RuleInvalidURLUnit: true, normalize.RuleInvalidPercent: true,
	}
	p := normalize.Default()
	for _, r := range normalize.Rules() {
		if p.Action(r) == normalize.Reject && !validation[r] {
			t.Errorf("default policy rejects %s, which is not a validation error", r)
		}
		if validation[r] && p.Action(r) != normalize.Reject {
			t.Errorf("default policy tolerates validation error %s; the default is strict", r)
		}
	}
}

func TestDigestIgnoresFormattingButNotContent(t *testing.T) {
	base := builtinText(t, "default")
	p0, err := normalize.ParsePolicy([]byte(base), "a")
	if err != nil {
		t.Fatal(err)
	}
	// Comments and blank lines do not change the policy.
	reformatted := strings.ReplaceAll(base, "\n\n", "\n\n# an added comment\n\n")
	p1, err := normalize.ParsePolicy([]byte(reformatted), "b")
	if err != nil {
		t.Fatal(err)
	}
	if p0.Digest() != p1.Digest() {
		t.Errorf("a comment changed the digest: %s vs %s", p0.Digest(), p1.Digest())
	}
	for _, edit := range []struct{ from, to string }{
		{`sort-query = "off"`, `sort-query = "apply"`},
		{`https = 443`, `https = 8443`},
		{`name = "fbclid"`, `name = "fbclid2"`},
		{`version = "2026.11.1"`, `version = "2026.11.2"`},
		{`reason = "Facebook/Meta outbound click identifier"`, `reason = "Meta click id"`},
	} {
		changed := strings.Replace(base, edit.from, edit.to, 1)
		if changed == base {
			t.Fatalf("edit %q not found in the default policy", edit.from)
		}
		p2, err := normalize.ParsePolicy([]byte(changed), "c")
		if err != nil {
			t.Fatalf("edit %q: %v", edit.from, err)
		}
		if p2.Digest() == p0.Digest() {
			t.Errorf("edit %q -> %q did not change the digest", edit.from, edit.to)
		}
	}
}

func TestPolicyErrors(t *testing.T) {
	base := builtinText(t, "default")
	for _, tc := range []struct {
		name     string
		text     string
		wantLine int
		wantMsg  string
	}{
		{"syntax error has a line", strings.Replace(base, `schemes = ["http", "https"]`, `schemes = ["http", `, 1), 0, ""},
		{"unknown key", base + "\nfrobnicate = true\n", 0, `unknown key "tracking_params.frobnicate"`},
		{"unknown rule", strings.Replace(base, "[rules]\n", "[rules]\nlowercase-path = \"apply\"\n", 1), 0, `unknown rule "lowercase-path"`},
		{"missing rule", strings.Replace(base, "sort-query = \"off\"", "", 1), 0, `no action for "sort-query"`},
		{"reject on a policy step", strings.Replace(base, `sort-query = "off"`, `sort-query = "reject"`, 1), 0, `a policy step takes "apply" or "off"`},
		{"off on a parse rule", strings.Replace(base, `dot-segments = "apply"`, `dot-segments = "off"`, 1), 0, `a parse rule takes "apply" or "reject"`},
		{"unsupported scheme", strings.Replace(base, `schemes = ["http", "https"]`, `schemes = ["http", "gopher"]`, 1), 0, `scheme "gopher" is not supported`},
		{"tracking param without reason", base + "\n[[tracking_params]]\nname = \"ref\"\n", 0, `missing reason`},
		{"host rule without reason", base + "\n[[host]]\nname = \"x\"\nhosts = [\"example.com\"]\npath_case = \"insensitive\"\n", 0, `missing reason`},
		{"host rule with uppercase host", base + "\n[[host]]\nname = \"x\"\nhosts = [\"Example.com\"]\nreason = \"r\"\n", 0, `lowercase ASCII hostnames`},
		{"version with plus", strings.Replace(base, `version = "2026.11.1"`, `version = "1+x"`, 1), 0, `must not contain '+'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := normalize.ParsePolicy([]byte(tc.text), "test.toml")
			var pe *normalize.PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePolicy = %v, want *PolicyError", err)
			}
			if !strings.HasPrefix(err.Error(), "policy test.toml") {
				t.Errorf("error %q does not name the file", err)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tc.wantMsg)
			}
			if tc.name == "syntax error has a line" && pe.Line == 0 {
				t.Errorf("syntax error %q has no line", err)
			}
		})
	}
}

func TestLoadPolicyMissingFile(t *testing.T) {
	_, err := normalize.LoadPolicy("testdata/no-such-policy.toml")
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadPolicy(missing) = %v, want a not-exist error", err)
	}
}

// TestXNetVersionMatchesGoMod keeps the reported x/net version honest: test
// binaries carry no module information, so the version is a constant that
// must move with go.mod.
func TestXNetVersionMatchesGoMod(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`golang\.org/x/net (v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod does not require golang.org/x/net")
	}
	if got := normalize.ParserInfo().XNet; got != string(m[1]) {
		t.Errorf("ParserInfo().XNet = %s, go.mod has %s: update xnetVersion in engine.go and raise nothing else", got, m[1])
	}
}

func TestEngineFingerprintNamesEverythingThatChangesKeys(t *testing.T) {
	fp := normalize.EngineFingerprint()
	pi := normalize.ParserInfo()
	for _, part := range []string{"whatwg" + pi.Version, pi.Go, strings.TrimPrefix(pi.XNet, "v"), "unicode" + pi.Unicode} {
		if !strings.Contains(fp, part) {
			t.Errorf("EngineFingerprint() = %q, missing %q", fp, part)
		}
	}
	if !regexp.MustCompile(`^[0-9A-Za-z.-]+$`).MatchString(fp) {
		t.Errorf("EngineFingerprint() = %q is not valid semver build metadata", fp)
	}
}

// lineOf returns the 1-based line of the first line of text containing
// marker.
func lineOf(t *testing.T, text, marker string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("marker %q not in the policy text", marker)
	return 0
}

// TestPolicyErrorPositions: an error about a key gives the key's line, a
// type error says what the key takes in the policy's terms (not Go's), and
// an unknown name gets the nearest known one.
func TestPolicyErrorPositions(t *testing.T) {
	base := builtinText(t, "default")
	twoHosts := func(hosts, last string) string {
		return base + "\n[[host]]\nname = \"a\"\nhosts = [\"a.example\"]\nreason = \"r\"\n\n[[host]] # second\nname = \"b\"\nhosts = " + hosts + "\n" + last + "\n"
	}
	for _, tc := range []struct {
		name    string
		text    string
		marker  string // the line the error must name
		wantMsg string
		notMsg  string // Go's words that must not appear
	}{
		{"misspelt rule", strings.Replace(base, `sort-query = "off"`, `sort-qurey = "off"`, 1), "sort-qurey",
			`rules: unknown rule "sort-qurey" (did you mean "sort-query"?)`, ""},
		{"rule in the wrong case", strings.Replace(base, `sort-query = "off"`, `Sort-Query = "off"`, 1), "Sort-Query",
			`(did you mean "sort-query"?)`, ""},
		{"bad action", strings.Replace(base, `dot-segments = "apply"`, `dot-segments = "off"`, 1), "dot-segments",
			`rules.dot-segments = "off": a parse rule takes "apply" or "reject"`, ""},
		{"port as a string", strings.Replace(base, `https = 443`, `https = "443"`, 1), `https = "443"`,
			`default_ports.https: want an integer port number, such as 443 (no quotes), not the string "443"`, "destination"},
		{"port out of range", strings.Replace(base, `https = 443`, `https = 70000`, 1), `https = 70000`,
			`default_ports.https = 70000: not a port number`, ""},
		{"action as a boolean", strings.Replace(base, `sort-query = "off"`, `sort-query = false`, 1), "sort-query = false",
			`rules.sort-query: want an action in quotes: "apply", "reject" or "off", not false (a boolean)`, "incompatible"},
		{"schemes as a string", strings.Replace(base, `schemes = ["http", "https"]`, `schemes = "http"`, 1), `schemes = "http"`,
			`schemes: want a list of scheme names`, "slice"},
		{"rules as a string", strings.Replace(strings.Replace(base, "[rules]\n", "[rulez]\n", 1), `schemes = ["http", "https"]`, "schemes = [\"http\", \"https\"]\nrules = \"all\"", 1), `rules = "all"`,
			`rules: want a table of rule = action lines, under [rules], not the string "all"`, "map"},
		{"key in another letter case, wrong type", strings.Replace(base, `schemes = ["http", "https"]`, `Schemes = "http"`, 1), `Schemes = "http"`,
			`Schemes: want a list of scheme names`, "slice"},
		{"two spellings of one key", strings.Replace(base, "[[tracking_params]]\nname = \"gclid\"", "[[tracking_paRams]]\nname = \"gclid\"", 1), "[[tracking_paRams]]",
			`keys "tracking_paRams" and "tracking_params" both name "tracking_params"`, ""},
		{"misspelt top-level key", strings.Replace(base, "description =", "descripton =", 1), "descripton =",
			`unknown key "descripton" (did you mean "description"?)`, ""},
		{"unsupported scheme", strings.Replace(base, `schemes = ["http", "https"]`, `schemes = ["http", "gopher"]`, 1), "gopher",
			`scheme "gopher" is not supported`, ""},
		{"bad version", strings.Replace(base, `version = "2026.11.1"`, `version = "1+x"`, 1), `version = "1+x"`,
			`must not contain '+'`, ""},
		{"tracking entry", strings.Replace(base, "[[tracking_params]]\nname = \"gclid\"", "[[tracking_params]] # gclid\nname = \"gclid*x\"", 1), "# gclid",
			`tracking_params: "gclid*x": "*" is allowed only at the end`, ""},
		{"second host rule, wrong type", twoHosts(`"b.example"`, `reason = "r"`), `hosts = "b.example"`,
			`host[1].hosts: want a list of hostnames`, "slice"},
		{"second host rule, missing reason", twoHosts(`["b.example"]`, ""), "# second",
			`host[1] (b): missing reason`, ""},
		{"misspelt host key", twoHosts(`["b.example"]`, `reasn = "r"`), "reasn",
			`unknown key "host.reasn" (did you mean "reason"?)`, ""},
		{"syntax error", strings.Replace(base, `schemes = ["http", "https"]`, "schemes = [\"http\",\nname2 = 1", 1), "name2 = 1",
			``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := normalize.ParsePolicy([]byte(tc.text), "test.toml")
			var pe *normalize.PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePolicy = %v, want *PolicyError", err)
			}
			if want := lineOf(t, tc.text, tc.marker); pe.Line != want {
				t.Errorf("ParsePolicy: %v\nline %d, want %d", err, pe.Line, want)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("ParsePolicy: %v\nwant it to contain %q", err, tc.wantMsg)
			}
			if tc.notMsg != "" && strings.Contains(err.Error(), tc.notMsg) {
				t.Errorf("ParsePolicy: %v\nspeaks Go (%q), not the policy's terms", err, tc.notMsg)
			}
			if pe.Line > 0 && !strings.HasPrefix(err.Error(), fmt.Sprintf("policy test.toml:%d: ", pe.Line)) {
				t.Errorf("error %q does not start with file:line", err)
			}
		})
	}
}

func TestDidYouMeanOnlyForNearNames(t *testing.T) {
	base := builtinText(t, "default")
	text := strings.Replace(base, "[rules]\n", "[rules]\nlowercase-path = \"apply\"\n", 1)
	_, err := normalize.ParsePolicy([]byte(text), "test.toml")
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "rules are: strip-c0-space,") {
		t.Errorf("ParsePolicy(lowercase-path) = %v, want the list of rules and no suggestion", err)
	}
}

// TestLoadPolicyBuiltinNames: a built-in name in another letter case finds
// the built-in policy; a misspelt one says which names exist.
func TestLoadPolicyBuiltinNames(t *testing.T) {
	for _, tc := range []struct {
		ref, wantSource, wantErr string
	}{
		{"Lenient", "builtin:lenient", ""},
		{"DEFAULT", "builtin:default", ""},
		{"lenient", "builtin:lenient", ""},
		{"lenent", "", `nor is it a built-in policy: "default", "lenient"; did you mean "lenient"?`},
		{"strictest", "", `nor is it a built-in policy: "default", "lenient")`},
	} {
		p, err := normalize.LoadPolicy(tc.ref)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("LoadPolicy(%q) = %v, want %s", tc.ref, err, tc.wantSource)
		case tc.wantErr == "" && p.Source() != tc.wantSource:
			t.Errorf("LoadPolicy(%q) loaded %s, want %s", tc.ref, p.Source(), tc.wantSource)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, os.ErrNotExist)):
			t.Errorf("LoadPolicy(%q) = %v, want a not-exist error containing %q", tc.ref, err, tc.wantErr)
		}
	}
	if b, err := normalize.BuiltinPolicy("Lenient"); err != nil || !bytes.Equal(b, []byte(builtinText(t, "lenient"))) {
		t.Errorf("BuiltinPolicy(Lenient) = %v, want the lenient policy", err)
	}
	if _, err := normalize.BuiltinPolicy("lenent"); err == nil || !strings.Contains(err.Error(), `did you mean "lenient"?`) {
		t.Errorf("BuiltinPolicy(lenent) = %v, want a suggestion", err)
	}
}

// TestLoadPolicySizeLimit: a policy file is read up to MaxPolicyBytes, so a
// wrong path such as /dev/zero fails at once instead of filling memory.
func TestLoadPolicySizeLimit(t *testing.T) {
	dir := t.TempDir()
	base := builtinText(t, "default")
	pad := func(n int) string {
		// Comment lines, so the padded policy stays the same policy.
		var b strings.Builder
		b.WriteString(base)
		for b.Len() < n {
			line := "# " + strings.Repeat("x", min(70, n-b.Len()-3)) + "\n"
			b.WriteString(line)
		}
		return b.String()
	}
	exact := filepath.Join(dir, "exact.toml")
	if err := os.WriteFile(exact, []byte(pad(normalize.MaxPolicyBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(exact); fi.Size() != normalize.MaxPolicyBytes {
		t.Fatalf("padded file is %d bytes, want %d", fi.Size(), normalize.MaxPolicyBytes)
	}
	if _, err := normalize.LoadPolicy(exact); err != nil {
		t.Errorf("LoadPolicy(a file of exactly MaxPolicyBytes) = %v, want it loaded", err)
	}
	over := filepath.Join(dir, "over.toml")
	if err := os.WriteFile(over, []byte(pad(normalize.MaxPolicyBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refs := []string{over}
	if _, err := os.Stat("/dev/zero"); err == nil {
		refs = append(refs, "/dev/zero")
	}
	for _, ref := range refs {
		_, err := normalize.LoadPolicy(ref)
		var pe *normalize.PolicyError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "larger than 1 MiB (1048576 bytes), the limit for a policy file") {
			t.Errorf("LoadPolicy(%s) = %v, want the size limit error", ref, err)
		}
	}
}

// FuzzParsePolicy: ParsePolicy never panics, every error is a *PolicyError
// with a line inside the file, and an accepted policy parses again to the
// same digest.
func FuzzParsePolicy(f *testing.F) {
	base := builtinText(f, "default")
	f.Add(base)
	f.Add(strings.Replace(base, `sort-query = "off"`, `sort-qurey = "off"`, 1))
	f.Add(strings.Replace(base, `https = 443`, `https = "443"`, 1))
	f.Add(base + "\n[[host]]\nname = \"x\"\nhosts = \"a\"\n[[host]]\nreasn = 1\n")
	f.Add("[[host]]\n[[host.drop_params]]\nname = 1\n")
	f.Add("rules = 1\ntracking_params = [1, {name = \"x\"}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := normalize.ParsePolicy([]byte(text), "fuzz.toml")
		if err != nil {
			var pe *normalize.PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePolicy error %v is not a *PolicyError", err)
			}
			if lines := strings.Count(text, "\n") + 1; pe.Line < 0 || pe.Line > lines {
				t.Fatalf("ParsePolicy error %v names line %d of %d", err, pe.Line, lines)
			}
			return
		}
		q, err := normalize.ParsePolicy(p.Text(), "again")
		if err != nil || q.Digest() != p.Digest() {
			t.Fatalf("accepted policy does not parse again to the same digest: %v", err)
		}
	})
}
