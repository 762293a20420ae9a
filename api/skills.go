package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/search"
)

type skillPage struct {
	Skills        []search.SkillHit `json:"skills"`
	NextPageToken string            `json:"nextPageToken"`
	TotalSize     int               `json:"totalSize"`
}

// listSkills is GET /api/v1/skills?q=: skills matching q within one skill,
// with the agent filters of GET /agents applied to each skill's agent
// (docs/api.md). Each skill's agent is re-checked in SQL like a listed
// agent (G.72); a skill of an agent hidden since the index caught up is
// dropped from its page.
func (s *server) listSkills(c echo.Context) error {
	if s.search == nil {
		return errNoSearch()
	}
	r, err := searchParams(c, false)
	if err != nil {
		return err
	}
	res, err := search.FindSkills(c.Request().Context(), s.search, summaryLister{s.svc}, r.caller, search.SkillQuery{Q: r.query.Q, Filters: r.query.Filters,
		PageSize: r.query.PageSize, PageToken: r.query.PageToken})
	if err != nil {
		return err
	}
	out := skillPage{Skills: make([]search.SkillHit, 0, len(res.Skills)), NextPageToken: res.NextPageToken, TotalSize: res.TotalSize}
	for _, h := range res.Skills {
		if h.Tags == nil {
			h.Tags = []string{}
		}
		if h.Fragments == nil {
			h.Fragments = []string{}
		}
		out.Skills = append(out.Skills, h)
	}
	return writeJSON(c, http.StatusOK, out)
}
