package fetch_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

// C.28 at the fetch level: an HTML error page with status 200 is fetched
// (the body is returned), and CheckJSON classifies it not_json.
func TestHTMLPage200IsNotJSONC28(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	for _, b := range []agentfleet.Behavior{agentfleet.HTMLPage, agentfleet.NotJSON} {
		a := fleet.Add(agentfleet.Agent{Behavior: b})
		resp, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if resp.StatusCode != 200 || len(resp.Body) == 0 {
			t.Errorf("%s: status %d, %d bytes", b, resp.StatusCode, len(resp.Body))
		}
		err = resp.CheckJSON()
		fe := wantClass(t, err, fetch.ClassNotJSON)
		if !errors.Is(err, fetch.ErrNotJSON) || fe.Hop != a.URL() || fe.HTTPStatus != 200 {
			t.Errorf("%s: %+v", b, fe)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	cases := []struct {
		ctype string
		body  string
		ok    bool
	}{
		{"application/json", `{"name":"a"}`, true},
		{"application/json; charset=utf-8", "\n  {\"name\":\"a\"}", true},
		{"", `{"name":"a"}`, true},
		{"text/plain", `{"name":"a"}`, true}, // static hosts serve .json as text/plain
		{"application/octet-stream", `{}`, true},
		{"application/problem+json", `{"title":"x"}`, true},
		{"application/jwk-set+json", `{"keys":[]}`, true},
		{"application/json", `[1,2]`, true}, // a JSON array: not_a_card is the parser's call
		{"application/json", `null`, true},
		{"text/html", `{"name":"a"}`, false},
		{"application/xhtml+xml", `<html/>`, false},
		{"image/png", "\x89PNG", false},
		{"application/json", ``, false},
		{"application/json", "   \n", false},
		{"application/json", "<!DOCTYPE html><html></html>", false},
		{"application/json", "\xef\xbb\xbf{}", false}, // BOM
		{"text/plain", "OK", false},
		{"application/json;;;", `{}`, false},
	}
	for _, c := range cases {
		r := &fetch.Response{URL: "http://127.0.0.1/x", StatusCode: 200, Header: http.Header{}, Body: []byte(c.body)}
		if c.ctype != "" {
			r.Header.Set("Content-Type", c.ctype)
		}
		err := r.CheckJSON()
		if (err == nil) != c.ok {
			t.Errorf("CheckJSON(%q, %q) = %v, want ok=%v", c.ctype, c.body, err, c.ok)
		}
		if err != nil && fetch.ClassOf(err) != fetch.ClassNotJSON {
			t.Errorf("class %q", fetch.ClassOf(err))
		}
	}
}
