package registry

import (
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"math/big"
	"slices"

	"github.com/cardexhq/cardex/strictjson"
	"gorm.io/gorm"
)

// update runs a single-agent admin change: fn returns the column updates
// (nil for a no-op repeat) and the change kind; the audit entry and change
// row are written with it, in one transaction.
func (s *Service) update(ctx context.Context, p Principal, id, action, reason string, detail map[string]any,
	fn func(r *agentRow) (map[string]any, string, error)) (*Agent, error) {
	var out *agentRow
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		r, err := s.lockAgent(tx, id)
		if err != nil {
			return err
		}
		out = r
		if !p.canRead(r) {
			return ErrNotFound
		}
		upd, kind, err := fn(r)
		if err != nil || upd == nil {
			return err
		}
		now := s.now()
		if kind != "" {
			upd["updated_at"] = now
		}
		if err := tx.Model(&agentRow{}).Where("id = ?", id).Updates(upd).Error; err != nil {
			return err
		}
		if err := s.addAudit(tx, p, action, id, reason, detail, now); err != nil {
			return err
		}
		if out, err = s.lockAgent(tx, id); err != nil {
			return err
		}
		if kind == "" {
			return nil
		}
		return s.addChange(tx, r, out, kind, now)
	})
	if err != nil {
		return nil, err
	}
	return s.agentRecord(s.store.read(ctx), p, out)
}

// SetVisibility changes who may list the agent (admins only).
func (s *Service) SetVisibility(ctx context.Context, p Principal, id string, v Visibility) (*Agent, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	if v != VisibilityPublic && v != VisibilityInternal {
		return nil, invalidField("/visibility", "enum", `visibility must be "public" or "internal"`)
	}
	return s.update(ctx, p, id, "set-visibility", "", map[string]any{"visibility": v}, func(r *agentRow) (map[string]any, string, error) {
		if Visibility(r.Visibility) == v {
			return nil, "", nil
		}
		return map[string]any{"visibility": string(v)}, ChangeVisibility, nil
	})
}

// maxJWKSBytes and maxJWKSKeys are the key-set limits of docs/security.md "Network policy".
const (
	maxJWKSBytes = 64 << 10
	maxJWKSKeys  = 100
)

// PinKeys pins a JWKS of public keys as the agent's first trusted key
// source (docs/security.md "Network policy"), admins only. The agent is made due so the next
// crawl re-verifies under the pinned keys.
func (s *Service) PinKeys(ctx context.Context, p Principal, id string, jwks []byte) (*Agent, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	if err := validateJWKS(jwks); err != nil {
		return nil, err
	}
	text := string(jwks)
	return s.update(ctx, p, id, "pin-keys", "", map[string]any{"keys": countKeys(jwks)}, func(r *agentRow) (map[string]any, string, error) {
		if r.PinnedKeys != nil && *r.PinnedKeys == text {
			return nil, "", nil
		}
		return map[string]any{"pinned_keys": text, "next_fetch_at": s.now()}, ChangeKeys, nil
	})
}

// UnpinKeys removes pinned keys (admins only).
func (s *Service) UnpinKeys(ctx context.Context, p Principal, id string) (*Agent, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	return s.update(ctx, p, id, "unpin-keys", "", nil, func(r *agentRow) (map[string]any, string, error) {
		if r.PinnedKeys == nil {
			return nil, "", nil
		}
		return map[string]any{"pinned_keys": nil, "next_fetch_at": s.now()}, ChangeKeys, nil
	})
}

// RequestCrawl makes the agent due now. Admins may ask for any agent; a
// publisher token for agents of its own hosts (docs/api.md; docs/threats.md
// I.79). Removed and rejected agents are not crawled: ErrInvalidTransition.
func (s *Service) RequestCrawl(ctx context.Context, p Principal, id string) (*Agent, error) {
	if err := Authorize(p, NeedPublisher); err != nil {
		return nil, err
	}
	return s.update(ctx, p, id, "crawl", "", nil, func(r *agentRow) (map[string]any, string, error) {
		if !p.isAdmin() && !p.owns(r.Host, r.CardURL) {
			return nil, "", ErrForbidden
		}
		if st := Status(r.Status); st == StatusRemoved || st == StatusRejected {
			return nil, "", ErrInvalidTransition
		}
		return map[string]any{"next_fetch_at": s.now()}, "", nil
	})
}

// validateJWKS accepts a JSON Web Key Set of public signing keys only:
// strictly parsed, ≤ 64 KiB, 1–100 keys, each an EC, RSA or OKP key with no
// private members, `use` empty or "sig", and distinct `kid`s.
func validateJWKS(b []byte) error {
	bad := func(ptr, msg string) error { return invalidField(ptr, "invalid-jwks", msg) }
	if len(b) > maxJWKSBytes {
		return bad("", "the key set is larger than 64 KiB")
	}
	v, err := strictjson.Parse(b)
	if err != nil {
		return bad("", "the key set is not valid JSON")
	}
	keys := v.Get("keys")
	if v.Kind != strictjson.Object || keys == nil || keys.Kind != strictjson.Array {
		return bad("/keys", "a JWKS is an object with a keys array")
	}
	if len(keys.Array) == 0 || len(keys.Array) > maxJWKSKeys {
		return bad("/keys", "a JWKS holds 1 to 100 keys")
	}
	var kids []string
	for i, k := range keys.Array {
		ptr := strictjson.Pointer("keys", itoa(i))
		if k.Kind != strictjson.Object {
			return bad(ptr, "a key is a JSON object")
		}
		kty := k.Get("kty")
		if kty == nil || kty.Kind != strictjson.String || !slices.Contains([]string{"EC", "RSA", "OKP"}, kty.String) {
			return bad(ptr+"/kty", "kty must be EC, RSA or OKP (symmetric keys are never trusted)")
		}
		for _, priv := range []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"} {
			if k.Get(priv) != nil {
				return bad(ptr+"/"+priv, "a pinned key set holds public keys only")
			}
		}
		if use := k.Get("use"); use != nil && (use.Kind != strictjson.String || use.String != "sig") {
			return bad(ptr+"/use", `use must be "sig" when present`)
		}
		if kid := k.Get("kid"); kid != nil {
			if kid.Kind != strictjson.String || slices.Contains(kids, kid.String) {
				return bad(ptr+"/kid", "kid must be a string, distinct within the set")
			}
			kids = append(kids, kid.String)
		}
		if member, msg := checkPublicKey(kty.String, k); msg != "" {
			return bad(ptr+member, msg)
		}
	}
	return nil
}

// checkPublicKey checks that a key's public material is a key at all: an EC
// point on its named curve (an off-curve point is the start of an
// invalid-curve attack), an Ed25519 key of 32 bytes, an RSA modulus of at
// least 2048 bits with an odd exponent > 1. It returns the member at fault
// and why, or "" for a usable key.
func checkPublicKey(kty string, k *strictjson.Value) (member, msg string) {
	b64 := func(name string) ([]byte, bool) {
		v := k.Get(name)
		if v == nil || v.Kind != strictjson.String {
			return nil, false
		}
		b, err := base64.RawURLEncoding.DecodeString(v.String)
		return b, err == nil && len(b) > 0
	}
	str := func(name string) string {
		if v := k.Get(name); v != nil && v.Kind == strictjson.String {
			return v.String
		}
		return ""
	}
	switch kty {
	case "EC":
		curves := map[string]ecdh.Curve{"P-256": ecdh.P256(), "P-384": ecdh.P384(), "P-521": ecdh.P521()}
		curve, ok := curves[str("crv")]
		if !ok {
			return "/crv", "crv must be P-256, P-384 or P-521"
		}
		size := map[string]int{"P-256": 32, "P-384": 48, "P-521": 66}[str("crv")]
		x, okx := b64("x")
		y, oky := b64("y")
		if !okx || !oky || len(x) != size || len(y) != size {
			return "/x", fmt.Sprintf("x and y must be %d bytes of base64url each", size)
		}
		point := append(append([]byte{4}, x...), y...)
		if _, err := curve.NewPublicKey(point); err != nil {
			return "/x", "the point (x, y) is not on the curve " + str("crv")
		}
	case "OKP":
		if str("crv") != "Ed25519" {
			return "/crv", "crv must be Ed25519"
		}
		if x, ok := b64("x"); !ok || len(x) != ed25519.PublicKeySize {
			return "/x", "x must be 32 bytes of base64url"
		}
	case "RSA":
		n, okn := b64("n")
		e, oke := b64("e")
		if !okn || new(big.Int).SetBytes(n).BitLen() < 2048 {
			return "/n", "n must be an RSA modulus of at least 2048 bits"
		}
		exp := new(big.Int).SetBytes(e)
		if !oke || exp.Cmp(big.NewInt(1)) <= 0 || exp.Bit(0) == 0 || exp.BitLen() > 32 {
			return "/e", "e must be an odd public exponent greater than 1"
		}
	}
	return "", ""
}

func countKeys(b []byte) int {
	v, err := strictjson.Parse(b)
	if err != nil || v.Get("keys") == nil {
		return 0
	}
	return len(v.Get("keys").Array)
}
