package agentcard

import (
	"slices"
	"strings"
	"unicode/utf8"

	sj "github.com/cardexhq/cardex/strictjson"
)

// skills reads `skills[]`. Missing lists become empty slices so the API
// prints `[]`; tags are normalized (normalizeTags).
func (n *normalizer) skills(top obj) []Skill {
	n.requireArray(top, "skills")
	v, ptr := top.get("skills")
	out := []Skill{}
	if v == nil {
		return out
	}
	if len(v.Array) > MaxSkills {
		n.c.warn(ptr, CodeTooMany, "%d skills, more than the %d allowed", len(v.Array), MaxSkills)
	}
	seen := make(map[string]bool, len(v.Array))
	for i, e := range v.Array {
		if e.Kind != sj.Object || (n.dropEmpty && blank(e)) {
			continue // warned as wrong-type, or empty and never signed
		}
		o := n.c.open(e, itemPtr(ptr, i), skillSchema)
		sk := Skill{
			ID:          o.str("id"),
			Name:        o.str("name"),
			Description: o.str("description"),
			Tags:        normalizeTags(o.strings("tags")),
			Examples:    o.strings("examples"),
			InputModes:  n.modes(o, "inputModes", false),
			OutputModes: n.modes(o, "outputModes", false),
		}
		if n.dropEmpty {
			sk.Examples = withoutEmpty(sk.Examples)
		}
		n.requireText(o, "id")
		n.requireText(o, "name")
		n.requireText(o, "description")
		n.requireArray(o, "tags")
		if _, p := o.get("id"); sk.ID != "" {
			if len(sk.ID) > MaxSkillIDBytes {
				n.c.warn(p, CodeTooLong, "skill id of %d bytes, more than the %d allowed", len(sk.ID), MaxSkillIDBytes)
			}
			if seen[sk.ID] {
				n.c.warn(p, CodeDuplicateSkillID, "skill id %q is used by an earlier skill", sk.ID)
			}
			seen[sk.ID] = true
		}
		if _, p := o.get("name"); sk.Name != "" {
			n.checkName(p, sk.Name)
		}
		if _, p := o.get("description"); sk.Description != "" {
			n.checkProse(p, sk.Description, MaxDescriptionBytes)
		}
		n.checkTags(o)
		n.checkExamples(o, sk.Examples)
		if rv, rp := o.get("securityRequirements"); rv != nil {
			sk.SecurityRequirements = n.requirements(rv, rp)
		} else if rv, rp := o.get("security"); rv != nil {
			sk.SecurityRequirements = n.requirements(rv, rp)
		}
		out = append(out, sk)
	}
	return out
}

// normalizeTags trims, lowercases and de-duplicates tags, keeping the first
// occurrence's position and dropping blank ones. Tags are free text
// (docs/cards.md): "Book air tickets" and "book air tickets " are one tag.
func normalizeTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || slices.Contains(out, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

func (n *normalizer) checkTags(o obj) {
	v, p := o.get("tags")
	if v == nil {
		return
	}
	if len(v.Array) > MaxTagsPerSkill {
		n.c.warn(p, CodeTooMany, "%d tags, more than the %d allowed", len(v.Array), MaxTagsPerSkill)
	}
	for i, e := range v.Array {
		if c := utf8.RuneCountInString(e.String); c > MaxTagChars {
			n.c.warn(itemPtr(p, i), CodeTooLong, "tag of %d characters, more than the %d allowed", c, MaxTagChars)
		}
	}
}

func (n *normalizer) checkExamples(o obj, examples []string) {
	_, p := o.get("examples")
	if len(examples) > MaxExamplesPerSkill {
		n.c.warn(p, CodeTooMany, "%d examples, more than the %d allowed", len(examples), MaxExamplesPerSkill)
	}
	for i, e := range examples {
		if len(e) > MaxExampleBytes {
			n.c.warn(itemPtr(p, i), CodeTooLong, "example of %d bytes, more than the %d allowed", len(e), MaxExampleBytes)
		}
	}
}
