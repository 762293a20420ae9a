package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
)

// Config builds a Fetcher. Only Policy is required.
type Config struct {
	Policy Policy
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
	// CheckAddr defaults to Policy.CheckAddr. Tests inject a check to
	// observe or further restrict what is dialed, the way Boulder's tests
	// inject an IP policy.
	CheckAddr AddrCheck
	// DialContext replaces the TCP connect to an already checked IP literal
	// (for example a dialer that never answers, docs/threats.md B.19). It
	// bypasses the connect-time Control check, so production leaves it nil.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// ClaimsPerHost caps host-claim fetches in flight per canonical host
	// (FetchClaim; docs/claims.md); ≤ 0 means DefaultClaimsPerHost.
	ClaimsPerHost int
	// ClaimWait is how long a claim fetch waits for its host's slot before
	// it fails with *HostBusyError; ≤ 0 means Policy.Timeout.
	ClaimWait time.Duration
}

// Fetcher is the one hardened HTTP client for cards and key sets. It is safe
// for concurrent use; connections to a host are reused.
type Fetcher struct {
	policy    Policy
	check     AddrCheck
	transport *http.Transport
	dialer    *dialer
	log       *slog.Logger
	now       func() time.Time
	claims    *ratelimit.Slots // host-claim fetches in flight per canonical host
	claimWait time.Duration
	hosts     *HostSlots // the process's per-host budget, shared with crawls and probes (ShareHosts)
}

// ShareHosts makes claim fetches take their host's slot of hosts, the
// per-host budget the scheduler and the prober share (docs/security.md
// "Per-host politeness"), besides their own queue. Call it once, before
// the fetcher serves claims.
func (f *Fetcher) ShareHosts(hosts *HostSlots) { f.hosts = hosts }

// New checks the configuration and builds a Fetcher.
func New(cfg Config) (*Fetcher, error) {
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.CheckAddr == nil {
		cfg.CheckAddr = cfg.Policy.CheckAddr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d := newDialer(cfg.Policy, cfg.Resolver, cfg.CheckAddr, cfg.DialContext)
	var protocols http.Protocols
	// HTTP/1.1 only: a card is one small document, and HTTP/2 adds attack
	// surface (CONTINUATION floods, rapid reset) and multiplexing that would
	// blur the per-request header accounting of B.22.
	protocols.SetHTTP1(true)
	t := &http.Transport{
		// B.24: never take a proxy from the environment; the dial check
		// would see the proxy's address instead of the target's.
		Proxy:                  nil,
		DialContext:            d.dialPlain,
		DialTLSContext:         d.dialTLS,
		Protocols:              &protocols,
		TLSHandshakeTimeout:    cfg.Policy.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  cfg.Policy.ResponseHeaderTimeout,
		MaxResponseHeaderBytes: cfg.Policy.MaxHeaderBytes,
		// Transparent gzip: the transport asks for gzip and decompresses,
		// and the body limit is applied to what it yields (B.21).
		DisableCompression:  false,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 2, // docs/security.md: 2 fetches in flight per host
		IdleConnTimeout:     90 * time.Second,
	}
	if cfg.ClaimsPerHost <= 0 {
		cfg.ClaimsPerHost = DefaultClaimsPerHost
	}
	if cfg.ClaimWait <= 0 {
		cfg.ClaimWait = cfg.Policy.Timeout
	}
	return &Fetcher{policy: cfg.Policy, check: cfg.CheckAddr, transport: t, dialer: d, log: cfg.Logger, now: time.Now,
		claims: ratelimit.NewSlots(cfg.ClaimsPerHost), claimWait: cfg.ClaimWait}, nil
}

// Policy returns the policy the fetcher enforces.
func (f *Fetcher) Policy() Policy { return f.policy }

// DialTLS connects to addr (host:port) through the same checks as every
// fetch (resolved addresses and the connected address checked against the
// policy, the dial and handshake timeouts) and completes a verified TLS
// handshake offering nextProtos. The liveness prober's gRPC check uses it
// to learn whether an endpoint negotiates HTTP/2 (docs/liveness.md). A
// failure is a *FetchError; the caller closes the connection.
func (f *Fetcher) DialTLS(ctx context.Context, addr string, nextProtos []string) (*tls.Conn, error) {
	st := &hopState{}
	raw, err := f.dialer.dial(ctx, addr)
	if err != nil {
		return nil, f.classify(ctx, st, addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	cfg := f.dialer.tlsConfig.Clone()
	cfg.ServerName = host
	cfg.NextProtos = nextProtos
	tc := tls.Client(raw.(*countingConn).Conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, f.dialer.tlsTO)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, f.classify(ctx, st, addr, classifyTLS(hctx, err))
	}
	return tc, nil
}

// Close releases idle connections.
func (f *Fetcher) Close() { f.transport.CloseIdleConnections() }

// classify turns a transport error of one hop into a FetchError.
func (f *Fetcher) classify(ctx context.Context, st *hopState, hop string, err error) *FetchError {
	fe := &FetchError{Hop: hop}
	var se *stageError
	var ne net.Error
	p := phase(st.phase.Load())
	switch {
	case errors.As(err, &se):
		fe.Class, fe.Err = se.class, se.err
	case errors.Is(context.Cause(ctx), context.Canceled):
		// The caller gave up (shutdown): not the host's fault. The chain
		// holds context.Canceled so callers can tell.
		fe.Class, fe.Err = ClassTimeout, context.Cause(ctx)
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		fe.Class, fe.Err = ClassTimeout, timeoutIn(p, err)
	case p == phaseRequest && st.responseBytes() >= f.policy.MaxHeaderBytes:
		fe.Class, fe.Err = ClassTooLarge, wrapf(ErrHeadersTooLarge, "more than %d bytes: %v", f.policy.MaxHeaderBytes, err)
	default:
		fe.Class, fe.Err = ClassConnect, err
	}
	return fe
}

func timeoutIn(p phase, err error) error {
	sentinel := ErrConnectTimeout
	switch p {
	case phaseTLS:
		sentinel = ErrTLSHandshakeTimeout
	case phaseRequest:
		sentinel = ErrHeaderTimeout
	case phaseBody:
		sentinel = ErrBodyTimeout
	}
	return wrapf(sentinel, "%v", err)
}
