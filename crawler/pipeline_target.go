package crawler

import (
	"net/url"
	"strings"
)

// WellKnownCardPath is where a bare host's card lives (CONTRACT.md §1).
const WellKnownCardPath = "/.well-known/agent-card.json"

// TargetFor turns what a person types (`cardex crawl`) into a Target the way
// a submission is read: a bare hostname means https://host, and a URL with
// an empty path or "/" means the host's well-known card with the legacy
// fallback. Everything else is fetched as written; the fetcher's policy
// decides whether it may be. Errors wrap ErrBadURL or ErrUnsupportedScheme.
func TargetFor(raw string) (Target, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Target{}, wrapf(ErrBadURL, "empty URL")
	}
	if !strings.Contains(raw, "://") {
		if strings.ContainsAny(raw, "/:@?#[]\\") {
			return Target{}, wrapf(ErrBadURL, "%q needs a scheme (https://)", truncate(raw, 200))
		}
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, wrapf(ErrBadURL, "%v", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "http":
	default:
		return Target{}, wrapf(ErrUnsupportedScheme, "%q", u.Scheme)
	}
	switch {
	case u.Host == "" || u.Opaque != "":
		return Target{}, wrapf(ErrBadURL, "no host in %q", truncate(raw, 200))
	case u.User != nil:
		return Target{}, wrapf(ErrBadURL, "user information in a card URL")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return Target{}, wrapf(ErrBadURL, "a fragment in a card URL")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	bare := u.Path == "" || u.Path == "/"
	if bare {
		u.Path, u.RawPath = WellKnownCardPath, ""
	}
	return Target{CardURL: u.String(), BareHost: bare}, nil
}
