package main

import (
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/cardexhq/cardex/buildinfo"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/pace"
	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/verifier"
)

// crawlNetwork is the network policy's allowances (docs/security.md "Network policy"): the
// operator's settings, or in --demo the demo fleet's loopback addresses.
type crawlNetwork struct {
	AllowNetworks     []netip.Prefix
	AllowInsecureHTTP bool
}

// policy is the production fetch policy with the allowances, the CA file
// and the crawl timeout applied.
func (c *serveConfig) policy(allow crawlNetwork) (fetch.Policy, error) {
	return fetchPolicy(allow, c.CAFile, c.CrawlTimeout)
}

// fetchPolicy is the production fetch policy of docs/security.md "Network policy" with an
// operator's allowances, extra roots and total timeout, naming this build
// in its User-Agent. serve and the fetching CLI commands share it.
func fetchPolicy(allow crawlNetwork, caFile string, timeout time.Duration) (fetch.Policy, error) {
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks, pol.AllowInsecureHTTP = allow.AllowNetworks, allow.AllowInsecureHTTP
	pol.Timeout = timeout
	pol.ResponseHeaderTimeout = min(pol.ResponseHeaderTimeout, timeout)
	pol.UserAgent = fetch.UserAgent(buildinfo.Get().Version)
	if caFile != "" {
		pool, err := fetch.LoadCAFile(caFile)
		if err != nil {
			return pol, err
		}
		pol.RootCAs = pool
	}
	return pol, pol.Validate()
}

// crawlRuntime is the fetcher and the scheduler of a running server, and
// the per-host cap they share with the liveness prober.
type crawlRuntime struct {
	fetcher *fetch.Fetcher
	sched   *crawler.Scheduler
	hosts   *fetch.HostSlots
}

// fetcher builds the hardened fetcher of a running server: cards, key sets
// and host claims all go through it.
func (c *serveConfig) fetcher(allow crawlNetwork, log *slog.Logger) (*fetch.Fetcher, error) {
	pol, err := c.policy(allow)
	if err != nil {
		return nil, fmt.Errorf("crawler policy: %w", err)
	}
	f, err := fetch.New(fetch.Config{Policy: pol, Logger: log, ClaimsPerHost: c.ClaimFetchesPerHost})
	if err != nil {
		return nil, fmt.Errorf("crawler: %w", err)
	}
	return f, nil
}

// newCrawl builds a verifier that fetches key sets through f (same policy,
// docs/security.md "Network policy") and a stopped scheduler over svc, recording through the
// metrics decorator. The caller closes f.
func newCrawl(c *serveConfig, f *fetch.Fetcher, svc *registry.Service, m *metrics, g *pace.Gate, log *slog.Logger) (*crawlRuntime, error) {
	hosts := fetch.NewHostSlots(c.CrawlPerHost)
	f.ShareHosts(hosts) // claim checks share the hosts' budget with crawls and probes
	s, err := crawler.NewScheduler(crawler.SchedulerConfig{
		Registry: recordingRegistry{Registry: svc, batch: svc, m: m},
		Fetcher:  f,
		Verifier: verifier.New(verifier.Config{Fetcher: f, Logger: log}),
		Logger:   log,
		Tick:     c.CrawlTick,
		Workers:  c.CrawlWorkers,
		PerHost:  c.CrawlPerHost,
		Hosts:    hosts,
		LeaseTTL: c.LeaseTTL,
		Pace:     g.Background,
		Schedule: crawler.Schedule{
			Interval:    c.CrawlInterval,
			MinInterval: c.CrawlMinInterval,
			MaxInterval: c.CrawlMaxInterval,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("crawler: %w", err)
	}
	return &crawlRuntime{fetcher: f, sched: s, hosts: hosts}, nil
}

// newProber builds the liveness prober over f (the crawler's fetcher; the
// demo's own, which reaches only the demo's agents) and the crawler's
// per-host cap (docs/liveness.md), or nil when --probe-interval is 0.
func newProber(c *serveConfig, cr *crawlRuntime, f *fetch.Fetcher, svc *registry.Service, m *metrics, g *pace.Gate, log *slog.Logger) (*prober.Prober, error) {
	if c.ProbeInterval == 0 {
		return nil, nil
	}
	offDomain := c.ProbeMaxOffDomain
	if offDomain == 0 {
		offDomain = -1 // the flag's 0 is none; the Config's zero value is the default
	}
	p, err := prober.New(prober.Config{
		Registry:      svc,
		Fetcher:       f,
		Hosts:         cr.hosts,
		Interval:      c.ProbeInterval,
		Workers:       c.ProbeWorkers,
		RateFloor:     float64(c.ProbeRateFloor),
		MaxInterfaces: c.ProbeMaxInterfaces,
		MaxOffDomain:  offDomain,
		KeepProbes:    c.ProbeHistory,
		PerHost:       c.CrawlPerHost,
		LeaseTTL:      c.LeaseTTL,
		Logger:        log,
		Observe:       m.observeProbe,
		Pace:          g.Background,
	})
	if err != nil {
		return nil, fmt.Errorf("prober: %w", err)
	}
	return p, nil
}
