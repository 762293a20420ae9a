package registry

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Sign-ins with an identity provider under way (docs/identity.md). The
// state, nonce and PKCE verifier of a sign-in stay on the server, found by
// the SHA-256 of a random secret the browser holds in a short-lived
// cookie, so every replica can finish a sign-in another began, and
// TakeSignIn deletes the row it reads: a callback replayed with the same
// cookie finds nothing.

// SignInTTL is how long a sign-in may take at the provider.
const SignInTTL = 10 * time.Minute

// SignIn is one sign-in's secrets.
type SignIn struct {
	State, Nonce, Verifier string
}

type signInRow struct {
	IDHash    string `gorm:"primaryKey"`
	State     string
	Nonce     string
	Verifier  string
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	ExpiresAt time.Time
}

func (signInRow) TableName() string { return "oidc_sign_ins" }

// BeginSignIn keeps f for SignInTTL and returns the secret for the
// browser's cookie. Expired sign-ins are deleted on the way.
func (s *Service) BeginSignIn(ctx context.Context, f SignIn) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	secret := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.now()
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("expires_at <= ?", now).Delete(&signInRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&signInRow{IDHash: hashSecret(secret), State: f.State, Nonce: f.Nonce, Verifier: f.Verifier,
			CreatedAt: now, ExpiresAt: now.Add(SignInTTL)}).Error
	})
	if err != nil {
		return "", translate(err)
	}
	return secret, nil
}

// TakeSignIn returns the sign-in of secret and deletes it, once: an
// unknown, expired or already taken secret is ErrUnauthorized.
func (s *Service) TakeSignIn(ctx context.Context, secret string) (SignIn, error) {
	if secret == "" || len(secret) > 64 {
		return SignIn{}, ErrUnauthorized
	}
	var row signInRow
	now := s.now()
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id_hash = ?", hashSecret(secret)).Take(&row).Error; err != nil {
			return err
		}
		// Whoever deletes the row owns the sign-in; a concurrent replay
		// deletes nothing.
		res := tx.Where("id_hash = ?", row.IDHash).Delete(&signInRow{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return gorm.ErrRecordNotFound
		}
		return nil
	})
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return SignIn{}, ErrUnauthorized
	case err != nil:
		return SignIn{}, translate(err)
	case !now.Before(row.ExpiresAt):
		return SignIn{}, ErrUnauthorized
	}
	return SignIn{State: row.State, Nonce: row.Nonce, Verifier: row.Verifier}, nil
}
