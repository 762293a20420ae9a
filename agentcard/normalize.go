package agentcard

import (
	"encoding/json"
	"strings"

	sj "github.com/cardexhq/cardex/strictjson"
)

// normalizer turns the strict tree of one card into a Card, collecting
// problems with the pointer of each finding as it goes.
type normalizer struct {
	c        collector
	cardURL  string
	cardHost string
	shape    string
	schemes  map[string]bool // defined security scheme names
	// dropEmpty: Options.DropEmpty (SignedView).
	dropEmpty bool
}

func (n *normalizer) card(tree *sj.Value) *Card {
	n.cardHost = cardHostOf(n.cardURL)
	top := n.c.open(tree, "", cardSchema)
	n.shape = detectShape(top, tree)
	card := &Card{
		Name:        top.str("name"),
		Description: top.str("description"),
		Version:     top.str("version"),
		Shape:       n.shape,
	}
	n.requireText(top, "name")
	n.requireText(top, "description")
	n.requireText(top, "version")
	if _, p := top.get("name"); card.Name != "" {
		n.checkName(p, card.Name)
	}
	if _, p := top.get("description"); card.Description != "" {
		n.checkProse(p, card.Description, MaxDescriptionBytes)
	}
	if _, p := top.get("version"); len(card.Version) > MaxVersionBytes {
		n.c.warn(p, CodeTooLong, "%d bytes, more than the %d allowed", len(card.Version), MaxVersionBytes)
	}

	card.Interfaces, card.ProtocolVersions = n.interfaces(top)
	card.Provider = n.provider(top)
	card.DocumentationURL = n.optionalURL(top, "documentationUrl")
	card.IconURL = n.optionalURL(top, "iconUrl")
	card.Capabilities = n.capabilities(top)
	card.SecuritySchemes = n.securitySchemes(top)
	card.SecurityRequirements = n.cardRequirements(top)
	card.DefaultInputModes = n.modes(top, "defaultInputModes", true)
	card.DefaultOutputModes = n.modes(top, "defaultOutputModes", true)
	card.Skills = n.skills(top)
	card.Signatures = n.signatures(top)
	return card
}

// requireText warns when a v1 REQUIRED string field is missing or blank
// (docs/cards.md item 3; warnings per docs/api.md "Card parsing").
func (n *normalizer) requireText(o obj, name string) {
	v, p := o.get(name)
	switch {
	case v == nil && o.has(name):
		// null or of the wrong type: already reported.
	case v == nil:
		n.c.warn(p, CodeMissingRequired, "%s is required", name)
	case strings.TrimSpace(v.String) == "":
		n.c.warn(p, CodeEmptyRequired, "%s is required and is empty", name)
	}
}

// requireArray warns when a v1 REQUIRED array is missing or empty (§5.7:
// required arrays contain at least one element).
func (n *normalizer) requireArray(o obj, name string) {
	v, p := o.get(name)
	switch {
	case v == nil && o.has(name):
	case v == nil:
		n.c.warn(p, CodeMissingRequired, "%s is required", name)
	case len(v.Array) == 0:
		n.c.warn(p, CodeEmptyRequired, "%s is required and is empty", name)
	}
}

func (n *normalizer) optionalURL(o obj, name string) string {
	v, p := o.get(name)
	if v == nil {
		return ""
	}
	// An empty string is how ProtoJSON writers spell "unset".
	if v.String != "" {
		n.checkURL(p, v.String, urlPlain, "")
	}
	return v.String
}

func (n *normalizer) provider(top obj) *Provider {
	v, ptr := top.get("provider")
	if v == nil {
		return nil
	}
	o := n.c.open(v, ptr, providerSchema)
	pr := &Provider{Organization: o.str("organization"), URL: o.str("url")}
	orgV, orgPtr := o.get("organization")
	if orgV == nil {
		if name := o.str("name"); name != "" {
			_, np := o.get("name")
			n.c.warn(np, CodeProviderNameAlias, "provider.name is not a card field; read as provider.organization")
			pr.Organization = name
			orgPtr = np
		} else {
			n.c.warn(orgPtr, CodeMissingRequired, "organization is required")
		}
	} else if strings.TrimSpace(orgV.String) == "" {
		n.c.warn(orgPtr, CodeEmptyRequired, "organization is required and is empty")
	}
	if pr.Organization != "" {
		n.checkName(orgPtr, pr.Organization)
	}
	if uv, up := o.get("url"); uv == nil {
		n.c.warn(up, CodeMissingRequired, "url is required")
	} else if uv.String == "" {
		n.c.warn(up, CodeEmptyRequired, "url is required and is empty")
	} else {
		n.checkURL(up, uv.String, urlPlain, "")
	}
	return pr
}

func (n *normalizer) capabilities(top obj) Capabilities {
	caps := Capabilities{Extensions: []Extension{}}
	v, ptr := top.get("capabilities")
	if v == nil && !top.has("capabilities") {
		n.c.warn(ptr, CodeMissingRequired, "capabilities is required")
	}
	o := n.c.open(v, ptr, capabilitiesSchema)
	caps.Streaming = o.boolean("streaming")
	caps.PushNotifications = o.boolean("pushNotifications")
	// docs/cards.md: OR the v1 flag and the v0.x top-level flag.
	caps.ExtendedAgentCard = o.boolean("extendedAgentCard") || top.boolean("supportsAuthenticatedExtendedCard")
	ev, eptr := o.get("extensions")
	if ev == nil {
		return caps
	}
	if len(ev.Array) > MaxExtensions {
		n.c.warn(eptr, CodeTooMany, "%d extensions, more than the %d allowed", len(ev.Array), MaxExtensions)
	}
	for i, e := range ev.Array {
		if e.Kind != sj.Object {
			continue // warned as wrong-type
		}
		eo := n.c.open(e, itemPtr(eptr, i), extensionSchema)
		ext := Extension{URI: eo.str("uri"), Description: eo.str("description"), Required: eo.boolean("required")}
		if pv, _ := eo.get("params"); pv != nil {
			ext.Params = json.RawMessage(sj.Marshal(pv))
		}
		if ext.Description != "" {
			_, dp := eo.get("description")
			n.checkProse(dp, ext.Description, MaxDescriptionBytes)
		}
		caps.Extensions = append(caps.Extensions, ext)
	}
	return caps
}

// modes reads a media-type list; required lists warn when missing or empty.
func (n *normalizer) modes(o obj, name string, required bool) []string {
	if required {
		n.requireArray(o, name)
	}
	out := o.strings(name)
	if n.dropEmpty {
		out = withoutEmpty(out)
	}
	if len(out) > MaxModes {
		_, p := o.get(name)
		n.c.warn(p, CodeTooMany, "%d media types, more than the %d allowed", len(out), MaxModes)
	}
	return out
}

func (n *normalizer) signatures(top obj) []Signature {
	v, ptr := top.get("signatures")
	if v == nil {
		return nil
	}
	if len(v.Array) > MaxSignatures {
		n.c.warn(ptr, CodeTooMany, "%d signatures; only the first %d are examined", len(v.Array), MaxSignatures)
	}
	out := make([]Signature, 0, len(v.Array))
	for i, e := range v.Array {
		if e.Kind != sj.Object {
			continue // warned as wrong-type
		}
		o := n.c.open(e, itemPtr(ptr, i), signatureSchema)
		h, _ := o.get("header")
		out = append(out, Signature{Protected: o.str("protected"), Signature: o.str("signature"), Header: h})
	}
	return out
}

// withoutEmpty is list without its "" elements (nil stays nil).
func withoutEmpty(list []string) []string {
	if list == nil {
		return nil
	}
	out := list[:0:0]
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}
