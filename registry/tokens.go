package registry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/cardexhq/cardex/cardurl"
)

// Token format: "cdx_" + 16 hex id + "_" + 43 base64url characters of a
// 256-bit secret. The id is public (token list, audit log) and selects the
// row; only the SHA-256 of the secret is stored, compared in constant time
// (docs/threats.md I.78). A slow hash buys nothing for 256 random bits.
const (
	tokenPrefix   = "cdx_"
	tokenIDLen    = 16
	tokenSecretLn = 43
)

// tokenTouchEvery bounds last_used_at writes: at most one a minute per token.
const tokenTouchEvery = time.Minute

var tokenNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

func splitToken(t string) (id, secret string, ok bool) {
	if len(t) != len(tokenPrefix)+tokenIDLen+1+tokenSecretLn || !strings.HasPrefix(t, tokenPrefix) {
		return "", "", false
	}
	rest := t[len(tokenPrefix):]
	if rest[tokenIDLen] != '_' {
		return "", "", false
	}
	return rest[:tokenIDLen], rest[tokenIDLen+1:], true
}

// dummyHash is compared against when no row matches, so unknown ids cost
// the same as known ones.
var dummyHash = hashSecret("cardex-no-such-token")

// Authenticate resolves a bearer token. Unknown, malformed, revoked and
// expired tokens all answer the same ErrUnauthorized (docs/threats.md I.78:
// a generic message; nothing tells which part was wrong).
func (s *Service) Authenticate(ctx context.Context, token string) (Principal, error) {
	id, secret, ok := splitToken(token)
	var row tokenRow
	found := false
	if ok {
		err := s.store.read(ctx).Where("id = ?", id).Take(&row).Error
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return Principal{}, translate(err)
		}
	}
	want := dummyHash
	if found {
		want = row.Hash
	}
	match := subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(want)) == 1
	now := s.now()
	if !found || !match || row.RevokedAt != nil || (row.ExpiresAt != nil && !now.Before(*row.ExpiresAt)) {
		return Principal{}, ErrUnauthorized
	}
	s.touchToken(ctx, &row, now)
	return Principal{Role: Role(row.Role), TokenID: row.ID, Name: row.Name, Hosts: parseList(row.Hosts), Origin: row.Origin,
		Groups: parseList(row.MemberOf)}, nil
}

// touchToken records last use cheaply: skipped when this process or the
// row says it was recorded within the last minute; a failure to record is
// logged, never a reason to refuse the request.
func (s *Service) touchToken(ctx context.Context, row *tokenRow, now time.Time) {
	if row.LastUsedAt != nil && now.Sub(*row.LastUsedAt) < tokenTouchEvery {
		return
	}
	if last, ok := s.tokenUse.Load(row.ID); ok && now.Sub(last.(time.Time)) < tokenTouchEvery {
		return
	}
	s.tokenUse.Store(row.ID, now)
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		return tx.Model(&tokenRow{}).Where("id = ?", row.ID).Update("last_used_at", now).Error
	})
	if err != nil {
		s.log.WarnContext(ctx, "recording token use failed", "token_id", row.ID, "err", err)
	}
}

// CreateToken makes a token and returns its secret, shown once. Publisher
// tokens need at least one host (docs/security.md: scoped with --host); other
// roles take none. An empty name becomes "{role}-{id prefix}".
func (s *Service) CreateToken(ctx context.Context, req TokenRequest) (string, Token, error) {
	secret, row, err := s.newToken(req, "")
	if err != nil {
		return "", Token{}, err
	}
	err = s.store.tx(ctx, func(tx *gorm.DB) error { return s.insertToken(tx, Principal{Name: "cli"}, &row) })
	if err != nil {
		return "", Token{}, err
	}
	return secret, toToken(&row), nil
}

// newToken validates req and builds the row of a new token with its
// secret; claimID names the host claim a publisher token is issued for.
func (s *Service) newToken(req TokenRequest, claimID string) (string, tokenRow, error) {
	switch req.Role {
	case RoleAdmin, RoleReader:
		if req.Role == RoleAdmin && len(req.Groups) > 0 {
			return "", tokenRow{}, invalidField("/groups", "not-allowed", "an admin token sees every agent and holds no groups")
		}
		if len(req.Hosts) > 0 {
			return "", tokenRow{}, invalidField("/hosts", "not-allowed", "only publisher tokens are scoped to hosts")
		}
	case RolePublisher:
		if len(req.Hosts) == 0 {
			return "", tokenRow{}, invalidField("/hosts", "required", "a publisher token needs at least one host")
		}
	default:
		return "", tokenRow{}, invalidField("/role", "enum", "role must be admin, publisher or reader")
	}
	groups, err := NormalizeGroups("/groups", req.Groups)
	if err != nil {
		return "", tokenRow{}, err
	}
	hosts := []string{}
	for _, h := range req.Hosts {
		n, err := normalizeTokenHost(h)
		if err != nil {
			return "", tokenRow{}, err
		}
		if !slices.Contains(hosts, n) {
			hosts = append(hosts, n)
		}
	}
	now := s.now()
	if req.ExpiresAt != nil && !req.ExpiresAt.After(now) {
		return "", tokenRow{}, invalidField("/expiresAt", "past", "the expiry is not in the future")
	}
	var idb [tokenIDLen / 2]byte
	var sec [32]byte
	rand.Read(idb[:])
	rand.Read(sec[:])
	id := hex.EncodeToString(idb[:])
	secret := base64.RawURLEncoding.EncodeToString(sec[:])
	name := req.Name
	if name == "" {
		name = string(req.Role) + "-" + id[:8]
	}
	if !tokenNameRE.MatchString(name) {
		return "", tokenRow{}, invalidField("/name", "pattern", "a token name is 1–64 letters, digits, '.', '_' or '-'")
	}
	row := tokenRow{ID: id, Name: name, Role: string(req.Role), Hosts: jsonList(hosts), MemberOf: jsonList(groups), Hash: hashSecret(secret),
		CreatedAt: now, ExpiresAt: utcPtr(req.ExpiresAt), ClaimID: claimID, Origin: req.Origin}
	return tokenPrefix + id + "_" + secret, row, nil
}

// insertToken stores a token made by newToken, with its audit entry, in
// the caller's transaction.
func (s *Service) insertToken(tx *gorm.DB, actor Principal, row *tokenRow) error {
	if err := tx.Create(row).Error; err != nil {
		if err := translate(err); errors.Is(err, errUniqueViolation) {
			return invalidField("/name", "duplicate", "a token named "+row.Name+" exists")
		}
		return err
	}
	detail := map[string]any{"tokenId": row.ID, "name": row.Name, "role": row.Role, "hosts": parseList(row.Hosts)}
	if gs := parseList(row.MemberOf); len(gs) > 0 {
		detail["groups"] = gs
	}
	if row.Origin != "" {
		detail["origin"] = row.Origin
	}
	if row.ClaimID != "" {
		detail["claimId"] = row.ClaimID
	}
	return s.addAudit(tx, actor, "token-create", "", "", detail, row.CreatedAt)
}

func normalizeTokenHost(h string) (string, error) {
	host, ok := cardurl.CanonicalHost(h)
	if !ok {
		return "", invalidField("/hosts", "invalid-host", "not a host name: "+strings.TrimSpace(h))
	}
	return host, nil
}

func toToken(r *tokenRow) Token {
	groups := parseList(r.MemberOf)
	if groups == nil {
		groups = []string{}
	}
	return Token{ID: r.ID, Name: r.Name, Role: Role(r.Role), Hosts: parseList(r.Hosts), Groups: groups, Origin: r.Origin, CreatedAt: r.CreatedAt.UTC(),
		LastUsedAt: utcPtr(r.LastUsedAt), ExpiresAt: utcPtr(r.ExpiresAt), RevokedAt: utcPtr(r.RevokedAt)}
}

// ListTokens lists every token, oldest first, without secrets.
func (s *Service) ListTokens(ctx context.Context) ([]Token, error) {
	var rows []tokenRow
	if err := s.store.read(ctx).Order("created_at ASC, id ASC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Token, len(rows))
	for i := range rows {
		out[i] = toToken(&rows[i])
	}
	return out, nil
}

// RevokeToken revokes a token by id or name for the command line; revoking
// a revoked token is a no-op, an unknown one ErrNotFound.
func (s *Service) RevokeToken(ctx context.Context, idOrName string) error {
	return s.revokeToken(ctx, Principal{Name: "cli"}, idOrName)
}

// RevokeTokenAs revokes the token with this id on behalf of p: admins any
// token, any other token itself only (a publisher token from a host claim
// can end itself, docs/claims.md). Someone else's token is ErrForbidden.
func (s *Service) RevokeTokenAs(ctx context.Context, p Principal, id string) error {
	if p.Role == "" || (!p.isAdmin() && id != p.TokenID) {
		// Nothing is looked up: a publisher learns nothing about other
		// tokens' ids.
		return ErrForbidden
	}
	return s.revokeToken(ctx, p, id)
}

func (s *Service) revokeToken(ctx context.Context, actor Principal, idOrName string) error {
	return s.store.tx(ctx, func(tx *gorm.DB) error {
		var row tokenRow
		if err := tx.Where("id = ? OR name = ?", idOrName, idOrName).Take(&row).Error; err != nil {
			return translate(err)
		}
		if row.RevokedAt != nil {
			return nil
		}
		now := s.now()
		if err := tx.Model(&tokenRow{}).Where("id = ?", row.ID).Update("revoked_at", now).Error; err != nil {
			return err
		}
		return s.addAudit(tx, actor, "token-revoke", "", "", map[string]any{"tokenId": row.ID, "name": row.Name}, now)
	})
}

// TokensOf lists the tokens p may see, oldest first, without secrets:
// every token for admins, the caller's own token for any other token.
func (s *Service) TokensOf(ctx context.Context, p Principal) ([]Token, error) {
	switch {
	case p.isAdmin():
		return s.ListTokens(ctx)
	case p.Role == "":
		return nil, ErrForbidden
	case p.Subject != "":
		// A person the identity provider signed in holds no Cardex token.
		return []Token{}, nil
	}
	var row tokenRow
	if err := s.store.read(ctx).Where("id = ?", p.TokenID).Take(&row).Error; err != nil {
		return nil, translate(err)
	}
	return []Token{toToken(&row)}, nil
}
