package crawler

import (
	"fmt"

	"github.com/cardexhq/cardex/registry"
)

// The classes a catalog crawl records besides the fetcher's
// (fetch.ClassDNS … fetch.ClassInvalidCard, docs/errors.md).
const (
	// ClassNotACatalog: a catalog document that is not a valid AI Catalog.
	ClassNotACatalog = registry.ErrorClassNotACatalog
	// ClassNotListed: the catalog that brought the agent no longer lists
	// it (nothing is fetched); recorded as missing, like a 404.
	ClassNotListed = registry.ErrorClassNotListed
)

// wrapf wraps a sentinel with detail: "sentinel: detail", worded as the
// fetcher words its errors.
func wrapf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
