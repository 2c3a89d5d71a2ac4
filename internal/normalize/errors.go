package normalize

import (
	"errors"
	"fmt"
)

// Code classifies why an input was rejected. Codes are stable strings: they
// appear in JSON output and in the graph, so a code is never renamed.
//
// A rejection by the policy (a rule whose action is "reject") carries the
// rule's name as its code, for example "userinfo" or "invalid-percent-escape".
// The codes below are the failures of the URL Standard's parse itself, which
// no policy can tolerate.
type Code string

const (
	// CodeEmptyInput: the input is empty, or only whitespace that the policy
	// allowed to be trimmed.
	CodeEmptyInput Code = "empty-input"
	// CodeInvalidUTF8: the input is not valid UTF-8, so it is not a string of
	// Unicode scalar values and the Standard's parse is undefined for it.
	CodeInvalidUTF8 Code = "invalid-utf8"
	// CodeMissingScheme: the input has no scheme and no base URL was given to
	// resolve it against [missing-scheme-non-relative-URL].
	CodeMissingScheme Code = "missing-scheme"
	// CodeUnsupportedScheme: the scheme is not one the policy accepts.
	CodeUnsupportedScheme Code = "unsupported-scheme"
	// CodeHostMissing: a special URL with an empty host [host-missing].
	CodeHostMissing Code = "host-missing"
	// CodeInvalidHost: the host fails UTS #46 ToASCII [domain-to-ASCII].
	CodeInvalidHost Code = "invalid-host"
	// CodeForbiddenHostCodePoint: the host contains a forbidden domain code
	// point such as space, "<", "%" or "|" [domain-invalid-code-point].
	CodeForbiddenHostCodePoint Code = "forbidden-host-code-point"
	// CodeInvalidIPv4: a host that ends in a number is not a valid IPv4
	// address [IPv4-too-many-parts, IPv4-non-numeric-part,
	// IPv4-out-of-range-part].
	CodeInvalidIPv4 Code = "invalid-ipv4"
	// CodeInvalidIPv6: a bracketed host is not a valid IPv6 address
	// [IPv6-unclosed, IPv6-invalid-code-point, ...].
	CodeInvalidIPv6 Code = "invalid-ipv6"
	// CodeInvalidPort: the port contains something other than digits
	// [port-invalid].
	CodeInvalidPort Code = "invalid-port"
	// CodePortOutOfRange: the port is above 65535 [port-out-of-range].
	CodePortOutOfRange Code = "port-out-of-range"
	// CodeInvalidBase: the base URL given for resolving references is itself
	// rejected.
	CodeInvalidBase Code = "invalid-base"
)

// ErrRejected matches every *Error with errors.Is.
var ErrRejected = errors.New("normalize: input rejected")

// Error reports why an input was rejected. It says what is wrong and where:
// Offset is the byte offset in Input where the problem was found, or -1 when
// it concerns the whole input.
type Error struct {
	Code   Code   // stable classification
	Rule   Rule   // the policy rule that rejected the input, if any
	Input  string // the input as given
	Offset int    // byte offset in Input, -1 when not known
	Msg    string // human-readable detail
}

func (e *Error) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("normalize %q: %s at byte %d: %s", e.Input, e.Code, e.Offset, e.Msg)
	}
	return fmt.Sprintf("normalize %q: %s: %s", e.Input, e.Code, e.Msg)
}

// Is makes errors.Is(err, ErrRejected) true for every rejection.
func (e *Error) Is(target error) bool { return target == ErrRejected }
