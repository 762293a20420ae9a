package search

import "errors"

// Sentinel errors. Callers map them with errors.Is: ErrLocked is fatal at
// start-up, ErrNotReady answers 503 "reindexing", ErrInvalidQuery and
// ErrInvalidPageToken answer 400.
var (
	// ErrLocked means another process (or an unclosed Index) holds the
	// index directory (docs/threats.md G.70; docs/configuration.md: `cardex
	// reindex` refuses while a server holds the index).
	ErrLocked = errors.New("search: index directory is in use by another process")
	// ErrNotReady means there is no usable index yet: it is missing,
	// corrupt or of an old mapping and must be rebuilt (G.69).
	ErrNotReady = errors.New("search: index is being rebuilt")
	// ErrCorrupt is the reason recorded when an index cannot be opened or
	// lacks its metadata.
	ErrCorrupt = errors.New("search: index is corrupt")
	// ErrMissing is the reason recorded when no index exists yet.
	ErrMissing = errors.New("search: no index yet")
	// ErrOldMapping is the reason recorded when the index was written with
	// another MappingVersion.
	ErrOldMapping = errors.New("search: index was built with another mapping version")
	// ErrInvalidQuery is a query the index refuses (too long, bad sort).
	ErrInvalidQuery = errors.New("search: invalid query")
	// ErrInvalidPageToken is a page token that is malformed or belongs to
	// another query.
	ErrInvalidPageToken = errors.New("search: invalid page token")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("search: index is closed")
)
