package a2a

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/discover/discovertest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// server is the A2A surface over a seeded registry on loopback.
type server struct {
	t   testing.TB
	f   *discovertest.Fixture
	srv *httptest.Server
}

func newServer(t testing.TB, store *registry.Store, opts ...func(*Config)) *server {
	t.Helper()
	f := discovertest.New(t, store)
	cfg := Config{Finder: f.Finder, Gate: &discover.Gate{Authenticate: f.Svc.Authenticate}}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &server{t: t, f: f, srv: srv}
}

func sqliteServer(t testing.TB, opts ...func(*Config)) *server {
	return newServer(t, registrytest.SQLite(t), opts...)
}

// bearer is an http.Client that sends the token on every request.
func bearer(token string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// response is a raw HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (s *server) do(method, path, body string, header ...string) response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

// rpc posts a JSON-RPC request and decodes the envelope.
func (s *server) rpc(body string, header ...string) (response, rpcEnvelope) {
	s.t.Helper()
	r := s.do("POST", JSONRPCPath, body, header...)
	var env rpcEnvelope
	if r.header.Get("Content-Type") == "text/event-stream" {
		// A stream of one event (a refused streaming method).
		data, ok := strings.CutPrefix(string(r.body), "data: ")
		if !ok || !strings.HasSuffix(data, "\n\n") || strings.Count(data, "\n") != 2 {
			s.t.Fatalf("not one event: %q", r.body)
		}
		r.body = []byte(strings.TrimSuffix(data, "\n\n"))
	}
	if len(r.body) > 0 {
		if err := json.Unmarshal(r.body, &env); err != nil {
			s.t.Fatalf("decode %s: %v", r.body, err)
		}
	}
	return r, env
}

type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (e rpcEnvelope) code(t testing.TB) int {
	t.Helper()
	if e.Error == nil {
		t.Fatalf("expected an error, got result %s", e.Result)
	}
	return e.Error.Code
}

// answer is the data part of an answer.
type answer struct {
	Agents        []discover.Agent `json:"agents"`
	TotalSize     int              `json:"totalSize"`
	NextPageToken string           `json:"nextPageToken"`
}

func ids(agents []discover.Agent) string {
	var out []string
	for _, a := range agents {
		out = append(out, a.Name)
	}
	return strings.Join(out, ",")
}

func compact(t testing.TB, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
