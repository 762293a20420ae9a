package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
)

// An agent a catalog entry brings with representativeQueries is found, in
// the API and on the web catalogue, by a query that matches only one of
// its queries (nothing of its card), and the match shows that query.
func TestServeCatalogRepresentativeQueries(t *testing.T) {
	const card = `{"name":"FX","description":"Money tools","version":"1.0.0","supportedInterfaces":[{"url":"http://127.0.0.1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"rates","name":"Rates","description":"Quotes rates","tags":["finance"]}]}`
	var base string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/catalog.json":
			w.Header().Set("Content-Type", "application/ai-catalog+json")
			fmt.Fprintf(w, `{"specVersion":"1.0","entries":[
 {"identifier":"urn:air:x:agent:fx","type":"application/a2a-agent-card+json","url":"%s/fx.json",
  "representativeQueries":["how many zlotys is a euro?", 42, "convert dollars"]}]}`, base)
		case "/fx.json":
			fmt.Fprint(w, card)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	base = site.URL
	data := filepath.Join(t.TempDir(), "data")
	token := adminToken(t, data)
	// No probes: the card's interface does not answer, and a probe landing
	// before the query would add a ranked-lower match to the hit.
	s := startInProcess(t, data, "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", "--crawl-tick", "1s", "--read-rate", "0", "--probe-interval", "0")
	var sub struct {
		Agents []struct {
			ID string `json:"id"`
		} `json:"agents"`
	}
	if code := post(t, s.base+"/api/v1/agents", "", fmt.Sprintf(`{"catalogUrl":%q}`, site.URL+"/catalog.json"), &sub); code != http.StatusAccepted || len(sub.Agents) != 1 {
		t.Fatalf("catalog submission: %d %+v", code, sub)
	}
	id := sub.Agents[0].ID
	var rec struct {
		VersionSeq     int64    `json:"versionSeq"`
		CatalogQueries []string `json:"catalogQueries"`
	}
	polltest.Until(t, "the agent's card", 20*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents/"+id, token)
		json.Unmarshal([]byte(body), &rec)
		return rec.VersionSeq == 1
	})
	if strings.Join(rec.CatalogQueries, "|") != "how many zlotys is a euro?|convert dollars" {
		t.Fatalf("record's catalogQueries %q", rec.CatalogQueries)
	}
	if code := post(t, s.base+"/api/v1/agents/"+id+"/approve", token, `{"versionSeq":1}`, nil); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	type match struct {
		SkillID   string   `json:"skillId"`
		Field     string   `json:"field"`
		Fragments []string `json:"fragments"`
	}
	var page struct {
		Agents []struct {
			ID             string   `json:"id"`
			CatalogQueries []string `json:"catalogQueries"`
			Matches        []match  `json:"matches"`
		} `json:"agents"`
	}
	polltest.Until(t, "the agent found by its representative query", 20*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents?q=zlotys", "")
		page.Agents = nil
		json.Unmarshal([]byte(body), &page)
		return len(page.Agents) == 1
	})
	a := page.Agents[0]
	want := []match{{SkillID: "", Field: "representativeQueries", Fragments: []string{"how many <mark>zlotys</mark> is a euro?"}}}
	if a.ID != id || fmt.Sprint(a.Matches) != fmt.Sprint(want) || len(a.CatalogQueries) != 2 {
		t.Fatalf("hit %+v, want matches %+v", a, want)
	}
	code, _, html := get(t, s.base+"/?q=zlotys", "")
	if code != http.StatusOK || !strings.Contains(html, `data-agent-id="`+id+`"`) ||
		!strings.Contains(html, "how many <mark>zlotys</mark> is a euro?") {
		t.Fatalf("web catalogue %d: %.3000s", code, html)
	}
	// Cardex's own catalog passes the queries on.
	_, _, own := get(t, s.base+"/.well-known/ai-catalog.json", "")
	if !strings.Contains(own, `"representativeQueries": [`+"\n"+`        "how many zlotys is a euro?",`) {
		t.Errorf("own catalog: %.3000s", own)
	}
	// A word of no query and no card finds nothing.
	_, _, body := get(t, s.base+"/api/v1/agents?q=pesos", "")
	if !strings.Contains(body, `"totalSize":0`) {
		t.Fatalf("pesos: %.500s", body)
	}
}
