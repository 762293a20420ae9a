package search

import (
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/mapping"
)

// MappingVersion identifies the document mapping and document builder. It is
// stored inside every index; an index written with another version is
// rebuilt at open (docs/threats.md G.69) rather than queried with fields it
// does not have. Bump it whenever mapping.go, document.go or analysis.go
// change what is indexed.
const MappingVersion = "cardex-search-12"

// Field names of the agent document. Filter and facet fields are keyword
// fields with doc values; text fields use analyzerText and keep term
// vectors: their locations give highlights and, for the skill fields, which
// skill matched (the first array position is the skill's index).
const (
	fieldName          = "name"
	fieldNameSort      = "nameSort"
	fieldDescription   = "description"
	fieldProvider      = "provider"
	fieldProviderKey   = "providerKey"   // lowercased: the provider filter
	fieldProviderFacet = "providerFacet" // as written: the providers facet
	fieldHost          = "host"
	fieldStatus        = "status"
	fieldHealth        = "health"
	fieldTrust         = "trust"
	fieldVisibility    = "visibility"
	fieldLiveness      = "liveness"
	fieldListedBy      = "listedBy" // who may list the agent: registry.ListTerms
	fieldProtocols     = "protocolVersions"
	fieldBindings      = "bindings"
	fieldSchemes       = "securitySchemes"
	fieldCapabilities  = "capabilities"
	fieldExtensions    = "extensions"
	fieldInputModes    = "inputModes"
	fieldOutputModes   = "outputModes"
	fieldTags          = "tags"
	fieldSkillIDs      = "skillIds"
	fieldUpdatedAt     = "updatedAt"
	fieldOrder         = "order" // the default order without q; see defaultRank

	// One value per skill, in card order (tags and examples: a list per
	// skill), so a location's first array position is the skill's index.
	fieldSkillName        = "skillName"
	fieldSkillDescription = "skillDescription"
	fieldSkillTags        = "skillTags"
	fieldSkillExamples    = "skillExamples"
	// fieldSkillsStored holds the skills (stored only, encodeSkills), read for
	// the page's hits: ids, names, tags and the texts highlights cut from.
	fieldSkillsStored = "skillsStored"
	// fieldQueries holds the representativeQueries of the catalog entry
	// that lists the agent, one value per query, so a location's array
	// position is the query's index; fieldQueriesStored keeps them (stored
	// only, encodeStrings) for highlights.
	fieldQueries       = "queries"
	fieldQueriesStored = "queriesStored"
	// fieldText is every text field in one (no term vectors): the first
	// stage of a query matches and ranks on it alone (search.go).
	fieldText = "text"

	highlightEllipsis = "…"
)

// newMapping builds the static index mapping: nothing outside this list is
// indexed, so a hostile card cannot grow the field set. There are no nested
// documents: skills are agent-level multi-valued fields (see search.go for
// how one-skill matches are still found).
func newMapping() *mapping.IndexMappingImpl {
	im := bleve.NewIndexMapping()
	im.DefaultAnalyzer = analyzerText
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	// Doc values only where something reads them (sorts, the facet tables)
	// and stored values only where a hit shows them: each one more is work
	// for every document of a rebuild.
	agent := bleve.NewDocumentStaticMapping()
	agent.AddFieldMappingsAt(fieldName, textField(true))
	agent.AddFieldMappingsAt(fieldNameSort, keywordField(false, true))
	agent.AddFieldMappingsAt(fieldDescription, textField(true))
	agent.AddFieldMappingsAt(fieldProvider, textField(true))
	agent.AddFieldMappingsAt(fieldProviderKey, keywordField(false, false))
	agent.AddFieldMappingsAt(fieldHost, keywordField(true, false))
	agent.AddFieldMappingsAt(fieldTrust, keywordField(true, true))
	agent.AddFieldMappingsAt(fieldLiveness, keywordField(false, true))
	for _, f := range []string{fieldStatus, fieldHealth, fieldVisibility, fieldListedBy} {
		agent.AddFieldMappingsAt(f, keywordField(false, false))
	}
	for _, f := range []string{fieldProtocols, fieldBindings, fieldSchemes, fieldCapabilities,
		fieldExtensions, fieldInputModes, fieldOutputModes, fieldTags, fieldProviderFacet, fieldOrder, fieldSkillIDs} {
		agent.AddFieldMappingsAt(f, keywordField(false, true))
	}
	agent.AddFieldMappingsAt(fieldUpdatedAt, numberField())
	for _, f := range []string{fieldSkillName, fieldSkillDescription, fieldSkillTags, fieldSkillExamples, fieldQueries} {
		agent.AddFieldMappingsAt(f, textField(false))
	}
	stored := keywordField(true, false)
	stored.Index = false
	agent.AddFieldMappingsAt(fieldSkillsStored, stored)
	agent.AddFieldMappingsAt(fieldQueriesStored, stored)
	flat := textField(false)
	flat.IncludeTermVectors = false
	agent.AddFieldMappingsAt(fieldText, flat)

	im.DefaultMapping = agent
	return im
}

func textField(store bool) *mapping.FieldMapping {
	f := bleve.NewTextFieldMapping()
	f.Analyzer = analyzerText
	f.Store = store
	f.IncludeTermVectors = true // highlights and one-skill matches read locations
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

func keywordField(store, docValues bool) *mapping.FieldMapping {
	f := bleve.NewKeywordFieldMapping()
	f.Analyzer = keyword.Name
	f.Store = store
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = docValues
	return f
}

func numberField() *mapping.FieldMapping {
	f := bleve.NewNumericFieldMapping()
	f.Store = false
	f.IncludeInAll = false
	f.DocValues = true
	return f
}
