package registry

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/cardexhq/cardex/cardurl"
)

// A host claim proves control of a host the way ACME's http-01 challenge
// does (docs/claims.md): Cardex issues a random token, the publisher serves
// it at ClaimPath+token on the host, and Cardex fetches it through the
// crawler's hardened fetcher. A verified claim issues a publisher token
// scoped to the host. (Not to be confused with the crawler's lease claims
// of due agents, claim.go.)

// ClaimPath is where a claim token is served on the claimed host.
const ClaimPath = "/.well-known/cardex-claim/"

// Host-claim defaults.
const (
	DefaultClaimTTL          = time.Hour
	DefaultPublisherTokenTTL = 90 * 24 * time.Hour
	// MaxClaimBodyBytes is the most a claim URL may answer: the token is 43
	// characters, a trailing newline is forgiven, anything much larger is
	// not a claim token and is not read (too_large).
	MaxClaimBodyBytes = 256
	// DefaultClaimAttemptInterval spaces the verification attempts of one
	// claim: each is a request to the host.
	DefaultClaimAttemptInterval = 5 * time.Second
	// DefaultClaimsPending is how many unverified claims one requester may
	// hold on one host at once.
	DefaultClaimsPending = 3
)

// ClaimFetcher fetches a claim URL through the crawler's hardened fetcher
// and network policy (reserved addresses refused, no redirect to another
// origin, a body of at most MaxClaimBodyBytes). A failure's error carries
// the crawler's error class through an ErrorClass method; a fetch not sent
// because the host's claim fetches are at their cap carries a RetryAfter
// method instead.
type ClaimFetcher interface {
	FetchClaim(ctx context.Context, url string) ([]byte, error)
}

// HostClaim is an issued claim. Token is public once served; the id is
// what lets its holder verify the claim, so it is given only to the
// claimant.
type HostClaim struct {
	ID         string     `json:"id"`
	Host       string     `json:"host"`
	Token      string     `json:"token"`
	URL        string     `json:"url"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	VerifiedAt *time.Time `json:"-"`
}

// ClaimRequest asks for a claim on Host (host[:port], the port only where it
// is not the scheme's default) served over Scheme ("https", the default, or
// "http" where the network policy allows it). Requester is who asks (the
// rate-limit key of the client's address, or RequesterToken of a token);
// "" (an admin) is not capped.
type ClaimRequest struct {
	Host      string
	Scheme    string
	Requester string
}

// RequesterToken is the requester of a claim asked for with a token.
func RequesterToken(tokenID string) string { return "token:" + tokenID }

// ClaimedToken is the outcome of a verified claim: the publisher token,
// shown once, and its record.
type ClaimedToken struct {
	Host           string `json:"host"`
	PublisherToken string `json:"publisherToken"`
	Token          Token  `json:"-"`
}

// Reasons a claim fails to verify (the reason member of a claim-failed
// problem).
const (
	ClaimExpired      = "expired"
	ClaimReplayed     = "already-verified"
	ClaimWrongContent = "wrong-content"
	ClaimFetchFailed  = "fetch-failed"
)

// ErrClaimFailed is the sentinel of every *ClaimError.
var ErrClaimFailed = errors.New("claim failed")

// ErrClaimsUnavailable: the server was built without a claim fetcher.
var ErrClaimsUnavailable = errors.New("host claims are not configured on this server")

// ClaimError says why a claim did not verify. ErrorClass is the crawler's
// error class of a failed fetch (docs/security.md "Network policy" classes), "" otherwise.
type ClaimError struct {
	Reason     string
	ErrorClass string
	Detail     string
}

func (e *ClaimError) Error() string { return "claim failed: " + e.Reason + ": " + e.Detail }

// Is makes errors.Is(err, ErrClaimFailed) true.
func (e *ClaimError) Is(target error) bool { return target == ErrClaimFailed }

// normalizeClaimHost reads host[:port] through the card-URL rule, so a claim
// names exactly what a submission could (docs/api.md "Agent identity" and docs/security.md "Network policy"): it returns the
// authority the token is fetched from and the host name publisher tokens are
// scoped to (agents record their host without a port).
func normalizeClaimHost(req ClaimRequest, pol URLPolicy) (scheme, authority, host string, err error) {
	scheme = req.Scheme
	switch scheme {
	case "":
		scheme = "https"
	case "https":
	case "http":
		if !pol.AllowInsecureHTTP {
			return "", "", "", invalidField("/scheme", "not-allowed", "this server fetches claims over https only")
		}
	default:
		return "", "", "", invalidField("/scheme", "enum", `scheme must be "https" or "http"`)
	}
	h := strings.TrimSpace(req.Host)
	if h == "" {
		return "", "", "", invalidField("/host", "required", "host is required")
	}
	if strings.ContainsAny(h, "/?#@\\") || strings.Contains(h, "://") {
		return "", "", "", invalidField("/host", "invalid-host", "host is a host name, with a port only where it is not the default, not a URL")
	}
	cu, err := cardurl.Normalize(scheme+"://"+h+"/", pol)
	var ue *URLError
	switch {
	case errors.As(err, &ue) && ue.Code == URLCodeReserved:
		return "", "", "", err
	case errors.As(err, &ue):
		return "", "", "", invalidField("/host", "invalid-host", ue.Reason)
	case err != nil:
		return "", "", "", err
	}
	u, err := url.Parse(cu.URL)
	if err != nil {
		return "", "", "", invalidField("/host", "invalid-host", "the host does not parse")
	}
	return scheme, u.Host, cu.Host, nil
}

// ClaimSchemes are the schemes a claim may be served over under this
// server's network policy: https, and http where it is allowed.
func (s *Service) ClaimSchemes() []string {
	if s.cfg.URLPolicy.AllowInsecureHTTP {
		return []string{"https", "http"}
	}
	return []string{"https"}
}

func claimURL(r *hostClaimRow) string { return r.Scheme + "://" + r.Host + ClaimPath + r.Token }

func toHostClaim(r *hostClaimRow) *HostClaim {
	return &HostClaim{ID: r.ID, Host: r.Host, Token: r.Token, URL: claimURL(r), ExpiresAt: r.ExpiresAt.UTC(), VerifiedAt: utcPtr(r.VerifiedAt)}
}

// claimKeep is how long an expired, unverified claim is kept before a new
// claim's insert deletes it: long enough to answer "expired" rather than
// "not found" to a late verification.
const claimKeep = 24 * time.Hour

// CreateHostClaim issues a claim on a host; anyone may ask (the API rate-
// limits anonymous callers like submissions). Nothing is fetched yet.
func (s *Service) CreateHostClaim(ctx context.Context, req ClaimRequest) (*HostClaim, error) {
	scheme, authority, host, err := normalizeClaimHost(req, s.cfg.URLPolicy)
	if err != nil {
		return nil, err
	}
	var tok [32]byte
	rand.Read(tok[:])
	now := s.now()
	row := hostClaimRow{ID: newID(), Host: authority, ScopeHost: host, Scheme: scheme, Requester: req.Requester,
		Token: base64.RawURLEncoding.EncodeToString(tok[:]), CreatedAt: now, ExpiresAt: now.Add(s.cfg.ClaimTTL)}
	err = s.store.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("verified_at IS NULL AND expires_at < ?", now.Add(-claimKeep)).Delete(&hostClaimRow{}).Error; err != nil {
			return err
		}
		if err := s.checkPendingClaims(tx, host, req.Requester, now); err != nil {
			return err
		}
		return tx.Create(&row).Error
	})
	if err != nil {
		return nil, translate(err)
	}
	s.log.InfoContext(ctx, "host claim issued", "claim_host", authority)
	return toHostClaim(&row), nil
}

// checkPendingClaims refuses a claim past the requester's cap of
// unverified, unexpired claims on the host (docs/claims.md "Who can stop
// a claim"): the cap is the requester's own, so nobody else's claims ever
// count against it. The wait is until the oldest of them expires.
func (s *Service) checkPendingClaims(tx *gorm.DB, host, requester string, now time.Time) error {
	if requester == "" {
		return nil
	}
	var pending []time.Time
	err := tx.Model(&hostClaimRow{}).Where("scope_host = ? AND requester = ? AND verified_at IS NULL AND expires_at > ?", host, requester, now).
		Order("expires_at").Limit(s.cfg.ClaimsPendingPerRequester).Pluck("expires_at", &pending).Error
	if err != nil || len(pending) < s.cfg.ClaimsPendingPerRequester {
		return err
	}
	return &RetryError{Wait: pending[0].Sub(now), Detail: "too many unverified claims on this host from this client; verify one or let it expire"}
}

// HostClaim returns a claim by id (for the web UI's claim page): whoever
// holds the id may see it.
func (s *Service) HostClaim(ctx context.Context, id string) (*HostClaim, error) {
	var row hostClaimRow
	if err := s.store.read(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, translate(err)
	}
	return toHostClaim(&row), nil
}

// VerifyHostClaim fetches the claim URL and, when it answers the token,
// issues a publisher token scoped to the claimed host (default 90 days).
// A failure is *ClaimError (ErrClaimFailed): expired, already verified,
// a fetch error with its class, or content other than the token; the claim
// may be verified again after a failed attempt until it expires. The fetch
// runs outside any transaction; the claim is then marked verified by a
// conditional update, so concurrent verifications issue one token and the
// other callers get ClaimReplayed.
func (s *Service) VerifyHostClaim(ctx context.Context, id string) (*ClaimedToken, error) {
	if s.cfg.ClaimFetcher == nil {
		return nil, ErrClaimsUnavailable
	}
	var row hostClaimRow
	if err := s.store.read(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, translate(err)
	}
	if row.VerifiedAt != nil {
		return nil, &ClaimError{Reason: ClaimReplayed, Detail: "this claim was verified already; a claim issues one token"}
	}
	if !s.now().Before(row.ExpiresAt) {
		return nil, &ClaimError{Reason: ClaimExpired, Detail: "the claim expired at " + row.ExpiresAt.UTC().Format(time.RFC3339) + "; ask for a new one"}
	}
	if err := s.spendClaimAttempt(ctx, &row); err != nil {
		return nil, err
	}
	u := claimURL(&row)
	body, err := s.cfg.ClaimFetcher.FetchClaim(ctx, u)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var busy interface{ RetryAfter() time.Duration }
		if errors.As(err, &busy) {
			return nil, &RetryError{Wait: busy.RetryAfter(), Detail: "too many claim verifications in flight to this host; try again later"}
		}
		ce := &ClaimError{Reason: ClaimFetchFailed, Detail: "fetching " + u + " failed"}
		var classed interface{ ErrorClass() string }
		if errors.As(err, &classed) {
			ce.ErrorClass = classed.ErrorClass()
			ce.Detail += ": " + ce.ErrorClass
		}
		s.log.InfoContext(ctx, "host claim not verified", "claim_host", row.Host, "reason", ce.Reason, "class", ce.ErrorClass, "err", err)
		return nil, ce
	}
	if !bytes.Equal(bytes.TrimSpace(body), []byte(row.Token)) {
		s.log.InfoContext(ctx, "host claim not verified", "claim_host", row.Host, "reason", ClaimWrongContent)
		return nil, &ClaimError{Reason: ClaimWrongContent, Detail: u + " does not answer the claim token (serve the token alone, as text)"}
	}
	now := s.now()
	exp := now.Add(s.cfg.PublisherTokenTTL)
	secret, tok, err := s.newToken(TokenRequest{Role: RolePublisher, Hosts: []string{row.ScopeHost}, ExpiresAt: &exp,
		Origin: row.Scheme + "://" + row.Host}, row.ID)
	if err != nil {
		return nil, err
	}
	err = s.store.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&hostClaimRow{}).Where("id = ? AND verified_at IS NULL", row.ID).
			Updates(map[string]any{"verified_at": now, "token_id": tok.ID})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &ClaimError{Reason: ClaimReplayed, Detail: "this claim was verified already; a claim issues one token"}
		}
		return s.insertToken(tx, Principal{Name: "host-claim"}, &tok)
	})
	if err != nil {
		return nil, translate(err)
	}
	s.log.InfoContext(ctx, "host claim verified", "claim_host", row.Host, "token_id", tok.ID)
	return &ClaimedToken{Host: row.Host, PublisherToken: secret, Token: toToken(&tok)}, nil
}

// spendClaimAttempt records a verification attempt of the claim, or
// refuses it when the last one is less than ClaimAttemptInterval ago: one
// conditional update, so concurrent attempts (in this process or in
// replicas sharing the database) cannot both pass. Only the holder of the
// claim's id can spend its attempts.
func (s *Service) spendClaimAttempt(ctx context.Context, row *hostClaimRow) error {
	now := s.now()
	every := s.cfg.ClaimAttemptInterval
	var res *gorm.DB
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		res = tx.Model(&hostClaimRow{}).Where("id = ? AND verified_at IS NULL AND (last_attempt_at IS NULL OR last_attempt_at <= ?)", row.ID, now.Add(-every)).
			Update("last_attempt_at", now)
		return res.Error
	})
	if err != nil {
		return translate(err)
	}
	if res.RowsAffected == 1 {
		return nil
	}
	var cur hostClaimRow
	if err := s.store.read(ctx).Where("id = ?", row.ID).Take(&cur).Error; err != nil {
		return translate(err)
	}
	if cur.VerifiedAt != nil {
		return &ClaimError{Reason: ClaimReplayed, Detail: "this claim was verified already; a claim issues one token"}
	}
	wait := every
	if cur.LastAttemptAt != nil {
		wait = cur.LastAttemptAt.Add(every).Sub(now)
	}
	return &RetryError{Wait: max(wait, time.Second), Detail: "this claim was tried less than " + every.String() + " ago; try again later"}
}
