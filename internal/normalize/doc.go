// Package normalize turns a cited URL into a comparison key by a documented,
// versioned, deterministic policy, logging every transformation, and never
// changes the input.
//
// # The sequence
//
// Every input goes through one fixed sequence (see Rules for the names):
//
//  1. Parse, as the WHATWG URL Standard's basic URL parser does for special
//     schemes, so the result is what a browser would request. The parse's
//     silent normalizations (trimming, tab and newline removal, backslashes,
//     slashes after the scheme, credentials, host percent-decoding, host
//     lowercasing and UTS #46 IDNA, IPv4 and IPv6 forms, port forms and
//     default ports, the empty path, the encode sets, dot segments including
//     %2e) are separate rules, each logged as a Step. The Standard's
//     validation errors are rules too.
//  2. Resolve a relative reference against Options.Base, if given; without a
//     base a relative reference is rejected (CodeMissingScheme).
//  3. The policy's own steps: uppercase percent-escape hex (RFC 3986
//     §6.2.2.1), decode escapes of unreserved characters only (§6.2.2.2),
//     drop the fragment (kept in Result.Fragment), drop tracking-only query
//     parameters, then the per-host rules (host parameters, path case,
//     trailing slash), which are server-defined and mark the key
//     CompareContent.
//
// The policy (a TOML file; Default and Lenient are compiled in) gives each
// rule an action: a parse rule applies or rejects the input, a policy step
// applies or is off. The order itself is not configurable.
//
// # Caveats
//
// A key is a reason to review two citations together, never proof that they
// are the same resource. Path and query case, repeated slashes, trailing
// slashes, parameter order and unknown parameters are kept by default,
// because servers may treat them as different resources.
//
// The policy's reported version and digest include the engine fingerprint
// (parser version, Go release, golang.org/x/net version, Unicode version of
// the IDNA tables), because any of them can change keys. Keys made under
// different fingerprints must not be compared without re-normalizing.
//
// Only the special schemes ftp, http, https, ws and wss can be parsed;
// "file" and non-special schemes (mailto:, data:, javascript:) are rejected
// with CodeUnsupportedScheme.
//
// normalize imports no provgraph package, and must not: it is a leaf, like
// net/url and idna, so that the policy engine can be used and tested without
// a store. A new normalization rule is a row in rules.go's table.
package normalize
