package api

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/cardexhq/cardex/registry"
)

// echoAgent answers every message with "echo: <text>".
type echoAgent struct{}

func (echoAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	text := ""
	for _, p := range ec.Message.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			text += string(t)
		}
	}
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("echo: "+text)), nil)
	}
}

func (echoAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// The `card` of GET /agents/{id} is an A2A v1.0 AgentCard an SDK connects
// with as it is: the a2a-go v2 client builds a JSON-RPC client from it and
// talks to the agent on loopback. The card was published in the v0.3 shape
// (url + preferredTransport), so the names a client needs exist only in
// Cardex's rendering.
func TestAgentCardWorksWithTheGoSDK(t *testing.T) {
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoAgent{})))
	t.Cleanup(srv.Close)
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		a := h.submit("https://sdk.example.com/", "")
		h.fetch(a.ID, []byte(`{"name":"Echo","description":"Echoes","version":"1.0.0","protocolVersion":"1.0",
			"url":"`+srv.URL+`","preferredTransport":"JSONRPC","capabilities":{},
			"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
			"skills":[{"id":"echo","name":"Echo","description":"Echoes text","tags":["echo"]}]}`))
		r := h.do(req{method: "GET", path: "/api/v1/agents/" + a.ID, token: h.token(registry.RoleAdmin)})
		r.expectStatus(t, http.StatusOK)
		var rec struct {
			Card       json.RawMessage `json:"card"`
			CardShape  string          `json:"cardShape"`
			Signatures json.RawMessage `json:"signatures"`
		}
		r.json(t, &rec)
		if rec.CardShape != "v0.3" || strings.Contains(string(rec.Card), `"interfaces"`) || strings.Contains(string(rec.Card), `"shape"`) {
			t.Fatalf("shape %q card %s", rec.CardShape, rec.Card)
		}
		var card a2a.AgentCard
		if err := json.Unmarshal(rec.Card, &card); err != nil {
			t.Fatalf("the SDK cannot read the card: %v\n%s", err, rec.Card)
		}
		client, err := a2aclient.NewFromCard(t.Context(), &card)
		if err != nil {
			t.Fatalf("the SDK cannot connect with the card: %v\n%s", err, rec.Card)
		}
		res, err := client.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
		if err != nil {
			t.Fatal(err)
		}
		msg, ok := res.(*a2a.Message)
		if !ok || len(msg.Parts) != 1 || msg.Parts[0].Content != a2a.Text("echo: hi") {
			t.Fatalf("answer %#v", res)
		}
	})
}
