package search

import (
	"cmp"
	"slices"

	"github.com/blevesearch/bleve/v2"
)

// Facets are value counts over all matching agents, named as docs/api.md
// §5 names them, plus providers.
type Facets struct {
	Tags             []FacetValue `json:"tags"`
	InputModes       []FacetValue `json:"inputModes"`
	OutputModes      []FacetValue `json:"outputModes"`
	Bindings         []FacetValue `json:"bindings"`
	SecuritySchemes  []FacetValue `json:"securitySchemes"`
	ProtocolVersions []FacetValue `json:"protocolVersions"`
	Capabilities     []FacetValue `json:"capabilities"`
	Extensions       []FacetValue `json:"extensions"`
	Trust            []FacetValue `json:"trust"`
	// Providers are the providers' organizations as written (the provider
	// filter compares case-insensitively), top 50.
	Providers []FacetValue `json:"providers"`
	// Liveness counts the agents' liveness states (docs/liveness.md).
	Liveness []FacetValue `json:"liveness"`
}

// FacetValue is one value and how many matching agents have it.
type FacetValue struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

var facetSpecs = []struct {
	name string // facet request name and the Facets field it fills
	size int
}{
	{fieldTags, maxTagsFacet},
	{fieldInputModes, maxOtherFacet},
	{fieldOutputModes, maxOtherFacet},
	{fieldBindings, maxOtherFacet},
	{fieldSchemes, maxOtherFacet},
	{fieldProtocols, maxOtherFacet},
	{fieldCapabilities, maxOtherFacet},
	{fieldExtensions, maxTagsFacet},
	{fieldTrust, maxOtherFacet},
	{fieldProviderFacet, maxOtherFacet},
	{fieldLiveness, maxOtherFacet},
}

func addFacets(req *bleve.SearchRequest) {
	for _, f := range facetSpecs {
		req.AddFacet(f.name, bleve.NewFacetRequest(f.name, f.size))
	}
}

func facetsOf(res *bleve.SearchResult) Facets {
	get := func(name string) []FacetValue {
		out := []FacetValue{}
		fr, ok := res.Facets[name]
		if !ok || fr.Terms == nil {
			return out
		}
		for _, t := range fr.Terms.Terms() {
			out = append(out, FacetValue{Value: t.Term, Count: t.Count})
		}
		// Most frequent first; ties by value so output is stable.
		slices.SortFunc(out, func(a, b FacetValue) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
		})
		return out
	}
	return Facets{
		Tags:             get(fieldTags),
		InputModes:       get(fieldInputModes),
		OutputModes:      get(fieldOutputModes),
		Bindings:         get(fieldBindings),
		SecuritySchemes:  get(fieldSchemes),
		ProtocolVersions: get(fieldProtocols),
		Capabilities:     get(fieldCapabilities),
		Extensions:       get(fieldExtensions),
		Trust:            get(fieldTrust),
		Providers:        get(fieldProviderFacet),
		Liveness:         get(fieldLiveness),
	}
}
