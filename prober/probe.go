package prober

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// maxReplyBytes bounds a probe reply: an A2A error is a few hundred bytes,
// and nothing larger is read (docs/liveness.md).
const maxReplyBytes = 64 << 10

// JSON-RPC error codes that matter to classification (A2A §9, JSON-RPC 2.0).
const (
	codeMethodNotFound = -32601
)

// Bindings as cards name them (A2A §5.5.5, case-insensitive here).
const (
	bindingJSONRPC = "JSONRPC"
	bindingHTTP    = "HTTP+JSON"
	bindingGRPC    = "GRPC"
)

// result is one probe with what scheduling needs beyond the record.
type result struct {
	registry.ProbeResult
	retryAfter time.Duration // from a 429 or 503
}

// probeInterface probes one interface and classifies the reply. It never
// sends a request that creates work: a read of a task that cannot exist
// (JSON-RPC GetTask / tasks/get, HTTP+JSON GET /tasks/{id}), or for gRPC a
// TLS handshake and the standard health check.
func (p *Prober) probeInterface(ctx context.Context, it agentcard.Interface) (result, bool) {
	res := result{ProbeResult: registry.ProbeResult{URL: it.URL, Binding: it.Binding, ProtocolVersion: it.ProtocolVersion}}
	start := time.Now()
	switch strings.ToUpper(it.Binding) {
	case bindingJSONRPC:
		p.jsonRPC(ctx, it, &res)
	case bindingHTTP, "REST":
		p.restGet(ctx, it, &res)
	case bindingGRPC:
		p.grpcCheck(ctx, it, &res)
	default:
		return res, false // a binding Cardex cannot speak: not probed
	}
	res.Latency = time.Since(start)
	return res, true
}

// legacy reports whether the interface speaks a v0.x protocol.
func legacy(version string) bool { return strings.HasPrefix(version, "0.") }

// taskID is a random task id no agent can hold.
func taskID() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return "cardex-probe-" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// versionHeader is the A2A-Version a probe sends: always, so servers that
// validate it answer the version the card declares (docs/liveness.md).
func versionHeader(v string) string {
	if v == "" {
		return "1.0"
	}
	return v
}

// send runs one request through the crawler's fetcher: the same dialer and
// address policy, same-origin redirects only, a small body limit, the
// probe timeout.
func (p *Prober) send(ctx context.Context, method, u string, body []byte, h http.Header) (*fetch.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	return p.cfg.Fetcher.Fetch(ctx, fetch.Request{
		URL: u, Method: method, Body: body, Header: h, Accept: "application/json",
		AnyStatus: true, MaxBytes: maxReplyBytes, FollowRedirects: true, SameOriginOnly: true,
	})
}

// fetchFailed classifies a request that got no final response.
func fetchFailed(err error, res *result) {
	var fe *fetch.FetchError
	if !errors.As(err, &fe) {
		res.Outcome, res.Message = registry.OutcomeUnreachable, err.Error()
		return
	}
	res.ErrorClass, res.HTTPStatus, res.Message = fe.Class, fe.HTTPStatus, fe.Error()
	switch fe.Class {
	case fetch.ClassCrossOriginRedirect, fetch.ClassRedirectLoop, fetch.ClassTooManyRedirects,
		fetch.ClassHTTPStatus, fetch.ClassTooLarge:
		// Something answered, but not with an A2A reply we may read.
		res.Outcome = registry.OutcomeNonconformant
	default:
		res.Outcome = registry.OutcomeUnreachable
	}
}

// byStatus classifies what the body did not: credentials, rate limits,
// server errors, anything else. ok is false when the status says nothing
// beyond "not A2A".
func byStatus(resp *fetch.Response, now time.Time, res *result) bool {
	code := resp.StatusCode
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		res.Outcome = registry.OutcomeAuthRequired
	case code == http.StatusTooManyRequests:
		res.Outcome = registry.OutcomeRateLimited
		res.retryAfter, _ = fetch.RetryAfter(resp.Header, now)
	case code >= 500:
		res.Outcome, res.Message = registry.OutcomeUnreachable, fmt.Sprintf("HTTP %d", code)
		if code == http.StatusServiceUnavailable {
			res.retryAfter, _ = fetch.RetryAfter(resp.Header, now)
		}
	default:
		return false
	}
	return true
}

// rpcEnvelope is a JSON-RPC 2.0 response.
type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code *int `json:"code"`
	} `json:"error"`
}

// parseEnvelope reports whether body is a JSON-RPC 2.0 response (a result,
// or an error with an integer code) and its error code.
func parseEnvelope(body []byte) (code int, ok bool) {
	var env rpcEnvelope
	if json.Unmarshal(body, &env) != nil || env.JSONRPC != "2.0" {
		return 0, false
	}
	if env.Error != nil {
		if env.Error.Code == nil {
			return 0, false
		}
		return *env.Error.Code, true
	}
	return 0, env.Result != nil
}

// jsonRPC calls GetTask (v1) or tasks/get (v0.x) on a random id. A
// JSON-RPC envelope answers, whatever the status (a2a-js answers a
// version mismatch with HTTP 500 and -32009); "method not found" is
// retried once with the other version's method name.
func (p *Prober) jsonRPC(ctx context.Context, it agentcard.Interface, res *result) {
	methods := []string{"GetTask", "tasks/get"}
	if legacy(it.ProtocolVersion) {
		methods = []string{"tasks/get", "GetTask"}
	}
	h := http.Header{"Content-Type": {"application/json"}, "A2A-Version": {versionHeader(it.ProtocolVersion)}}
	for i, m := range methods {
		params := map[string]any{"id": taskID(), "historyLength": 0}
		if it.Tenant != "" && m == "GetTask" {
			params["tenant"] = it.Tenant
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "cardex-probe", "method": m, "params": params})
		resp, err := p.send(ctx, http.MethodPost, it.URL, body, h)
		if err != nil {
			fetchFailed(err, res)
			return
		}
		res.HTTPStatus, res.ErrorClass, res.Message, res.Outcome = resp.StatusCode, "", "", ""
		if byStatus(resp, p.cfg.Now(), res) && res.Outcome != registry.OutcomeUnreachable {
			return
		}
		code, ok := parseEnvelope(resp.Body)
		if !ok {
			if res.Outcome != registry.OutcomeUnreachable {
				res.Outcome = registry.OutcomeNonconformant
				res.Message = "the reply is not a JSON-RPC 2.0 response"
			}
			return
		}
		res.RPCCode = code
		res.retryAfter = 0
		if code == codeMethodNotFound {
			if i == 0 {
				continue
			}
			res.Outcome = registry.OutcomeNonconformant
			res.Message = "JSON-RPC answers, but knows neither GetTask nor tasks/get"
			return
		}
		res.Outcome = registry.OutcomeAnswering
		res.Message = ""
		if i == 1 {
			res.Message = "answers " + m + " (the other protocol version's method)"
		}
		return
	}
}

// restGet reads a random task over HTTP+JSON: GET {url}/tasks/{id} (v1;
// {url}/{tenant}/tasks/{id} with a tenant) or {url}/v1/tasks/{id} (v0.3).
// A JSON 404 (task not found), a JSON 400 naming VERSION_NOT_SUPPORTED or
// a 2xx JSON object answers.
func (p *Prober) restGet(ctx context.Context, it agentcard.Interface, res *result) {
	base := strings.TrimRight(it.URL, "/")
	path := "/tasks/" + taskID()
	switch {
	case legacy(it.ProtocolVersion):
		path = "/v1" + path
	case it.Tenant != "":
		path = "/" + url.PathEscape(it.Tenant) + path
	}
	h := http.Header{"A2A-Version": {versionHeader(it.ProtocolVersion)}}
	resp, err := p.send(ctx, http.MethodGet, base+path, nil, h)
	if err != nil {
		fetchFailed(err, res)
		return
	}
	res.HTTPStatus = resp.StatusCode
	if byStatus(resp, p.cfg.Now(), res) {
		return
	}
	var obj map[string]any
	isJSON := json.Unmarshal(resp.Body, &obj) == nil && obj != nil
	code := resp.StatusCode
	switch {
	case isJSON && (code == http.StatusNotFound || code/100 == 2):
		res.Outcome = registry.OutcomeAnswering
		res.RPCCode = restCode(obj)
	case isJSON && code == http.StatusBadRequest && bytes.Contains(resp.Body, []byte("VERSION_NOT_SUPPORTED")):
		res.Outcome = registry.OutcomeAnswering
	default:
		res.Outcome = registry.OutcomeNonconformant
		res.Message = fmt.Sprintf("HTTP %d without an A2A JSON body", code)
	}
}

// restCode is the numeric code of an HTTP+JSON error body, when it has one
// (v0.3 a2a-js: {"code":-32001}; v1: {"error":{"code":404,…}}).
func restCode(obj map[string]any) int {
	if c, ok := obj["code"].(float64); ok {
		return int(c)
	}
	if e, ok := obj["error"].(map[string]any); ok {
		if c, ok := e["code"].(float64); ok {
			return int(c)
		}
	}
	return 0
}

// gRPC status codes that classify.
const (
	grpcPermissionDenied = 7
	grpcUnauthenticated  = 16
)

// grpcCheck proves a gRPC server: a verified TLS handshake through the
// crawler's dialer that negotiates HTTP/2 (ALPN h2), then the standard
// health check (grpc.health.v1.Health/Check, read-only). Any gRPC status
// in reply, UNIMPLEMENTED included (the A2A SDKs register no health
// service), proves a gRPC server at the address; it does not prove the
// A2A service (docs/liveness.md).
func (p *Prober) grpcCheck(ctx context.Context, it agentcard.Interface, res *result) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	host, port, err := grpcAddr(it.URL)
	if err != nil {
		res.Outcome, res.ErrorClass, res.Message = registry.OutcomeUnreachable, fetch.ClassBlockedAddress, err.Error()
		return
	}
	conn, err := p.cfg.Fetcher.DialTLS(ctx, net.JoinHostPort(host, port), []string{"h2"})
	if err != nil {
		fetchFailed(err, res)
		return
	}
	defer conn.Close()
	if conn.ConnectionState().NegotiatedProtocol != "h2" {
		res.Outcome, res.Message = registry.OutcomeNonconformant, "the TLS endpoint does not offer HTTP/2"
		return
	}
	// The standard client over the connection the hardened dialer made
	// (its address checked, its TLS verified): HTTP/2 only, headers bounded.
	var h2 http.Protocols
	h2.SetHTTP2(true)
	tr := &http.Transport{Protocols: &h2, MaxResponseHeaderBytes: 64 << 10,
		DialTLSContext: func(context.Context, string, string) (net.Conn, error) { return conn, nil }}
	cc, err := tr.NewClientConn(ctx, "https", net.JoinHostPort(host, port))
	if err != nil {
		res.Outcome, res.ErrorClass, res.Message = registry.OutcomeUnreachable, fetch.ClassConnect, err.Error()
		return
	}
	defer cc.Close()
	// An empty HealthCheckRequest: one uncompressed, zero-length message.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+net.JoinHostPort(host, port)+"/grpc.health.v1.Health/Check",
		bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", p.cfg.Fetcher.Policy().UserAgent)
	req.Header.Set("A2A-Version", versionHeader(it.ProtocolVersion))
	resp, err := cc.RoundTrip(req)
	if err != nil {
		res.Outcome, res.ErrorClass, res.Message = registry.OutcomeUnreachable, fetch.ClassConnect, err.Error()
		if ctx.Err() != nil {
			res.ErrorClass = fetch.ClassTimeout
		}
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxReplyBytes))
	resp.Body.Close()
	res.HTTPStatus = resp.StatusCode
	status := resp.Trailer.Get("Grpc-Status")
	if status == "" {
		status = resp.Header.Get("Grpc-Status") // a trailers-only reply
	}
	code, err := strconv.Atoi(status)
	if err != nil {
		res.Outcome, res.Message = registry.OutcomeNonconformant, "HTTP/2, but no gRPC status in the reply"
		return
	}
	res.RPCCode = code
	if code == grpcUnauthenticated || code == grpcPermissionDenied {
		res.Outcome = registry.OutcomeAuthRequired
		return
	}
	res.Outcome = registry.OutcomeAnswering
}

// grpcAddr is the host and port of a gRPC interface URL: a URL with a
// scheme, or a bare host:port; the port defaults to 443.
func grpcAddr(raw string) (host, port string, err error) {
	if !strings.Contains(raw, "://") {
		raw = "grpcs://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("gRPC interface URL %q has no host", raw)
	}
	port = u.Port()
	if port == "" {
		port = "443"
	}
	return u.Hostname(), port, nil
}
