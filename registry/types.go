package registry

import (
	"time"

	"github.com/cardexhq/cardex/agentcard"

	"github.com/cardexhq/cardex/cardurl"
)

// Version is one stored card version (docs/api.md). Raw is the
// card exactly as fetched; it is filled only by Service.Version.
type Version struct {
	Seq             int64               `json:"seq"`
	SHA256          string              `json:"sha256"`
	FetchedAt       time.Time           `json:"fetchedAt"`
	FetchedURL      string              `json:"fetchedUrl"`
	ProtocolVersion string              `json:"protocolVersion"`
	Trust           Trust               `json:"trust"`
	Current         bool                `json:"current"`
	Candidate       bool                `json:"candidate"`
	Diff            []agentcard.Change  `json:"diff"`
	Raw             []byte              `json:"-"`
	Profile         string              `json:"profile,omitempty"`
	Signatures      []SignatureResult   `json:"signatures"`
	Thumbprints     []string            `json:"thumbprints"`
	Problems        []agentcard.Problem `json:"problems"`
}

// Action is an admin curation action (docs/api.md "Curation and visibility").
type Action string

// Curation actions.
const (
	ActionApprove Action = "approve"
	ActionReject  Action = "reject"
	ActionSuspend Action = "suspend"
	ActionRestore Action = "restore"
	ActionRemove  Action = "remove"
)

// ActionRequest is the body of an admin action. VersionSeq is required for
// approve (docs/api.md) and ignored by the other actions.
type ActionRequest struct {
	Reason     string
	VersionSeq *int64
}

// URLPolicy is the submission side of the network policy: the card-URL
// rule's policy (package cardurl).
type URLPolicy = cardurl.Policy

// ListQuery selects and orders agents. Filters on Status, Health and
// Visibility are for admins only (docs/api.md "Curation and visibility").
type ListQuery struct {
	Status     []Status
	Health     []Health
	Trust      []Trust
	Visibility []Visibility
	// NeedsReview, when set, keeps only agents whose flag has that value
	// (the admin review queue lists flagged agents with it).
	NeedsReview *bool
	// Hosts, when set, keeps only agents of these hosts (exact, lower case).
	Hosts     []string
	PageSize  int    // default 20, clamped to 100
	PageToken string // opaque, from AgentPage.NextPageToken
	Sort      string // "updated" (default, newest first) or "name"
}

// AgentPage is one page of a list.
type AgentPage struct {
	Agents        []Agent `json:"agents"`
	NextPageToken string  `json:"nextPageToken"`
	TotalSize     int     `json:"totalSize"`
}

// FetchAttempt is one entry of an agent's crawl trace.
type FetchAttempt struct {
	At         time.Time     `json:"at"`
	URL        string        `json:"url"`
	HTTPStatus int           `json:"httpStatus,omitempty"`
	Duration   time.Duration `json:"-"`
	DurationMS int64         `json:"durationMs"`
	Bytes      int64         `json:"bytes"`
	ErrorClass string        `json:"errorClass,omitempty"` // "" on success; docs/security.md "Network policy" classes
	Message    string        `json:"message,omitempty"`
	// Result is filled by the store: "new-version", "unchanged" (304 or the
	// same bytes) or "error".
	Result string `json:"result"`
}

// Fetch attempt results.
const (
	ResultNewVersion = "new-version"
	ResultUnchanged  = "unchanged"
	ResultError      = "error"
)

// Token is an API token without its secret.
type Token struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       Role       `json:"role"`
	Hosts      []string   `json:"hosts"`
	Groups     []string   `json:"groups"`           // the groups it holds (visibility.go), [] for none
	Origin     string     `json:"origin,omitempty"` // a claim's token: the one origin it acts on
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	ExpiresAt  *time.Time `json:"expiresAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
}

// TokenRequest describes a token to create. An empty Name gets a generated
// one; Hosts are required for (and only allowed on) publisher tokens.
type TokenRequest struct {
	Role  Role
	Name  string
	Hosts []string
	// Groups are the groups a reader or publisher token holds: it lists
	// and reads the agents of visibility "groups" for one of them
	// (docs/security.md "Agents for groups"). Admin tokens take none.
	Groups    []string
	ExpiresAt *time.Time
	// Origin narrows a publisher token to one origin of its host (set for
	// the token of a host claim).
	Origin string
}

// AuditEntry is one admin action in the audit log.
type AuditEntry struct {
	Seq       int64     `json:"seq"`
	At        time.Time `json:"at"`
	ActorID   string    `json:"actorId"`   // token id, "" for anonymous
	ActorName string    `json:"actorName"` // token name, "anonymous" or "cli"; a person's email or name
	// ActorSubject and ActorDisplayName say who acted when a person
	// signed in with the identity provider (docs/identity.md).
	ActorSubject     string         `json:"actorSubject,omitempty"`
	ActorDisplayName string         `json:"actorDisplayName,omitempty"`
	Action           string         `json:"action"`
	AgentID          string         `json:"agentId,omitempty"`
	Reason           string         `json:"reason,omitempty"`
	Detail           map[string]any `json:"detail,omitempty"`
}

// DueAgent is an agent the crawler has claimed with a lease.
type DueAgent struct {
	ID, CardURL, FetchedURL, Host string
	ETag, LastModified            string
	PinnedKeys                    []byte // JWKS text pinned by an admin, nil when none
	ConsecutiveFailures           int
	ConsecutiveMissing            int
	FailingSince                  *time.Time
	BareHost                      bool // the legacy agent.json fallback applies
	LeaseUntil                    time.Time
	// Latest is the newest stored version's bytes when its verdict depends
	// on keys (it is signed) and the fetch will be conditional, and
	// LatestURL the URL it came from: on a 304 the crawler re-verifies
	// them (docs/threats.md D.52) and reports the verdict with Raw set to
	// them. Nil otherwise.
	Latest    []byte
	LatestURL string
	// CatalogCard is the card of an agent given inline in its catalog
	// (nil otherwise): the crawler parses and verifies these bytes instead
	// of fetching CardURL, which names the catalog entry, not a card.
	CatalogCard []byte
	// CatalogMissing: the agent's catalog no longer lists it. For an
	// inline agent the crawler fetches nothing and records the attempt as
	// ErrorClassNotListed; an agent with a card URL is fetched as always.
	CatalogMissing bool
	Catalog        string // the catalog that brought the agent, "" otherwise
}

// ErrorClassNotListed is the error class of a crawl of an agent its
// catalog no longer lists: a missing card, like a 404 (isMissing).
const ErrorClassNotListed = "not_listed"

// FetchResult is what the crawler reports for one claimed agent. A 304
// (NotModified) may carry Raw (the stored bytes it re-verified, from
// DueAgent.Latest) with Trust, Profile, Signatures and Thumbprints but no
// Card: the verdict of those bytes under the keys of now.
type FetchResult struct {
	Attempt                        FetchAttempt // At, URL, HTTPStatus, Duration, Bytes, ErrorClass ("" on success), Message
	NotModified                    bool         // 304
	FetchedURL, ETag, LastModified string
	Raw                            []byte
	// LegacyRaw is the agent's v0.3 rendering of the same card, fetched
	// without A2A-Version: 1.0 when the answer varied on it; nil when the
	// agent serves one rendering. Kept with the version it came with.
	LegacyRaw []byte
	// ContentSHA256 is the hex SHA-256 of the card's RFC 8785 form without
	// its top-level `signatures`: with the set of verifying keys and the
	// trust, the identity of a version. Empty: versions compare by bytes.
	ContentSHA256   string
	Card            *agentcard.Card
	Problems        []agentcard.Problem
	ProtocolVersion string
	Trust           Trust
	Profile         string
	Signatures      []SignatureResult
	Thumbprints     []string  // RFC 7638 thumbprints of the keys that verified
	NextFetchAt     time.Time // the crawler's schedule; zero means one hour later
}
