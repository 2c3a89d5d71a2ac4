package normalize_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"

	"github.com/provgraph/provgraph/internal/normalize"
)

// conformanceDir holds the spec vectors the conformance tests run, copied
// into the repository (see its LICENSE-NOTICE.md): the tests never read
// anything outside testdata.
const conformanceDir = "testdata/conformance"

// outcome is what one policy made of one input: the href, or the rejection.
type outcome struct {
	parsed string
	err    *normalize.Error // nil when the input was accepted
}

func (o outcome) String() string {
	if o.err != nil {
		if o.err.Rule != "" {
			return "rejected (" + string(o.err.Code) + ", rule " + string(o.err.Rule) + ": " + o.err.Msg + ")"
		}
		return "rejected (" + string(o.err.Code) + ": " + o.err.Msg + ")"
	}
	return o.parsed
}

// expectation is what the URL Standard says about one input: failure, or
// the href.
type expectation struct {
	failure bool
	href    string
}

func (e expectation) String() string {
	if e.failure {
		return "failure"
	}
	return e.href
}

// parseWith normalizes input against base (nil for none) under policy p. A
// base that the policy rejects makes the input's outcome that rejection, as
// the URL constructor throws when its base does not parse.
func parseWith(tb testing.TB, p *normalize.Policy, input string, base *string) outcome {
	tb.Helper()
	var opts *normalize.Options
	if base != nil {
		opts = &normalize.Options{Base: *base}
	}
	n, err := normalize.New(p, opts)
	if err == nil {
		var res normalize.Result
		res, err = n.Normalize(input)
		if err == nil {
			return outcome{parsed: res.Parsed}
		}
	}
	var e *normalize.Error
	if !errors.As(err, &e) {
		tb.Fatalf("Parse(%q, base %q): error %v is not a *normalize.Error", input, deref(base), err)
	}
	return outcome{err: e}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkLenient reports whether the lenient policy's outcome is the
// Standard's: the same href, or a rejection where the Standard fails.
func checkLenient(want expectation, got outcome) bool {
	if want.failure {
		return got.err != nil
	}
	return got.err == nil && got.parsed == want.href
}

// checkDefault reports whether the default policy's outcome is allowed: a
// rejection is a Standard failure or names the documented validation error
// (the rule) that the policy does not tolerate; an acceptance is one the
// Standard makes too and gives the lenient href.
func checkDefault(want expectation, lenient, got outcome) bool {
	if got.err != nil {
		return want.failure || got.err.Rule != ""
	}
	return !want.failure && lenient.err == nil && got.parsed == lenient.parsed
}

// updateKnown rewrites the known-differences tables from the failures of
// this run: stale cases are dropped and new failures are added with the
// reason "unclassified", which the next run refuses until someone writes
// the reason down.
var updateKnown = flag.Bool("update-known", false, "rewrite testdata/conformance/known-differences/*.json from this run's failures")

// knownDiffs is a table of known differences from one data file, read from
// testdata/conformance/known-differences/. Each case names the policy whose
// check it excuses ("lenient", "default" or "both") and a reason key; the
// reasons are written once, under "reasons". A listed case that passes is
// an error, so the table cannot go stale.
type knownDiffs struct {
	path    string
	file    knownDiffFile
	reasons map[string]string
	cases   map[diffKey]*knownCase
	order   []diffKey // this run's failing cases in order, for -update-known
	failed  map[diffKey]map[string]bool
}

type diffKey struct{ input, base string }

type knownCase struct {
	Policy string  `json:"policy"`
	Input  string  `json:"input"`
	Base   *string `json:"base,omitempty"`
	Reason string  `json:"reason"`
	seen   map[string]bool
}

type knownDiffFile struct {
	Comment []string          `json:"comment"`
	Reasons map[string]string `json:"reasons"`
	Cases   []*knownCase      `json:"cases"`
}

func loadKnownDiffs(tb testing.TB, name string) *knownDiffs {
	tb.Helper()
	path := filepath.Join(conformanceDir, "known-differences", name)
	k := &knownDiffs{path: path, cases: map[diffKey]*knownCase{}, failed: map[diffKey]map[string]bool{}}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("known differences: %v", err)
	}
	var f knownDiffFile
	if err := json.Unmarshal(data, &f); err != nil {
		tb.Fatalf("known differences %s: %v", path, err)
	}
	k.file, k.reasons = f, f.Reasons
	if k.reasons == nil {
		k.reasons = map[string]string{}
	}
	for _, c := range f.Cases {
		switch c.Policy {
		case "lenient", "default", "both":
		default:
			tb.Fatalf("%s: case %q: policy %q, want \"lenient\", \"default\" or \"both\"", path, c.Input, c.Policy)
		}
		if k.reasons[c.Reason] == "" && !*updateKnown {
			tb.Fatalf("%s: case %q: reason %q is not described under \"reasons\"", path, c.Input, c.Reason)
		}
		key := diffKey{c.Input, deref(c.Base)}
		if k.cases[key] != nil {
			tb.Fatalf("%s: case %q (base %q) is listed twice", path, c.Input, deref(c.Base))
		}
		c.seen = map[string]bool{}
		k.cases[key] = c
	}
	return k
}

func (c *knownCase) covers(policy string) bool { return c.Policy == "both" || c.Policy == policy }

// excused reports whether a case that failed under policy is listed for
// it, and marks it seen.
func (k *knownDiffs) excused(policy, input string, base *string) (reason string, ok bool) {
	key := diffKey{input, deref(base)}
	if *updateKnown {
		if k.failed[key] == nil {
			k.failed[key] = map[string]bool{}
			k.order = append(k.order, key)
		}
		k.failed[key][policy] = true
	}
	c := k.cases[key]
	if c == nil || !c.covers(policy) {
		if *updateKnown {
			return "unclassified", true
		}
		return "", false
	}
	c.seen[policy] = true
	return k.reasons[c.Reason], true
}

// rewrite writes this run's failures back as the table, keeping the
// comment, the reasons and the reason of every case still failing.
func (k *knownDiffs) rewrite(tb testing.TB) {
	tb.Helper()
	var b strings.Builder
	b.WriteString("{\n  \"comment\": [")
	for i, c := range k.file.Comment {
		b.WriteString(map[bool]string{true: ",", false: ""}[i > 0] + "\n    " + quote(c))
	}
	b.WriteString("\n  ],\n  \"reasons\": {")
	keys := make([]string, 0, len(k.reasons))
	for r := range k.reasons {
		keys = append(keys, r)
	}
	sort.Strings(keys)
	for i, r := range keys {
		b.WriteString(map[bool]string{true: ",", false: ""}[i > 0] + "\n    " + quote(r) + ": " + quote(k.reasons[r]))
	}
	b.WriteString("\n  },\n  \"cases\": [")
	for i, key := range k.order {
		policy := "both"
		if pols := k.failed[key]; !pols["lenient"] || !pols["default"] {
			policy = "lenient"
			if pols["default"] {
				policy = "default"
			}
		}
		reason := "unclassified"
		if c := k.cases[key]; c != nil {
			reason = c.Reason
		}
		b.WriteString(map[bool]string{true: ",", false: ""}[i > 0] + "\n    {\"policy\": " + quote(policy) + ", \"input\": " + quote(key.input))
		if key.base != "" {
			b.WriteString(", \"base\": " + quote(key.base))
		}
		b.WriteString(", \"reason\": " + quote(reason) + "}")
	}
	b.WriteString("\n  ]\n}\n")
	if err := os.WriteFile(k.path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// checkStale fails the test for every listed case that did not fail under
// each policy it names.
func (k *knownDiffs) checkStale(t *testing.T) {
	t.Helper()
	var stale []string
	for _, c := range k.cases {
		for _, p := range []string{"lenient", "default"} {
			if c.covers(p) && !c.seen[p] {
				stale = append(stale, p+": Parse("+quote(c.Input)+", base "+quote(deref(c.Base))+")")
			}
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("%s is listed in %s but passes (or is no longer in the data): remove it from the table", s, k.path)
	}
}

// quote writes s as a JSON string that shows its invisible code points:
// everything outside unicode.IsPrint (controls, format characters such as
// U+200D, unassigned and private-use code points), every combining mark and
// every CJK compatibility ideograph is escaped, so that spellings NFC would
// unify look different.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x80 && r >= 0x20 && r != 0x7f, r >= 0x80 && unicode.IsPrint(r) && !unicode.Is(unicode.M, r) && !isCJKCompatibility(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isCJKCompatibility reports the CJK compatibility ideographs, which look
// like the unified ideographs they decompose to.
func isCJKCompatibility(r rune) bool {
	return 0xF900 <= r && r <= 0xFAFF || 0x2F800 <= r && r <= 0x2FA1F
}

// tally counts results for one policy over one data file.
type tally struct {
	pass, known, fail int
	ruled             int // passing rejections that name a rule: a validation error the policy does not tolerate
}

// conformance runs cases through both builtin policies and reports.
type conformance struct {
	t       *testing.T
	file    string
	known   *knownDiffs
	lenient *normalize.Policy
	def     *normalize.Policy
	cases   int
	len     tally
	dflt    tally
}

func newConformance(t *testing.T, file, knownFile string) *conformance {
	return &conformance{
		t: t, file: file,
		known:   loadKnownDiffs(t, knownFile),
		lenient: normalize.Lenient(),
		def:     normalize.Default(),
	}
}

// run checks one input against its expectation under both policies.
func (c *conformance) run(input string, base *string, want expectation) {
	t := c.t
	t.Helper()
	c.cases++
	lo := parseWith(t, c.lenient, input, base)
	c.record(&c.len, "lenient", checkLenient(want, lo), input, base, lo, want)
	do := parseWith(t, c.def, input, base)
	wantDefault := want
	if !want.failure && lo.err == nil && lo.parsed != want.href {
		// The default must agree with the lenient policy; the lenient
		// difference is reported once, above.
		wantDefault.href = lo.parsed
	}
	c.record(&c.dflt, "default", checkDefault(want, lo, do), input, base, do, wantDefault)
}

func (c *conformance) record(tl *tally, policy string, ok bool, input string, base *string, got outcome, want expectation) {
	t := c.t
	t.Helper()
	if ok {
		tl.pass++ // a listed case that passes is reported by checkStale
		if got.err != nil && got.err.Rule != "" {
			tl.ruled++
		}
		return
	}
	if reason, ok := c.known.excused(policy, input, base); ok {
		tl.known++
		t.Logf("%s: known difference: Parse(%q, base %q) = %q, want %q: %s", policy, input, deref(base), got.String(), want.String(), reason)
		return
	}
	tl.fail++
	t.Errorf("%s: Parse(%q, base %q) = %q, want %q", policy, input, deref(base), got.String(), want.String())
}

// finish logs the counts and checks the table for stale entries.
func (c *conformance) finish(extra string) {
	t := c.t
	t.Helper()
	t.Logf("%s: %s%d cases; lenient pass %d/%d (known differences %d, failures %d); default pass %d/%d (%d of them rejected by a rule; known differences %d, failures %d)",
		c.file, extra, c.cases,
		c.len.pass, c.cases, c.len.known, c.len.fail,
		c.dflt.pass, c.cases, c.dflt.ruled, c.dflt.known, c.dflt.fail)
	if *updateKnown {
		c.known.rewrite(t)
		return
	}
	c.known.checkStale(t)
}

// isC0OrSpace matches the code points the basic URL parser trims from both
// ends of its input (URL Standard §4.4, step 1).
func isC0OrSpace(c rune) bool { return c <= 0x20 }

// httpScheme reports whether input, after the basic URL parser's
// preprocessing (trim C0 controls and space, remove tab and newline),
// starts with a scheme, and whether that scheme is http or https
// (ASCII case-insensitive).
func httpScheme(input string) (scheme string, hasScheme bool) {
	s := strings.TrimFunc(input, isC0OrSpace)
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	if s == "" || !isASCIIAlpha(s[0]) {
		return "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == ':' {
			return strings.ToLower(s[:i]), true
		}
		if !isASCIIAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return "", false
		}
	}
	return "", false
}

func isASCIIAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isHTTP(scheme string) bool { return scheme == "http" || scheme == "https" }
