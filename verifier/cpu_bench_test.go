//go:build unix

package verifier

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report it per
// operation because wall time on a shared, loaded machine overstates the
// cost; with -cpu 1 it gives the rate one core sustains.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-µs/op and verifications per CPU-second.
func reportCPU(b *testing.B, start time.Duration) {
	per := float64(cpuTime(b)-start) / float64(b.N)
	b.ReportMetric(per/1e3, "cpu-µs/op")
	b.ReportMetric(1e9/per, "verifications/cpu-s")
}
