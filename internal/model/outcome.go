package model

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
	// OutcomeCaptureError: the response was received but its WARC capture
	// could not be written (a full disk, a read-only directory). What was
	// observed is recorded, without a snapshot reference; --only-unresolved
	// retrieves it again.
	OutcomeCaptureError = "capture-error"
)

// Outcomes lists every outcome code, OutcomeOK first.
var Outcomes = []string{
	OutcomeOK, OutcomeHTTPError, OutcomeRedirectLoop, OutcomeTooManyRedirects, OutcomeInvalidRedirect,
	OutcomeTimeout, OutcomeDNSError, OutcomeTLSError, OutcomeConnectRefused, OutcomeConnectError,
	OutcomeReadError, OutcomeBlockedAddress, OutcomeBlockedPort, OutcomeUnsupportedScheme,
	OutcomeInvalidURL, OutcomeBodyTooLarge, OutcomeCaptureError,
}
