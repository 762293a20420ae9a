package ratelimit

import (
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// Guard counts failed credentials (API bearer tokens, admin sign-ins) so
// that a guessing run is slowed down without ever locking out a correct
// credential, even when everybody shares one address behind a proxy
// (docs/security.md "Rate limits"):
//
//   - failures are counted per client address; once the address is over its
//     budget, every further failure answers 429 instead of 401;
//   - a correct credential is always checked and always accepted, whatever
//     the address's count;
//   - the only requests refused before their credential is checked are ones
//     that cannot succeed: a malformed credential, or the very credential
//     that already failed, from an address over its budget.
//
// A nil *Guard counts nothing and refuses nothing.
type Guard struct {
	addr   *Limiter // failures per client address
	failed *Limiter // credentials that failed recently, by fingerprint
}

// NewGuard allows r failures per address; nil for a disabled rate.
func NewGuard(r Rate, maxKeys int) *Guard {
	addr := New(r, maxKeys)
	if addr == nil {
		return nil
	}
	return &Guard{addr: addr, failed: New(Rate{N: 1, Per: r.Per, Burst: 1}, maxKeys)}
}

// Before is asked before a credential is checked: refuse means answer 429
// without checking it. wellFormed says whether the credential has the shape
// of one that could be valid.
func (g *Guard) Before(addr, credential string, wellFormed bool, now time.Time) (refuse bool, wait time.Duration) {
	if g == nil {
		return false, 0
	}
	over, wait := g.addr.Empty(addr, now)
	if !over {
		return false, 0
	}
	if !wellFormed {
		return true, wait
	}
	if failed, _ := g.failed.Empty(fingerprint(credential), now); failed {
		return true, wait
	}
	return false, 0
}

// Failed records that credential failed its check; limited means the
// address is over its budget, so the answer is 429 (retry after wait)
// rather than 401.
func (g *Guard) Failed(addr, credential string, now time.Time) (limited bool, wait time.Duration) {
	if g == nil {
		return false, 0
	}
	g.failed.Take(fingerprint(credential), now)
	ok, wait := g.addr.Take(addr, now)
	return !ok, wait
}

// fingerprint keys a credential without keeping it in memory.
func fingerprint(credential string) string {
	h := sha256.Sum256([]byte("cardex-credential\x00" + credential))
	return base64.RawURLEncoding.EncodeToString(h[:16])
}
