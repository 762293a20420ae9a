package registry

import "strings"

// What a caller sees of a failure (docs/security.md "What failures
// disclose"): the words of a failed fetch, key-set fetch or probe come
// from the network layer and can name internal addresses, resolvers and
// ports ("refusing to connect to reserved address ::ffff:10.20.30.40").
// Admins see them as recorded; everyone else, publishers of the agent's
// host included, sees the error class, the HTTP status and a generic
// sentence for the class.

// genericFailure words each fetch error class without detail.
var genericFailure = map[string]string{
	"dns":                   "the host name could not be resolved",
	"blocked_address":       "the address is not one this registry fetches from",
	"connect":               "the connection could not be made",
	"tls":                   "the TLS handshake failed",
	"timeout":               "the server took too long to answer",
	"too_large":             "the answer was larger than the limit",
	"cross_origin_redirect": "the card URL redirected to another origin",
	"redirect_loop":         "the card URL redirected in a loop",
	"too_many_redirects":    "the card URL redirected too many times",
	"http_status":           "the server answered with an error status",
	"not_json":              "the answer was not JSON",
	"not_a_card":            "the answer was not an agent card",
	"invalid_card":          "the card is not valid; see its problems",
	"not_a_catalog":         "the document is not an AI Catalog",
	"not_listed":            "the catalog that brought the agent no longer lists it",
}

// genericMessage is the sentence non-admins see for a failure of class.
func genericMessage(class string) string {
	if m, ok := genericFailure[class]; ok {
		return m
	}
	if class == "" {
		return "the attempt failed"
	}
	return "the attempt failed (" + class + ")"
}

// genericKeyFailure replaces the reason of a signature whose status is
// error: the reason carries the key-set fetch's error text.
const genericKeyFailure = "a trusted key source could not be fetched or holds no key with this kid"

// redactAgent keeps only what p may see of a's failures, and of its
// groups: which groups an agent is for is the admins' to know (a member of
// one group learns no other group's name from it; docs/security.md).
func redactAgent(p Principal, a *Agent) {
	if p.isAdmin() {
		return
	}
	a.Groups = nil
	if a.LastError != nil {
		e := *a.LastError
		e.Message = genericMessage(e.Class)
		a.LastError = &e
	}
	a.Signatures = redactSignatures(a.Signatures)
	if l := a.Liveness; l != nil && len(l.Interfaces) > 0 {
		c := *l
		c.Interfaces = make([]InterfaceLiveness, len(l.Interfaces))
		for i, f := range l.Interfaces {
			if f.Message != "" {
				f.Message = genericMessage(f.ErrorClass)
			}
			c.Interfaces[i] = f
		}
		a.Liveness = &c
	}
}

func redactAgents(p Principal, as []Agent) {
	for i := range as {
		redactAgent(p, &as[i])
	}
}

func redactSignatures(ss []SignatureResult) []SignatureResult {
	out := make([]SignatureResult, len(ss))
	for i, s := range ss {
		if strings.EqualFold(s.Status, "error") && s.Reason != "" {
			s.Reason = genericKeyFailure
		}
		out[i] = s
	}
	return out
}

func redactVersion(p Principal, v *Version) {
	if !p.isAdmin() {
		v.Signatures = redactSignatures(v.Signatures)
	}
}

func redactAttempts(p Principal, fs []FetchAttempt) {
	if p.isAdmin() {
		return
	}
	for i := range fs {
		if fs[i].Message != "" {
			fs[i].Message = genericMessage(fs[i].ErrorClass)
		}
	}
}

func redactProbes(p Principal, ps []Probe) {
	if p.isAdmin() {
		return
	}
	for i := range ps {
		if ps[i].Message != "" {
			ps[i].Message = genericMessage(ps[i].ErrorClass)
		}
	}
}
