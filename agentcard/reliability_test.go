package agentcard

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// rejected asserts that Parse rejects doc with reason and that the problem
// with code sits at pointer.
func rejected(t *testing.T, doc string, reason error, code, pointer string) *InvalidError {
	t.Helper()
	p, err := Parse([]byte(doc), Options{})
	var inv *InvalidError
	if p != nil || !errors.As(err, &inv) || !errors.Is(err, ErrInvalidCard) || !errors.Is(err, reason) {
		t.Fatalf("Parse(%.60q) = %v, %v; want %v", doc, p, err, reason)
	}
	for _, pr := range inv.Problems {
		if pr.Code == code && pr.Pointer == pointer && pr.Severity == SeverityError {
			return inv
		}
	}
	t.Fatalf("Parse(%.60q): no %s error at %q in %+v", doc, code, pointer, inv.Problems)
	return nil
}

// warned asserts that doc is accepted with a warning code at pointer.
func warned(t *testing.T, doc string, opts Options, code, pointer string) *Parsed {
	t.Helper()
	p := mustParse(t, []byte(doc), opts)
	for _, pr := range p.Problems {
		if pr.Code == code && pr.Pointer == pointer {
			return p
		}
	}
	t.Fatalf("no %s warning at %q in %+v", code, pointer, p.Problems)
	return nil
}

func problemsUnder(ps []Problem, prefix string) []Problem {
	var out []Problem
	for _, p := range ps {
		if strings.HasPrefix(p.Pointer, prefix) {
			out = append(out, p)
		}
	}
	return out
}

func hasCode(ps []Problem, code string) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Code == code })
}

func TestC28NotJSONOrWrongShape(t *testing.T) {
	inv := rejected(t, "<!DOCTYPE html><html><body>Welcome</body></html>", ErrNotJSON, CodeInvalidJSON, "")
	if !strings.Contains(inv.Problems[0].Message, "HTML") || !strings.Contains(inv.Problems[0].Message, "byte 0") ||
		strings.Contains(inv.Problems[0].Message, "Welcome") {
		t.Errorf("message = %q (must name HTML and the offset, never quote the body)", inv.Problems[0].Message)
	}
	rejected(t, "", ErrNotJSON, CodeEmptyDocument, "")
	rejected(t, " \n\t", ErrNotJSON, CodeEmptyDocument, "")
	rejected(t, `[{"name":"a","skills":[]}]`, ErrNotACard, CodeNotAnObject, "")
	rejected(t, `null`, ErrNotACard, CodeNotAnObject, "")
	rejected(t, `"card"`, ErrNotACard, CodeNotAnObject, "")
	rejected(t, "\xEF\xBB\xBF{\"name\":\"a\",\"skills\":[]}", ErrNotJSON, CodeByteOrderMark, "")
	rejected(t, `{"name":"a","skills":[]} {"name":"b"}`, ErrNotJSON, CodeTrailingData, "")
	rejected(t, `{"name":"a","skills":[]`, ErrNotJSON, CodeInvalidJSON, "")
	// The v0.2.0 spec sample's trailing comma: error with position.
	_, err := Parse(readCard(t, "A2A_v0.2.0_"), Options{})
	var inv2 *InvalidError
	if !errors.As(err, &inv2) || inv2.Problems[0].Pointer != "/securitySchemes/google" || !strings.Contains(inv2.Problems[0].Message, "at byte 855") {
		t.Fatalf("err = %v", err)
	}
}

func TestNotACardRule(t *testing.T) {
	// A2A PR #258: name, version and a capabilities *array*, no card member.
	rejected(t, string(readCard(t, "A2A_pr258_")), ErrNotACard, CodeNotACard, "")
	rejected(t, `{"name":"pkg","version":"1.0.0","description":"d","capabilities":{"tools":{}}}`, ErrNotACard, CodeNotACard, "")
	rejected(t, `{"url":"https://a.example/","title":"x"}`, ErrNotACard, CodeNotACard, "")
	rejected(t, `{}`, ErrNotACard, CodeNotACard, "")
	// Card members without a name and without an endpoint: a manifest
	// of something else (a PubNub-style service manifest), not an agent.
	for _, doc := range []string{`{"skills":[]}`, `{"supported_interfaces":[]}`, `{"defaultInputModes":["text"]}`,
		`{"name":"","skills":[{"id":"s"}],"url":""}`} {
		rejected(t, doc, ErrNotACard, CodeNotACard, "")
	}
	// A card needs both: one missing either is an invalid card, never a
	// listable agent, and the error names what is missing.
	if p := mustParse(t, []byte(`{"name":"a","url":"https://a.example/"}`), Options{}); slices.ContainsFunc(p.Problems, func(pr Problem) bool { return pr.Code == CodeNoEndpoint }) {
		t.Errorf("a v0.x url is an endpoint: %+v", p.Problems)
	}
	rejected(t, `{"name":"a","protocolVersion":"0.3"}`, ErrInvalidCard, CodeNoEndpoint, "/supportedInterfaces")
	rejected(t, `{"name":"a","skills":[],"supportedInterfaces":[]}`, ErrInvalidCard, CodeNoEndpoint, "/supportedInterfaces")
	rejected(t, `{"url":"https://a.example/","skills":[]}`, ErrInvalidCard, CodeNoName, "/name")
	rejected(t, `{"name":"  ","url":"https://a.example/","skills":[]}`, ErrInvalidCard, CodeNoName, "/name")
	// An MCP server is an endpoint of another protocol, not of the agent.
	rejected(t, `{"name":"a","supportedInterfaces":[{"url":"https://a.example/mcp","protocolBinding":"JSONRPC","protocolVersion":"2025-06-18"}]}`,
		ErrInvalidCard, CodeNoEndpoint, "/supportedInterfaces")
	// A v1 interface missing its binding is still an endpoint (flagged
	// missing-required).
	warned(t, `{"name":"a","supportedInterfaces":[{"url":"https://a.example/"}]}`, Options{}, CodeMissingRequired, "/supportedInterfaces/0/protocolBinding")
}

func TestC29DuplicateKeys(t *testing.T) {
	rejected(t, `{"name":"Good","name":"Evil","skills":[]}`, ErrNotJSON, CodeDuplicateKey, "/name")
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[{"id":"x","name":"Good","name":"Evil"}]}`, ErrNotJSON, CodeDuplicateKey, "/skills/0/name")
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"capabilities":{"extensions":[{"params":{"k":1,"k":2}}]}}`, ErrNotJSON, CodeDuplicateKey, "/capabilities/extensions/0/params/k")
}

func TestC30CaseVariantKeys(t *testing.T) {
	rejected(t, `{"name":"Good","NAME":"Evil","skills":[]}`, ErrInvalidCard, CodeCaseVariantKey, "/NAME")
	rejected(t, `{"Name":"Evil","skills":[]}`, ErrInvalidCard, CodeCaseVariantKey, "/Name")
	// U+017F LATIN SMALL LETTER LONG S folds to "s": encoding/json would read "ſkills" as skills.
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"ſkills":[{"id":"evil"}]}`, ErrInvalidCard, CodeCaseVariantKey, "/ſkills")
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[{"id":"a","ID":"b"}]}`, ErrInvalidCard, CodeCaseVariantKey, "/skills/0/ID")
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"capabilities":{"Streaming":true}}`, ErrInvalidCard, CodeCaseVariantKey, "/capabilities/Streaming")
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"Default_Input_Modes":["x"]}`, ErrInvalidCard, CodeCaseVariantKey, "/Default_Input_Modes")
	// Both spellings of one field: which would a reader pick?
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"defaultInputModes":["a"],"default_input_modes":["b"]}`, ErrInvalidCard, CodeDuplicateField, "/default_input_modes")
	// Unknown members differing in case are data, not fields.
	mustParse(t, []byte(`{"name":"a","url":"https://a.example/","skills":[],"x-Vendor":1,"x-vendor":2}`), Options{})
}

func TestC31InvalidText(t *testing.T) {
	rejected(t, "{\"name\":\"a\xff\",\"skills\":[]}", ErrNotJSON, CodeInvalidUTF8, "/name")
	rejected(t, `{"name":"a\ud800","skills":[]}`, ErrNotJSON, CodeLoneSurrogate, "/name")
	rejected(t, `{"name":"a\udc00b","skills":[]}`, ErrNotJSON, CodeLoneSurrogate, "/name")
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"x":1e400}`, ErrNotJSON, CodeNumberOutOfRange, "/x")
}

func TestC32SchemaViolations(t *testing.T) {
	// A member of the wrong JSON type is dropped with a warning at its
	// pointer; one bad optional member never rejects an otherwise good
	// card (docs/lint.md).
	const ok = `"url":"https://a.example/a2a"`
	for _, c := range []struct{ doc, ptr string }{
		{`{"name":"a",` + ok + `,"skills":"x"}`, "/skills"},
		{`{"name":"a",` + ok + `,"skills":[],"capabilities":{"streaming":"true"}}`, "/capabilities/streaming"},
		{`{"name":"a",` + ok + `,"skills":[{"id":"s","tags":["ok",1]}]}`, "/skills/0/tags/1"},
		{`{"name":"a",` + ok + `,"skills":[null]}`, "/skills/0"},
		{`{"name":"a",` + ok + `,"skills":[],"securitySchemes":{"k":"apiKey"}}`, "/securitySchemes/k"},
		{`{"name":"a",` + ok + `,"skills":[],"securityRequirements":[{"schemes":{"k":"x"}}]}`, "/securityRequirements/0/schemes/k"},
		{`{"name":"a",` + ok + `,"skills":[],"security":[{"k":[1]}]}`, "/security/0/k/0"},
		{`{"name":"a",` + ok + `,"skills":[],"provider":"Acme"}`, "/provider"},
		{`{"name":"a",` + ok + `,"skills":[],"iconUrl":123}`, "/iconUrl"},
	} {
		warned(t, c.doc, Options{}, CodeWrongType, c.ptr)
	}
	// What survives is read: the good skill beside a null one, the good
	// tag beside a number, the scheme of a mistyped scope list (still
	// required: never read as open).
	p := mustParse(t, []byte(`{"name":"a",`+ok+`,"skills":[null,{"id":"s","name":"S","description":"d","tags":["ok",1]}],`+
		`"securitySchemes":{"k":{"type":"apiKey","in":"header","name":"K"}},"securityRequirements":[{"schemes":{"k":"x"}},"bad"]}`), Options{})
	if len(p.Card.Skills) != 1 || !slices.Equal(p.Card.Skills[0].Tags, []string{"ok"}) {
		t.Errorf("skills %+v", p.Card.Skills)
	}
	if r := p.Card.SecurityRequirements; len(r) != 1 || r[0].Schemes["k"] == nil || len(r[0].Schemes["k"]) != 0 {
		t.Errorf("requirements %+v", r)
	}
	// Losing the name that way leaves a card without a name: with no
	// endpoint either, not a card at all; with one, not a listable agent.
	rejected(t, `{"name":5,"skills":[]}`, ErrNotACard, CodeNotACard, "")
	rejected(t, `{"name":5,`+ok+`}`, ErrInvalidCard, CodeNoName, "/name")
	// Missing REQUIRED fields are warnings, each with its pointer (kept
	// beside the error of the missing name).
	inv := rejected(t, `{"skills":[{}],"url":"https://a.example/"}`, ErrInvalidCard, CodeNoName, "/name")
	p = &Parsed{Problems: inv.Problems}
	for _, ptr := range []string{"/name", "/description", "/version", "/capabilities", "/defaultInputModes", "/defaultOutputModes",
		"/skills/0/id", "/skills/0/name", "/skills/0/description", "/skills/0/tags"} {
		if !slices.ContainsFunc(p.Problems, func(pr Problem) bool { return pr.Pointer == ptr && pr.Code == CodeMissingRequired }) {
			t.Errorf("no missing-required at %s: %+v", ptr, p.Problems)
		}
	}
	warned(t, `{"name":"a","supportedInterfaces":[{"url":"https://a.example/"}],"skills":[]}`, Options{}, CodeMissingRequired, "/supportedInterfaces/0/protocolBinding")
	warned(t, `{"name":"a","url":"https://a.example/","skills":[]}`, Options{}, CodeEmptyRequired, "/skills")
	warned(t, `{"name":"a","url":"https://a.example/","skills":[{"id":" ","tags":[]}]}`, Options{}, CodeEmptyRequired, "/skills/0/id")
	warned(t, `{"name":"a","url":"https://a.example/","skills":[{"id":"s","tags":[]}]}`, Options{}, CodeEmptyRequired, "/skills/0/tags")
	warned(t, `{"name":"a","url":"https://a.example/","skills":[],"provider":{"url":"https://a.example"}}`, Options{}, CodeMissingRequired, "/provider/organization")
	// null is read as absent, with a warning (ProtoJSON reads null as unset);
	// in a REQUIRED field that is the only warning for it.
	// A null name leaves no name: the null-value warning and the no-name
	// error, nothing else.
	inv = rejected(t, `{"name":null,`+ok+`,"skills":[],"description":"d","capabilities":null}`, ErrInvalidCard, CodeNoName, "/name")
	if under := problemsUnder(inv.Problems, "/name"); len(under) != 2 || under[0].Code != CodeNullValue {
		t.Fatalf("problems = %+v", inv.Problems)
	}
	warned(t, `{"name":"a","url":"https://a.example/","skills":[],"capabilities":null}`, Options{}, CodeNullValue, "/capabilities")
}

func TestC33OversizedFields(t *testing.T) {
	desc := strings.Repeat("d", 100<<10)
	p := warned(t, `{"name":"a","url":"https://a.example/","skills":[],"description":"`+desc+`"}`, Options{}, CodeTooLong, "/description")
	if p.Card.Description != desc {
		t.Fatal("description was changed; oversized fields are flagged, never truncated")
	}
	id := strings.Repeat("i", 100<<10)
	p = warned(t, `{"name":"a","url":"https://a.example/","skills":[{"id":"`+id+`","name":"`+strings.Repeat("n", 201)+`"}]}`, Options{}, CodeTooLong, "/skills/0/id")
	if p.Card.Skills[0].ID != id || !hasCode(p.Problems, CodeTooLong) {
		t.Fatal("id was changed")
	}
	warned(t, `{"name":"`+strings.Repeat("é", MaxNameChars+1)+`","skills":[],"url":"https://a.example/"}`, Options{}, CodeTooLong, "/name")
	if p := mustParse(t, []byte(`{"name":"`+strings.Repeat("é", MaxNameChars)+`","skills":[],"url":"https://a.example/"}`), Options{}); hasCode(p.Problems, CodeTooLong) {
		t.Fatal("a name of exactly MaxNameChars is flagged")
	}
	// 10,000 skills: flagged, all kept, and the problem list stays bounded.
	var b strings.Builder
	b.WriteString(`{"name":"a","url":"https://a.example/","skills":[`)
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"s%d"}`, i)
	}
	b.WriteString("]}")
	p = warned(t, b.String(), Options{}, CodeTooMany, "/skills")
	if len(p.Card.Skills) != 10000 || len(p.Problems) != maxProblems+1 || p.Problems[maxProblems].Code != CodeTooManyProblems {
		t.Fatalf("skills = %d, problems = %d", len(p.Card.Skills), len(p.Problems))
	}
	tags := strings.Repeat(`"t",`, 10000) + `"t"`
	warned(t, `{"name":"a","url":"https://a.example/","skills":[{"id":"s","tags":[`+tags+`]}]}`, Options{}, CodeTooMany, "/skills/0/tags")
	// Nesting 1000 deep in extensions[].params: rejected by the depth cap.
	deep := strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000)
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"capabilities":{"extensions":[{"uri":"u","params":`+deep+`}]}}`, ErrNotJSON, CodeTooDeep, "/capabilities/extensions/0/params/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a")
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"x":"`+strings.Repeat("x", 512<<10)+`"}`, ErrNotJSON, CodeTooLarge, "")
}

func TestC34DangerousURLs(t *testing.T) {
	for _, tc := range []struct{ ptr, field, url, code string }{
		{"/iconUrl", `"iconUrl":%s`, `javascript:alert(1)`, CodeDangerousURL},
		{"/iconUrl", `"iconUrl":%s`, `JaVaScRiPt:alert(1)`, CodeDangerousURL},
		{"/iconUrl", `"iconUrl":%s`, "java\tscript:alert(1)", CodeDangerousURL},
		{"/iconUrl", `"iconUrl":%s`, " \u0001javascript:alert(1)", CodeDangerousURL},
		{"/documentationUrl", `"documentationUrl":%s`, `data:text/html,<script>alert(1)</script>`, CodeDangerousURL},
		{"/provider/url", `"provider":{"organization":"o","url":%s}`, `vbscript:msgbox(1)`, CodeDangerousURL},
		{"/documentationUrl", `"documentationUrl":%s`, `file:///etc/passwd`, CodeDangerousURL},
		{"/iconUrl", `"iconUrl":%s`, `//evil.example/x.png`, CodeSchemeRelativeURL},
		{"/iconUrl", `"iconUrl":%s`, `https://user:pw@a.example/x.png`, CodeURLUserinfo},
		{"/iconUrl", `"iconUrl":%s`, "HTTPS://a.example/x\u0000.png", CodeURLControlChars},
		{"/iconUrl", `"iconUrl":%s`, "https://a.example/x .png", CodeURLControlChars},
		{"/iconUrl", `"iconUrl":%s`, `http://a.example/x.png`, CodeInsecureURL},
		{"/iconUrl", `"iconUrl":%s`, `/x.png`, CodeRelativeURL},
		{"/iconUrl", `"iconUrl":%s`, `ftp://a.example/x.png`, CodeUnsupportedURL},
		{"/iconUrl", `"iconUrl":%s`, `https:///x.png`, CodeInvalidURL},
		{"/securitySchemes/o/flows/implicit/authorizationUrl", `"securitySchemes":{"o":{"type":"oauth2","flows":{"implicit":{"authorizationUrl":%s}}}}`, `javascript:alert(1)`, CodeDangerousURL},
	} {
		lit, _ := json.Marshal(tc.url)
		doc := `{"name":"a","url":"https://a.example/","skills":[],` + fmt.Sprintf(tc.field, lit) + `}`
		p := warned(t, doc, Options{}, tc.code, tc.ptr)
		// Stored exactly as written (C.34, C.37), never rewritten.
		if got := urlAt(p.Card, tc.ptr); got != tc.url {
			t.Errorf("%s stored as %q, want %q", tc.ptr, got, tc.url)
		}
		if RenderableURL(tc.url) {
			t.Errorf("RenderableURL(%q) = true", tc.url)
		}
	}
}

func urlAt(c *Card, ptr string) string {
	switch ptr {
	case "/iconUrl":
		return c.IconURL
	case "/documentationUrl":
		return c.DocumentationURL
	case "/provider/url":
		return c.Provider.URL
	}
	return c.SecuritySchemes[0].Flows[0].AuthorizationURL
}

func TestRenderableURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://a.example/icon.png":     true,
		"HTTPS://A.example/x":            true,
		"https://a.example:8443/x?q=1#f": true,
		"https://[::1]/x":                true,
		"http://a.example/":              false,
		"https://user@a.example/":        false,
		"https://a.example/\u202Ex":      false,
		"https://a.example/\u200Bx":      false,
		"https://a.example/\tx":          false,
		"https:\\\\evil.example":         false,
		"https:evil.example":             false,
		"//a.example/":                   false,
		"javascript:alert(1)":            false,
		"":                               false,
		"https://a.example/" + strings.Repeat("x", MaxURLBytes): false,
	} {
		if got := RenderableURL(s); got != want {
			t.Errorf("RenderableURL(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestC35InterfacesOffHost(t *testing.T) {
	opts := Options{CardURL: "https://Agent.Example.com./.well-known/agent-card.json"}
	iface := func(url, binding string) string {
		return `{"name":"a","skills":[],"supportedInterfaces":[{"url":"` + url + `","protocolBinding":"` + binding + `","protocolVersion":"1.0"}]}`
	}
	warned(t, iface("https://evil.example/a2a", "JSONRPC"), opts, CodeOffHostInterface, "/supportedInterfaces/0/url")
	p := warned(t, iface("https://10.0.0.7/a2a", "JSONRPC"), opts, CodeInternalAddress, "/supportedInterfaces/0/url")
	if !hasCode(p.Problems, CodeOffHostInterface) {
		t.Fatal("internal address not flagged as off-host")
	}
	p = warned(t, iface("http://localhost:8080/a2a", "JSONRPC"), opts, CodeInternalAddress, "/supportedInterfaces/0/url")
	if !hasCode(p.Problems, CodeInsecureURL) {
		t.Fatal("http not flagged")
	}
	warned(t, `{"name":"a","skills":[],"url":"https://evil.example/a2a"}`, opts, CodeOffHostInterface, "/url")
	warned(t, `{"name":"a","skills":[],"url":"https://agent.example.com/","additionalInterfaces":[{"url":"https://evil.example/g","transport":"GRPC"}]}`,
		opts, CodeOffHostInterface, "/additionalInterfaces/0/url")
	// Same host (any case, trailing dot, other port) and gRPC host:port are fine.
	for _, doc := range []string{
		iface("https://AGENT.example.com:8443/a2a", "JSONRPC"),
		iface("agent.example.com:50051", "GRPC"),
	} {
		if p := mustParse(t, []byte(doc), opts); problemsUnder(p.Problems, "/supportedInterfaces") != nil {
			t.Errorf("%s: %+v", doc, p.Problems)
		}
	}
	warned(t, iface("evil.example:50051", "GRPC"), opts, CodeOffHostInterface, "/supportedInterfaces/0/url")
	// host:port is only a gRPC form.
	warned(t, iface("agent.example.com:443", "JSONRPC"), opts, CodeUnsupportedURL, "/supportedInterfaces/0/url")
	// A local file has no host to compare with; internal addresses still show.
	p = mustParse(t, []byte(iface("https://evil.example/a2a", "JSONRPC")), Options{})
	if problemsUnder(p.Problems, "/supportedInterfaces") != nil {
		t.Fatalf("problems = %+v", p.Problems)
	}
	warned(t, iface("https://127.0.0.1/a2a", "JSONRPC"), Options{}, CodeInternalAddress, "/supportedInterfaces/0/url")
}

func TestC36DeceptiveNames(t *testing.T) {
	for _, tc := range []struct{ doc, code, ptr, stored string }{
		{`{"name":"Pay\u202Epal","skills":[],"url":"https://a.example/"}`, CodeBidiControl, "/name", "Pay\u202Epal"},
		{`{"name":"Goo\u200Bgle","skills":[],"url":"https://a.example/"}`, CodeZeroWidth, "/name", "Goo\u200Bgle"},
		{`{"name":"раураl","skills":[],"url":"https://a.example/"}`, CodeMixedScript, "/name", "раураl"},
		{`{"name":"a","url":"https://a.example/","description":"x\u2066y\u2069","skills":[]}`, CodeBidiControl, "/description", ""},
		{`{"name":"a","url":"https://a.example/","skills":[{"id":"s","name":"Re\u202Efund"}]}`, CodeBidiControl, "/skills/0/name", ""},
		{`{"name":"a","url":"https://a.example/","skills":[{"id":"s","description":"\u200Dz"}]}`, CodeZeroWidth, "/skills/0/description", ""},
		{`{"name":"a\nb","skills":[],"url":"https://a.example/"}`, CodeControlCharacter, "/name", "a\nb"},
		{`{"name":"a","url":"https://a.example/","skills":[],"provider":{"organization":"Ac\u202Eme","url":"https://a.example"}}`, CodeBidiControl, "/provider/organization", ""},
	} {
		p := warned(t, tc.doc, Options{}, tc.code, tc.ptr)
		if tc.stored != "" && p.Card.Name != tc.stored {
			t.Errorf("name stored as %q, want %q", p.Card.Name, tc.stored)
		}
	}
	// Line breaks in descriptions, one script, other scripts with Latin: fine.
	for _, doc := range []string{
		`{"name":"Café Agent","description":"line 1\nline 2\ttab","skills":[],"url":"https://a.example/"}`,
		`{"name":"Москва агент","skills":[],"url":"https://a.example/"}`,
		`{"name":"ChatBot 助手","skills":[],"url":"https://a.example/"}`,
	} {
		if p := mustParse(t, []byte(doc), Options{}); hasCode(p.Problems, CodeMixedScript) || hasCode(p.Problems, CodeControlCharacter) {
			t.Errorf("%s: %+v", doc, p.Problems)
		}
	}
}

func TestC37PayloadsStoredVerbatim(t *testing.T) {
	payloads := []string{`<img src=x onerror=alert(1)>`, `</script><script>alert(1)</script>`, `{{.}}`, `%s%n`, `"><svg onload=alert(1)>`}
	skills := ""
	for i, s := range payloads {
		lit, _ := json.Marshal(s)
		if i > 0 {
			skills += ","
		}
		skills += fmt.Sprintf(`{"id":%s,"name":%s,"description":%s,"tags":[%s],"examples":[%s]}`, lit, lit, lit, lit, lit)
	}
	nameLit, _ := json.Marshal(payloads[0])
	p := mustParse(t, []byte(`{"name":`+string(nameLit)+`,"url":"https://a.example/","skills":[`+skills+`]}`), Options{})
	if p.Card.Name != payloads[0] {
		t.Fatalf("name = %q", p.Card.Name)
	}
	for i, s := range payloads {
		sk := p.Card.Skills[i]
		if sk.ID != s || sk.Name != s || sk.Description != s || sk.Examples[0] != s || sk.Tags[0] != strings.ToLower(s) {
			t.Errorf("skill %d = %+v, want %q everywhere", i, sk, s)
		}
	}
	// Inert in the API JSON: it decodes back to the same strings.
	b, err := json.Marshal(p.Card)
	if err != nil {
		t.Fatal(err)
	}
	var back Card
	if err := json.Unmarshal(b, &back); err != nil || back.Name != payloads[0] || back.Skills[1].Examples[0] != payloads[1] {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	if strings.Contains(string(b), "</script>") {
		t.Fatalf("API JSON carries a raw </script>: %s", b)
	}
}

func TestE60NestedAndDuplicateSignatures(t *testing.T) {
	p := mustParse(t, []byte(`{"name":"a","url":"https://a.example/","skills":[{"id":"s","name":"S","signatures":[{"protected":"x","signature":"y"}]}]}`), Options{})
	if p.Card.Signatures != nil || p.Tree.Get("skills").Array[0].Get("signatures") == nil {
		t.Fatalf("nested signatures: %+v", p.Card.Signatures)
	}
	rejected(t, `{"name":"a","url":"https://a.example/","skills":[],"signatures":[],"signatures":[{"protected":"x","signature":"y"}]}`, ErrNotJSON, CodeDuplicateKey, "/signatures")
}
