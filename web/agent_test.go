package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

func TestAgentPageSections(t *testing.T) {
	e := newEnv(t)
	a := e.submit("geo.example.com")
	raw := readCard(t, "geospatial.json")
	e.record(a.ID, fetched{raw: raw, trust: registry.TrustVerified, thumbs: []string{"thumb-1"},
		signatures: []registry.SignatureResult{{Index: 0, Kid: "key-1", Alg: "ES256", KeySource: "jku", Profile: "spec",
			Status: "verified", Thumbprint: "thumb-1"}}})
	e.approve(a.ID)
	// A second version adds a skill and changes the version string.
	var card map[string]any
	if err := json.Unmarshal(raw, &card); err != nil {
		t.Fatal(err)
	}
	card["version"] = "1.3.0"
	card["skills"] = append(card["skills"].([]any), map[string]any{"id": "eta", "name": "ETA Estimator",
		"description": "Estimates arrival times.", "tags": []string{"eta"}})
	raw2, _ := json.Marshal(card)
	e.record(a.ID, fetched{raw: raw2, trust: registry.TrustVerified, thumbs: []string{"thumb-1"},
		signatures: []registry.SignatureResult{{Index: 0, Kid: "key-1", Alg: "ES256", KeySource: "jku", Profile: "spec",
			Status: "verified", Thumbprint: "thumb-1"}}})

	r := e.get("/agents/" + a.ID)
	wantStatus(t, r, 200)
	d := parse(t, r)
	if got := d.text("h1"); got != "GeoSpatial Route Planner Agent" {
		t.Errorf("h1 %q", got)
	}
	if got := d.text("title"); got != "GeoSpatial Route Planner Agent · Cardex" {
		t.Errorf("title %q", got)
	}
	// How to connect: three interfaces with binding, protocol and a link.
	rows := d.all("table.interfaces tr.interface")
	if len(rows) != 3 {
		t.Fatalf("%d interface rows, want 3", len(rows))
	}
	if got := texts(rows); got[1] != "GRPC A2A 1.0 https://georoute-agent.example.com/a2a/grpc" {
		t.Errorf("interface row %q", got[1])
	}
	if href, _ := attr(all(rows[0], "a")[0], "href"); href != "https://georoute-agent.example.com/a2a/v1" {
		t.Errorf("interface link %q", href)
	}
	// Security in plain words.
	if got := d.text("li.scheme"); !strings.HasPrefix(got, "google: OpenID Connect discovery document: https://accounts.google.com/.well-known/openid-configuration") {
		t.Errorf("scheme %q", got)
	}
	if got := d.text("p.requirements"); got != "A call needs google (scopes: openid, profile, email)." {
		t.Errorf("requirements %q", got)
	}
	// Skills with tags, examples.
	if n := d.count("article.skill"); n != 3 {
		t.Errorf("%d skills, want 3", n)
	}
	if got := texts(d.all("#skill-route-optimizer-traffic ul.tags li")); strings.Join(got, ",") != "maps,routing,navigation,directions,traffic" {
		t.Errorf("skill tags %v", got)
	}
	if n := len(d.all("#skill-route-optimizer-traffic details.examples li")); n != 2 {
		t.Errorf("%d examples, want 2", n)
	}
	// Signature panel.
	sig := d.one("table.signatures tr.signature")
	if got := text(sig); got != "0 key-1 ES256 the key set named by jku, on the agent's origin A2A specification (RFC 8785 of the card without signatures) ✔ signature: verified" {
		t.Errorf("signature row %q", got)
	}
	// History: two versions, the newer with its readable diff.
	vs := d.all("ol.versions li.version")
	if len(vs) != 2 {
		t.Fatalf("%d versions, want 2", len(vs))
	}
	changes := texts(all(vs[0], "li.change"))
	if !containsPrefix(changes, "Skill added /skills/") || !containsPrefix(changes, "Version changed /version 1.2.0 → 1.3.0") {
		t.Errorf("diff items %q", changes)
	}
	if len(all(vs[0], "span.current")) != 1 {
		t.Error("the newest version is not marked current")
	}
	// Health, raw card, download link.
	if got := d.text("#health dd.last-error"); got != "none" {
		t.Errorf("last error %q", got)
	}
	if href, _ := attr(d.one("#raw a[download]"), "href"); href != "/api/v1/agents/"+a.ID+"/card" {
		t.Errorf("download link %q", href)
	}
	var pretty bytes.Buffer
	json.Indent(&pretty, raw2, "", "  ")
	if got := text(d.one("#raw-json")); got != strings.Join(strings.Fields(pretty.String()), " ") {
		t.Errorf("raw card is not the fetched bytes pretty-printed")
	}
	// The icon is never loaded from the agent's host (H.75): no <img> at all.
	if n := d.count("img"); n != 0 {
		t.Errorf("%d <img> elements", n)
	}
}

func containsPrefix(s []string, p string) bool {
	for _, x := range s {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

func TestAgentPageProblemsErrorsAndUnsafeURLs(t *testing.T) {
	e := newEnv(t)
	a := e.submit("currency.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "currency.json")})
	e.recordError(a.ID, "http_status", 503, "the server answered 503")
	d := parse(t, e.get("/agents/"+a.ID))
	probs := texts(d.all("#problems li.problem"))
	if len(probs) == 0 {
		t.Fatal("no problems listed for a card with an http:// interface URL")
	}
	if !containsSub(probs, "/url") {
		t.Errorf("problems %q do not point at /url", probs)
	}
	// http:// URLs are shown as text, not links (H.73).
	for _, c := range d.all("table.interfaces code.unsafe") {
		if text(c) != "http://localhost:10999" {
			t.Errorf("unsafe URL text %q", text(c))
		}
	}
	if d.count(`table.interfaces a`) != 0 {
		t.Error("an http:// interface URL became a link")
	}
	if got := d.text("#health dd.last-error"); !strings.HasPrefix(got, "http_status HTTP 503 at") || !strings.HasSuffix(got, "the server answered with an error status") {
		t.Errorf("last error %q", got)
	}
	// Pending agents say so, and are readable by id (docs/api.md "Agent identity").
	if got := d.text("header.agent-head p.alert"); !strings.Contains(got, "waiting for review") {
		t.Errorf("pending notice %q", got)
	}
}

func containsSub(s []string, sub string) bool {
	for _, x := range s {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}

func TestRemovedAgentIsNotFoundForAnonymousVisitors(t *testing.T) {
	e := newEnv(t)
	id := e.listed("gone.example.com", "hotel.json")
	if _, err := e.svc.Act(t.Context(), adminP, id, registry.ActionRemove, registry.ActionRequest{}); err != nil {
		t.Fatal(err)
	}
	e.sync()
	r := e.get("/agents/" + id)
	wantStatus(t, r, 404)
	if got := parse(t, r).text("h1"); got != "Not found" {
		t.Errorf("404 page h1 %q", got)
	}
	wantStatus(t, e.get("/publish/"+id), 404)
	wantStatus(t, e.get("/agents/no-such-id"), 404)
	// An admin still sees it.
	wantStatus(t, e.do("GET", "/agents/"+id, nil, e.asAdmin(e.adminToken())), 200)
	// And it is gone from the catalogue.
	if n := parse(t, e.get("/")).count("li.result"); n != 0 {
		t.Errorf("%d results after removal", n)
	}
}

// The signature panel says what a signature left unsigned: the agreeing
// v0.3 members of a verified hybrid, the disagreeing ones of an invalid one.
func TestAgentPageNamesUnsignedMembers(t *testing.T) {
	e := newEnv(t)
	a := e.submit("geo.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "geospatial.json"), trust: registry.TrustInvalid,
		signatures: []registry.SignatureResult{{Index: 0, Kid: "key-1", Alg: "ES256", KeySource: "jku", Profile: "spec-v1-only",
			Status: "invalid", Reason: "members outside what the profile signs disagree", Unsigned: []string{"/url", "/preferredTransport"}}}})
	e.approve(a.ID)
	d := parse(t, e.get("/agents/"+a.ID))
	if got := d.text("table.signatures span.unsigned"); got != "Not signed, and disagreeing with the signed members: /url, /preferredTransport" {
		t.Errorf("unsigned %q", got)
	}
	if got := d.text("table.signatures tr.signature"); !strings.Contains(got, "A2A v1 members only (members outside the v1 schema are not signed)") {
		t.Errorf("row %q", got)
	}
}

// A verified signature's uncovered members are listed as ignored
// (docs/verification.md): Cardex's view of the card leaves them out.
func TestAgentPageListsMembersNotCoveredAsIgnored(t *testing.T) {
	e := newEnv(t)
	a := e.submit("geo.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "geospatial.json"), trust: registry.TrustVerified, thumbs: []string{"tp"},
		signatures: []registry.SignatureResult{{Index: 0, Kid: "key-1", Alg: "ES256", KeySource: "jku", Profile: "sdk",
			Status: "verified", Reason: "verified", Thumbprint: "tp", Unsigned: []string{"/url", "/preferredTransport"}}}})
	e.approve(a.ID)
	d := parse(t, e.get("/agents/"+a.ID))
	if got := d.text("table.signatures span.unsigned"); got != "Not covered by the signature, ignored: /url, /preferredTransport" {
		t.Errorf("unsigned %q", got)
	}
}

// An internal agent's page is not shown to anonymous visitors even with its
// id (docs/security.md "Who sees what"); a signed-in admin sees it.
func TestInternalAgentPageNeedsSignIn(t *testing.T) {
	e := newEnv(t)
	id := e.listed("inside.example.com", "geospatial.json")
	if _, err := e.svc.SetVisibility(t.Context(), adminP, id, registry.VisibilityInternal); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.get("/agents/"+id), 404)
	wantStatus(t, e.do("GET", "/agents/"+id, nil, e.asAdmin(e.adminToken())), 200)
}

// TestLargeCardOfferedForDownload: a card over maxInlineCard is not shown
// inline on the agent and version pages, only offered whole (download,
// API); a small card is shown inline as before.
func TestLargeCardOfferedForDownload(t *testing.T) {
	e := newEnv(t)
	raw := largeCard()
	if len(raw) <= 64<<10 { // web.maxInlineCard
		t.Fatalf("test card %d bytes is not over 64 KiB", len(raw))
	}
	a := e.submit("big.example.com")
	e.record(a.ID, fetched{raw: raw})
	e.approve(a.ID)
	small := e.listed("geo.example.com", "geospatial.json")
	for _, tc := range []struct {
		path       string
		inline     bool
		link, size string
	}{
		{"/agents/" + a.ID, false, `download="agent-card.json"`, fmt.Sprintf("Download (%d bytes, exactly as served)", len(raw))},
		{"/agents/" + a.ID + "/versions/1", false, `/api/v1/agents/` + a.ID + `/versions/1`, fmt.Sprintf("(%d bytes of card)", len(raw))},
		{"/agents/" + small, true, `download="agent-card.json"`, "exactly as served"},
		{"/agents/" + small + "/versions/1", true, `/api/v1/agents/` + small + `/versions/1`, "bytes of card"},
	} {
		r := e.get(tc.path)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", tc.path, r.StatusCode)
		}
		if got := strings.Contains(r.body, `id="raw-json"`); got != tc.inline {
			t.Errorf("%s: card inline %v, want %v", tc.path, got, tc.inline)
		}
		if got := strings.Contains(r.body, `id="raw-too-large"`); got == tc.inline {
			t.Errorf("%s: too-large note %v, want %v", tc.path, got, !tc.inline)
		}
		if !strings.Contains(r.body, tc.link) || !strings.Contains(r.body, tc.size) {
			t.Errorf("%s: no %q / %q", tc.path, tc.link, tc.size)
		}
	}
	// No part of the large card's JSON is on its page.
	if r := e.get("/agents/" + a.ID); strings.Contains(r.body, "defaultInputModes") {
		t.Error("the large card's JSON is on its page")
	}
}
