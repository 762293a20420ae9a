package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Resolver looks names up; *net.Resolver satisfies it. Tests inject one so
// that any name can point at loopback (or at a rebinding sequence, B.14).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// AddrCheck decides whether an address may be dialed; nil means yes.
// Policy.CheckAddr is the production check.
type AddrCheck func(netip.AddrPort) error

// maxDialAddrs bounds how many answers of one lookup are tried, so a name
// with hundreds of black-holed addresses cannot hold a worker (B.18, B.19).
const maxDialAddrs = 4

// stageError carries the class decided where the failure happened (the
// dialer knows a refused address from a refused connection; the transport
// that wraps it does not).
type stageError struct {
	class string
	err   error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// sessionCacheSize is how many hosts' TLS sessions a fetcher remembers.
const sessionCacheSize = 4096

// dialer resolves, filters and dials. The resolved addresses are checked
// before dialing (mixed answers: only allowed ones are tried; all reserved:
// blocked_address, B.13), the dial goes to the checked IP literal so no
// second lookup can rebind it, and net.Dialer.Control checks the exact
// address again at connect time (B.14).
type dialer struct {
	resolver   Resolver
	check      AddrCheck
	dialTO     time.Duration
	tlsTO      time.Duration
	tlsConfig  *tls.Config
	dialTarget func(ctx context.Context, network, addr string) (net.Conn, error)
}

func newDialer(p Policy, r Resolver, check AddrCheck, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *dialer {
	d := &dialer{
		resolver: r,
		check:    check,
		dialTO:   p.DialTimeout,
		tlsTO:    p.TLSHandshakeTimeout,
		tlsConfig: &tls.Config{
			RootCAs:    p.RootCAs,
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"http/1.1"},
			// Resume sessions with hosts met before: the liveness prober
			// opens a new connection per probe, and verifying the host's
			// chain again each time was nine tenths of a probe's CPU. A
			// session is resumed only with the host name it was verified
			// for and only while its leaf certificate is unexpired; the
			// dial policy applies to every connection as before.
			ClientSessionCache: tls.NewLRUClientSessionCache(sessionCacheSize),
		},
		dialTarget: dial,
	}
	if d.dialTarget == nil {
		nd := &net.Dialer{Control: d.control}
		d.dialTarget = nd.DialContext
	}
	return d
}

// control runs after the socket is created and before it connects, on the
// address the kernel will connect to.
func (d *dialer) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q", ErrReservedAddress, address)
	}
	return d.check(ap)
}

func (d *dialer) dialPlain(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.dial(ctx, addr)
}

func (d *dialer) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	raw, err := d.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	setPhase(ctx, phaseTLS)
	host, _, _ := net.SplitHostPort(addr)
	cfg := d.tlsConfig.Clone()
	cfg.ServerName = host
	tc := tls.Client(raw.(*countingConn).Conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, d.tlsTO)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, classifyTLS(hctx, err)
	}
	return &countingConn{Conn: tc}, nil
}

func classifyTLS(ctx context.Context, err error) error {
	var ne net.Error
	if ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		return &stageError{ClassTimeout, fmt.Errorf("%w: %v", ErrTLSHandshakeTimeout, err)}
	}
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) {
		return &stageError{ClassTLS, fmt.Errorf("%w: %v", ErrPlainHTTPOnTLSPort, err)}
	}
	return &stageError{ClassTLS, err}
}

// dial connects to host:port through the checks and returns a countingConn.
// Resolution and connection share the dial timeout.
func (d *dialer) dial(ctx context.Context, addr string) (net.Conn, error) {
	setPhase(ctx, phaseConnect)
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &stageError{ClassConnect, err}
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, &stageError{ClassConnect, fmt.Errorf("bad port %q", portStr)}
	}
	ctx, cancel := context.WithTimeout(ctx, d.dialTO)
	defer cancel()

	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = d.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, &stageError{ClassDNS, err}
		}
		if len(addrs) == 0 {
			return nil, &stageError{ClassDNS, fmt.Errorf("%w: %s", ErrNoAddresses, host)}
		}
	}

	var allowed []netip.AddrPort
	var refused error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		if err := d.check(ap); err != nil {
			if refused == nil {
				refused = err
			}
			continue
		}
		// Dial the IPv4 form of an allowed IPv4-mapped answer, so the
		// connect-time check sees the same host the policy allowed.
		allowed = append(allowed, netip.AddrPortFrom(a.Unmap(), uint16(port)))
	}
	if len(allowed) == 0 {
		return nil, &stageError{ClassBlockedAddress, refused}
	}
	if len(allowed) > maxDialAddrs {
		allowed = allowed[:maxDialAddrs]
	}

	var last error
	for _, ap := range allowed {
		c, err := d.dialTarget(ctx, "tcp", ap.String())
		if err == nil {
			return &countingConn{Conn: c}, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, classifyDial(ctx, last)
}

func classifyDial(ctx context.Context, err error) error {
	var ae *addrError
	if errors.As(err, &ae) {
		return &stageError{ClassBlockedAddress, ae}
	}
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		// B.19: a black-holed address fails here, at the dial timeout,
		// and says so.
		return &stageError{ClassTimeout, fmt.Errorf("%w: %v", ErrConnectTimeout, err)}
	}
	return &stageError{ClassConnect, err}
}

// countingConn counts the bytes the HTTP client reads, so the fetch can
// report its size and tell an oversized header block from other failures
// (B.22: net/http reports it only as text).
type countingConn struct {
	net.Conn
	read atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}
