package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// spec is openapi.yaml loaded once; every response of every API test is
// validated against it (the hand-written handlers and the document must
// agree).
var spec = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

var specRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := spec()
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// fakeClock is the rate limiters' clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is a real API over a real Service and store, on loopback HTTP.
type harness struct {
	t        *testing.T
	store    *registry.Store
	svc      *registry.Service
	srv      *httptest.Server
	clock    *fakeClock // the rate limiters' clock
	svcClock *fakeClock // the Service's clock (token expiry, timestamps)
	logs     *syncBuffer
}

// newHarness serves the API over store. Rate limits are off unless opts
// set them; the Service allows http and loopback card URLs so tests can
// name 127.0.0.1 where they need to.
func newHarness(t *testing.T, store *registry.Store, opts ...func(*Config)) *harness {
	t.Helper()
	return newHarnessWith(t, store, nil, opts...)
}

// newHarnessWith is newHarness with svcOpt applied to the Service's
// configuration (network policy, claim fetcher, approval policy).
func newHarnessWith(t *testing.T, store *registry.Store, svcOpt func(*registry.ServiceConfig), opts ...func(*Config)) *harness {
	t.Helper()
	h := &harness{
		t:        t,
		store:    store,
		clock:    &fakeClock{now: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)},
		svcClock: &fakeClock{now: time.Now().UTC()},
		logs:     &syncBuffer{},
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svcCfg := registry.ServiceConfig{Logger: log, Now: h.svcClock.Now}
	if svcOpt != nil {
		svcOpt(&svcCfg)
	}
	h.svc = registry.NewService(store, svcCfg)
	cfg := Config{Service: h.svc, Ready: store, Logger: log, Now: h.clock.Now}
	for _, o := range opts {
		o(&cfg)
	}
	handler, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(handler)
	t.Cleanup(h.srv.Close)
	return h
}

// eachStore runs fn on SQLite and on PostgreSQL.
func eachStore(t *testing.T, fn func(t *testing.T, store *registry.Store)) {
	registrytest.EachStore(t, fn)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %d body %q: %v", r.status, r.body, err)
	}
}

func (r response) problem(t *testing.T) problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("status %d Content-Type %q, want application/problem+json; body %s", r.status, ct, r.body)
	}
	var p problem
	r.json(t, &p)
	return p
}

// expectProblem asserts the status and the problem slug.
func (r response) expectProblem(t *testing.T, status int, slug string) problem {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	p := r.problem(t)
	if p.Type != "/problems/"+slug || p.Status != status || p.Title == "" {
		t.Fatalf("problem %+v, want type /problems/%s status %d", p, slug, status)
	}
	return p
}

func (r response) expectStatus(t *testing.T, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
}

// req is one request; header pairs are "Name", "value".
type req struct {
	method, path string
	body         io.Reader
	token        string
	header       []string
}

// do sends the request and validates the response against openapi.yaml:
// an undocumented status, header or body shape fails the test.
func (h *harness) do(r req) response {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 30*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, r.method, h.srv.URL+r.path, r.body)
	if err != nil {
		h.t.Fatal(err)
	}
	if r.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for i := 0; i+1 < len(r.header); i += 2 {
		if r.header[i+1] == "" {
			hr.Header.Del(r.header[i])
		} else {
			hr.Header.Set(r.header[i], r.header[i+1])
		}
	}
	res, err := h.srv.Client().Do(hr)
	if err != nil {
		h.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	out := response{status: res.StatusCode, header: res.Header, body: body}
	if err := validateResponse(hr, out); err != nil {
		h.t.Fatalf("%s %s → %d does not match openapi.yaml: %v\nbody: %.2000s", r.method, r.path, out.status, err, body)
	}
	return out
}

// validateResponse checks one response against the document. Paths the
// document does not know (unknown routes) must still answer a Problem.
func validateResponse(hr *http.Request, r response) error {
	doc, err := spec()
	if err != nil {
		return err
	}
	router, err := specRouter()
	if err != nil {
		return err
	}
	route, params, err := router.FindRoute(hr)
	if err != nil {
		if !errors.Is(err, routers.ErrPathNotFound) && !errors.Is(err, routers.ErrMethodNotAllowed) {
			return err
		}
		if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
			return errors.New("an undocumented route answered something other than 404 or 405")
		}
		if strings.HasPrefix(hr.URL.Path, "/ard/") {
			// The ARD registry API answers in ARD's envelope, routed or not.
			var env map[string]string
			if err := json.Unmarshal(r.body, &env); err != nil || len(env) != 2 || env["errorCode"] == "" || env["message"] == "" {
				return errors.New("an undocumented /ard route answered no ARD error envelope")
			}
			return nil
		}
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			return errors.New("undocumented route answered Content-Type " + ct)
		}
		var v any
		if err := json.Unmarshal(r.body, &v); err != nil {
			return err
		}
		return doc.Components.Schemas["Problem"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors())
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route},
		Status:                 r.status,
		Header:                 r.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(r.body)
	return openapi3filter.ValidateResponse(hr.Context(), in)
}

func jsonBody(s string) io.Reader { return strings.NewReader(s) }

// decodeAndValidate is do's validation for goroutines, which must not call
// t.Fatal: it reads, validates and decodes, returning what went wrong.
func decodeAndValidate(hr *http.Request, res *http.Response, r *response, v any) error {
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	r.body = body
	if err := validateResponse(hr, *r); err != nil {
		return fmt.Errorf("%s %s → %d does not match openapi.yaml: %w", hr.Method, hr.URL.Path, r.status, err)
	}
	return json.Unmarshal(body, v)
}

// ctx bounds a direct Service call, so a stuck database fails the test
// with a deadline instead of hanging the run.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(h.t.Context(), 30*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}
