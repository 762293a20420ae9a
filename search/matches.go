package search

import (
	"strings"

	"github.com/blevesearch/bleve/v2/search"
)

// matchesOf lists the fields of a hit that matched, agent fields first,
// then each matched skill in index order. Bleve puts the highlights of
// nested skill documents under Fields["_$nested"], not Fragments
// (DEPENDENCIES.md). Fragments without a highlighted word are dropped: Bleve
// returns the whole stored value of every requested field.
func matchesOf(h *search.DocumentMatch) []Match {
	var out []Match
	for _, f := range []string{fieldName, fieldDescription, fieldProvider} {
		if fr := marked(h.Fragments[f]); len(fr) > 0 {
			out = append(out, Match{Field: f, Fragments: fr})
		}
	}
	nested, _ := h.Fields[nestedDocumentFieldKey].([]*search.NestedDocumentMatch)
	for _, nd := range nested {
		id := str(nd.Fields[fieldSkillID])
		for _, f := range []string{fieldSkillName, fieldSkillDescription, fieldSkillTags, fieldSkillExamples} {
			if fr := marked(nd.Fragments[f]); len(fr) > 0 {
				out = append(out, Match{SkillID: id, Field: strings.TrimPrefix(f, fieldSkills+"."), Fragments: fr})
			}
		}
	}
	return out
}

func marked(frags []string) []string {
	var out []string
	for _, f := range frags {
		if strings.Contains(f, "<mark>") {
			out = append(out, f)
		}
	}
	return out
}
