package api

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// docs/threats.md A.7: request body abuse is refused before anything is
// stored.
func TestSubmitBodyAbuse(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
		big := `{"cardUrl":"https://big.example.com/","pad":"` + strings.Repeat("x", 10<<20) + `"}`
		cases := []struct {
			name   string
			body   string
			ctype  string
			status int
			slug   string
		}{
			{"10 MB body", big, "application/json", http.StatusRequestEntityTooLarge, "body-too-large"},
			{"just over 64 KiB", `{"cardUrl":"` + strings.Repeat("a", 64<<10) + `"}`, "application/json", http.StatusRequestEntityTooLarge, "body-too-large"},
			{"100k nesting", deep, "application/json", http.StatusBadRequest, "invalid-json"},
			{"100k nesting in a member", `{"cardUrl":` + deep + `}`, "application/json", http.StatusBadRequest, "invalid-json"},
			{"trailing garbage", `{"cardUrl":"https://t.example.com/"} {"x":1}`, "application/json", http.StatusBadRequest, "invalid-json"},
			{"trailing text", `{"cardUrl":"https://t.example.com/"}garbage`, "application/json", http.StatusBadRequest, "invalid-json"},
			{"unknown field", `{"cardUrl":"https://u.example.com/","owner":"me"}`, "application/json", http.StatusBadRequest, "unknown-field"},
			{"case-variant field", `{"CardURL":"https://u.example.com/"}`, "application/json", http.StatusBadRequest, "unknown-field"},
			{"duplicate key", `{"cardUrl":"https://good.example.com/","cardUrl":"https://evil.example.com/"}`, "application/json", http.StatusBadRequest, "invalid-json"},
			{"text/plain", `{"cardUrl":"https://p.example.com/"}`, "text/plain", http.StatusUnsupportedMediaType, "unsupported-media-type"},
			{"form", `cardUrl=https://p.example.com/`, "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, "unsupported-media-type"},
			{"latin1 charset", `{"cardUrl":"https://p.example.com/"}`, "application/json; charset=iso-8859-1", http.StatusUnsupportedMediaType, "unsupported-media-type"},
			{"no content type", `{"cardUrl":"https://p.example.com/"}`, "", http.StatusUnsupportedMediaType, "unsupported-media-type"},
			{"invalid UTF-8", "{\"cardUrl\":\"https://\xff\xfe.example.com/\"}", "application/json", http.StatusBadRequest, "invalid-json"},
			{"lone surrogate", `{"cardUrl":"https://a\ud800.example.com/"}`, "application/json", http.StatusBadRequest, "invalid-json"},
			{"empty body", ``, "application/json", http.StatusBadRequest, "invalid-json"},
			{"not an object", `["https://a.example.com/"]`, "application/json", http.StatusBadRequest, "validation-failed"},
			{"wrong type", `{"cardUrl":42}`, "application/json", http.StatusBadRequest, "validation-failed"},
			{"missing cardUrl", `{}`, "application/json", http.StatusBadRequest, "validation-failed"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := h.do(req{method: "POST", path: "/api/v1/agents", body: strings.NewReader(tc.body), header: []string{"Content-Type", tc.ctype}})
				r.expectProblem(t, tc.status, tc.slug)
			})
		}
		assertNothingStored(t, h)
	})
}

func TestFieldErrorsNamePointers(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		p := h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":42}`)}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/cardUrl" || p.Errors[0].Code != "type" {
			t.Fatalf("errors %+v", p.Errors)
		}
		p = h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://x.example.com/","a/b~c":1}`)}).
			expectProblem(t, http.StatusBadRequest, "unknown-field")
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/a~1b~0c" || p.Errors[0].Code != "unknown-field" {
			t.Fatalf("errors %+v", p.Errors)
		}
		// The content type check accepts the charset parameter JSON allows.
		h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://cs.example.com/"}`),
			header: []string{"Content-Type", "application/json; charset=UTF-8"}}).expectStatus(t, http.StatusAccepted)
	})
}

// A chunked body without Content-Length is bounded by the reader, not the
// header (A.7: a lying or missing length).
func TestChunkedBodyLimit(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		body := `{"cardUrl":"https://c.example.com/","x":"` + strings.Repeat("y", 200<<10) + `"}`
		// Wrapping the reader hides its length, so the client sends it chunked.
		r := h.do(req{method: "POST", path: "/api/v1/agents", body: struct{ *bytes.Reader }{bytes.NewReader([]byte(body))}})
		r.expectProblem(t, http.StatusRequestEntityTooLarge, "body-too-large")
		assertNothingStored(t, h)
	})
}
