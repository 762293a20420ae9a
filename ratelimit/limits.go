package ratelimit

import (
	"time"
)

// Limits are the rate limits of one server (docs/configuration.md
// "Rate limits", docs/security.md "Budgets per token kind"). Only admin
// tokens are never limited; the callers decide which budget a request
// spends (a client address's, or a token's own).
type Limits struct {
	SubmitPerAddress Rate // anonymous submissions per client address
	SubmitPerDomain  Rate // anonymous submissions per registrable domain of the submitted host
	SubmitPerToken   Rate // submissions, claims and crawl requests per publisher token
	ReadPerAddress   Rate // reads (API, pages, discovery) per client address, and per non-admin token
	AuthFailures     Rate // failed credentials per client address before 429
}

// DefaultLimits are the defaults of `cardex serve`; AuthFailures allows a
// mistyped token or two but not a guessing run.
func DefaultLimits() Limits {
	return Limits{
		SubmitPerAddress: Rate{N: 10, Per: time.Minute},
		SubmitPerDomain:  Rate{N: 100, Per: time.Hour},
		SubmitPerToken:   Rate{N: 10, Per: time.Minute},
		ReadPerAddress:   Rate{N: 50, Per: time.Second, Burst: 100},
		AuthFailures:     Rate{N: 10, Per: time.Minute},
	}
}

// Limiters are the buckets of one server's Limits. Build one with
// NewLimiters and hand the same value to the API and the web UI. A nil
// *Limiters allows everything.
type Limiters struct {
	read, submitAddr, submitDomain, submitToken *Limiter
	auth                                        *Guard
}

// NewLimiters builds the buckets of l, each over at most maxKeys keys
// (DefaultMaxKeys when not positive). A zero Rate disables its limit.
func NewLimiters(l Limits, maxKeys int) *Limiters {
	return &Limiters{
		read:         New(l.ReadPerAddress, maxKeys),
		submitAddr:   New(l.SubmitPerAddress, maxKeys),
		submitDomain: New(l.SubmitPerDomain, maxKeys),
		submitToken:  New(l.SubmitPerToken, maxKeys),
		auth:         NewGuard(l.AuthFailures, maxKeys),
	}
}

// Read spends one read of the client with key addr: an address key
// (ClientKey) for anonymous callers, TokenKey for a non-admin token, which
// reads on a budget of its own wherever it connects from.
func (l *Limiters) Read(addr string, now time.Time) (ok bool, wait time.Duration) {
	if l == nil {
		return true, 0
	}
	return l.read.Take(addr, now)
}

// TokenKey is the key of a token's own read budget; it never equals an
// address key.
func TokenKey(tokenID string) string { return "token:" + tokenID }

// Refusal says why a request was refused and for how long.
type Refusal struct {
	Wait   time.Duration
	Detail string // what the client is told, e.g. "too many submissions for this domain"
}

// Submit spends one anonymous submission of cardURL by the client with key
// addr: per address first, then per registrable domain of the submitted
// host (DomainKey), so one client cannot register thousands of subdomains
// of a victim and many clients cannot do it together either. It returns
// nil when the submission may go ahead.
func (l *Limiters) Submit(addr, cardURL string, now time.Time) *Refusal {
	if l == nil {
		return nil
	}
	if ok, wait := l.submitAddr.Take(addr, now); !ok {
		return &Refusal{wait, "too many submissions from this address"}
	}
	if ok, wait := l.submitDomain.Take(DomainKey(cardURL), now); !ok {
		return &Refusal{wait, "too many submissions for this domain"}
	}
	return nil
}

// SubmitAddr spends one unit of the per-address submission budget only:
// for anonymous requests that must not spend a budget others share (a
// host claim and its verifications, docs/claims.md "Who can stop a
// claim").
func (l *Limiters) SubmitAddr(addr string, now time.Time) (ok bool, wait time.Duration) {
	if l == nil {
		return true, 0
	}
	return l.submitAddr.Take(addr, now)
}

// SubmitToken spends n units of a publisher token's own budget
// (SubmitPerToken), keyed by the token's id: a submission, a host claim, a
// claim verification or a crawl request is one unit each. A publisher
// spends neither its address's budget nor the per-domain one, so others'
// spending never blocks it, and it never blocks theirs. It returns nil when
// the request may go ahead.
func (l *Limiters) SubmitToken(tokenID string, n int, now time.Time) *Refusal {
	if l == nil {
		return nil
	}
	if ok, wait := l.submitToken.TakeN(TokenKey(tokenID), n, now); !ok {
		return &Refusal{wait, "too many requests with this token"}
	}
	return nil
}

// Auth is the credential failure guard (see Guard).
func (l *Limiters) Auth() *Guard {
	if l == nil {
		return nil
	}
	return l.auth
}
