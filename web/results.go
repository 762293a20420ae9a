package web

import (
	"encoding/json"
	"html/template"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

type resultView struct {
	ID, Name, Host, Provider, Description string
	Trust                                 registry.Trust
	Health                                registry.Health
	Liveness                              registry.LivenessState
	Status                                registry.Status
	NeedsReview                           bool
	LastChangedAt                         *time.Time
	NameHL                                template.HTML // highlighted name, when q matched it
	DescriptionHL                         template.HTML
	Skills                                []skillMatch
	QueriesHL                             []template.HTML // matching representativeQueries of its catalog entry, marked (at most 2)
	Tags                                  []string
}

type skillMatch struct {
	Name      string
	NameHL    template.HTML // the name with the matched words marked, when q matched it
	Fragments []template.HTML
}

// resultOf is one result of the catalogue: the agent as SQL holds it now
// (status, health and last change come from there) with its stored
// summary, and what matched.
func resultOf(a *registry.Agent, matches []search.Match) resultView {
	v := resultView{ID: a.ID, Name: a.Host, Host: a.Host, Trust: a.Trust, Health: a.Health, Status: a.Status,
		NeedsReview: a.NeedsReview, LastChangedAt: a.LastChangedAt, Liveness: registry.LivenessUnknown}
	if a.Liveness != nil {
		v.Liveness = a.Liveness.State
	}
	names := map[string]string{}
	var sum agentcard.Summary
	switch {
	case a.CardView != nil && a.CardView.Summary != nil:
		if json.Unmarshal(a.CardView.Summary, &sum) != nil {
			sum = agentcard.Summary{}
		}
	case a.Card != nil:
		sum = a.Card.Summary()
	}
	if sum.Name != "" || sum.Description != "" || a.CardView != nil || a.Card != nil {
		v.Name, v.Description, v.Provider = sum.Name, sum.Description, sum.Provider
		for _, s := range sum.Skills {
			names[s.ID] = s.Name
		}
		v.Tags = sum.Tags[:min(6, len(sum.Tags))]
	}
	bySkill := map[string]int{}
	for _, m := range matches {
		if len(m.Fragments) == 0 {
			continue
		}
		if m.SkillID == "" {
			switch m.Field {
			case "name":
				v.NameHL = highlight(m.Fragments[0])
			case "description":
				v.DescriptionHL = highlight(m.Fragments[0])
			case search.MatchQueries:
				for _, f := range m.Fragments[:min(2, len(m.Fragments))] {
					v.QueriesHL = append(v.QueriesHL, highlight(f))
				}
			}
			continue
		}
		i, ok := bySkill[m.SkillID]
		if !ok {
			if len(v.Skills) == 3 {
				continue
			}
			name := names[m.SkillID]
			if name == "" {
				name = m.SkillID
			}
			i = len(v.Skills)
			bySkill[m.SkillID] = i
			v.Skills = append(v.Skills, skillMatch{Name: name})
		}
		if m.Field == "name" {
			// The skill's name is shown once, marked; repeating it as a
			// snippet read "Weather Forecast: Weather Forecast".
			v.Skills[i].NameHL = highlight(m.Fragments[0])
			continue
		}
		if len(v.Skills[i].Fragments) < 2 {
			v.Skills[i].Fragments = append(v.Skills[i].Fragments, highlight(m.Fragments[0]))
		}
	}
	return v
}
