package registry

import "time"

// The gorm models mirror migrations/*/00001_registry.sql column for column;
// TestModelsMatchSchema keeps them honest. The schema comes from the
// migrations only, never from AutoMigrate (CONTRIBUTING.md).

type agentRow struct {
	ID                  string `gorm:"primaryKey"`
	CardURL             string
	FetchedURL          string
	Host                string
	BareHost            bool
	Status              string
	Visibility          string
	VisibleGroups       string // the groups of visibility "groups", "\ng1\ng2\n"; "" otherwise (migrations 00190)
	Health              string
	Trust               string
	NeedsReview         bool
	Name                string
	LastFetchedAt       *time.Time
	LastChangedAt       *time.Time
	LastSuccessAt       *time.Time
	FailingSince        *time.Time
	ConsecutiveFailures int
	ConsecutiveMissing  int
	ETag                string `gorm:"column:etag"`
	LastModified        string
	NextFetchAt         time.Time
	LeaseOwner          string
	LeaseUntil          *time.Time
	PinnedKeys          *string
	VerifiedThumbprints string // JSON list of every thumbprint that ever verified a version of this agent
	CurrentVersionSeq   int64
	CandidateVersionSeq int64
	LatestVersionSeq    int64
	LastErrorClass      string
	LastErrorStatus     int
	LastErrorMessage    string
	LastErrorAt         *time.Time
	CreatedAt           time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt           time.Time `gorm:"autoUpdateTime:false"`
	SubmitterTokenID    string    // the publisher token that submitted it, "" otherwise
	CatalogURL          string    // the AI Catalog that brought it, "" otherwise (migrations 00060)
	CatalogCard         []byte    // an inline entry's card, from the catalog document (migrations 00080)
	CatalogMissing      bool      // the catalog's last complete crawl did not list it (migrations 00080)
	CatalogQueries      *string   // JSON array: the catalog entry's representativeQueries, nil when none (migrations 00100)
	CatalogSource       *string   // JSON: where a catalog-listed agent came from (CatalogSource), nil otherwise (migrations 00210)
	CatalogIdentifier   *string   // the entry's urn:air identifier when it is the publisher's own, nil otherwise (migrations 00210)
	AutoApproveHeld     string    // why the approval policy left it pending (the daily bound per domain), "" otherwise (migrations 00140)
	// Liveness probes (migrations 00030; liveness.go).
	ProbeNextAt     *time.Time
	ProbeLeaseOwner string
	ProbeLeaseUntil *time.Time
	ProbeFailures   int
	ProbeDisabled   bool
	Liveness        string `gorm:"default:unknown"`
	LivenessSince   *time.Time
}

func (agentRow) TableName() string { return "agents" }

type versionRow struct {
	AgentID         string `gorm:"primaryKey"`
	Seq             int64  `gorm:"primaryKey;autoIncrement:false"`
	Raw             []byte
	LegacyRaw       []byte // the agent's v0.3 rendering of this version, nil when none
	SHA256          string `gorm:"column:sha256"`
	ContentSHA256   string `gorm:"column:content_sha256"` // see FetchResult.ContentSHA256; "" for old rows
	FetchedAt       time.Time
	FetchedURL      string
	ProtocolVersion string
	Trust           string
	Verdict         string // JSON verdict{}
	Problems        string // JSON []agentcard.Problem
	Card            string // JSON agentcard.Card, or "null"
	Diff            string // JSON []agentcard.Change from the previous version
	// Reverify: the version is to be judged again from its bytes
	// (migrations 00170, StoredToReverify); cleared by any new verdict.
	Reverify bool
}

func (versionRow) TableName() string { return "card_versions" }

// viewRow is what a listing shows of a version (migrations 00110, 00111,
// 00130):
// the view of its card (what agentcard.ViewJSON wrote at revision Rev),
// the card's shape and protocol versions (a JSON array), and copies of the
// version's verdict and problems (versionRow's, updated with it).
type viewRow struct {
	AgentID          string `gorm:"primaryKey"`
	Seq              int64  `gorm:"primaryKey;autoIncrement:false"`
	Rev              int
	Rendered         []byte
	Shape            string
	ProtocolVersions string
	Verdict          string
	Problems         string
	// Summary is agentcard's SummaryJSON of the card (migration 00130).
	Summary []byte
}

func (viewRow) TableName() string { return "card_views" }

// verdict is the stored verification result of one version.
type verdict struct {
	Profile     string            `json:"profile,omitempty"`
	Signatures  []SignatureResult `json:"signatures"`
	Thumbprints []string          `json:"thumbprints"`
}

// notCovered is what the signature that makes Cardex's view of the card
// (the verified one under the verdict's profile) leaves out.
func (v verdict) notCovered() []string {
	if v.Profile == "" {
		return nil
	}
	for _, s := range v.Signatures {
		if s.Status == string(TrustVerified) && s.Profile == v.Profile {
			return s.Unsigned
		}
	}
	return nil
}

type fetchRow struct {
	ID         int64 `gorm:"primaryKey"`
	AgentID    string
	At         time.Time
	URL        string `gorm:"column:url"`
	HTTPStatus int    `gorm:"column:http_status"`
	DurationMS int64  `gorm:"column:duration_ms"`
	Bytes      int64
	ErrorClass string
	Message    string
	Result     string
}

func (fetchRow) TableName() string { return "fetch_attempts" }

type tokenRow struct {
	ID         string `gorm:"primaryKey"`
	Name       string
	Role       string
	Hosts      string    // JSON list
	Hash       string    // hex SHA-256 of the secret; the secret is never stored
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
	LastUsedAt *time.Time
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	ClaimID    string // the host claim it was issued for, "" when an admin made it
	Origin     string // scheme://host[:port] a claim's token acts on; "" is the whole host
	MemberOf   string // JSON list of the groups the token holds (migrations 00190)
}

func (tokenRow) TableName() string { return "tokens" }

// hostClaimRow is a host claim (hostclaim.go).
type hostClaimRow struct {
	ID         string `gorm:"primaryKey"`
	Host       string // host[:port] where the token is served
	ScopeHost  string // the host name a publisher token from it is scoped to
	Scheme     string
	Token      string    // the public challenge served at the claim URL
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
	ExpiresAt  time.Time
	VerifiedAt *time.Time
	TokenID    string // the publisher token issued at verification
	// Requester is who asked: the rate-limit key of the client address, or
	// token:{id}; unverified claims are capped per scope host and requester.
	Requester     string
	LastAttemptAt *time.Time // the last verification fetch, to space attempts
}

func (hostClaimRow) TableName() string { return "host_claims" }

type auditRow struct {
	Seq          int64 `gorm:"primaryKey"`
	At           time.Time
	ActorTokenID string
	ActorName    string
	// ActorSubject and ActorDisplay are the identity provider's subject
	// and email or name of a person who signed in with it
	// (docs/identity.md); empty for a token.
	ActorSubject string
	ActorDisplay string
	Action       string
	AgentID      string
	Reason       string
	Detail       string // JSON object
}

func (auditRow) TableName() string { return "audit_log" }

type changeRow struct {
	Seq     int64 `gorm:"primaryKey"`
	AgentID string
	Kind    string
	At      time.Time
	// ReachBefore and ReachAfter are how far the agent was listed before
	// and after the change (visibility.go reach), for the feed's filter.
	ReachBefore int
	ReachAfter  int
	// GroupsBefore and GroupsAfter are the groups that listed the agent on
	// each side (visibility.go listGroups, encoded as agentRow.VisibleGroups),
	// "" when none did (migrations 00190).
	GroupsBefore string
	GroupsAfter  string
}

func (changeRow) TableName() string { return "changes" }

// agentGroupRow is one group an agent of visibility "groups" is for
// (migrations 00190): agentRow.VisibleGroups as rows, for the listing
// rule's SQL.
type agentGroupRow struct {
	Name    string `gorm:"primaryKey"`
	AgentID string `gorm:"primaryKey"`
}

func (agentGroupRow) TableName() string { return "agent_groups" }

type probeRow struct {
	ID              int64 `gorm:"primaryKey"`
	AgentID         string
	At              time.Time
	URL             string `gorm:"column:url"`
	Binding         string
	ProtocolVersion string
	Outcome         string
	ErrorClass      string
	LatencyMS       int64 `gorm:"column:latency_ms"`
	HTTPStatus      int   `gorm:"column:http_status"`
	RPCCode         int   `gorm:"column:rpc_code"`
	Message         string
}

func (probeRow) TableName() string { return "probes" }

type probeIfaceRow struct {
	AgentID         string `gorm:"primaryKey"`
	URL             string `gorm:"column:url;primaryKey"`
	Binding         string `gorm:"primaryKey"`
	ProtocolVersion string `gorm:"primaryKey"` // migrations 00171
	Outcome         string
	ErrorClass      string
	LatencyMS       int64 `gorm:"column:latency_ms"`
	HTTPStatus      int   `gorm:"column:http_status"`
	RPCCode         int   `gorm:"column:rpc_code"`
	Message         string
	LastProbeAt     time.Time
	FailingSince    *time.Time
}

func (probeIfaceRow) TableName() string { return "probe_interfaces" }

type probeDayRow struct {
	AgentID       string `gorm:"primaryKey"`
	Day           string `gorm:"primaryKey"`
	Probes        int64
	Up            int64
	Nonconformant int64
	Down          int64
	LatencyMSSum  int64 `gorm:"column:latency_ms_sum"`
}

func (probeDayRow) TableName() string { return "probe_days" }

// autoApprovalRow counts the automatic approvals of one registrable domain
// on one UTC day (migrations 00140; autoapprove.go).
type autoApprovalRow struct {
	Domain    string `gorm:"primaryKey"`
	Day       string `gorm:"primaryKey"`
	Approvals int
}

func (autoApprovalRow) TableName() string { return "auto_approvals" }
