package agentcard

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// Summary is what a result list shows of a card (docs/api.md "Lists and
// search"): enough to pick an agent, bounded whatever the card holds, so a
// page of 100 results stays small and cheap however large the cards are
// (docs/threats.md K.96). The whole card is one request away, at GET
// /api/v1/agents/{id} and its /card.
type Summary struct {
	Name string `json:"name"`
	// Description is the card's, shortened to SummaryDescriptionBytes.
	Description string `json:"description"`
	Version     string `json:"version,omitempty"`
	// Provider is the provider's organization.
	Provider string `json:"provider,omitempty"`
	// Skills are the first skills of the card, id and name, as many as
	// the summary's budget holds; SkillCount counts them all.
	Skills     []SummarySkill `json:"skills"`
	SkillCount int            `json:"skillCount"`
	// Tags are the skills' distinct tags in card order, as many as the
	// budget holds.
	Tags []string `json:"tags"`
	// Truncated says something was shortened or left out: the card has
	// more than the summary shows.
	Truncated bool `json:"truncated"`
}

// SummarySkill names one skill.
type SummarySkill struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Bounds of a summary. MaxSummaryBytes bounds its JSON: with a record's
// own members, a page of 100 results stays under 1 MiB.
const (
	MaxSummaryBytes         = 4 << 10
	SummaryDescriptionBytes = 300
	summaryNameChars        = 100 // a name in the summary, also of a skill
	summaryMaxSkills        = 20
	summaryMaxTags          = 20
)

// Summary is c's summary.
func (c *Card) Summary() Summary {
	s := Summary{Skills: []SummarySkill{}, Tags: []string{}, SkillCount: len(c.Skills)}
	short := func(v string, max int, runes bool) string {
		out := v
		if runes {
			if utf8.RuneCountInString(v) > max {
				out = string([]rune(v)[:max])
			}
		} else if len(v) > max {
			out = v[:max]
			for !utf8.ValidString(out) {
				out = out[:len(out)-1]
			}
		}
		if out != v {
			s.Truncated = true
			out += "…"
		}
		return out
	}
	s.Name = short(c.Name, summaryNameChars, true)
	s.Description = short(c.Description, SummaryDescriptionBytes, false)
	s.Version = short(c.Version, MaxVersionBytes, false)
	if c.Provider != nil {
		s.Provider = short(c.Provider.Organization, summaryNameChars, true)
	}
	size := s.size()
	for _, sk := range c.Skills {
		if len(s.Skills) == summaryMaxSkills || len(sk.ID) > MaxSkillIDBytes {
			s.Truncated = true
			continue
		}
		e := SummarySkill{ID: sk.ID, Name: short(sk.Name, summaryNameChars, true)}
		n := len(e.ID) + len(e.Name) + 24 // the members' names and punctuation, over-counted
		if size+n > MaxSummaryBytes*3/4 {
			s.Truncated = true
			break
		}
		s.Skills = append(s.Skills, e)
		size += n
	}
	for _, sk := range c.Skills {
		for _, t := range sk.Tags {
			if slices.Contains(s.Tags, t) {
				continue
			}
			if len(s.Tags) == summaryMaxTags || len(t) > 4*MaxTagChars || size+len(t)+3 > MaxSummaryBytes-64 {
				s.Truncated = true
				continue
			}
			s.Tags = append(s.Tags, t)
			size += len(t) + 3
		}
	}
	return s
}

// size is the length of s's JSON as it stands.
func (s *Summary) size() int {
	b, _ := json.Marshal(s)
	return len(b)
}

// SummaryJSON is the JSON of c.Summary(), at most MaxSummaryBytes long.
func (c *Card) SummaryJSON() ([]byte, error) {
	s := c.Summary()
	b, err := json.Marshal(s)
	// Escaping may still push a summary of hostile text over the bound:
	// drop tags, then skills, until it fits.
	for err == nil && len(b) > MaxSummaryBytes && (len(s.Tags) > 0 || len(s.Skills) > 0) {
		if len(s.Tags) > 0 {
			s.Tags = s.Tags[:len(s.Tags)-1]
		} else {
			s.Skills = s.Skills[:len(s.Skills)-1]
		}
		s.Truncated = true
		b, err = json.Marshal(s)
	}
	return b, err
}
