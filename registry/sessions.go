package registry

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Web sessions (docs/security.md "Admin sessions"). Signing in to the web
// UI with an admin token, or as anyone through the identity provider
// (docs/identity.md), starts a session: the browser's cookie holds
// a random session secret, never the token, and the server keeps only the
// secret's SHA-256. Signing out ends the session; so do its token's
// revocation or expiry, SessionIdle without a request and SessionMaxAge
// after sign-in. Any replica sharing the database serves the session.

// Session lifetimes.
const (
	DefaultSessionIdle   = 30 * time.Minute
	DefaultSessionMaxAge = 12 * time.Hour
	// sessionTouchEvery bounds last_seen_at writes: at most one a minute
	// per session, so idle expiry is exact to within a minute.
	sessionTouchEvery = time.Minute
)

type sessionRow struct {
	IDHash     string `gorm:"primaryKey"`
	TokenID    string
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
	LastSeenAt time.Time
	ExpiresAt  time.Time
	// A person the identity provider signed in (Subject set, TokenID
	// empty): what the provider's groups granted at sign-in
	// (docs/identity.md).
	Role         string
	Name         string
	Hosts        string // JSON list
	MemberGroups string // JSON list
	Subject      string
	DisplayName  string
	// IDTokenHint is the sign-in's ID token, for the provider's
	// end-session endpoint at sign-out.
	IDTokenHint string
}

func (sessionRow) TableName() string { return "admin_sessions" }

// StartSession starts a web session for the admin p (from Authenticate),
// or for a person of any role the identity provider signed in (p.Subject
// set, from identity.Provider.Finish), and returns its secret for the
// cookie. Expired sessions are deleted on the way.
func (s *Service) StartSession(ctx context.Context, p Principal) (string, error) {
	return s.StartPersonSession(ctx, p, "")
}

// StartPersonSession is StartSession keeping the ID token of a person's
// sign-in, which EndSessionHint gives back at sign-out.
func (s *Service) StartPersonSession(ctx context.Context, p Principal, idTokenHint string) (string, error) {
	person := p.Subject != ""
	if person && p.Role == "" {
		return "", ErrUnauthorized
	}
	if !person {
		if err := requireAdmin(p); err != nil {
			return "", err
		}
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	secret := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.now()
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("expires_at <= ? OR last_seen_at <= ?", now, now.Add(-s.cfg.SessionIdle)).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		row := &sessionRow{IDHash: hashSecret(secret), TokenID: p.TokenID, CreatedAt: now, LastSeenAt: now,
			ExpiresAt: now.Add(s.cfg.SessionMaxAge), Hosts: "[]", MemberGroups: "[]"}
		if person {
			row.TokenID, row.Role, row.Name, row.Subject, row.DisplayName = "", string(p.Role), p.Name, p.Subject, p.DisplayName
			row.Hosts, row.MemberGroups, row.IDTokenHint = jsonList(p.Hosts), jsonList(p.Groups), idTokenHint
		}
		return tx.Create(row).Error
	})
	if err != nil {
		return "", translate(err)
	}
	return secret, nil
}

// Session resolves a session secret to the admin it belongs to. A session
// that is unknown, ended, idle too long or too old, or whose token was
// revoked, expired or is no longer an admin's answers ErrUnauthorized.
func (s *Service) Session(ctx context.Context, secret string) (Principal, error) {
	if secret == "" || len(secret) > 64 {
		return Principal{}, ErrUnauthorized
	}
	now := s.now()
	var row sessionRow
	err := s.store.read(ctx).Where("id_hash = ?", hashSecret(secret)).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Principal{}, ErrUnauthorized
	case err != nil:
		return Principal{}, translate(err)
	}
	if !now.Before(row.ExpiresAt) || !now.Before(row.LastSeenAt.Add(s.cfg.SessionIdle)) {
		return Principal{}, ErrUnauthorized
	}
	if row.Subject != "" {
		s.touchSession(ctx, &row, now)
		return Principal{Role: Role(row.Role), TokenID: "oidc:" + row.Subject, Name: row.Name, Hosts: parseList(row.Hosts),
			Groups: parseList(row.MemberGroups), Subject: row.Subject, DisplayName: row.DisplayName}, nil
	}
	var tok tokenRow
	err = s.store.read(ctx).Where("id = ?", row.TokenID).Take(&tok).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Principal{}, ErrUnauthorized
	case err != nil:
		return Principal{}, translate(err)
	}
	if tok.RevokedAt != nil || (tok.ExpiresAt != nil && !now.Before(*tok.ExpiresAt)) || Role(tok.Role) != RoleAdmin {
		return Principal{}, ErrUnauthorized
	}
	s.touchSession(ctx, &row, now)
	s.touchToken(ctx, &tok, now)
	return Principal{Role: RoleAdmin, TokenID: tok.ID, Name: tok.Name, Hosts: parseList(tok.Hosts)}, nil
}

func (s *Service) touchSession(ctx context.Context, row *sessionRow, now time.Time) {
	if now.Sub(row.LastSeenAt) < sessionTouchEvery {
		return
	}
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		return tx.Model(&sessionRow{}).Where("id_hash = ?", row.IDHash).Update("last_seen_at", now).Error
	})
	if err != nil {
		// A session that cannot be touched still works until it idles
		// out; the failure is the database's, not the visitor's.
		s.log.WarnContext(ctx, "recording session use failed", "token_id", row.TokenID, "err", err)
	}
}

// EndSession ends a session (sign-out). Ending an unknown session is not an
// error: the visitor is signed out either way.
func (s *Service) EndSession(ctx context.Context, secret string) error {
	_, err := s.EndSessionHint(ctx, secret)
	return err
}

// EndSessionHint ends a session and returns the ID token its sign-in kept
// ("" for a token's session or an unknown one).
func (s *Service) EndSessionHint(ctx context.Context, secret string) (string, error) {
	if secret == "" || len(secret) > 64 {
		return "", nil
	}
	var hint string
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		var row sessionRow
		err := tx.Select("id_token_hint").Where("id_hash = ?", hashSecret(secret)).Take(&row).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			return nil
		case err != nil:
			return err
		}
		hint = row.IDTokenHint
		return tx.Where("id_hash = ?", hashSecret(secret)).Delete(&sessionRow{}).Error
	})
	return hint, translate(err)
}
