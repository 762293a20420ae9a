package registry_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func TestTokens(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		exp := c.Now().Add(24 * time.Hour)
		secret, tok, err := svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RolePublisher, Name: "acme", Hosts: []string{"Agents.ACME.com.", "bücher.de"}, ExpiresAt: &exp})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, "cdx_"+tok.ID+"_") || len(secret) != 4+16+1+43 || tok.Name != "acme" ||
			strings.Join(tok.Hosts, ",") != "agents.acme.com,xn--bcher-kva.de" || !tok.ExpiresAt.Equal(exp) {
			t.Fatalf("token %q %+v", secret, tok)
		}
		// Only the SHA-256 of the secret is stored (docs/threats.md I.78).
		var hash string
		if err := s.WriteDB().Raw("SELECT hash FROM tokens WHERE id = ?", tok.ID).Scan(&hash).Error; err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(secret[len("cdx_"+tok.ID+"_"):]))
		if hash != hex.EncodeToString(sum[:]) || strings.Contains(hash, secret[21:]) {
			t.Fatalf("stored hash %q", hash)
		}
		var n int64
		s.WriteDB().Raw("SELECT COUNT(*) FROM tokens WHERE hash LIKE ? OR name LIKE ? OR hosts LIKE ?", "%"+secret[21:]+"%", "%"+secret[21:]+"%", "%"+secret[21:]+"%").Scan(&n)
		if n != 0 {
			t.Fatal("the secret is stored")
		}
		p, err := svc.Authenticate(ctx, secret)
		if err != nil || p.Role != registry.RolePublisher || p.TokenID != tok.ID || p.Name != "acme" || len(p.Hosts) != 2 {
			t.Fatalf("Authenticate: %+v, %v", p, err)
		}
		// last_used_at: written on first use, then at most once a minute.
		lastUsed := func() time.Time {
			ts, err := svc.ListTokens(ctx)
			if err != nil || len(ts) != 1 || ts[0].LastUsedAt == nil {
				t.Fatalf("ListTokens: %+v, %v", ts, err)
			}
			return *ts[0].LastUsedAt
		}
		first := c.Now()
		if !lastUsed().Equal(first) {
			t.Fatalf("last used %v", lastUsed())
		}
		c.Advance(30 * time.Second)
		svc.Authenticate(ctx, secret)
		if !lastUsed().Equal(first) {
			t.Fatal("last_used_at rewritten within a minute")
		}
		c.Advance(2 * time.Minute)
		svc.Authenticate(ctx, secret)
		if !lastUsed().Equal(c.Now()) {
			t.Fatal("last_used_at not refreshed after a minute")
		}
		// Every failure is the same generic ErrUnauthorized (I.78).
		last := byte('A')
		if secret[len(secret)-1] == 'A' {
			last = 'B'
		}
		wrong := secret[:len(secret)-1] + string(last)
		cases := map[string]string{"wrong secret": wrong, "empty": "", "garbage": "Bearer x", "unknown id": "cdx_0000000000000000_" + secret[21:],
			"truncated": secret[:len(secret)-2], "long": secret + "x"}
		for name, tk := range cases {
			if _, err := svc.Authenticate(ctx, tk); err != registry.ErrUnauthorized {
				t.Errorf("%s: %v", name, err)
			}
		}
		// Expired.
		c.Advance(24 * time.Hour)
		if _, err := svc.Authenticate(ctx, secret); err != registry.ErrUnauthorized {
			t.Fatalf("expired: %v", err)
		}
		// Revoked, by name; revoking again is a no-op; unknown is not found.
		s2, _, err := svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleAdmin})
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := svc.ListTokens(ctx)
		if len(ts) != 2 || !strings.HasPrefix(ts[1].Name, "admin-") || len(ts[1].Hosts) != 0 {
			t.Fatalf("tokens %+v", ts)
		}
		if err := svc.RevokeToken(ctx, ts[1].Name); err != nil {
			t.Fatal(err)
		}
		if err := svc.RevokeToken(ctx, ts[1].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, s2); err != registry.ErrUnauthorized {
			t.Fatalf("revoked: %v", err)
		}
		if err := svc.RevokeToken(ctx, "nobody"); !isErr(err, registry.ErrNotFound) {
			t.Fatalf("unknown: %v", err)
		}
		audit, _, _ := svc.Audit(ctx, admin, 0, 100)
		if len(audit) != 3 || audit[0].Action != "token-create" || audit[2].Action != "token-revoke" {
			t.Fatalf("audit %+v", audit)
		}
	})
}

func TestCreateTokenValidation(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		past := c.Now().Add(-time.Hour)
		if _, _, err := svc.CreateToken(t.Context(), registry.TokenRequest{Role: registry.RoleReader, Name: "dup"}); err != nil {
			t.Fatal(err)
		}
		for name, req := range map[string]registry.TokenRequest{
			"no role":            {Name: "x"},
			"bad role":           {Role: "root"},
			"publisher no hosts": {Role: registry.RolePublisher},
			"admin with hosts":   {Role: registry.RoleAdmin, Hosts: []string{"a.com"}},
			"bad host":           {Role: registry.RolePublisher, Hosts: []string{"a.com/x"}},
			"bad name":           {Role: registry.RoleReader, Name: "a b"},
			"duplicate name":     {Role: registry.RoleReader, Name: "dup"},
			"expiry in the past": {Role: registry.RoleReader, ExpiresAt: &past},
			"zero-width in host": {Role: registry.RolePublisher, Hosts: []string{"a\u200b.com"}},
		} {
			var ve *registry.ValidationError
			if _, _, err := svc.CreateToken(t.Context(), req); !asValidation(err, &ve) {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
