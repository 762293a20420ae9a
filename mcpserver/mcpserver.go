// Package mcpserver makes Cardex an MCP server (docs/discovery.md "MCP"):
// Streamable HTTP at /mcp with read-only tools that search agents, read
// one, and list skills and tags, through the same paths (and as the same
// caller) as GET /api/v1/agents, /agents/{id}, /skills and /tags.
//
// It is built on the official Go SDK, which speaks both protocol eras: the
// stateless 2026-07-28 revision and 2025-11-25 with initialize. The server
// runs stateless: every HTTP request is authenticated on its own (a bearer
// token maps to its Cardex role), so no session can outlive or borrow a
// caller's credentials.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Path is where the MCP endpoint is mounted.
const Path = "/mcp"

// maxBodyBytes bounds one request (docs/threats.md I.82): tool arguments
// are a search, never a document.
const maxBodyBytes = 64 << 10

// Config is what the MCP surface needs.
type Config struct {
	Finder discover.Finder
	Gate   *discover.Gate
	// BaseURL is Cardex's public URL for links; empty: the request's origin.
	BaseURL string
	Version string
	Logger  *slog.Logger
}

// callerKey carries the request's caller and public base URL from the
// HTTP handler, which authenticates every request, to the tools: the
// server and its tool schemas are built once (building them costs tens of
// CPU milliseconds, docs/threats.md K.96), the caller is per request.
type callerKey struct{}

type requestInfo struct {
	caller registry.Principal
	base   string
}

// requestOf is the caller and base of the request ctx belongs to; a
// context without them is the anonymous caller.
func requestOf(ctx context.Context) requestInfo {
	ri, _ := ctx.Value(callerKey{}).(requestInfo)
	return ri
}

// New returns the handler of Path.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Gate == nil {
		cfg.Gate = &discover.Gate{}
	}
	if cfg.Version == "" {
		cfg.Version = "1.0.0"
	}
	base := strings.TrimSuffix(cfg.BaseURL, "/")
	t := &tools{finder: cfg.Finder, log: cfg.Logger}
	server := t.server(cfg.Version)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: maxBodyBytes,
		Logger:              cfg.Logger,
		// The SDK refuses a non-loopback Host on a loopback connection
		// (DNS rebinding), which is also what a reverse proxy on the same
		// machine sends; with a base URL, hostAllowed applies the rule
		// with the public name allowed.
		DisableLocalhostProtection: base != "",
	})
	// Browsers on other origins may not drive the endpoint (the MCP
	// transport's Origin rule): a request whose Origin is not this
	// server's gets 403 before anything else.
	protected := http.NewCrossOriginProtection().Handler(sdk)
	publicHost := ""
	if u, err := url.Parse(base); err == nil {
		publicHost = u.Host
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if publicHost != "" && !hostAllowed(r, publicHost) {
			http.Error(w, "forbidden: unknown Host", http.StatusForbidden)
			return
		}
		caller, refusal, err := cfg.Gate.Caller(r)
		if err != nil {
			cfg.Logger.Error("mcp: checking a token", "err", err.Error())
			http.Error(w, "the registry cannot answer right now", http.StatusServiceUnavailable)
			return
		}
		if refusal != nil {
			if refusal.Status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", strconv.Itoa(refusal.RetryAfter()))
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer realm="cardex"`)
			}
			http.Error(w, refusal.Message, refusal.Status)
			return
		}
		b := base
		if b == "" {
			b = requestBase(r)
		}
		ctx := cfg.Gate.WithReadBudget(r.Context(), r, caller)
		protected.ServeHTTP(w, r.WithContext(context.WithValue(ctx, callerKey{}, requestInfo{caller: caller, base: b})))
	})
}

// hostAllowed is the DNS-rebinding rule with a public name: a request that
// reached a loopback address must name the public host or a loopback one.
func hostAllowed(r *http.Request, public string) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	ap, err := netip.ParseAddrPort(local.String())
	if err != nil || !ap.Addr().IsLoopback() {
		return true
	}
	if strings.EqualFold(r.Host, public) {
		return true
	}
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && a.IsLoopback()
}

func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

type tools struct {
	finder discover.Finder
	log    *slog.Logger
}

// Tool inputs other than discover.Request.
type (
	getInput struct {
		ID string `json:"id" jsonschema:"the agent's Cardex id, as search_agents returns it"`
	}
	tagsInput struct {
		Prefix string `json:"prefix,omitempty" jsonschema:"only tags starting with this text"`
		Limit  int    `json:"limit,omitempty" jsonschema:"how many tags, 1 to 1000 (default 100)"`
	}
	tagsOutput struct {
		Tags []search.FacetValue `json:"tags"`
	}
)

// readOnly are the annotations of every tool: nothing changes, the same
// call gives the same answer until the registry changes, and the answers
// come from Cardex's own catalogue.
func readOnly(title string) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &f, OpenWorldHint: &f}
}

// searchSchema is the input schema of search_agents and list_skills:
// discover.Request's, with pageSize declared as the page-size rule of
// every face (search.PageSize): an integer from 1 to search.MaxPageSize,
// absent for the default.
func searchSchema() *jsonschema.Schema {
	s, err := jsonschema.For[discover.Request](nil)
	if err != nil {
		panic(err) // a fixed struct of strings and one integer always infers
	}
	lo, hi := 1.0, float64(search.MaxPageSize)
	ps := s.Properties["pageSize"]
	ps.Type, ps.Types, ps.Minimum, ps.Maximum = "integer", nil, &lo, &hi
	ps.Description = fmt.Sprintf("results per page, %d to %d (default %d)", 1, search.MaxPageSize, search.DefaultPageSize)
	return s
}

// server is the MCP server of every request: its tools answer as the
// request's caller (requestOf).
func (t *tools) server(version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "cardex", Title: "Cardex agent registry", Version: version},
		&mcp.ServerOptions{Instructions: "Cardex is a curated registry of A2A agents. Use search_agents to find agents by what " +
			"they can do (free text and filters), get_agent for one agent's A2A card, trust and health, and list_skills " +
			"or list_tags to explore. Page with pageToken = the previous answer's nextPageToken."})
	// search_agents answers the largest results, so it is registered with
	// its schemas and JSON written here rather than by the SDK's typed
	// path, which marshals the page twice and validates every byte of it
	// against the output schema: 80 of a page of 100's 104 CPU-ms
	// (docs/benchmarks.md "Cost of anonymous requests", docs/threats.md
	// K.96). The input is checked against the same schema as before.
	in := searchSchema()
	inResolved, err := in.Resolve(nil)
	if err != nil {
		panic(err) // the schema is a fixed struct's
	}
	out, err := jsonschema.For[discover.Page](nil)
	if err != nil {
		panic(err)
	}
	s.AddTool(&mcp.Tool{
		Name: "search_agents",
		Description: "Search the registry's agents by free text (q) and filters (tag, skill, inputMode, outputMode, " +
			"capability, binding, securityScheme, protocolVersion, provider, extension, trust, live; each a list, values ORed, " +
			"filters ANDed). Returns one page of agents with a summary of each A2A card, trust, health and matched skills, the total, " +
			"facet counts over all matches, and nextPageToken when there are more.",
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  readOnly("Search agents"),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args discover.Request
		if err := decodeArguments(req.Params.Arguments, inResolved, &args); err != nil {
			return errorResult(err), nil
		}
		ri := requestOf(ctx)
		p, err := t.finder.Search(ctx, ri.caller, args, ri.base)
		if err != nil {
			return errorResult(t.toolError(err)), nil
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		text, err := pageText(p, b)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_agent",
		Description: "Read one agent by its Cardex id: its A2A card, trust, health, liveness and a summary of its stored card versions.",
		Annotations: readOnly("Get an agent"),
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in getInput) (*mcp.CallToolResult, discover.Detail, error) {
		if in.ID == "" {
			return nil, discover.Detail{}, errors.New("id is required")
		}
		ri := requestOf(ctx)
		d, err := t.finder.Detail(ctx, ri.caller, in.ID, ri.base)
		if err != nil {
			return nil, discover.Detail{}, t.toolError(err)
		}
		return nil, *d, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: "list_skills",
		Description: "List skills matching free text (q) within one skill, with the agent filters of search_agents " +
			"applied to each skill's agent. Returns a page of skills with their agent, and nextPageToken when there are more.",
		InputSchema: searchSchema(),
		Annotations: readOnly("List skills"),
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in discover.Request) (*mcp.CallToolResult, discover.SkillPage, error) {
		p, err := t.finder.Skills(ctx, requestOf(ctx).caller, in)
		if err != nil {
			return nil, discover.SkillPage{}, t.toolError(err)
		}
		return nil, *p, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_tags",
		Description: "List the skill tags of the registry's agents, most used first, with how many agents carry each.",
		Annotations: readOnly("List tags"),
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in tagsInput) (*mcp.CallToolResult, tagsOutput, error) {
		tags, err := t.finder.Tags(ctx, requestOf(ctx).caller, in.Prefix, in.Limit)
		if err != nil {
			return nil, tagsOutput{}, t.toolError(err)
		}
		return nil, tagsOutput{Tags: tags}, nil
	})
	return s
}

// maxTextCopy is the largest search_agents page whose text block is the
// whole serialized JSON of its structured content. Every page of the
// default size fits (at most about 110 KiB: 20 summaries of at most 4 KiB
// and their matches); a larger page carries a digest instead, because the
// copy doubles what the SDK encodes and escapes, a quarter of a page of
// 100's CPU (docs/benchmarks.md "Cost of anonymous requests", docs/threats.md
// K.96).
const maxTextCopy = 128 << 10

// pageDigest is the text block of a page larger than maxTextCopy: the
// page without each agent's card summary and matches, which stay in the
// structured content.
type pageDigest struct {
	Digest        bool          `json:"digest"`
	Agents        []agentDigest `json:"agents"`
	TotalSize     int           `json:"totalSize"`
	NextPageToken string        `json:"nextPageToken,omitempty"`
}

type agentDigest struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Record      string `json:"record"`
	Page        string `json:"page"`
	CardURL     string `json:"cardUrl"`
	Trust       string `json:"trust"`
	Health      string `json:"health"`
}

// pageText is search_agents' text block: the serialized JSON b of page p
// when it is at most maxTextCopy, as the MCP specification recommends
// beside structured content, else p's digest (docs/discovery.md).
func pageText(p *discover.Page, b []byte) (string, error) {
	if len(b) <= maxTextCopy {
		return string(b), nil
	}
	d := pageDigest{Digest: true, Agents: make([]agentDigest, len(p.Agents)), TotalSize: p.TotalSize, NextPageToken: p.NextPageToken}
	for i, a := range p.Agents {
		d.Agents[i] = agentDigest{ID: a.ID, Name: a.Name, Description: a.Description, Record: a.Record, Page: a.Page,
			CardURL: a.CardURL, Trust: a.Trust, Health: a.Health}
	}
	t, err := json.Marshal(d)
	return string(t), err
}

// decodeArguments checks a tool call's arguments against the tool's input
// schema, as the SDK does for typed tools, and decodes them into dst.
func decodeArguments(raw json.RawMessage, schema *jsonschema.Resolved, dst any) error {
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("validating \"arguments\": %v", err)
		}
	}
	if err := schema.Validate(m); err != nil {
		return fmt.Errorf("validating \"arguments\": %v", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// errorResult is a failed tool call: the error's words for the model.
func errorResult(err error) *mcp.CallToolResult {
	var r mcp.CallToolResult
	r.SetError(err)
	return &r
}

// toolError is what a failed call tells the model: the caller's mistake
// in its own words, anything else without internals.
func (t *tools) toolError(err error) error {
	var fe *discover.FieldError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.Is(err, discover.ErrRateLimited):
		return err
	case errors.Is(err, registry.ErrNotFound):
		return errors.New("no agent with this id")
	case errors.Is(err, registry.ErrForbidden):
		return errors.New("status, health and visibility filters need an admin token")
	case errors.Is(err, search.ErrInvalidPageToken):
		return errors.New("pageToken: not issued for this search by this server")
	case errors.Is(err, search.ErrInvalidQuery):
		return errors.New("q: the search cannot be run")
	case errors.Is(err, search.ErrNotReady), errors.Is(err, search.ErrTimeout), errors.Is(err, search.ErrClosed),
		errors.Is(err, registry.ErrUnavailable):
		return errors.New("the registry cannot answer right now; retry in a few seconds")
	}
	t.log.Error("mcp: tool call", "err", err.Error())
	return errors.New("internal error")
}
