package verifier

import (
	"crypto/sha256"
	"sync"
)

// maxPinnedSets bounds the parsed pinned key sets kept in memory.
const maxPinnedSets = 1024

// pinnedSets remembers parsed pinned key sets by content: the crawler passes
// an agent's pinned JWKS on every verification, and parsing it (JWK decoding,
// curve point checks) would otherwise cost about as much as the
// canonicalization. The result depends only on the bytes, so no expiry.
type pinnedSets struct {
	mu   sync.Mutex
	sets map[[sha256.Size]byte]pinnedEntry
}

type pinnedEntry struct {
	set *keySet
	err error
}

func (p *pinnedSets) get(raw []byte) (*keySet, error) {
	if len(raw) > MaxKeySetBytes {
		return nil, ErrKeySetTooLarge
	}
	sum := sha256.Sum256(raw)
	p.mu.Lock()
	e, ok := p.sets[sum]
	p.mu.Unlock()
	if ok {
		return e.set, e.err
	}
	set, err := parseKeySet(raw)
	p.mu.Lock()
	if p.sets == nil || len(p.sets) >= maxPinnedSets {
		p.sets = make(map[[sha256.Size]byte]pinnedEntry, 64)
	}
	p.sets[sum] = pinnedEntry{set: set, err: err}
	p.mu.Unlock()
	return set, err
}
