//go:build !linux

package search

// releaseMappedPages is Linux-only (release_linux.go): elsewhere the
// segment pages stay resident until the system reclaims them.
func releaseMappedPages(string) {}
