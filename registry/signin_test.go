package registry_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// A person the identity provider signed in gets a session of any role
// that keeps the role, hosts and groups of sign-in, never outlives the
// maximum age, and holds no token (docs/identity.md).
func TestPersonSessions(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, SessionIdle: 30 * time.Minute, SessionMaxAge: 2 * time.Hour})
		pat := registry.Principal{Role: registry.RolePublisher, TokenID: "oidc:u-pat", Name: "pat@example.com", Hosts: []string{"pay.example.com"},
			Groups: []string{"/payments", "b2b"}, Subject: "u-pat", DisplayName: "pat@example.com"}
		sid, err := svc.StartSession(ctx, pat)
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.Session(ctx, sid)
		if err != nil || got.Role != pat.Role || got.TokenID != pat.TokenID || got.Name != pat.Name || got.Subject != pat.Subject ||
			got.DisplayName != pat.DisplayName || !slices.Equal(got.Groups, pat.Groups) || !slices.Equal(got.Hosts, pat.Hosts) {
			t.Fatalf("session %+v, %v", got, err)
		}
		// A person's TokenID names no token: there is none to list.
		if toks, err := svc.TokensOf(ctx, got); err != nil || len(toks) != 0 {
			t.Errorf("TokensOf a person: %v %v", toks, err)
		}
		if _, err := svc.StartSession(ctx, registry.Principal{Subject: "nobody"}); !isErr(err, registry.ErrUnauthorized) {
			t.Errorf("a person without a role: %v", err)
		}
		for range 5 { // used every 25 minutes: never idle, but 2 h after sign-in it ends
			c.Advance(25 * time.Minute)
			if _, err := svc.Session(ctx, sid); c.Now().Sub(newClock().Now()) < 2*time.Hour && err != nil {
				t.Fatalf("at %s: %v", c.Now(), err)
			}
		}
		if _, err := svc.Session(ctx, sid); !isErr(err, registry.ErrUnauthorized) {
			t.Errorf("after the maximum age: %v", err)
		}
	})
}

// A sign-in's secrets are taken once: a second take, a concurrent take
// and a take after SignInTTL find nothing.
func TestSignInTakenOnce(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now})
		want := registry.SignIn{State: "st", Nonce: "no", Verifier: "ve"}
		secret, err := svc.BeginSignIn(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := s.WriteDB().Raw("SELECT COUNT(*) FROM oidc_sign_ins WHERE id_hash = ?", secret).Scan(&n).Error; err != nil || n != 0 {
			t.Fatalf("the raw secret is stored: %d %v", n, err)
		}
		var wg sync.WaitGroup
		results := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				got, err := svc.TakeSignIn(ctx, secret)
				if err == nil && got != want {
					t.Errorf("took %+v", got)
				}
				results <- err
			})
		}
		wg.Wait()
		close(results)
		ok := 0
		for err := range results {
			switch {
			case err == nil:
				ok++
			case !isErr(err, registry.ErrUnauthorized) && !isErr(err, registry.ErrUnavailable):
				t.Errorf("concurrent take: %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d takes succeeded, want 1", ok)
		}
		secret, _ = svc.BeginSignIn(ctx, want)
		c.Advance(registry.SignInTTL)
		if _, err := svc.TakeSignIn(ctx, secret); !isErr(err, registry.ErrUnauthorized) {
			t.Errorf("after SignInTTL: %v", err)
		}
	})
}

// A person's curation action names the person in the audit log, and the
// actor filter finds it by subject and by display name.
func TestAuditNamesPeople(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now})
		ada := registry.Principal{Role: registry.RoleAdmin, TokenID: "oidc:u-ada", Name: "ada@example.com", Subject: "u-ada", DisplayName: "ada@example.com"}
		_, tok, err := svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleReader, Name: "bot"})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RevokeTokenAs(ctx, ada, tok.ID); err != nil {
			t.Fatal(err)
		}
		for _, actor := range []string{"u-ada", "ada@example.com"} {
			page, err := svc.AuditLog(ctx, ada, registry.AuditQuery{Actor: actor})
			if err != nil || len(page.Entries) != 1 {
				t.Fatalf("actor %s: %+v %v", actor, page, err)
			}
			e := page.Entries[0]
			if e.Action != "token-revoke" || e.ActorID != "" || e.ActorName != "ada@example.com" || e.ActorSubject != "u-ada" || e.ActorDisplayName != "ada@example.com" {
				t.Errorf("entry %+v", e)
			}
		}
		if page, err := svc.AuditLog(ctx, ada, registry.AuditQuery{Actor: "cli"}); err != nil || len(page.Entries) != 1 || page.Entries[0].ActorSubject != "" {
			t.Errorf("the CLI's entry: %+v %v", page, err)
		}
	})
}
