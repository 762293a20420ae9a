package fetch

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxHint bounds parsed delays so absurd values cannot overflow; the
// scheduler clamps further (docs/design.md "Crawl policy").
const maxHint = 365 * 24 * time.Hour

// RetryAfter parses Retry-After as delay-seconds or an HTTP-date (RFC 9110
// §10.2.3) relative to now. A date in the past means "now" (0). ok is false
// when the header is absent or malformed (docs/threats.md B.26).
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		return seconds(v), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now)
	switch {
	case d < 0:
		return 0, true
	case d > maxHint:
		return maxHint, true
	}
	return d.Truncate(time.Second), true
}

// MaxAge returns the Cache-Control max-age of a response (A2A §8.6: a hint
// for the next fetch). no-store and no-cache mean "revalidate now" (0), as
// do conflicting max-age values (RFC 9111 §4.2.1 allows treating such a
// response as stale). ok is false when there is no usable directive.
func MaxAge(h http.Header) (d time.Duration, ok bool) {
	found := false
	for _, line := range h.Values("Cache-Control") {
		for _, dir := range strings.Split(line, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0, true
			case "max-age":
				val = strings.Trim(strings.TrimSpace(val), `"`)
				if !isDigits(val) {
					continue
				}
				s := seconds(val)
				if found && s != d {
					return 0, true
				}
				d, found = s, true
			}
		}
	}
	return d, found
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// seconds converts a string of digits to a duration, saturating at maxHint.
func seconds(s string) time.Duration {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > uint64(maxHint/time.Second) || n > math.MaxInt64/uint64(time.Second) {
		return maxHint
	}
	return time.Duration(n) * time.Second
}
