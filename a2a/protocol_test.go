package a2a

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/strictjson"
	"github.com/cardexhq/cardex/verifier"
)

func TestCard(t *testing.T) {
	s := sqliteServer(t)
	r := s.do("GET", CardPath, "")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" ||
		r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("ETag") == "" {
		t.Fatalf("card: %d %v", r.status, r.header)
	}
	parsed, err := agentcard.Parse(r.body, agentcard.Options{CardURL: s.srv.URL + CardPath})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parsed.Problems {
		if p.Severity == agentcard.SeverityError {
			t.Errorf("card problem: %+v", p)
		}
	}
	c := parsed.Card
	var got []string
	for _, i := range c.Interfaces {
		got = append(got, i.Binding+"@"+i.ProtocolVersion+" "+strings.TrimPrefix(i.URL, s.srv.URL))
	}
	if strings.Join(got, "; ") != "JSONRPC@1.0 /a2a/jsonrpc; HTTP+JSON@1.0 /a2a/rest; JSONRPC@0.3 /a2a/jsonrpc" {
		t.Fatalf("interfaces: %q", got)
	}
	if len(c.Skills) != 2 || c.Skills[0].ID != "find-agents" || c.Skills[1].ID != "get-agent" || c.Capabilities.Streaming {
		t.Fatalf("card %+v", c)
	}
	if r2 := s.do("GET", CardPath, "", "If-None-Match", r.header.Get("ETag")); r2.status != http.StatusNotModified || len(r2.body) != 0 {
		t.Fatalf("conditional: %d %q", r2.status, r2.body)
	}
	if r3 := s.do("GET", CardPath, "", "Accept", "application/a2a-agent-card+json"); r3.header.Get("Content-Type") != "application/a2a-agent-card+json" {
		t.Fatalf("negotiated type %q", r3.header.Get("Content-Type"))
	}
	if r4 := s.do("OPTIONS", CardPath, "", "Origin", "https://app.example", "Access-Control-Request-Method", "GET"); r4.status != http.StatusNoContent ||
		r4.header.Get("Access-Control-Allow-Methods") != "GET, HEAD" {
		t.Fatalf("preflight %d %v", r4.status, r4.header)
	}
	if r5 := s.do("POST", CardPath, "{}"); r5.status != http.StatusMethodNotAllowed {
		t.Fatalf("POST card: %d", r5.status)
	}
}

func TestSignedCard(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(b []byte) ([]byte, error) { return verifier.Sign(b, key, verifier.SignOptions{}) }
	if _, err := New(Config{Sign: sign}); err != ErrSignNeedsBaseURL {
		t.Fatalf("signing without a base URL: %v", err)
	}
	s := sqliteServer(t, func(c *Config) { c.Sign = sign; c.BaseURL = "https://cardex.example.com/" })
	r := s.do("GET", CardPath, "")
	if r.status != http.StatusOK || r.header.Get("Cache-Control") != "public, max-age=300" {
		t.Fatalf("%d %v", r.status, r.header)
	}
	if !strings.Contains(string(r.body), `"url": "https://cardex.example.com/a2a/jsonrpc"`) {
		t.Fatalf("card does not name the base URL: %s", r.body)
	}
	// The same bytes every time (signed once), so the ETag is stable.
	if again := s.do("GET", CardPath, ""); string(again.body) != string(r.body) {
		t.Fatal("the signed card changed between requests")
	}
	pub := jose.JSONWebKey{Key: &key.PublicKey, Algorithm: "ES256"}
	thumb, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	pub.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := strictjson.Parse(r.body)
	if err != nil {
		t.Fatal(err)
	}
	res := verifier.New(verifier.Config{}).Verify(t.Context(), tree, verifier.VerifyOptions{Pinned: jwks})
	if res.Status != "verified" {
		t.Fatalf("verdict %+v", res)
	}
}

func TestJSONRPCBadInput(t *testing.T) {
	s := sqliteServer(t)
	v1 := []string{"A2A-Version", "1.0"}
	big := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` +
		strings.Repeat("a", maxBodyBytes) + `"}]}}}`
	for _, tc := range []struct {
		name, body string
		header     []string
		status     int
		code       int
		msg        string
	}{
		{"not JSON", `{"jsonrpc":`, v1, 200, codeParse, "parse error"},
		{"duplicate members", `{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask"}`, v1, 200, codeParse, "duplicate"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`, v1, 200, codeInvalidRequest, "batch"},
		{"wrong version member", `{"jsonrpc":"1.0","id":1,"method":"GetTask"}`, v1, 200, codeInvalidRequest, "jsonrpc"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"GetTask"}`, v1, 200, codeInvalidRequest, "id"},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"DeleteEverything"}`, v1, 200, codeMethodNotFound, `"DeleteEverything" not found`},
		{"0.3 name under 1.0", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, v1, 200, codeMethodNotFound, "A2A-Version: 0.3"},
		{"1.0 name without a version", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, nil, 200, codeMethodNotFound, "A2A-Version: 1.0"},
		{"unsupported version", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, []string{"A2A-Version", "2.0"}, 200, codeVersion, "2.0"},
		{"streaming", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{}}`, v1, 200, codeUnsupported, "streaming"},
		{"0.3 streaming", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{}}`, nil, 200, codeUnsupported, "streaming"},
		{"resubscribe", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"x"}}`, v1, 200, codeUnsupported, "tasks"},
		{"push config", `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{}}`, v1, 200, codePushNotSupp, "push"},
		{"extended card", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`, v1, 200, codeUnsupported, "extendedAgentCard is false"},
		{"0.3 extended card", `{"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard"}`, nil, 200, codeUnsupported, "extendedAgentCard is false"},
		{"GetTask without id", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, v1, 200, codeInvalidParams, "params.id"},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[1]}`, v1, 200, codeInvalidParams, "SendMessageRequest"},
		{"no message", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, v1, 200, codeInvalidParams, "params.message"},
		{"agent role", msg1(`"role":"ROLE_AGENT","parts":[{"text":"x"}]`), v1, 200, codeInvalidParams, "ROLE_USER"},
		{"no parts", msg1(`"role":"ROLE_USER","parts":[]`), v1, 200, codeInvalidParams, "parts"},
		{"two members in a part", msg1(`"role":"ROLE_USER","parts":[{"text":"x","data":{}}]`), v1, 200, codeInvalidParams, "exactly one"},
		{"file part", msg1(`"role":"ROLE_USER","parts":[{"url":"https://x.example.com/f.pdf"}]`), v1, 200, codeContentType, "files"},
		{"data not JSON media", msg1(`"role":"ROLE_USER","parts":[{"data":{},"mediaType":"text/csv"}]`), v1, 200, codeContentType, "application/json"},
		{"unknown filter", msg1(`"role":"ROLE_USER","parts":[{"data":{"tags":["finance"]}}]`), v1, 200, codeInvalidParams, `unknown field "tags"`},
		{"bad enum", msg1(`"role":"ROLE_USER","parts":[{"data":{"trust":["great"]}}]`), v1, 200, codeInvalidParams, `data.trust: "great"`},
		{"bad liveness", msg1(`"role":"ROLE_USER","parts":[{"data":{"live":["alive"]}}]`), v1, 200, codeInvalidParams, `data.live: "alive" is not one of answering`},
		{"admin filter", msg1(`"role":"ROLE_USER","parts":[{"data":{"status":["pending"]}}]`), v1, 200, codeInvalidParams, "admin token"},
		{"bad page token", msg1(`"role":"ROLE_USER","parts":[{"data":{"pageToken":"nope"}}]`), v1, 200, codeInvalidParams, "pageToken"},
		{"page size", msg1(`"role":"ROLE_USER","parts":[{"data":{"pageSize":1000}}]`), v1, 200, codeInvalidParams, "pageSize"},
		// 0 is not the default (docs/api.md "Page sizes").
		{"page size 0", msg1(`"role":"ROLE_USER","parts":[{"data":{"pageSize":0}}]`), v1, 200, codeInvalidParams, "pageSize"},
		{"page size 101", msg1(`"role":"ROLE_USER","parts":[{"data":{"pageSize":101}}]`), v1, 200, codeInvalidParams, "pageSize"},
		{"long text", msg1(`"role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("a", 600) + `"}]`), v1, 200, codeInvalidParams, "data.q"},
		{"text and q", msg1(`"role":"ROLE_USER","parts":[{"text":"fx"},{"data":{"q":"fx"}}]`), v1, 200, codeInvalidParams, "not both"},
		{"id and filters", msg1(`"role":"ROLE_USER","parts":[{"data":{"id":"x","tag":["a"]}}]`), v1, 200, codeInvalidParams, "alone"},
		{"no output mode", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"acceptedOutputModes":["image/png"]},"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`, v1, 200, codeContentType, "text/plain"},
		{"oversized", big, v1, 413, codeInvalidRequest, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, env := s.rpc(tc.body, tc.header...)
			if r.status != tc.status || env.code(t) != tc.code || !strings.Contains(env.Error.Message, tc.msg) {
				t.Fatalf("got %d %s, want %d %d %q", r.status, r.body, tc.status, tc.code, tc.msg)
			}
			// 1.0 errors carry the ErrorInfo list in data; 0.3 errors no
			// data (0.3 defines no shape for it).
			if v03 := tc.header == nil; env.JSONRPC != "2.0" || v03 != (env.Error.Data == nil) ||
				(!v03 && !strings.HasPrefix(compact(t, env.Error.Data), `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"`)) {
				t.Fatalf("envelope %s", r.body)
			}
			// Streaming methods answer as a stream, even to refuse.
			if stream := strings.Contains(tc.name, "stream") || tc.name == "resubscribe"; stream != (r.header.Get("Content-Type") == "text/event-stream") {
				t.Fatalf("%s answered as %s", tc.name, r.header.Get("Content-Type"))
			}
		})
	}
	if r := s.do("GET", JSONRPCPath, ""); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST, OPTIONS" {
		t.Fatalf("GET: %d %v", r.status, r.header)
	}
	if r := s.do("POST", JSONRPCPath, "x", "Content-Type", "text/plain"); r.status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %d", r.status)
	}
	// The endpoint with a trailing slash is the same endpoint.
	if r := s.do("POST", JSONRPCPath+"/", `{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`, "A2A-Version", "1.0"); r.status != 200 ||
		!strings.Contains(compact(t, r.body), `"result":{"nextPageToken":"","pageSize":0,"tasks":[],"totalSize":0}`) {
		t.Fatalf("trailing slash: %d %s", r.status, r.body)
	}
	if r := s.do("POST", JSONRPCPath, `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("notification: %d %q", r.status, r.body)
	}
	// A 0.3 error has no data: 0.3 defines no shape for it.
	r := s.do("POST", JSONRPCPath, `{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"x"}}`)
	if got := compact(t, r.body); got != `{"error":{"code":-32001,"message":"task x not found: Cardex answers every message directly and keeps no tasks"},"id":"a","jsonrpc":"2.0"}` {
		t.Fatalf("0.3 tasks/get: %s", got)
	}
}

func msg1(inner string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m",` + inner + `}}}`
}

func TestRESTBinding(t *testing.T) {
	s := sqliteServer(t)
	v1 := []string{"A2A-Version", "1.0"}
	send := `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"trips"}]}}`
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
		status                   int
		want                     string
	}{
		{"send", "POST", "/message:send", send, v1, 200, `"name":"Trip Planner"`},
		{"no version", "POST", "/message:send", send, nil, 400, `"message":"the HTTP+JSON interface speaks A2A 1.0 only: send the header A2A-Version: 1.0 (a request without it is A2A 0.3, which Cardex speaks over JSON-RPC at /a2a/jsonrpc)"`},
		{"other version", "POST", "/message:send", send, []string{"A2A-Version", "2.0"}, 400, `"message":"the HTTP+JSON interface speaks A2A 1.0 only, and this request is A2A 2.0"`},
		{"query version", "POST", "/message:send?A2A-Version=1.0", send, nil, 200, `"role":"ROLE_AGENT"`},
		{"stream", "POST", "/message:stream", send, v1, 400, "UNSUPPORTED_OPERATION"},
		{"get task", "GET", "/tasks/cardex-probe-1", "", v1, 404, "TASK_NOT_FOUND"},
		{"cancel", "POST", "/tasks/t1:cancel", "", v1, 404, "TASK_NOT_FOUND"},
		{"subscribe", "POST", "/tasks/t1:subscribe", "", v1, 400, "UNSUPPORTED_OPERATION"},
		{"push configs", "GET", "/tasks/t1/pushNotificationConfigs", "", v1, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{"list tasks", "GET", "/tasks", "", v1, 200, `"tasks":[]`},
		{"extended card", "GET", "/extendedAgentCard", "", v1, 400, `{"error":{"code":400,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"UNSUPPORTED_OPERATION"}],"message":"Cardex has no extended agent card (capabilities.extendedAgentCard is false)","status":"FAILED_PRECONDITION"}}`},
		{"wrong method", "GET", "/message:send", "", v1, 405, "takes POST"},
		{"unknown path", "GET", "/nothing", "", v1, 404, "METHOD_NOT_FOUND"},
		{"bad JSON", "POST", "/message:send", `{"message":`, v1, 400, `"reason":"PARSE_ERROR"`},
		{"body not object", "POST", "/message:send", `[]`, v1, 400, `"reason":"INVALID_PARAMS"}],"message":"the body must be a JSON object","status":"INVALID_ARGUMENT"}}`},
		{"text/plain", "POST", "/message:send", "trips", append([]string{"Content-Type", "text/plain"}, v1...), 415, `"message":"the request must be application/json"`},
		{"oversized", "POST", "/message:send", `{"x":"` + strings.Repeat("a", maxBodyBytes) + `"}`, v1, 413, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(tc.method, RESTPath+tc.path, tc.body, tc.header...)
			if r.status != tc.status || !strings.Contains(compact(t, r.body), tc.want) {
				t.Fatalf("got %d %s, want %d containing %s", r.status, r.body, tc.status, tc.want)
			}
		})
	}
	if r := s.do("GET", RESTPath+"/tasks", "", "A2A-Version", "1.0", "Accept", "application/a2a+json"); r.header.Get("Content-Type") != "application/a2a+json" {
		t.Fatalf("negotiated %q", r.header.Get("Content-Type"))
	}
}

func TestRefusals(t *testing.T) {
	// Two anonymous reads per 3 s (one bucket shared with the API and the
	// UI in cardex serve), two failed tokens per minute, on a fixed clock.
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	s := sqliteServer(t, func(c *Config) {
		c.Gate.Limits = ratelimit.NewLimiters(ratelimit.Limits{
			ReadPerAddress: ratelimit.Rate{N: 2, Per: 3 * time.Second},
			AuthFailures:   ratelimit.Rate{N: 2, Per: time.Minute},
		}, 0)
		c.Gate.Now = func() time.Time { return now }
	})
	body := msg1(`"role":"ROLE_USER","parts":[{"text":"fx"}]`)
	v1 := []string{"A2A-Version", "1.0"}
	for i := range 2 {
		if r, env := s.rpc(body, v1...); r.status != 200 || env.Error != nil {
			t.Fatalf("read %d: %d %s", i, r.status, r.body)
		}
	}
	r, env := s.rpc(body, v1...)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "2" || env.Error == nil {
		t.Fatalf("over the budget: %d %v %s", r.status, r.header, r.body)
	}
	// A token is not limited, and a bad one is 401.
	if r, env := s.rpc(body, "A2A-Version", "1.0", "Authorization", "Bearer "+s.f.Reader); r.status != 200 || env.Error != nil {
		t.Fatalf("with a token: %d %s", r.status, r.body)
	}
	if r, _ := s.rpc(body, "A2A-Version", "1.0", "Authorization", "Bearer cdx_nope"); r.status != http.StatusUnauthorized ||
		r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("bad token: %d %v", r.status, r.header)
	}
	s.rpc(body, "A2A-Version", "1.0", "Authorization", "Bearer cdx_nope2")
	if r, _ := s.rpc(body, "A2A-Version", "1.0", "Authorization", "Bearer cdx_nope3"); r.status != http.StatusTooManyRequests {
		t.Fatalf("third bad token: %d %s", r.status, r.body)
	}
	// A good token still works past the failure budget.
	if r, env := s.rpc(body, "A2A-Version", "1.0", "Authorization", "Bearer "+s.f.Reader); r.status != 200 || env.Error != nil {
		t.Fatalf("good token after failures: %d %s", r.status, r.body)
	}
	if r := s.do("POST", JSONRPCPath+"?token=abc", body, v1...); r.status != http.StatusUnauthorized {
		t.Fatalf("token in URL: %d", r.status)
	}
	// Past the failure budget a credential that cannot succeed is refused
	// unchecked.
	if r := s.do("POST", RESTPath+"/message:send", `{}`, "A2A-Version", "1.0", "Authorization", "Basic eDp5"); r.status != http.StatusTooManyRequests ||
		!strings.Contains(string(r.body), `"status":"RESOURCE_EXHAUSTED"`) {
		t.Fatalf("REST basic auth: %d %s", r.status, r.body)
	}
}

// An internal agent never reaches an anonymous caller, whatever it asks.
func TestInternalNeverAnonymous(t *testing.T) {
	s := sqliteServer(t)
	v1 := []string{"A2A-Version", "1.0"}
	for _, data := range []string{`{"q":"ledger"}`, `{"tag":["finance"]}`, `{"skill":["reconcile"]}`, `{"pageSize":100}`,
		`{"provider":["Internal Ledger Inc"]}`, `{"id":"` + s.f.Ledger.ID + `"}`, `{"id":"` + s.f.Pending.ID + `","q":""}`} {
		r, env := s.rpc(msg1(`"role":"ROLE_USER","parts":[{"data":`+data+`}]`), v1...)
		if env.Error != nil {
			t.Fatalf("%s: %s", data, r.body)
		}
		if strings.Contains(string(r.body), "ledger.example.com") || strings.Contains(string(r.body), "Internal Ledger") {
			t.Fatalf("%s shows the internal agent: %s", data, r.body)
		}
	}
	var res struct {
		Result struct {
			Message struct {
				Parts []struct {
					Data *answer `json:"data"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"result"`
	}
	r, _ := s.rpc(msg1(`"role":"ROLE_USER","parts":[{"data":{"pageSize":100}}]`), v1...)
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	if d := res.Result.Message.Parts[1].Data; d == nil || d.TotalSize != 2 || ids(d.Agents) != "Trip Planner,FX Converter" {
		t.Fatalf("everything, anonymously: %s", r.body)
	}
}

// Asked with A2A-Version: 1.0, Cardex's card is a v1 AgentCard the v1
// schema accepts (no 0.3 members); without it (a 0.3 client) it keeps the
// 0.3 members such a client reads. Both renderings are signed.
func TestCardPerProtocolVersion(t *testing.T) {
	f, err := os.Open("../agentcard/testdata/schema/A2A_v1.0.1_GENERATED-from-proto_a2a.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///a2a.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("file:///a2a.json#/$defs/AgentCard")
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(b []byte) ([]byte, error) {
		return verifier.Sign(b, key, verifier.SignOptions{Profile: verifier.ProfileSpec})
	}
	pub := jose.JSONWebKey{Key: &key.PublicKey, Algorithm: "ES256"}
	thumb, _ := pub.Thumbprint(crypto.SHA256)
	pub.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	for _, signed := range []bool{false, true} {
		s := sqliteServer(t, func(c *Config) {
			if signed {
				c.Sign, c.BaseURL = sign, "https://cardex.example.com"
			}
		})
		for _, tc := range []struct {
			header []string
			v1     bool
		}{{nil, false}, {[]string{"A2A-Version", "0.3"}, false}, {[]string{"A2A-Version", "1.0"}, true}} {
			r := s.do("GET", CardPath, "", tc.header...)
			if r.status != 200 || r.header.Get("Vary") != "Accept, A2A-Version" {
				t.Fatalf("%v: %d %v", tc.header, r.status, r.header)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			verr := schema.Validate(inst)
			var card map[string]json.RawMessage
			json.Unmarshal(r.body, &card)
			if tc.v1 {
				if verr != nil || card["url"] != nil || card["protocolVersion"] != nil {
					t.Fatalf("signed %v, v1 card: %v\n%s", signed, verr, r.body)
				}
			} else if verr == nil || string(card["protocolVersion"]) != `"0.3.0"` || string(card["preferredTransport"]) != `"JSONRPC"` ||
				!strings.HasSuffix(string(card["url"]), `/a2a/jsonrpc"`) {
				t.Fatalf("signed %v, %v: the 0.3 members are missing\n%s", signed, tc.header, r.body)
			}
			if signed {
				tree, err := strictjson.Parse(r.body)
				if err != nil {
					t.Fatal(err)
				}
				if v := verifier.New(verifier.Config{}).Verify(t.Context(), tree, verifier.VerifyOptions{Pinned: jwks}); v.Status != verifier.StatusVerified {
					t.Fatalf("%v: verdict %+v", tc.header, v)
				}
			}
		}
	}
}

// A search spends the read budget by the results it asks for, as on the
// API (docs/threats.md K.96): with a burst of 10, two find-agents pages
// of 100 (five units each) empty it; with units left but too few for a
// page of 100, the page is refused and nothing more is spent.
func TestSearchChargesByPageSize(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	s := sqliteServer(t, func(c *Config) {
		c.Gate.Limits = ratelimit.NewLimiters(ratelimit.Limits{ReadPerAddress: ratelimit.Rate{N: 1, Per: time.Hour, Burst: 8}}, 0)
		c.Gate.Now = func() time.Time { return now }
	})
	page100 := msg1(`"role":"ROLE_USER","parts":[{"data":{"pageSize":100}}]`)
	v1 := []string{"A2A-Version", "1.0"}
	if r, env := s.rpc(page100, v1...); r.status != 200 || env.Error != nil {
		t.Fatalf("first page of 100: %d %s", r.status, r.body)
	}
	// 3 units left: the request's own unit passes, the other four do not.
	r, env := s.rpc(page100, v1...)
	if r.status != 200 || env.Error == nil || env.Error.Code != codeInternal || !strings.Contains(env.Error.Message, "smaller pages") ||
		r.header.Get("Retry-After") != "1" {
		t.Fatalf("second page of 100: %d %v %s", r.status, r.header, r.body)
	}
	for i := range 2 {
		if r, env := s.rpc(msg1(`"role":"ROLE_USER","parts":[{"data":{"pageSize":20}}]`), v1...); r.status != 200 || env.Error != nil {
			t.Fatalf("page of 20, %d: %d %s", i, r.status, r.body)
		}
	}
	if r, _ := s.rpc(page100, v1...); r.status != http.StatusTooManyRequests {
		t.Fatalf("empty budget: %d %s", r.status, r.body)
	}
}
