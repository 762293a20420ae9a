package agentfleet

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A2ABehavior is what one fake A2A endpoint does.
type A2ABehavior string

// A2A endpoint behaviours (docs/liveness.md lists what a probe sends and
// what counts as answering).
const (
	A2AJSONRPCv1       A2ABehavior = "jsonrpc-1.0"      // GetTask → -32001; tasks/get → -32601
	A2AJSONRPCv03      A2ABehavior = "jsonrpc-0.3"      // tasks/get → -32001; GetTask → -32601
	A2AJSONRPCStrict   A2ABehavior = "jsonrpc-strict"   // A2A-Version ≠ 1.0 → HTTP 500 with -32009
	A2ARESTv1          A2ABehavior = "rest-1.0"         // GET /tasks/{id} → 404 JSON TASK_NOT_FOUND
	A2ARESTv03         A2ABehavior = "rest-0.3"         // GET /v1/tasks/{id} → 404 {"code":-32001}
	A2AAuthRequired    A2ABehavior = "auth"             // 401 with a JSON body
	A2AHTML            A2ABehavior = "html"             // 200 text/html
	A2ANotJSONRPC      A2ABehavior = "json-not-rpc"     // 200 JSON that is no JSON-RPC envelope
	A2AHang            A2ABehavior = "hang"             // never answers (until the server closes)
	A2AReset           A2ABehavior = "reset"            // resets the connection
	A2AUnavailable     A2ABehavior = "unavailable"      // 503 with Retry-After: 120
	A2ARateLimited     A2ABehavior = "rate-limited"     // 429 with Retry-After: 300
	A2ARedirectToLocal A2ABehavior = "redirect-local"   // 307 to a reserved address
	A2AMethodMissing   A2ABehavior = "jsonrpc-nomethod" // JSON-RPC without either method: -32601
)

// A2AServer serves fake A2A endpoints on loopback, for the prober's tests
// and benchmark (through prober/probertest) and for `cardex serve --demo`,
// whose agents' interfaces point at it: agents that answer JSON-RPC (v1.0
// and v0.3), HTTP+JSON and gRPC, that need credentials, answer HTML, hang,
// reset the connection, fail with 503 or 429, or redirect to a reserved
// address. Every endpoint lives on its own path of one HTTP server; gRPC
// is one TLS HTTP/2 server beside it, its certificate issued by GRPCPool's
// CA. Every request is counted, and a request that would create work
// (sending a message, cancelling a task, any write over HTTP+JSON) is
// recorded as forbidden so tests can assert that probes never make one.
// It uses net/http only, so the cardex binary links no test helper.
type A2AServer struct {
	url, grpcURL string
	srv, grpc    *http.Server
	ca           *CA
	stop         chan struct{}
	once         sync.Once

	mu        sync.Mutex
	paths     map[string]A2ABehavior
	forbidden []string
	calls     map[string]int // method or "GET /path" → count
	hits      map[string]int // endpoint path → requests
	requests  atomic.Int64
	// RedirectTarget is where A2ARedirectToLocal points (default
	// http://169.254.169.254/latest/meta-data/, the cloud metadata address).
	RedirectTarget string
}

// ErrA2APort: the HTTP or gRPC port asked for is taken.
var ErrA2APort = errors.New("agentfleet: A2A server port taken")

// StartA2A starts fake A2A endpoints whose HTTP server listens on
// host:port and whose gRPC server listens on host:grpcPort (0 picks a free
// port for either); Close stops them.
func StartA2A(host string, port, grpcPort int) (*A2AServer, error) {
	addr, err := netip.ParseAddr(host)
	if err != nil || !addr.IsLoopback() {
		return nil, fmt.Errorf("agentfleet: A2A host %q is not a loopback address", host)
	}
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, uint16(port)).String())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrA2APort, err)
	}
	gln, err := net.Listen("tcp", netip.AddrPortFrom(addr, uint16(grpcPort)).String())
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("%w: %w", ErrA2APort, err)
	}
	// A demo runs for days: the CA and the leaf outlive it.
	ca, err := newCA("Cardex fake A2A CA", 10*365*24*time.Hour)
	if err != nil {
		ln.Close()
		gln.Close()
		return nil, err
	}
	leaf, err := ca.Issue(LeafSpec{IPs: []net.IP{addr.AsSlice()}, NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour)})
	if err != nil {
		ln.Close()
		gln.Close()
		return nil, err
	}
	f := &A2AServer{url: "http://" + ln.Addr().String(), grpcURL: "https://" + gln.Addr().String(), ca: ca,
		stop: make(chan struct{}), paths: map[string]A2ABehavior{}, calls: map[string]int{}, hits: map[string]int{},
		RedirectTarget: "http://169.254.169.254/latest/meta-data/"}
	// Hostile endpoints make clients hang up; the complaints are expected.
	quiet := slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second, ErrorLog: quiet}
	f.grpc = &http.Server{Handler: http.HandlerFunc(f.serveGRPC), ReadHeaderTimeout: 10 * time.Second, ErrorLog: quiet,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}}
	go f.srv.Serve(ln)
	go f.grpc.ServeTLS(gln, "", "")
	return f, nil
}

// URL is the HTTP origin (http://host:port).
func (f *A2AServer) URL() string { return f.url }

// GRPCURL is the address of the gRPC server (https://host:port).
func (f *A2AServer) GRPCURL() string { return f.grpcURL }

// GRPCPool trusts the gRPC server's certificate (add it to the client's
// roots).
func (f *A2AServer) GRPCPool() *x509.CertPool { return f.ca.Pool() }

// GRPCCA is the CA that issued the gRPC server's certificate.
func (f *A2AServer) GRPCCA() *x509.Certificate { return f.ca.cert }

// Close stops the servers, releasing hanging requests first.
func (f *A2AServer) Close() {
	f.once.Do(func() {
		close(f.stop)
		f.srv.Close()
		f.grpc.Close()
	})
}

// Add registers an endpoint with behavior b at /name and returns its URL.
func (f *A2AServer) Add(name string, b A2ABehavior) string {
	return f.AddOn(f.url, name, b)
}

// AddOn registers an endpoint with behavior b at /name and returns its URL
// on origin: another server that hands that path to ServeHTTP serves it
// (an agent whose endpoints must be on its own host).
func (f *A2AServer) AddOn(origin, name string, b A2ABehavior) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := "/" + name
	f.paths[path] = b
	return origin + path
}

// ServeHTTP serves the registered endpoints, for servers that mount them.
func (f *A2AServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.serve(w, r) }

// Requests counts every request served.
func (f *A2AServer) Requests() int64 { return f.requests.Load() }

// Forbidden lists the requests that would have created work.
func (f *A2AServer) Forbidden() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.forbidden...)
}

// Calls returns how often each JSON-RPC method (or REST "METHOD path
// prefix") was called.
func (f *A2AServer) Calls() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.calls))
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

// Hits returns how many requests the endpoint registered as name got.
func (f *A2AServer) Hits(name string) int {
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

func (f *A2AServer) note(call string, forbidden bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[call]++
	if forbidden {
		f.forbidden = append(f.forbidden, call)
	}
}

// endpoint finds the behavior of a request path: the longest registered
// path that is the path or a prefix of it followed by "/".
func (f *A2AServer) endpoint(path string) (A2ABehavior, string, bool) {
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

func (f *A2AServer) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	b, rest, ok := f.endpoint(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch b {
	case A2AAuthRequired:
		w.Header().Set("WWW-Authenticate", `Bearer realm="agent"`)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized"})
		return
	case A2AHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Welcome</title><p>Our agent lives here.</p>")
		return
	case A2ANotJSONRPC:
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
		return
	case A2AHang:
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
		return
	case A2AReset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("agentfleet: cannot hijack")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // close sends RST
			}
			conn.Close()
		}
		return
	case A2AUnavailable:
		w.Header().Set("Retry-After", "120")
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	case A2ARateLimited:
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case A2ARedirectToLocal:
		http.Redirect(w, r, f.RedirectTarget, http.StatusTemporaryRedirect)
		return
	case A2ARESTv1, A2ARESTv03:
		f.serveREST(w, r, b, rest)
		return
	}
	f.serveJSONRPC(w, r, b)
}

func (f *A2AServer) serveREST(w http.ResponseWriter, r *http.Request, b A2ABehavior, rest string) {
	prefix := "/tasks/"
	if b == A2ARESTv03 {
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
	if b == A2ARESTv03 {
		writeJSON(w, http.StatusNotFound, map[string]any{"code": -32001, "message": "Task not found"})
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"code": 404, "status": "NOT_FOUND", "message": "Task not found",
		"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}},
	}})
}

func (f *A2AServer) serveJSONRPC(w http.ResponseWriter, r *http.Request, b A2ABehavior) {
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
	case A2AJSONRPCv03:
		want = "tasks/get"
	case A2AJSONRPCStrict:
		if r.Header.Get("A2A-Version") != "1.0" {
			writeJSON(w, http.StatusInternalServerError, rpcError(req.ID, -32009, "version not supported"))
			return
		}
	case A2AMethodMissing:
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
func (f *A2AServer) serveGRPC(w http.ResponseWriter, r *http.Request) {
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

// String names the server's addresses, for logs.
func (f *A2AServer) String() string {
	return fmt.Sprintf("fake A2A endpoints at %s (gRPC %s)", f.url, f.grpcURL)
}
