package resolve

import (
	"net/netip"
	"slices"
	"syscall"
)

const reasonPort = "port not allowed by the policy"

// blockedPrefixes are the address ranges, beyond those netip classifies
// (loopback, private, link-local, multicast, unspecified), that are not
// public destinations, with the registry entry that says so (IANA IPv4 and
// IPv6 Special-Purpose Address Registries, RFC 6890).
var blockedPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network (RFC 791)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space, carrier-grade NAT (RFC 6598)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation, TEST-NET-1 (RFC 5737)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation, TEST-NET-2 (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation, TEST-NET-3 (RFC 5737)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved and limited broadcast (RFC 1112, RFC 919)"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible IPv6, deprecated (RFC 4291)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use IPv4/IPv6 translation (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo tunnelling (RFC 4380)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local, deprecated (RFC 3879)"},
}

// embedsIPv4 are IPv6 prefixes whose addresses carry an IPv4 address that
// is checked in turn: NAT64 (RFC 6052) in the last 32 bits and 6to4
// (RFC 3056) in bits 16 to 47.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// BlockedReason returns why a connection to addr is refused by default, or
// "" when addr is a public address. An IPv4-mapped IPv6 address is judged
// as the IPv4 address it maps.
func BlockedReason(addr netip.Addr) string {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return "invalid address"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsPrivate():
		return "private"
	case addr.IsLinkLocalUnicast():
		return "link-local"
	case addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast(), addr.IsMulticast():
		return "multicast"
	}
	for _, b := range blockedPrefixes {
		if b.prefix.Contains(addr) {
			return b.reason
		}
	}
	if nat64.Contains(addr) {
		a := addr.As16()
		if r := BlockedReason(netip.AddrFrom4([4]byte(a[12:16]))); r != "" {
			return "NAT64 of an address that is " + r
		}
	}
	if sixToFour.Contains(addr) {
		a := addr.As16()
		if r := BlockedReason(netip.AddrFrom4([4]byte(a[2:6]))); r != "" {
			return "6to4 of an address that is " + r
		}
	}
	return ""
}

// guard checks every socket the Fetcher connects.
type guard struct {
	allowPrivate bool
	ports        []int
	// exempt is an address let through whatever it is; only whitebox
	// tests set it, to reach a loopback test server with the guard on.
	exempt netip.AddrPort
}

// control is a net.Dialer Control function: it runs after name resolution,
// on the address the socket is about to connect to.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Reason: "unreadable address " + address}
	}
	if ap == g.exempt {
		return nil
	}
	if r := BlockedReason(ap.Addr()); r != "" {
		return &BlockedError{Addr: ap, Reason: r}
	}
	if !slices.Contains(g.ports, int(ap.Port())) {
		return &BlockedError{Addr: ap, Reason: reasonPort}
	}
	return nil
}
