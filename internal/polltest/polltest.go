// Package polltest is the tests' one bounded polling helper: wait for a
// condition that background work (a crawl, the indexer, a server starting)
// makes true, checking it often and failing after a deadline, never a bare
// sleep (CONTRIBUTING.md "Rules"). Tests import it; the cardex binary never
// links it (cmd/cardex/imports_test.go refuses packages named …test).
package polltest

import (
	"testing"
	"time"
)

// maxInterval caps the pause between checks: short conditions are seen
// within a millisecond or two, long waits cost little CPU.
const maxInterval = 20 * time.Millisecond

// Until checks cond, first at once and then at intervals growing from 1 ms
// to 20 ms, until it holds; when d has passed it fails t with "timed out
// after d waiting for what". what is a string, or a func() string called
// only then, to report the state at the deadline.
func Until[W string | func() string](t testing.TB, what W, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	wait := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			var msg string
			switch w := any(what).(type) {
			case string:
				msg = w
			case func() string:
				msg = w()
			}
			t.Fatalf("timed out after %v waiting for %s", d, msg)
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, maxInterval)
	}
}
