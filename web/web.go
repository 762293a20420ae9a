// Package web is Cardex's server-rendered UI: the catalogue with search and
// facets, agent pages, tags, self-publishing and the admin pages. Templates
// and static files are embedded and checked when the handler is built.
//
// Card text is data, never markup (docs/threats.md H.73): every card string
// goes through html/template's contextual escaping, URLs become links only
// when agentcard.RenderableURL allows them, and bidi and zero-width
// characters are shown as ⟨U+XXXX⟩ instead of being obeyed. The one place
// text is treated as HTML is a search highlight, after highlight() has
// re-escaped it (H.74).
package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Config wires the UI to the registry and the search index.
type Config struct {
	Service *registry.Service // required
	Index   *search.Index     // required: the catalogue and /tags query it
	Logger  *slog.Logger      // nil discards; the UI logs each request it answers
	// Observe, when set, is told each request's route (the pattern of the
	// route table, "web:unmatched" for none), status and duration after it
	// is answered: the hook for metrics.
	Observe func(route string, status int, d time.Duration)
	// BaseURL is the public URL of the server (--base-url). Its origin is
	// trusted for form POSTs when a proxy rewrites the Host header.
	BaseURL string
	// Demo shows the "demo catalogue" banner on every page.
	Demo bool
	// Limits are the rate limits of the pages: anonymous page reads,
	// publish-form submissions (per client address and per registrable
	// domain of the submitted host) and failed admin sign-ins, as the API
	// counts them. A zero Limits disables them.
	Limits ratelimit.Limits
	// Limiters, when set, are the buckets shared with the API (Limits is
	// then ignored), so a client has one budget for both faces.
	Limiters *ratelimit.Limiters
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// keying rate limits (the same setting the API uses).
	TrustedProxies []netip.Prefix
	// Kick asks the crawler to look for due agents now (after a
	// submission, a restore or a re-crawl request). Nil does nothing.
	Kick func()
	// Now is the clock for "x ago" labels. Nil means time.Now.
	Now func() time.Time
	// OpenAPI is the API's openapi.yaml, rendered at /api-reference. Nil
	// leaves the page out (it answers 404 and the footer does not link it).
	OpenAPI []byte
	// OIDC, when set, offers sign-in with the identity provider beside
	// the token form (docs/identity.md); nil offers the token form only.
	OIDC *identity.Provider
	// Federate, when set, asks other ARD registries for a catalogue
	// search's text (the first page only) and returns what they answered
	// in time, each with its source (cardex serve --ard-peer with
	// --web-federation; docs/discovery.md "Federated search"). Nil: the
	// catalogue shows Cardex's agents only.
	Federate func(ctx context.Context, text string) []discover.ARDResult
}

// ErrConfig is returned by New for an unusable Config.
var ErrConfig = errors.New("web: invalid config")

// ui holds the handler's state; every field is set once by New.
type ui struct {
	cfg    Config
	svc    *registry.Service
	idx    *search.Index
	log    *slog.Logger
	pages  pageSet
	assets *assets
	limits *ratelimit.Limiters
	// reference is the parsed API reference, nil without Config.OpenAPI.
	reference *refDoc
}

// New returns the UI's handler. It owns GET /, /agents/{id}…, /tags,
// /publish…, /admin… and /static/…; mount it at the root beside the API
// (which owns /api/, /healthz, /readyz, /metrics). It parses every
// template and hashes every static file now, so a missing or broken
// template fails here rather than on a request.
func New(cfg Config) (http.Handler, error) {
	if cfg.Service == nil || cfg.Index == nil {
		return nil, errors.Join(ErrConfig, errors.New("the Service and the Index are required"))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a, err := loadAssets()
	if err != nil {
		return nil, err
	}
	u := &ui{
		cfg: cfg, svc: cfg.Service, idx: cfg.Index, log: cfg.Logger, assets: a,
		limits: cfg.Limiters,
	}
	if u.limits == nil {
		u.limits = ratelimit.NewLimiters(cfg.Limits, 0)
	}
	if cfg.OpenAPI != nil {
		if u.reference, err = parseReference(cfg.OpenAPI); err != nil {
			return nil, errors.Join(ErrConfig, err)
		}
	}
	if u.pages, err = parsePages(u.funcs()); err != nil {
		return nil, err
	}
	return u.routes()
}

func (u *ui) kick() {
	if u.cfg.Kick != nil {
		u.cfg.Kick()
	}
}
