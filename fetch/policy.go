// Package fetch is the one hardened HTTP client of Cardex: the crawler's
// card and key-set fetches, host-claim checks and the liveness prober's
// requests all go through it, to hosts that untrusted people name, and it
// must never become a tool against the network it runs in.
//
// The address is checked at dial time on the exact IP being dialed
// (docs/threats.md B.11–B.14), no proxy is taken from the environment
// (B.24), TLS is verified, and every stage has a limit — dial, TLS,
// headers, total time, header and body size, redirects (docs/security.md
// "Network policy").
package fetch

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/cardexhq/cardex/buildinfo"
	"github.com/cardexhq/cardex/cardurl"
)

// Policy is the network policy of docs/security.md "Network policy". The zero value is not
// usable; start from DefaultPolicy.
type Policy struct {
	// AllowNetworks are reserved ranges that may be dialed, on any port
	// (--allow-networks). Empty in production.
	AllowNetworks []netip.Prefix
	// AllowInsecureHTTP accepts http:// URLs (--allow-insecure-http).
	// Reserved addresses still need AllowNetworks.
	AllowInsecureHTTP bool
	// RootCAs verifies server certificates; nil means the system roots.
	// LoadCAFile builds a pool of the system roots plus a --ca-file.
	RootCAs *x509.CertPool

	DialTimeout           time.Duration // per TCP connect
	TLSHandshakeTimeout   time.Duration
	ResponseHeaderTimeout time.Duration
	Timeout               time.Duration // the whole fetch, redirects and body included

	MaxBodyBytes     int64 // card body after decompression
	MaxKeySetBytes   int64 // key set body after decompression
	MaxHeaderBytes   int64 // response headers
	MaxRedirects     int   // card fetches; key sets follow none
	MaxLocationBytes int   // a longer redirect target is refused (B.16)

	UserAgent string
}

// DefaultPolicy is the production policy: https on port 443 only, no
// reserved address, the limits of docs/security.md "Network policy".
func DefaultPolicy() Policy {
	return Policy{
		DialTimeout:           5 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		Timeout:               10 * time.Second,
		MaxBodyBytes:          512 << 10,
		MaxKeySetBytes:        64 << 10,
		MaxHeaderBytes:        64 << 10,
		MaxRedirects:          3,
		MaxLocationBytes:      2048,
		UserAgent:             UserAgent(buildinfo.Get().Version),
	}
}

// UserAgent names Cardex and its version, so operators of crawled hosts can
// tell who is fetching and where to read about it.
func UserAgent(version string) string {
	return "Cardex/" + version + " (A2A agent card registry; +https://github.com/cardexhq/cardex)"
}

// Validate names the first setting that cannot work.
func (p Policy) Validate() error {
	for _, n := range p.AllowNetworks {
		if !n.IsValid() {
			return fmt.Errorf("crawler: allow-networks: invalid prefix %v", n)
		}
		if n != n.Masked() {
			return fmt.Errorf("crawler: allow-networks: %v has host bits set (did you mean %v?)", n, n.Masked())
		}
	}
	switch {
	case p.DialTimeout <= 0:
		return errors.New("crawler: dial timeout must be positive")
	case p.TLSHandshakeTimeout <= 0:
		return errors.New("crawler: TLS handshake timeout must be positive")
	case p.ResponseHeaderTimeout <= 0:
		return errors.New("crawler: response header timeout must be positive")
	case p.Timeout <= 0:
		return errors.New("crawler: crawl timeout must be positive")
	case p.MaxBodyBytes <= 0, p.MaxKeySetBytes <= 0, p.MaxHeaderBytes <= 0:
		return errors.New("crawler: size limits must be positive")
	case p.MaxRedirects < 0:
		return errors.New("crawler: max redirects must not be negative")
	case p.MaxLocationBytes <= 0:
		return errors.New("crawler: max Location length must be positive")
	case p.UserAgent == "":
		return errors.New("crawler: a User-Agent is required")
	}
	return nil
}

// CheckAddr is the production dial check: an address inside AllowNetworks
// may be dialed on any port; any other address must not be reserved and must
// use port 443 (or 80 when AllowInsecureHTTP is set). It runs on the exact
// address being dialed (B.13, B.14, B.17).
func (p Policy) CheckAddr(ap netip.AddrPort) error {
	a := ap.Addr().WithZone("")
	for _, n := range p.AllowNetworks {
		// An allowed IPv4 range also covers its IPv4-mapped IPv6 spelling:
		// it is the same host.
		if n.Contains(a) || n.Contains(a.Unmap()) {
			return nil
		}
	}
	if cardurl.IsReserved(a) {
		return &addrError{sentinel: ErrReservedAddress, addr: a.String()}
	}
	if port := ap.Port(); port != 443 && (port != 80 || !p.AllowInsecureHTTP) {
		return &addrError{sentinel: ErrPortNotAllowed, addr: ap.String()}
	}
	return nil
}

// LoadCAFile returns the system roots plus the certificates of a PEM file
// (--ca-file): extra roots for intranets and TLS test fleets.
func LoadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("crawler: ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("crawler: ca-file %s holds no PEM certificate", path)
	}
	return pool, nil
}
