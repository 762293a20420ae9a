package search

import (
	"cmp"
	"html"
	"math/bits"
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
	// marks are the matched words, in no order until sortMarks.
	marks []mark
	// words: per skill index, the query words matched in it (bit i for
	// word i).
	words []uint32
	// standing: why the agent ranked lower for its health or liveness
	// (standing.go), "" when it did not.
	standing string
}

// mark is one matched word: its field (fieldName, fieldSkillTags…), skill
// index (−1 for agent fields), item index (tags, examples, queries; 0
// otherwise) and byte range in that value.
type mark struct {
	field       string
	rank        int // fieldRank(field)
	skill, item int
	span
}

// fieldRank orders a hit's fields as Matches lists them: name,
// description, provider, representative queries for the agent; name,
// description, tags, examples within a skill. skill says whether field is
// a skill's; −1: not a field Matches shows.
func fieldRank(field string) (rank int, skill bool) {
	switch field {
	case fieldName:
		return 0, false
	case fieldDescription:
		return 1, false
	case fieldProvider:
		return 2, false
	case fieldQueries:
		return 3, false
	case fieldSkillName:
		return 0, true
	case fieldSkillDescription:
		return 1, true
	case fieldSkillTags:
		return 2, true
	case fieldSkillExamples:
		return 3, true
	}
	return -1, false
}

// addMark records a matched word of a field Matches shows.
func (d *hitDetail) addMark(field string, skill, item int, sp span) {
	if rank, isSkill := fieldRank(field); rank >= 0 && (skill >= 0) == isSkill {
		if d.marks == nil {
			d.marks = make([]mark, 0, 16)
		}
		d.marks = append(d.marks, mark{field: field, rank: rank, skill: skill, item: item, span: sp})
	}
}

// addWord records that skill holds query word w.
func (d *hitDetail) addWord(skill, w int) {
	for len(d.words) <= skill {
		d.words = append(d.words, 0)
	}
	d.words[skill] |= 1 << w
}

// sortMarks orders the marks as Matches lists them: the agent's fields,
// then each skill in card order, each field's items in order.
func (d *hitDetail) sortMarks() {
	slices.SortFunc(d.marks, func(a, b mark) int {
		switch {
		case a.skill != b.skill:
			return cmp.Compare(a.skill, b.skill)
		case a.rank != b.rank:
			return cmp.Compare(a.rank, b.rank)
		case a.item != b.item:
			return cmp.Compare(a.item, b.item)
		case a.start != b.start:
			return cmp.Compare(a.start, b.start)
		}
		return cmp.Compare(b.end, a.end)
	})
}

// value is the text of a mark's item, and false when the hit has no such
// item (a location past the stored skills or values).
func (d *hitDetail) value(m mark) (string, bool) {
	item := func(vs []string) (string, bool) {
		if m.item < len(vs) {
			return vs[m.item], true
		}
		return "", false
	}
	if m.skill < 0 {
		switch m.field {
		case fieldQueries:
			return item(d.queries)
		default:
			if m.item != 0 {
				return "", false
			}
			return *d.stored.field(m.field), true
		}
	}
	if m.skill >= len(d.skills) {
		return "", false
	}
	s := d.skills[m.skill]
	switch m.field {
	case fieldSkillName:
		return item([]string{s.Name})
	case fieldSkillDescription:
		return item([]string{s.Description})
	case fieldSkillTags:
		return item(s.Tags)
	default:
		return item(s.Examples)
	}
}

// Bounds of a hit's Matches (docs/api.md "Lists and search"): a card whose
// 200 skills all match would otherwise put hundreds of fragments in each
// result of a page (docs/threats.md K.96).
const (
	MaxMatches        = 10 // matched fields per hit
	MaxMatchFragments = 3  // fragments per matched field
)

// eachField calls f, in Matches order, with each field of the hit that has
// matched words: its skill (−1 for the agent's), field and one fragment
// per matched item, at most MaxMatchFragments; it stops when f returns
// false. marks must be sorted (sortMarks).
func (d *hitDetail) eachField(f func(skill int, field string, fragments []string) bool) {
	var sp []span
	for i := 0; i < len(d.marks); {
		skill, rank, field := d.marks[i].skill, d.marks[i].rank, d.marks[i].field
		var frs []string
		for i < len(d.marks) && d.marks[i].skill == skill && d.marks[i].rank == rank {
			m := d.marks[i]
			sp = sp[:0]
			for i < len(d.marks) && d.marks[i].skill == skill && d.marks[i].rank == rank && d.marks[i].item == m.item {
				sp = append(sp, d.marks[i].span)
				i++
			}
			if v, ok := d.value(m); ok && len(frs) < MaxMatchFragments {
				frs = append(frs, fragment(v, sp))
			}
		}
		if len(frs) > 0 && !f(skill, field, frs) {
			return
		}
	}
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
	var d hitDetail
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
						d.addWord(skill, w)
					}
				}
				d.addMark(field, skill, item, span{int(l.Start), int(l.End)})
			}
		}
	}
	d.sortMarks()
	return d
}

// bestSkillWords is the most query words any one skill holds.
func (d hitDetail) bestSkillWords() int {
	best := 0
	for _, ws := range d.words {
		best = max(best, bits.OnesCount32(ws))
	}
	return best
}

// matchFieldNames are the Match.Field of a skill's fields.
var matchFieldNames = map[string]string{fieldSkillName: "name", fieldSkillDescription: "description",
	fieldSkillTags: "tags", fieldSkillExamples: "examples"}

// matches lists the matched fields: agent fields first (the
// representativeQueries after name, description and provider), then each matched
// skill in card order with its fields (name, description, tags, examples).
func (d hitDetail) matches() []Match {
	var out []Match
	if len(d.marks) > 0 {
		out = make([]Match, 0, 4)
	}
	limit := MaxMatches
	if d.standing != "" {
		limit-- // the last is the standing's
	}
	d.eachField(func(skill int, field string, frs []string) bool {
		switch {
		case skill >= 0:
			out = append(out, Match{SkillID: d.skills[skill].ID, Field: matchFieldNames[field], Fragments: frs})
		case field == fieldQueries:
			out = append(out, Match{Field: MatchQueries, Fragments: frs})
		default:
			out = append(out, Match{Field: field, Fragments: frs})
		}
		return len(out) < limit
	})
	if d.standing != "" {
		out = append(out, Match{Field: MatchHealth, Fragments: []string{html.EscapeString(d.standing)}})
	}
	return out
}

// skillFragments are all highlighted fragments of skill i.
func (d hitDetail) skillFragments(i int) []string {
	out := []string{}
	if i >= len(d.skills) {
		return out
	}
	d.eachField(func(skill int, _ string, frs []string) bool {
		if skill == i {
			out = append(out, frs...)
		}
		return skill <= i
	})
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
	b.Grow(to - from + len(spans)*len("<mark></mark>") + 2*len(highlightEllipsis))
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
