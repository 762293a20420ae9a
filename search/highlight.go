package search

import (
	"cmp"
	"html"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/search"
)

// Highlights are cut from the stored text with the term locations of the
// page's hits only (the pass over all matches reads no locations): byte
// ranges of the matched words, HTML-escaped text between them, <mark>
// around them.

// fragmentBytes is about how much text a fragment shows around its first
// match; shorter values are shown whole.
const fragmentBytes = 200

type span struct{ start, end int }

// hitDetail is what the page's hits need from their locations and stored
// fields.
type hitDetail struct {
	stored storedFields
	skills []storedSkill
	// queries: the catalog entry's representativeQueries (stored copy).
	queries []string
	// spans of matched words: field → skill index (−1 for agent fields)
	// → item index (tags, examples, queries; 0 otherwise) → spans.
	spans map[string]map[int]map[int][]span
	// words: per skill index, which query words matched in it.
	words map[int]map[int]bool
}

// storedFields are the stored values of hitFields a hit shows as they are.
type storedFields struct {
	name, description, provider, host, trust string
}

// field returns where the stored value of a hitFields field goes (nil for
// the skills and queries, which are decoded).
func (s *storedFields) field(name string) *string {
	switch name {
	case fieldName:
		return &s.name
	case fieldDescription:
		return &s.description
	case fieldProvider:
		return &s.provider
	case fieldHost:
		return &s.host
	case fieldTrust:
		return &s.trust
	}
	return nil
}

// detailOf reads a hit of a locations request. wordOf maps an analyzed
// term to its query word (nil: per-skill words are not needed).
func detailOf(dm *search.DocumentMatch, wordOf map[string]int) hitDetail {
	d := hitDetail{spans: map[string]map[int]map[int][]span{}, words: map[int]map[int]bool{}}
	for _, f := range hitFields {
		if p := d.stored.field(f); p != nil {
			*p = str(dm.Fields[f])
		}
	}
	d.skills = decodeSkills(str(dm.Fields[fieldSkillsStored]))
	d.queries = decodeStrings(str(dm.Fields[fieldQueriesStored]))
	for field, terms := range dm.Locations {
		isSkill := slices.Contains(skillFields, field)
		for term, locs := range terms {
			for _, l := range locs {
				skill, item := -1, 0
				if field == fieldQueries && len(l.ArrayPositions) > 0 {
					item = int(l.ArrayPositions[0])
				}
				if isSkill {
					if len(l.ArrayPositions) == 0 {
						continue
					}
					skill = int(l.ArrayPositions[0])
					if len(l.ArrayPositions) > 1 {
						item = int(l.ArrayPositions[1])
					}
					if w, ok := wordOf[term]; ok {
						if d.words[skill] == nil {
							d.words[skill] = map[int]bool{}
						}
						d.words[skill][w] = true
					}
				}
				bySkill := d.spans[field]
				if bySkill == nil {
					bySkill = map[int]map[int][]span{}
					d.spans[field] = bySkill
				}
				if bySkill[skill] == nil {
					bySkill[skill] = map[int][]span{}
				}
				bySkill[skill][item] = append(bySkill[skill][item], span{int(l.Start), int(l.End)})
			}
		}
	}
	return d
}

// bestSkillWords is the most query words any one skill holds.
func (d hitDetail) bestSkillWords() int {
	best := 0
	for _, ws := range d.words {
		best = max(best, len(ws))
	}
	return best
}

// matches lists the matched fields: agent fields first (the
// representativeQueries after name, description and provider), then each matched
// skill in card order with its fields (name, description, tags, examples).
func (d hitDetail) matches() []Match {
	var out []Match
	for _, f := range []string{fieldName, fieldDescription, fieldProvider} {
		if sp := d.spans[f][-1][0]; len(sp) > 0 {
			out = append(out, Match{Field: f, Fragments: []string{fragment(*d.stored.field(f), sp)}})
		}
	}
	if items := d.spans[fieldQueries][-1]; len(items) > 0 {
		var frs []string
		for j, q := range d.queries {
			if sp := items[j]; len(sp) > 0 {
				frs = append(frs, fragment(q, sp))
			}
		}
		if len(frs) > 0 {
			out = append(out, Match{Field: MatchQueries, Fragments: frs})
		}
	}
	for i, s := range d.skills {
		for _, sf := range []struct {
			field, name string
			values      []string
		}{
			{fieldSkillName, "name", []string{s.Name}},
			{fieldSkillDescription, "description", []string{s.Description}},
			{fieldSkillTags, "tags", s.Tags},
			{fieldSkillExamples, "examples", s.Examples},
		} {
			items := d.spans[sf.field][i]
			if len(items) == 0 {
				continue
			}
			var frs []string
			for j, v := range sf.values {
				if sp := items[j]; len(sp) > 0 {
					frs = append(frs, fragment(v, sp))
				}
			}
			if len(frs) > 0 {
				out = append(out, Match{SkillID: s.ID, Field: sf.name, Fragments: frs})
			}
		}
	}
	return out
}

// skillFragments are all highlighted fragments of skill i.
func (d hitDetail) skillFragments(i int) []string {
	out := []string{}
	if i >= len(d.skills) {
		return out
	}
	s := d.skills[i]
	for _, sf := range []struct {
		field  string
		values []string
	}{
		{fieldSkillName, []string{s.Name}},
		{fieldSkillDescription, []string{s.Description}},
		{fieldSkillTags, s.Tags},
		{fieldSkillExamples, s.Examples},
	} {
		for j, v := range sf.values {
			if sp := d.spans[sf.field][i][j]; len(sp) > 0 {
				out = append(out, fragment(v, sp))
			}
		}
	}
	return out
}

// fragment is text with the spans marked, HTML-escaped: the whole text when
// short, else about fragmentBytes around the first span, cut at spaces,
// with an ellipsis where text was left out.
func fragment(text string, spans []span) string {
	spans = slices.Clone(spans)
	slices.SortFunc(spans, func(a, b span) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end)) })
	from, to := 0, len(text)
	if len(text) > fragmentBytes && len(spans) > 0 {
		from = max(0, spans[0].start-fragmentBytes/4)
		if i := strings.IndexByte(text[from:spans[0].start], ' '); from > 0 && i >= 0 {
			from += i + 1
		}
		to = min(len(text), from+fragmentBytes)
		if i := strings.LastIndexByte(text[spans[0].end:to], ' '); to < len(text) && i > 0 {
			to = spans[0].end + i
		}
		for from > 0 && !utf8.RuneStart(text[from]) {
			from--
		}
		for to < len(text) && !utf8.RuneStart(text[to]) {
			to++
		}
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString(highlightEllipsis)
	}
	at := from
	for _, s := range spans {
		if s.start < at || s.end > to || s.start >= s.end {
			continue // overlaps the previous mark, or outside the fragment
		}
		b.WriteString(html.EscapeString(text[at:s.start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(text[s.start:s.end]))
		b.WriteString("</mark>")
		at = s.end
	}
	b.WriteString(html.EscapeString(text[at:to]))
	if to < len(text) {
		b.WriteString(highlightEllipsis)
	}
	return b.String()
}
