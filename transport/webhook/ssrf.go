package webhook

import (
	"errors"
	"net/netip"
	"syscall"
)

// ErrForbiddenAddress is wrapped by the error of a connection the client
// refused to open because its address is not public (see IsPublicAddr).
var ErrForbiddenAddress = errors.New("webhook: address is not public")

// ForbiddenAddressError names the refused address.
type ForbiddenAddressError struct {
	Addr string // the resolved address, host:port
}

func (e *ForbiddenAddressError) Error() string {
	return "webhook: refusing to connect to " + e.Addr + ": not a public address"
}

// Unwrap makes errors.Is(err, ErrForbiddenAddress) true.
func (e *ForbiddenAddressError) Unwrap() error { return ErrForbiddenAddress }

// nonPublic lists special-purpose ranges (IANA IPv4 and IPv6
// special-purpose address registries) that are not reachable, or must not
// be reached, on the public Internet, beyond what netip's predicates
// cover.
var nonPublic = mustPrefixes(
	"0.0.0.0/8",       // "this network"
	"100.64.0.0/10",   // shared address space (carrier-grade NAT)
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // TEST-NET-1
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // TEST-NET-2
	"203.0.113.0/24",  // TEST-NET-3
	"240.0.0.0/4",     // reserved, and 255.255.255.255 broadcast
	"::/96",           // IPv4-compatible (deprecated), with :: and ::1
	"64:ff9b:1::/48",  // local-use IPv4/IPv6 translation
	"100::/64",        // discard-only
	"2001::/23",       // IETF protocol assignments (Teredo, ORCHIDv2, ...)
	"2001:db8::/32",   // documentation
	"3fff::/20",       // documentation
	"5f00::/16",       // segment routing SIDs
	"fec0::/10",       // site-local (deprecated)
)

// embedsIPv4 lists IPv6 ranges that carry an IPv4 address a gateway will
// reach: they are as public as the address they carry.
var embedsIPv4 = []struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12}, // NAT64 well-known prefix
	{netip.MustParsePrefix("2002::/16"), 2},     // 6to4
}

func mustPrefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// IsPublicAddr reports whether a is a public unicast address, one an
// outgoing webhook may connect to when Options.AllowPrivate is false. Not
// public: loopback, private (RFC 1918, IPv6 unique local fc00::/7),
// link-local (169.254.0.0/16 with the cloud metadata address
// 169.254.169.254, fe80::/10), unspecified, carrier-grade NAT
// 100.64.0.0/10, multicast, broadcast, documentation, benchmarking and
// reserved ranges, and the IPv4-mapped, NAT64 and 6to4 forms of these.
func IsPublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	if a.Is6() {
		for _, e := range embedsIPv4 {
			if e.prefix.Contains(a) {
				b := a.As16()
				return IsPublicAddr(netip.AddrFrom4([4]byte(b[e.offset : e.offset+4])))
			}
		}
	}
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// checkPublic is the production address policy.
func checkPublic(ap netip.AddrPort) error {
	if IsPublicAddr(ap.Addr()) {
		return nil
	}
	return &ForbiddenAddressError{Addr: ap.String()}
}

// control is the dialer's Control function: it runs for every connection
// the client opens, after DNS resolution and before the connect call, so
// it sees the address really dialed, whatever the URL said, a redirect
// led to or the DNS answered this time.
func (c *Client) control(_, address string, _ syscall.RawConn) error {
	if c.checkAddr == nil {
		return nil // Options.AllowPrivate
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &ForbiddenAddressError{Addr: address}
	}
	return c.checkAddr(ap)
}
