package a2a

import "net/http"

// JSON-RPC and A2A error codes (A2A 1.0 §5.4; 0.3 ends at -32007).
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeTaskNotFound   = -32001
	codePushNotSupp    = -32003
	codeUnsupported    = -32004
	codeContentType    = -32005
	codeVersion        = -32009
)

// rpcError is an A2A error before it is written for a binding: code for
// JSON-RPC, reason for the ErrorInfo detail, and the HTTP status the
// HTTP+JSON binding gives it.
type rpcError struct {
	code       int
	reason     string
	message    string
	retryAfter int // seconds; 0 for none
	status     int // HTTP status when the error fixes one (413), else 0
}

// Reasons are the names the SDKs classify errors by (a2a-go's a2a.ErrorReason:
// INVALID_PARAMS, PARSE_ERROR, UNSUPPORTED_OPERATION…).
func invalidParams(msg string) *rpcError {
	return &rpcError{code: codeInvalidParams, reason: "INVALID_PARAMS", message: msg}
}

func unsupportedContent(msg string) *rpcError {
	return &rpcError{code: codeContentType, reason: "CONTENT_TYPE_NOT_SUPPORTED", message: msg}
}

func errTaskNotFound(id string) *rpcError {
	return &rpcError{code: codeTaskNotFound, reason: "TASK_NOT_FOUND",
		message: "task " + id + " not found: Cardex answers every message directly and keeps no tasks"}
}

var (
	errStreaming = &rpcError{code: codeUnsupported, reason: "UNSUPPORTED_OPERATION",
		message: "streaming is not supported: send the message with SendMessage (message/send in 0.3)"}
	errSubscribe = &rpcError{code: codeUnsupported, reason: "UNSUPPORTED_OPERATION",
		message: "Cardex keeps no tasks to subscribe to"}
	errPush = &rpcError{code: codePushNotSupp, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
		message: "push notifications are not supported"}
	// Cardex's card says capabilities.extendedAgentCard: false, so the
	// call is an unsupported operation (A2A 1.0.1 §3.3.4), not an extended
	// card left unconfigured (-32007).
	errExtCard = &rpcError{code: codeUnsupported, reason: "UNSUPPORTED_OPERATION",
		message: "Cardex has no extended agent card (capabilities.extendedAgentCard is false)"}
)

// errRESTVersion answers an HTTP+JSON request of another version than 1.0:
// a request without A2A-Version is 0.3, which Cardex speaks over JSON-RPC
// only.
func errRESTVersion(v string, missing bool) *rpcError {
	msg := "the HTTP+JSON interface speaks A2A 1.0 only, and this request is A2A " + v
	if missing {
		msg = "the HTTP+JSON interface speaks A2A 1.0 only: send the header A2A-Version: 1.0 " +
			"(a request without it is A2A 0.3, which Cardex speaks over JSON-RPC at " + JSONRPCPath + ")"
	}
	return &rpcError{code: codeVersion, reason: "VERSION_NOT_SUPPORTED", message: msg}
}

func errVersion(v string) *rpcError {
	return &rpcError{code: codeVersion, reason: "VERSION_NOT_SUPPORTED",
		message: "A2A-Version " + v + " is not supported; this server speaks 1.0 and 0.3"}
}

// httpStatus is the status of the error in the HTTP+JSON binding (A2A 1.0
// §5.4 mapping table).
func (e *rpcError) httpStatus() int {
	if e.status != 0 {
		return e.status
	}
	switch e.code {
	case codeTaskNotFound:
		return http.StatusNotFound
	case codeInternal:
		if e.retryAfter > 0 {
			return http.StatusServiceUnavailable
		}
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// grpcStatus is the google.rpc status name of the HTTP+JSON error body.
func (e *rpcError) grpcStatus() string {
	switch e.reason {
	case "RATE_LIMIT_EXCEEDED":
		return "RESOURCE_EXHAUSTED"
	case "UNAUTHENTICATED":
		return "UNAUTHENTICATED"
	}
	switch e.code {
	case codeTaskNotFound:
		return "NOT_FOUND"
	case codeInvalidParams, codeInvalidRequest, codeParse, codeContentType:
		return "INVALID_ARGUMENT"
	case codeInternal:
		if e.retryAfter > 0 {
			return "UNAVAILABLE"
		}
		return "INTERNAL"
	case codeMethodNotFound:
		return "UNIMPLEMENTED"
	}
	return "FAILED_PRECONDITION"
}

// errorInfo is the google.rpc.ErrorInfo detail both bindings carry.
func (e *rpcError) errorInfo() map[string]any {
	return map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": e.reason, "domain": "a2a-protocol.org"}
}
