package search

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// filterCorpus is small enough to state every expected count by hand.
func filterCorpus() *memSource {
	src := newMemSource()
	a1 := testAgent("a1", "Alpha", "Accounts payable",
		agentcard.Skill{ID: "pay", Name: "Pay", Description: "Pays invoices", Tags: []string{"Finance", "invoices"}, InputModes: []string{"image/png"}})
	a1.Trust = registry.TrustVerified
	a1.Card.Provider = &agentcard.Provider{Organization: "ACME Corp"}
	a1.Card.Capabilities = agentcard.Capabilities{Streaming: true, Extensions: []agentcard.Extension{{URI: "urn:ext:one"}}}
	a1.Card.SecuritySchemes = []agentcard.SecurityScheme{{Name: "o", Kind: agentcard.SchemeOAuth2}}

	a2 := testAgent("a2", "Bravo", "Trips and money", skill("fx", "FX", "Converts money", "finance", "travel"))
	a2.Card.Interfaces = []agentcard.Interface{{URL: "https://a2.example.com", Binding: "GRPC", ProtocolVersion: "0.3"}}
	a2.Card.ProtocolVersions = []string{"0.3"}
	a2.Card.DefaultOutputModes = []string{"application/json"}
	a2.Card.SecuritySchemes = []agentcard.SecurityScheme{{Name: "k", Kind: agentcard.SchemeAPIKey}}

	a3 := testAgent("a3", "Charlie", "Travel desk", skill("trip", "Trips", "Plans trips", "travel"))
	a3.Card.Interfaces = append(a3.Card.Interfaces, agentcard.Interface{URL: "https://a3.example.com/rest", Binding: "HTTP+JSON", ProtocolVersion: "1.0"})
	a3.Card.Capabilities = agentcard.Capabilities{PushNotifications: true, Extensions: []agentcard.Extension{{URI: "urn:ext:one"}, {URI: "urn:ext:two"}}}
	a3.Card.SecuritySchemes = []agentcard.SecurityScheme{{Name: "k", Kind: agentcard.SchemeAPIKey}, {Name: "o", Kind: agentcard.SchemeOAuth2}}

	// Liveness: a1 answers, a2 is unreachable, a3 was never probed (a
	// record without a liveness object reads as unknown).
	a1.Liveness = &registry.Liveness{State: registry.LivenessAnswering}
	a2.Liveness = &registry.Liveness{State: registry.LivenessUnreachable}

	a4 := testAgent("a4", "Delta", "Internal finance", skill("x", "X", "x", "finance"))
	a4.Visibility = registry.VisibilityInternal
	a5 := testAgent("a5", "Echo", "Pending finance", skill("x", "X", "x", "finance"))
	a5.Status = registry.StatusPending
	a6 := testAgent("a6", "Foxtrot", "Gone finance", skill("x", "X", "x", "finance"))
	a6.Health = registry.HealthGone
	a7 := testAgent("a7", "Golf", "Removed finance", skill("x", "X", "x", "finance"))
	a7.Status = registry.StatusRemoved
	for _, a := range []registry.Agent{a1, a2, a3, a4, a5, a6, a7} {
		src.put(a, registry.ChangeSubmitted)
	}
	return src
}

func sortedIDs(r *Result) []string {
	ids := hitIDs(r)
	slices.Sort(ids)
	return ids
}

// Repeated values of one filter are ORed, different filters ANDed
// (docs/api.md); modes match default or skill modes.
func TestFiltersOrAnd(t *testing.T) {
	x := openTest(t, filterCorpus())
	cases := []struct {
		name string
		f    Filters
		want []string
	}{
		{"none", Filters{}, []string{"a1", "a2", "a3"}},
		{"one tag", Filters{Tags: []string{"finance"}}, []string{"a1", "a2"}},
		{"tag case-insensitive", Filters{Tags: []string{"FINANCE"}}, []string{"a1", "a2"}},
		{"tag OR", Filters{Tags: []string{"invoices", "travel"}}, []string{"a1", "a2", "a3"}},
		{"tag AND binding", Filters{Tags: []string{"travel"}, Bindings: []string{"JSONRPC"}}, []string{"a3"}},
		{"binding OR AND scheme", Filters{Bindings: []string{"GRPC", "HTTP+JSON"}, SecuritySchemes: []string{"apiKey"}}, []string{"a2", "a3"}},
		{"skill input mode", Filters{InputModes: []string{"image/png"}}, []string{"a1"}},
		{"default input mode", Filters{InputModes: []string{"text/plain"}}, []string{"a1", "a2", "a3"}},
		{"output mode", Filters{OutputModes: []string{"application/json"}}, []string{"a2"}},
		{"capability", Filters{Capabilities: []string{CapabilityStreaming, CapabilityPushNotifications}}, []string{"a1", "a3"}},
		{"extension", Filters{Extensions: []string{"urn:ext:two"}}, []string{"a3"}},
		{"protocol version", Filters{ProtocolVersions: []string{"0.3"}}, []string{"a2"}},
		{"trust", Filters{Trust: []string{"verified"}}, []string{"a1"}},
		{"live", Filters{Liveness: []string{"answering"}}, []string{"a1"}},
		{"live OR", Filters{Liveness: []string{"unreachable", "unknown"}}, []string{"a2", "a3"}},
		{"live AND tag", Filters{Liveness: []string{"answering", "unreachable"}, Tags: []string{"travel"}}, []string{"a2"}},
		{"provider", Filters{Providers: []string{"acme corp"}}, []string{"a1"}},
		{"skill id", Filters{SkillIDs: []string{"fx", "trip"}}, []string{"a2", "a3"}},
		{"no match", Filters{Tags: []string{"finance"}, Extensions: []string{"urn:ext:two"}}, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustSearch(t, x, Query{Filters: c.f})
			if got := sortedIDs(r); !slices.Equal(got, c.want) || r.TotalSize != len(c.want) {
				t.Fatalf("got %v (total %d), want %v", got, r.TotalSize, c.want)
			}
		})
	}
}

func TestFacetCountsExact(t *testing.T) {
	x := openTest(t, filterCorpus())
	r := mustSearch(t, x, Query{})
	want := Facets{
		Tags:             []FacetValue{{"finance", 2}, {"travel", 2}, {"invoices", 1}},
		InputModes:       []FacetValue{{"text/plain", 3}, {"image/png", 1}},
		OutputModes:      []FacetValue{{"text/plain", 2}, {"application/json", 1}},
		Bindings:         []FacetValue{{"JSONRPC", 2}, {"GRPC", 1}, {"HTTP+JSON", 1}},
		SecuritySchemes:  []FacetValue{{"apiKey", 2}, {"oauth2", 2}},
		ProtocolVersions: []FacetValue{{"1.0", 2}, {"0.3", 1}},
		Capabilities:     []FacetValue{{"pushNotifications", 1}, {"streaming", 1}},
		Extensions:       []FacetValue{{"urn:ext:one", 2}, {"urn:ext:two", 1}},
		Trust:            []FacetValue{{"unsigned", 2}, {"verified", 1}},
		Providers:        []FacetValue{{"ACME Corp", 1}},
		Liveness:         []FacetValue{{"answering", 1}, {"unknown", 1}, {"unreachable", 1}},
	}
	if fmt.Sprint(r.Facets) != fmt.Sprint(want) {
		t.Fatalf("facets\n got %v\nwant %v", r.Facets, want)
	}
	// Facets follow the filters.
	r = mustSearch(t, x, Query{Filters: Filters{Tags: []string{"travel"}}})
	if fmt.Sprint(r.Facets.Tags) != fmt.Sprint([]FacetValue{{"travel", 2}, {"finance", 1}}) {
		t.Fatalf("filtered tag facet = %v", r.Facets.Tags)
	}
	// The providers facet shows the organization as written; its value
	// filters case-insensitively.
	r = mustSearch(t, x, Query{Filters: Filters{Providers: []string{"acme CORP"}}})
	if r.TotalSize != 1 || fmt.Sprint(r.Facets.Providers) != fmt.Sprint([]FacetValue{{"ACME Corp", 1}}) {
		t.Fatalf("provider filter: total %d, providers %v", r.TotalSize, r.Facets.Providers)
	}
}

// docs/api.md "Curation and visibility": anonymous sees approved, public, not gone; reader adds
// internal; admin sees all; removed agents are not in the index at all.
func TestVisibilityScopes(t *testing.T) {
	x := openTest(t, filterCorpus())
	for _, c := range []struct {
		v    registry.Scope
		f    Filters
		want []string
	}{
		{scopeAnonymous, Filters{}, []string{"a1", "a2", "a3"}},
		{scopeReader, Filters{}, []string{"a1", "a2", "a3", "a4"}},
		{scopeAdmin, Filters{}, []string{"a1", "a2", "a3", "a4", "a5", "a6"}},
		{scopeAdmin, Filters{Statuses: []string{"pending"}}, []string{"a5"}},
		{scopeAdmin, Filters{Healths: []string{"gone"}}, []string{"a6"}},
		{scopeAdmin, Filters{Statuses: []string{"removed"}}, []string{}},
		{scopeAnonymous, Filters{Statuses: []string{"pending"}}, []string{}},
		{scopeAnonymous, Filters{Visibilities: []string{"internal"}}, []string{}},
		// A publisher lists what an anonymous caller lists plus its own
		// hosts' agents in any status but removed: another host's internal
		// agent (a4) only when a4's host is its own (docs/threats.md K.95).
		{registry.ScopeOf(registry.Principal{Role: registry.RolePublisher, Hosts: []string{"a5.example.com"}}), Filters{}, []string{"a1", "a2", "a3", "a5"}},
		{registry.ScopeOf(registry.Principal{Role: registry.RolePublisher, Hosts: []string{"a6.example.com", "a4.example.com"}}), Filters{}, []string{"a1", "a2", "a3", "a4", "a6"}},
		{registry.Scope{}, Filters{}, []string{"a1", "a2", "a3"}},
	} {
		r := mustSearch(t, x, Query{Q: "finance travel invoices payable desk", Scope: c.v, Filters: c.f, Sort: SortName})
		r2 := mustSearch(t, x, Query{Scope: c.v, Filters: c.f})
		if got := sortedIDs(r2); !slices.Equal(got, c.want) {
			t.Errorf("scope %+v %+v: got %v, want %v", c.v, c.f, got, c.want)
		}
		for _, id := range hitIDs(r) {
			if !slices.Contains(c.want, id) {
				t.Errorf("scope %+v: text query leaked %s", c.v, id)
			}
		}
	}
	tags, err := x.Tags(t.Context(), "", scopeAnonymous, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tags) != fmt.Sprint([]FacetValue{{"finance", 2}, {"travel", 2}, {"invoices", 1}}) {
		t.Fatalf("anonymous tags = %v", tags)
	}
	tags, _ = x.Tags(t.Context(), "Fin", scopeAdmin, 10)
	if fmt.Sprint(tags) != fmt.Sprint([]FacetValue{{"finance", 5}}) {
		t.Fatalf("admin tags with prefix = %v", tags)
	}
}

// Paging with tokens visits every agent exactly once, in the same order as
// one big page, for every sort.
func TestPagination(t *testing.T) {
	src := newMemSource()
	for i := range 57 {
		a := testAgent(fmt.Sprintf("p%02d", i), fmt.Sprintf("Agent %02d", (i*7)%57), "booking helper",
			skill("s", "Book", fmt.Sprintf("books things %d", i%5), "travel"),
			skill("t", "Rebook", "books again", "travel"))
		a.UpdatedAt = time.Date(2026, 1, 1, 0, i%9, 0, 0, time.UTC) // ties on purpose
		src.put(a, registry.ChangeSubmitted)
	}
	x := openTest(t, src)
	for _, q := range []Query{{Sort: SortUpdated}, {Sort: SortName}, {Q: "booking things"}, {Q: "book 3"}} {
		all := mustSearch(t, x, Query{Q: q.Q, Sort: q.Sort, PageSize: 100})
		var paged []string
		q.PageSize = 10
		for range 20 {
			r := mustSearch(t, x, q)
			paged = append(paged, hitIDs(r)...)
			if r.TotalSize != all.TotalSize {
				t.Fatalf("%+v: total %d vs %d", q, r.TotalSize, all.TotalSize)
			}
			if r.NextPageToken == "" {
				break
			}
			q.PageToken = r.NextPageToken
		}
		if !slices.Equal(paged, hitIDs(all)) {
			t.Fatalf("%+v: paged %v\n want %v", q, paged, hitIDs(all))
		}
	}
	r := mustSearch(t, x, Query{PageSize: 5})
	if _, err := x.Search(t.Context(), Query{Q: "other", PageToken: r.NextPageToken}); !errors.Is(err, ErrInvalidPageToken) {
		t.Fatalf("token reused for another query: %v", err)
	}
	if _, err := x.Search(t.Context(), Query{PageToken: "!!garbage"}); !errors.Is(err, ErrInvalidPageToken) {
		t.Fatalf("garbage token: %v", err)
	}
	if r := mustSearch(t, x, Query{PageSize: 1000}); len(r.Hits) != 57 {
		t.Fatalf("hits = %d", len(r.Hits))
	}
	for in, want := range map[int]int{-5: DefaultPageSize, 0: DefaultPageSize, 7: 7, 100: 100, 1000: MaxPageSize} {
		if got := clampPageSize(in); got != want {
			t.Fatalf("clampPageSize(%d) = %d, want %d", in, got, want)
		}
	}
	if r := mustSearch(t, x, Query{}); len(r.Hits) != DefaultPageSize {
		t.Fatalf("default page size = %d", len(r.Hits))
	}
	// Skills page too: every skill once.
	var skills []string
	sq := SkillQuery{Q: "book", PageSize: 7}
	for range 20 {
		sr, err := x.Skills(t.Context(), sq)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sr.Skills {
			skills = append(skills, s.AgentID+"/"+s.SkillID)
		}
		if sr.TotalSize != 114 {
			t.Fatalf("skills total = %d", sr.TotalSize)
		}
		if sr.NextPageToken == "" {
			break
		}
		sq.PageToken = sr.NextPageToken
	}
	slices.Sort(skills)
	if len(skills) != 114 || len(slices.Compact(slices.Clone(skills))) != 114 {
		t.Fatalf("skill pages gave %d (%d distinct)", len(skills), len(slices.Compact(skills)))
	}
}

// Reading a filter's values copies nothing, and a page's re-check of the
// SQL columns reads the filters once, not once per agent: the re-check
// had copied the whole Filters to the heap for every filter of every
// agent of every page (a tenth of a search request's allocations).
func TestColumnChecks(t *testing.T) {
	f := Filters{Trust: []string{"verified", "unsigned"}, Statuses: []string{"approved"}, Tags: []string{"finance"}}
	status, _ := FilterNamed("status")
	if n := testing.AllocsPerRun(100, func() { _ = status.Get(&f) }); n != 0 {
		t.Fatalf("Get allocates %.0f times", n)
	}
	checks := f.columnChecks()
	if len(checks) != 2 { // trust and status; tags have no column
		t.Fatalf("%d checks, want 2", len(checks))
	}
	agents := make([]registry.Agent, 20)
	for i := range agents {
		agents[i] = registry.Agent{ID: fmt.Sprint(i), Trust: registry.TrustVerified, Status: registry.StatusApproved}
	}
	agents[3].Trust = registry.TrustInvalid
	agents[7].Status = registry.StatusSuspended
	var kept []string
	for i := range agents {
		if matchColumns(checks, &agents[i]) {
			kept = append(kept, agents[i].ID)
		}
	}
	if len(kept) != 18 || slices.Contains(kept, "3") || slices.Contains(kept, "7") {
		t.Fatalf("kept %v", kept)
	}
	n := testing.AllocsPerRun(100, func() {
		c := f.columnChecks()
		for i := range agents {
			_ = matchColumns(c, &agents[i])
		}
	})
	if n > 2 {
		t.Fatalf("a page's re-check allocates %.0f times, want at most 2", n)
	}
	if len((&Filters{}).columnChecks()) != 0 {
		t.Fatal("no filter, yet checks")
	}
}
