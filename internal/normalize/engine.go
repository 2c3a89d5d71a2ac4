package normalize

import (
	"runtime"
	"strings"

	"golang.org/x/net/idna"
)

// ParserName and ParserVersion identify provgraph's URL parser. The version
// is raised whenever a change to this package can change a key or a
// rejection for some input.
const (
	ParserName    = "provgraph-whatwg"
	ParserVersion = "2"
)

// xnetVersion is the golang.org/x/net version this package is built with.
// Test binaries carry no module information, so the version is a constant;
// TestXNetVersionMatchesGoMod fails when go.mod moves without it.
const xnetVersion = "v0.62.0"

// Parser describes the parser and the libraries whose behaviour is part of
// every key: the Go release (net/netip, unicode/utf8), golang.org/x/net's
// idna package and the Unicode version of its tables.
type Parser struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Go      string `json:"go"`
	XNet    string `json:"x_net"`
	Unicode string `json:"unicode"`
}

// ParserInfo returns the running parser's description.
func ParserInfo() Parser {
	return Parser{
		Name:    ParserName,
		Version: ParserVersion,
		Go:      runtime.Version(),
		XNet:    xnetVersion,
		Unicode: idna.UnicodeVersion,
	}
}

// EngineFingerprint returns a compact, semver-build-metadata-safe string
// naming the parser version, Go release, x/net version and Unicode version,
// for example "whatwg1.go1.26.8.xnet0.62.0.unicode15.0.0".
func EngineFingerprint() string {
	p := ParserInfo()
	s := "whatwg" + p.Version + "." + p.Go + ".xnet" + strings.TrimPrefix(p.XNet, "v") + ".unicode" + p.Unicode
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, s)
}
