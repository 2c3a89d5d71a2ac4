package normalize_test

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

func builtinText(t *testing.T, name string) string {
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
