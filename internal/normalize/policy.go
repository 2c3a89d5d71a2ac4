package normalize

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:embed policies/*.toml
var builtinFS embed.FS

// Builtin policy names accepted by LoadPolicy in place of a file path.
const (
	// DefaultPolicyName is the compiled-in strict policy.
	DefaultPolicyName = "default"
	// LenientPolicyName tolerates every validation error of the URL
	// Standard, so its parse phase gives exactly the Standard's href. It is
	// the profile the conformance tests run under.
	LenientPolicyName = "lenient"
)

// Policy is a versioned, digestible normalization policy. The policy is data:
// it decides, for every rule of the fixed sequence, whether the rule applies
// or rejects (or, for the policy's own steps, is off), which ports are
// default, which query parameters are tracking-only and which hosts have
// server-defined equivalences.
//
// A Policy is immutable after loading and safe for concurrent use.
type Policy struct {
	file    policyFile
	actions [numRules]Action
	// tracking holds the global tracking parameters; exact names are
	// matched before prefixes.
	tracking paramMatcher
	hosts    []hostRule
	ports    map[string]string // scheme -> default port as decimal text
	schemes  map[string]bool
	// http and https are accepted: the fast path asks for every URL.
	http, https bool
	digest      string
	source      string
	text        []byte // the file as loaded
}

// policyFile is the TOML shape of a policy file. Field comments are the
// file format's documentation; see policies/default.toml for an example.
type policyFile struct {
	Name        string            `toml:"name" json:"name"`
	Version     string            `toml:"version" json:"version"`
	Description string            `toml:"description" json:"description"`
	Schemes     []string          `toml:"schemes" json:"schemes"`
	DefaultPort map[string]int    `toml:"default_ports" json:"default_ports"`
	Rules       map[string]string `toml:"rules" json:"rules"`
	Tracking    []ParamRule       `toml:"tracking_params" json:"tracking_params"`
	Hosts       []HostRule        `toml:"host" json:"host"`
}

// ParamRule names a query parameter that is removed from the key, with the
// reason it selects no content. A name ending in "*" matches by prefix.
// Names are matched case-sensitively against the parameter name as it
// appears after the parse and the percent-encoding steps.
type ParamRule struct {
	Name   string `toml:"name" json:"name"`
	Reason string `toml:"reason" json:"reason"`
}

// HostRule declares equivalences that one server (or family of servers)
// is known to implement. A key that a host rule's path_case or
// trailing_slash could affect is marked CompareContent: its identity must be
// confirmed by content hash or signature.
type HostRule struct {
	// Name identifies the rule in results (for example "github-repos").
	Name string `toml:"name" json:"name"`
	// Hosts lists ASCII hostnames after IDNA; "*.example.com" matches every
	// subdomain of example.com but not example.com itself.
	Hosts []string `toml:"hosts" json:"hosts"`
	// PathCase "insensitive" lowercases ASCII letters of the path.
	PathCase string `toml:"path_case" json:"path_case,omitempty"`
	// TrailingSlash "insensitive" removes one trailing slash of a non-root
	// path.
	TrailingSlash string `toml:"trailing_slash" json:"trailing_slash,omitempty"`
	// DropParams are query parameters that carry no content on these hosts.
	DropParams []ParamRule `toml:"drop_params" json:"drop_params,omitempty"`
	// Reason documents why the server is known to behave this way.
	Reason string `toml:"reason" json:"reason"`
}

type hostRule struct {
	HostRule
	exact    []string
	suffixes []string // ".example.com" for "*.example.com"
	params   paramMatcher
}

// PolicyError reports a policy file that cannot be used.
type PolicyError struct {
	Source string // file name or builtin name
	Line   int    // 1-based line, 0 when the problem is not tied to a line
	Msg    string
}

func (e *PolicyError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("policy %s:%d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("policy %s: %s", e.Source, e.Msg)
}

// LoadPolicy loads the policy named by ref: "default" or "lenient" for the
// compiled-in policies (in any letter case), otherwise a path to a TOML
// policy file of at most MaxPolicyBytes. To load a file literally named
// "default", write "./default".
func LoadPolicy(ref string) (*Policy, error) {
	if ref == "" {
		return builtin(DefaultPolicyName)
	}
	if name, ok := builtinName(ref); ok {
		return builtin(name)
	}
	f, err := os.Open(ref)
	if err != nil {
		// A bare word is more likely a misspelt built-in name than a file.
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(ref, `/\.`) {
			hint := ""
			if n := nearest(ref, builtinNames); n != "" {
				hint = fmt.Sprintf("; did you mean %q?", n)
			}
			return nil, fmt.Errorf("policy: %w (nor is it a built-in policy: %s%s)", err, builtinList(), hint)
		}
		return nil, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	// One byte over the limit tells a file of exactly MaxPolicyBytes from a
	// longer one without reading the rest.
	data, err := io.ReadAll(io.LimitReader(f, MaxPolicyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if len(data) > MaxPolicyBytes {
		return nil, &PolicyError{Source: ref, Msg: fmt.Sprintf("larger than 1 MiB (%d bytes), the limit for a policy file; is it the right file?", MaxPolicyBytes)}
	}
	return ParsePolicy(data, ref)
}

// builtinNames lists the compiled-in policies, as LoadPolicy takes them.
var builtinNames = []string{DefaultPolicyName, LenientPolicyName}

// builtinName returns the built-in policy name that ref spells, in any
// letter case.
func builtinName(ref string) (string, bool) {
	for _, n := range builtinNames {
		if strings.EqualFold(ref, n) {
			return n, true
		}
	}
	return "", false
}

func builtinList() string {
	return `"` + strings.Join(builtinNames, `", "`) + `"`
}

// Default returns the compiled-in strict policy.
func Default() *Policy {
	p, err := builtin(DefaultPolicyName)
	if err != nil {
		panic(err) // the embedded file is tested; this cannot happen in a release
	}
	return p
}

// Lenient returns the compiled-in lenient policy.
func Lenient() *Policy {
	p, err := builtin(LenientPolicyName)
	if err != nil {
		panic(err)
	}
	return p
}

func builtin(name string) (*Policy, error) {
	data, err := builtinFS.ReadFile("policies/" + name + ".toml")
	if err != nil {
		return nil, fmt.Errorf("policy: no builtin policy %q", name)
	}
	return ParsePolicy(data, "builtin:"+name)
}

// BuiltinPolicy returns the text of a compiled-in policy file, named in any
// letter case, so users can start their own policy from it. The error for
// an unknown name lists the built-in names.
func BuiltinPolicy(name string) ([]byte, error) {
	n, ok := builtinName(name)
	if !ok {
		return nil, fmt.Errorf("no built-in policy %q (built-in: %s)%s", name, strings.Join(builtinNames, ", "), didYouMean(name, builtinNames))
	}
	return builtinFS.ReadFile("policies/" + n + ".toml")
}

// ParsePolicy parses and validates a TOML policy. source names it in errors.
// Every rule must be given an action explicitly: a policy that is silent
// about a rule is rejected, so that a new rule in a later provgraph release
// cannot change a policy's keys without the policy saying so.
//
// Errors are *PolicyError values that give the line of the key concerned
// where there is one, say what type a key takes in the file format's own
// terms, and suggest the nearest name for an unknown rule or key.
func ParsePolicy(data []byte, source string) (*Policy, error) {
	var tree map[string]any
	if _, err := toml.Decode(string(data), &tree); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &PolicyError{Source: source, Line: pe.Position.Line, Msg: pe.Message}
		}
		return nil, &PolicyError{Source: source, Msg: err.Error()}
	}
	// The file is valid TOML: from here on every error names a key, and its
	// line is looked up only when there is an error to report.
	var loc *keyLocator
	at := func(path ...any) int {
		if loc == nil {
			loc = newKeyLocator(data)
		}
		return loc.line(path...)
	}
	if err := checkShape(tree, policyShape, nil, at, source); err != nil {
		return nil, err
	}
	var f policyFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		// checkShape has seen every key the struct decodes.
		return nil, &PolicyError{Source: source, Msg: err.Error()}
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		path := make([]any, len(k))
		for i, s := range k {
			path[i] = s
		}
		return nil, &PolicyError{Source: source, Line: at(path...),
			Msg: fmt.Sprintf("unknown key %q%s", k.String(), didYouMean(k[len(k)-1], fieldsAt(k[:len(k)-1])))}
	}
	p := &Policy{file: f, source: source, ports: map[string]string{}, schemes: map[string]bool{}, text: bytes.Clone(data)}
	bad := func(path []any, format string, args ...any) error {
		line := 0
		if path != nil {
			line = at(path...)
		}
		return &PolicyError{Source: source, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if f.Name == "" {
		return nil, bad([]any{"name"}, "missing name")
	}
	if f.Version == "" {
		return nil, bad([]any{"version"}, "missing version")
	}
	if strings.ContainsAny(f.Version, "+ \t") {
		return nil, bad([]any{"version"}, "version %q must not contain '+' or spaces: provgraph appends the engine after '+'", f.Version)
	}
	if len(f.Schemes) == 0 {
		return nil, bad([]any{"schemes"}, "schemes is empty: list the schemes to accept, for example [\"http\", \"https\"]")
	}
	for _, s := range f.Schemes {
		if _, ok := specialSchemes[s]; !ok {
			return nil, bad([]any{"schemes"}, "scheme %q is not supported: provgraph parses the URL Standard's special schemes %s", s, specialSchemeList())
		}
		p.schemes[s] = true
		p.http = p.http || s == "http"
		p.https = p.https || s == "https"
	}
	for _, s := range slices.Sorted(maps.Keys(f.DefaultPort)) {
		port := f.DefaultPort[s]
		if _, ok := specialSchemes[s]; !ok {
			return nil, bad([]any{"default_ports", s}, "default_ports: unknown scheme %q", s)
		}
		if port < 1 || port > 65535 {
			return nil, bad([]any{"default_ports", s}, "default_ports.%s = %d: not a port number", s, port)
		}
		p.ports[s] = fmt.Sprint(port)
	}
	for _, name := range slices.Sorted(maps.Keys(f.Rules)) {
		a := f.Rules[name]
		info, ok := lookupRule(Rule(name))
		if !ok {
			if hint := didYouMean(name, ruleNames()); hint != "" {
				return nil, bad([]any{"rules", name}, "rules: unknown rule %q%s", name, hint)
			}
			return nil, bad([]any{"rules", name}, "rules: unknown rule %q (rules are: %s)", name, strings.Join(ruleNames(), ", "))
		}
		act := Action(a)
		switch {
		case act == Apply, act == Reject && info.kind == ParseRule, act == Off && info.kind == PolicyRule:
		case info.kind == ParseRule:
			return nil, bad([]any{"rules", name}, "rules.%s = %q: a parse rule takes \"apply\" or \"reject\"", name, a)
		default:
			return nil, bad([]any{"rules", name}, "rules.%s = %q: a policy step takes \"apply\" or \"off\"", name, a)
		}
		p.actions[ruleIndex(Rule(name))] = act
	}
	for i, r := range ruleTable {
		if p.actions[i] == "" {
			return nil, bad([]any{"rules"}, "rules: no action for %q; every rule must be listed", r.name)
		}
	}
	m, err := newParamMatcher(f.Tracking)
	if err != nil {
		return nil, bad(entryPath(err, "tracking_params"), "tracking_params: %v", err)
	}
	p.tracking = m
	for i, h := range f.Hosts {
		hr, err := compileHostRule(h)
		if err != nil {
			return nil, bad([]any{"host", i}, "host[%d] (%s): %v", i, h.Name, err)
		}
		p.hosts = append(p.hosts, hr)
	}
	p.digest = computeDigest(f)
	return p, nil
}

// entryPath returns the key path of the list entry an error of
// newParamMatcher is about.
func entryPath(err error, list string) []any {
	var ee *entryError
	if errors.As(err, &ee) {
		return []any{list, ee.index}
	}
	return []any{list}
}

func ruleNames() []string {
	var out []string
	for _, r := range ruleTable {
		out = append(out, string(r.name))
	}
	return out
}

func compileHostRule(h HostRule) (hostRule, error) {
	hr := hostRule{HostRule: h}
	if h.Name == "" {
		return hr, errors.New("missing name")
	}
	if len(h.Hosts) == 0 {
		return hr, errors.New("hosts is empty")
	}
	if h.Reason == "" {
		return hr, errors.New("missing reason: a server-defined equivalence must say why it is known")
	}
	for _, host := range h.Hosts {
		if host != strings.ToLower(host) || strings.ContainsAny(host, "/:@ ") || host == "" {
			return hr, fmt.Errorf("host %q: give lowercase ASCII hostnames as they appear after IDNA", host)
		}
		if rest, ok := strings.CutPrefix(host, "*."); ok {
			hr.suffixes = append(hr.suffixes, "."+rest)
		} else if strings.Contains(host, "*") {
			return hr, fmt.Errorf("host %q: a wildcard is allowed only as a leading \"*.\"", host)
		} else {
			hr.exact = append(hr.exact, host)
		}
	}
	for _, v := range []struct{ field, val string }{{"path_case", h.PathCase}, {"trailing_slash", h.TrailingSlash}} {
		if v.val != "" && v.val != "insensitive" && v.val != "sensitive" {
			return hr, fmt.Errorf("%s = %q: want \"insensitive\" or \"sensitive\"", v.field, v.val)
		}
	}
	m, err := newParamMatcher(h.DropParams)
	if err != nil {
		return hr, fmt.Errorf("drop_params: %v", err)
	}
	hr.params = m
	return hr, nil
}

func (h *hostRule) matches(host string) bool {
	if slices.Contains(h.exact, host) {
		return true
	}
	for _, s := range h.suffixes {
		if len(host) > len(s) && strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// computeDigest hashes a canonical JSON form of the policy together with
// the engine fingerprint. Formatting and comments of the file do not change
// the digest; any change of a rule, list, name or version does, and so does
// a change of the parser, Go or x/net version or Unicode tables.
func computeDigest(f policyFile) string {
	canon, err := json.Marshal(struct {
		Policy policyFile `json:"policy"`
		Engine string     `json:"engine"`
	}{f, EngineFingerprint()})
	if err != nil {
		panic(err) // plain data; cannot fail
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// acceptsScheme reports whether the policy accepts a lowercase scheme.
func (p *Policy) acceptsScheme(s string) bool {
	switch s {
	case "https":
		return p.https
	case "http":
		return p.http
	}
	return p.schemes[s]
}

// Name returns the policy's declared name.
func (p *Policy) Name() string { return p.file.Name }

// DeclaredVersion returns the version written in the policy file.
func (p *Policy) DeclaredVersion() string { return p.file.Version }

// Version returns the version to report with every result: the declared
// version, "+", and the engine fingerprint. It changes whenever the parser,
// the Go release, golang.org/x/net or its Unicode tables change, since any of
// those can change keys.
func (p *Policy) Version() string { return p.file.Version + "+" + EngineFingerprint() }

// Digest returns "sha256:" and the hex digest of the policy's canonical form
// and the engine fingerprint.
func (p *Policy) Digest() string { return p.digest }

// Text returns the policy file exactly as it was loaded.
func (p *Policy) Text() []byte { return bytes.Clone(p.text) }

// Source returns where the policy was loaded from.
func (p *Policy) Source() string { return p.source }

// Description returns the policy's description.
func (p *Policy) Description() string { return p.file.Description }

// Action returns the policy's action for a rule, or "" for an unknown rule.
func (p *Policy) Action(r Rule) Action {
	i := ruleIndex(r)
	if i < 0 {
		return ""
	}
	return p.actions[i]
}

// TrackingParams returns the policy's tracking parameter list, in file order.
func (p *Policy) TrackingParams() []ParamRule { return slices.Clone(p.file.Tracking) }

// HostRules returns the policy's host rules, in file order.
func (p *Policy) HostRules() []HostRule {
	out := make([]HostRule, len(p.hosts))
	for i, h := range p.hosts {
		out[i] = h.HostRule
	}
	return out
}

// DefaultPorts returns the policy's default port for each scheme it lists.
func (p *Policy) DefaultPorts() map[string]int {
	out := make(map[string]int, len(p.file.DefaultPort))
	for k, v := range p.file.DefaultPort {
		out[k] = v
	}
	return out
}

// Schemes returns the schemes the policy accepts.
func (p *Policy) Schemes() []string { return slices.Clone(p.file.Schemes) }
