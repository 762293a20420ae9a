package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	yaml "github.com/oasdiff/yaml3"
)

// The API reference page is rendered on the server from the same
// openapi.yaml the API serves and validates its responses against, so it
// needs no script (the UI's policy allows none but its own) and cannot
// drift from the API.

type refDoc struct {
	Title, Version string
	Description    prose
	Groups         []refGroup
	Schemas        []refSchema
}

type refGroup struct {
	Tag string
	Ops []refOp
}

type refOp struct {
	Anchor, Method, Path, Summary string
	Description                   prose
	Params                        []refParam
	Body                          string // the request schema's name or shape
	BodyRequired                  bool
	Responses                     []refResponse
}

type refParam struct {
	Name, In, Type string
	Description    proseLine
	Required       bool
}

type refResponse struct {
	Status, Schema string
	Description    proseLine
}

type refSchema struct {
	Name        string
	Description prose
	Props       []refProp
}

type refProp struct {
	Name, Type  string
	Description proseLine
	Required    bool
}

// oaNode is the slice of OpenAPI 3.1 the page shows.
type oaSchema struct {
	Ref         string              `yaml:"$ref"`
	Type        any                 `yaml:"type"`
	Description string              `yaml:"description"`
	Enum        []any               `yaml:"enum"`
	Items       *oaSchema           `yaml:"items"`
	Properties  map[string]oaSchema `yaml:"properties"`
	Required    []string            `yaml:"required"`
	AnyOf       []oaSchema          `yaml:"anyOf"`
	OneOf       []oaSchema          `yaml:"oneOf"`
	AllOf       []oaSchema          `yaml:"allOf"`
	Format      string              `yaml:"format"`
}

type oaParam struct {
	Ref         string   `yaml:"$ref"`
	Name        string   `yaml:"name"`
	In          string   `yaml:"in"`
	Description string   `yaml:"description"`
	Required    bool     `yaml:"required"`
	Schema      oaSchema `yaml:"schema"`
}

type oaMedia struct {
	Schema oaSchema `yaml:"schema"`
}

type oaResponse struct {
	Ref         string             `yaml:"$ref"`
	Description string             `yaml:"description"`
	Content     map[string]oaMedia `yaml:"content"`
}

type oaOp struct {
	OperationID string    `yaml:"operationId"`
	Tags        []string  `yaml:"tags"`
	Summary     string    `yaml:"summary"`
	Description string    `yaml:"description"`
	Parameters  []oaParam `yaml:"parameters"`
	RequestBody *struct {
		Required bool               `yaml:"required"`
		Content  map[string]oaMedia `yaml:"content"`
	} `yaml:"requestBody"`
	Responses yaml.Node `yaml:"responses"`
}

type oaComponents struct {
	Parameters map[string]oaParam    `yaml:"parameters"`
	Responses  map[string]oaResponse `yaml:"responses"`
	Schemas    yaml.Node             `yaml:"schemas"`
}

type oaDoc struct {
	Info struct {
		Title, Version, Description string
	} `yaml:"info"`
	Tags       []struct{ Name string } `yaml:"tags"`
	Paths      yaml.Node               `yaml:"paths"`
	Components oaComponents            `yaml:"components"`
}

var errReference = errors.New("web: the OpenAPI document cannot be shown")

// parseReference reads the OpenAPI document into the page's model, keeping
// the document's order of paths, operations, responses and schemas.
func parseReference(doc []byte) (*refDoc, error) {
	var d oaDoc
	if err := yaml.Unmarshal(doc, &d); err != nil {
		return nil, errors.Join(errReference, err)
	}
	out := &refDoc{Title: d.Info.Title, Version: d.Info.Version, Description: parseProse(d.Info.Description)}
	byTag := map[string]*refGroup{}
	var tags []string
	for _, t := range d.Tags {
		tags = append(tags, t.Name)
	}
	group := func(tag string) *refGroup {
		if g, ok := byTag[tag]; ok {
			return g
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
		byTag[tag] = &refGroup{Tag: tag}
		return byTag[tag]
	}
	paths, err := pairs(&d.Paths)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		items, err := pairs(p.val)
		if err != nil {
			return nil, err
		}
		var shared []oaParam
		for _, it := range items {
			if it.key == "parameters" {
				if err := it.val.Decode(&shared); err != nil {
					return nil, errors.Join(errReference, err)
				}
			}
		}
		for _, it := range items {
			method := strings.ToUpper(it.key)
			if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, method) {
				continue
			}
			var op oaOp
			if err := it.val.Decode(&op); err != nil {
				return nil, errors.Join(errReference, fmt.Errorf("%s %s: %w", method, p.key, err))
			}
			ro, err := d.op(method, p.key, op, shared)
			if err != nil {
				return nil, err
			}
			tag := "other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			g := group(tag)
			g.Ops = append(g.Ops, ro)
		}
	}
	for _, t := range tags {
		if g, ok := byTag[t]; ok {
			out.Groups = append(out.Groups, *g)
		}
	}
	schemas, err := pairs(&d.Components.Schemas)
	if err != nil {
		return nil, err
	}
	for _, s := range schemas {
		var sc oaSchema
		if err := s.val.Decode(&sc); err != nil {
			return nil, errors.Join(errReference, err)
		}
		rs := refSchema{Name: s.key, Description: parseProse(sc.Description)}
		for _, name := range sortedKeys(sc.Properties) {
			p := sc.Properties[name]
			rs.Props = append(rs.Props, refProp{Name: name, Type: schemaType(p), Description: inlineProse(p.Description),
				Required: slices.Contains(sc.Required, name)})
		}
		out.Schemas = append(out.Schemas, rs)
	}
	return out, nil
}

func (d *oaDoc) op(method, path string, op oaOp, shared []oaParam) (refOp, error) {
	ro := refOp{Anchor: op.OperationID, Method: method, Path: path, Summary: op.Summary, Description: parseProse(op.Description)}
	if ro.Anchor == "" {
		ro.Anchor = strings.ToLower(method) + strings.NewReplacer("/", "-", "{", "", "}", "").Replace(path)
	}
	for _, p := range append(slices.Clone(shared), op.Parameters...) {
		if p.Ref != "" {
			p = d.Components.Parameters[refName(p.Ref)]
		}
		if p.Name == "" {
			continue
		}
		ro.Params = append(ro.Params, refParam{Name: p.Name, In: p.In, Description: inlineProse(p.Description),
			Type: schemaType(p.Schema), Required: p.Required})
	}
	if rb := op.RequestBody; rb != nil {
		ro.BodyRequired = rb.Required
		for _, ct := range sortedKeys(rb.Content) {
			ro.Body = ct + ": " + schemaType(rb.Content[ct].Schema)
			break
		}
	}
	resps, err := pairs(&op.Responses)
	if err != nil {
		return ro, err
	}
	for _, r := range resps {
		var resp oaResponse
		if err := r.val.Decode(&resp); err != nil {
			return ro, errors.Join(errReference, err)
		}
		if resp.Ref != "" {
			resp = d.Components.Responses[refName(resp.Ref)]
		}
		rr := refResponse{Status: r.key, Description: inlineProse(resp.Description)}
		for _, ct := range sortedKeys(resp.Content) {
			rr.Schema = ct + ": " + schemaType(resp.Content[ct].Schema)
			break
		}
		ro.Responses = append(ro.Responses, rr)
	}
	return ro, nil
}

// schemaType is a schema in a few words: "Agent", "array of Version",
// "string (one of a, b)".
func schemaType(s oaSchema) string {
	switch {
	case s.Ref != "":
		return refName(s.Ref)
	case s.Items != nil:
		return "array of " + schemaType(*s.Items)
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		var alts []string
		for _, a := range append(slices.Clone(s.AnyOf), s.OneOf...) {
			alts = append(alts, schemaType(a))
		}
		return strings.Join(alts, " or ")
	case len(s.AllOf) > 0:
		var all []string
		for _, a := range s.AllOf {
			all = append(all, schemaType(a))
		}
		return strings.Join(all, " and ")
	}
	t := ""
	switch v := s.Type.(type) {
	case string:
		t = v
	case []any:
		var ts []string
		for _, x := range v {
			ts = append(ts, fmt.Sprint(x))
		}
		t = strings.Join(ts, " or ")
	}
	if t == "" {
		t = "any"
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	if len(s.Enum) > 0 {
		var vs []string
		for _, e := range s.Enum {
			vs = append(vs, fmt.Sprint(e))
		}
		t += ": one of " + strings.Join(vs, ", ")
	}
	return t
}

func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

type kv struct {
	key string
	val *yaml.Node
}

// pairs lists a YAML mapping's entries in document order.
func pairs(n *yaml.Node) ([]kv, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil { // "responses: *actionResponses"
		n = n.Alias
	}
	if n.Kind == 0 {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: line %d is not a mapping", errReference, n.Line)
	}
	var out []kv
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, kv{n.Content[i].Value, n.Content[i+1]})
	}
	return out, nil
}

// referencePage is GET /api-reference: the REST API, from openapi.yaml.
func (u *ui) referencePage(w http.ResponseWriter, r *http.Request) error {
	if u.reference == nil {
		return errNotFound
	}
	u.render(w, r, http.StatusOK, "reference", "REST API reference", u.reference)
	return nil
}
