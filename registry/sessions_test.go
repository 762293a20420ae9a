package registry_test

import (
	"context"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// Admin web sessions are server-side: the secret is stored hashed, and a
// session ends on sign-out, on its token's revocation, after the idle time
// and at the absolute limit (docs/security.md "Admin sessions").
func TestAdminSessions(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, SessionIdle: 30 * time.Minute, SessionMaxAge: 2 * time.Hour})
		secret, tok, err := svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleAdmin, Name: "ops"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := svc.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		start := func() string {
			t.Helper()
			sid, err := svc.StartSession(ctx, p)
			if err != nil || len(sid) != 43 {
				t.Fatalf("StartSession: %q, %v", sid, err)
			}
			return sid
		}
		alive := func(sid string) bool {
			t.Helper()
			got, err := svc.Session(ctx, sid)
			if err == nil && (got.Role != registry.RoleAdmin || got.TokenID != tok.ID || got.Name != "ops") {
				t.Fatalf("session principal %+v", got)
			}
			if err != nil && !isErr(err, registry.ErrUnauthorized) {
				t.Fatalf("Session: %v", err)
			}
			return err == nil
		}
		// Only admins start sessions; the secret itself is never stored.
		if _, err := svc.StartSession(ctx, reader); !isErr(err, registry.ErrForbidden) {
			t.Fatalf("reader session: %v", err)
		}
		sid := start()
		var n int64
		if err := s.WriteDB().Raw("SELECT COUNT(*) FROM admin_sessions WHERE id_hash = ? OR token_id = ?", sid, secret).Scan(&n).Error; err != nil || n != 0 {
			t.Fatalf("a raw secret is stored: %d, %v", n, err)
		}
		if !alive(sid) || alive("") || alive(secret) || alive(sid+"x") {
			t.Fatal("only the session secret opens the session")
		}
		// Idle: used every 20 minutes it lives; 31 minutes without a
		// request end it.
		for range 3 {
			c.Advance(20 * time.Minute)
			if !alive(sid) {
				t.Fatal("an active session idled out")
			}
		}
		c.Advance(31 * time.Minute)
		if alive(sid) {
			t.Fatal("an idle session lives on")
		}
		// Absolute: however active, it ends two hours after sign-in.
		sid = start()
		for range 5 {
			c.Advance(20 * time.Minute)
			if !alive(sid) {
				t.Fatal("an active session ended early")
			}
		}
		c.Advance(20 * time.Minute)
		if alive(sid) {
			t.Fatal("a session outlived its absolute limit")
		}
		// Sign-out ends it.
		sid = start()
		if err := svc.EndSession(ctx, sid); err != nil || alive(sid) {
			t.Fatalf("after sign-out: %v", err)
		}
		if err := svc.EndSession(ctx, "unknown"); err != nil {
			t.Fatal(err)
		}
		// Revoking the token ends every session it signed in.
		a, b := start(), start()
		if err := svc.RevokeToken(context.Background(), tok.ID); err != nil {
			t.Fatal(err)
		}
		if alive(a) || alive(b) {
			t.Fatal("a session outlived its token")
		}
	})
}
