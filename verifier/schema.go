package verifier

import "github.com/cardexhq/cardex/agentcard"

// The canonicalization profiles read the v1 AgentCard field table of
// agentcard (fields.go: each member's JSON kind and proto presence, and
// what spec §8.4.1 rule 1 makes of a default value per presence) through
// the short names below; the table itself is written only there.

type presence = agentcard.Presence

const (
	plain    = agentcard.Plain
	required = agentcard.Required
	optional = agentcard.Optional
)

type fieldKind = agentcard.FieldKind

const (
	kindString      = agentcard.KindString
	kindBool        = agentcard.KindBool
	kindStringList  = agentcard.KindStringList
	kindStringMap   = agentcard.KindStringMap
	kindMessage     = agentcard.KindMessage
	kindMessageList = agentcard.KindMessageList
	kindMessageMap  = agentcard.KindMessageMap
	kindStruct      = agentcard.KindStruct
)

type field struct {
	pres presence
	kind fieldKind
	msg  *message // for kindMessage, kindMessageList, kindMessageMap
}

type message struct {
	name   string
	fields map[string]field
}

var (
	agentCardMsg = messageOf(agentcard.V1Card, map[*agentcard.V1Message]*message{})
	// securityRequirementMsg is the one SecurityRequirement message of the
	// card and its skills (messageOf keeps shared messages shared).
	securityRequirementMsg = agentCardMsg.fields["securityRequirements"].msg
)

// messageOf is m in the verifier's shape; a message met twice is built
// once, so messages compare by identity as in the table.
func messageOf(m *agentcard.V1Message, done map[*agentcard.V1Message]*message) *message {
	if out, ok := done[m]; ok {
		return out
	}
	out := &message{name: m.Name, fields: make(map[string]field, len(m.Fields))}
	done[m] = out
	for name, f := range m.Fields {
		nf := field{pres: f.Presence, kind: f.Kind}
		if f.Message != nil {
			nf.msg = messageOf(f.Message, done)
		}
		out.fields[name] = nf
	}
	return out
}
