// Package probertest serves fake A2A endpoints on loopback for the prober's
// tests and benchmark: agentfleet.A2AServer (the same endpoints the demo's
// agents use), under the names the tests use. Only tests import it; the
// cardex binary links agentfleet, never this package
// (cmd/cardex/imports_test.go).
package probertest

import (
	"fmt"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
)

// Behavior is what one fake endpoint does.
type Behavior = agentfleet.A2ABehavior

// Behaviors (agentfleet/a2a.go says what each answers).
const (
	JSONRPCv1       = agentfleet.A2AJSONRPCv1
	JSONRPCv03      = agentfleet.A2AJSONRPCv03
	JSONRPCStrict   = agentfleet.A2AJSONRPCStrict
	RESTv1          = agentfleet.A2ARESTv1
	RESTv03         = agentfleet.A2ARESTv03
	AuthRequired    = agentfleet.A2AAuthRequired
	HTML            = agentfleet.A2AHTML
	NotJSONRPC      = agentfleet.A2ANotJSONRPC
	Hang            = agentfleet.A2AHang
	Reset           = agentfleet.A2AReset
	Unavailable     = agentfleet.A2AUnavailable
	RateLimited     = agentfleet.A2ARateLimited
	RedirectToLocal = agentfleet.A2ARedirectToLocal
	MethodMissing   = agentfleet.A2AMethodMissing
)

// Fleet is a running set of fake endpoints on one loopback HTTP server
// (each endpoint on its own path) and one TLS HTTP/2 server for gRPC.
type Fleet struct {
	*agentfleet.A2AServer
}

// Start starts a fleet on 127.0.0.1; Close stops it.
func Start() *Fleet {
	f, err := StartOn("127.0.0.1", 0)
	if err != nil {
		panic(fmt.Sprintf("probertest: %v", err))
	}
	return f
}

// StartOn starts a fleet whose HTTP server listens on host:port (port 0
// picks a free one) and whose gRPC server listens on a free port of the
// same host.
func StartOn(host string, port int) (*Fleet, error) {
	s, err := agentfleet.StartA2A(host, port, 0)
	if err != nil {
		return nil, err
	}
	return &Fleet{s}, nil
}

// Timeout is a probe timeout comfortably above a loopback round trip and
// short enough that the hanging endpoint ends a test quickly.
const Timeout = 500 * time.Millisecond
