package a2a

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cardexhq/cardex/strictjson"
)

// restMediaType is the HTTP+JSON binding's media type (A2A 1.0 §11). It
// is what a client that accepts it gets; the others get application/json,
// which a2a-go's client requires of error bodies.
const restMediaType = "application/a2a+json"

func restContentType(r *http.Request) string {
	if strings.Contains(r.Header.Get("Accept"), restMediaType) {
		return restMediaType
	}
	return "application/json"
}

// serveREST is the HTTP+JSON binding (A2A 1.0) under RESTPath: paths are
// relative to the interface URL.
func (h *handler) serveREST(w http.ResponseWriter, r *http.Request) {
	if cors(w, r, "GET, POST") {
		return
	}
	path := strings.TrimPrefix(r.URL.Path, RESTPath)
	route, taskID := restRoute(path)
	if route == "" {
		writeRESTError(w, r, &rpcError{code: codeMethodNotFound, reason: "METHOD_NOT_FOUND", message: "no such A2A operation: " + r.Method + " " + path}, http.StatusNotFound)
		return
	}
	method := map[string]string{"send": "POST", "stream": "POST", "tasks": "GET", "task": "GET", "cancel": "POST",
		"subscribe": "", "push": "", "extcard": "GET"}[route]
	if method != "" && r.Method != method {
		w.Header().Set("Allow", method+", OPTIONS")
		writeRESTError(w, r, &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST", message: path + " takes " + method}, http.StatusMethodNotAllowed)
		return
	}
	caller, refusal, err := h.gate.Caller(r)
	if err != nil {
		writeRESTError(w, r, h.findError(err), 0)
		return
	}
	if refusal != nil {
		if refusal.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(refusal.RetryAfter()))
			writeRESTError(w, r, &rpcError{code: codeInternal, reason: "RATE_LIMIT_EXCEEDED", message: refusal.Message}, refusal.Status)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cardex"`)
			writeRESTError(w, r, &rpcError{code: codeInvalidRequest, reason: "UNAUTHENTICATED", message: refusal.Message}, refusal.Status)
		}
		return
	}
	// This binding speaks 1.0 only; a missing version means 0.3.
	if v, ok := protocolVersion(r); !ok || v != v10 {
		missing := strings.TrimSpace(r.Header.Get("A2A-Version")) == "" && strings.TrimSpace(r.URL.Query().Get("A2A-Version")) == ""
		writeRESTError(w, r, errRESTVersion(v, missing), 0)
		return
	}
	switch route {
	case "send":
		body, e := readRESTBody(w, r)
		if e != nil {
			writeRESTError(w, r, e, 0)
			return
		}
		var p sendParams
		if json.Unmarshal(body, &p) != nil {
			writeRESTError(w, r, invalidParams("the body must be a SendMessageRequest object"), 0)
			return
		}
		rep, e := h.send(h.gate.WithReadBudget(r.Context(), r, caller), caller, p, v10, h.baseOf(r))
		if e != nil {
			if e.retryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
			}
			writeRESTError(w, r, e, 0)
			return
		}
		writeJSON(w, http.StatusOK, restContentType(r), map[string]any{"message": rep.v10Message()})
	case "stream":
		writeRESTError(w, r, errStreaming, 0)
	case "tasks":
		writeJSON(w, http.StatusOK, restContentType(r), emptyTaskList())
	case "task", "cancel":
		writeRESTError(w, r, errTaskNotFound(taskID), 0)
	case "subscribe":
		writeRESTError(w, r, errSubscribe, 0)
	case "push":
		writeRESTError(w, r, errPush, 0)
	case "extcard":
		writeRESTError(w, r, errExtCard, 0)
	}
}

// restRoute names the operation of a path relative to the interface URL.
func restRoute(path string) (route, taskID string) {
	switch path {
	case "/message:send":
		return "send", ""
	case "/message:stream":
		return "stream", ""
	case "/tasks":
		return "tasks", ""
	case "/extendedAgentCard":
		return "extcard", ""
	}
	rest, ok := strings.CutPrefix(path, "/tasks/")
	if !ok || rest == "" {
		return "", ""
	}
	id, sub, hasSub := strings.Cut(rest, "/")
	switch {
	case hasSub && (sub == "pushNotificationConfigs" || strings.HasPrefix(sub, "pushNotificationConfigs/")):
		return "push", id
	case hasSub:
		return "", ""
	case strings.HasSuffix(id, ":cancel"):
		return "cancel", strings.TrimSuffix(id, ":cancel")
	case strings.HasSuffix(id, ":subscribe"):
		return "subscribe", strings.TrimSuffix(id, ":subscribe")
	case strings.Contains(id, ":"):
		return "", ""
	}
	return "task", id
}

// readRESTBody reads a bounded, strictly parsed JSON object.
func readRESTBody(w http.ResponseWriter, r *http.Request) ([]byte, *rpcError) {
	if e := checkContentType(r); e != nil {
		return nil, e
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, errTooLarge
	case err != nil:
		return nil, &rpcError{code: codeInvalidRequest, reason: "INVALID_REQUEST", message: "the request body could not be read"}
	}
	tree, err := strictjson.ParseWithLimits(body, strictjson.Limits{MaxBytes: maxBodyBytes, MaxDepth: maxBodyDepth})
	if err != nil {
		return nil, &rpcError{code: codeParse, reason: "PARSE_ERROR", message: "the body is not valid JSON: " + err.Error()}
	}
	if tree.Kind != strictjson.Object {
		return nil, invalidParams("the body must be a JSON object")
	}
	return body, nil
}

// writeRESTError writes the HTTP+JSON error body (google.rpc.Status shape);
// status 0 is the error's own.
func writeRESTError(w http.ResponseWriter, r *http.Request, e *rpcError, status int) {
	if status == 0 {
		status = e.httpStatus()
	}
	writeJSON(w, status, restContentType(r), map[string]any{"error": map[string]any{
		"code": status, "status": e.grpcStatus(), "message": e.message, "details": []any{e.errorInfo()}}})
}
