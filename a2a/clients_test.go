package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	a2av0 "github.com/a2aproject/a2a-go/a2a"
	a2aclientv0 "github.com/a2aproject/a2a-go/a2aclient"
	cardv0 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// v1Client is an a2a-go/v2 client built from Cardex's card, as an A2A 1.0
// client finds Cardex: resolve the card from the base URL, then pick an
// interface (transport preferred first).
func v1Client(t *testing.T, s *server, hc *http.Client, transport a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	ctx := t.Context()
	card, err := agentcard.NewResolver(hc).Resolve(ctx, s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{transport}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c
}

// dataOf decodes the data part of an answer and returns its text part.
func dataOf(t *testing.T, res a2a.SendMessageResult) (string, answer) {
	t.Helper()
	msg, ok := res.(*a2a.Message)
	if !ok {
		t.Fatalf("result is %T, want a Message", res)
	}
	if msg.Role != a2a.MessageRoleAgent || msg.ContextID == "" || len(msg.Parts) != 2 {
		t.Fatalf("message %+v: want an agent message with a context id and two parts", msg)
	}
	raw, err := json.Marshal(msg.Parts[1].Data())
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	return msg.Parts[0].Text(), a
}

func TestV1ClientFindsAgents(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		s := newServer(t, store)
		for _, tr := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
			t.Run(string(tr), func(t *testing.T) {
				ctx := t.Context()
				anon := v1Client(t, s, &http.Client{Timeout: 10 * time.Second}, tr)
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("currency"),
					a2a.NewDataPart(map[string]any{"tag": []string{"finance"}}))
				res, err := anon.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
				if err != nil {
					t.Fatal(err)
				}
				text, data := dataOf(t, res)
				// The internal Ledger and the pending agent never show to an
				// anonymous caller.
				if ids(data.Agents) != "FX Converter" || data.TotalSize != 1 {
					t.Fatalf("anonymous: %q total %d", ids(data.Agents), data.TotalSize)
				}
				if text != `1 agent found for "currency": FX Converter.` {
					t.Fatalf("text %q", text)
				}
				fx := data.Agents[0]
				if fx.ID != s.f.FX.ID || fx.Trust != "unsigned" || fx.Health != string(s.f.FX.Health) ||
					fx.CardURL != "https://fx.example.com/.well-known/agent-card.json" || fx.Record != s.srv.URL+"/api/v1/agents/"+fx.ID {
					t.Fatalf("agent %+v (fixture health %q)", fx, s.f.FX.Health)
				}
				if len(fx.MatchedSkills) != 1 || fx.MatchedSkills[0] != (discover.Skill{ID: "convert", Name: "Convert currency"}) {
					t.Fatalf("matched skills %+v", fx.MatchedSkills)
				}
				if fx.Liveness == nil || fx.Liveness.State != string(s.f.FX.Liveness.State) {
					t.Fatalf("liveness %+v, record %+v", fx.Liveness, s.f.FX.Liveness)
				}
				// A found agent carries its card's summary; the card is one
				// request by id away (docs/api.md "Lists and search").
				if fx.Card != nil || fx.Summary == nil || fx.Summary.Name != "FX Converter" || fx.Summary.SkillCount == 0 {
					t.Fatalf("card %v, summary %+v", fx.Card, fx.Summary)
				}

				reader := v1Client(t, s, bearer(s.f.Reader), tr)
				res, err = reader.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser,
					a2a.NewTextPart("currency"), a2a.NewDataPart(map[string]any{"tag": []string{"finance"}}))})
				if err != nil {
					t.Fatal(err)
				}
				if _, data := dataOf(t, res); data.TotalSize != 2 || len(data.Agents) != 2 {
					t.Fatalf("reader: %q total %d", ids(data.Agents), data.TotalSize)
				}
			})
		}
	})
}

func TestV1ClientTaskMethods(t *testing.T) {
	s := sqliteServer(t)
	for _, tr := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(tr), func(t *testing.T) {
			ctx := t.Context()
			c := v1Client(t, s, &http.Client{Timeout: 10 * time.Second}, tr)
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "cardex-probe-1"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("GetTask: %v", err)
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "t-1"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("CancelTask: %v", err)
			}
			list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
			if err != nil || len(list.Tasks) != 0 {
				t.Fatalf("ListTasks: %+v %v", list, err)
			}
			if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: "t-1", ID: "p"}); !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
				t.Fatalf("GetTaskPushConfig: %v", err)
			}
			// A message continuing a task: Cardex keeps none.
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("fx"))
			msg.TaskID = "t-9"
			if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("SendMessage with a task id: %v", err)
			}
			// A refused stream is an error the client sees, not an empty
			// stream. The client falls back to SendMessage when the card
			// says streaming is off, so this one is built from a card that
			// says it is on (a client calling the method anyway).
			hc := &http.Client{Timeout: 10 * time.Second}
			card, err := agentcard.NewResolver(hc).Resolve(ctx, s.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			card.Capabilities.Streaming = true
			sc, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
				a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{tr}}))
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Destroy()
			events := 0
			var streamErr error
			for ev, err := range sc.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("fx"))}) {
				if err != nil {
					streamErr = err
					break
				}
				events++
				_ = ev
			}
			if events != 0 || !errors.Is(streamErr, a2a.ErrUnsupportedOperation) {
				t.Fatalf("SendStreamingMessage: %d events, %v", events, streamErr)
			}
			// Invalid params are classified as such (reason INVALID_PARAMS).
			bad := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tags": []string{"x"}}))
			if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: bad}); !errors.Is(err, a2a.ErrInvalidParams) {
				t.Fatalf("SendMessage with an unknown filter: %v", err)
			}
		})
	}
}

func TestV1ClientGetAgent(t *testing.T) {
	s := sqliteServer(t)
	ctx := t.Context()
	c := v1Client(t, s, &http.Client{Timeout: 10 * time.Second}, a2a.TransportProtocolJSONRPC)
	get := func(id string) (string, answer) {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser,
			a2a.NewDataPart(map[string]any{"id": id}))})
		if err != nil {
			t.Fatal(err)
		}
		return dataOf(t, res)
	}
	if text, a := get(s.f.Trips.ID); ids(a.Agents) != "Trip Planner" || text != "Trip Planner: Plans and books trips" {
		t.Fatalf("%q %q", text, ids(a.Agents))
	}
	// Reading by id follows GET /api/v1/agents/{id}: an internal agent is
	// not found for an anonymous caller even with its id.
	if text, a := get(s.f.Ledger.ID); len(a.Agents) != 0 || text != `No agent with id "`+s.f.Ledger.ID+`".` {
		t.Fatalf("internal by id: %q %q", text, ids(a.Agents))
	}
}

func TestV03ClientFindsAgents(t *testing.T) {
	s := sqliteServer(t)
	ctx := context.Background()
	hc := &http.Client{Timeout: 10 * time.Second}
	card, err := cardv0.NewResolver(hc).Resolve(ctx, s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if card.URL != s.srv.URL+JSONRPCPath || card.PreferredTransport != a2av0.TransportProtocolJSONRPC {
		t.Fatalf("0.3 view of the card: url %q transport %q", card.URL, card.PreferredTransport)
	}
	c, err := a2aclientv0.NewFromCard(ctx, card, a2aclientv0.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &a2av0.MessageSendParams{Message: a2av0.NewMessage(a2av0.MessageRoleUser,
		a2av0.TextPart{Text: "trips"})})
	if err != nil {
		t.Fatal(err)
	}
	msg, ok := res.(*a2av0.Message)
	if !ok || msg.Role != a2av0.MessageRoleAgent || len(msg.Parts) != 2 {
		t.Fatalf("result %#v", res)
	}
	dp, ok := msg.Parts[1].(a2av0.DataPart)
	if !ok {
		t.Fatalf("second part is %T", msg.Parts[1])
	}
	agents, _ := dp.Data["agents"].([]any)
	if len(agents) != 1 || agents[0].(map[string]any)["name"] != "Trip Planner" {
		t.Fatalf("data %v", dp.Data)
	}
	if _, err := c.GetTask(ctx, &a2av0.TaskQueryParams{ID: "nope"}); !errors.Is(err, a2av0.ErrTaskNotFound) {
		t.Fatalf("tasks/get: %v", err)
	}
}
