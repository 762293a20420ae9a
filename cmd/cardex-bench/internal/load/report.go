package load

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
)

// report is the outcome of a run, as printed (-json: this struct).
type report struct {
	URL            string              `json:"url"`
	Clients        int                 `json:"clients"`
	DurationSec    float64             `json:"durationSeconds"`
	Requests       int                 `json:"requests"`
	RequestsPerSec float64             `json:"requestsPerSecond"`
	Statuses       map[string]int      `json:"statuses"`
	ServerErrors   int                 `json:"serverErrors"` // 5xx answers
	Shed           int                 `json:"shed"`         // of those, 503s: the server shedding load
	allowShed      bool                // -allow-shed: shed answers are not failures
	TransportErrs  int                 `json:"transportErrors"` // no answer, or a broken one
	Operations     map[string]opReport `json:"operations"`
	Goroutines     growth              `json:"goroutines"`
	RSSBytes       growth              `json:"residentMemoryBytes"`
	GoroutineSlack int                 `json:"goroutineSlack"`
	// Created is how many agents the run submitted; Removed how many of
	// them it removed again (0 with -keep); KeptFile lists them with -keep.
	Created     int               `json:"created"`
	Removed     int               `json:"removed"`
	KeptFile    string            `json:"keptFile,omitempty"`
	cleanupFail string            // why not every created agent could be removed
	lastErrors  map[string]string // op → last transport error, for failures()
}

type opReport struct {
	Requests        int            `json:"requests"`
	Statuses        map[string]int `json:"statuses"`
	TransportErrors int            `json:"transportErrors"`
	P50ms           float64        `json:"p50Ms"`
	P90ms           float64        `json:"p90Ms"`
	P99ms           float64        `json:"p99Ms"`
	MaxMs           float64        `json:"maxMs"`
}

// growth is a /metrics gauge before the run, right after it, and once
// settled.
type growth struct {
	Before  float64 `json:"before"`
	After   float64 `json:"after"`
	Settled float64 `json:"settled"`
}

func newReport(c *Config, s *stats, elapsed time.Duration, before, after, settled sample) *report {
	r := &report{
		URL: c.URL, Clients: c.Clients, DurationSec: elapsed.Seconds(),
		Statuses: map[string]int{}, Operations: map[string]opReport{},
		Goroutines:     growth{before.goroutines, after.goroutines, settled.goroutines},
		RSSBytes:       growth{before.rss, after.rss, settled.rss},
		GoroutineSlack: c.GoroutineSlack,
		allowShed:      c.AllowShed,
		lastErrors:     map[string]string{},
	}
	for name, o := range s.ops {
		or := opReport{Requests: o.requests, Statuses: map[string]int{}, TransportErrors: o.errors}
		for st, n := range o.statuses {
			k := strconv.Itoa(st)
			or.Statuses[k] += n
			r.Statuses[k] += n
			if st >= 500 {
				r.ServerErrors += n
			}
			if st == 503 {
				r.Shed += n
			}
		}
		l := bench.Summarize(o.latencies)
		or.P50ms, or.P90ms, or.P99ms, or.MaxMs = bench.Ms(l.P50), bench.Ms(l.P90), bench.Ms(l.P99), bench.Ms(l.Max)
		r.Operations[name] = or
		r.Requests += or.Requests
		r.TransportErrs += o.errors
		if o.lastErr != "" {
			r.lastErrors[name] = o.lastErr
		}
	}
	if elapsed > 0 {
		r.RequestsPerSec = float64(r.Requests) / elapsed.Seconds()
	}
	return r
}

// failures lists why the run failed: any 5xx, any transport error, or
// goroutines above the slack once settled.
func (r *report) failures() []string {
	var f []string
	if errs := r.ServerErrors; errs > 0 && !r.allowShed {
		f = append(f, fmt.Sprintf("%d responses with a 5xx status (%d of them 503: shed load)", errs, r.Shed))
	} else if errs := r.ServerErrors - r.Shed; errs > 0 {
		f = append(f, fmt.Sprintf("%d responses with a 5xx status other than 503", errs))
	}
	if r.TransportErrs > 0 {
		for _, op := range slices.Sorted(maps.Keys(r.lastErrors)) {
			f = append(f, fmt.Sprintf("%s: %d transport errors, last: %s", op, r.Operations[op].TransportErrors, r.lastErrors[op]))
		}
	}
	if grew := r.Goroutines.Settled - r.Goroutines.Before; grew > float64(r.GoroutineSlack) {
		f = append(f, fmt.Sprintf("server goroutines grew by %.0f (%.0f → %.0f), more than the slack of %d",
			grew, r.Goroutines.Before, r.Goroutines.Settled, r.GoroutineSlack))
	}
	if r.cleanupFail != "" {
		f = append(f, fmt.Sprintf("removed %d of the %d agents the run submitted: %s", r.Removed, r.Created, r.cleanupFail))
	}
	return f
}

func (r *report) writeJSON(w io.Writer) error { return bench.WriteJSON(w, r) }

func (r *report) writeText(w io.Writer) error {
	fmt.Fprintf(w, "%s: %d clients, %.1fs, %d requests, %.0f req/s\n", r.URL, r.Clients, r.DurationSec, r.Requests, r.RequestsPerSec)
	fmt.Fprintf(w, "statuses:")
	for _, k := range slices.Sorted(maps.Keys(r.Statuses)) {
		fmt.Fprintf(w, " %s×%d", k, r.Statuses[k])
	}
	fmt.Fprintf(w, "; 5xx: %d (shed 503: %d); transport errors: %d\n", r.ServerErrors, r.Shed, r.TransportErrs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\trequests\terrors\tp50 ms\tp90 ms\tp99 ms\tmax ms\t")
	for _, name := range slices.Sorted(maps.Keys(r.Operations)) {
		o := r.Operations[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", name, o.Requests, o.TransportErrors, o.P50ms, o.P90ms, o.P99ms, o.MaxMs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Created > 0 {
		if r.KeptFile != "" {
			fmt.Fprintf(w, "agents submitted: %d, kept (ids in %s)\n", r.Created, r.KeptFile)
		} else {
			fmt.Fprintf(w, "agents submitted: %d, removed again: %d\n", r.Created, r.Removed)
		}
	}
	_, err := fmt.Fprintf(w, "goroutines: %.0f before, %.0f after, %.0f settled (slack %d); resident memory: %.1f → %.1f → %.1f MiB\n",
		r.Goroutines.Before, r.Goroutines.After, r.Goroutines.Settled, r.GoroutineSlack,
		r.RSSBytes.Before/(1<<20), r.RSSBytes.After/(1<<20), r.RSSBytes.Settled/(1<<20))
	return err
}
