package agentcard

import (
	"slices"

	sj "github.com/cardexhq/cardex/strictjson"
)

// Change is one semantic difference between two versions of a card
// (docs/api.md). Old and New hold the values at Path in each
// version (nil where the thing does not exist).
type Change struct {
	Kind string `json:"kind"`
	Path string `json:"path"` // JSON pointer into the normalized Card
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

// Change kinds. The first ten are named by docs/api.md; name, description,
// link and modes changes are the display fields a curator re-reviews.
const (
	ChangeSkillAdded       = "skill-added"
	ChangeSkillRemoved     = "skill-removed"
	ChangeSkillChanged     = "skill-changed"
	ChangeInterfaceAdded   = "interface-added"
	ChangeInterfaceRemoved = "interface-removed"
	ChangeSecurity         = "security-changed"
	ChangeCapability       = "capability-changed"
	ChangeProvider         = "provider-changed"
	ChangeVersion          = "version-changed"
	ChangeKey              = "key-changed"
	ChangeName             = "name-changed"
	ChangeDescription      = "description-changed"
	ChangeLink             = "link-changed"  // documentationUrl, iconUrl
	ChangeModes            = "modes-changed" // defaultInputModes, defaultOutputModes
)

// Diff lists what changed from old to new, in a fixed order: name,
// description, version, provider, links, interfaces (removed, then added),
// capabilities (flags, then extensions by URI), security (schemes by name,
// then the card's requirements), default modes, skills (removed in old
// order, then changed and added in new order, matched by id) and signing
// keys. It returns nil when either card is nil: the first version of an
// agent has nothing to compare with.
//
// key-changed compares the sets of `kid`s declared in the signatures'
// protected headers only; the registry adds its own comparison of the keys
// that actually verified.
func Diff(old, new *Card) []Change {
	if old == nil || new == nil {
		return nil
	}
	var d []Change
	add := func(kind, path string, o, n any) { d = append(d, Change{Kind: kind, Path: path, Old: o, New: n}) }
	if old.Name != new.Name {
		add(ChangeName, "/name", old.Name, new.Name)
	}
	if old.Description != new.Description {
		add(ChangeDescription, "/description", old.Description, new.Description)
	}
	if old.Version != new.Version {
		add(ChangeVersion, "/version", old.Version, new.Version)
	}
	if !providerEqual(old.Provider, new.Provider) {
		add(ChangeProvider, "/provider", old.Provider, new.Provider)
	}
	if old.DocumentationURL != new.DocumentationURL {
		add(ChangeLink, "/documentationUrl", old.DocumentationURL, new.DocumentationURL)
	}
	if old.IconURL != new.IconURL {
		add(ChangeLink, "/iconUrl", old.IconURL, new.IconURL)
	}
	for i, it := range old.Interfaces {
		if !slices.Contains(new.Interfaces, it) {
			add(ChangeInterfaceRemoved, itemPtr("/interfaces", i), it, nil)
		}
	}
	for i, it := range new.Interfaces {
		if !slices.Contains(old.Interfaces, it) {
			add(ChangeInterfaceAdded, itemPtr("/interfaces", i), nil, it)
		}
	}
	d = diffCapabilities(d, &old.Capabilities, &new.Capabilities)
	d = diffSecurity(d, old, new)
	if !slices.Equal(old.DefaultInputModes, new.DefaultInputModes) {
		add(ChangeModes, "/defaultInputModes", old.DefaultInputModes, new.DefaultInputModes)
	}
	if !slices.Equal(old.DefaultOutputModes, new.DefaultOutputModes) {
		add(ChangeModes, "/defaultOutputModes", old.DefaultOutputModes, new.DefaultOutputModes)
	}
	d = diffSkills(d, old.Skills, new.Skills)
	if ok, nk := SignatureKIDs(old), SignatureKIDs(new); !slices.Equal(ok, nk) {
		add(ChangeKey, "/signatures", ok, nk)
	}
	return d
}

func providerEqual(a, b *Provider) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func diffCapabilities(d []Change, o, n *Capabilities) []Change {
	flags := []struct {
		path string
		o, n bool
	}{
		{"/capabilities/streaming", o.Streaming, n.Streaming},
		{"/capabilities/pushNotifications", o.PushNotifications, n.PushNotifications},
		{"/capabilities/extendedAgentCard", o.ExtendedAgentCard, n.ExtendedAgentCard},
	}
	for _, f := range flags {
		if f.o != f.n {
			d = append(d, Change{Kind: ChangeCapability, Path: f.path, Old: f.o, New: f.n})
		}
	}
	path := func(uri string) string { return "/capabilities/extensions/" + sj.EscapePointerToken(uri) }
	for _, e := range o.Extensions {
		if findExtension(n.Extensions, e.URI) == nil {
			d = append(d, Change{Kind: ChangeCapability, Path: path(e.URI), Old: e, New: nil})
		}
	}
	for _, e := range n.Extensions {
		prev := findExtension(o.Extensions, e.URI)
		switch {
		case prev == nil:
			d = append(d, Change{Kind: ChangeCapability, Path: path(e.URI), Old: nil, New: e})
		case !extensionEqual(prev, &e):
			d = append(d, Change{Kind: ChangeCapability, Path: path(e.URI), Old: *prev, New: e})
		}
	}
	return d
}

func findExtension(list []Extension, uri string) *Extension {
	for i := range list {
		if list[i].URI == uri {
			return &list[i]
		}
	}
	return nil
}

func extensionEqual(a, b *Extension) bool {
	return a.URI == b.URI && a.Description == b.Description && a.Required == b.Required &&
		sameJSON(a.Params, b.Params)
}

// sameJSON compares two params documents by their strict trees, so a card
// read back from storage (where encoding/json may have escaped "<" as
// \u003c) equals the freshly parsed one.
func sameJSON(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	ta, errA := sj.Parse(a)
	tb, errB := sj.Parse(b)
	return errA == nil && errB == nil && string(sj.Marshal(ta)) == string(sj.Marshal(tb))
}

func diffSkills(d []Change, old, new []Skill) []Change {
	path := func(id string) string { return "/skills/" + sj.EscapePointerToken(id) }
	for _, s := range old {
		if findSkill(new, s.ID) == nil {
			d = append(d, Change{Kind: ChangeSkillRemoved, Path: path(s.ID), Old: s, New: nil})
		}
	}
	seen := map[string]bool{}
	for _, s := range new {
		if seen[s.ID] {
			continue // a duplicate id (flagged by Parse) is compared once, by its first skill
		}
		seen[s.ID] = true
		prev := findSkill(old, s.ID)
		switch {
		case prev == nil:
			d = append(d, Change{Kind: ChangeSkillAdded, Path: path(s.ID), Old: nil, New: s})
		case !skillEqual(prev, &s):
			d = append(d, Change{Kind: ChangeSkillChanged, Path: path(s.ID), Old: *prev, New: s})
		}
	}
	return d
}

func findSkill(list []Skill, id string) *Skill {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

// skillEqual treats nil and empty lists alike: a card read back from storage
// and a freshly parsed one must not differ by that.
func skillEqual(a, b *Skill) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Description == b.Description &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Examples, b.Examples) &&
		slices.Equal(a.InputModes, b.InputModes) && slices.Equal(a.OutputModes, b.OutputModes) &&
		requirementsEqual(a.SecurityRequirements, b.SecurityRequirements)
}
