package agentfleet

import (
	"crypto"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Behavior is how an agent answers.
type Behavior string

// Behaviours. Unless stated, an agent serves its card as application/json.
const (
	Normal      Behavior = "normal"      // the card, no validators (like a2a-go and a2a-python servers)
	Conditional Behavior = "conditional" // the card with ETag, Last-Modified, max-age; 304 when they match
	Changing    Behavior = "changing"    // a new version every ChangeEvery requests, with validators
	Signed      Behavior = "signed"      // signed with Key; JWKS at its own origin's /.well-known/jwks.json
	Tampered    Behavior = "tampered"    // signed, then a member changed
	// OffOriginJKU: signed with a jku on another fleet host, which publishes
	// the key (a verifier must never fetch it, D.43).
	OffOriginJKU     Behavior = "off-origin-jku"
	SlowDrip         Behavior = "slow-drip"          // headers, then one byte per DripInterval (B.18)
	HangAfterHeaders Behavior = "hang-after-headers" // headers, then nothing until the client leaves (B.18)
	HugeBody         Behavior = "huge-body"          // Size bytes of JSON, chunked (B.20)
	GzipBomb         Behavior = "gzip-bomb"          // Content-Encoding gzip, Size bytes once inflated (B.21)
	HugeHeaders      Behavior = "huge-headers"       // about 100 KiB of response headers (B.22)
	RedirectChain    Behavior = "redirect-chain"     // Hops same-origin redirects, then the card
	RedirectLoop     Behavior = "redirect-loop"      // A → B → A
	Redirect         Behavior = "redirect"           // one redirect to Location (blocked, cross-origin, gopher:, …)
	Status           Behavior = "status"             // Status with RetryAfter, a small JSON error body
	NotJSON          Behavior = "not-json"           // 200 text/plain prose (C.28)
	HTMLPage         Behavior = "html-page"          // 200 text/html error page (C.28)
)

// Agent describes one fake agent. Only Behavior is required.
type Agent struct {
	Behavior Behavior
	// Card is served as the agent's card; nil means GenerateCard.
	Card []byte
	// Host to serve from; nil spreads agents over the fleet's hosts.
	Host *Host
	// Path defaults to /.well-known/agent-card.json when that is free on
	// the host, else /agents/{id}/.well-known/agent-card.json.
	Path string

	Status         int    // Status: the code (404, 410, 429, 500, 503…)
	RetryAfter     string // Status: the Retry-After value, if any
	ChangeEvery    int    // Changing: requests per version (default 1)
	Hops           int    // RedirectChain: number of redirects (default 1)
	RedirectStatus int    // redirect behaviours: 301, 302 (default), 303, 307, 308
	Location       string // Redirect: the Location header, verbatim
	// Size is the body of HugeBody (default 2 GiB) and the inflated body of
	// GzipBomb (default 10 GiB). Writing stops when the client leaves.
	Size int64
	// DeclareLength sends HugeBody's true Content-Length instead of chunks.
	DeclareLength bool
	// Key signs Signed, Tampered and OffOriginJKU cards. Default: the
	// host's P-256 key, shared by its signing agents (a fresh key for
	// OffOriginJKU). A key is published on its host's key set when the
	// agent is added; a verifier that cached that key set earlier will not
	// see it until its cache expires.
	Key crypto.Signer
}

// AgentHandle is a running agent.
type AgentHandle struct {
	id      int
	host    *Host
	path    string
	a       Agent
	kid     string
	reqs    counter
	mu      sync.Mutex
	version int
	body    []byte // the card currently served
}

// URL is the agent's card URL.
func (a *AgentHandle) URL() string { return a.host.origin + a.path }

// Origin is the agent's origin.
func (a *AgentHandle) Origin() string { return a.host.origin }

// Host is the host serving the agent.
func (a *AgentHandle) Host() *Host { return a.host }

// ID is the agent's number in its fleet.
func (a *AgentHandle) ID() int { return a.id }

// KeyID is the kid of a signing agent's key ("" for unsigned agents).
func (a *AgentHandle) KeyID() string { return a.kid }

// Requests counts requests on the agent's path (every hop of its redirects).
func (a *AgentHandle) Requests() int64 { return a.reqs.n.Load() }

// InFlight is the number of requests being answered now.
func (a *AgentHandle) InFlight() int64 { return a.reqs.cur.Load() }

// MaxInFlight is the peak number of concurrent requests seen.
func (a *AgentHandle) MaxInFlight() int64 { return a.reqs.max.Load() }

// Card returns the card bytes the agent serves now (for Changing, the
// version of its latest answer).
func (a *AgentHandle) Card() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.body
}

// counter counts requests and tracks the peak of concurrent ones.
type counter struct {
	n, cur, max atomic.Int64
}

func (c *counter) enter() {
	c.n.Add(1)
	cur := c.cur.Add(1)
	for {
		m := c.max.Load()
		if cur <= m || c.max.CompareAndSwap(m, cur) {
			return
		}
	}
}

func (c *counter) leave() { c.cur.Add(-1) }

const wellKnown = "/.well-known/agent-card.json"

func (h *Host) add(id int, a Agent) (*AgentHandle, error) {
	f := h.fleet
	ah := &AgentHandle{id: id, host: h, a: a}
	if ah.a.Card == nil {
		ah.a.Card = GenerateCard(id, h.origin, "1.0.0")
	}
	ah.body = ah.a.Card
	if err := ah.prepare(f); err != nil {
		return nil, fmt.Errorf("agent %d (%s): %w", id, a.Behavior, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case a.Path != "":
		if !strings.HasPrefix(a.Path, "/") {
			return nil, fmt.Errorf("agent %d: path %q must start with /", id, a.Path)
		}
		ah.path = a.Path
	case h.agents[wellKnown] == nil:
		ah.path = wellKnown
	default:
		ah.path = fmt.Sprintf("/agents/%d%s", id, wellKnown)
	}
	if h.agents[ah.path] != nil || ah.path == JWKSPath {
		return nil, fmt.Errorf("agent %d: path %s is taken on %s", id, ah.path, h.origin)
	}
	h.agents[ah.path] = ah
	return ah, nil
}

// prepare signs and tampers cards and checks behaviour parameters.
func (a *AgentHandle) prepare(f *Fleet) error {
	switch a.a.Behavior {
	case Normal, Conditional, SlowDrip, HangAfterHeaders, HugeBody, HugeHeaders,
		RedirectChain, RedirectLoop, NotJSON, HTMLPage:
		return nil
	case GzipBomb:
		// Compressed here, not while the first request waits for its
		// headers: under the race detector that takes longer than the
		// short fetch timeouts of the tests that meet a bomb.
		bombData()
		return nil
	case Changing:
		if a.a.ChangeEvery <= 0 {
			a.a.ChangeEvery = 1
		}
		return nil
	case Redirect:
		if a.a.Location == "" {
			return fmt.Errorf("redirect needs a Location")
		}
		return nil
	case Status:
		if a.a.Status < 100 || a.a.Status > 999 {
			return fmt.Errorf("status %d is not an HTTP status", a.a.Status)
		}
		return nil
	case Signed, Tampered, OffOriginJKU:
		return a.sign(f)
	}
	return fmt.Errorf("unknown behaviour %q", a.a.Behavior)
}

func (a *AgentHandle) sign(f *Fleet) error {
	if f.opts.Signer == nil {
		return ErrNoSigner
	}
	if a.a.Key == nil {
		// Agents of one host share its key, like one organisation signing
		// all its agents, so a host's key set stays small (the verifier
		// takes at most 100 keys). An off-origin agent gets its own key:
		// its home origin must never vouch for it.
		var err error
		if a.a.Behavior == OffOriginJKU {
			a.a.Key, err = NewSigningKey()
		} else {
			a.a.Key, err = a.host.signingKey()
		}
		if err != nil {
			return err
		}
	}
	jwk, err := publicJWK(a.a.Key)
	if err != nil {
		return err
	}
	a.kid = jwk.KeyID
	keyHost := a.host
	if a.a.Behavior == OffOriginJKU {
		if len(f.hosts) < 2 {
			return fmt.Errorf("an off-origin jku needs a fleet of at least 2 hosts")
		}
		keyHost = f.hosts[(a.host.index+1)%len(f.hosts)]
	}
	signed, err := f.opts.Signer(a.a.Card, a.a.Key, jwk.KeyID, keyHost.JWKSURL())
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	if a.a.Behavior == Tampered {
		if signed, err = tamper(signed); err != nil {
			return err
		}
	}
	keyHost.publishKey(jwk)
	a.a.Card, a.body = signed, signed
	return nil
}
