package search

import (
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// Document is what the index holds for one agent: the searchable text, every
// filter/facet value, and the skills' texts. It is built only
// from a registry.Agent so that rebuild and incremental indexing agree.
type Document struct {
	ID               string
	Name             string
	Description      string
	Provider         string
	Host             string
	Status           registry.Status
	Health           registry.Health
	Trust            registry.Trust
	Visibility       registry.Visibility
	Liveness         registry.LivenessState // docs/liveness.md
	ProtocolVersions []string
	Bindings         []string
	SecuritySchemes  []string // scheme kinds: apiKey, http, oauth2, openIdConnect, mutualTls
	Capabilities     []string // streaming, pushNotifications, extendedAgentCard
	Extensions       []string // extension URIs
	InputModes       []string // default modes plus every skill's modes (docs/api.md)
	OutputModes      []string
	Tags             []string // union of the skills' tags, lowercased
	ListedBy         []string // registry.ListTerms: who may list the agent
	UpdatedAt        time.Time
	LastChangedAt    time.Time // kept for callers; not indexed: no sort or filter uses it (docs/api.md)
	Skills           []SkillDocument
	// Queries are the representativeQueries of the catalog entry that
	// lists the agent (registry.Agent.CatalogQueries).
	Queries []string
}

// SkillDocument is one skill. Its texts are indexed in the agent's skill
// fields at the skill's index.
type SkillDocument struct {
	ID          string
	Name        string
	Description string
	Tags        []string
	Examples    []string
	InputModes  []string
	OutputModes []string
}

// Capability names, as the `capability` filter and facet use them.
const (
	CapabilityStreaming         = "streaming"
	CapabilityPushNotifications = "pushNotifications"
	CapabilityExtendedAgentCard = "extendedAgentCard"
)

// NewDocument derives the index document of an agent. An agent that was
// never fetched has no card; it is still indexed (admins list pending
// agents) under its host.
func NewDocument(a registry.Agent) Document {
	d := Document{
		ID:         a.ID,
		Host:       a.Host,
		Status:     a.Status,
		Health:     a.Health,
		Trust:      a.Trust,
		Visibility: a.Visibility,
		Liveness:   registry.LivenessUnknown,
		ListedBy:   registry.ListTerms(a),
		UpdatedAt:  a.UpdatedAt,
		Queries:    a.CatalogQueries,
	}
	if a.LastChangedAt != nil {
		d.LastChangedAt = *a.LastChangedAt
	}
	if a.Liveness != nil {
		d.Liveness = a.Liveness.State
	}
	c := a.Card
	if c == nil {
		return d
	}
	d.Name = c.Name
	d.Description = c.Description
	if c.Provider != nil {
		d.Provider = c.Provider.Organization
	}
	d.ProtocolVersions = protocolVersions(c)
	for _, in := range c.Interfaces {
		if !in.IsA2A() {
			continue // other protocols' endpoints stay out of the A2A facets
		}
		d.Bindings = appendUnique(d.Bindings, in.Binding)
	}
	for _, s := range c.SecuritySchemes {
		d.SecuritySchemes = appendUnique(d.SecuritySchemes, s.Kind)
	}
	if c.Capabilities.Streaming {
		d.Capabilities = append(d.Capabilities, CapabilityStreaming)
	}
	if c.Capabilities.PushNotifications {
		d.Capabilities = append(d.Capabilities, CapabilityPushNotifications)
	}
	if c.Capabilities.ExtendedAgentCard {
		d.Capabilities = append(d.Capabilities, CapabilityExtendedAgentCard)
	}
	for _, e := range c.Capabilities.Extensions {
		d.Extensions = appendUnique(d.Extensions, e.URI)
	}
	for _, m := range c.DefaultInputModes {
		d.InputModes = appendUnique(d.InputModes, normMode(m))
	}
	for _, m := range c.DefaultOutputModes {
		d.OutputModes = appendUnique(d.OutputModes, normMode(m))
	}
	for _, s := range c.Skills {
		sd := SkillDocument{ID: s.ID, Name: s.Name, Description: s.Description, Examples: s.Examples}
		for _, t := range s.Tags {
			t = normTag(t)
			sd.Tags = appendUnique(sd.Tags, t)
			d.Tags = appendUnique(d.Tags, t)
		}
		for _, m := range s.InputModes {
			sd.InputModes = appendUnique(sd.InputModes, normMode(m))
			d.InputModes = appendUnique(d.InputModes, normMode(m))
		}
		for _, m := range s.OutputModes {
			sd.OutputModes = appendUnique(sd.OutputModes, normMode(m))
			d.OutputModes = appendUnique(d.OutputModes, normMode(m))
		}
		d.Skills = append(d.Skills, sd)
	}
	return d
}

// protocolVersions follows docs/api.md: a v0.1/v0.2 card that declares
// no version gets one from its shape.
func protocolVersions(c *agentcard.Card) []string {
	var out []string
	for _, v := range c.ProtocolVersions {
		out = appendUnique(out, v)
	}
	for _, in := range c.Interfaces {
		if in.IsA2A() {
			out = appendUnique(out, in.ProtocolVersion)
		}
	}
	if len(out) == 0 {
		switch c.Shape {
		case "v0.1":
			out = []string{"0.1"}
		case "v0.2":
			out = []string{"0.2"}
		}
	}
	return out
}

// storedSkill is one skill inside fieldSkillsStored.
type storedSkill struct {
	ID          string
	Name        string
	Description string
	Tags        []string
	Examples    []string
}

// encodeStrings is the stored form of a list of strings: each preceded by
// its length as an unsigned varint.
func encodeStrings(vs []string) string {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return string(b)
}

// decodeStrings reads encodeStrings' form; a damaged value gives the
// strings read before the damage.
func decodeStrings(raw string) []string {
	var out []string
	for len(raw) > 0 {
		l, n := binary.Uvarint([]byte(raw[:min(len(raw), binary.MaxVarintLen64)]))
		if n <= 0 || l > uint64(len(raw)-n) {
			break
		}
		out = append(out, raw[n:n+int(l)])
		raw = raw[n+int(l):]
	}
	return out
}

// encodeSkills is the stored form of skills, read for every page hit: per
// skill its id, name and description, the number of its tags and each
// tag, the number of its examples and each example, each string preceded
// by its length and each count written as an unsigned varint. Decoding
// slices the stored string without parsing or copying.
func encodeSkills(skills []storedSkill) string {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, s := range skills {
		str(s.ID)
		str(s.Name)
		str(s.Description)
		b = binary.AppendUvarint(b, uint64(len(s.Tags)))
		for _, t := range s.Tags {
			str(t)
		}
		b = binary.AppendUvarint(b, uint64(len(s.Examples)))
		for _, e := range s.Examples {
			str(e)
		}
	}
	return string(b)
}

// decodeSkills reads encodeSkills' form; a damaged value gives the skills
// read before the damage.
func decodeSkills(raw string) []storedSkill {
	var out []storedSkill
	ok := true
	num := func() int {
		v, n := binary.Uvarint([]byte(raw[:min(len(raw), binary.MaxVarintLen64)]))
		if n <= 0 || v > uint64(len(raw)) {
			ok = false
			return 0
		}
		raw = raw[n:]
		return int(v)
	}
	str := func() string {
		l := num()
		if !ok || l > len(raw) {
			ok = false
			return ""
		}
		s := raw[:l]
		raw = raw[l:]
		return s
	}
	// Every skill's tags and examples are cut from one growing slab (a
	// list keeps the array it was cut from when the slab grows).
	var slab []string
	list := func() []string {
		n := num()
		if !ok || n == 0 {
			return nil
		}
		if cap(slab)-len(slab) < n {
			slab = make([]string, 0, max(2*cap(slab), min(n, len(raw)), 16))
		}
		start := len(slab)
		for range n {
			if slab = append(slab, str()); !ok {
				return nil
			}
		}
		return slab[start:len(slab):len(slab)]
	}
	for len(raw) > 0 {
		s := storedSkill{ID: str(), Name: str(), Description: str()}
		s.Tags = list()
		s.Examples = list()
		if !ok {
			break
		}
		out = append(out, s)
	}
	return out
}

// fields is the document as Bleve indexes it: one flat document per agent.
// The skill text fields hold one value per skill, in card order, so the
// locations of a match name the skill (see search.go).
func (d Document) fields() map[string]any {
	n := len(d.Skills)
	names := make([]string, n)
	descs := make([]string, n)
	tags := make([]any, n)
	examples := make([]any, n)
	stored := make([]storedSkill, n)
	skillIDs := make([]string, 0, n)
	for i, s := range d.Skills {
		names[i], descs[i] = s.Name, s.Description
		tags[i], examples[i] = nonNil(s.Tags), nonNil(s.Examples)
		stored[i] = storedSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples}
		skillIDs = appendUnique(skillIDs, s.ID)
	}
	var text strings.Builder
	for _, v := range []string{d.Name, d.Description, d.Provider} {
		text.WriteString(v)
		text.WriteString("\n")
	}
	for _, s := range d.Skills {
		for _, v := range slices.Concat([]string{s.Name, s.Description}, s.Tags, s.Examples) {
			text.WriteString(v)
			text.WriteString("\n")
		}
	}
	for _, q := range d.Queries {
		text.WriteString(q)
		text.WriteString("\n")
	}
	sortName := strings.ToLower(strings.TrimSpace(d.Name))
	if sortName == "" {
		sortName = strings.ToLower(d.Host)
	}
	m := map[string]any{
		fieldName:             d.Name,
		fieldNameSort:         sortName,
		fieldDescription:      d.Description,
		fieldProvider:         d.Provider,
		fieldProviderKey:      strings.ToLower(d.Provider),
		fieldHost:             d.Host,
		fieldStatus:           string(d.Status),
		fieldHealth:           string(d.Health),
		fieldTrust:            string(d.Trust),
		fieldVisibility:       string(d.Visibility),
		fieldLiveness:         string(d.Liveness),
		fieldListedBy:         d.ListedBy,
		fieldProtocols:        d.ProtocolVersions,
		fieldBindings:         d.Bindings,
		fieldSchemes:          d.SecuritySchemes,
		fieldCapabilities:     d.Capabilities,
		fieldExtensions:       d.Extensions,
		fieldInputModes:       d.InputModes,
		fieldOutputModes:      d.OutputModes,
		fieldTags:             d.Tags,
		fieldSkillIDs:         skillIDs,
		fieldUpdatedAt:        timeNumber(d.UpdatedAt),
		fieldOrder:            defaultRank(d),
		fieldSkillName:        names,
		fieldSkillDescription: descs,
		fieldSkillTags:        tags,
		fieldSkillExamples:    examples,
		fieldSkillsStored:     encodeSkills(stored),
		fieldQueries:          nonNil(d.Queries),
		fieldText:             text.String(),
	}
	if len(d.Queries) > 0 {
		m[fieldQueriesStored] = encodeStrings(d.Queries)
	}
	if d.Provider != "" {
		m[fieldProviderFacet] = d.Provider // no empty facet value
	}
	return m
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// orderFailing is defaultRank's group of agents whose health is failing or
// gone (relevance ranking reads it too, standing.go).
const orderFailing = "4"

// defaultRank places an agent in SortTrust, the order without q: verified
// signatures first, then signed cards whose key is not trusted, then
// unsigned ones, then cards whose signature check failed; agents failing
// their health checks last whatever their trust. A listing should not open
// on broken or failing agents.
func defaultRank(d Document) string {
	switch {
	case d.Health == registry.HealthFailing || d.Health == registry.HealthGone:
		return orderFailing
	case d.Trust == registry.TrustVerified:
		return "0"
	case d.Trust == registry.TrustUntrusted:
		return "1"
	case d.Trust == registry.TrustInvalid || d.Trust == registry.TrustError:
		return "3"
	default:
		return "2"
	}
}

// timeNumber is milliseconds since the epoch: exact in a float64, which is
// how Bleve stores numbers.
func timeNumber(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli())
}

func normTag(t string) string  { return strings.ToLower(strings.TrimSpace(t)) }
func normMode(m string) string { return strings.ToLower(strings.TrimSpace(m)) }

func appendUnique(s []string, v string) []string {
	if v == "" || slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
