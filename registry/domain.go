// Package registry is the domain of Cardex: agents, their card versions,
// curation, health, trust, tokens, the audit log and the change log, kept in
// SQL (SQLite or PostgreSQL). SQL is the source of truth; everything else
// (the search index, the UI) is derived from it.
package registry

import (
	"time"

	"github.com/cardexhq/cardex/agentcard"
)

// Status is the curation status an admin sets (docs/api.md "Curation and visibility").
type Status string

// Curation statuses.
const (
	StatusPending   Status = "pending"
	StatusApproved  Status = "approved"
	StatusRejected  Status = "rejected"
	StatusSuspended Status = "suspended"
	StatusRemoved   Status = "removed"
)

// Health is what the crawler last saw.
type Health string

// Health values.
const (
	HealthUnknown Health = "unknown"
	HealthOK      Health = "ok"
	HealthFailing Health = "failing"
	HealthGone    Health = "gone"
)

// Visibility decides who may list an agent.
type Visibility string

// Visibility values.
const (
	VisibilityPublic   Visibility = "public"
	VisibilityInternal Visibility = "internal"
	// VisibilityGroups: listed and read only by callers holding one of the
	// agent's groups (Agent.Groups), its host's publisher tokens and admins
	// (registry/visibility.go).
	VisibilityGroups Visibility = "groups"
)

// Trust is the verification status of the current card (docs/verification.md).
type Trust string

// Trust values.
const (
	TrustUnknown   Trust = "unknown" // never fetched
	TrustUnsigned  Trust = "unsigned"
	TrustVerified  Trust = "verified"
	TrustInvalid   Trust = "invalid"
	TrustUntrusted Trust = "untrusted"
	TrustError     Trust = "error"
)

// Role is what an API token may do.
type Role string

// Token roles. The zero Role is an anonymous caller.
const (
	RoleAdmin     Role = "admin"
	RolePublisher Role = "publisher"
	RoleReader    Role = "reader"
)

// Principal is the caller of a use case.
type Principal struct {
	Role    Role     // "" for anonymous
	TokenID string   // "" for anonymous
	Name    string   // the token's name, recorded in the audit log
	Hosts   []string // publisher tokens: the hosts they may act on
	// Origin, when set, narrows a publisher token to the agents whose card
	// URL has this origin (scheme://host[:port]): a token a host claim
	// issued (docs/claims.md).
	Origin string
	// Groups are the groups the caller holds, matched exactly
	// (case-sensitive) against an agent's groups: a token's groups
	// (cardex token create --groups) or, for a person signed in with an
	// identity provider, its groups claim. Ignored for anonymous callers.
	Groups []string
	// Subject and DisplayName are who a person signed in with an identity
	// provider is: the stable subject claim and the email or name the
	// provider gave, recorded in the audit log beside the token name.
	// Empty for a Cardex token.
	Subject     string
	DisplayName string
}

// Anonymous is the caller without a token.
var Anonymous = Principal{}

// Agent is the agent record of docs/api.md.
type Agent struct {
	ID         string     `json:"id"`
	CardURL    string     `json:"cardUrl"`
	FetchedURL string     `json:"fetchedUrl"`
	Host       string     `json:"host"`
	Status     Status     `json:"status"`
	Visibility Visibility `json:"visibility"`
	// Groups are the groups an agent of visibility "groups" is for, sorted;
	// nil otherwise, and shown to admins only (redact.go).
	Groups        []string    `json:"groups,omitempty"`
	Health        Health      `json:"health"`
	Trust         Trust       `json:"trust"`
	NeedsReview   bool        `json:"needsReview"`
	CreatedAt     time.Time   `json:"createdAt"`
	UpdatedAt     time.Time   `json:"updatedAt"`
	LastFetchedAt *time.Time  `json:"lastFetchedAt"`
	LastChangedAt *time.Time  `json:"lastChangedAt"`
	NextFetchAt   *time.Time  `json:"nextFetchAt"`
	LastError     *FetchError `json:"lastError"`
	// LastSuccessAt, FailingSince and ConsecutiveFailures are the fetch
	// health history: when the card last loaded, since when every fetch has
	// failed (nil while healthy) and how many failed in a row.
	LastSuccessAt       *time.Time        `json:"lastSuccessAt"`
	FailingSince        *time.Time        `json:"failingSince"`
	ConsecutiveFailures int               `json:"consecutiveFailures"`
	VersionSeq          int64             `json:"versionSeq"`
	Card                *agentcard.Card   `json:"card"`
	Signatures          []SignatureResult `json:"signatures"`
	// NotCovered are the JSON pointers of the members of the current
	// version that its verifying signature does not cover: not shown,
	// served, indexed or probed — "not covered by the signature, ignored"
	// (docs/verification.md). Empty when the signature covers everything
	// Cardex reads, or nothing verified.
	NotCovered []string            `json:"notCovered,omitempty"`
	Problems   []agentcard.Problem `json:"problems"`
	// CardView is the current version's stored view, set by ListedViews,
	// or its stored summary, set by ListedSummaries, in place of Card
	// (views.go).
	CardView *CardView `json:"-"`
	// Liveness is what the protocol probes say (docs/liveness.md). Lists
	// carry the state; the record of one agent adds uptime and the
	// per-interface detail.
	Liveness *Liveness `json:"liveness"`
	// Catalog is the AI Catalog the agent was found through, "" when it
	// was submitted directly (docs/discovery.md).
	Catalog string `json:"catalog,omitempty"`
	// CatalogInline: the card is an inline entry of that catalog (it has
	// no URL of its own; cardUrl names the catalog document and the
	// entry's identifier).
	CatalogInline bool `json:"catalogInline,omitempty"`
	// CatalogMissing: the last complete crawl of the catalog no longer
	// listed the agent. Its card is still fetched from its URL, and only
	// a failing fetch counts; an inline agent, which has no other source,
	// is recorded as missing, as a card that answers 404 is, until the
	// entry is listed again.
	CatalogMissing bool `json:"catalogMissing,omitempty"`
	// CatalogQueries are the representativeQueries of the catalog entry
	// that lists the agent (example questions people would ask to find
	// it), within aicatalog's bounds; search indexes them as text.
	CatalogQueries []string `json:"catalogQueries,omitempty"`
	// CatalogSource is where the agent's catalog entry came from: the
	// document, the entry's identifier and publisher as written
	// (docs/discovery.md "Provenance"); nil for an agent submitted
	// directly.
	CatalogSource *CatalogSource `json:"catalogSource,omitempty"`
	// AutoApproveHeld says why the approval policy left the agent pending
	// though its rule applied: its registrable domain had its automatic
	// approvals of the day (docs/claims.md). A curator decides.
	AutoApproveHeld string `json:"autoApproveHeld,omitempty"`
}

// FetchError is the last failed fetch of an agent.
type FetchError struct {
	At         time.Time `json:"at"`
	Class      string    `json:"class"` // docs/security.md "Network policy" error classes
	HTTPStatus int       `json:"httpStatus,omitempty"`
	Message    string    `json:"message"`
}

// SignatureResult is the verdict on one signature of a card version.
// registry does not import the verifier: the crawler translates.
type SignatureResult struct {
	Index      int    `json:"index"`
	Kid        string `json:"kid"`
	Alg        string `json:"alg"`
	KeySource  string `json:"keySource"` // pinned, jku, well-known, none
	Profile    string `json:"profile,omitempty"`
	Status     string `json:"status"` // verified, invalid, untrusted, error
	Reason     string `json:"reason,omitempty"`
	Thumbprint string `json:"thumbprint,omitempty"` // RFC 7638, when verified
	// Unsigned are the JSON pointers of members Cardex reads that the
	// profile of a verified signature leaves out: not covered by the
	// signature, ignored (docs/verification.md). Versions judged by an
	// earlier release may carry the disagreeing ones of an invalid
	// signature until they are verified again (migrations 00170).
	Unsigned []string `json:"unsigned,omitempty"`
}

// Change is one entry of the change log that mirrors and the search indexer
// follow.
type Change struct {
	Seq     int64     `json:"seq"`
	AgentID string    `json:"agentId"`
	Kind    string    `json:"kind"`
	At      time.Time `json:"at"`
}

// Change kinds (docs/api.md).
const (
	ChangeSubmitted  = "submitted"
	ChangeFetched    = "fetched"
	ChangeChanged    = "changed"
	ChangeApproved   = "approved"
	ChangeRejected   = "rejected"
	ChangeSuspended  = "suspended"
	ChangeRestored   = "restored"
	ChangeRemoved    = "removed"
	ChangeHealth     = "health"
	ChangeTrust      = "trust"
	ChangeVisibility = "visibility"
	ChangeKeys       = "keys"
	// ChangeLiveness: the agent's liveness state changed (docs/liveness.md).
	ChangeLiveness = "liveness"
	// ChangeUnlisted is what a caller sees, instead of the change's kind,
	// for a change that took the agent out of what it may list
	// (visibility.go feedKind); the log itself never stores it.
	ChangeUnlisted = "unlisted"
)
