package prober

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/leasework"
	"github.com/cardexhq/cardex/registry"
)

// plan is what one round of an agent probes, in card order: each
// interface once (URL, binding and protocol version: one URL listed for 1.0
// and 0.3 answers each version on its own, docs/liveness.md), only
// bindings Cardex speaks, at most
// MaxInterfaces, and interfaces off the card's registrable domain only
// when a curator approved the agent, at most MaxOffDomain of them
// (docs/liveness.md "What is probed", docs/threats.md K.98, K.99). A card
// naming 500 interfaces, or a third party's webhook, gets no more.
func (p *Prober) plan(d registry.DueProbe) (targets []agentcard.Interface, dropped int) {
	seen := map[[3]string]bool{}
	home := domainOf(d.Host)
	off := 0
	for _, it := range d.Interfaces {
		k := [3]string{it.URL, strings.ToUpper(it.Binding), it.ProtocolVersion}
		if seen[k] || !speaks(it.Binding) {
			continue
		}
		seen[k] = true
		if len(targets) == p.cfg.MaxInterfaces {
			dropped++
			continue
		}
		if domainOf(it.URL) != home {
			if !d.CuratorApproved || off == p.cfg.MaxOffDomain {
				dropped++
				continue
			}
			off++
		}
		targets = append(targets, it)
	}
	return targets, dropped
}

// domainOf is the registrable domain of a host or an interface URL, any
// spelling (the rule of cardurl.DomainKey on the host of
// cardurl.HostKey): an IP literal is its own domain.
func domainOf(hostOrURL string) string {
	h := cardurl.HostKey(hostOrURL)
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return cardurl.DomainKey("https://" + h)
}

// roundBudget is how long a round of d may run: at most half the lease
// TTL, and it must end a quarter TTL before the lease does, so the round
// is recorded while the lease is still this prober's and no other prober
// claims the agent under a running round (docs/threats.md K.98). It is ≤ 0
// when the agent waited in the queue too long.
func (p *Prober) roundBudget(d registry.DueProbe) time.Duration {
	return leasework.Budget(p.cfg.LeaseTTL, d.LeaseUntil, p.cfg.Now())
}

// Probe probes the planned interfaces of one leased agent, one at a time,
// each under its host's share of the per-host budget, within the round's
// budget (roundBudget), and returns the round with the agent's next probe
// time: Interval jittered; after a round in which no interface answered,
// Interval × 2^failures (capped at MaxBackoff); never before a Retry-After
// the agent sent; sooner (4 probe timeouts, at most Interval) when a host
// was too busy to probe some interface. Interfaces left for lack of time
// or a busy host keep their last verdict (Unfinished). Between interfaces
// it checks that the lease is still held: an admin who turns the agent's
// probing off stops the round within one probe timeout.
func (p *Prober) Probe(ctx context.Context, d registry.DueProbe) registry.ProbeRound {
	r := registry.ProbeRound{AgentID: d.ID, At: p.cfg.Now()}
	targets, dropped := p.plan(d)
	if dropped > 0 {
		p.log.Debug("interfaces not probed: over the per-agent caps or off-domain without a curator's approval",
			"agent_id", d.ID, "dropped", dropped)
	}
	ctx, cancel := context.WithTimeout(ctx, max(p.roundBudget(d), 0))
	defer cancel()
	deadline, _ := ctx.Deadline()
	var wait time.Duration
	reachable, busy := false, false
	for i, it := range targets {
		// A probe that could not run its whole timeout before the
		// deadline is not started: a cut-short probe would blame the
		// agent for Cardex's deadline.
		if ctx.Err() != nil || time.Until(deadline) < p.cfg.Timeout {
			r.Unfinished = appendTargets(r.Unfinished, targets[i:])
			break
		}
		if i > 0 && !p.leaseHeld(ctx, d.ID) {
			return r // probing turned off or the lease lost: nothing to record
		}
		release, err := p.cfg.Hosts.Acquire(ctx, it.URL, fetch.UseProbe)
		if err != nil {
			r.Unfinished = appendTargets(r.Unfinished, targets[i:i+1])
			busy = busy || errors.Is(err, fetch.ErrHostBusy)
			continue
		}
		res, ok := p.probeInterface(ctx, it)
		release()
		if !ok {
			continue
		}
		p.stats.probes.Add(1)
		if p.cfg.Observe != nil {
			p.cfg.Observe(res.ProbeResult)
		}
		r.Probes = append(r.Probes, res.ProbeResult)
		wait = max(wait, res.retryAfter)
		reachable = reachable || res.Outcome != registry.OutcomeUnreachable
	}
	next := p.cfg.Interval
	switch {
	case len(r.Probes) > 0 && !reachable:
		next = p.backoff(d.Failures + 1)
	case busy:
		next = min(p.cfg.Interval, 4*p.cfg.Timeout)
	}
	next = p.jitter(next)
	if wait > next {
		next = min(wait, max(p.cfg.MaxBackoff, 24*time.Hour))
	}
	r.Next = r.At.Add(next)
	return r
}

// leaseHeld asks the registry whether this prober still holds d's probe
// lease; an error counts as held (the record will tell).
func (p *Prober) leaseHeld(ctx context.Context, id string) bool {
	held, err := p.cfg.Registry.ProbeLeaseHeld(ctx, p.cfg.Owner, id, p.cfg.Now())
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("check probe lease", "agent_id", id, "err", err)
		}
		return ctx.Err() == nil
	}
	return held
}

func appendTargets(dst []registry.ProbeTarget, its []agentcard.Interface) []registry.ProbeTarget {
	for _, it := range its {
		dst = append(dst, registry.ProbeTarget{URL: it.URL, Binding: it.Binding, ProtocolVersion: it.ProtocolVersion})
	}
	return dst
}

// speaks reports whether Cardex can probe a binding (probeInterface).
func speaks(binding string) bool {
	switch strings.ToUpper(binding) {
	case bindingJSONRPC, bindingHTTP, "REST", bindingGRPC:
		return true
	}
	return false
}
