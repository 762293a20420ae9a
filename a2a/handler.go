package a2a

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/cardexhq/cardex/discover"
)

// Config is what the A2A surface needs.
type Config struct {
	Finder discover.Finder
	Gate   *discover.Gate
	// BaseURL is Cardex's public URL (--base-url). Empty: each answer
	// uses the origin the request came to.
	BaseURL string
	// Version is Cardex's version, the card's `version`.
	Version string
	// Sign, when set, signs the card (Cardex's --card-key); it needs
	// BaseURL, so the signed card never names a host a client chose.
	Sign   func(card []byte) ([]byte, error)
	Logger *slog.Logger
}

// ErrSignNeedsBaseURL: a signed card must name the server's public URL,
// not whatever Host a request carried.
var ErrSignNeedsBaseURL = errors.New("a2a: signing the agent card needs the public base URL")

type handler struct {
	finder  discover.Finder
	gate    *discover.Gate
	base    string
	version string
	sign    func([]byte) ([]byte, error)
	log     *slog.Logger

	// cards are the built cards: [0] with the 0.3 members, [1] the v1
	// rendering (A2A-Version: 1.0).
	cards [2]builtCard
}

type builtCard struct {
	once  sync.Once
	bytes []byte
	err   error
}

// New returns the handler of the card and both interfaces; mount it at
// CardPath and under /a2a/.
func New(cfg Config) (http.Handler, error) {
	if cfg.Sign != nil && cfg.BaseURL == "" {
		return nil, ErrSignNeedsBaseURL
	}
	h := &handler{finder: cfg.Finder, gate: cfg.Gate, base: strings.TrimSuffix(cfg.BaseURL, "/"),
		version: cfg.Version, sign: cfg.Sign, log: cfg.Logger}
	if h.version == "" {
		h.version = "1.0.0"
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.gate == nil {
		h.gate = &discover.Gate{}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CardPath, h.serveCard)
	mux.HandleFunc("OPTIONS "+CardPath, h.serveCard)
	mux.HandleFunc(JSONRPCPath, h.serveJSONRPC)
	// The same endpoint with a trailing slash (the A2A TCK posts there).
	mux.HandleFunc(JSONRPCPath+"/{$}", h.serveJSONRPC)
	mux.HandleFunc(RESTPath+"/", h.serveREST)
	return mux, nil
}

// baseOf is the base URL answers link to.
func (h *handler) baseOf(r *http.Request) string {
	if h.base != "" {
		return h.base
	}
	return requestBase(r)
}

// requestBase is the origin r was sent to.
func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// cors lets browser clients on any origin call the interfaces: they are
// read-only, and a bearer token is never sent by a browser on its own.
func cors(w http.ResponseWriter, r *http.Request, methods string) (preflight bool) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Expose-Headers", "Retry-After")
	if r.Method != http.MethodOptions {
		return false
	}
	hd.Set("Access-Control-Allow-Methods", methods)
	hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, A2A-Version, A2A-Extensions")
	hd.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// Protocol versions this server speaks.
const (
	v03 = "0.3"
	v10 = "1.0"
)

// protocolVersion reads A2A-Version from the header or the query string;
// an empty value is 0.3 (A2A 1.0 §3.6.2). ok is false for a version this
// server does not speak.
func protocolVersion(r *http.Request) (v string, ok bool) {
	v = strings.TrimSpace(r.Header.Get("A2A-Version"))
	if v == "" {
		v = strings.TrimSpace(r.URL.Query().Get("A2A-Version"))
	}
	switch v {
	case "", v03, "0.3.0":
		return v03, true
	case v10, "1.0.0":
		return v10, true
	}
	return v, false
}

func itoa(n int) string { return strconv.Itoa(n) }
