package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// xssPayloads are docs/threats.md H.73's list, plus two classics.
var xssPayloads = []string{
	`<script>alert(1)</script>`,
	`"><svg onload=alert(1)>`,
	`javascript:alert(1)`,
	`JaVaScRiPt:alert(1)`,
	"java\tscript:alert(1)",
	`data:text/html,<script>alert(1)</script>`,
	`</title><script>alert(1)</script>`,
	`{{.}}`,
	`<img src=x onerror=alert(1)>`,
	`'-alert(1)-'` + "\u202E",
}

// xssCard puts p into every field the UI renders: names, descriptions,
// provider, skills (name, description, tags, examples, modes), extension,
// interface URLs and bindings, icon and documentation URLs, and security
// scheme descriptions and URLs.
func xssCard(p string) []byte {
	card := map[string]any{
		"name": p, "description": p, "version": p,
		"provider":         map[string]any{"organization": p, "url": p},
		"iconUrl":          p,
		"documentationUrl": p,
		"supportedInterfaces": []any{
			map[string]any{"url": p, "protocolBinding": p, "protocolVersion": "1.0"},
			map[string]any{"url": "https://xss.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
		},
		"capabilities": map[string]any{"streaming": true, "extensions": []any{map[string]any{"uri": p, "description": p}}},
		"securitySchemes": map[string]any{
			"key": map[string]any{"apiKeySecurityScheme": map[string]any{"location": "header", "name": p, "description": p}},
			"oauth": map[string]any{"oauth2SecurityScheme": map[string]any{"description": p, "flows": map[string]any{
				"clientCredentials": map[string]any{"tokenUrl": p, "scopes": map[string]any{p: p}}}}},
			"oidc": map[string]any{"openIdConnectSecurityScheme": map[string]any{"openIdConnectUrl": p, "description": p}},
		},
		"securityRequirements": []any{map[string]any{"schemes": map[string]any{"oauth": map[string]any{"list": []any{p}}}}},
		"defaultInputModes":    []any{p},
		"defaultOutputModes":   []any{"text/plain"},
		"skills": []any{map[string]any{"id": p, "name": p + " alert skill", "description": p + " alert", "tags": []any{p, "xss"},
			"examples": []any{p}, "inputModes": []any{p}, "outputModes": []any{"text/plain"}}},
	}
	b, err := json.Marshal(card)
	if err != nil {
		panic(err)
	}
	return b
}

const xssCheck = `(() => {
  const bad = [];
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      if (a.name.startsWith("on")) bad.push(el.tagName + " " + a.name);
      if (["href", "src", "action", "formaction", "xlink:href", "srcdoc"].includes(a.name)) {
        const v = a.value.replace(/[\s\u0000-\u001f]/g, "").toLowerCase();
        if (/^(javascript|data|vbscript):/.test(v)) bad.push(el.tagName + " " + a.name + "=" + a.value);
      }
    }
  }
  for (const s of document.querySelectorAll("script")) {
    if (!/\/static\/app\.[0-9a-f]+\.js$/.test(s.src)) bad.push("script " + s.outerHTML.slice(0, 80));
  }
  for (const t of ["svg", "img", "iframe", "object", "embed", "base", "style"]) {
    if (document.querySelector(t)) bad.push("<" + t + ">");
  }
  // The one SVG Cardex draws itself, the agent page's uptime strip, is
  // allowed where the template puts it, once, holding only rects and
  // titles; any other SVG (a card field escaping its text) stays bad.
  const strips = document.querySelectorAll("section#liveness > figure.uptime-strip > svg[data-strip]");
  const svgs = document.querySelectorAll("svg");
  if (svgs.length > 0 && svgs.length === strips.length && strips.length === 1 &&
      [...strips[0].querySelectorAll("*")].every(n => n.tagName === "rect" || n.tagName === "title")) {
    bad.splice(bad.indexOf("<svg>"), 1);
  }
  return bad.concat(window.__dialogs.map(d => "dialog " + d));
})()`

// docs/threats.md H.73: no card field can run script or become a
// javascript:/data: link on the catalogue, agent pages or admin pages.
// The CSP is bypassed in this browser so the test proves the escaping
// itself; the CSP is a second wall, checked by TestH76….
func TestBrowserH73StoredXSS(t *testing.T) {
	e := newEnv(t)
	var approved, pending []string
	for i, p := range xssPayloads {
		a := e.submit(fmt.Sprintf("xss%d.example.com", i))
		e.record(a.ID, fetched{raw: xssCard(p)})
		e.approve(a.ID)
		approved = append(approved, a.ID)
		b := e.submit(fmt.Sprintf("xss-pending%d.example.com", i))
		e.record(b.ID, fetched{raw: xssCard(p)})
		pending = append(pending, b.ID)
	}
	e.sync()
	tok := e.adminToken()
	ctx := tab(t)
	run(t, ctx, chromedp.ActionFunc(func(ctx context.Context) error { return page.SetBypassCSP(true).Do(ctx) }))

	check := func(path string, wantResults int) {
		t.Helper()
		var bad []string
		var title string
		run(t, ctx, chromedp.Navigate(e.srv.URL+path), chromedp.WaitReady("footer", chromedp.ByQuery),
			chromedp.Evaluate(xssCheck, &bad), chromedp.Title(&title))
		if len(bad) > 0 {
			t.Errorf("%s: %q", path, bad)
		}
		if !strings.HasSuffix(title, " · Cardex") {
			t.Errorf("%s: the title was broken out of: %q", path, title)
		}
		if wantResults >= 0 {
			var n int
			run(t, ctx, chromedp.Evaluate(`document.querySelectorAll("li.result").length`, &n))
			if n != wantResults {
				t.Errorf("%s: %d results, want %d", path, n, wantResults)
			}
		}
	}
	// Control: the hook records dialogs and the check sees a planted
	// javascript: link, so a clean result below means something.
	var control []string
	run(t, ctx, chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitReady("footer", chromedp.ByQuery),
		chromedp.Evaluate(`alert("control"); document.body.insertAdjacentHTML("beforeend", '<a href="java\tscript:x">x</a>')`, nil),
		chromedp.Evaluate(xssCheck, &control))
	if len(control) != 2 {
		t.Fatalf("control check found %q, want the planted link and the dialog", control)
	}
	check("/", len(xssPayloads))
	check("/?q=alert", len(xssPayloads)) // highlighted fragments
	check("/?q=script+svg+img", -1)
	check("/tags", -1)
	for i, id := range approved {
		check("/agents/"+id, -1)
		var body string
		run(t, ctx, chromedp.Text("h1", &body, chromedp.ByQuery))
		if want := strings.ReplaceAll(xssPayloads[i], "\u202E", "⟨U+202E⟩"); strings.TrimSpace(body) != strings.TrimSpace(strings.ReplaceAll(want, "\t", " ")) {
			t.Errorf("agent %d h1 %q, want the payload as text %q", i, body, want)
		}
	}
	check("/publish/"+pending[0], -1)

	// The admin pages, signed in through the form.
	run(t, ctx, chromedp.Navigate(e.srv.URL+"/admin"), chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID), chromedp.WaitVisible("#pending", chromedp.ByID))
	check("/admin", -1)
	var rows int
	run(t, ctx, chromedp.Evaluate(`document.querySelectorAll("#pending tr.queue-row").length`, &rows))
	if rows != len(xssPayloads) {
		t.Errorf("admin queue shows %d pending agents, want %d", rows, len(xssPayloads))
	}
	for _, id := range pending {
		check("/admin/agents/"+id, -1)
	}
	check("/?status=pending", len(xssPayloads))
	check("/admin/audit", -1)
}
