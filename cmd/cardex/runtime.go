package main

import (
	"runtime"
	"runtime/debug"
	"time"
)

// minServeProcs is the fewest scheduler threads (GOMAXPROCS) `cardex serve`
// runs with. With as many threads as cores, a saturated server lets some
// requests wait many times as long as the median: the Go scheduler runs
// goroutines it has just woken ahead of those whose connections became
// readable, so a new request can sit unread while others go round. With
// more threads than cores the kernel shares the cores among them by time,
// and the slowest requests wait far less; search queries still run at most
// one per core (the search gate). docs/benchmarks.md "Tail latency" has the
// measurements.
const minServeProcs = 8

// serveProcs decides, for a server whose runtime chose current threads
// (the CPUs the process may use, a container's quota included), how many
// search queries may run at once (cores) and how many scheduler threads
// the server runs with (procs). An operator's GOMAXPROCS is taken as it
// is, for both.
func serveProcs(getenv func(string) string, current int) (cores, procs int) {
	if getenv("GOMAXPROCS") != "" {
		return current, current
	}
	return current, max(current, minServeProcs)
}

// searchCores is how many search queries `cardex serve` runs at once; 0
// (the tests, which never change the process's threads) leaves the search
// package's default.
var searchCores int

// serveGCPercent is the collector's target `cardex serve` runs with: the
// heap may grow 80 % past what is live before a collection, against Go's
// default of 100 %. 50 % was tried: at 100,000 agents with the crawler and
// the prober at work it saved about 45 MiB of RSS but cost about 15 % more
// CPU per search, and one client's p99 rose past 20 ms
// (docs/benchmarks.md "Under real load", third pass).
const serveGCPercent = 80

// serveGC is the GC percent serve sets, false when the operator's GOGC
// stands.
func serveGC(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return serveGCPercent, true
}

// applyServeRuntime sets the scheduler threads and the collector's target
// of a `cardex serve` process (main only: it changes the whole process).
func applyServeRuntime(getenv func(string) string) {
	cores, procs := serveProcs(getenv, runtime.GOMAXPROCS(0))
	searchCores = cores
	if procs != cores {
		runtime.GOMAXPROCS(procs)
	}
	if pct, ok := serveGC(getenv); ok {
		debug.SetGCPercent(pct)
	}
	if cHeapTunable() {
		if n, ok := serveCArenas(getenv, cores); ok {
			limitCArenas(n)
		}
		go trimCHeapEvery(cHeapTrimInterval)
	}
}

// serveCArenas is how many malloc arenas `cardex serve` allows its C heap
// (SQLite's, cheap_glibc.go): one per core the server runs on, at least
// two, instead of glibc's eight per core. False when the operator set
// MALLOC_ARENA_MAX, which glibc has applied already.
func serveCArenas(getenv func(string) string, cores int) (int, bool) {
	if getenv("MALLOC_ARENA_MAX") != "" {
		return 0, false
	}
	return max(cores, 2), true
}

// cHeapTrimInterval is how often `cardex serve` returns the C heap's free
// memory to the system (malloc_trim walks the arenas' free lists: 2 µs
// when there is little to give back, BenchmarkTrimCHeap).
const cHeapTrimInterval = time.Minute

// trimCHeapEvery trims the C heap every interval, for the life of the
// process.
func trimCHeapEvery(interval time.Duration) {
	for range time.Tick(interval) {
		trimCHeap()
	}
}
