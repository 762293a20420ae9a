// Package ratelimit is the one place that decides who a client is and how
// much it may do: the client address behind trusted proxies, the token
// buckets keyed by it or by a token, the registrable-domain key of a
// submitted card URL, the failure budget for credentials, and the per-key
// slots that queue host-claim fetches. The API and the web UI share one
// Limiters, so a client cannot trade one face's budget for the other's
// (docs/security.md "Rate limits").
//
// It is a leaf: it imports nothing of Cardex.
package ratelimit
