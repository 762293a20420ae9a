// Package verifier checks the JWS signatures of A2A Agent Cards (A2A §8.4)
// under a trust policy Cardex chooses, and signs cards.
//
// The payload of a card signature is a canonical form of the card that the
// specification leaves under-determined and that every SDK computes
// differently (docs/verification.md). The verifier rebuilds that form from the
// strict parse of the received bytes under each known profile and records
// which one verified. Keys come only from sources bound to the agent: keys an
// admin pinned, a `jku` on the agent's origin, or the origin's
// /.well-known/jwks.json (docs/security.md "Network policy"). A key the card carries itself is
// never a trust root.
package verifier

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/cardexhq/cardex/strictjson"
)

// Config configures a Verifier. The zero value of every field but Fetcher has
// a sensible default.
type Config struct {
	// Fetcher fetches jku and well-known key sets. Nil means only pinned
	// keys can be used.
	Fetcher KeySetFetcher
	// Now is the clock of the key set cache; default time.Now.
	Now func() time.Time
	// CacheTTL is how long a fetched key set is used (default 10 min);
	// FailureTTL how long a failed fetch is remembered (default 1 min).
	CacheTTL, FailureTTL time.Duration
	// MaxSignatures is how many signatures of one card are examined
	// (default 8, docs/threats.md D.51).
	MaxSignatures int
	// MaxKeySetURLs is how many distinct key set URLs one card verification
	// may use (default 2, D.51).
	MaxKeySetURLs int
	// MaxCachedKeySets bounds the cache (default 4096 URLs).
	MaxCachedKeySets int
	Logger           *slog.Logger
}

// Verifier verifies cards. It is safe for concurrent use.
type Verifier struct {
	cache   *keySetCache
	pinned  pinnedSets
	maxSigs int
	maxURLs int
	log     *slog.Logger
}

// New returns a Verifier.
func New(cfg Config) *Verifier {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = 10 * time.Minute
	}
	if cfg.FailureTTL <= 0 {
		cfg.FailureTTL = time.Minute
	}
	if cfg.MaxSignatures <= 0 {
		cfg.MaxSignatures = 8
	}
	if cfg.MaxKeySetURLs <= 0 {
		cfg.MaxKeySetURLs = 2
	}
	if cfg.MaxCachedKeySets <= 0 {
		cfg.MaxCachedKeySets = 4096
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	v := &Verifier{maxSigs: cfg.MaxSignatures, maxURLs: cfg.MaxKeySetURLs, log: cfg.Logger}
	if cfg.Fetcher != nil {
		v.cache = &keySetCache{
			fetcher: cfg.Fetcher, now: cfg.Now, ttl: cfg.CacheTTL, failureTTL: cfg.FailureTTL,
			maxEntries: cfg.MaxCachedKeySets, entries: make(map[string]*cacheEntry),
		}
	}
	return v
}

// VerifyOptions are the per-agent inputs of a verification.
type VerifyOptions struct {
	// Origin is the agent's origin (or its card URL, of which only scheme,
	// host and port count), as the caller's network policy accepted it
	// (docs/security.md "Network policy"). Empty: no jku or well-known key set is used.
	Origin string
	// Pinned is a JWKS an admin pinned for the agent (or `--jwks`).
	Pinned []byte
}

// Verify checks every signature of card, the strict tree of the received
// bytes (never a re-marshalled struct). It never panics on hostile input and
// never returns an error: every failure is a status with a reason.
func (v *Verifier) Verify(ctx context.Context, card *strictjson.Value, opts VerifyOptions) Verdict {
	verdict := Verdict{Status: StatusUnsigned, Signatures: []SignatureResult{}, Thumbprints: []string{}}
	if card == nil || card.Kind != strictjson.Object {
		verdict.Status = StatusInvalid
		verdict.Signatures = append(verdict.Signatures, SignatureResult{KeySource: SourceNone, Status: StatusInvalid, Reason: "card is not a JSON object"})
		return verdict
	}
	sigs := card.Get("signatures")
	if sigs == nil || (sigs.Kind == strictjson.Array && len(sigs.Array) == 0) {
		return verdict
	}
	if sigs.Kind != strictjson.Array {
		verdict.Status = StatusInvalid
		verdict.Signatures = append(verdict.Signatures, SignatureResult{KeySource: SourceNone, Status: StatusInvalid,
			Reason: "signatures is a JSON " + sigs.Kind.String() + ", not an array"})
		return verdict
	}
	run := v.newRun(card, opts)
	best := -1
	for i, s := range sigs.Array {
		var r SignatureResult
		if i >= v.maxSigs {
			r = SignatureResult{Index: i, KeySource: SourceNone, Status: StatusInvalid,
				Reason: "not examined: only the first " + strconv.Itoa(v.maxSigs) + " signatures are examined (docs/threats.md D.51)"}
		} else {
			r = run.examine(ctx, i, s)
		}
		verdict.Signatures = append(verdict.Signatures, r)
		if r.Status == StatusVerified {
			if verdict.Profile == "" || breadth(r.Profile) > breadth(verdict.Profile) {
				verdict.Profile, verdict.Uncovered, verdict.LegacyDisagrees = r.Profile, r.Unsigned, r.disagreeing
			}
			if r.Thumbprint != "" && !contains(verdict.Thumbprints, r.Thumbprint) {
				verdict.Thumbprints = append(verdict.Thumbprints, r.Thumbprint)
			}
		}
		if rank(r.Status) > best {
			best = rank(r.Status)
			verdict.Status = r.Status
		}
	}
	return verdict
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
