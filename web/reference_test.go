package web_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	yaml "github.com/oasdiff/yaml3"

	"github.com/chromedp/chromedp"

	"github.com/cardexhq/cardex/web"
)

func withOpenAPI(t testing.TB) envOption {
	doc, err := os.ReadFile("../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return func(c *web.Config) { c.OpenAPI = doc }
}

// The reference page shows every operation of openapi.yaml, with its
// parameters and responses, linked from every page's footer.
func TestAPIReferencePage(t *testing.T) {
	e := newEnv(t, withOpenAPI(t))
	doc, _ := os.ReadFile("../api/openapi.yaml")
	var spec struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(doc, &spec); err != nil {
		t.Fatal(err)
	}
	var want []string
	for path, ops := range spec.Paths {
		for m, node := range ops {
			if m == "parameters" {
				continue
			}
			var op struct {
				OperationID string `yaml:"operationId"`
			}
			if err := node.Decode(&op); err != nil {
				t.Fatal(err)
			}
			want = append(want, strings.ToUpper(m)+" "+path+" #"+op.OperationID)
		}
	}
	r := e.get("/api-reference")
	wantStatus(t, r, 200)
	d := parse(t, r)
	var got []string
	for _, s := range d.all("section.operation") {
		id, _ := attr(s, "id")
		got = append(got, text(all(s, "h2")[0])+" #"+id)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 20 || !slices.Equal(got, want) {
		t.Errorf("operations on the page\n%q\nwant\n%q", got, want)
	}
	audit := d.one("section#listAudit")
	var params []string
	for _, tr := range all(audit, "table.params tbody tr") {
		params = append(params, text(all(tr, "code")[0]))
	}
	for _, p := range []string{"after", "limit", "order", "before", "agentId", "actor", "action"} {
		if !slices.Contains(params, p) {
			t.Errorf("listAudit lacks parameter %s: %v", p, params)
		}
	}
	if got := text(d.one("section#getAgent ul.responses")); !strings.Contains(got, "200") || !strings.Contains(got, "Agent") {
		t.Errorf("getAgent responses %q", got)
	}
	// Descriptions are rendered, not shown as raw Markdown: backticks
	// become code elements, paragraphs paragraphs.
	intro := d.one("details.ref-intro")
	if n := len(all(intro, "p")); n < 3 {
		t.Errorf("the introduction has %d paragraphs", n)
	}
	if got := text(intro); strings.Contains(got, "`") {
		t.Errorf("raw Markdown in the introduction: %q", got)
	}
	var codes []string
	for _, c := range all(d.one("section#listAgents div.ref-text"), "code") {
		codes = append(codes, text(c))
	}
	if !slices.Contains(codes, "gone") || !slices.Contains(codes, "reader") {
		t.Errorf("listAgents description code spans %q", codes)
	}
	checked := 0
	for _, sel := range []string{"div.ref-text", "table.params td", "ul.responses li", "table.props td"} {
		for _, s := range d.all(sel) {
			checked++
			if got := text(s); strings.Count(got, "`") >= 2 {
				t.Errorf("raw Markdown on the page (%s): %q", sel, got)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d described elements checked", checked)
	}
	if n := d.count("section#schema-Agent table.props tr"); n < 15 {
		t.Errorf("the Agent schema shows %d properties", n)
	}
	if href, _ := attr(parse(t, e.get("/legend")).one("footer #api-reference-link"), "href"); href != "/api-reference" {
		t.Errorf("footer links %q", href)
	}
	// Without the document there is no page and no link.
	bare := newEnv(t)
	wantStatus(t, bare.get("/api-reference"), 404)
	if n := parse(t, bare.get("/legend")).count("#api-reference-link"); n != 0 {
		t.Error("the footer links a page that is not served")
	}
	if _, err := web.New(web.Config{Service: e.svc, Index: e.idx, OpenAPI: []byte("paths: [1, 2")}); err == nil {
		t.Error("a broken document was accepted")
	}
}

func TestBrowserAPIReference(t *testing.T) {
	e := newEnv(t, withOpenAPI(t))
	ctx := tab(t)
	var n int
	var csp []string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/legend"),
		chromedp.Click("#api-reference-link", chromedp.ByID),
		chromedp.WaitVisible("#listAudit", chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("section.operation").length`, &n),
		chromedp.Evaluate(`window.__dialogs.slice()`, &csp),
	)
	if n < 20 {
		t.Errorf("%d operations rendered", n)
	}
	screenshot(t, ctx, "api-reference.png")
	if over := overflowAt(t, ctx, e.srv.URL+"/api-reference", 390); over > 0 {
		t.Errorf("the reference is %d px wider than 390 px", over)
	}
}
