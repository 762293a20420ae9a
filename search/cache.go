package search

import (
	"container/list"
	"slices"
	"sync"
)

// DefaultCacheEntries is how many facet sets and result pages an Index
// remembers when Options.CacheEntries is zero.
const DefaultCacheEntries = 2048

// DefaultCacheBytes is about how much memory the cached facet sets and
// result pages may hold when Options.CacheBytes is zero: pages of unique
// queries carry their highlights, and 2,048 of them could hold far more
// than the index itself. 16 MiB holds about 400 pages of twenty hits; the
// Go heap grows to about twice what is live, so each MiB here costs about
// two of the server's resident memory (docs/benchmarks.md "Memory").
const DefaultCacheBytes = 16 << 20

// cacheKey names one cached value. Epoch is the index's write epoch when
// the value was computed (see Index.epoch): every applied write batch and
// every generation swap moves it on, so a value computed before a write is
// never looked up after it.
type cacheKey struct {
	kind  byte // cacheFacets or cachePage
	epoch uint64
	query string // queryKey fingerprint
	token string // page token (pages only)
	size  int    // page size (pages only)
}

const (
	cacheFacets byte = iota + 1
	cachePage
)

// lru is a bounded least-recently-used map. Values are never mutated once
// stored; callers get copies (see cloneResult), so a caller editing its
// Result cannot change what the next caller sees.
type lru struct {
	mu       sync.Mutex
	max      int // entries
	maxBytes int // approxSize of the values
	bytes    int
	order    *list.List // front = most recent; elements hold *lruEntry
	items    map[cacheKey]*list.Element
}

type lruEntry struct {
	key   cacheKey
	value any
	size  int
}

func newLRU(max, maxBytes int) *lru {
	if max <= 0 || maxBytes <= 0 {
		return nil
	}
	return &lru{max: max, maxBytes: maxBytes, order: list.New(), items: make(map[cacheKey]*list.Element, max)}
}

// approxSize is about how many bytes a cached value holds.
func approxSize(v any) int {
	const word = 8
	facets := func(f Facets) int {
		n := 0
		for _, vs := range [][]FacetValue{f.Tags, f.InputModes, f.OutputModes, f.Bindings, f.SecuritySchemes,
			f.ProtocolVersions, f.Capabilities, f.Extensions, f.Trust, f.Providers, f.Liveness} {
			for _, fv := range vs {
				n += len(fv.Value) + 4*word
			}
		}
		return n
	}
	switch t := v.(type) {
	case Facets:
		return 64 + facets(t)
	case *Result:
		n := 128 + len(t.NextPageToken) + facets(t.Facets)
		for _, h := range t.Hits {
			n += 16*word + len(h.ID) + len(h.Name) + len(h.Description) + len(h.Provider) + len(h.Host) + len(h.Trust)
			for _, m := range h.Matches {
				n += 8*word + len(m.SkillID) + len(m.Field)
				for _, f := range m.Fragments {
					n += 2*word + len(f)
				}
			}
		}
		return n
	}
	return 64
}

// get returns the value stored under k. A nil cache never hits.
func (c *lru) get(k cacheKey) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).value, true
}

// put stores v under k, evicting the least recently used entry when full.
// Entries of older epochs are never hit again and age out the same way.
func (c *lru) put(k cacheKey, v any) {
	if c == nil {
		return
	}
	size := approxSize(v) + len(k.query) + len(k.token) + 96
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		le := e.Value.(*lruEntry)
		c.bytes += size - le.size
		le.value, le.size = v, size
		c.order.MoveToFront(e)
	} else {
		c.items[k] = c.order.PushFront(&lruEntry{key: k, value: v, size: size})
		c.bytes += size
	}
	for c.order.Len() > c.max || c.bytes > c.maxBytes {
		last := c.order.Back()
		le := last.Value.(*lruEntry)
		c.order.Remove(last)
		delete(c.items, le.key)
		c.bytes -= le.size
	}
}

// len is the number of entries, for tests.
func (c *lru) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func cloneFacets(f Facets) Facets {
	return Facets{
		Tags:             slices.Clone(f.Tags),
		InputModes:       slices.Clone(f.InputModes),
		OutputModes:      slices.Clone(f.OutputModes),
		Bindings:         slices.Clone(f.Bindings),
		SecuritySchemes:  slices.Clone(f.SecuritySchemes),
		ProtocolVersions: slices.Clone(f.ProtocolVersions),
		Capabilities:     slices.Clone(f.Capabilities),
		Extensions:       slices.Clone(f.Extensions),
		Trust:            slices.Clone(f.Trust),
		Providers:        slices.Clone(f.Providers),
		Liveness:         slices.Clone(f.Liveness),
	}
}

// cloneResult deep-copies r: callers own what Search returns.
func cloneResult(r *Result) *Result {
	out := &Result{TotalSize: r.TotalSize, Facets: cloneFacets(r.Facets), NextPageToken: r.NextPageToken,
		Hits: make([]Hit, len(r.Hits))}
	for i, h := range r.Hits {
		h.Matches = slices.Clone(h.Matches)
		for j := range h.Matches {
			h.Matches[j].Fragments = slices.Clone(h.Matches[j].Fragments)
		}
		out.Hits[i] = h
	}
	return out
}
