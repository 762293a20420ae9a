package api

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// convergence drives a registry through random (seeded) interleavings of
// what submitters, the crawler and admins do, with the index following only
// when the test syncs it.
type convergence struct {
	h      *searchHarness
	rnd    *rand.Rand
	admin  registry.Principal
	hosts  []string
	ids    []string // agents submitted so far
	tokens map[string]string
}

const convergenceOwner = "convergence-test"

var convergenceTags = []string{"weather", "maps", "finance", "travel", "health", "search"}

// op performs one random action. Actions that do not apply to the agent's
// current state (approving a rejected agent, …) fail as the registry says
// and change nothing, as they would in production.
func (cv *convergence) op(ctx context.Context) string {
	svc := cv.h.svc
	if len(cv.ids) == 0 || (len(cv.ids) < len(cv.hosts) && cv.rnd.IntN(5) == 0) {
		host := cv.hosts[len(cv.ids)]
		vis := registry.VisibilityPublic
		if cv.rnd.IntN(3) == 0 {
			vis = registry.VisibilityInternal
		}
		a, err := svc.Submit(ctx, cv.admin, "https://"+host+"/", vis)
		if err != nil {
			cv.h.t.Fatalf("submit %s: %v", host, err)
		}
		cv.ids = append(cv.ids, a.ID)
		return "submit"
	}
	id := cv.ids[cv.rnd.IntN(len(cv.ids))]
	var err error
	var name string
	switch k := cv.rnd.IntN(10); k {
	case 0:
		// Three 404s in a row: the card is withdrawn and the agent gone.
		name = "gone"
		for range 3 {
			if err = cv.fetch(ctx, id, false); err != nil {
				break
			}
		}
	case 1, 2:
		name = "fetch"
		err = cv.fetch(ctx, id, cv.rnd.IntN(4) != 0)
	case 3:
		name = "approve"
		var a *registry.Agent
		if a, err = svc.Get(ctx, cv.admin, id); err == nil {
			seq := a.VersionSeq
			_, err = svc.Act(ctx, cv.admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: &seq})
		}
	default:
		actions := []registry.Action{registry.ActionReject, registry.ActionSuspend, registry.ActionRestore, registry.ActionRemove}
		if k >= 4+len(actions) {
			name = "visibility"
			v := []registry.Visibility{registry.VisibilityPublic, registry.VisibilityInternal}[cv.rnd.IntN(2)]
			_, err = svc.SetVisibility(ctx, cv.admin, id, v)
			break
		}
		act := actions[k-4]
		name = string(act)
		_, err = svc.Act(ctx, cv.admin, id, act, registry.ActionRequest{Reason: "convergence"})
	}
	if err != nil && !errors.Is(err, registry.ErrInvalidTransition) && !errors.Is(err, registry.ErrVersionConflict) &&
		!errors.Is(err, registry.ErrAgentRemoved) && !errors.Is(err, errNotDue) {
		cv.h.t.Fatalf("%s %s: %v", name, id, err)
	}
	return name
}

var errNotDue = errors.New("agent not due")

// fetch plays the crawler for id: a card parsed by the real parser (random
// tags, so versions differ), or a 404; three 404s in a row make it gone.
func (cv *convergence) fetch(ctx context.Context, id string, ok bool) error {
	svc := cv.h.svc
	due, err := svc.ClaimDue(ctx, convergenceOwner, time.Now().Add(time.Minute), time.Minute, 1000, 1000)
	if err != nil {
		return err
	}
	defer func() {
		if err := svc.ReleaseLeases(ctx, convergenceOwner); err != nil {
			cv.h.t.Error(err)
		}
	}()
	i := slices.IndexFunc(due, func(d registry.DueAgent) bool { return d.ID == id })
	if i < 0 {
		return errNotDue // removed or rejected agents are not fetched
	}
	d := due[i]
	attempt := registry.FetchAttempt{At: time.Now(), URL: d.CardURL}
	if !ok {
		attempt.HTTPStatus, attempt.ErrorClass, attempt.Message = 404, "http_status", "not found"
		return svc.RecordFetch(ctx, convergenceOwner, id, registry.FetchResult{Attempt: attempt, NextFetchAt: time.Now()})
	}
	tag := convergenceTags[cv.rnd.IntN(len(convergenceTags))]
	raw := testCard{name: "Agent " + tag, description: "Does " + tag + " things.", provider: "Org " + d.Host,
		skills: []skill{{id: "s-" + tag, name: "Skill " + tag, description: "About " + tag + ".", tags: []string{tag}}}}.json(d.Host)
	parsed, err := agentcard.Parse(raw, agentcard.Options{CardURL: d.CardURL})
	if err != nil {
		cv.h.t.Fatalf("parse: %v", err)
	}
	attempt.HTTPStatus, attempt.Bytes = 200, int64(len(raw))
	return svc.RecordFetch(ctx, convergenceOwner, id, registry.FetchResult{Attempt: attempt, FetchedURL: d.CardURL, Raw: raw,
		Card: parsed.Card, Problems: parsed.Problems, Trust: registry.TrustUnsigned, NextFetchAt: time.Now()})
}

// sqlListable is what SQL says p may list, walking Service.List's pages.
// The index holds no removed tombstones, so an admin's searchable set is
// every agent but the removed ones.
func (cv *convergence) sqlListable(ctx context.Context, p registry.Principal) []string {
	var out []string
	q := registry.ListQuery{PageSize: 100}
	for range 100 {
		page, err := cv.h.svc.List(ctx, p, q)
		if err != nil {
			cv.h.t.Fatal(err)
		}
		for _, a := range page.Agents {
			if a.Status != registry.StatusRemoved {
				out = append(out, a.ID)
			}
		}
		if q.PageToken = page.NextPageToken; q.PageToken == "" {
			break
		}
	}
	slices.Sort(out)
	return out
}

var convergenceViewers = []struct {
	name string
	p    registry.Principal
}{
	{"anonymous", registry.Anonymous},
	{"reader", registry.Principal{Role: registry.RoleReader}},
	{"admin", registry.Principal{Role: registry.RoleAdmin}},
	{"publisher", registry.Principal{Role: registry.RolePublisher, Hosts: []string{"agent03.example.com", "agent07.example.com"}}},
}

// check compares, for each viewer, the ids the API lists through the index
// with the ids SQL says the viewer may list: equal once synced, and never a
// superset while the index lags (G.72).
func (cv *convergence) check(ctx context.Context, synced bool, step int, trail []string) {
	for _, v := range convergenceViewers {
		want := cv.sqlListable(ctx, v.p)
		got := cv.h.walk("sort=name", cv.tokens[v.name])
		extra := slices.DeleteFunc(slices.Clone(got), func(id string) bool { return slices.Contains(want, id) })
		if len(extra) > 0 || (synced && !slices.Equal(got, want)) {
			cv.h.t.Fatalf("step %d (synced %t), %s: search lists %v, SQL lists %v; extra %v; last ops %v",
				step, synced, v.name, got, want, extra, trail[max(0, len(trail)-10):])
		}
	}
}

// Index ↔ SQL convergence: after random interleavings of submit, fetch
// (real parsed cards, single 404s and three in a row: gone), approve, reject, suspend,
// restore, remove and visibility changes, what each viewer can find through
// the index is exactly what SQL lets it list (docs/api.md "Curation and visibility", G.72).
func TestSearchConvergesWithSQL(t *testing.T) {
	run := func(t *testing.T, store *registry.Store, seed uint64, steps int) {
		h := newSearchHarness(t, store)
		cv := &convergence{h: h, rnd: rand.New(rand.NewPCG(seed, 0x5eed)),
			admin: registry.Principal{Role: registry.RoleAdmin, Name: "convergence"},
			tokens: map[string]string{"anonymous": "", "reader": h.token(registry.RoleReader), "admin": h.token(registry.RoleAdmin),
				"publisher": h.token(registry.RolePublisher, "agent03.example.com", "agent07.example.com")}}
		for i := range 12 {
			cv.hosts = append(cv.hosts, fmt.Sprintf("agent%02d.example.com", i))
		}
		ctx := h.ctx()
		var trail []string
		for step := range steps {
			trail = append(trail, cv.op(ctx))
			switch {
			case cv.rnd.IntN(10) == 0:
				h.sync()
				cv.check(ctx, true, step, trail)
			case step%12 == 11:
				cv.check(ctx, false, step, trail)
			}
		}
		h.sync()
		cv.check(ctx, true, steps, trail)
		counts := map[string]int{}
		for _, op := range trail {
			counts[op]++
		}
		health := map[registry.Health]int{}
		for _, a := range cv.h.list("pageSize=100", cv.tokens["admin"]).Agents {
			health[a.Health]++
		}
		t.Logf("seed %d: %d agents, ops %v, health of the indexed %v", seed, len(cv.ids), counts, health)
	}
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("sqlite/seed%d", seed), func(t *testing.T) {
			t.Parallel()
			run(t, registrytest.SQLite(t), seed, 90)
		})
	}
	t.Run("postgres/seed3", func(t *testing.T) {
		t.Parallel()
		run(t, registrytest.Postgres(t), 3, 90)
	})
}
