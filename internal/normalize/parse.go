package normalize

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// specialSchemes are the URL Standard's special schemes other than "file",
// with their default ports (§4.1). Only these can be parsed: the policy
// chooses which of them it accepts and which ports it treats as default.
var specialSchemes = map[string]string{
	"ftp":   "21",
	"http":  "80",
	"https": "443",
	"ws":    "80",
	"wss":   "443",
}

// isSpecialScheme reports whether scheme is a key of specialSchemes,
// without hashing it.
func isSpecialScheme(scheme string) bool {
	switch scheme {
	case "http", "https", "ws", "wss", "ftp":
		return true
	}
	return false
}

func specialSchemeList() string { return "ftp, http, https, ws, wss" }

// url holds the components of a parsed URL in serialized form.
type url struct {
	scheme   string
	username string // percent-encoded
	password string // percent-encoded
	host     string // serialized: ASCII domain, dotted IPv4 or [IPv6]
	port     string // decimal, "" when absent or default
	path     string // begins with "/"
	search   string // "?" and the query; "" when there is no query
	hash     string // "#" and the percent-encoded fragment; "" when none
	rawFrag  string // the fragment exactly as in the input
	// pathPct and searchPct are false when the input's path or query had
	// no "%": the escapes of such a component are the parser's own, with
	// uppercase hex digits and never of an unreserved character.
	pathPct, searchPct bool
}

// appendPrefix appends the href up to the query: scheme, credentials, host,
// port and path.
func (u *url) appendPrefix(dst []byte) []byte {
	dst = u.appendHref(dst, false)
	return dst[:len(dst)-len(u.search)]
}

// appendHref appends the URL serializer's output (§4.5) to dst.
func (u *url) appendHref(dst []byte, fragment bool) []byte {
	dst = append(dst, u.scheme...)
	dst = append(dst, "://"...)
	if u.username != "" || u.password != "" {
		dst = append(dst, u.username...)
		if u.password != "" {
			dst = append(dst, ':')
			dst = append(dst, u.password...)
		}
		dst = append(dst, '@')
	}
	dst = append(dst, u.host...)
	if u.port != "" {
		dst = append(dst, ':')
		dst = append(dst, u.port...)
	}
	dst = append(dst, u.path...)
	dst = append(dst, u.search...)
	if fragment {
		dst = append(dst, u.hash...)
	}
	return dst
}

// run is the state of one normalization: the input, where the
// preprocessing moved it, and the step log.
type run struct {
	p    *Policy
	in   string // the input as given
	s    string // the input after preprocessing; offsets refer to it
	lead int    // bytes trimmed from the start of in
	tabs bool   // tabs or newlines were removed from in
	// The step log: the first steps are kept in stepArr, inside the run
	// (which lives on Normalize's stack), and all of them move to stepsExt
	// when there are more. Normalize copies them into the Result.
	stepArr    [resultSteps]Step
	nSteps     int
	stepsExt   []Step
	removedArr [resultRemoved]string // scratch for dropParams
	// keyCand is a key built early by the tracking step, valid while path
	// and search still equal candPath and candSearch (see policySteps).
	keyCand, candPath, candSearch string
}

// fail builds a rejection. off is a byte offset in r.s, or -1.
func (r *run) fail(code Code, off int, msg string) error {
	return &Error{Code: code, Input: r.in, Offset: r.origOffset(off), Msg: msg}
}

// origOffset maps an offset in the preprocessed string back to the input.
func (r *run) origOffset(off int) int {
	if off < 0 {
		return -1
	}
	if !r.tabs {
		return off + r.lead
	}
	kept := 0
	for i := r.lead; i < len(r.in); i++ {
		if c := r.in[i]; c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if kept == off {
			return i
		}
		kept++
	}
	return len(r.in)
}

// apply records that rule id changes before into after, or rejects the
// input when the policy says so.
func (r *run) apply(id ruleID, before, after string, off int) error {
	if r.p.actions[id] == Reject {
		name := ruleTable[id].name
		var msg string
		if before == after {
			msg = fmt.Sprintf("%q is a validation error the policy does not tolerate (policy %s: rules.%s = \"reject\")", before, r.p.file.Name, name)
		} else {
			msg = fmt.Sprintf("the URL Standard would rewrite %q as %q; policy %s rejects this (rules.%s = \"reject\")", before, after, r.p.file.Name, name)
		}
		return &Error{Code: Code(name), Rule: name, Input: r.in, Offset: r.origOffset(off), Msg: msg}
	}
	r.log(id, before, after)
	return nil
}

// log appends a step. The first step allocates room for four: 98% of
// citation URLs log at most three.
func (r *run) log(id ruleID, before, after string) {
	s := Step{Rule: ruleTable[id].name, Before: before, After: after}
	if r.stepsExt == nil && r.nSteps < len(r.stepArr) {
		r.stepArr[r.nSteps] = s
		r.nSteps++
		return
	}
	if r.stepsExt == nil {
		r.stepsExt = append(make([]Step, 0, 2*len(r.stepArr)), r.stepArr[:r.nSteps]...)
	}
	r.stepsExt = append(r.stepsExt, s)
	r.nSteps++
}

// stepAt returns the i-th logged step.
func (r *run) stepAt(i int) *Step {
	if r.stepsExt != nil {
		return &r.stepsExt[i]
	}
	return &r.stepArr[i]
}

func isC0OrSpace(c byte) bool { return c <= 0x20 }

// hasTabOrNewline reports whether s contains an ASCII tab or newline, which
// the basic URL parser removes (§4.4, step 3).
func hasTabOrNewline(s string) bool {
	// Three vectorized scans beat one byte loop on URL-sized inputs.
	return strings.IndexByte(s, '\t') >= 0 || strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// parse runs the URL Standard's basic URL parser for special schemes
// (§4.4), turning each silent normalization into a logged, policy-controlled
// step. base is nil when no base URL was given.
func (r *run) parse(base *url) (u url, err error) {
	if r.fastParse(r.in, &u) {
		return u, nil
	}
	return r.parseFull(base)
}

// parseFull is parse without the fast path.
func (r *run) parseFull(base *url) (u url, err error) {
	in := r.in
	s := in
	if !printableASCII(in) {
		if s, err = r.preprocess(); err != nil {
			return u, err
		}
	}
	r.s = s
	if s == "" {
		if base != nil {
			// No scheme state with an empty input: the base URL itself,
			// without its fragment (relative state, "EOF").
			return r.relative(base, s, 0)
		}
		return u, r.fail(CodeEmptyInput, -1, "nothing to parse")
	}

	// Scheme state (§4.4): ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":".
	schemeEnd := -1
	if isAlpha(s[0]) {
		for i := 1; i < len(s); i++ {
			c := s[i]
			if c == ':' {
				schemeEnd = i
				break
			}
			if !(isAlpha(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
				break
			}
		}
	}
	if schemeEnd < 0 {
		// No scheme state: a relative reference.
		if base == nil {
			return u, r.fail(CodeMissingScheme, 0, "no scheme, and no base URL to resolve a relative reference against [missing-scheme-non-relative-URL]")
		}
		return r.relative(base, s, 0)
	}
	rawScheme := s[:schemeEnd]
	scheme := asciiLower(rawScheme)
	if !isSpecialScheme(scheme) || !slices.Contains(r.p.file.Schemes, scheme) {
		return u, r.fail(CodeUnsupportedScheme, 0, fmt.Sprintf("scheme %q is not accepted by policy %s (it accepts %s)", rawScheme, r.p.file.Name, strings.Join(r.p.file.Schemes, ", ")))
	}
	if scheme != rawScheme {
		if err := r.apply(idLowercaseScheme, rawScheme, scheme, 0); err != nil {
			return u, err
		}
	}
	rest, restOff := s[schemeEnd+1:], schemeEnd+1
	if base != nil && base.scheme == scheme && !strings.HasPrefix(rest, "//") {
		// Special relative or authority state: "http:foo" against an http
		// base is a relative reference.
		if err := r.apply(idAuthoritySlashes, s[:restOff], scheme+"://", restOff); err != nil {
			return u, err
		}
		return r.relative(base, rest, restOff)
	}
	u.scheme = scheme
	// Special authority slashes and ignore slashes states.
	n := 0
	for n < len(rest) && (rest[n] == '/' || rest[n] == '\\') {
		n++
	}
	if err := r.authoritySlashes(rest[:n], restOff, false); err != nil {
		return u, err
	}
	return u, r.authority(&u, rest[n:], restOff+n)
}

// printableASCII reports whether every byte of s is in 0x21..0x7F: such an
// input is valid UTF-8 and preprocessing leaves it as it is.
func printableASCII(s string) bool {
	const lo, hi = 0x2121212121212121, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8]
		x := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		// A byte below 0x21 leaves a borrow in its high bit; a byte at or
		// above 0x80 has its high bit set.
		if ((x-lo)&^x|x)&hi != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// preprocess validates the input as UTF-8 and applies the preprocessing
// of §4.4 basic URL parser, steps 1 and 3.
func (r *run) preprocess() (s string, err error) {
	in := r.in
	if !utf8.ValidString(in) {
		for i := 0; i < len(in); {
			c, n := utf8.DecodeRuneInString(in[i:])
			if c == utf8.RuneError && n == 1 {
				return "", &Error{Code: CodeInvalidUTF8, Input: in, Offset: i, Msg: fmt.Sprintf("byte 0x%02x is not valid UTF-8", in[i])}
			}
			i += n
		}
	}
	s = in
	start, end := 0, len(s)
	for start < end && isC0OrSpace(s[start]) {
		start++
	}
	for end > start && isC0OrSpace(s[end-1]) {
		end--
	}
	r.lead = start
	if start > 0 || end < len(s) {
		s = s[start:end]
		if err := r.apply(idStripC0Space, in, s, -1); err != nil {
			return "", err
		}
	}
	if hasTabOrNewline(s) {
		t := strings.Map(func(c rune) rune {
			if c == '\t' || c == '\n' || c == '\r' {
				return -1
			}
			return c
		}, s)
		r.tabs = true
		if err := r.apply(idStripTabNewline, s, t, -1); err != nil {
			return "", err
		}
		s = t
	}
	return s, nil
}

// authoritySlashes logs the backslash and slash-count rules for the slashes
// that introduce an authority. relativeSlash is true when one slash was
// already consumed by the relative slash state.
func (r *run) authoritySlashes(slashes string, off int, relativeSlash bool) error {
	if strings.IndexByte(slashes, '\\') >= 0 {
		if err := r.apply(idBackslash, slashes, strings.ReplaceAll(slashes, "\\", "/"), off); err != nil {
			return err
		}
	}
	if len(slashes) != 2 {
		if err := r.apply(idAuthoritySlashes, strings.ReplaceAll(slashes, "\\", "/"), "//", off); err != nil {
			return err
		}
	}
	return nil
}

// relative implements the relative and relative slash states: ref has no
// scheme of its own (or the base's scheme without slashes) and is resolved
// against base. off is ref's offset in r.s.
func (r *run) relative(base *url, ref string, off int) (u url, err error) {
	stepAt := r.nSteps
	if err := r.apply(idResolveReference, ref, "", off); err != nil {
		return u, err
	}
	defer func() {
		// The step's "after" is the resolved URL, known only at the end.
		if err == nil && stepAt < r.nSteps {
			r.stepAt(stepAt).After = string(u.appendHref(nil, true))
		}
	}()
	u.scheme = base.scheme
	if ref != "" && (ref[0] == '/' || ref[0] == '\\') {
		if len(ref) > 1 && (ref[1] == '/' || ref[1] == '\\') {
			// Scheme-relative: "//host/path".
			n := 0
			for n < len(ref) && (ref[n] == '/' || ref[n] == '\\') {
				n++
			}
			if err := r.authoritySlashes(ref[:n], off, true); err != nil {
				return u, err
			}
			return u, r.authority(&u, ref[n:], off+n)
		}
		// Path-absolute: keep the base's authority.
		u.username, u.password, u.host, u.port = base.username, base.password, base.host, base.port
		return u, r.pathQueryFragment(&u, ref, off, "")
	}
	u.username, u.password, u.host, u.port = base.username, base.password, base.host, base.port
	switch {
	case ref == "":
		u.path, u.search = base.path, base.search
		u.pathPct, u.searchPct = base.pathPct, base.searchPct
		return u, nil
	case ref[0] == '?':
		u.path, u.pathPct = base.path, base.pathPct
		return u, r.pathQueryFragment(&u, ref, off, "")
	case ref[0] == '#':
		u.path, u.search = base.path, base.search
		u.pathPct, u.searchPct = base.pathPct, base.searchPct
		return u, r.pathQueryFragment(&u, ref, off, "")
	}
	// Path-relative: the base path without its last segment, then ref.
	dir := base.path[:strings.LastIndexByte(base.path, '/')+1]
	return u, r.pathQueryFragment(&u, ref, off, dir)
}

// Byte classes of the authority state: the bytes that end the authority
// of a special URL, and the ones the userinfo, host and port split at.
const (
	authEnd uint8 = 1 + iota
	authAt
	authColon
	authOpen
	authClose
)

var authorityClass = [256]uint8{'/': authEnd, '\\': authEnd, '?': authEnd, '#': authEnd, '@': authAt, ':': authColon, '[': authOpen, ']': authClose}

// authority parses userinfo, host and port from a (which runs to the end of
// the input), then the path, query and fragment after them.
func (r *run) authority(u *url, a string, off int) error {
	// One pass finds the end of the authority, the last "@", and the
	// first ":" outside brackets after it.
	end, at, colon, inBrackets := 0, -1, -1, false
scan:
	for ; end < len(a); end++ {
		c := authorityClass[a[end]]
		for c == 0 {
			if end++; end == len(a) {
				break scan
			}
			c = authorityClass[a[end]]
		}
		switch c {
		case authEnd:
			break scan
		case authAt:
			at, colon, inBrackets = end, -1, false
		case authColon:
			if colon < 0 && !inBrackets {
				colon = end
			}
		case authOpen:
			inBrackets = true
		case authClose:
			inBrackets = false
		}
	}
	auth := a[:end]
	hostport, hpOff := auth, off
	if at >= 0 {
		hostport, hpOff = auth[at+1:], off+at+1
		if hostport == "" {
			return r.fail(CodeHostMissing, off+at, "credentials with no host after \"@\" [host-missing]")
		}
		info := auth[:at]
		user, pass, hasPass := strings.Cut(info, ":")
		u.username = encode(user, userinfoSet)
		if hasPass {
			u.password = encode(pass, userinfoSet)
		}
		var after string
		if u.username != "" || u.password != "" {
			after = u.username
			if u.password != "" {
				after += ":" + u.password
			}
			after += "@"
		}
		if err := r.apply(idUserinfo, info+"@", after, off); err != nil {
			return err
		}
	}
	// Host state: the first ":" outside brackets ends the host.
	hostEnd := len(hostport)
	if colon >= 0 {
		hostEnd = colon - (at + 1)
	}
	rawHost := hostport[:hostEnd]
	if rawHost == "" {
		return r.fail(CodeHostMissing, hpOff, "the URL has no host [host-missing]")
	}
	host, err := r.parseHost(rawHost, hpOff)
	if err != nil {
		return err
	}
	u.host = host
	if hostEnd < len(hostport) {
		if err := r.port(u, hostport[hostEnd+1:], hpOff+hostEnd+1); err != nil {
			return err
		}
	}
	return r.pathQueryFragment(u, a[end:], off+end, "")
}

// port implements the port state (§4.4).
func (r *run) port(u *url, raw string, off int) error {
	if raw == "" {
		return r.apply(idEmptyPort, ":", "", off-1)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return r.fail(CodeInvalidPort, off+i, fmt.Sprintf("port %q is not a number [port-invalid]", raw))
		}
	}
	p := strings.TrimLeft(raw, "0")
	if p == "" {
		p = "0"
	}
	if len(p) > 5 || len(p) == 5 && p > "65535" {
		return r.fail(CodePortOutOfRange, off, fmt.Sprintf("port %s is above 65535 [port-out-of-range]", raw))
	}
	if p != raw {
		if err := r.apply(idPortLeadingZeros, raw, p, off); err != nil {
			return err
		}
	}
	if def, ok := r.p.ports[u.scheme]; ok && p == def {
		return r.apply(idDefaultPort, ":"+p, "", off-1)
	}
	u.port = p
	return nil
}

// pathQueryFragment parses what follows the authority (path start, path,
// query and fragment states). dir, when not empty, is the base directory a
// path-relative reference is merged into.
func (r *run) pathQueryFragment(u *url, s string, off int, dir string) error {
	frag := -1
	if i := strings.IndexByte(s, '#'); i >= 0 {
		frag = i
	}
	head := s
	if frag >= 0 {
		head = s[:frag]
	}
	q := strings.IndexByte(head, '?')
	pathPart := head
	if q >= 0 {
		pathPart = head[:q]
	}
	if pathPart != "" || dir != "" || u.path == "" {
		if err := r.path(u, pathPart, off, dir); err != nil {
			return err
		}
	}
	if q >= 0 {
		raw := head[q+1:]
		m := classify(raw)
		if err := r.validateUnits(raw, m, off+q+1); err != nil {
			return err
		}
		u.search, u.searchPct = head[q:], m&clsPercent != 0
		if m&clsQueryEnc != 0 {
			u.search = string(appendEncoded(append(make([]byte, 0, len(raw)+17), '?'), raw, specialQuerySet))
			if err := r.apply(idQueryEncode, raw, u.search[1:], off+q+1); err != nil {
				return err
			}
		}
	}
	if frag >= 0 {
		raw := s[frag+1:]
		m := classify(raw)
		if err := r.validateUnits(raw, m, off+frag+1); err != nil {
			return err
		}
		u.rawFrag, u.hash = r.rawFragment(raw), s[frag:]
		if m&clsFragEnc != 0 {
			u.hash = string(appendEncoded(append(make([]byte, 0, len(raw)+17), '#'), raw, fragmentSet))
			if err := r.apply(idFragmentEncode, raw, u.hash[1:], off+frag+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// rawFragment returns the fragment exactly as the input spelled it: when
// preprocessing removed tabs or newlines, the fragment is cut from the
// original input instead of the cleaned one.
func (r *run) rawFragment(clean string) string {
	if !r.tabs {
		return clean
	}
	i := strings.IndexByte(r.in, '#')
	if i < 0 {
		return clean
	}
	return strings.TrimRightFunc(r.in[i+1:], func(c rune) bool { return c <= 0x20 })
}

// validateUnits applies the invalid-URL-unit and invalid-percent-escape
// rules to a path, query or fragment whose byte classes are m.
func (r *run) validateUnits(s string, m uint8, off int) error {
	if m&(clsBadUnit|clsPercent|clsNonASCII) == 0 {
		return nil
	}
	var badUnit, badPercent int
	if m&clsBadUnit != 0 || m&clsNonASCII != 0 && mayHaveBadNonASCII(s) {
		badUnit, badPercent = scanUnits(s)
	} else {
		badUnit, badPercent = -1, firstBadPercent(s)
	}
	if badUnit >= 0 {
		_, n := utf8.DecodeRuneInString(s[badUnit:])
		unit := s[badUnit : badUnit+n]
		if err := r.apply(idInvalidURLUnit, unit, unit, off+badUnit); err != nil {
			return err
		}
	}
	if badPercent >= 0 {
		esc := s[badPercent:min(len(s), badPercent+3)]
		if err := r.apply(idInvalidPercent, esc, esc, off+badPercent); err != nil {
			return err
		}
	}
	return nil
}

// path implements the path start and path states for a special URL: "\" is
// a separator, code points are percent-encoded with the path set, and dot
// segments (".", "..", "%2e" and their mixes) are removed.
func (r *run) path(u *url, p string, off int, dir string) error {
	m := classify(p)
	if m&clsBackslash != 0 {
		fixed := strings.ReplaceAll(p, "\\", "/")
		if err := r.apply(idBackslash, p, fixed, off); err != nil {
			return err
		}
		p = fixed
	}
	if err := r.validateUnits(p, m, off); err != nil {
		return err
	}
	if dir != "" {
		// The base directory is already encoded and clean, but the join
		// may form new dot segments: run every step.
		m = 0xff
		p = dir + p
	} else if p == "" {
		if err := r.apply(idEmptyPath, "", "/", off); err != nil {
			return err
		}
		p = "/"
	} else if p[0] != '/' {
		p = "/" + p
	}
	enc := p
	if m&clsPathEnc != 0 {
		enc = encode(p, pathSet)
	}
	if enc != p {
		if err := r.apply(idPathEncode, p, enc, off); err != nil {
			return err
		}
	}
	clean := enc
	if m&clsPercent != 0 || m&clsDot != 0 && hasDotSegmentASCII(enc) {
		clean = removeDotSegments(enc)
	}
	if clean != enc {
		if err := r.apply(idDotSegments, enc, clean, off); err != nil {
			return err
		}
	}
	u.path, u.pathPct = clean, m&clsPercent != 0
	return nil
}

// isSingleDot reports "." or "%2e" (ASCII case-insensitive).
func isSingleDot(seg string) bool {
	return seg == "." || len(seg) == 3 && seg[0] == '%' && seg[1] == '2' && (seg[2]|0x20) == 'e'
}

// isDoubleDot reports "..", ".%2e", "%2e." or "%2e%2e" (ASCII
// case-insensitive).
func isDoubleDot(seg string) bool {
	switch len(seg) {
	case 2:
		return seg == ".."
	case 4:
		return seg[0] == '.' && isSingleDot(seg[1:]) || seg[3] == '.' && isSingleDot(seg[:3])
	case 6:
		return isSingleDot(seg[:3]) && isSingleDot(seg[3:])
	}
	return false
}

// removeDotSegments removes dot segments from an absolute path the way the
// URL Standard's path state does (the equivalent of RFC 3986 §5.2.4, with
// %2e counted as "."). Repeated slashes are kept: an empty segment is a
// segment.
func removeDotSegments(p string) string {
	if !hasDotSegment(p) {
		return p
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case isDoubleDot(seg):
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case isSingleDot(seg):
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/")
}

func hasDotSegment(p string) bool {
	for i := 0; i < len(p); {
		j := strings.IndexByte(p[i+1:], '/')
		var seg string
		if j < 0 {
			seg = p[i+1:]
		} else {
			seg = p[i+1 : i+1+j]
		}
		if isSingleDot(seg) || isDoubleDot(seg) {
			return true
		}
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// hasDotSegmentASCII is hasDotSegment for a path without "%": it looks only
// at the dots, since a "." or ".." segment starts with a dot after "/".
func hasDotSegmentASCII(p string) bool {
	for i := strings.IndexByte(p, '.'); i >= 0; {
		if i > 0 && p[i-1] == '/' {
			j := i + 1
			if j < len(p) && p[j] == '.' {
				j++
			}
			if j == len(p) || p[j] == '/' {
				return true
			}
		}
		k := strings.IndexByte(p[i+1:], '.')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}
