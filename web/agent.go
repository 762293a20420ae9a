package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

type agentView struct {
	A            *registry.Agent
	Card         *agentcard.Card
	Schemes      []schemeView
	Requirements []string
	Signatures   []signatureView
	KeyChanged   bool // the current version's diff says the signing key changed
	Versions     []versionView
	Raw          string // pretty-printed card as fetched; "" when RawTooLarge
	RawBytes     int
	// RawTooLarge: the card is over maxInlineCard and offered for download
	// only.
	RawTooLarge bool
	CardURL     string // download link of the card as fetched
	Listed      bool   // anonymous visitors can find it in the catalogue
	Live        livenessView
}

type signatureView struct {
	registry.SignatureResult
	Source, Form string
}

type versionView struct {
	registry.Version
	Changes []changeView
}

type changeView struct {
	Label, Path, Old, New string
	// OldSkill and NewSkill show a skill that was added, removed or
	// changed as a skill (name, id, description, tags), not as JSON.
	OldSkill, NewSkill *agentcard.Skill
}

// agentPage is GET /agents/{id}. Whoever holds the id may read the record
// (docs/api.md "Agent identity"); removed agents are not found except by admins.
func (u *ui) agentPage(w http.ResponseWriter, r *http.Request) error {
	v, err := u.loadAgent(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	name := v.A.Host
	if v.Card != nil && v.Card.Name != "" {
		name = v.Card.Name
	}
	u.render(w, r, http.StatusOK, "agent", visible(name), v)
	return nil
}

func (u *ui) loadAgent(r *http.Request, id string) (*agentView, error) {
	ctx, p := r.Context(), principal(r)
	a, err := u.svc.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	v := &agentView{A: a, Card: a.Card, CardURL: "/api/v1/agents/" + a.ID + "/card",
		Listed: registry.CanList(registry.Anonymous, *a), Live: uptimeStrip(a.Liveness, u.cfg.Now())}
	if c := a.Card; c != nil {
		for _, s := range c.SecuritySchemes {
			v.Schemes = append(v.Schemes, describeScheme(s))
		}
		v.Requirements = describeRequirements(c.SecurityRequirements)
	}
	v.Signatures = signatureViews(a.Signatures)
	vs, err := u.svc.Versions(ctx, p, id)
	if err != nil {
		return nil, err
	}
	for _, ver := range vs {
		vv := versionView{Version: ver}
		for _, c := range ver.Diff {
			vv.Changes = append(vv.Changes, changeOf(c))
			if ver.Current && c.Kind == agentcard.ChangeKey {
				v.KeyChanged = true
			}
		}
		v.Versions = append(v.Versions, vv)
	}
	raw, _, err := u.svc.Card(ctx, p, id)
	switch {
	case errors.Is(err, registry.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		v.RawBytes = len(raw)
		if v.RawTooLarge = len(raw) > maxInlineCard; !v.RawTooLarge {
			v.Raw = pretty(raw)
		}
	}
	return v, nil
}

func changeOf(c agentcard.Change) changeView {
	v := changeView{Label: or(changeWords[c.Kind], c.Kind), Path: c.Path}
	switch c.Kind {
	case agentcard.ChangeSkillAdded, agentcard.ChangeSkillRemoved, agentcard.ChangeSkillChanged:
		v.OldSkill, v.NewSkill = skillOf(c.Old), skillOf(c.New)
		if v.OldSkill != nil || v.NewSkill != nil {
			return v
		}
	}
	v.Old, v.New = value(c.Old), value(c.New)
	return v
}

// skillOf reads a diff value as a skill: an agentcard.Skill when the diff
// was just computed, its JSON form when it was stored.
func skillOf(v any) *agentcard.Skill {
	if v == nil {
		return nil
	}
	if s, ok := v.(agentcard.Skill); ok {
		return &s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var s agentcard.Skill
	if json.Unmarshal(b, &s) != nil || (s.ID == "" && s.Name == "") {
		return nil
	}
	return &s
}

// value shows a diff value as compact JSON, cut to a readable length.
func value(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return short(300, s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return short(300, string(b))
}

// maxInlineCard is the largest card a page shows inline. A card near the
// 512 KiB limit is no read for a person, and indenting, cleaning and
// escaping it was most of such a page's cost (docs/benchmarks.md "Cost of
// anonymous requests"); it stays one click away, exactly as served.
const maxInlineCard = 64 << 10

// pretty indents the card for reading. The bytes stay as fetched (string
// escapes are kept, nothing re-marshalled); only whitespace changes.
func pretty(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil || !utf8.Valid(b.Bytes()) {
		return string(bytes.ToValidUTF8(raw, []byte("\uFFFD")))
	}
	return b.String()
}

func signatureViews(sigs []registry.SignatureResult) []signatureView {
	var out []signatureView
	for _, s := range sigs {
		out = append(out, signatureView{SignatureResult: s,
			Source: keySourceWords[s.KeySource], Form: or(profileWords[s.Profile], s.Profile)})
	}
	return out
}
