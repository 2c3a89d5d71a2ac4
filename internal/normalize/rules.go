package normalize

// Rule names one step of the normalization sequence. Every transformation the
// engine makes is logged under one of these names, and every rule is listed
// in the policy with the action to take when it applies.
type Rule string

// RuleKind says which actions a rule accepts.
type RuleKind int

const (
	// ParseRule is a normalization or validation error of the URL Standard's
	// parse. The policy may apply it (log it and continue) or reject the
	// input; it cannot be switched off, because the parse result would then no
	// longer be the URL a browser requests.
	ParseRule RuleKind = iota
	// PolicyRule is one of the policy's own steps after the parse. The policy
	// may apply it or switch it off.
	PolicyRule
)

// Action is what the policy does when a rule applies to an input.
type Action string

const (
	// Apply performs the rule's transformation (or tolerates the validation
	// error) and logs it as a step.
	Apply Action = "apply"
	// Reject refuses the input with an error naming the rule.
	Reject Action = "reject"
	// Off skips a policy step entirely.
	Off Action = "off"
)

// The parse rules, in the order the sequence meets them. Each corresponds to
// a normalization the WHATWG URL Standard's basic URL parser performs
// silently, or to one of its validation errors (named in brackets).
const (
	// RuleStripC0Space removes leading and trailing C0 controls and spaces
	// (URL Standard §4.4 basic URL parser, step 1.2; [invalid-URL-unit]).
	RuleStripC0Space Rule = "strip-c0-space"
	// RuleStripTabNewline removes every ASCII tab and newline (§4.4 step 3;
	// [invalid-URL-unit]).
	RuleStripTabNewline Rule = "strip-tab-newline"
	// RuleResolveReference resolves a relative reference against the base URL
	// (§4.4 relative state; RFC 3986 §5.2).
	RuleResolveReference Rule = "resolve-reference"
	// RuleLowercaseScheme lowercases the scheme (§4.4 scheme state; RFC 3986
	// §6.2.2.1).
	RuleLowercaseScheme Rule = "lowercase-scheme"
	// RuleBackslash treats "\" as "/" in the authority prefix and path of a
	// special URL (§4.4; [invalid-reverse-solidus]).
	RuleBackslash Rule = "backslash-as-slash"
	// RuleAuthoritySlashes accepts a special URL whose scheme is not followed
	// by exactly "//" (§4.4 special authority slashes state;
	// [special-scheme-missing-following-solidus]).
	RuleAuthoritySlashes Rule = "authority-slashes"
	// RuleUserinfo accepts credentials before the host and percent-encodes
	// them with the userinfo encode set (§4.4 authority state;
	// [invalid-credentials]).
	RuleUserinfo Rule = "userinfo"
	// RuleHostPercentDecode percent-decodes the host before IDNA processing
	// (§3.5 host parsing, step 4).
	RuleHostPercentDecode Rule = "host-percent-decode"
	// RuleLowercaseHost lowercases an ASCII host (§3.3 domain to ASCII: an
	// ASCII domain is only lowercased; RFC 3986 §6.2.2.1).
	RuleLowercaseHost Rule = "lowercase-host"
	// RuleInvalidPunycode accepts an ASCII host with an "xn--" label that
	// UTS #46 finds invalid, the empty label "xn--" included (§4 step 4.1);
	// the Standard keeps such a host as it is ([domain-to-ASCII] as a
	// validation error, whatwg/url#914).
	RuleInvalidPunycode Rule = "invalid-punycode"
	// RuleHostIDNA maps a non-ASCII host through UTS #46 ToASCII,
	// non-transitional, as the Standard's domain to ASCII does (§3.3;
	// [domain-to-ASCII]).
	RuleHostIDNA Rule = "host-idna"
	// RuleIPv4 rewrites a host that ends in a number into dotted-decimal IPv4
	// (§3.5 IPv4 parser and serializer).
	RuleIPv4 Rule = "ipv4-canonical"
	// RuleIPv4Nonstandard accepts an IPv4 host with hexadecimal or octal
	// parts, an empty last part, or a last part above 255 that stands for
	// several bytes, as in "http://2130706433/" ([IPv4-non-decimal-part],
	// [IPv4-empty-part], [IPv4-out-of-range-part]).
	RuleIPv4Nonstandard Rule = "ipv4-nonstandard"
	// RuleIPv6 serializes an IPv6 address in its shortest lowercase form
	// (§3.6 IPv6 serializer; RFC 5952).
	RuleIPv6 Rule = "ipv6-canonical"
	// RuleEmptyPort removes a ":" with no port digits after it (§4.4 port
	// state).
	RuleEmptyPort Rule = "empty-port"
	// RulePortLeadingZeros removes leading zeros from the port (§4.4 port
	// state).
	RulePortLeadingZeros Rule = "port-leading-zeros"
	// RuleDefaultPort removes a port that the policy lists as the scheme's
	// default (§4.4 port state; RFC 3986 §6.2.3).
	RuleDefaultPort Rule = "default-port"
	// RuleEmptyPath gives an empty path of a special URL the path "/" (§4.4
	// path start state; RFC 3986 §6.2.3).
	RuleEmptyPath Rule = "empty-path"
	// RuleInvalidURLUnit accepts a code point that is not a URL code point in
	// the path, query or fragment; the encode sets percent-encode most of them
	// ([invalid-URL-unit]).
	RuleInvalidURLUnit Rule = "invalid-url-unit"
	// RuleInvalidPercent accepts a "%" not followed by two hex digits, which
	// the Standard keeps as it is ([invalid-URL-unit]).
	RuleInvalidPercent Rule = "invalid-percent-escape"
	// RulePathEncode percent-encodes the path with the path percent-encode
	// set, non-ASCII as UTF-8 (§1.3 percent-encoded bytes).
	RulePathEncode Rule = "path-encode-set"
	// RuleDotSegments removes "." and ".." segments, including their
	// percent-encoded spellings %2e (§4.4 path state; RFC 3986 §5.2.4).
	RuleDotSegments Rule = "dot-segments"
	// RuleQueryEncode percent-encodes the query with the special-query
	// percent-encode set (§1.3).
	RuleQueryEncode Rule = "query-encode-set"
	// RuleFragmentEncode percent-encodes the fragment with the fragment
	// percent-encode set (§1.3). The key drops the fragment, but the parsed
	// href and the evidence keep it.
	RuleFragmentEncode Rule = "fragment-encode-set"
)

// The policy's own steps, applied after the parse.
const (
	// RulePercentCase uppercases the hex digits of percent-escapes in the
	// path and query (RFC 3986 §6.2.2.1).
	RulePercentCase Rule = "percent-encoding-case"
	// RuleDecodeUnreserved decodes percent-escapes of unreserved characters
	// (ALPHA DIGIT - . _ ~) in the path and query, and only those
	// (RFC 3986 §2.3, §6.2.2.2).
	RuleDecodeUnreserved Rule = "decode-unreserved"
	// RuleDropFragment removes the fragment from the key; it is returned
	// separately as evidence (RFC 3986 §3.5).
	RuleDropFragment Rule = "drop-fragment"
	// RuleTrackingParams drops query parameters the policy names as
	// tracking-only.
	RuleTrackingParams Rule = "tracking-params"
	// RuleSortQuery sorts query parameters by name, stably. Off by default:
	// order can select content.
	RuleSortQuery Rule = "sort-query"
	// RuleHostPathCase lowercases the ASCII letters of the path, outside
	// percent-escapes, for hosts whose policy rule declares paths
	// case-insensitive. Server-defined: marks the key for content-hash
	// confirmation.
	RuleHostPathCase Rule = "host-path-case"
	// RuleHostTrailingSlash removes one trailing "/" from a non-root path for
	// hosts whose policy rule declares it insignificant. Server-defined.
	RuleHostTrailingSlash Rule = "host-trailing-slash"
	// RuleHostParams drops query parameters a host rule names as tracking-only
	// on that host.
	RuleHostParams Rule = "host-params"
)

// ruleID indexes ruleTable; the hot path uses it instead of names.
type ruleID int

const (
	idStripC0Space ruleID = iota
	idStripTabNewline
	idResolveReference
	idLowercaseScheme
	idBackslash
	idAuthoritySlashes
	idUserinfo
	idHostPercentDecode
	idLowercaseHost
	idInvalidPunycode
	idHostIDNA
	idIPv4
	idIPv4Nonstandard
	idIPv6
	idEmptyPort
	idPortLeadingZeros
	idDefaultPort
	idEmptyPath
	idInvalidURLUnit
	idInvalidPercent
	idPathEncode
	idDotSegments
	idQueryEncode
	idFragmentEncode
	idPercentCase
	idDecodeUnreserved
	idDropFragment
	idTrackingParams
	idHostParams
	idSortQuery
	idHostPathCase
	idHostTrailingSlash
	numRules
)

// ruleInfo describes a rule for the policy loader and the documentation.
type ruleInfo struct {
	name Rule
	kind RuleKind
}

// ruleTable lists every rule in sequence order. The order is fixed: it is the
// order of the URL Standard's parse followed by the policy steps, and a policy
// cannot change it.
var ruleTable = [numRules]ruleInfo{
	idStripC0Space:      {RuleStripC0Space, ParseRule},
	idStripTabNewline:   {RuleStripTabNewline, ParseRule},
	idResolveReference:  {RuleResolveReference, ParseRule},
	idLowercaseScheme:   {RuleLowercaseScheme, ParseRule},
	idBackslash:         {RuleBackslash, ParseRule},
	idAuthoritySlashes:  {RuleAuthoritySlashes, ParseRule},
	idUserinfo:          {RuleUserinfo, ParseRule},
	idHostPercentDecode: {RuleHostPercentDecode, ParseRule},
	idLowercaseHost:     {RuleLowercaseHost, ParseRule},
	idInvalidPunycode:   {RuleInvalidPunycode, ParseRule},
	idHostIDNA:          {RuleHostIDNA, ParseRule},
	idIPv4:              {RuleIPv4, ParseRule},
	idIPv4Nonstandard:   {RuleIPv4Nonstandard, ParseRule},
	idIPv6:              {RuleIPv6, ParseRule},
	idEmptyPort:         {RuleEmptyPort, ParseRule},
	idPortLeadingZeros:  {RulePortLeadingZeros, ParseRule},
	idDefaultPort:       {RuleDefaultPort, ParseRule},
	idEmptyPath:         {RuleEmptyPath, ParseRule},
	idInvalidURLUnit:    {RuleInvalidURLUnit, ParseRule},
	idInvalidPercent:    {RuleInvalidPercent, ParseRule},
	idPathEncode:        {RulePathEncode, ParseRule},
	idDotSegments:       {RuleDotSegments, ParseRule},
	idQueryEncode:       {RuleQueryEncode, ParseRule},
	idFragmentEncode:    {RuleFragmentEncode, ParseRule},
	idPercentCase:       {RulePercentCase, PolicyRule},
	idDecodeUnreserved:  {RuleDecodeUnreserved, PolicyRule},
	idDropFragment:      {RuleDropFragment, PolicyRule},
	idTrackingParams:    {RuleTrackingParams, PolicyRule},
	idHostParams:        {RuleHostParams, PolicyRule},
	idSortQuery:         {RuleSortQuery, PolicyRule},
	idHostPathCase:      {RuleHostPathCase, PolicyRule},
	idHostTrailingSlash: {RuleHostTrailingSlash, PolicyRule},
}

// Rules returns every rule name in sequence order.
func Rules() []Rule {
	out := make([]Rule, len(ruleTable))
	for i, r := range ruleTable {
		out[i] = r.name
	}
	return out
}

// Kind returns whether r is a parse rule or a policy step, and false for an
// unknown name.
func (r Rule) Kind() (RuleKind, bool) {
	info, ok := lookupRule(r)
	return info.kind, ok
}

func lookupRule(name Rule) (ruleInfo, bool) {
	if i := ruleIndex(name); i >= 0 {
		return ruleTable[i], true
	}
	return ruleInfo{}, false
}

func ruleIndex(name Rule) int {
	for i, r := range ruleTable {
		if r.name == name {
			return i
		}
	}
	return -1
}
