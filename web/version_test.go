package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// versionedAgent is listed at version 1, then serves version 2 with one
// more skill and a version bump.
func versionedAgent(t *testing.T, e *env) string {
	id := e.listed("hotel.example.com", "hotel.json")
	e.record(id, fetched{raw: withCard(t, "hotel.json", map[string]any{"version": "2.0.0",
		"skills": []any{
			map[string]any{"id": "book-hotels", "name": "Book Hotels", "description": "Books hotels.", "tags": []any{"travel", "booking"}},
			map[string]any{"id": "cancel-booking", "name": "Cancel a booking", "description": "Cancels a hotel booking by reference.", "tags": []any{"travel", "cancel"}},
		}})})
	return id
}

// Every stored version opens on its own page: the card as served, its
// verdict, and the changes from the one before, skills shown as skills.
func TestVersionPages(t *testing.T) {
	e := newEnv(t)
	id := versionedAgent(t, e)
	d := parse(t, e.get("/agents/"+id))
	var links []string
	for _, a := range d.all("#history a.version-link") {
		h, _ := attr(a, "href")
		links = append(links, h)
	}
	if strings.Join(links, ",") != "/agents/"+id+"/versions/2,/agents/"+id+"/versions/1" {
		t.Fatalf("history links %v", links)
	}
	r := e.get("/agents/" + id + "/versions/2")
	wantStatus(t, r, 200)
	v := parse(t, r)
	if got := v.text("h1"); got != "Version 2" {
		t.Errorf("h1 %q", got)
	}
	if got := v.text("#changes h2"); got != "Changes from version 1" {
		t.Errorf("changes heading %q", got)
	}
	added := ""
	for _, li := range v.all("#changes li.change") {
		if strings.HasPrefix(text(li), "Skill added") {
			added = text(all(li, "ins.skill-change")[0])
		}
	}
	if added != "Cancel a booking cancel-booking: Cancels a hotel booking by reference. tags travel, cancel" {
		t.Errorf("added skill shown as %q", added)
	}
	if strings.Contains(v.text("#changes"), `{"`) {
		t.Errorf("a change is shown as JSON: %q", v.text("#changes"))
	}
	if got := v.text("#raw-json"); !strings.Contains(got, `"version": "2.0.0"`) {
		t.Errorf("raw card %q", clip(got))
	}
	if href, _ := attr(v.one(`nav.pager a[rel=prev]`), "href"); href != "/agents/"+id+"/versions/1" {
		t.Errorf("prev %q", href)
	}
	v1 := parse(t, e.get("/agents/"+id+"/versions/1"))
	if got := v1.text("#changes p"); got != "The first version Cardex stored." {
		t.Errorf("first version says %q", got)
	}
	if got := v1.text("#raw-json"); strings.Contains(got, "cancel-booking") {
		t.Error("version 1 shows version 2's card")
	}
	for _, p := range []string{"/versions/3", "/versions/0", "/versions/x"} {
		wantStatus(t, e.get("/agents/"+id+p), 404)
	}
	wantStatus(t, e.get("/agents/nope/versions/1"), 404)
}

func TestBrowserVersionPage(t *testing.T) {
	e := newEnv(t)
	id := versionedAgent(t, e)
	e.sync()
	ctx := tab(t)
	var h1 string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/agents/"+id),
		chromedp.Click(`#history a.version-link`, chromedp.ByQuery),
		chromedp.WaitVisible("#changes", chromedp.ByID),
		chromedp.Text("h1", &h1, chromedp.ByQuery),
	)
	if h1 != "Version 2" {
		t.Errorf("opened %q", h1)
	}
	screenshot(t, ctx, "agent-version.png")
	if over := overflowAt(t, ctx, e.srv.URL+"/agents/"+id+"/versions/2", 390); over > 0 {
		t.Errorf("the version page is %d px wider than 390 px", over)
	}
}
