package registry

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cardexhq/cardex/cardurl"

	"gorm.io/gorm"
)

// ServiceConfig configures the use cases. The zero value is usable.
type ServiceConfig struct {
	Now       func() time.Time // nil → time.Now
	URLPolicy URLPolicy
	Logger    *slog.Logger
	// GoneAfter is how long an agent may fail before its health is gone
	// (docs/design.md crawl policy; `--gone-after`). Zero means 168h.
	GoneAfter time.Duration
	// KeepFetchAttempts is how many crawl-trace rows are kept per agent.
	// Zero means 50.
	KeepFetchAttempts int
	// ClaimFetcher fetches host-claim URLs (the crawler's hardened
	// fetcher); nil means claims cannot be verified on this server.
	ClaimFetcher ClaimFetcher
	// CatalogCrawler crawls a catalog submitted directly (the crawler's,
	// under its network policy and limits); nil means catalog URLs cannot
	// be submitted on this server.
	CatalogCrawler CatalogCrawler
	// CatalogInterval is when a submitted catalog is crawled again (the
	// crawler's interval, --crawl-interval). Zero means one hour.
	CatalogInterval time.Duration
	// CatalogMaxNew bounds the agents one crawl of a catalog registers
	// (--catalog-max-new); CatalogMaxAgents the agents a catalog registers
	// in all (--catalog-max-agents). Zero means the Default values
	// (docs/threats.md K.97).
	CatalogMaxNew    int
	CatalogMaxAgents int
	// ClaimTTL is how long a host claim may be verified. Zero means
	// DefaultClaimTTL.
	ClaimTTL time.Duration
	// PublisherTokenTTL is the life of a publisher token issued by a
	// verified claim. Zero means DefaultPublisherTokenTTL.
	PublisherTokenTTL time.Duration
	// ClaimAttemptInterval spaces the verification attempts of one claim
	// (--claim-verify-interval). Zero means DefaultClaimAttemptInterval.
	ClaimAttemptInterval time.Duration
	// ClaimsPendingPerRequester caps the unverified, unexpired claims one
	// requester (a client address or a token) holds on one host
	// (--claim-pending-per-client). Zero means DefaultClaimsPending.
	ClaimsPendingPerRequester int
	// AutoApprove is the approval policy (--auto-approve); "" means never.
	AutoApprove AutoApprove
	// AutoApprovePerDomain bounds the automatic approvals per registrable
	// domain and UTC day (--auto-approve-per-domain). Zero means
	// DefaultAutoApprovePerDomain (docs/claims.md).
	AutoApprovePerDomain int
	// SessionIdle ends an admin web session after this long without a
	// request (--session-idle). Zero means DefaultSessionIdle.
	SessionIdle time.Duration
	// SessionMaxAge ends an admin web session this long after sign-in
	// whatever happens (--session-max-age). Zero means
	// DefaultSessionMaxAge.
	SessionMaxAge time.Duration
}

// Service holds the use cases of the registry. It is safe for concurrent
// use; all state lives in the Store.
type Service struct {
	store *Store
	cfg   ServiceConfig
	log   *slog.Logger

	// tokenUse remembers when each token's last_used_at was last written, so
	// Authenticate writes at most once a minute per token and process.
	tokenUse sync.Map // token id → time.Time

	// submits and acts commit concurrent submissions and curation
	// actions together (group.go).
	submits groupCommit[struct{}]
	acts    groupCommit[actWrites]
}

// NewService returns the use cases over store.
func NewService(store *Store, cfg ServiceConfig) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = DefaultSessionIdle
	}
	if cfg.SessionMaxAge <= 0 {
		cfg.SessionMaxAge = DefaultSessionMaxAge
	}
	if cfg.GoneAfter <= 0 {
		cfg.GoneAfter = 168 * time.Hour
	}
	if cfg.KeepFetchAttempts <= 0 {
		cfg.KeepFetchAttempts = 50
	}
	if cfg.CatalogInterval <= 0 {
		cfg.CatalogInterval = time.Hour
	}
	if cfg.CatalogMaxNew <= 0 {
		cfg.CatalogMaxNew = DefaultCatalogMaxNew
	}
	if cfg.CatalogMaxAgents <= 0 {
		cfg.CatalogMaxAgents = DefaultCatalogMaxAgents
	}
	if cfg.AutoApprovePerDomain <= 0 {
		cfg.AutoApprovePerDomain = DefaultAutoApprovePerDomain
	}
	if cfg.ClaimTTL <= 0 {
		cfg.ClaimTTL = DefaultClaimTTL
	}
	if cfg.ClaimAttemptInterval <= 0 {
		cfg.ClaimAttemptInterval = DefaultClaimAttemptInterval
	}
	if cfg.ClaimsPendingPerRequester <= 0 {
		cfg.ClaimsPendingPerRequester = DefaultClaimsPending
	}
	if cfg.PublisherTokenTTL <= 0 {
		cfg.PublisherTokenTTL = DefaultPublisherTokenTTL
	}
	if cfg.AutoApprove == "" {
		cfg.AutoApprove = AutoApproveNever
	}
	s := &Service{store: store, cfg: cfg, log: cfg.Logger}
	s.acts.finish = s.writeActs
	return s
}

// Store is the service's store (for /readyz and the CLI).
func (s *Service) Store() *Store { return s.store }

func (s *Service) now() time.Time { return utc(s.cfg.Now()) }

// newID returns 128 random bits, URL-safe (docs/api.md "Agent identity": ids are opaque
// and unguessable).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// changeLockKey is the PostgreSQL advisory lock that orders change-log
// inserts: sequence values are handed out at insert time but become visible
// at commit, so two overlapping transactions could commit seq 8 before seq
// 7 and a follower reading "after 7" would never see 7. Taking this lock
// for the rest of the transaction makes commit order equal seq order. The
// change row is written last in each transaction to keep the hold short.
// SQLite's single writer needs nothing.
const changeLockKey = 0x63617264_65780001

// addChange writes a change-log row for the agent, which was before and is
// after the change as given (nil before: the agent is new).
func (s *Service) addChange(tx *gorm.DB, before, after *agentRow, kind string, at time.Time) error {
	return s.addChanges(tx, []changeRow{agentChange(before, after, kind, at)})
}

// agentChange is the change-log row of addChange.
func agentChange(before, after *agentRow, kind string, at time.Time) changeRow {
	var was *audience
	if before != nil {
		x := before.audience()
		was = &x
	}
	return changeOf(after.ID, kind, at, was, after.audience())
}

// addChanges writes change-log rows in one statement under the change lock
// (changeLockKey); callers write them last in their transaction.
func (s *Service) addChanges(tx *gorm.DB, rows []changeRow) error {
	if len(rows) == 0 {
		return nil
	}
	if s.store.dialect == DialectPostgres {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", int64(changeLockKey)).Error; err != nil {
			return err
		}
	}
	return tx.Create(&rows).Error
}

// changeOf is the change-log row of a change of kind to the agent id,
// which left it at after; before is nil when the agent was not there
// (a submission). It records who listed the agent on each side
// (visibility.go reach and listGroups).
func changeOf(id, kind string, at time.Time, before *audience, after audience) changeRow {
	row := changeRow{AgentID: id, Kind: kind, At: at, ReachBefore: int(reachAdmins),
		ReachAfter: int(after.reach()), GroupsAfter: encodeGroups(after.listGroups())}
	if before != nil {
		row.ReachBefore, row.GroupsBefore = int(before.reach()), encodeGroups(before.listGroups())
	}
	return row
}

// addListedChange writes a change-log row for a change that leaves who
// lists the agent as it was (its text, its liveness), read from the row.
func (s *Service) addListedChange(tx *gorm.DB, agentID, kind string, at time.Time) error {
	var r agentRow
	if err := tx.Select("id, status, visibility, health, host, visible_groups").Where("id = ?", agentID).Take(&r).Error; err != nil {
		return err
	}
	return s.addChange(tx, &r, &r, kind, at)
}

func actorName(p Principal) string {
	switch {
	case p.Name != "":
		return p.Name
	case p.Role == "":
		return "anonymous"
	}
	return string(p.Role)
}

func (s *Service) addAudit(tx *gorm.DB, p Principal, action, agentID, reason string, detail map[string]any, at time.Time) error {
	row, err := auditOf(p, action, agentID, reason, detail, at)
	if err != nil {
		return err
	}
	return tx.Create(&row).Error
}

// auditOf is the audit entry of addAudit.
func auditOf(p Principal, action, agentID, reason string, detail map[string]any, at time.Time) (auditRow, error) {
	d := "{}"
	if len(detail) > 0 {
		b, err := json.Marshal(detail)
		if err != nil {
			return auditRow{}, err
		}
		d = string(b)
	}
	row := auditRow{At: at, ActorTokenID: p.TokenID, ActorName: actorName(p), Action: action,
		AgentID: agentID, Reason: reason, Detail: d}
	if p.Subject != "" {
		// A person the identity provider signed in holds no Cardex token.
		row.ActorTokenID, row.ActorSubject, row.ActorDisplay = "", p.Subject, p.DisplayName
	}
	return row, nil
}

func (p Principal) isAdmin() bool { return p.Role == RoleAdmin }

// owns reports whether p is a publisher token scoped to the agent with
// this host and card URL (docs/threats.md I.79: exact host match; K.104: a
// token a claim issued acts only on its claim's origin, scheme, host and
// port).
func (p Principal) owns(host, cardURL string) bool {
	return p.Role == RolePublisher && slices.Contains(p.Hosts, host) &&
		(p.Origin == "" || cardurl.Origin(cardURL) == p.Origin)
}

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func parseList(s string) []string {
	var v []string
	if s != "" {
		_ = json.Unmarshal([]byte(s), &v)
	}
	return v
}

func itoa(i int) string { return strconv.Itoa(i) }

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
