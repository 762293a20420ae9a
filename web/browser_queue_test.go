package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cardexhq/cardex/registry"
)

// Select all on the review queue picks every row of the page, and the
// bulk decision then applies to each at the version shown.
func TestBrowserQueueSelectAll(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for _, h := range []string{"one.example.com", "two.example.com", "three.example.com"} {
		a := e.submit(h)
		e.record(a.ID, fetched{raw: readCard(t, "hotel.json")})
		ids = append(ids, a.ID)
	}
	tok := e.adminToken()
	ctx := tab(t)
	var picked int
	var partial bool
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/admin"),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible("#pick-all", chromedp.ByID),
		chromedp.Click("#pick-all", chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#bulk input[name=agent]:checked").length`, &picked),
	)
	if picked != 3 {
		t.Fatalf("select all picked %d rows, want 3", picked)
	}
	run(t, ctx,
		chromedp.Click("#pick-"+ids[0], chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("pick-all").indeterminate`, &partial),
	)
	if !partial {
		t.Error("with one row unpicked, select all is not shown as partly checked")
	}
	run(t, ctx,
		chromedp.Click("#pick-all", chromedp.ByID),
		chromedp.SetValue("#bulk-action", "approve", chromedp.ByID),
		chromedp.Submit("#bulk", chromedp.ByID),
		chromedp.WaitVisible("#bulk-done", chromedp.ByID),
	)
	for _, id := range ids {
		if a, _ := e.svc.Get(t.Context(), registry.Principal{Role: registry.RoleAdmin}, id); a.Status != registry.StatusApproved {
			t.Errorf("%s is %s after approving all", id, a.Status)
		}
	}
}
