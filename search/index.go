package search

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/cardexhq/cardex/search/zapread"
)

// Options configure an Index. The zero value is usable.
type Options struct {
	// LockTimeout bounds how long opening waits for Bolt's file lock
	// (`bolt_timeout`, docs/threats.md G.70). Default 1s.
	LockTimeout time.Duration
	// QueryTimeout bounds every search (G.71). Default 2s.
	QueryTimeout time.Duration
	// Logger receives open, rebuild and indexing events. Default: discard.
	Logger *slog.Logger
	// CacheEntries bounds the cache of facet sets and result pages (see
	// cache.go): 0 means DefaultCacheEntries, negative disables caching.
	// Entries are dropped from use by every write the index applies.
	CacheEntries int
	// CacheBytes bounds the same cache by about how much memory its
	// values hold: 0 means DefaultCacheBytes, negative disables caching.
	CacheBytes int
	// MaxRunning bounds the queries computed at once (cached answers are
	// not counted): default GOMAXPROCS. MaxQueued bounds those waiting for
	// a slot (default 64) and QueueWait how long one waits (default
	// 250ms); past either the query fails with ErrOverloaded (gate.go).
	MaxRunning int
	MaxQueued  int
	QueueWait  time.Duration
	// Synonyms are groups of words a query also looks for, added to
	// DefaultSynonyms (synonyms.go); query-time only, no rebuild needed.
	Synonyms [][]string
	// noMerges opens generations without Bleve's background merging
	// (tests that need deleted documents to stay where they are).
	noMerges bool
	// compactMin is the least slots, and deleted slots, an index needs
	// before it is merged into one segment (0: deadMin; tests lower it).
	compactMin uint64
}

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = time.Second
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = DefaultCacheEntries
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.MaxRunning <= 0 {
		o.MaxRunning = runtime.GOMAXPROCS(0)
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = 64
	}
	if o.QueueWait <= 0 {
		o.QueueWait = 250 * time.Millisecond
	}
	if o.compactMin == 0 {
		o.compactMin = deadMin
	}
	return o
}

// Directory layout: dir/LOCK (flock), dir/CURRENT (name of the live
// generation), dir/gen-NNNN (a Bleve index), dir/gen-NNNN.building (a
// rebuild in progress, never opened for queries).
const (
	lockFile     = "LOCK"
	currentFile  = "CURRENT"
	genPrefix    = "gen-"
	buildingSufx = ".building"
)

// Internal keys stored inside each Bleve index.
var (
	keyMappingVersion = []byte("cardex.mappingVersion")
	keyAppliedSeq     = []byte("cardex.appliedSeq")
)

// Index is the search index of one Cardex process. Queries run against the
// live generation; Rebuild builds a new generation beside it and swaps it in.
// It is safe for concurrent use.
type Index struct {
	dir      string
	opts     Options
	lock     *os.File
	analyzer analysis.Analyzer // splits q into words like the text fields do
	runs     *runCache         // the analyzer over stored text, for highlights
	synonyms *synonymTable

	// mu guards cur and closed. Queries and write batches hold it for
	// reading for their whole duration, so the swap (write lock) happens
	// between queries and the old generation is closed only when unused.
	mu     sync.RWMutex
	cur    *generation
	reason error // why there is no usable generation (ErrMissing, ErrCorrupt…)
	closed bool

	// writeMu serializes write rounds (Indexer.Sync) with swaps, so a round
	// never straddles two generations.
	writeMu sync.Mutex
	// rebuildMu allows one rebuild at a time.
	rebuildMu sync.Mutex

	// epoch moves on after every applied write batch and every swap; it
	// is part of every cache key, so cached facets and pages are never
	// served across a change of the index (cache.go).
	epoch atomic.Uint64
	cache *lru
	gate  *gate // admission of computed queries (gate.go)
}

type generation struct {
	name string
	path string // its directory
	idx  bleve.Index
	// readers hands queries the last snapshot whose segments have tables
	// (search/pin.go).
	readers *zapread.Readers
	applied atomic.Int64 // high-water mark of the change log, mirrored from keyAppliedSeq
	// shown is the high-water mark of the snapshot queries read (the
	// pinned one): behind applied while a backlog is applied undecoded.
	shown  atomic.Int64
	facets *facetTables // decoded facet values per segment (facettable.go)
	// standing: each segment's agents' health and liveness, for ranking
	// (standing.go).
	standing *standingTables
}

// Status describes the index for readiness checks and metrics.
type Status struct {
	Ready      bool   // a generation is live and answering queries
	Reason     error  // when not ready: wraps ErrMissing, ErrCorrupt or ErrOldMapping
	Generation string // name of the live generation
	AppliedSeq int64  // last change-log sequence applied
	DocCount   uint64 // agents in the live generation
}

// Open opens the index in dir, creating dir if needed. It fails with
// ErrLocked when another process holds the directory. A missing, corrupt or
// old-mapping index is not an error: the Index opens "not ready" (Status
// tells why), queries answer ErrNotReady, and Rebuild (or Indexer.Run) builds
// a fresh generation — never a hot retry loop (G.69).
func Open(dir string, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("search: create index directory: %w", err)
	}
	lock, err := lockDir(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, err
	}
	x := &Index{dir: dir, opts: opts, lock: lock, analyzer: newMapping().AnalyzerNamed(analyzerText),
		cache: newLRU(opts.CacheEntries, opts.CacheBytes), gate: newGate(opts.MaxRunning, opts.MaxQueued, opts.QueueWait)}
	if x.analyzer == nil {
		_ = unlockDir(lock)
		return nil, fmt.Errorf("search: analyzer %q unavailable", analyzerText)
	}
	x.runs = newRunCache(x.analyzer)
	x.synonyms = newSynonymTable(x.analyzer, append(slices.Clone(DefaultSynonyms), opts.Synonyms...))
	name, err := readCurrent(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		x.reason = ErrMissing
	case err != nil:
		x.reason = fmt.Errorf("%w: %w", ErrCorrupt, err)
	default:
		g, err := x.openGeneration(name)
		switch {
		case errors.Is(err, ErrLocked):
			_ = unlockDir(lock)
			return nil, err
		case err != nil:
			x.reason = err
		default:
			x.cur = g
		}
	}
	if x.reason != nil {
		opts.Logger.Warn("search index needs a rebuild", "dir", dir, "reason", x.reason.Error())
	}
	x.removeStale()
	return x, nil
}

// openGeneration opens one generation and checks that it is complete and
// of the current mapping.
func (x *Index) openGeneration(name string) (*generation, error) {
	path := filepath.Join(x.dir, name)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: generation %s: %w", ErrCorrupt, name, err)
	}
	idx, err := openBleve(path, x.opts.LockTimeout, x.opts.noMerges)
	if err != nil {
		return nil, err
	}
	g := &generation{name: name, path: path, idx: idx, readers: zapread.NewReaders(idx), facets: newFacetTables(), standing: newStandingTables()}
	if err := g.check(); err != nil {
		_ = g.close()
		return nil, err
	}
	// check built the tables from every posting: give back the pages and
	// the heap that took (release_linux.go), once per opened generation.
	g.release()
	return g, nil
}

// check reads the metadata every complete generation has and touches the
// segments, so a deleted root.bolt (Bleve silently starts empty) or an
// unreadable segment is caught at open rather than at the first query.
func (g *generation) check() error {
	v, err := g.idx.GetInternal(keyMappingVersion)
	if err != nil {
		return fmt.Errorf("%w: read mapping version: %w", ErrCorrupt, err)
	}
	if v == nil {
		return fmt.Errorf("%w: generation %s has no mapping version (incomplete or root.bolt lost)", ErrCorrupt, g.name)
	}
	if string(v) != MappingVersion {
		return fmt.Errorf("%w: found %q, want %q", ErrOldMapping, v, MappingVersion)
	}
	s, err := g.idx.GetInternal(keyAppliedSeq)
	if err != nil || s == nil {
		return fmt.Errorf("%w: generation %s has no applied sequence", ErrCorrupt, g.name)
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: applied sequence %q", ErrCorrupt, s)
	}
	g.applied.Store(n)
	if _, err := g.idx.DocCount(); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 1, 0, false)
	req.Fields = []string{fieldName}
	if _, err := g.idx.Search(req); err != nil {
		return fmt.Errorf("%w: probe query: %w", ErrCorrupt, err)
	}
	// Decode every segment's facet values and text now (≈1.4 s on 100k
	// agents) rather than in the first query; for a rebuilt generation
	// this runs before the swap, while the old generation still answers.
	if _, _, err := g.facets.warm(g); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	g.shown.Store(n)
	return nil
}

// Status reports readiness and progress.
func (x *Index) Status() Status {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.cur == nil {
		return Status{Reason: x.reason}
	}
	n, _ := x.cur.idx.DocCount()
	return Status{Ready: true, Generation: x.cur.name, AppliedSeq: x.cur.applied.Load(), DocCount: n}
}

// NeedsRebuild reports whether no generation is live, and why.
func (x *Index) NeedsRebuild() (bool, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.cur == nil && !x.closed, x.reason
}

// Dir is the index directory.
func (x *Index) Dir() string { return x.dir }

// Close waits for running queries, write rounds and a running Rebuild
// (cancel its context to cut it short), closes the live generation and
// releases the directory lock.
func (x *Index) Close() error {
	x.rebuildMu.Lock()
	defer x.rebuildMu.Unlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	var err error
	if x.cur != nil {
		err = x.cur.close()
		x.cur = nil
	}
	return errors.Join(err, unlockDir(x.lock))
}

// acquireEpoch is acquire that also reads the write epoch, under the same
// read lock so a swap cannot come between them.
func (x *Index) acquireEpoch() (*generation, uint64, error) {
	g, err := x.acquire()
	if err != nil {
		return nil, 0, err
	}
	return g, x.epoch.Load(), nil
}

// acquire returns the live generation with the read lock held; release
// with x.mu.RUnlock.
func (x *Index) acquire() (*generation, error) {
	x.mu.RLock()
	if x.closed {
		x.mu.RUnlock()
		return nil, ErrClosed
	}
	if x.cur == nil {
		reason := x.reason // read under the lock: swap writes it
		x.mu.RUnlock()
		return nil, fmt.Errorf("%w: %w", ErrNotReady, reason)
	}
	return x.cur, nil
}

// release gives back the segment pages and the heap a table build used
// (release_linux.go), after opening a generation.
func (g *generation) release() {
	releaseMappedPages(g.path)
	debug.FreeOSMemory()
}

// afterBuild gives back what the indexer's table builds of built
// documents used: the segment pages they read whenever there were any
// (a batch's or a merge's segment is read whole, and with a batch every
// few seconds the pages of some forty segments stayed resident: 230–250
// MiB at 100,000 agents during a probe round), and the heap too when the
// build was large (releaseAfterDocs; collecting it costs a full
// collection).
func (g *generation) afterBuild(built uint64) {
	if built == 0 {
		return
	}
	if built >= releaseAfterDocs {
		g.release()
		return
	}
	releaseMappedPages(g.path)
}
