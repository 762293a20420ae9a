// Package api is the Cardex REST API under /api/v1 (docs/api.md): one
// route table (routes.go), one file per resource or action, handlers that
// return errors, and one error handler that renders every failure as an
// RFC 9457 problem. The API only talks to registry.Service; it never sees
// the SQL store's types.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// Readiness is what /readyz asks of the store; *registry.Store has it.
type Readiness interface {
	Ping(ctx context.Context) error
	MigrationsCurrent(ctx context.Context) (bool, error)
}

// Config wires the API. Service is required; a zero Limits disables every
// rate limit (cmd/cardex serve always fills it, see
// ratelimit.DefaultLimits).
type Config struct {
	Service *registry.Service
	Ready   Readiness
	Logger  *slog.Logger
	Limits  ratelimit.Limits
	// Limiters, when set, are the rate-limit buckets shared with the web
	// UI, and Limits and MaxLimiterKeys are ignored; nil builds the API's
	// own from Limits.
	Limiters *ratelimit.Limiters
	// TrustedProxies are the peers whose X-Forwarded-For header is believed.
	// Empty (the default) means the client address is the TCP peer, so a
	// client cannot pick its own rate-limit bucket by sending the header.
	TrustedProxies []netip.Prefix
	// BaseURL is the server's public URL (--base-url), for absolute
	// Location headers; empty means they are relative.
	BaseURL string
	// Now is the rate limiters' clock; nil means time.Now.
	Now func() time.Time
	// MaxLimiterKeys bounds each limiter's table of client addresses or
	// domains; 0 means ratelimit.DefaultMaxKeys. Idle entries are evicted
	// first.
	MaxLimiterKeys int

	// Search is the search index. When set, every GET /agents goes through
	// it (facets always computed; hits hydrated and re-checked in SQL,
	// docs/threats.md G.72), and /skills and /tags answer. When nil the
	// server has no search: GET /agents lists from SQL with the status,
	// health, trust and visibility filters and sorts updated|name, while q,
	// the card-derived filters, sort=relevance, /skills and /tags answer
	// 503 unavailable ("search is not configured on this server").
	Search Searcher
	// SearchReady, when set, is asked by /readyz after the database: a
	// non-nil error (index being built, too far behind the change log)
	// answers 503 with the reason as the detail.
	SearchReady func(ctx context.Context) error
	// Reindex rebuilds the search index for POST /api/v1/admin/reindex;
	// nil answers 503 unavailable.
	Reindex func(ctx context.Context) error
	// Kick is called after a successful submit, restore or crawl request so
	// the crawler fetches the agent right away instead of at its next tick.
	// It must not block. Nil does nothing.
	Kick func()
	// Bearer, when set, checks bearer JWT access tokens from the identity
	// provider (identity.Provider.Bearer, docs/identity.md): a bearer
	// credential with two dots goes to it instead of the Cardex token
	// store. Nil leaves JWTs to fail as Cardex tokens do.
	Bearer func(ctx context.Context, token string) (registry.Principal, error)
	// Observe is called once per request, after the response, with echo's
	// route template (e.g. "/api/v1/agents/:id", "" when no route
	// matched), the status sent and the time taken — for metrics composed
	// elsewhere. It must be cheap and safe for concurrent use. Nil does
	// nothing.
	Observe func(route string, status int, d time.Duration)

	// ARD configures the federation of POST /ard/search
	// (docs/discovery.md "Federated search"); zero: no peers, federation
	// off.
	ARD ARDConfig
}

// ARDConfig names the ARD registries a federated search asks.
type ARDConfig struct {
	// Peers are the peers' ARD API base URLs (--ard-peer).
	Peers []string
	// Call posts a search to a peer through the crawler's hardened
	// client; required with Peers.
	Call discover.PeerCall
	// Deadline bounds a federated search's wait for its peers; 0 is
	// discover.DefaultPeerDeadline.
	Deadline time.Duration
}

// ErrNoService is returned by New without a registry.Service.
var ErrNoService = errors.New("api: Config.Service is required")

// server holds the handlers' dependencies.
type server struct {
	svc         *registry.Service
	ready       Readiness
	log         *slog.Logger
	now         func() time.Time
	proxies     []netip.Prefix
	baseURL     string
	search      Searcher
	searchReady func(ctx context.Context) error
	reindex     func(ctx context.Context) error
	kick        func()
	metrics     func(route string, status int, d time.Duration)
	bearer      func(ctx context.Context, token string) (registry.Principal, error)
	ard         ARDConfig

	limits *ratelimit.Limiters
}

// New builds the API handler: /api/v1/…, /problems/{slug}, /healthz and
// /readyz.
func New(cfg Config) (http.Handler, error) {
	e, _, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// newServer is New, returning the server beside its handler.
func newServer(cfg Config) (*echo.Echo, *server, error) {
	if cfg.Service == nil {
		return nil, nil, ErrNoService
	}
	s := &server{
		svc:         cfg.Service,
		ready:       cfg.Ready,
		log:         cfg.Logger,
		now:         cfg.Now,
		proxies:     cfg.TrustedProxies,
		baseURL:     strings.TrimSuffix(cfg.BaseURL, "/"),
		search:      cfg.Search,
		searchReady: cfg.SearchReady,
		reindex:     cfg.Reindex,
		kick:        cfg.Kick,
		metrics:     cfg.Observe,
		bearer:      cfg.Bearer,
		ard:         cfg.ARD,
	}
	if s.ard.Call == nil {
		s.ard.Peers = nil
	}
	if s.kick == nil {
		s.kick = func() {}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.limits = cfg.Limiters; s.limits == nil {
		s.limits = ratelimit.NewLimiters(cfg.Limits, cfg.MaxLimiterKeys)
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	s.routes(e)
	return e, s, nil
}
