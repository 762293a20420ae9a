package search

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/cardexhq/cardex/search/zapread"
)

// When the text and facet tables cannot read a segment (here: its format
// check says unknown, as after a Bleve upgrade to a new zap version),
// Search answers through Bleve's own searchers (fallback.go): the same
// agents, totals, facets and pages as through the tables, with matches —
// not an error.
func TestUnknownSegmentFormatFallsBackToBleve(t *testing.T) {
	src := newMemSource()
	for _, a := range relevanceAgents(t) {
		src.put(a, "submitted")
	}
	queries := []Query{{Q: "invoice processing"}, {Q: "hotels"}, {Q: "flights"}, {Q: "weathr forcast"},
		{Q: "finance", Filters: Filters{Tags: []string{"finance"}}}, {Q: "tickets", PageSize: 3}, {Q: "zzzz nothing"}}
	tables := openTest(t, src)
	want := make([]*Result, len(queries))
	for i, q := range queries {
		want[i] = mustSearch(t, tables, q)
	}
	if g := tables.cur; g == nil || len(g.facets.segs) == 0 {
		t.Fatal("the tables were not used")
	}

	unknown := 0
	segmentSupported = func(zapread.Segment) bool { unknown++; return false }
	t.Cleanup(func() { segmentSupported = zapread.Segment.Supported })
	bleveOnly := openTest(t, src)
	for i, q := range queries {
		got := mustSearch(t, bleveOnly, q)
		w := want[i]
		if got.TotalSize != w.TotalSize || !slices.Equal(sortedIDs(got), sortedIDs(w)) {
			t.Errorf("%q: fallback %v (total %d), tables %v (total %d)", q.Q, sortedIDs(got), got.TotalSize, sortedIDs(w), w.TotalSize)
		}
		if !slices.Equal(facetLine(got.Facets), facetLine(w.Facets)) {
			t.Errorf("%q: fallback facets %v, tables %v", q.Q, facetLine(got.Facets), facetLine(w.Facets))
		}
		if (got.NextPageToken == "") != (w.NextPageToken == "") {
			t.Errorf("%q: next page %q vs %q", q.Q, got.NextPageToken, w.NextPageToken)
		}
		for _, h := range got.Hits {
			if len(h.Matches) == 0 || h.Name == "" {
				t.Errorf("%q: fallback hit %s without matches or name: %+v", q.Q, h.ID, h)
			}
		}
	}
	if unknown == 0 {
		t.Fatal("the format check was never asked")
	}
	// The tables themselves refuse: the fallback ran, not a table pass.
	g := bleveOnly.cur
	if _, err := g.facets.rank(t.Context(), g, rankQuery{words: bleveOnly.searchWords("hotels"), k: 10, runs: bleveOnly.runs}); !errors.Is(err, errNoFacetTable) && !errors.Is(err, errNoTextTable) {
		t.Fatalf("rank over unknown segments: %v, want the tables refused", err)
	}
	// Page two through the fallback continues page one.
	p1 := mustSearch(t, bleveOnly, Query{Q: "tickets", PageSize: 3})
	if p1.NextPageToken != "" {
		p2 := mustSearch(t, bleveOnly, Query{Q: "tickets", PageSize: 3, PageToken: p1.NextPageToken})
		for _, h := range p2.Hits {
			if slices.Contains(hitIDs(p1), h.ID) {
				t.Fatalf("page 2 repeats %s of page 1 %v", h.ID, hitIDs(p1))
			}
		}
	}
}

// facetLine is every facet as "name value=count", in order.
func facetLine(f Facets) []string {
	var out []string
	for name, vs := range map[string][]FacetValue{"tags": f.Tags, "in": f.InputModes, "out": f.OutputModes, "bindings": f.Bindings,
		"schemes": f.SecuritySchemes, "protocols": f.ProtocolVersions, "capabilities": f.Capabilities, "extensions": f.Extensions,
		"trust": f.Trust, "providers": f.Providers, "liveness": f.Liveness} {
		for _, v := range vs {
			out = append(out, name+" "+v.Value+"="+strconv.Itoa(v.Count))
		}
	}
	slices.Sort(out)
	return out
}
