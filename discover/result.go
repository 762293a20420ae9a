package discover

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Registry is what discovery reads of the registry: the records a caller
// may list with their cards' summaries (search.Find hydrates through
// ListedSummaries), one record and its versions by id.
type Registry interface {
	ListedSummaries(ctx context.Context, p registry.Principal, ids []string) ([]registry.Agent, error)
	Get(ctx context.Context, p registry.Principal, id string) (*registry.Agent, error)
	Versions(ctx context.Context, p registry.Principal, id string) ([]registry.Version, error)
}

// summaries is the search.Lister of result lists: records with their
// cards' stored summaries, never the cards (docs/threats.md K.96).
type summaries struct{ r Registry }

func (l summaries) Listed(ctx context.Context, p registry.Principal, ids []string) ([]registry.Agent, error) {
	return l.r.ListedSummaries(ctx, p, ids)
}

// Index is what discovery asks the search index; *search.Index has it.
type Index interface {
	search.Querier
	Tags(ctx context.Context, prefix string, scope registry.Scope, limit int) ([]search.FacetValue, error)
}

// Finder answers the discovery surfaces' questions.
type Finder struct {
	Index    Index
	Registry Registry
}

// Agent is one agent as the discovery surfaces show it: enough to pick it
// and to talk to it (its card, in the A2A v1.0 shape that GET
// /api/v1/agents/{id} serves too: agentcard.Card.A2A), with Cardex's verdicts
// and links to Cardex's copy.
type Agent struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Record is Cardex's API record of the agent, Page its web page.
	Record string `json:"record"`
	Page   string `json:"page"`
	// CardURL is where the agent publishes its card (the origin's copy);
	// for a card given inline in a catalog, the catalog document's URL
	// with the entry's identifier as fragment (CatalogInline).
	CardURL string `json:"cardUrl"`
	// Catalog is the AI Catalog the agent was found through, "" when it
	// was submitted directly; CatalogInline: its card is an inline entry
	// of that catalog (docs/discovery.md).
	Catalog       string `json:"catalog,omitempty"`
	CatalogInline bool   `json:"catalogInline,omitempty"`
	// CatalogQueries are the representativeQueries of the catalog entry
	// that lists the agent (registry.Agent.CatalogQueries).
	CatalogQueries []string `json:"catalogQueries,omitempty"`
	// Source is where the agent's catalog entry came from
	// (registry.Agent.CatalogSource): Cardex's own documents name the
	// agent by the publisher's identifier when it gave one.
	Source *registry.CatalogSource `json:"-"`
	// Card is the agent's current card as an A2A v1.0 AgentCard, in the
	// answer about one agent (get_agent, an A2A request by id); absent for
	// an agent never fetched.
	Card *agentcard.AgentCard `json:"card,omitempty"`
	// Summary is what a result list shows of the card (search_agents,
	// find-agents): bounded whatever the card holds (docs/api.md "Lists
	// and search"); the whole card is one get_agent away. Absent for an
	// agent never fetched.
	Summary *agentcard.Summary `json:"summary,omitempty"`
	Trust   string             `json:"trust"`
	Health  string             `json:"health"`
	// Liveness is what Cardex's protocol probes last said of the agent's
	// interfaces (docs/liveness.md); absent when it has none.
	Liveness *Liveness `json:"liveness,omitempty"`
	// MatchedSkills are the skills whose own fields matched the text of
	// the search (empty without text, or when only the agent's own fields
	// matched).
	MatchedSkills []Skill `json:"matchedSkills"`
	// Score is the search index's relevance score (ARDScore turns it
	// into ARD's 0–100).
	Score float64 `json:"-"`
}

// Liveness is the probes' verdict: the state and since when it holds.
type Liveness struct {
	State string     `json:"state"`
	Since *time.Time `json:"since,omitempty"`
}

// Skill names one skill of an agent.
type Skill struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Page is one page of a search.
type Page struct {
	Agents        []Agent `json:"agents"`
	TotalSize     int     `json:"totalSize"`
	NextPageToken string  `json:"nextPageToken,omitempty"`
	// Facets count the values of every matching agent (all pages).
	Facets search.Facets `json:"facets"`
}

// Search runs r as caller through search.Find, the path of GET
// /api/v1/agents; base is Cardex's public URL for the links.
func (f Finder) Search(ctx context.Context, caller registry.Principal, r Request, base string) (*Page, error) {
	q, err := r.Query(caller)
	if err != nil {
		return nil, err
	}
	if err := chargePage(ctx, q.PageSize); err != nil {
		return nil, err
	}
	res, err := search.Find(ctx, f.Index, summaries{f.Registry}, caller, q)
	if err != nil {
		return nil, err
	}
	out := &Page{Agents: make([]Agent, 0, len(res.Agents)), TotalSize: res.TotalSize,
		NextPageToken: res.NextPageToken, Facets: res.Facets.Lists()}
	for _, fa := range res.Agents {
		s := Summarize(fa.Agent, fa.Matches, base)
		s.Score = fa.Score
		out.Agents = append(out.Agents, s)
	}
	return out, nil
}

// Get reads one agent by id under the reading rule of GET
// /api/v1/agents/{id} (registry.Service.Get).
func (f Finder) Get(ctx context.Context, caller registry.Principal, id, base string) (*Agent, *registry.Agent, error) {
	a, err := f.Registry.Get(ctx, caller, id)
	if err != nil {
		return nil, nil, err
	}
	s := Summarize(*a, nil, base)
	return &s, a, nil
}

// Summarize is the discovery view of a: the matched skills come from the
// search's matches.
func Summarize(a registry.Agent, matches []search.Match, base string) Agent {
	out := Agent{
		ID:             a.ID,
		Record:         base + "/api/v1/agents/" + url.PathEscape(a.ID),
		Page:           base + "/agents/" + url.PathEscape(a.ID),
		CardURL:        a.CardURL,
		Catalog:        a.Catalog,
		CatalogInline:  a.CatalogInline,
		CatalogQueries: a.CatalogQueries,
		Source:         a.CatalogSource,
		Trust:          string(a.Trust),
		Health:         string(a.Health),
		MatchedSkills:  []Skill{},
	}
	if a.Liveness != nil {
		out.Liveness = &Liveness{State: string(a.Liveness.State), Since: a.Liveness.Since}
	}
	switch {
	case a.CardView != nil && a.CardView.Summary != nil:
		var sum agentcard.Summary
		if json.Unmarshal(a.CardView.Summary, &sum) == nil {
			out.Summary = &sum
			out.Name, out.Description = sum.Name, sum.Description
		}
	case a.Card != nil:
		out.Name = a.Card.Name
		out.Description = a.Card.Description
		out.Card = a.Card.A2A()
	}
	for _, m := range matches {
		if m.SkillID == "" || slices.ContainsFunc(out.MatchedSkills, func(s Skill) bool { return s.ID == m.SkillID }) {
			continue
		}
		sk := Skill{ID: m.SkillID}
		if a.Card != nil {
			for _, s := range a.Card.Skills {
				if s.ID == m.SkillID {
					sk.Name = s.Name
				}
			}
		}
		if out.Summary != nil {
			for _, s := range out.Summary.Skills {
				if s.ID == m.SkillID {
					sk.Name = s.Name
				}
			}
		}
		out.MatchedSkills = append(out.MatchedSkills, sk)
	}
	return out
}

// Summary is the one-line text answer to a search, for the clients that
// read only text.
func Summary(r Request, p *Page) string {
	var b strings.Builder
	switch n := p.TotalSize; {
	case n == 0:
		b.WriteString("No agents found")
	case n == 1:
		b.WriteString("1 agent found")
	default:
		fmt.Fprintf(&b, "%d agents found", n)
	}
	if strings.TrimSpace(r.Q) != "" {
		fmt.Fprintf(&b, " for %q", r.Q)
	}
	if len(p.Agents) > 0 {
		names := make([]string, 0, len(p.Agents))
		for _, a := range p.Agents {
			names = append(names, a.Name)
		}
		fmt.Fprintf(&b, ": %s", strings.Join(names, ", "))
	}
	b.WriteString(".")
	if p.NextPageToken != "" {
		b.WriteString(" More results: repeat the search with pageToken " + p.NextPageToken + ".")
	}
	return b.String()
}
