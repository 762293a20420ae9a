package a2a

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// sendParams are the params of SendMessage (1.0) and message/send (0.3);
// members this server does not use are ignored, as the protocol adds
// optional ones over time.
type sendParams struct {
	Message       *message `json:"message"`
	Configuration *struct {
		AcceptedOutputModes []string `json:"acceptedOutputModes"`
	} `json:"configuration"`
}

type message struct {
	Kind      string `json:"kind"` // 0.3: "message"
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
	Parts     []part `json:"parts"`
	ContextID string `json:"contextId"`
	TaskID    string `json:"taskId"`
}

// part is a message part in either version: 1.0 has exactly one of text,
// raw, url and data; 0.3 has kind text, data or file.
type part struct {
	Kind      string          `json:"kind"`
	Text      *string         `json:"text"`
	Data      json.RawMessage `json:"data"`
	Raw       json.RawMessage `json:"raw"`
	URL       json.RawMessage `json:"url"`
	File      json.RawMessage `json:"file"`
	MediaType string          `json:"mediaType"`
}

// query is the data part of a request: a search (the filters of GET
// /api/v1/agents) or, with id alone, one agent.
type query struct {
	discover.Request
	ID string `json:"id,omitempty"`
}

// reply is an answer before it is written in a protocol version.
type reply struct {
	contextID string
	text      string
	data      any // nil when the client accepts no JSON
}

// answerData is the data part of every answer.
type answerData struct {
	Agents        []discover.Agent `json:"agents"`
	TotalSize     int              `json:"totalSize"`
	NextPageToken string           `json:"nextPageToken,omitempty"`
}

// Output modes of the answer's parts.
const (
	modeText = "text/plain"
	modeJSON = "application/json"
)

// send answers one message: the text parts are the search text, a data
// part the structured query.
func (h *handler) send(ctx context.Context, caller registry.Principal, p sendParams, version, base string) (*reply, *rpcError) {
	m := p.Message
	if m == nil {
		return nil, invalidParams("params.message is required")
	}
	userRole := "ROLE_USER"
	if version == v03 {
		userRole = "user"
	}
	switch {
	case m.MessageID == "":
		return nil, invalidParams("message.messageId is required")
	case m.Role != userRole:
		return nil, invalidParams(fmt.Sprintf("message.role must be %s", userRole))
	case len(m.Parts) == 0:
		return nil, invalidParams("message.parts must not be empty")
	case m.TaskID != "":
		// Cardex keeps no tasks, so no message continues one.
		return nil, errTaskNotFound(m.TaskID)
	}
	wantText, wantJSON := true, true
	if p.Configuration != nil && len(p.Configuration.AcceptedOutputModes) > 0 {
		modes := p.Configuration.AcceptedOutputModes
		wantText, wantJSON = slices.Contains(modes, modeText), slices.Contains(modes, modeJSON)
		if !wantText && !wantJSON {
			return nil, &rpcError{code: codeContentType, reason: "CONTENT_TYPE_NOT_SUPPORTED",
				message: "Cardex answers in text/plain and application/json only"}
		}
	}
	q, perr := readParts(m.Parts, version)
	if perr != nil {
		return nil, perr
	}
	ctxID := m.ContextID
	if ctxID == "" {
		ctxID = newID()
	}
	var page *discover.Page
	var text string
	if q.ID != "" {
		a, _, err := h.finder.Get(ctx, caller, q.ID, base)
		switch {
		case errors.Is(err, registry.ErrNotFound):
			page = &discover.Page{Agents: []discover.Agent{}}
			text = fmt.Sprintf("No agent with id %q.", q.ID)
		case err != nil:
			return nil, h.findError(err)
		default:
			page = &discover.Page{Agents: []discover.Agent{*a}, TotalSize: 1}
			text = fmt.Sprintf("%s: %s", a.Name, a.Description)
		}
	} else {
		var err error
		if page, err = h.finder.Search(ctx, caller, q.Request, base); err != nil {
			return nil, h.findError(err)
		}
		text = discover.Summary(q.Request, page)
	}
	out := &reply{contextID: ctxID}
	if wantText {
		out.text = text
	}
	if wantJSON {
		out.data = answerData{Agents: page.Agents, TotalSize: page.TotalSize, NextPageToken: page.NextPageToken}
	}
	return out, nil
}

// readParts turns the parts into a query: text parts are the search text
// (joined by spaces), at most one data part holds the structured query.
func readParts(parts []part, version string) (query, *rpcError) {
	var q query
	var texts []string
	seenData := false
	for i, pt := range parts {
		kind := pt.Kind
		if version == v10 {
			kind = ""
			n := 0
			for k, set := range map[string]bool{"text": pt.Text != nil, "data": pt.Data != nil,
				"raw": pt.Raw != nil, "url": pt.URL != nil} {
				if set {
					kind = k
					n++
				}
			}
			if n != 1 {
				return q, invalidParams(fmt.Sprintf("message.parts[%d] must have exactly one of text, raw, url and data", i))
			}
		}
		switch kind {
		case "text":
			if pt.Text == nil {
				return q, invalidParams(fmt.Sprintf("message.parts[%d].text is required", i))
			}
			if t := strings.TrimSpace(*pt.Text); t != "" {
				texts = append(texts, t)
			}
		case "data":
			if pt.MediaType != "" && pt.MediaType != modeJSON {
				return q, unsupportedContent(fmt.Sprintf("message.parts[%d]: data parts must be application/json", i))
			}
			if seenData {
				return q, invalidParams("at most one data part is read")
			}
			seenData = true
			if err := decodeQuery(pt.Data, &q); err != nil {
				return q, invalidParams(fmt.Sprintf("message.parts[%d].data: %v", i, err))
			}
		case "raw", "url", "file":
			return q, unsupportedContent(fmt.Sprintf("message.parts[%d]: Cardex reads text and JSON data parts, not files", i))
		default:
			return q, invalidParams(fmt.Sprintf("message.parts[%d].kind must be text, data or file", i))
		}
	}
	text := strings.Join(texts, " ")
	switch {
	case q.ID != "" && (text != "" || !isZero(q.Request)):
		return q, invalidParams("an id asks for one agent: send it alone")
	case text != "" && q.Q != "":
		return q, invalidParams("give the search text either in text parts or as data.q, not both")
	case text != "":
		q.Q = text
	}
	return q, nil
}

// decodeQuery reads a data part strictly: an unknown member is a mistake
// the caller should hear about, not a filter silently dropped.
func decodeQuery(raw json.RawMessage, q *query) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return errors.New("must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(q); err != nil {
		return err
	}
	return nil
}

func isZero(r discover.Request) bool {
	b, _ := json.Marshal(r)
	return string(b) == "{}"
}

// findError maps a failure of the search or the read to the protocol.
func (h *handler) findError(err error) *rpcError {
	var fe *discover.FieldError
	switch {
	case errors.As(err, &fe):
		return invalidParams("data." + fe.Error())
	case errors.Is(err, registry.ErrForbidden):
		return invalidParams(err.Error())
	case errors.Is(err, search.ErrInvalidPageToken):
		return invalidParams("data.pageToken: the page token was not issued for this search by this server")
	case errors.Is(err, search.ErrInvalidQuery):
		return invalidParams("data.q: the search cannot be run: " + err.Error())
	case errors.Is(err, discover.ErrRateLimited):
		// As a request over the read budget (Gate.Caller's refusal).
		return &rpcError{code: codeInternal, reason: "RATE_LIMIT_EXCEEDED", retryAfter: 1,
			status: http.StatusTooManyRequests, message: err.Error()}
	case errors.Is(err, search.ErrNotReady), errors.Is(err, search.ErrTimeout), errors.Is(err, search.ErrClosed),
		errors.Is(err, registry.ErrUnavailable):
		return &rpcError{code: codeInternal, reason: "UNAVAILABLE", retryAfter: 5,
			message: "the registry cannot answer right now; retry in a few seconds"}
	}
	h.log.Error("a2a: answering a message", "err", err.Error())
	return &rpcError{code: codeInternal, reason: "INTERNAL", message: "internal error"}
}

// newID is a random UUIDv4 for message and context ids.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// v10Message is the reply as an A2A 1.0 Message.
func (r *reply) v10Message() map[string]any {
	parts := []any{}
	if r.text != "" {
		parts = append(parts, map[string]any{"text": r.text, "mediaType": modeText})
	}
	if r.data != nil {
		parts = append(parts, map[string]any{"data": r.data, "mediaType": modeJSON})
	}
	return map[string]any{"messageId": newID(), "contextId": r.contextID, "role": "ROLE_AGENT", "parts": parts}
}

// v03Message is the reply as an A2A 0.3 Message.
func (r *reply) v03Message() map[string]any {
	parts := []any{}
	if r.text != "" {
		parts = append(parts, map[string]any{"kind": "text", "text": r.text})
	}
	if r.data != nil {
		parts = append(parts, map[string]any{"kind": "data", "data": r.data})
	}
	return map[string]any{"kind": "message", "messageId": newID(), "contextId": r.contextID, "role": "agent", "parts": parts}
}
