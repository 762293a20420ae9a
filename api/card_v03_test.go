package api

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	a2asrv03 "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/cardexhq/cardex/registry"
)

// echo03 is a v0.3 agent answering "echo: <text>".
type echo03 struct{}

func (echo03) Execute(ctx context.Context, rc *a2asrv03.RequestContext, q eventqueue.Queue) error {
	text := ""
	for _, p := range rc.Message.Parts {
		if t, ok := p.(a2a03.TextPart); ok {
			text += t.Text
		}
	}
	return q.Write(ctx, a2a03.NewMessage(a2a03.MessageRoleAgent, a2a03.TextPart{Text: "echo: " + text}))
}

func (echo03) Cancel(context.Context, *a2asrv03.RequestContext, eventqueue.Queue) error { return nil }

// An agent that renders its card per A2A-Version (a2a-js with legacy
// compatibility) has both renderings kept; GET /card answers a v0.3 client
// (no A2A-Version, as a2a-go v0.3 sends none) with the agent's v0.3 bytes,
// and a v1 client with the v1 bytes. The a2a-go v0.3 client resolves the
// card from Cardex and talks to the agent.
func TestCardServesTheV03RenderingToV03Clients(t *testing.T) {
	srv := httptest.NewServer(a2asrv03.NewJSONRPCHandler(a2asrv03.NewHandler(echo03{})))
	t.Cleanup(srv.Close)
	v1 := []byte(`{"name":"Echo","description":"Echoes","version":"1.0.0",` +
		`"supportedInterfaces":[{"url":"` + srv.URL + `","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],` +
		`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"echo","name":"Echo","description":"Echoes text","tags":["echo"]}]}`)
	v03 := []byte(`{"name":"Echo","description":"Echoes","version":"1.0.0","url":"` + srv.URL + `",` +
		`"preferredTransport":"JSONRPC","protocolVersion":"0.3.0","capabilities":{},` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"echo","name":"Echo","description":"Echoes text","tags":["echo"]}],` +
		`"supportedInterfaces":[{"url":"` + srv.URL + `","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`)
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		a := h.submit("https://v03.example.com/", "")
		h.fetchRenderings(a.ID, v1, v03)
		path := "/api/v1/agents/" + a.ID + "/card"
		for _, c := range []struct {
			header []string
			want   []byte
		}{
			{nil, v03},
			{[]string{"A2A-Version", "0.3"}, v03},
			{[]string{"A2A-Version", "1.0"}, v1},
			{[]string{"A2A-Version", "1.1"}, v1},
		} {
			r := h.do(req{method: "GET", path: path, header: c.header})
			r.expectStatus(t, http.StatusOK)
			if !bytes.Equal(r.body, c.want) || r.header.Get("Vary") != "A2A-Version" {
				t.Fatalf("%v: Vary %q, body %s", c.header, r.header.Get("Vary"), r.body)
			}
		}

		// The v0.3 client, through the API on loopback.
		card, err := agentcard.NewResolver(nil).Resolve(t.Context(), h.srv.URL, agentcard.WithPath(path))
		if err != nil {
			t.Fatal(err)
		}
		if card.URL != srv.URL || card.PreferredTransport != a2a03.TransportProtocolJSONRPC {
			t.Fatalf("resolved card %+v", card)
		}
		client, err := a2aclient03.NewFromCard(t.Context(), card)
		if err != nil {
			t.Fatal(err)
		}
		res, err := client.SendMessage(t.Context(), &a2a03.MessageSendParams{Message: a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: "hi"})})
		if err != nil {
			t.Fatal(err)
		}
		msg, ok := res.(*a2a03.Message)
		if !ok || len(msg.Parts) != 1 || msg.Parts[0].(a2a03.TextPart).Text != "echo: hi" {
			t.Fatalf("answer %#v", res)
		}
	})
}
