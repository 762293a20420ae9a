package main

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/cardexhq/cardex/a2a"
	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/buildinfo"
	"github.com/cardexhq/cardex/catalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/mcpserver"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/verifier"
)

// surface is a discovery surface mounted beside the API and the UI: the
// mux patterns it answers and its handler.
type surface struct {
	route    string // the route label in logs and metrics
	patterns []string
	handler  http.Handler
}

// discoverySurfaces builds the surfaces agents find Cardex through
// (docs/discovery.md): the A2A agent, the MCP server, Cardex's own AI
// Catalog and its ARD document. They read through the same search
// and registry paths as GET /api/v1/agents, as the same caller.
func (c *serveConfig) discoverySurfaces(svc *registry.Service, ix discover.Index, gate *discover.Gate, log *slog.Logger) ([]surface, error) {
	finder := discover.Finder{Index: ix, Registry: svc}
	acfg := a2a.Config{Finder: finder, Gate: gate, BaseURL: c.BaseURL, Version: buildinfo.Get().Version, Logger: log}
	var jwks []byte
	if c.CardKey != "" {
		key, err := loadCardKey(c.CardKey)
		if err != nil {
			return nil, err
		}
		acfg.Sign = func(card []byte) ([]byte, error) { return signOwnCard(card, key, c.BaseURL+jwksPath) }
		if jwks, err = publicJWKS(key); err != nil {
			return nil, err
		}
	}
	a2aH, err := a2a.New(acfg)
	if err != nil {
		return nil, err
	}
	mcpH := mcpserver.New(mcpserver.Config{Finder: finder, Gate: gate, BaseURL: c.BaseURL, Version: buildinfo.Get().Version, Logger: log})
	catH := catalog.New(catalog.Config{Finder: finder, Gate: gate, BaseURL: c.BaseURL, Logger: log})
	ardH := catalog.NewARD(catalog.Config{Finder: finder, Gate: gate, BaseURL: c.BaseURL, Logger: log})
	out := []surface{{"a2a", []string{a2a.CardPath, "/a2a/"}, a2aH}, {"mcp", []string{mcpserver.Path}, mcpH},
		{"ai-catalog", []string{aicatalog.WellKnownPath}, catH}, {"ard", []string{aicatalog.ARDWellKnownPath}, ardH}}
	if jwks != nil {
		out = append(out, surface{"jwks", []string{"GET " + jwksPath}, jwksHandler(jwks)})
	}
	return out, nil
}

// gate is how the surfaces know their caller: tokens like the API's, and
// the API's and UI's buckets (limits), so a client has one budget.
func (c *serveConfig) gate(svc *registry.Service, limits *ratelimit.Limiters, bearer func(context.Context, string) (registry.Principal, error)) *discover.Gate {
	return &discover.Gate{Authenticate: svc.Authenticate, Bearer: bearer, Limits: limits, TrustedProxies: c.TrustedProxies}
}

// signOwnCard signs Cardex's card twice over, with one key: once over the
// spec's form (RFC 8785 of every member but signatures, as `cardex
// verify` and spec-literal verifiers compute it) and once over the SDK
// form (the v1.0 members only, unset values dropped, as the a2a-js and
// a2a-python verifiers compute it; docs/publishing.md). The card is a
// hybrid with v0.3 members, so no one form suits both kinds of verifier
// (cardex sign's portable mode refuses such a card for that reason);
// each kind accepts the card when one signature verifies.
// The SDK form comes first: the SDK verifiers log every signature that
// fails before one verifies.
func signOwnCard(card []byte, key any, jku string) ([]byte, error) {
	out, err := verifier.Sign(card, key, verifier.SignOptions{Jku: jku, Profile: verifier.ProfileSDK})
	if err != nil {
		return nil, err
	}
	return verifier.Sign(out, key, verifier.SignOptions{Jku: jku, Profile: verifier.ProfileSpec})
}

// jwksPath is where the key that signs Cardex's card is published: the
// origin's well-known key set, which `cardex verify` and the crawlers of
// other registries fetch.
const jwksPath = "/.well-known/jwks.json"

// loadCardKey reads the --card-key file.
func loadCardKey(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := verifier.LoadSigningKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

// publicJWKS is the public half of key as a key set whose kid is the RFC
// 7638 thumbprint, the kid verifier.Sign puts in the header by default.
func publicJWKS(key any) ([]byte, error) {
	var pub jose.JSONWebKey
	switch k := key.(type) {
	case jose.JSONWebKey:
		pub = k.Public()
	case *jose.JSONWebKey:
		pub = k.Public()
	case crypto.Signer:
		pub = jose.JSONWebKey{Key: k.Public()}
	default:
		return nil, fmt.Errorf("card key: unsupported key type %T", key)
	}
	thumb, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("card key: %w", err)
	}
	pub.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
	pub.Use = "sig"
	return json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
}

func jwksHandler(jwks []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Write(jwks)
	})
}

// catalogBatch is how many due catalogs one tick crawls.
const catalogBatch = 8

// runCatalogs crawls the due AI Catalogs every tick until ctx ends: each
// crawl (the catalog and its nested ones, under the crawler's network
// policy and limits) is recorded with its trace, and the agents it lists on
// the catalog's registrable domain become pending agents (docs/discovery.md).
func (c *serveConfig) runCatalogs(ctx context.Context, f *fetch.Fetcher, svc *registry.Service, kick func(), log *slog.Logger) {
	t := time.NewTicker(c.CrawlTick)
	defer t.Stop()
	for {
		if ids := c.crawlCatalogs(ctx, f, svc, time.Now(), log); len(ids) > 0 {
			kick()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// crawlCatalogs crawls the catalogs due at now and returns the ids of the
// agents they registered.
func (c *serveConfig) crawlCatalogs(ctx context.Context, f *fetch.Fetcher, svc *registry.Service, now time.Time, log *slog.Logger) []string {
	// A claimed catalog is not due again for a whole crawl's time limit
	// per document it may fetch, so replicas do not crawl it together.
	due, err := svc.DueCatalogs(ctx, now, c.CrawlTimeout*crawler.MaxCatalogDocuments, catalogBatch)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("catalogs: claiming", "err", err.Error())
		}
		return nil
	}
	var registered []string
	cc := crawler.CatalogCrawler{Fetcher: f}
	for _, cat := range due {
		rec := cc.Crawl(ctx, cat.URL, cat.ETag)
		rec.NextCrawlAt = now.Add(c.CrawlInterval)
		// No one asked for this crawl: its new agents spend the catalog's
		// registrable domain's budget only (docs/threats.md K.97).
		if b := c.limiters.Agents("", cat.URL); b != nil {
			rec.Spend = func(n int) (int, string) {
				got, r := b.Spend(n, time.Now())
				if r != nil {
					return got, r.Detail
				}
				return got, ""
			}
		}
		if rec.Error != "" {
			log.Info("catalog crawl failed", "url", cat.URL, "err", rec.Error)
		}
		done, err := svc.RecordCatalog(ctx, rec)
		if err != nil {
			log.Error("catalogs: recording", "url", cat.URL, "err", err.Error())
			continue
		}
		if len(done.Registered)+len(done.Missing)+len(done.Listed) > 0 {
			log.Info("catalog crawled", "url", cat.URL, "registered", len(done.Registered),
				"not_listed", len(done.Missing), "listed_again", len(done.Listed))
		}
		// Agents no longer listed, or listed again, are due now too.
		registered = append(registered, done.Registered...)
		registered = append(registered, done.Missing...)
		registered = append(registered, done.Listed...)
	}
	return registered
}
