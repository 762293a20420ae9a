package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/quick"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
	"github.com/cardexhq/cardex/search/corpus"
)

// The reference rendering of a search page: the reflective encoding
// (writeJSON of these types) that writeSearchPage replaced, kept here so
// the tests can hold the two to the same bytes.

// searchPage is GET /agents answered by the index (docs/api.md "Lists and
// search").
type searchPage struct {
	Agents        []searchAgent `json:"agents"`
	NextPageToken string        `json:"nextPageToken"`
	TotalSize     int           `json:"totalSize"`
	Facets        search.Facets `json:"facets"`
}

// searchAgent is the agent record plus, when q was given, why it matched.
type searchAgent struct {
	listItem
	Matches []search.Match `json:"matches,omitzero"`
}

// matchesJSON is never null with q: an agent matched by its own fields
// only may carry an empty list.
func matchesJSON(m []search.Match) []search.Match {
	if m == nil {
		return []search.Match{}
	}
	for i := range m {
		if m[i].Fragments == nil {
			m[i].Fragments = []string{}
		}
	}
	return m
}

// referenceSearchAgents is GET /agents as it was answered before
// writeSearchPage: search.Find with the Service itself, writeJSON.
func referenceSearchAgents(s *server) echo.HandlerFunc {
	return func(c echo.Context) error {
		r, err := searchParams(c, true)
		if err != nil {
			return err
		}
		page, err := search.Find(c.Request().Context(), s.search, s.svc, r.caller, r.query)
		if err != nil {
			return err
		}
		p, err := referencePage(page, r.query.Q)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, p)
	}
}

func referencePage(page *search.Page, q string) (searchPage, error) {
	out := searchPage{Agents: make([]searchAgent, 0, len(page.Agents)), NextPageToken: page.NextPageToken,
		TotalSize: page.TotalSize, Facets: page.Facets.Lists()}
	for _, f := range page.Agents {
		item, err := listJSON(f.Agent)
		if err != nil {
			return out, err
		}
		sa := searchAgent{listItem: item}
		if strings.TrimSpace(q) != "" {
			sa.Matches = matchesJSON(f.Matches)
		}
		out.Agents = append(out.Agents, sa)
	}
	return out, nil
}

// renderPage is writeSearchPage's body for page.
func renderPage(t *testing.T, page *search.Page, withMatches bool) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
	if err := writeSearchPage(c, page, withMatches); err != nil {
		t.Fatal(err)
	}
	if ct := rec.Header().Get("Content-Type"); ct != echo.MIMEApplicationJSON || rec.Code != http.StatusOK {
		t.Fatalf("status %d, Content-Type %q", rec.Code, ct)
	}
	return rec.Body.Bytes()
}

// awkward are strings every escaping rule of encoding/json applies to.
var awkward = []string{
	"plain", "", "</script><b>&amp;", "quote \" and back\\slash", "ctl \x00\x01\x07\x1f\x7f",
	"\b\f\n\r\t", "bad \xff\xfe utf-8 \xc3", "line\u2028sep\u2029", "caf\u00e9 \U0001F600 \u4e2d",
	"trailing \xe2\x80",
}

// fill sets every exported field of v, at any depth, to a value that is not
// the zero value (strings cycling through awkward), so a field added to a
// record later is rendered here and compared too. Recursive types stop
// at depth 8.
func fill(v reflect.Value, n *int) { fillDepth(v, n, 0) }

func fillDepth(v reflect.Value, n *int, depth int) {
	*n++
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(awkward[*n%len(awkward)])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) / 8)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillDepth(p.Elem(), n, depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillDepth(s.Index(i), n, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillDepth(k, n, depth+1)
		fillDepth(e, n, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, (*n%3)*123_456_000, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillDepth(v.Field(i), n, depth+1)
			}
		}
	}
}

// testCards are real cards: the specification's sample and corpus ones.
func testCards(t *testing.T) []*agentcard.Card {
	t.Helper()
	var cards []*agentcard.Card
	for _, name := range []string{cardV1, cardCurrency} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := agentcard.Parse(raw, agentcard.Options{CardURL: "https://agent.example.com/.well-known/agent-card.json"})
		if err != nil {
			t.Fatal(err)
		}
		cards = append(cards, p.Card)
	}
	g := corpus.New(7)
	for i := range 6 {
		cards = append(cards, g.Agent(i).Card)
	}
	return cards
}

// The hand-written encoder writes the bytes the reflective one wrote, for
// records with every field set (including the detail only one agent's
// record carries), with the optional ones absent, and with the awkward
// strings, with and without q.
func TestWriteSearchPageSameBytes(t *testing.T) {
	cards := testCards(t)
	n := 0
	var agents []search.Found
	for i, c := range cards {
		var full registry.Agent
		fill(reflect.ValueOf(&full).Elem(), &n)
		full.Card, full.CardView = c, nil
		var matches []search.Match
		fill(reflect.ValueOf(&matches).Elem(), &n)
		agents = append(agents, search.Found{Agent: full, Matches: matches})

		// The list form: liveness without detail, no error, no
		// signatures or problems, no catalog, nil matches and fragments.
		bare := full
		bare.LastError = &registry.FetchError{At: full.CreatedAt, Class: "timeout", Message: awkward[i%len(awkward)]}
		bare.Liveness = &registry.Liveness{State: registry.LivenessUnknown, Probing: i%2 == 0}
		bare.Signatures, bare.Problems, bare.Catalog = nil, nil, ""
		bare.LastFetchedAt, bare.NextFetchAt = nil, nil
		if i%2 == 1 {
			bare.Card = nil
			bare.Liveness = nil
		}
		var bm []search.Match
		if i%3 == 1 {
			bm = []search.Match{{SkillID: "s", Field: "name"}, {Field: "description", Fragments: []string{"<mark>w</mark>"}}}
		} else if i%3 == 2 {
			bm = []search.Match{}
		}
		agents = append(agents, search.Found{Agent: bare, Matches: bm})
		agents = append(agents, search.Found{Agent: registry.Agent{ID: "zero"}})
	}
	var facets search.Facets
	fill(reflect.ValueOf(&facets).Elem(), &n)
	for _, page := range []*search.Page{
		{Agents: agents, NextPageToken: "tok</", TotalSize: 12345, Facets: facets},
		{Agents: []search.Found{}},
		{Agents: agents[:1]},
	} {
		// The same page as ListedSummaries hands it out: each card as its
		// stored summary, the card itself not read.
		viewed := &search.Page{Agents: slices.Clone(page.Agents), NextPageToken: page.NextPageToken, TotalSize: page.TotalSize, Facets: page.Facets}
		for i := range viewed.Agents {
			a := &viewed.Agents[i].Agent
			if a.Card == nil {
				continue
			}
			b, err := a.Card.SummaryJSON()
			if err != nil {
				t.Fatal(err)
			}
			a.CardView = &registry.CardView{Summary: b, Shape: a.Card.Shape, ProtocolVersions: a.Card.ProtocolVersions}
			a.Card, a.Problems = nil, nil
		}
		for _, q := range []string{"", "weather"} {
			ref, err := referencePage(page, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(ref)
			if err != nil {
				t.Fatal(err)
			}
			for form, p := range map[string]*search.Page{"cards": page, "views": viewed} {
				got := renderPage(t, p, q != "")
				if !bytes.Equal(got, want) {
					i := 0
					for i < len(got) && i < len(want) && got[i] == want[i] {
						i++
					}
					t.Fatalf("q=%q, %s: bytes differ at %d:\n got …%.300s\nwant …%.300s", q, form, i, got[max(0, i-100):], want[max(0, i-100):])
				}
			}
		}
	}
}

// appendJSONString writes what encoding/json writes for any string.
func TestAppendJSONString(t *testing.T) {
	same := func(s string) bool {
		want, err := json.Marshal(s)
		return err == nil && bytes.Equal(appendJSONString(nil, s), want)
	}
	for _, s := range awkward {
		if !same(s) {
			t.Errorf("%q: got %s", s, appendJSONString(nil, s))
		}
	}
	for b := range 256 {
		if s := string([]byte{'a', byte(b), 'z'}); !same(s) {
			t.Errorf("byte %#x: got %s", b, appendJSONString(nil, s))
		}
	}
	if err := quick.Check(same, &quick.Config{MaxCount: 5000}); err != nil {
		t.Error(err)
	}
	if got := appendJSONString([]byte("x:"), "a"); string(got) != `x:"a"` {
		t.Errorf("appends to dst: %s", got)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// Through the whole server on SQLite and PostgreSQL, GET /api/v1/agents
// answers the bytes the reference rendering answers for the same request,
// for each caller, twice, with the cards copied from their stored views,
// and a new version's view replaces the old one.
func TestSearchPageSameBytesAsReference(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)
		e := h.srv.Config.Handler.(*echo.Echo)
		s := &server{svc: h.svc, search: h.idx}
		get(e, "/api/v1/reference-agents", referenceSearchAgents(s))
		reference := func(query, token string) []byte {
			hr, err := http.NewRequestWithContext(h.ctx(), http.MethodGet, h.srv.URL+"/api/v1/reference-agents?"+query, nil)
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				hr.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := h.srv.Client().Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("reference %s: %d %v %s", query, res.StatusCode, err, b)
			}
			return b
		}
		check := func() {
			t.Helper()
			for _, query := range []string{"pageSize=20", "q=weather&pageSize=20", "q=weather+forecast", "q=acme&sort=name&pageSize=2",
				"tag=maps", "q=zzzz-nothing", "capability=streaming&q=currency"} {
				for _, token := range []string{"", c.reader, c.admin} {
					for pass := range 2 {
						got := h.do(req{method: "GET", path: "/api/v1/agents?" + query, token: token})
						got.expectStatus(t, http.StatusOK)
						if want := reference(query, token); !bytes.Equal(got.body, want) {
							t.Fatalf("%s (pass %d): body\n%s\nwant\n%s", query, pass, got.body, want)
						}
					}
				}
			}
		}
		check()
		// A new card for the weather agent: version 2 becomes current.
		h.svcClock.Advance(time.Minute)
		h.fetch(c.weather.ID, testCard{name: "Weather Oracle Two", description: "Forecasts, now hourly.", provider: "Acme",
			skills: []skill{{id: "forecast", name: "Hourly forecast", description: "Weather by the hour.", tags: []string{"weather"}}}}.json("weather.example.com"))
		h.sync()
		page := h.list("q=weather", "")
		var seen bool
		for _, a := range page.Agents {
			if a.ID == c.weather.ID {
				seen = true
				if a.Summary == nil || a.Summary.Name != "Weather Oracle Two" || a.VersionSeq != 2 {
					t.Fatalf("after the new version: summary %+v, versionSeq %d", a.Summary, a.VersionSeq)
				}
			}
		}
		if !seen {
			t.Fatalf("weather agent not listed: %v", page.ids())
		}
		check()
	})
}

// Concurrent search pages share the page buffers: each answers the bytes
// it answers alone (run with -race to check the sharing).
func TestSearchPagesConcurrent(t *testing.T) {
	store := registrytest.SQLite(t)
	h := newSearchHarness(t, store)
	c := newCatalogue(h)
	queries := []string{"q=weather", "q=acme&pageSize=2", "pageSize=20", "q=currency", "tag=maps&q=storm"}
	want := map[string][]byte{}
	for _, q := range queries {
		for _, token := range []string{"", c.admin} {
			r := h.do(req{method: "GET", path: "/api/v1/agents?" + q, token: token})
			r.expectStatus(t, http.StatusOK)
			want[q+token] = r.body
		}
	}
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				q, token := queries[(g+i)%len(queries)], []string{"", c.admin}[i%2]
				hr, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.srv.URL+"/api/v1/agents?"+q, nil)
				if err != nil {
					errs <- err
					return
				}
				if token != "" {
					hr.Header.Set("Authorization", "Bearer "+token)
				}
				res, err := h.srv.Client().Do(hr)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK || !bytes.Equal(b, want[q+token]) {
					errs <- fmt.Errorf("%s (token %t): status %d, %v, body differs: %t", q, token != "", res.StatusCode, err, !bytes.Equal(b, want[q+token]))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
