package web_test

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// A long queue comes in pages of 25, every agent exactly once.
func TestQueuePages(t *testing.T) {
	e := newEnv(t)
	want := map[string]bool{}
	for i := range 60 {
		want[e.submit("p"+strconv.Itoa(i)+".example.com").ID] = true
	}
	tok := e.adminToken()
	seen := map[string]bool{}
	next, pages := "/admin?view=pending", 0
	for next != "" && pages < 10 {
		d := parse(t, e.do("GET", next, nil, e.asAdmin(tok)))
		rows := resultRowIDs(d)
		if len(rows) > 25 {
			t.Fatalf("page of %d rows", len(rows))
		}
		for _, id := range rows {
			if seen[id] || !want[id] {
				t.Fatalf("row %s repeated or unknown", id)
			}
			seen[id] = true
		}
		if got := d.text("#queue-total"); got != "60" {
			t.Errorf("total %q", got)
		}
		next = ""
		if ns := d.all(`nav.pager a[rel=next]`); len(ns) == 1 {
			next, _ = attr(ns[0], "href")
		}
		pages++
	}
	if pages != 3 || len(seen) != 60 {
		t.Errorf("%d pages, %d agents", pages, len(seen))
	}
	wantStatus(t, e.do("GET", "/admin?view=pending&page=garbage", nil, e.asAdmin(tok)), 400)
	wantStatus(t, e.do("GET", "/admin?view=nope", nil, e.asAdmin(tok)), 400)
	wantStatus(t, e.do("GET", "/admin?trust=nope", nil, e.asAdmin(tok)), 400)
}

// The signature and host filters narrow the tab and the counts.
func TestQueueFilters(t *testing.T) {
	e := newEnv(t)
	signed := e.submit("signed.example.com")
	e.record(signed.ID, fetched{raw: readCard(t, "hotel.json"), trust: registry.TrustVerified,
		signatures: []registry.SignatureResult{{Kid: "k1", Alg: "ES256", KeySource: "well-known", Status: "verified", Thumbprint: "tp"}}, thumbs: []string{"tp"}})
	plain := e.submit("plain.example.com")
	e.record(plain.ID, fetched{raw: readCard(t, "currency.json")})
	tok := e.adminToken()
	d := parse(t, e.do("GET", "/admin?view=pending&trust=verified", nil, e.asAdmin(tok)))
	if got := resultRowIDs(d); !slices.Equal(got, []string{signed.ID}) {
		t.Errorf("trust=verified lists %v", got)
	}
	d = parse(t, e.do("GET", "/admin?view=pending&host=PLAIN.example.com", nil, e.asAdmin(tok)))
	if got := resultRowIDs(d); !slices.Equal(got, []string{plain.ID}) {
		t.Errorf("host filter lists %v", got)
	}
	if got := d.text(`a[data-view=pending] .count`); got != "1" {
		t.Errorf("filtered pending count %q", got)
	}
	if href, _ := attr(d.one(`a[data-view=flagged]`), "href"); href != "/admin?host=plain.example.com&view=flagged" {
		t.Errorf("tab link keeps the filter? %q", href)
	}
}

// One bulk decision with one reason: each agent is bound to the version
// its row showed and gets its own audit entry; an agent whose card changed
// in between is left alone and listed back.
func TestQueueBulkApproveBoundToTheVersionShown(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for _, h := range []string{"a.example.com", "b.example.com", "c.example.com"} {
		a := e.submit(h)
		e.record(a.ID, fetched{raw: readCard(t, "hotel.json")})
		ids = append(ids, a.ID)
	}
	tok := e.adminToken()
	d := parse(t, e.do("GET", "/admin?view=pending", nil, e.asAdmin(tok)))
	var picks []string
	for _, box := range d.all(`#bulk input[name=agent]`) {
		v, _ := attr(box, "value")
		picks = append(picks, v)
	}
	if len(picks) != 3 || !strings.HasSuffix(picks[0], ":1") {
		t.Fatalf("checkboxes %v, want id:1 each", picks)
	}
	// c's card changes after the page was shown.
	e.record(ids[2], fetched{raw: withCard(t, "hotel.json", map[string]any{"version": "9.9.9"})})
	back, _ := attr(d.one(`#bulk input[name=back]`), "value")
	form := url.Values{"action": {"approve"}, "reason": {"batch of hotels"}, "agent": picks, "back": {back}}
	r := e.do("POST", "/admin/bulk", form, e.asAdmin(tok))
	wantStatus(t, r, 303)
	loc := r.Header.Get("Location")
	if loc != "/admin?done=approve&n=2&stale="+ids[2]+"&view=pending" {
		t.Errorf("redirect %q", loc)
	}
	for i, id := range ids {
		a, err := e.svc.Get(t.Context(), adminP, id)
		if err != nil {
			t.Fatal(err)
		}
		want := registry.StatusApproved
		if i == 2 {
			want = registry.StatusPending
		}
		if a.Status != want {
			t.Errorf("agent %d is %s, want %s", i, a.Status, want)
		}
	}
	es, _, err := e.svc.Audit(t.Context(), adminP, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var approvals int
	for _, en := range es {
		if en.Action == "approve" {
			approvals++
			if en.Reason != "batch of hotels" || en.Detail["versionSeq"] != float64(1) {
				t.Errorf("audit entry %+v", en)
			}
		}
	}
	if approvals != 2 {
		t.Errorf("%d approve entries, want 2", approvals)
	}
	d = parse(t, e.do("GET", loc, nil, e.asAdmin(tok)))
	if got := d.text("#bulk-done"); got != "Approved 2 agents." {
		t.Errorf("summary %q", got)
	}
	if got := d.text("#bulk-stale li"); got != ids[2] {
		t.Errorf("stale list %q", got)
	}
	// Bulk suspend of the flagged agent is bound to its candidate too.
	flagged := flaggedAgent(e, "flagged.example.com")
	d = parse(t, e.do("GET", "/admin?view=flagged", nil, e.asAdmin(tok)))
	v, _ := attr(d.one(`#bulk input[name=agent]`), "value")
	if v != flagged+":2" {
		t.Errorf("flagged row bound to %q, want the candidate 2", v)
	}
	r = e.do("POST", "/admin/bulk", url.Values{"action": {"suspend"}, "agent": {flagged + ":1"}}, e.asAdmin(tok))
	if loc := r.Header.Get("Location"); loc != "/admin?done=suspend&n=0&stale="+flagged {
		t.Errorf("suspend bound to a stale version: %q", loc)
	}
	// Bad input changes nothing.
	for _, f := range []url.Values{
		{"action": {"remove"}, "agent": {ids[2] + ":2"}},
		{"action": {"approve"}},
		{"action": {"approve"}, "agent": {ids[2]}},
		{"action": {"approve"}, "agent": {ids[2] + ":x"}},
	} {
		wantStatus(t, e.do("POST", "/admin/bulk", f, e.asAdmin(tok)), 400)
	}
	wantStatus(t, e.do("POST", "/admin/bulk", url.Values{"action": {"approve"}, "agent": {ids[2] + ":2"}}, nil), 401)
	if a, _ := e.svc.Get(t.Context(), adminP, ids[2]); a.Status != registry.StatusPending {
		t.Errorf("bad input changed the agent to %s", a.Status)
	}
}
