package api

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

type skillPageJSON struct {
	Skills        []search.SkillHit `json:"skills"`
	NextPageToken string            `json:"nextPageToken"`
	TotalSize     int               `json:"totalSize"`
}

func (h *searchHarness) skills(query, token string) skillPageJSON {
	h.t.Helper()
	r := h.do(req{method: "GET", path: "/api/v1/skills?" + query, token: token})
	r.expectStatus(h.t, http.StatusOK)
	var p skillPageJSON
	r.json(h.t, &p)
	return p
}

func skillKeys(p skillPageJSON) []string {
	var out []string
	for _, s := range p.Skills {
		out = append(out, s.AgentID+"/"+s.SkillID)
	}
	slices.Sort(out)
	return out
}

// docs/api.md: GET /skills?q= and GET /tags?prefix=, scoped like lists.
func TestSearchSkillsAndTags(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)

		p := h.skills("q=storms", c.reader)
		if len(p.Skills) != 1 || p.TotalSize != 1 {
			t.Fatalf("q=storms: %+v", p)
		}
		s := p.Skills[0]
		if s.AgentID != c.storm.ID || s.AgentName != "Storm Tracker" || s.SkillID != "alerts" || s.Name != "Storm alerts" ||
			s.Description != "Warns about storms." || !slices.Equal(s.Tags, []string{"weather", "maps"}) ||
			len(s.Fragments) == 0 || !strings.Contains(strings.Join(s.Fragments, " "), "<mark>") {
			t.Fatalf("skill hit %+v", s)
		}
		// Anonymous callers do not see the internal agent's skill.
		if p := h.skills("q=storms", ""); len(p.Skills) != 0 || p.TotalSize != 0 {
			t.Fatalf("anonymous q=storms: %+v", p)
		}
		// Without q: every skill of the listed agents; filters apply to the agent.
		if got := skillKeys(h.skills("", "")); len(got) != 3 {
			t.Fatalf("anonymous skills %v", got)
		}
		if got := skillKeys(h.skills("tag=weather", c.admin)); !slices.Equal(got, sortedKeys(c.weather.ID+"/forecast", c.storm.ID+"/alerts", c.pendingOnly.ID+"/wp")) {
			t.Fatalf("admin tag=weather skills %v", got)
		}
		// Pages of one skill walk all three public skills.
		seen := map[string]bool{}
		tok := ""
		for range 3 {
			q := "pageSize=1"
			if tok != "" {
				q += "&pageToken=" + url.QueryEscape(tok)
			}
			p := h.skills(q, "")
			if len(p.Skills) != 1 || p.TotalSize != 3 {
				t.Fatalf("skills page %+v", p)
			}
			seen[p.Skills[0].SkillID] = true
			tok = p.NextPageToken
		}
		if tok != "" || len(seen) != 3 {
			t.Fatalf("walked %v, final token %q", seen, tok)
		}
		h.do(req{method: "GET", path: "/api/v1/skills?sort=name"}).expectProblem(t, http.StatusBadRequest, "validation-failed")

		tags := func(query, token string) string {
			r := h.do(req{method: "GET", path: "/api/v1/tags?" + query, token: token})
			r.expectStatus(t, http.StatusOK)
			var out struct {
				Tags []search.FacetValue `json:"tags"`
			}
			r.json(t, &out)
			return values(out.Tags)
		}
		for _, tc := range []struct{ query, token, want string }{
			{"", "", "climate=1 currency=1 finance=1 maps=1 routing=1 weather=1"},
			{"prefix=ma", "", "maps=1"},
			{"prefix=MA", c.reader, "maps=2"},
			{"prefix=w", c.admin, "weather=3"},
			{"prefix=zz", "", ""},
			{"limit=2", c.reader, "maps=2 weather=2"},
		} {
			if got := tags(tc.query, tc.token); got != tc.want {
				t.Errorf("tags?%s = %q, want %q", tc.query, got, tc.want)
			}
		}
		for q, ptr := range map[string]string{
			"limit=0":                               "/limit",
			"prefix=a&prefix=b":                     "/prefix",
			"tag=x":                                 "/tag",
			"prefix=" + strings.Repeat("a", 513):    "/prefix",
			"prefix=" + url.QueryEscape("\xff\xfe"): "/prefix",
		} {
			pr := h.do(req{method: "GET", path: "/api/v1/tags?" + q}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(pr.Errors) != 1 || pr.Errors[0].Pointer != ptr {
				t.Errorf("tags?%.40s: errors %+v", q, pr.Errors)
			}
		}
	})
}

func sortedKeys(keys ...string) []string {
	slices.Sort(keys)
	return keys
}
