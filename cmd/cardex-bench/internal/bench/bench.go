// Package bench is what cardex-bench's subcommands share: exit codes,
// latency percentiles, JSON reports, and a `cardex serve` subprocess on
// loopback with its CPU time and memory read from /proc.
package bench

import (
	"encoding/json"
	"io"
	"slices"
	"time"
)

// Exit codes of every subcommand.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

// Percentile is the nearest-rank percentile p (0 < p ≤ 100) of sorted
// latencies, 0 when there are none.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p+99)/100 - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Latency summarizes latencies.
type Latency struct {
	P50, P90, P99, Max time.Duration
}

// Summarize sorts a copy of l and reads its percentiles.
func Summarize(l []time.Duration) Latency {
	s := slices.Clone(l)
	slices.Sort(s)
	if len(s) == 0 {
		return Latency{}
	}
	return Latency{P50: Percentile(s, 50), P90: Percentile(s, 90), P99: Percentile(s, 99), Max: s[len(s)-1]}
}

// Ms is d in milliseconds, to the microsecond.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// WriteJSON writes v as indented JSON, the -json form of every report.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
