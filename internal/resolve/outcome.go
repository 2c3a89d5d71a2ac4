package resolve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// Outcome codes: how a retrieval ended. Every code but OutcomeOK marks a
// failed retrieval; OutcomeError then says what failed and where.
const (
	// OutcomeOK: the final response had a 2xx status and its body was read
	// to the end and hashed.
	OutcomeOK = "ok"
	// OutcomeHTTPError: the final response had a status of 400 or more (or
	// another non-2xx, non-redirect status). Its body is still hashed.
	OutcomeHTTPError = "http-error"
	// OutcomeRedirectLoop: a redirect led back to a URL the chain had
	// already requested. The hop is recorded and not followed.
	OutcomeRedirectLoop = "redirect-loop"
	// OutcomeTooManyRedirects: the chain redirected more than
	// Policy.MaxRedirects times. The redirect over the limit is recorded as
	// a hop and not followed; with Options.NoRedirects, that is the first
	// response.
	OutcomeTooManyRedirects = "too-many-redirects"
	// OutcomeInvalidRedirect: a redirect status without a Location header,
	// or with one that is not a URL reference.
	OutcomeInvalidRedirect = "invalid-redirect"
	// OutcomeTimeout: a request took longer than Policy.Timeout.
	OutcomeTimeout = "timeout"
	// OutcomeDNSError: the host name did not resolve.
	OutcomeDNSError = "dns-error"
	// OutcomeTLSError: the TLS handshake failed (certificate, protocol).
	OutcomeTLSError = "tls-error"
	// OutcomeConnectRefused: the server refused the connection.
	OutcomeConnectRefused = "connect-refused"
	// OutcomeConnectError: the connection failed or broke before a
	// response arrived, for another reason.
	OutcomeConnectError = "connect-error"
	// OutcomeReadError: the final response's body could not be read to the
	// end.
	OutcomeReadError = "read-error"
	// OutcomeBlockedAddress: the guard refused to connect to a non-public
	// address (see Policy.AllowPrivate).
	OutcomeBlockedAddress = "blocked-address"
	// OutcomeBlockedPort: the URL's port is not in Policy.Ports.
	OutcomeBlockedPort = "blocked-port"
	// OutcomeUnsupportedScheme: the URL's scheme is not in Policy.Schemes.
	OutcomeUnsupportedScheme = "unsupported-scheme"
	// OutcomeInvalidURL: the URL to fetch could not be parsed into a
	// request.
	OutcomeInvalidURL = "invalid-url"
	// OutcomeBodyTooLarge: the final body was longer than
	// Policy.MaxBodyBytes; there is no content hash.
	OutcomeBodyTooLarge = "body-too-large"
)

// Outcomes lists every outcome code, OutcomeOK first.
var Outcomes = []string{
	OutcomeOK, OutcomeHTTPError, OutcomeRedirectLoop, OutcomeTooManyRedirects, OutcomeInvalidRedirect,
	OutcomeTimeout, OutcomeDNSError, OutcomeTLSError, OutcomeConnectRefused, OutcomeConnectError,
	OutcomeReadError, OutcomeBlockedAddress, OutcomeBlockedPort, OutcomeUnsupportedScheme,
	OutcomeInvalidURL, OutcomeBodyTooLarge,
}

// BlockedError is returned by the dialer's guard when it refuses an
// address or a port.
type BlockedError struct {
	Addr   netip.AddrPort
	Reason string // "loopback", "private", "port not allowed", ...
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("resolve: refusing to connect to %s: %s", e.Addr, e.Reason)
}

// outcomeOf classifies a request error.
func outcomeOf(err error, timedOut bool) string {
	var be *BlockedError
	if errors.As(err, &be) {
		if be.Reason == reasonPort {
			return OutcomeBlockedPort
		}
		return OutcomeBlockedAddress
	}
	if timedOut || errors.Is(err, context.DeadlineExceeded) {
		return OutcomeTimeout
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsTimeout {
			return OutcomeTimeout
		}
		return OutcomeDNSError
	}
	if isTLS(err) {
		return OutcomeTLSError
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return OutcomeConnectRefused
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return OutcomeTimeout
	}
	return OutcomeConnectError
}

func isTLS(err error) bool {
	var (
		cv  *tls.CertificateVerificationError
		rh  tls.RecordHeaderError
		al  tls.AlertError
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		ci  x509.CertificateInvalidError
		ech *tls.ECHRejectionError
	)
	switch {
	case errors.As(err, &cv), errors.As(err, &rh), errors.As(err, &al), errors.As(err, &ua),
		errors.As(err, &he), errors.As(err, &ci), errors.As(err, &ech):
		return true
	}
	// crypto/tls reports most handshake failures as plain errors whose
	// text starts with "tls: ".
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "tls: ") {
			return true
		}
	}
	return false
}
