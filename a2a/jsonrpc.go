package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/cardexhq/cardex/strictjson"
)

// Request bounds (docs/threats.md I.82): a message is a search, never a
// document.
const (
	maxBodyBytes = 64 << 10
	maxBodyDepth = 32
)

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
}

var errTooLarge = &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST", status: http.StatusRequestEntityTooLarge,
	message: "the request is larger than " + strconv.Itoa(maxBodyBytes) + " bytes"}

// Method names of each version and what this server does with them.
var (
	v10Methods = map[string]*rpcError{
		"SendMessage": nil, "SendStreamingMessage": errStreaming, "GetTask": nil, "ListTasks": nil,
		"CancelTask": nil, "SubscribeToTask": errSubscribe,
		"CreateTaskPushNotificationConfig": errPush, "GetTaskPushNotificationConfig": errPush,
		"ListTaskPushNotificationConfigs": errPush, "DeleteTaskPushNotificationConfig": errPush,
		"GetExtendedAgentCard": errExtCard,
	}
	v03Methods = map[string]*rpcError{
		"message/send": nil, "message/stream": errStreaming, "tasks/get": nil, "tasks/cancel": nil,
		"tasks/resubscribe":                   errSubscribe,
		"tasks/pushNotificationConfig/set":    errPush,
		"tasks/pushNotificationConfig/get":    errPush,
		"tasks/pushNotificationConfig/list":   errPush,
		"tasks/pushNotificationConfig/delete": errPush,
		"agent/getAuthenticatedExtendedCard":  errExtCard,
	}
)

// streamingMethods answer with a server-sent event stream.
var streamingMethods = map[string]bool{"SendStreamingMessage": true, "SubscribeToTask": true, "message/stream": true, "tasks/resubscribe": true}

// checkContentType refuses a body that is not JSON (415, on both
// bindings); a request without Content-Type is read as JSON.
func checkContentType(r *http.Request) *rpcError {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && (mt == "application/json" || mt == "application/a2a+json") {
		return nil
	}
	return &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST", status: http.StatusUnsupportedMediaType,
		message: "the request must be application/json"}
}

// serveJSONRPC is the JSON-RPC binding of both versions at JSONRPCPath.
func (h *handler) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	if cors(w, r, "POST") {
		return
	}
	version, versionOK := protocolVersion(r)
	fail := func(status int, id json.RawMessage, e *rpcError) { writeRPCError(w, status, id, e, version) }
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		fail(http.StatusMethodNotAllowed, nil, &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST",
			message: "JSON-RPC requests are POSTed"})
		return
	}
	if e := checkContentType(r); e != nil {
		fail(e.status, nil, e)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(http.StatusRequestEntityTooLarge, nil, errTooLarge)
		return
	case err != nil:
		return // the client went away
	}
	// The one strict parse: duplicate members, bad UTF-8 and deep nesting
	// are parse errors, not whatever the last duplicate said.
	tree, err := strictjson.ParseWithLimits(body, strictjson.Limits{MaxBytes: maxBodyBytes, MaxDepth: maxBodyDepth})
	if err != nil {
		fail(http.StatusOK, nil, &rpcError{code: codeParse, reason: "PARSE_ERROR", message: "parse error: " + err.Error()})
		return
	}
	if tree.Kind == strictjson.Array {
		fail(http.StatusOK, nil, &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST",
			message: "batch requests are not supported"})
		return
	}
	var req rpcRequest
	if tree.Kind != strictjson.Object || json.Unmarshal(body, &req) != nil {
		fail(http.StatusOK, nil, &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST",
			message: "the request must be a JSON-RPC 2.0 request object"})
		return
	}
	id := validID(req.ID)
	if req.JSONRPC != "2.0" || req.Method == nil || (req.ID != nil && id == nil) {
		fail(http.StatusOK, id, &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST",
			message: `the request needs "jsonrpc":"2.0", a method and a string or number id`})
		return
	}
	if req.ID == nil {
		// A notification: JSON-RPC 2.0 §4.1 gives it no response, and
		// no A2A method is a notification.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	caller, refusal, err := h.gate.Caller(r)
	if err != nil {
		fail(http.StatusOK, id, h.findError(err))
		return
	}
	if refusal != nil {
		e := &rpcError{code: codeInvalidRequest, reason: "UNAUTHENTICATED", message: refusal.Message}
		if refusal.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(refusal.RetryAfter()))
			e = &rpcError{code: codeInternal, reason: "RATE_LIMIT_EXCEEDED", message: refusal.Message}
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cardex"`)
		}
		fail(refusal.Status, id, e)
		return
	}
	if !versionOK {
		fail(http.StatusOK, id, errVersion(version))
		return
	}
	methods, other := v10Methods, v03Methods
	if version == v03 {
		methods, other = v03Methods, v10Methods
	}
	method := *req.Method
	fixed, known := methods[method]
	switch {
	case !known:
		msg := "method " + strconv.Quote(method) + " not found"
		if _, ok := other[method]; ok {
			msg += "; it is an A2A " + map[string]string{v03: v10, v10: v03}[version] +
				" method: send the header A2A-Version: " + map[string]string{v03: v10, v10: v03}[version]
		}
		fail(http.StatusOK, id, &rpcError{code: codeMethodNotFound, reason: "METHOD_NOT_FOUND", message: msg})
		return
	case fixed != nil && streamingMethods[method]:
		// A streaming method answers as a stream (A2A 1.0 §9.4.2); a
		// refusal is one event carrying the error, which SDK clients read
		// as the stream's error (an application/json answer reads to them
		// as an empty stream).
		writeRPCErrorStream(w, id, fixed, version)
		return
	case fixed != nil:
		fail(http.StatusOK, id, fixed)
		return
	}
	switch method {
	case "SendMessage", "message/send":
		var p sendParams
		if !isObject(req.Params) || json.Unmarshal(req.Params, &p) != nil {
			fail(http.StatusOK, id, invalidParams("params must be a SendMessageRequest object"))
			return
		}
		rep, e := h.send(h.gate.WithReadBudget(r.Context(), r, caller), caller, p, version, h.baseOf(r))
		if e != nil {
			if e.retryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
			}
			fail(http.StatusOK, id, e)
			return
		}
		if version == v03 {
			writeRPCResult(w, id, rep.v03Message())
		} else {
			writeRPCResult(w, id, map[string]any{"message": rep.v10Message()})
		}
	case "GetTask", "tasks/get", "CancelTask", "tasks/cancel":
		var p struct {
			ID string `json:"id"`
		}
		if !isObject(req.Params) || json.Unmarshal(req.Params, &p) != nil || p.ID == "" {
			fail(http.StatusOK, id, invalidParams("params.id is required"))
			return
		}
		fail(http.StatusOK, id, errTaskNotFound(p.ID))
	case "ListTasks":
		writeRPCResult(w, id, emptyTaskList())
	}
}

// emptyTaskList is ListTasks of a server that keeps no tasks.
func emptyTaskList() map[string]any {
	return map[string]any{"tasks": []any{}, "nextPageToken": "", "pageSize": 0, "totalSize": 0}
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// validID is the request id when it is a string or a number, else nil.
func validID(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil
	}
	if t[0] == '"' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9') {
		return t
	}
	return nil
}

func writeRPCResult(w http.ResponseWriter, id json.RawMessage, result any) {
	writeJSON(w, http.StatusOK, "application/json", map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// rpcErrorEnvelope is a JSON-RPC error response. In 1.0 its data is the
// list of details (the ErrorInfo); 0.3 defines no shape for data and its
// clients decode it each their own way, so a 0.3 error has none.
func rpcErrorEnvelope(id json.RawMessage, e *rpcError, version string) map[string]any {
	body := map[string]any{"code": e.code, "message": e.message}
	if version != v03 {
		body["data"] = []any{e.errorInfo()}
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": body}
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError, version string) {
	writeJSON(w, status, "application/json", rpcErrorEnvelope(id, e, version))
}

// writeRPCErrorStream answers a streaming method with a stream of one
// event: the JSON-RPC error.
func writeRPCErrorStream(w http.ResponseWriter, id json.RawMessage, e *rpcError, version string) {
	b, err := json.Marshal(rpcErrorEnvelope(id, e, version))
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("data: "))
	w.Write(b)
	w.Write([]byte("\n\n"))
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}
