package verifier

import (
	"context"
	"sync"
	"time"
)

// keySetCache keeps fetched key sets per URL. A key removed from a set stops
// verifying once its entry expires (docs/threats.md D.52, A2A §8.4.3 "revoked
// keys MUST NOT be used"); failures are cached briefly so a broken key server
// is not hammered, and concurrent verifications share one fetch per URL.
type keySetCache struct {
	fetcher    KeySetFetcher
	now        func() time.Time
	ttl        time.Duration
	failureTTL time.Duration
	maxEntries int

	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	done    chan struct{} // closed when set/err are final
	set     *keySet
	err     error
	expires time.Time
}

func (c *keySetCache) get(ctx context.Context, url string) (*keySet, error) {
	for {
		c.mu.Lock()
		e, ok := c.entries[url]
		if ok {
			select {
			case <-e.done:
				if c.now().Before(e.expires) {
					c.mu.Unlock()
					return e.set, e.err
				}
			default:
				c.mu.Unlock()
				select {
				case <-e.done:
					continue // look again: it may have been a context failure
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		e = &cacheEntry{done: make(chan struct{})}
		c.evictLocked()
		c.entries[url] = e
		c.mu.Unlock()

		raw, err := c.fetcher.FetchKeySet(ctx, url)
		var set *keySet
		if err == nil {
			set, err = parseKeySet(raw)
		}
		c.mu.Lock()
		e.set, e.err = set, err
		if err == nil {
			e.expires = c.now().Add(c.ttl)
		} else {
			e.expires = c.now().Add(c.failureTTL)
		}
		if err != nil && isContextError(ctx, err) {
			delete(c.entries, url) // our caller gave up; nothing learnt about the set
		}
		close(e.done)
		c.mu.Unlock()
		return set, err
	}
}

// evictLocked bounds the cache: expired entries go first, then arbitrary
// finished ones.
func (c *keySetCache) evictLocked() {
	if len(c.entries) < c.maxEntries {
		return
	}
	now := c.now()
	for u, e := range c.entries {
		select {
		case <-e.done:
			if !now.Before(e.expires) {
				delete(c.entries, u)
			}
		default:
		}
	}
	for u, e := range c.entries {
		if len(c.entries) < c.maxEntries {
			return
		}
		select {
		case <-e.done:
			delete(c.entries, u)
		default:
		}
	}
}
