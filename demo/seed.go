package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// demoAdmin is the internal principal that curates the demo catalogue;
// the audit log names it.
var demoAdmin = registry.Principal{Role: registry.RoleAdmin, Name: "demo"}

// Bounds of the seeding loops: the catalogue is normally complete within
// a few seconds; after these the demo logs what is missing and serves on.
const (
	demoApproveWithin = 60 * time.Second
	demoBreakWithin   = 30 * time.Second
	demoPoll          = 100 * time.Millisecond
)

// errDemoSeed: the demo catalogue could not be completed in time.
var errDemoSeed = errors.New("demo catalogue incomplete")

// seed registers every demo agent through Service.Submit (one through a
// host claim, claim.go), approves each
// once its first version is recorded (Service.Act, like an admin would),
// then breaks the flaky agents and has them re-crawled until they are
// failing and gone. Agents already registered by an earlier run are
// reused.
func (d *demoFleet) seed(ctx context.Context, svc *registry.Service, kick func(), crawlCatalogs func(context.Context) []string, log *slog.Logger) error {
	ids := make(map[string]demoAgent, len(d.agents))
	for _, a := range d.agents {
		ag, err := svc.Submit(ctx, demoAdmin, a.url, registry.VisibilityPublic)
		var dup *registry.DuplicateError
		switch {
		case err == nil:
			ids[ag.ID] = a
		case errors.As(err, &dup):
			ids[dup.AgentID] = a
		case errors.Is(err, registry.ErrAgentRemoved):
			// An admin removed it from this demo: leave it out and seed
			// the rest.
			log.Info("demo agent removed by an admin; not seeding it", "url", a.url)
		default:
			return fmt.Errorf("demo: submit %s: %w", a.url, err)
		}
	}
	// The self-publishing host is one more demo of a feature; if its claim
	// cannot be completed, the rest of the catalogue is seeded anyway.
	if selfID, err := d.selfPublish(ctx, svc); err != nil {
		log.Error("demo: the host that claims itself", "err", err.Error())
	} else {
		ids[selfID] = demoAgent{url: d.self.URL()}
	}
	// The multi-agent host's catalog (catalog.go): the agents it
	// lists are registered now and approved with the rest.
	for _, id := range crawlCatalogs(ctx) {
		ids[id] = demoAgent{}
	}
	kick()
	pending := make(map[string]bool, len(ids))
	for id, a := range ids {
		if a.live != livePending { // that one waits for a curator
			pending[id] = true
		}
	}
	err := poll(ctx, demoApproveWithin, func() (bool, error) {
		for id := range pending {
			ag, err := svc.Get(ctx, demoAdmin, id)
			if err != nil {
				return false, err
			}
			switch {
			case ag.Status != registry.StatusPending:
				// Approved, or an admin of this demo decided otherwise
				// (rejected, suspended, removed): nothing to seed.
				delete(pending, id)
			case ag.Status == registry.StatusPending && ag.VersionSeq > 0:
				seq := ag.VersionSeq
				if _, err := svc.Act(ctx, demoAdmin, id, registry.ActionApprove, registry.ActionRequest{Reason: "demo catalogue", VersionSeq: &seq}); err != nil && !errors.Is(err, registry.ErrVersionConflict) {
					return false, err
				}
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("demo: approving (%d of %d still pending): %w", len(pending), len(ids), err)
	}
	log.Info("demo catalogue approved", "agents", len(ids))
	d.flaky.broken.Store(true)
	d.live.afterApproval()
	for id, a := range ids {
		var done func(*registry.Agent) bool
		switch {
		case a.flaky == flakyFailing, a.live == liveRecovering:
			done = func(ag *registry.Agent) bool { return ag.Health == registry.HealthFailing }
		case a.flaky == flakyGone:
			done = func(ag *registry.Agent) bool { return ag.Health == registry.HealthGone } // after three 404s in a row
		case a.live == liveFlagged:
			done = func(ag *registry.Agent) bool { return ag.NeedsReview }
		case a.live == liveChanging:
			done = func(ag *registry.Agent) bool { return ag.VersionSeq >= 2 }
		default:
			continue
		}
		ag, err := svc.Get(ctx, demoAdmin, id)
		if err != nil {
			return err
		}
		if ag.Status != registry.StatusApproved {
			continue // an admin of this demo took it out of the catalogue
		}
		if err := recrawlUntil(ctx, svc, kick, id, done); err != nil {
			return err
		}
	}
	return nil
}

// recrawlUntil asks for crawls of id until done says the agent got where
// the demo wants it, waiting for each crawl to be recorded before asking
// again.
func recrawlUntil(ctx context.Context, svc *registry.Service, kick func(), id string, done func(*registry.Agent) bool) error {
	var last time.Time
	return poll(ctx, demoBreakWithin, func() (bool, error) {
		ag, err := svc.Get(ctx, demoAdmin, id)
		if err != nil {
			return false, err
		}
		if done(ag) {
			return true, nil
		}
		if ag.LastFetchedAt != nil && !ag.LastFetchedAt.After(last) && !last.IsZero() {
			return false, nil // the requested crawl is not recorded yet
		}
		if ag.LastFetchedAt != nil {
			last = *ag.LastFetchedAt
		}
		if _, err := svc.RequestCrawl(ctx, demoAdmin, id); err != nil {
			return false, err
		}
		kick()
		return false, nil
	})
}

// poll runs step every demoPoll until it reports done, fails, ctx ends or
// within passes.
func poll(ctx context.Context, within time.Duration, step func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	t := time.NewTicker(demoPoll)
	defer t.Stop()
	for {
		done, err := step()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", errDemoSeed, ctx.Err())
		case <-t.C:
		}
	}
}

// demoWelcome prints where to browse and, on the first start, creates and
// prints the demo admin token. Later starts say how to get another: the first
// one is not stored anywhere readable.
func demoWelcome(ctx context.Context, w io.Writer, svc *registry.Service, first bool, browse, dataDir string) error {
	fmt.Fprintf(w, "Cardex demo: browse %s\n", browse)
	if !first {
		fmt.Fprintf(w, "The demo admin token was printed on the first start; 'cardex token create --role admin --data %s' makes another.\n", shellQuote(dataDir))
		return nil
	}
	tok, _, err := svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleAdmin, Name: "demo-admin"})
	if err != nil {
		return fmt.Errorf("demo admin token: %w", err)
	}
	fmt.Fprintf(w, "Demo admin token (shown once; sign in at %sadmin): %s\n", browse, tok)
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it, so a printed
// command can be pasted as it is.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,=@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
