package discover

import (
	"context"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// SkillHit is one skill and the agent that has it.
type SkillHit struct {
	AgentID     string   `json:"agentId"`
	AgentName   string   `json:"agentName"`
	SkillID     string   `json:"skillId"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// SkillPage is one page of skills.
type SkillPage struct {
	Skills        []SkillHit `json:"skills"`
	TotalSize     int        `json:"totalSize"`
	NextPageToken string     `json:"nextPageToken,omitempty"`
}

// Skills runs r as caller through search.FindSkills, the path of GET
// /api/v1/skills.
func (f Finder) Skills(ctx context.Context, caller registry.Principal, r Request) (*SkillPage, error) {
	q, err := r.Query(caller)
	if err != nil {
		return nil, err
	}
	if err := chargePage(ctx, q.PageSize); err != nil {
		return nil, err
	}
	res, err := search.FindSkills(ctx, f.Index, summaries{f.Registry}, caller, search.SkillQuery{Q: q.Q, Filters: q.Filters,
		PageSize: q.PageSize, PageToken: q.PageToken})
	if err != nil {
		return nil, err
	}
	out := &SkillPage{Skills: make([]SkillHit, 0, len(res.Skills)), TotalSize: res.TotalSize, NextPageToken: res.NextPageToken}
	for _, h := range res.Skills {
		tags := h.Tags
		if tags == nil {
			tags = []string{}
		}
		out.Skills = append(out.Skills, SkillHit{AgentID: h.AgentID, AgentName: h.AgentName, SkillID: h.SkillID,
			Name: h.Name, Description: h.Description, Tags: tags})
	}
	return out, nil
}

// Tag list bounds, as GET /api/v1/tags.
const (
	DefaultTagLimit = 100
	MaxTagLimit     = 1000
)

// Tags lists the tags of the agents caller may list, most used first, as
// GET /api/v1/tags does (counts over the caller's scope).
func (f Finder) Tags(ctx context.Context, caller registry.Principal, prefix string, limit int) ([]search.FacetValue, error) {
	switch {
	case limit < 0 || limit > MaxTagLimit:
		return nil, bad("limit", "must be between 1 and %d", MaxTagLimit)
	case limit == 0:
		limit = DefaultTagLimit
	}
	if len(prefix) > search.MaxFilterBytes {
		return nil, bad("prefix", "longer than %d bytes", search.MaxFilterBytes)
	}
	tags, err := f.Index.Tags(ctx, prefix, registry.ScopeOf(caller), limit)
	if err != nil {
		return nil, err
	}
	if tags == nil {
		tags = []search.FacetValue{}
	}
	return tags, nil
}

// Versions summarizes an agent's stored card versions.
type Versions struct {
	Count int `json:"count"`
	// Current is the approved version's number (0 before approval).
	Current int64 `json:"current"`
	// Latest is the newest stored version.
	Latest *VersionInfo `json:"latest,omitempty"`
	// List is where the whole history is, with diffs.
	List string `json:"list"`
}

// VersionInfo is one stored version.
type VersionInfo struct {
	Seq             int64     `json:"seq"`
	FetchedAt       time.Time `json:"fetchedAt"`
	ProtocolVersion string    `json:"protocolVersion"`
	Trust           string    `json:"trust"`
}

// Detail is one agent with its versions summary.
type Detail struct {
	Agent
	Versions Versions `json:"versions"`
}

// Detail reads one agent and its versions under the reading rule of GET
// /api/v1/agents/{id}.
func (f Finder) Detail(ctx context.Context, caller registry.Principal, id, base string) (*Detail, error) {
	a, rec, err := f.Get(ctx, caller, id, base)
	if err != nil {
		return nil, err
	}
	vs, err := f.Registry.Versions(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	d := &Detail{Agent: *a, Versions: Versions{Count: len(vs), Current: rec.VersionSeq, List: a.Record + "/versions"}}
	for _, v := range vs {
		if d.Versions.Latest == nil || v.Seq > d.Versions.Latest.Seq {
			d.Versions.Latest = &VersionInfo{Seq: v.Seq, FetchedAt: v.FetchedAt, ProtocolVersion: v.ProtocolVersion, Trust: string(v.Trust)}
		}
	}
	return d, nil
}
