package ratelimit

import (
	"time"
)

// Limits are the rate limits of one server (docs/configuration.md
// "Rate limits"). Requests with a valid token are never limited.
type Limits struct {
	SubmitPerAddress Rate // anonymous submissions per client address
	SubmitPerDomain  Rate // anonymous submissions per registrable domain of the submitted host
	ReadPerAddress   Rate // anonymous reads (API and pages) per client address
	AuthFailures     Rate // failed credentials per client address before 429
}

// DefaultLimits are the defaults of `cardex serve`; AuthFailures allows a
// mistyped token or two but not a guessing run.
func DefaultLimits() Limits {
	return Limits{
		SubmitPerAddress: Rate{N: 10, Per: time.Minute},
		SubmitPerDomain:  Rate{N: 100, Per: time.Hour},
		ReadPerAddress:   Rate{N: 50, Per: time.Second, Burst: 100},
		AuthFailures:     Rate{N: 10, Per: time.Minute},
	}
}

// Limiters are the buckets of one server's Limits. Build one with
// NewLimiters and hand the same value to the API and the web UI. A nil
// *Limiters allows everything.
type Limiters struct {
	read, submitAddr, submitDomain *Limiter
	auth                           *Guard
}

// NewLimiters builds the buckets of l, each over at most maxKeys keys
// (DefaultMaxKeys when not positive). A zero Rate disables its limit.
func NewLimiters(l Limits, maxKeys int) *Limiters {
	return &Limiters{
		read:         New(l.ReadPerAddress, maxKeys),
		submitAddr:   New(l.SubmitPerAddress, maxKeys),
		submitDomain: New(l.SubmitPerDomain, maxKeys),
		auth:         NewGuard(l.AuthFailures, maxKeys),
	}
}

// Read spends one anonymous read of the client with key addr.
func (l *Limiters) Read(addr string, now time.Time) (ok bool, wait time.Duration) {
	return l.ReadN(addr, 1, now)
}

// ResultsPerRead is how many results one unit of the read budget buys:
// a read that asks for more spends more (ReadCost), so a client cannot
// turn its budget into five times the work with pageSize 100
// (docs/security.md "Rate limits", docs/threats.md K.96).
const ResultsPerRead = 20

// ReadCost is what a read asking for pageSize results spends of the read
// budget: one unit per ResultsPerRead results, at least one.
func ReadCost(pageSize int) int {
	if pageSize <= ResultsPerRead {
		return 1
	}
	return (pageSize + ResultsPerRead - 1) / ResultsPerRead
}

// ReadN spends n anonymous reads of the client with key addr at once;
// when fewer are left it spends none.
func (l *Limiters) ReadN(addr string, n int, now time.Time) (ok bool, wait time.Duration) {
	if l == nil {
		return true, 0
	}
	return l.read.TakeN(addr, n, now)
}

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
// for anonymous requests that cost an outbound fetch but name no card URL
// (a host-claim verification).
func (l *Limiters) SubmitAddr(addr string, now time.Time) (ok bool, wait time.Duration) {
	if l == nil {
		return true, 0
	}
	return l.submitAddr.Take(addr, now)
}

// Auth is the credential failure guard (see Guard).
func (l *Limiters) Auth() *Guard {
	if l == nil {
		return nil
	}
	return l.auth
}
