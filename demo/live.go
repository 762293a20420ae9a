package demo

import (
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/cardexhq/cardex/agentfleet"
)

// The demo's live agents show what a catalogue of one version per agent
// never does: history and diffs, the review queue, a re-review, and an
// agent that fails and comes back. They are served by one listener beside
// the fleet, on the first fleet address.
const (
	demoLivePort = 47082
	// demoChangeEvery is how often the changing agent publishes a new
	// version (new skills, a version bump); the crawler sees each at its
	// next fetch.
	demoChangeEvery = 3 * time.Minute
	// demoRecoverAfter is how long the recovering agent fails once the
	// demo breaks it; the crawler's next fetch after that finds it healthy.
	demoRecoverAfter = 2 * time.Minute
)

// liveMode is what a live agent does over time.
type liveMode int

const (
	liveNone       liveMode = iota
	liveChanging            // a new version every demoChangeEvery
	liveFlagged             // signed until approved, then unsigned: a trust regression waiting for review
	liveRecovering          // fails from approval until demoRecoverAfter has passed, then answers again
	livePending             // never approved: waits in the review queue
)

var liveModes = []liveMode{liveChanging, liveFlagged, liveRecovering, livePending}

type liveAgents struct {
	origin string
	srv    *http.Server
	now    func() time.Time

	mu        sync.Mutex
	started   time.Time // the changing agent's clock
	bumps     int       // extra versions the demo asked for
	unsigned  bool      // the flagged agent serves its unsigned card
	failUntil time.Time // the recovering agent fails before this

	signed, unsignedCard, recovering, pending []byte
	changingInterface                         map[string]any // where the changing agent answers A2A
	jwks                                      []byte
}

func startLive(h *agentfleet.Host, port int, now func() time.Time, answer cardAnswer, log *slog.Logger) (*liveAgents, error) {
	ln, err := listenDemo(h, port)
	if err != nil {
		return nil, err
	}
	l, err := newLiveAgents("http://"+ln.Addr().String(), now, answer)
	if err != nil {
		ln.Close()
		return nil, err
	}
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := l.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("demo live agents stopped", "err", err)
		}
	}()
	return l, nil
}

// newLiveAgents prepares the cards of the live agents served at origin,
// their interfaces pointed at the demo's A2A endpoints by answer.
func newLiveAgents(origin string, now func() time.Time, answer cardAnswer) (*liveAgents, error) {
	l := &liveAgents{origin: origin, now: now, started: now()}
	// The changing agent's interface: its cards are made per request.
	iface, err := answer.apply(l.changingCard(0), "live/changing")
	if err != nil {
		return nil, err
	}
	var c struct {
		Interfaces []map[string]any `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal(iface, &c); err != nil {
		return nil, fmt.Errorf("demo live agents: the changing card: %w", err)
	}
	if len(c.Interfaces) != 1 {
		return nil, fmt.Errorf("demo live agents: the changing card has %d interfaces, want 1", len(c.Interfaces))
	}
	l.changingInterface = c.Interfaces[0]
	key, err := agentfleet.NewSigningKey()
	if err != nil {
		return nil, err
	}
	pub := jose.JSONWebKey{Key: key.Public(), Algorithm: "ES256", Use: "sig"}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	pub.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	if l.jwks, err = json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}}); err != nil {
		return nil, err
	}
	cards := map[liveMode][]byte{}
	for m, c := range map[liveMode][]byte{
		liveFlagged:    agentfleet.GenerateCard(400, origin, "4.0.0"),
		liveRecovering: agentfleet.GenerateCard(401, origin, "0.1.0"),
		livePending:    agentfleet.GenerateCard(402, origin, "0.2.0"),
		// The flagged agent's unsigned card: the same agent, a version on.
		liveNone: agentfleet.GenerateCard(400, origin, "4.1.0"),
	} {
		slug := fmt.Sprintf("live/%d", m)
		if m == liveNone {
			slug = fmt.Sprintf("live/%d", liveFlagged)
		}
		if cards[m], err = answer.apply(c, slug); err != nil {
			return nil, err
		}
	}
	l.unsignedCard = cards[liveNone]
	if l.signed, err = signCard(cards[liveFlagged], key, pub.KeyID, origin+agentfleet.JWKSPath); err != nil {
		return nil, err
	}
	l.recovering, l.pending = cards[liveRecovering], cards[livePending]
	return l, nil
}

// ChangingPath is in the card URL of the live agent that publishes a new
// version every few minutes.
var ChangingPath = fmt.Sprintf("/live/%d/", liveChanging)

func (l *liveAgents) url(m liveMode) string {
	return fmt.Sprintf("%s/live/%d/.well-known/agent-card.json", l.origin, m)
}

// afterApproval moves the live agents on once the demo catalogue is
// approved: the changing agent publishes its next version at once, the
// flagged one drops its signature, the recovering one starts failing.
func (l *liveAgents) afterApproval() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bumps++
	l.unsigned = true
	l.failUntil = l.now().Add(demoRecoverAfter)
}

// changingVersion is the changing agent's version number now.
func (l *liveAgents) changingVersion() int {
	return l.bumps + int(l.now().Sub(l.started)/demoChangeEvery)
}

// changingCard is version v of the changing agent: one more skill each
// version (cycling through four), and the version number bumped.
func (l *liveAgents) changingCard(v int) []byte {
	iface := l.changingInterface
	if iface == nil {
		iface = map[string]any{"url": l.origin + "/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
	}
	skills := []map[string]any{
		{"id": "release-notes", "name": "Draft release notes", "description": "Writes release notes from merged changes.", "tags": []string{"release", "notes"}},
		{"id": "changelog", "name": "Keep a changelog", "description": "Adds each change to the project's changelog.", "tags": []string{"changelog"}},
		{"id": "semver", "name": "Suggest a version", "description": "Suggests the next semantic version from the changes.", "tags": []string{"semver", "release"}},
		{"id": "announce", "name": "Announce a release", "description": "Posts the release announcement to the team's channels.", "tags": []string{"announcement"}},
	}
	card := map[string]any{
		"name":                "Release Notes Agent",
		"description":         "Drafts release notes and changelogs. Its card changes every few minutes in this demo, so its history and diffs grow.",
		"version":             fmt.Sprintf("1.%d.0", v),
		"supportedInterfaces": []map[string]any{iface},
		"provider":            map[string]any{"organization": "Demo Release Tools", "url": "https://release-tools.example"},
		"capabilities":        map[string]any{"streaming": false},
		"defaultInputModes":   []string{"text/plain"},
		"defaultOutputModes":  []string{"text/markdown"},
		"skills":              skills[:1+v%len(skills)],
	}
	b, _ := json.Marshal(card) // maps of strings: cannot fail
	return b
}

func (l *liveAgents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == agentfleet.JWKSPath {
		w.Header().Set("Content-Type", "application/json")
		w.Write(l.jwks)
		return
	}
	var mode liveMode
	for _, m := range liveModes {
		if r.URL.Path == l.url(m)[len(l.origin):] {
			mode = m
		}
	}
	l.mu.Lock()
	var body []byte
	switch mode {
	case liveChanging:
		body = l.changingCard(l.changingVersion())
	case liveFlagged:
		body = l.signed
		if l.unsigned {
			body = l.unsignedCard
		}
	case liveRecovering:
		if l.now().Before(l.failUntil) {
			l.mu.Unlock()
			http.Error(w, `{"error":"upstream unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		body = l.recovering
	case livePending:
		body = l.pending
	}
	l.mu.Unlock()
	if body == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// Ask to be fetched again soon; the crawler clamps it to its minimum.
	w.Header().Set("Cache-Control", "max-age=60")
	w.Write(body)
}

func (l *liveAgents) close() {
	if l.srv != nil {
		l.srv.Close()
	}
}
