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

	"github.com/provgraph/provgraph/internal/model"
)

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
			return model.OutcomeBlockedPort
		}
		return model.OutcomeBlockedAddress
	}
	if timedOut || errors.Is(err, context.DeadlineExceeded) {
		return model.OutcomeTimeout
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsTimeout {
			return model.OutcomeTimeout
		}
		return model.OutcomeDNSError
	}
	if isTLS(err) {
		return model.OutcomeTLSError
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return model.OutcomeConnectRefused
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return model.OutcomeTimeout
	}
	return model.OutcomeConnectError
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
