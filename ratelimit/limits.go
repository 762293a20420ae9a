package ratelimit

import (
	"time"

	"github.com/cardexhq/cardex/cardurl"
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
// host (cardurl.DomainKey), so one client cannot register thousands of subdomains
// of a victim and many clients cannot do it together either. It returns
// nil when the submission may go ahead.
func (l *Limiters) Submit(addr, cardURL string, now time.Time) *Refusal {
	if l == nil {
		return nil
	}
	if ok, wait := l.submitAddr.Take(addr, now); !ok {
		return &Refusal{wait, "too many submissions from this address"}
	}
	if ok, wait := l.submitDomain.Take(cardurl.DomainKey(cardURL), now); !ok {
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

// AgentBudget is what registering the agents of one catalog spends: one
// unit per agent of the submitter's bucket (the per-address one, keyed by
// who) and of the registrable domain's, the buckets a card URL submission
// spends (docs/security.md "Rate limits", docs/threats.md K.97). A nil
// *AgentBudget allows everything.
type AgentBudget struct {
	l       *Limiters
	who     string   // "" when no one submitted (a scheduled crawl): the domain's bucket only
	whoL    *Limiter // the submitter's table: per address, or a publisher token's own
	domain  string
	prepaid int
}

// Agents is the budget of the agents a catalog at catalogURL registers on
// behalf of who: a client address, a token's key, or "" for a crawl no one
// asked for. Callers exempt admin tokens by not spending at all.
func (l *Limiters) Agents(who, catalogURL string) *AgentBudget {
	if l == nil {
		return nil
	}
	return &AgentBudget{l: l, who: who, whoL: l.submitAddr, domain: cardurl.DomainKey(catalogURL)}
}

// TokenAgents is Agents for a catalog a publisher token submitted: the
// agents spend the token's own budget (SubmitToken's), not an address's,
// and the registrable domain's as always.
func (l *Limiters) TokenAgents(tokenID, catalogURL string) *AgentBudget {
	if l == nil {
		return nil
	}
	return &AgentBudget{l: l, who: TokenKey(tokenID), whoL: l.submitToken, domain: cardurl.DomainKey(catalogURL)}
}

// Admit spends one unit of both buckets before a new catalog is fetched
// (the fetch costs what a card URL submission costs); it counts as the
// first agent's. It returns nil when the submission may go ahead.
func (b *AgentBudget) Admit(now time.Time) *Refusal {
	if b == nil {
		return nil
	}
	n, r := b.take(1, now)
	if n == 0 {
		return r
	}
	b.prepaid = 1
	return nil
}

// Spend takes up to n units of both buckets, one per agent about to be
// registered (a unit Admit took pays for the first), and returns how many
// agents may be registered and, when fewer than n, why.
func (b *AgentBudget) Spend(n int, now time.Time) (int, *Refusal) {
	if b == nil || n <= 0 {
		return max(n, 0), nil
	}
	free := min(n, b.prepaid)
	b.prepaid -= free
	if free == n {
		return n, nil
	}
	got, r := b.take(n-free, now)
	return free + got, r
}

// take spends up to n units of the submitter's and the domain's buckets
// alike, holding both tables so that no concurrent request spends between
// reading and taking.
func (b *AgentBudget) take(n int, now time.Time) (int, *Refusal) {
	var addr *Limiter
	if b.who != "" {
		addr = b.whoL
	}
	dom := b.l.submitDomain
	for _, l := range []*Limiter{addr, dom} {
		if l != nil {
			l.mu.Lock()
			defer l.mu.Unlock()
		}
	}
	got := n
	var refusal *Refusal
	if a, wait := addr.available(b.who, now); a < got {
		msg := "too many submissions from this address"
		if addr == b.l.submitToken {
			msg = "too many requests with this token"
		}
		got, refusal = a, &Refusal{wait, msg}
	}
	if a, wait := dom.available(b.domain, now); a < got {
		got, refusal = a, &Refusal{wait, "too many submissions for this domain"}
	}
	if got > 0 {
		addr.spend(b.who, got, now)
		dom.spend(b.domain, got, now)
	}
	return got, refusal
}
