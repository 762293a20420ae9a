package api

import (
	"container/list"
	"context"
	"sync"

	"github.com/cardexhq/cardex/registry"
)

// DefaultCardCacheBytes bounds the rendered cards a server keeps when
// Config.CardCacheBytes is zero: about 10,000 cards of the usual 3 KB.
const DefaultCardCacheBytes = 32 << 20

// cardEntryOverhead is what one entry costs besides its bytes: the key,
// the list element and the map slot.
const cardEntryOverhead = 160

// cardKey names one stored version of an agent. A version's card never
// changes once stored, so its rendering never goes stale; a new version
// is a new key, and the old one ages out.
type cardKey struct {
	id  string
	seq int64
}

type cardEntry struct {
	key  cardKey
	json []byte // cardMembers of the version's card; never modified
}

// cardCache is a least-recently-used map of rendered card members bounded
// by their total size. A nil *cardCache keeps nothing.
type cardCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // front = most recent; elements hold *cardEntry
	items map[cardKey]*list.Element
	hits  int64
	miss  int64
}

func newCardCache(maxBytes int) *cardCache {
	if maxBytes <= 0 {
		return nil
	}
	return &cardCache{max: maxBytes, order: list.New(), items: map[cardKey]*list.Element{}}
}

func (c *cardCache) get(k cardKey) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		c.miss++
		return nil, false
	}
	c.hits++
	c.order.MoveToFront(e)
	return e.Value.(*cardEntry).json, true
}

func (c *cardCache) put(k cardKey, b []byte) {
	if c == nil {
		return
	}
	cost := len(b) + len(k.id) + cardEntryOverhead
	if cost > c.max/16 {
		return // one huge card must not flush the others
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.order.PushFront(&cardEntry{key: k, json: b})
	c.size += cost
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*cardEntry)
		c.order.Remove(last)
		delete(c.items, e.key)
		c.size -= len(e.json) + len(e.key.id) + cardEntryOverhead
	}
}

// cacheStats say what a cardCache holds and how often it was asked.
type cacheStats struct {
	entries, bytes int
	hits, misses   int64
}

func (c *cardCache) stats() cacheStats {
	if c == nil {
		return cacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return cacheStats{entries: len(c.items), bytes: c.size, hits: c.hits, misses: c.miss}
}

// heldLister is the search.Lister of one search request: it asks the
// registry to leave out the cards the cache holds, and keeps what it found
// for them, so an entry evicted meanwhile is not missed.
type heldLister struct {
	svc   *registry.Service
	cards *cardCache
	held  map[string][]byte // agent id → card members of its current version
}

func (l *heldLister) Listed(ctx context.Context, p registry.Principal, ids []string) ([]registry.Agent, error) {
	if l.cards == nil {
		return l.svc.Listed(ctx, p, ids)
	}
	return l.svc.ListedHeld(ctx, p, ids, func(id string, seq int64) bool {
		b, ok := l.cards.get(cardKey{id, seq})
		if ok {
			if l.held == nil {
				l.held = make(map[string][]byte, len(ids))
			}
			l.held[id] = b
		}
		return ok
	})
}

// cardJSON returns the card members of a, from what Listed held or by
// rendering a.Card (and keeping the result).
func (l *heldLister) cardJSON(a *registry.Agent) ([]byte, error) {
	if b, ok := l.held[a.ID]; ok && a.Card == nil {
		return b, nil
	}
	b, err := cardMembers(nil, a.Card)
	if err != nil {
		return nil, err
	}
	if a.Card != nil && a.VersionSeq > 0 && l.cards != nil {
		b = append(make([]byte, 0, len(b)), b...) // no spare capacity held
		l.cards.put(cardKey{a.ID, a.VersionSeq}, b)
	}
	return b, nil
}
