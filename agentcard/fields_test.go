package agentcard

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The v1 field table is written once (fields.go): the parser's schemas and
// the verifier's profiles are built from it, and the A2A rendering's
// structs (a2a.go), which Go cannot build from a table, must name exactly
// its members. A member added to the table or to a struct alone fails here.
func TestFieldTableOnce(t *testing.T) {
	// Which messages each rendering struct writes (A2AFlow holds the
	// members of the five flows; each wrapped scheme has its own struct).
	writes := map[reflect.Type][]*V1Message{}
	var walk func(rt reflect.Type, m *V1Message)
	walk = func(rt reflect.Type, m *V1Message) {
		if slices.Contains(writes[rt], m) {
			return
		}
		writes[rt] = append(writes[rt], m)
		for i := range rt.NumField() {
			sf := rt.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			f, ok := m.Fields[name]
			if !ok || f.Message == nil {
				continue
			}
			et := sf.Type
			for et.Kind() == reflect.Pointer || et.Kind() == reflect.Slice || et.Kind() == reflect.Map {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				walk(et, f.Message)
			}
		}
	}
	walk(reflect.TypeFor[AgentCard](), V1Card)

	// Members the rendering leaves out on purpose: signatures sign the
	// bytes as served, not the rendering (Card.A2A).
	omitted := map[string]bool{"AgentCard.signatures": true}
	reached := map[*V1Message]bool{}
	for rt, msgs := range writes {
		want := map[string]bool{}
		for _, m := range msgs {
			reached[m] = true
			for name := range m.Fields {
				if !omitted[m.Name+"."+name] {
					want[name] = true
				}
			}
		}
		got := map[string]bool{}
		for i := range rt.NumField() {
			sf := rt.Field(i)
			name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			got[name] = true
			if !want[name] {
				t.Errorf("%s.%s writes %q, which no v1 message %s has in the field table", rt.Name(), sf.Name, name, msgNames(msgs))
				continue
			}
			// A REQUIRED member is always written.
			if len(msgs) == 1 && msgs[0].Fields[name].Presence == Required && strings.Contains(opts, "omitempty") {
				t.Errorf("%s.%s (%s.%s) is REQUIRED but omitempty", rt.Name(), sf.Name, msgs[0].Name, name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if !got[name] {
				t.Errorf("the field table's %s.%s is not written by %s", msgNames(msgs), name, rt.Name())
			}
		}
	}

	// Every message of the table is rendered, and read by a level of the
	// parser with the JSON kind its members are written as.
	levels := []*schema{cardSchema, interfaceSchema, providerSchema, capabilitiesSchema, extensionSchema,
		skillSchema, signatureSchema, schemeSchema, wrappedSchemeSchema, flowsSchema, flowSchema,
		requirementSchema, scopeListSchema}
	var each func(m *V1Message, seen map[*V1Message]bool)
	each = func(m *V1Message, seen map[*V1Message]bool) {
		if seen[m] {
			return
		}
		seen[m] = true
		if !reached[m] && m != V1Card.Fields["signatures"].Message {
			t.Errorf("no A2A rendering struct writes the v1 message %s", m.Name)
		}
		read := slices.ContainsFunc(levels, func(s *schema) bool {
			for name := range m.Fields {
				want := v1Fields(&V1Message{Fields: map[string]V1Field{name: m.Fields[name]}})[0]
				i, ok := s.lookup(name)
				if !ok || s.fields[i].kind != want.kind || s.fields[i].elem != want.elem {
					return false
				}
			}
			return true
		})
		if !read {
			t.Errorf("no level of the parse schema reads every member of the v1 message %s", m.Name)
		}
		for _, f := range m.Fields {
			if f.Message != nil {
				each(f.Message, seen)
			}
		}
	}
	each(V1Card, map[*V1Message]bool{})
}

func msgNames(msgs []*V1Message) string {
	var names []string
	for _, m := range msgs {
		names = append(names, m.Name)
	}
	return strings.Join(names, "/")
}
