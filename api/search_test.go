package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// catalogue is the fixture of the search tests: three approved public
// agents, one approved internal agent and one pending agent.
type catalogue struct {
	admin, reader                                string
	weather, route, currency, storm, pendingOnly registry.Agent
}

func newCatalogue(h *searchHarness) catalogue {
	h.t.Helper()
	c := catalogue{admin: h.token(registry.RoleAdmin), reader: h.token(registry.RoleReader)}
	c.weather = h.publish("weather.example.com", testCard{name: "Weather Oracle", description: "Forecasts for any city.",
		provider: "Acme", streaming: true, scheme: "apiKey", extension: "https://ext.example.com/geo",
		skills: []skill{{id: "forecast", name: "Daily forecast", description: "Tomorrow's weather and rainfall.", tags: []string{"weather", "climate"}}}}, c.admin, true)
	c.route = h.publish("route.example.com", testCard{name: "Route Planner", description: "Driving directions.",
		provider: "Geo Inc", scheme: "oauth2", inputModes: []string{"application/json"},
		skills: []skill{{id: "route", name: "Route optimizer", description: "Fastest path between two places.", tags: []string{"maps", "routing"}}}}, c.admin, true)
	c.currency = h.publish("currency.example.com", testCard{name: "Currency Converter", description: "Exchange rates.",
		provider: "Acme", streaming: true,
		skills: []skill{{id: "convert", name: "Convert money", description: "Converts amounts between currencies.", tags: []string{"finance", "currency"}}}}, c.admin, true)
	c.storm = h.publish("storm.example.com", testCard{name: "Storm Tracker", description: "Severe weather alerts.",
		provider: "Acme", skills: []skill{{id: "alerts", name: "Storm alerts", description: "Warns about storms.", tags: []string{"weather", "maps"}}}}, c.admin, true)
	h.svcClock.Advance(time.Second)
	h.do(req{method: "PATCH", path: "/api/v1/agents/" + c.storm.ID, token: c.admin, body: jsonBody(`{"visibility":"internal"}`)}).
		expectStatus(h.t, http.StatusOK)
	c.pendingOnly = h.publish("pending.example.com", testCard{name: "Weather Pending", description: "Not reviewed yet.",
		provider: "Other", skills: []skill{{id: "wp", name: "Pending skill", description: "Unreviewed.", tags: []string{"weather"}}}}, c.admin, false)
	h.sync()
	return c
}

func values(fv []search.FacetValue) string {
	var b strings.Builder
	for _, v := range fv {
		fmt.Fprintf(&b, "%s=%d ", v.Value, v.Count)
	}
	return strings.TrimSpace(b.String())
}

// docs/api.md "Curation and visibility" and §5: who sees what, facets over every matching agent.
func TestSearchAgentsScopeAndFacets(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)

		anon := h.list("", "")
		if got, want := sortedIDs2(anon.ids()), sortedIDs(c.weather, c.route, c.currency); !slices.Equal(got, want) || anon.TotalSize != 3 {
			t.Fatalf("anonymous lists %v (total %d), want %v", got, anon.TotalSize, want)
		}
		f := anon.Facets
		for name, pair := range map[string][2]string{
			"tags":            {values(f.Tags), "climate=1 currency=1 finance=1 maps=1 routing=1 weather=1"},
			"capabilities":    {values(f.Capabilities), "streaming=2"},
			"securitySchemes": {values(f.SecuritySchemes), "apiKey=1 oauth2=1"},
			"inputModes":      {values(f.InputModes), "text/plain=2 application/json=1"},
			"bindings":        {values(f.Bindings), "JSONRPC=3"},
			"extensions":      {values(f.Extensions), "https://ext.example.com/geo=1"},
			"trust":           {values(f.Trust), "unsigned=3"},
		} {
			if pair[0] != pair[1] {
				t.Errorf("anonymous facet %s = %q, want %q", name, pair[0], pair[1])
			}
		}
		for _, a := range anon.Agents {
			if a.Matches != nil || a.Summary == nil || a.Status != registry.StatusApproved {
				t.Fatalf("listed record %+v: matches without q, or no card", a.Agent)
			}
		}

		reader := h.list("", c.reader)
		if got := sortedIDs2(reader.ids()); !slices.Equal(got, sortedIDs(c.weather, c.route, c.currency, c.storm)) {
			t.Fatalf("reader lists %v", got)
		}
		if got := values(reader.Facets.Tags); got != "maps=2 weather=2 climate=1 currency=1 finance=1 routing=1" {
			t.Fatalf("reader tag facet %q", got)
		}
		admin := h.list("", c.admin)
		if got := sortedIDs2(admin.ids()); !slices.Equal(got, sortedIDs(c.weather, c.route, c.currency, c.storm, c.pendingOnly)) || admin.TotalSize != 5 {
			t.Fatalf("admin lists %v (total %d)", got, admin.TotalSize)
		}

		// Non-admins may not filter on curation fields (§4); admins may.
		for _, q := range []string{"status=pending", "health=ok", "visibility=internal", "q=weather&status=approved"} {
			h.do(req{method: "GET", path: "/api/v1/agents?" + q}).expectProblem(t, http.StatusForbidden, "forbidden")
			h.do(req{method: "GET", path: "/api/v1/agents?" + q, token: c.reader}).expectProblem(t, http.StatusForbidden, "forbidden")
			h.do(req{method: "GET", path: "/api/v1/skills?" + q, token: c.reader}).expectProblem(t, http.StatusForbidden, "forbidden")
		}
		if got := h.list("status=pending", c.admin).ids(); !slices.Equal(got, []string{c.pendingOnly.ID}) {
			t.Fatalf("admin status=pending lists %v", got)
		}
		if got := h.list("visibility=internal&q=weather", c.admin).ids(); !slices.Equal(got, []string{c.storm.ID}) {
			t.Fatalf("admin visibility=internal&q=weather lists %v", got)
		}
	})
}

func sortedIDs2(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// docs/api.md: repeated = OR, different = AND; q carries matches.
func TestSearchAgentsQueryAndFilters(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)
		for _, tc := range []struct {
			query, token string
			want         []registry.Agent
		}{
			{"q=weather", "", []registry.Agent{c.weather}},
			{"q=weather", c.reader, []registry.Agent{c.weather, c.storm}},
			{"q=weather", c.admin, []registry.Agent{c.weather, c.storm, c.pendingOnly}},
			{"tag=weather&tag=finance", "", []registry.Agent{c.weather, c.currency}},
			{"tag=WEATHER", c.reader, []registry.Agent{c.weather, c.storm}},
			{"tag=weather&provider=acme", "", []registry.Agent{c.weather}},
			{"tag=finance&capability=streaming", "", []registry.Agent{c.currency}},
			{"capability=streaming&securityScheme=oauth2", "", nil},
			{"securityScheme=oauth2&securityScheme=apiKey", "", []registry.Agent{c.weather, c.route}},
			{"inputMode=application/json", "", []registry.Agent{c.route}},
			{"skill=route&skill=convert", "", []registry.Agent{c.route, c.currency}},
			{"binding=JSONRPC&protocolVersion=1.0", "", []registry.Agent{c.weather, c.route, c.currency}},
			{"binding=GRPC", "", nil},
			{"extension=" + url.QueryEscape("https://ext.example.com/geo"), "", []registry.Agent{c.weather}},
			{"trust=unsigned&q=route", "", []registry.Agent{c.route}},
			{"trust=verified", "", nil},
			{"q=currencies", "", []registry.Agent{c.currency}},
			{"q=the", "", nil}, // stop words name nothing
			{"tag=", "", []registry.Agent{c.weather, c.route, c.currency}},
		} {
			p := h.list(tc.query, tc.token)
			if got, want := sortedIDs2(p.ids()), sortedIDs(tc.want...); !slices.Equal(got, want) || p.TotalSize != len(want) {
				t.Errorf("%s (token %t): %v total %d, want %v", tc.query, tc.token != "", got, p.TotalSize, want)
			}
		}

		p := h.list("q=rainfall", "")
		if len(p.Agents) != 1 || p.Agents[0].ID != c.weather.ID {
			t.Fatalf("q=rainfall lists %v", p.ids())
		}
		m := p.Agents[0].Matches
		if len(m) != 1 || m[0].SkillID != "forecast" || m[0].Field != "description" ||
			len(m[0].Fragments) != 1 || !strings.Contains(m[0].Fragments[0], "<mark>rainfall</mark>") {
			t.Fatalf("matches %+v", m)
		}
		// An agent matched by its own name carries an agent-level match.
		p = h.list("q=oracle", "")
		if len(p.Agents) != 1 || len(p.Agents[0].Matches) == 0 || p.Agents[0].Matches[0].SkillID != "" ||
			p.Agents[0].Matches[0].Field != "name" {
			t.Fatalf("q=oracle: %+v", p.Agents)
		}
		// Blank q is no q: everything listed, no matches.
		p = h.list("q=+%09", "")
		if len(p.Agents) != 3 || slices.ContainsFunc(p.Agents, func(a searchAgentJSON) bool { return a.Matches != nil }) {
			t.Fatalf("blank q: %+v", p)
		}
		if got := values(h.list("q=weather", c.reader).Facets.Tags); got != "weather=2 climate=1 maps=1" {
			t.Fatalf("facets follow the query: %q", got)
		}

		// Unknown parameters and bad values name their parameter.
		for q, ptr := range map[string]string{
			"colour=blue":             "/colour",
			"capability=teleport":     "/capability",
			"securityScheme=magic":    "/securityScheme",
			"trust=trusted":           "/trust",
			"sort=random":             "/sort",
			"sort=name&sort=name":     "/sort",
			"q=a&q=b":                 "/q",
			"pageSize=-1":             "/pageSize",
			"pageSize=0":              "/pageSize",
			"pageSize=101":            "/pageSize",
			"q=a&pageSize=0":          "/pageSize",
			"pageToken=garbage":       "/pageToken",
			"pageToken=a&pageToken=b": "/pageToken",
		} {
			pr := h.do(req{method: "GET", path: "/api/v1/agents?" + q}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(pr.Errors) != 1 || pr.Errors[0].Pointer != ptr {
				t.Errorf("%s: errors %+v, want pointer %s", q, pr.Errors, ptr)
			}
		}
		// GET /skills follows the same page-size rule (docs/api.md "Page sizes").
		for _, size := range []string{"0", "-1", "101"} {
			pr := h.do(req{method: "GET", path: "/api/v1/skills?q=weather&pageSize=" + size}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(pr.Errors) != 1 || pr.Errors[0].Pointer != "/pageSize" {
				t.Errorf("skills pageSize=%s: errors %+v", size, pr.Errors)
			}
		}
	})
}

// Sorts and page tokens through the index (docs/api.md, I.82).
func TestSearchAgentsSortAndPages(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)
		names := func(p searchPageJSON) []string {
			var out []string
			for _, a := range p.Agents {
				out = append(out, a.Summary.Name)
			}
			return out
		}
		if got := names(h.list("sort=name", c.reader)); !slices.Equal(got, []string{"Currency Converter", "Route Planner", "Storm Tracker", "Weather Oracle"}) {
			t.Fatalf("sort=name: %v", got)
		}
		// updated is newest first: the storm agent was changed last (visibility).
		if got := h.list("sort=updated", c.reader).ids(); len(got) != 4 || got[0] != c.storm.ID {
			t.Fatalf("sort=updated: %v", got)
		}
		// Relevance: the name match outranks a description-only match.
		if got := h.list("q=storm&sort=relevance", c.reader).ids(); len(got) != 1 || got[0] != c.storm.ID {
			t.Fatalf("q=storm: %v", got)
		}

		var walked []string
		tok := ""
		for page := range 4 {
			q := "sort=name&pageSize=1"
			if tok != "" {
				q += "&pageToken=" + url.QueryEscape(tok)
			}
			p := h.list(q, c.reader)
			if len(p.Agents) != 1 || p.TotalSize != 4 {
				t.Fatalf("page %d: %d agents, total %d", page, len(p.Agents), p.TotalSize)
			}
			walked = append(walked, p.Agents[0].Summary.Name)
			tok = p.NextPageToken
			if (tok == "") != (page == 3) {
				t.Fatalf("page %d: next token %q", page, tok)
			}
		}
		if !slices.Equal(walked, []string{"Currency Converter", "Route Planner", "Storm Tracker", "Weather Oracle"}) {
			t.Fatalf("walked %v", walked)
		}
		// A token is bound to its query, sort and viewer.
		first := h.list("sort=name&pageSize=1", c.reader)
		for _, q := range []string{"sort=updated&pageSize=1", "sort=name&pageSize=1&tag=maps"} {
			h.do(req{method: "GET", path: "/api/v1/agents?" + q + "&pageToken=" + url.QueryEscape(first.NextPageToken), token: c.reader}).
				expectProblem(t, http.StatusBadRequest, "validation-failed")
		}
		h.do(req{method: "GET", path: "/api/v1/agents?sort=name&pageSize=1&pageToken=" + url.QueryEscape(first.NextPageToken)}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
		// pageSize over 100 is refused, not clamped (docs/api.md "Page sizes").
		h.do(req{method: "GET", path: "/api/v1/agents?q=weather&pageSize=1000000"}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
		if p := h.list("pageSize=100", ""); len(p.Agents) != 3 {
			t.Fatalf("pageSize 100: %d agents", len(p.Agents))
		}
	})
}
