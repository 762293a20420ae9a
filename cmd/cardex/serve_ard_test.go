package main

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
)

// docs/discovery.md "Identifiers": a publisher's identifier survives the
// whole way — crawled from its ARD document (ard.json wins over its AI
// Catalog), kept in the API record with where it came from, written in
// Cardex's ard.json and AI Catalog, and answered by ARD lookup, in either
// spelling; an identifier in another domain's namespace is provenance
// only, and Cardex names that agent itself, with no urn:air in the
// agent's host's name.
func TestServeARDIdentifiersEndToEnd(t *testing.T) {
	card := func(name string) string {
		return `{"name":"` + name + `","description":"Money tools","version":"1.0.0","supportedInterfaces":[{"url":"http://127.0.0.1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"rates","name":"Rates","description":"Quotes rates","tags":["finance"]}]}`
	}
	var base string
	var catalogHits atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/ard.json":
			fmt.Fprintf(w, `{"entries":[
 {"identifier":"urn:ai:127.0.0.1:agent:fx","displayName":"FX","type":"application/agent-card+json","url":"%[1]s/fx.json",
  "publisher":{"identifier":"did:web:127.0.0.1","displayName":"Loopback Money"},"representativeQueries":["convert zlotys","fx rate"]},
 {"identifier":"urn:air:bank.example:agent:tax","displayName":"Tax","type":"application/a2a-agent-card+json","url":"%[1]s/tax.json"}]}`, base)
		case "/.well-known/ai-catalog.json":
			catalogHits.Add(1)
			fmt.Fprintf(w, `{"specVersion":"0.9","entries":[{"identifier":"urn:air:127.0.0.1:agent:old","type":"application/a2a-agent-card+json","url":"%s/old.json"}]}`, base)
		case "/fx.json":
			fmt.Fprint(w, card("FX"))
		case "/tax.json":
			fmt.Fprint(w, card("Tax"))
		case "/old.json":
			fmt.Fprint(w, card("Old"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	base = site.URL
	data := filepath.Join(t.TempDir(), "data")
	token := adminToken(t, data)
	s := startInProcess(t, data, "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", "--crawl-tick", "1s", "--read-rate", "0")
	var sub struct {
		Agents []struct {
			ID      string `json:"id"`
			CardURL string `json:"cardUrl"`
		} `json:"agents"`
	}
	if code := post(t, s.base+"/api/v1/agents", "", fmt.Sprintf(`{"catalogUrl":%q}`, site.URL+"/.well-known/ai-catalog.json"), &sub); code != http.StatusAccepted || len(sub.Agents) != 2 {
		t.Fatalf("catalog submission: %d %+v", code, sub)
	}
	if n := catalogHits.Load(); n != 0 {
		t.Fatalf("ai-catalog.json read %d times though ard.json answered", n)
	}
	ids := map[string]string{}
	for _, a := range sub.Agents {
		ids[strings.TrimPrefix(a.CardURL, base)] = a.ID
	}
	fx, tax := ids["/fx.json"], ids["/tax.json"]
	type source struct {
		Document   string `json:"document"`
		Identifier string `json:"identifier"`
		URN        string `json:"urn"`
		Publisher  *struct {
			Identifier  string `json:"identifier"`
			DisplayName string `json:"displayName"`
		} `json:"publisher"`
	}
	for _, id := range []string{fx, tax} {
		var rec struct {
			VersionSeq int64 `json:"versionSeq"`
		}
		polltest.Until(t, "the agent's card", 20*time.Second, func() bool {
			_, _, body := get(t, s.base+"/api/v1/agents/"+id, token)
			json.Unmarshal([]byte(body), &rec)
			return rec.VersionSeq == 1
		})
		if code := post(t, s.base+"/api/v1/agents/"+id+"/approve", token, `{"versionSeq":1}`, nil); code != http.StatusOK {
			t.Fatalf("approve: %d", code)
		}
	}
	var rec struct {
		CatalogSource source `json:"catalogSource"`
	}
	_, _, body := get(t, s.base+"/api/v1/agents/"+fx, "")
	json.Unmarshal([]byte(body), &rec)
	if src := rec.CatalogSource; src.Document != base+"/.well-known/ard.json" || src.Identifier != "urn:ai:127.0.0.1:agent:fx" ||
		src.URN != "urn:air:127.0.0.1:agent:fx" || src.Publisher == nil || src.Publisher.DisplayName != "Loopback Money" {
		t.Fatalf("provenance: %s", body)
	}

	// Cardex's ARD document and AI Catalog.
	polltest.Until(t, "both agents in ard.json", 20*time.Second, func() bool {
		_, _, doc := get(t, s.base+"/.well-known/ard.json", "")
		return strings.Contains(doc, `"displayName": "Tax"`) && strings.Contains(doc, `"displayName": "FX"`)
	})
	type entry struct {
		Identifier            string   `json:"identifier"`
		DisplayName           string   `json:"displayName"`
		Type                  string   `json:"type"`
		URL                   string   `json:"url"`
		RepresentativeQueries []string `json:"representativeQueries"`
		Publisher             *struct {
			Identifier string `json:"identifier"`
		} `json:"publisher"`
	}
	var ard struct {
		SpecVersion string  `json:"specVersion"`
		Entries     []entry `json:"entries"`
	}
	_, _, doc := get(t, s.base+"/.well-known/ard.json", "")
	json.Unmarshal([]byte(doc), &ard)
	byURL := map[string]entry{}
	for _, e := range ard.Entries {
		byURL[e.URL] = e
	}
	reg := byURL[s.base+"/ard"]
	if reg.Type != "application/ai-registry+json" || byURL[base+"/fx.json"].Identifier != "urn:air:127.0.0.1:agent:fx" ||
		strings.Join(byURL[base+"/fx.json"].RepresentativeQueries, "|") != "convert zlotys|fx rate" ||
		byURL[base+"/tax.json"].Identifier != "urn:air:127.0.0.1:cardex:"+tax {
		t.Fatalf("ard.json: %s", doc)
	}
	var cat struct {
		SpecVersion string  `json:"specVersion"`
		Entries     []entry `json:"entries"`
	}
	_, _, doc = get(t, s.base+"/.well-known/ai-catalog.json", "")
	json.Unmarshal([]byte(doc), &cat)
	byURL = map[string]entry{}
	for _, e := range cat.Entries {
		byURL[e.URL] = e
	}
	if cat.SpecVersion != "0.9" || byURL[base+"/fx.json"].Identifier != "urn:air:127.0.0.1:agent:fx" ||
		byURL[base+"/fx.json"].Publisher == nil || byURL[base+"/fx.json"].Publisher.Identifier != "did:web:127.0.0.1" ||
		byURL[base+"/tax.json"].Identifier != s.base+"/agents/"+tax || byURL[base+"/tax.json"].Publisher != nil {
		t.Fatalf("ai-catalog.json: %s", doc)
	}

	// ARD lookup by what the documents say, and by the original spelling.
	for ident, want := range map[string]string{
		"urn:air:127.0.0.1:agent:fx":      "FX",
		"urn:ai:127.0.0.1:agent:fx":       "FX",
		"urn:air:127.0.0.1:cardex:" + tax: "Tax",
		s.base + "/agents/" + tax:         "Tax",
		"urn:air:bank.example:agent:tax":  "",
		"urn:air:127.0.0.1:agent:old":     "",
	} {
		code, _, body := get(t, s.base+"/ard/agents/"+url.PathEscape(ident), "")
		var e entry
		json.Unmarshal([]byte(body), &e)
		if (want == "" && (code != 404 || !strings.Contains(body, `"errorCode":"NOT_FOUND"`))) || (want != "" && (code != 200 || e.DisplayName != want)) {
			t.Errorf("lookup %s: %d %s", ident, code, body)
		}
	}

	// The agent page shows where the agent came from.
	code, _, page := get(t, s.base+"/agents/"+fx, "")
	if code != 200 || !strings.Contains(page, `id="catalog-source"`) || !strings.Contains(page, html.EscapeString(base+"/.well-known/ard.json")) ||
		!strings.Contains(page, "urn:ai:127.0.0.1:agent:fx") || !strings.Contains(page, "Loopback Money") {
		t.Fatalf("agent page: %.4000s", page)
	}
	_, _, page = get(t, s.base+"/agents/"+tax, "")
	if !strings.Contains(page, `id="catalog-identifier-foreign"`) {
		t.Fatalf("agent page of the foreign identifier: %.4000s", page)
	}
}
