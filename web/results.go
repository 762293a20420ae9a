package web

import (
	"html/template"
	"net/http"
	"slices"
	"time"

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

// results hydrates the hits from SQL in one read (SQL is the truth: health,
// status and last change come from there); Service.Listed drops any the
// viewer may no longer list (docs/threats.md G.72).
func (u *ui) results(r *http.Request, hits []search.Hit) ([]resultView, error) {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	agents, err := u.svc.Listed(r.Context(), principal(r), ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]search.Hit, len(hits))
	for _, h := range hits {
		byID[h.ID] = h
	}
	out := make([]resultView, 0, len(agents))
	for i := range agents {
		out = append(out, resultOf(&agents[i], byID[agents[i].ID]))
	}
	return out, nil
}

func resultOf(a *registry.Agent, h search.Hit) resultView {
	v := resultView{ID: a.ID, Name: a.Host, Host: a.Host, Trust: a.Trust, Health: a.Health, Status: a.Status,
		NeedsReview: a.NeedsReview, LastChangedAt: a.LastChangedAt, Liveness: registry.LivenessUnknown}
	if a.Liveness != nil {
		v.Liveness = a.Liveness.State
	}
	names := map[string]string{}
	if c := a.Card; c != nil {
		v.Name, v.Description = c.Name, c.Description
		if c.Provider != nil {
			v.Provider = c.Provider.Organization
		}
		for _, s := range c.Skills {
			names[s.ID] = s.Name
			for _, t := range s.Tags {
				if len(v.Tags) < 6 && !slices.Contains(v.Tags, t) {
					v.Tags = append(v.Tags, t)
				}
			}
		}
	}
	bySkill := map[string]int{}
	for _, m := range h.Matches {
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
