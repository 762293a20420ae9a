package search

import (
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
)

// MappingVersion identifies the document mapping and document builder. It is
// stored inside every index; an index written with another version is
// rebuilt at open (RELIABILITY.md G.69) rather than queried with fields it
// does not have. Bump it whenever mapping.go or document.go change what is
// indexed.
const MappingVersion = "cardex-search-7"

// Field names of the agent document. Filter and facet fields are keyword
// fields with doc values; text fields use the English analyzer (stemming,
// stop words) and keep term vectors for highlighting.
const (
	fieldName         = "name"
	fieldNameSort     = "nameSort"
	fieldDescription  = "description"
	fieldProvider     = "provider"
	fieldProviderKey  = "providerKey"
	fieldHost         = "host"
	fieldText         = "text" // flat copy of all text, skills included; see document.go
	fieldStatus       = "status"
	fieldHealth       = "health"
	fieldTrust        = "trust"
	fieldVisibility   = "visibility"
	fieldLiveness     = "liveness"
	fieldListedBy     = "listedBy" // who may list the agent: registry.ListTerms
	fieldProtocols    = "protocolVersions"
	fieldBindings     = "bindings"
	fieldSchemes      = "securitySchemes"
	fieldCapabilities = "capabilities"
	fieldExtensions   = "extensions"
	fieldInputModes   = "inputModes"
	fieldOutputModes  = "outputModes"
	fieldTags         = "tags"
	fieldSkillIDs     = "skillIds"
	fieldUpdatedAt    = "updatedAt"

	fieldSkills            = "skills"
	fieldSkillID           = "skills.id"
	fieldSkillName         = "skills.name"
	fieldSkillDescription  = "skills.description"
	fieldSkillTags         = "skills.tags"
	fieldSkillExamples     = "skills.examples"
	fieldSkillMarker       = "skills.kind"
	skillMarkerValue       = "skill"
	analyzerText           = en.AnalyzerName
	highlightStyle         = "html" // escapes the text and wraps terms in <mark>
	nestedDocumentFieldKey = "_$nested"
)

// newMapping builds the static index mapping: nothing outside this list is
// indexed, so a hostile card cannot grow the field set.
func newMapping() *mapping.IndexMappingImpl {
	im := bleve.NewIndexMapping()
	im.DefaultAnalyzer = analyzerText
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	// Doc values only where something reads them (sorts, the facet tables,
	// the skills facet) and stored values only where a hit shows them:
	// each one more is work for every document of a rebuild.
	agent := bleve.NewDocumentStaticMapping()
	agent.AddFieldMappingsAt(fieldName, textField(true))
	agent.AddFieldMappingsAt(fieldNameSort, keywordField(false, true))
	agent.AddFieldMappingsAt(fieldDescription, textField(true))
	agent.AddFieldMappingsAt(fieldProvider, textField(true))
	agent.AddFieldMappingsAt(fieldProviderKey, keywordField(false, false))
	agent.AddFieldMappingsAt(fieldHost, keywordField(true, false))
	agent.AddFieldMappingsAt(fieldText, textField(false))
	agent.AddFieldMappingsAt(fieldTrust, keywordField(true, true))
	agent.AddFieldMappingsAt(fieldLiveness, keywordField(false, true))
	for _, f := range []string{fieldStatus, fieldHealth, fieldVisibility, fieldListedBy, fieldSkillIDs} {
		agent.AddFieldMappingsAt(f, keywordField(false, false))
	}
	for _, f := range []string{fieldProtocols, fieldBindings, fieldSchemes, fieldCapabilities,
		fieldExtensions, fieldInputModes, fieldOutputModes, fieldTags} {
		agent.AddFieldMappingsAt(f, keywordField(false, true))
	}
	agent.AddFieldMappingsAt(fieldUpdatedAt, numberField())

	skill := bleve.NewNestedDocumentStaticMapping()
	skill.AddFieldMappingsAt("id", keywordField(true, true))
	skill.AddFieldMappingsAt("name", textField(true))
	skill.AddFieldMappingsAt("description", textField(true))
	skill.AddFieldMappingsAt("tags", textField(true))
	skill.AddFieldMappingsAt("examples", textField(true))
	skill.AddFieldMappingsAt("kind", keywordField(false, false))
	agent.AddSubDocumentMapping(fieldSkills, skill)

	im.DefaultMapping = agent
	return im
}

func textField(store bool) *mapping.FieldMapping {
	f := bleve.NewTextFieldMapping()
	f.Analyzer = analyzerText
	f.Store = store
	f.IncludeTermVectors = store // only stored fields are highlighted
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
