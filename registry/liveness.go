package registry

import (
	"time"
)

// LivenessState says whether an agent answers A2A (docs/liveness.md).
type LivenessState string

// Liveness states, derived from the latest probe of each interface.
const (
	// LivenessAnswering: every interface answers A2A (or answers that it
	// needs credentials).
	LivenessAnswering LivenessState = "answering"
	// LivenessDegraded: some interfaces fail or are not conformant.
	LivenessDegraded LivenessState = "degraded"
	// LivenessUnreachable: no interface could be reached.
	LivenessUnreachable LivenessState = "unreachable"
	// LivenessUnknown: never probed (or probing is off).
	LivenessUnknown LivenessState = "unknown"
)

// LivenessStates lists the states in the order filters and facets show them.
var LivenessStates = []LivenessState{LivenessAnswering, LivenessDegraded, LivenessUnreachable, LivenessUnknown}

// Probe outcomes: the class of one probe of one interface.
const (
	// OutcomeAnswering: a conformant A2A reply (a JSON-RPC 2.0 envelope, an
	// A2A error such as task not found, a JSON 404 of the HTTP+JSON
	// binding, a gRPC status).
	OutcomeAnswering = "answering"
	// OutcomeAuthRequired: 401 or 403: something answers and wants
	// credentials. Counts as up.
	OutcomeAuthRequired = "auth_required"
	// OutcomeNonconformant: reachable, but the reply is not A2A (HTML, a
	// bare 404, a 200 that is not a JSON-RPC envelope, a redirect that was
	// not followed).
	OutcomeNonconformant = "nonconformant"
	// OutcomeUnreachable: no answer: name, connect or TLS failure, refused
	// address, timeout, reset, 5xx.
	OutcomeUnreachable = "unreachable"
	// OutcomeRateLimited: 429: no verdict; the next probe waits for
	// Retry-After. It neither counts for nor against uptime.
	OutcomeRateLimited = "rate_limited"
)

// ProbeOutcomes lists every outcome (metrics and the API enum).
var ProbeOutcomes = []string{OutcomeAnswering, OutcomeAuthRequired, OutcomeNonconformant, OutcomeUnreachable, OutcomeRateLimited}

// outcomeUp reports whether an outcome counts as answering for uptime.
func outcomeUp(o string) bool { return o == OutcomeAnswering || o == OutcomeAuthRequired }

// outcomeFailing reports whether an outcome makes its interface failing.
func outcomeFailing(o string) bool { return o == OutcomeNonconformant || o == OutcomeUnreachable }

// Liveness is the liveness object of the agent record.
type Liveness struct {
	State LivenessState `json:"state"`
	// Since is when the agent entered State (nil while unknown).
	Since *time.Time `json:"since"`
	// FailingSince is Since when the state is degraded or unreachable.
	FailingSince *time.Time `json:"failingSince"`
	// Probing is false when an admin turned probing off for this agent.
	Probing bool `json:"probing"`
	// The rest is filled for the record of one agent only.
	LastProbeAt *time.Time          `json:"lastProbeAt,omitempty"`
	Uptime      *Uptime             `json:"uptime,omitempty"`
	P50MS       *int64              `json:"p50Ms,omitempty"`
	Interfaces  []InterfaceLiveness `json:"interfaces,omitempty"`
	Days        []UptimeDay         `json:"days,omitempty"`
}

// Uptime is the share of probes that answered (answering or auth_required)
// over a window; nil when no probe counted in it.
type Uptime struct {
	H24 *float64 `json:"24h"`
	D7  *float64 `json:"7d"`
	D30 *float64 `json:"30d"`
}

// InterfaceLiveness is the latest probe of one interface.
type InterfaceLiveness struct {
	URL             string     `json:"url"`
	Binding         string     `json:"binding"`
	ProtocolVersion string     `json:"protocolVersion"`
	Outcome         string     `json:"outcome"`
	ErrorClass      string     `json:"errorClass,omitempty"`
	LatencyMS       int64      `json:"latencyMs"`
	HTTPStatus      int        `json:"httpStatus,omitempty"`
	RPCCode         int        `json:"rpcCode,omitempty"`
	Message         string     `json:"message,omitempty"`
	LastProbeAt     time.Time  `json:"lastProbeAt"`
	FailingSince    *time.Time `json:"failingSince"`
}

// UptimeDay is one daily roll-up (UTC day).
type UptimeDay struct {
	Day           string `json:"day"` // YYYY-MM-DD
	Probes        int64  `json:"probes"`
	Up            int64  `json:"up"`
	Nonconformant int64  `json:"nonconformant"`
	Down          int64  `json:"down"`
}

// Probe is one probe of one interface, as the history lists it.
type Probe struct {
	ID              int64     `json:"id"`
	At              time.Time `json:"at"`
	URL             string    `json:"url"`
	Binding         string    `json:"binding"`
	ProtocolVersion string    `json:"protocolVersion"`
	Outcome         string    `json:"outcome"`
	ErrorClass      string    `json:"errorClass,omitempty"`
	LatencyMS       int64     `json:"latencyMs"`
	HTTPStatus      int       `json:"httpStatus,omitempty"`
	RPCCode         int       `json:"rpcCode,omitempty"`
	Message         string    `json:"message,omitempty"`
}

// livenessOf is the list form of the liveness object, from the agent row.
func livenessOf(r *agentRow) *Liveness {
	l := &Liveness{State: LivenessState(r.Liveness), Probing: !r.ProbeDisabled}
	if l.State == "" {
		l.State = LivenessUnknown
	}
	if l.State != LivenessUnknown {
		l.Since = utcPtr(r.LivenessSince)
	}
	if l.State == LivenessDegraded || l.State == LivenessUnreachable {
		l.FailingSince = l.Since
	}
	return l
}

// deriveLiveness is the agent's state from its interfaces' outcomes
// (rate-limited probes carry no verdict and are left out).
func deriveLiveness(outcomes []string) LivenessState {
	up, down, other := 0, 0, 0
	for _, o := range outcomes {
		switch {
		case outcomeUp(o):
			up++
		case o == OutcomeUnreachable:
			down++
		case o == OutcomeNonconformant:
			other++
		}
	}
	switch {
	case up+down+other == 0:
		return LivenessUnknown
	case up > 0 && down == 0 && other == 0:
		return LivenessAnswering
	case down > 0 && up == 0 && other == 0:
		return LivenessUnreachable
	}
	return LivenessDegraded
}

// dayOf is the UTC day of t, as probe_days keys it.
func dayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }
