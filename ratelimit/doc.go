// Package ratelimit is the one place that decides who a client is and how
// much it may do: the client address behind trusted proxies, the token
// buckets keyed by it, by a token or by the registrable domain of a
// submitted card URL (cardurl.DomainKey), the failure budget for
// credentials, and the per-key slots that queue host-claim fetches. The API
// and the web UI share one Limiters, so a client cannot trade one face's
// budget for the other's (docs/security.md "Rate limits").
//
// It imports nothing of Cardex but the leaf cardurl, whose one reading of
// hosts it keys domains by.
package ratelimit
