// Package probertest serves fake A2A endpoints on loopback for the prober's
// tests, benchmark and the demo: agents that answer JSON-RPC (v1.0 and
// v0.3), HTTP+JSON and gRPC, that need credentials, answer HTML, hang,
// reset the connection, fail with 503 or 429, or redirect to a reserved
// address. Every request is counted, and a request that would create work
// (sending a message, cancelling a task, any write over HTTP+JSON) is
// recorded as forbidden so tests can assert that probes never make one.
package probertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Behavior is what one fake endpoint does.
type Behavior string

// Behaviors.
const (
	JSONRPCv1       Behavior = "jsonrpc-1.0"      // GetTask → -32001; tasks/get → -32601
	JSONRPCv03      Behavior = "jsonrpc-0.3"      // tasks/get → -32001; GetTask → -32601
	JSONRPCStrict   Behavior = "jsonrpc-strict"   // A2A-Version ≠ 1.0 → HTTP 500 with -32009
	RESTv1          Behavior = "rest-1.0"         // GET /tasks/{id} → 404 JSON TASK_NOT_FOUND
	RESTv03         Behavior = "rest-0.3"         // GET /v1/tasks/{id} → 404 {"code":-32001}
	AuthRequired    Behavior = "auth"             // 401 with a JSON body
	HTML            Behavior = "html"             // 200 text/html
	NotJSONRPC      Behavior = "json-not-rpc"     // 200 JSON that is no JSON-RPC envelope
	Hang            Behavior = "hang"             // never answers (until the fleet closes)
	Reset           Behavior = "reset"            // resets the connection
	Unavailable     Behavior = "unavailable"      // 503 with Retry-After: 120
	RateLimited     Behavior = "rate-limited"     // 429 with Retry-After: 300
	RedirectToLocal Behavior = "redirect-local"   // 307 to a reserved address
	MethodMissing   Behavior = "jsonrpc-nomethod" // JSON-RPC without either method: -32601
)

// Fleet is a running set of fake endpoints on one loopback HTTP server
// (each endpoint on its own path) and one TLS HTTP/2 server for gRPC.
type Fleet struct {
	srv  *httptest.Server
	grpc *httptest.Server
	stop chan struct{}
	once sync.Once

	mu        sync.Mutex
	paths     map[string]Behavior
	forbidden []string
	calls     map[string]int // method or "GET /path" → count
	hits      map[string]int // endpoint path → requests
	requests  atomic.Int64
	// RedirectTarget is where RedirectToLocal points (default
	// http://169.254.169.254/latest/meta-data/, the cloud metadata address).
	RedirectTarget string
}

// Start starts a fleet on 127.0.0.1; Close stops it.
func Start() *Fleet {
	f, err := StartOn("127.0.0.1", 0)
	if err != nil {
		panic(fmt.Sprintf("probertest: %v", err))
	}
	return f
}

// StartOn starts a fleet whose HTTP server listens on host:port (port 0
// picks a free one) and whose gRPC server listens on a free port of the
// same host: the demo puts it on its own loopback address.
func StartOn(host string, port int) (*Fleet, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		return nil, err
	}
	gln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		ln.Close()
		return nil, err
	}
	f := &Fleet{stop: make(chan struct{}), paths: map[string]Behavior{}, calls: map[string]int{}, hits: map[string]int{},
		RedirectTarget: "http://169.254.169.254/latest/meta-data/"}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Listener.Close()
	f.srv.Listener = ln
	f.srv.Start()
	g := httptest.NewUnstartedServer(http.HandlerFunc(f.serveGRPC))
	g.Listener.Close()
	g.Listener = gln
	g.EnableHTTP2 = true
	g.StartTLS()
	f.grpc = g
	return f, nil
}

// URL is the fleet's HTTP origin (http://host:port).
func (f *Fleet) URL() string { return f.srv.URL }

// Close stops the servers, releasing hanging requests first.
func (f *Fleet) Close() {
	f.once.Do(func() {
		close(f.stop)
		f.srv.CloseClientConnections()
		f.srv.Close()
		f.grpc.Close()
	})
}

// Add registers an endpoint with behavior b and returns its URL.
func (f *Fleet) Add(name string, b Behavior) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := "/" + name
	f.paths[path] = b
	return f.srv.URL + path
}

// GRPCURL is the address of the fleet's gRPC server (https://127.0.0.1:port).
func (f *Fleet) GRPCURL() string { return f.grpc.URL }

// GRPCServer is the TLS server of the gRPC endpoint (its certificate is
// what a client must trust).
func (f *Fleet) GRPCServer() *httptest.Server { return f.grpc }

// Requests counts every request served.
func (f *Fleet) Requests() int64 { return f.requests.Load() }

// Forbidden lists the requests that would have created work.
func (f *Fleet) Forbidden() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.forbidden...)
}

// Calls returns how often each JSON-RPC method (or REST "METHOD path
// prefix") was called.
func (f *Fleet) Calls() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.calls))
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

// Hits returns how many requests the endpoint registered as name got.
func (f *Fleet) Hits(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits["/"+name]
}

// workMethods are the JSON-RPC methods that create or change work, in
// both versions' spelling.
var workMethods = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "CancelTask": true, "SubscribeToTask": true,
	"CreateTaskPushNotificationConfig": true, "DeleteTaskPushNotificationConfig": true,
	"message/send": true, "message/stream": true, "tasks/cancel": true, "tasks/resubscribe": true,
	"tasks/pushNotificationConfig/set": true, "tasks/pushNotificationConfig/delete": true,
}

func (f *Fleet) note(call string, forbidden bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[call]++
	if forbidden {
		f.forbidden = append(f.forbidden, call)
	}
}

// endpoint finds the behavior of a request path: the longest registered
// path that is the path or a prefix of it followed by "/".
func (f *Fleet) endpoint(path string) (Behavior, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := path; p != ""; p = p[:strings.LastIndex(p, "/")] {
		if b, ok := f.paths[p]; ok {
			f.hits[p]++
			return b, strings.TrimPrefix(path, p), true
		}
	}
	return "", "", false
}

func (f *Fleet) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	b, rest, ok := f.endpoint(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch b {
	case AuthRequired:
		w.Header().Set("WWW-Authenticate", `Bearer realm="agent"`)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized"})
		return
	case HTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Welcome</title><p>Our agent lives here.</p>")
		return
	case NotJSONRPC:
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
		return
	case Hang:
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
		return
	case Reset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("probertest: cannot hijack")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // close sends RST
			}
			conn.Close()
		}
		return
	case Unavailable:
		w.Header().Set("Retry-After", "120")
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	case RateLimited:
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case RedirectToLocal:
		http.Redirect(w, r, f.RedirectTarget, http.StatusTemporaryRedirect)
		return
	case RESTv1, RESTv03:
		f.serveREST(w, r, b, rest)
		return
	}
	f.serveJSONRPC(w, r, b)
}

func (f *Fleet) serveREST(w http.ResponseWriter, r *http.Request, b Behavior, rest string) {
	prefix := "/tasks/"
	if b == RESTv03 {
		prefix = "/v1/tasks/"
	}
	if r.Method != http.MethodGet {
		f.note(r.Method+" "+rest, true)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "method not allowed"})
		return
	}
	f.note("GET "+prefix, false)
	if !strings.HasPrefix(rest, prefix) {
		http.NotFound(w, r) // a bare 404: no such route
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if b == RESTv03 {
		writeJSON(w, http.StatusNotFound, map[string]any{"code": -32001, "message": "Task not found"})
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"code": 404, "status": "NOT_FOUND", "message": "Task not found",
		"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}},
	}})
}

func (f *Fleet) serveJSONRPC(w http.ResponseWriter, r *http.Request, b Behavior) {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "POST only"})
		return
	}
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  struct {
			ID string `json:"id"`
		} `json:"params"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil || req.JSONRPC != "2.0" {
		writeJSON(w, http.StatusOK, rpcError(nil, -32700, "parse error"))
		return
	}
	f.note(req.Method, workMethods[req.Method])
	want := "GetTask"
	switch b {
	case JSONRPCv03:
		want = "tasks/get"
	case JSONRPCStrict:
		if r.Header.Get("A2A-Version") != "1.0" {
			writeJSON(w, http.StatusInternalServerError, rpcError(req.ID, -32009, "version not supported"))
			return
		}
	case MethodMissing:
		want = ""
	}
	if req.Method != want || want == "" {
		writeJSON(w, http.StatusOK, rpcError(req.ID, -32601, "method not found"))
		return
	}
	writeJSON(w, http.StatusOK, rpcError(req.ID, -32001, "task not found: "+req.Params.ID))
}

// serveGRPC answers any gRPC call with UNIMPLEMENTED (12), as an A2A SDK
// server without the health service does, in a trailers-only reply.
func (f *Fleet) serveGRPC(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.note("grpc "+r.URL.Path, !strings.HasPrefix(r.URL.Path, "/grpc.health.v1.Health/"))
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		http.Error(w, "not gRPC", http.StatusUnsupportedMediaType)
		return
	}
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<10))
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Set("Grpc-Status", "12")
	w.Header().Set("Grpc-Message", "unknown service grpc.health.v1.Health")
	w.WriteHeader(http.StatusOK)
}

func rpcError(id json.RawMessage, code int, msg string) map[string]any {
	if id == nil {
		id = json.RawMessage("null")
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// String names the fleet's addresses, for logs.
func (f *Fleet) String() string {
	return fmt.Sprintf("probertest fleet at %s (gRPC %s)", f.srv.URL, f.grpc.URL)
}

// Timeout is a probe timeout comfortably above a loopback round trip and
// short enough that the hanging endpoint ends a test quickly.
const Timeout = 500 * time.Millisecond
