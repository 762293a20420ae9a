package agentcard

import (
	"encoding/base64"
	"slices"
	"strings"

	sj "github.com/cardexhq/cardex/strictjson"
)

// SignatureKIDs returns the distinct `kid` values declared in the protected
// headers of the card's signatures, sorted. Decoding is tolerant (padding
// and the standard alphabet are accepted): this is for telling versions
// apart, not for verification, which the verifier does strictly
// (docs/verification.md). Headers that do not decode or carry no string kid are
// skipped; the unprotected header is never read.
func SignatureKIDs(c *Card) []string {
	kids := []string{}
	if c == nil {
		return kids
	}
	for _, s := range c.Signatures {
		if k, ok := protectedKID(s.Protected); ok && !slices.Contains(kids, k) {
			kids = append(kids, k)
		}
	}
	slices.Sort(kids)
	return kids
}

func protectedKID(protected string) (string, bool) {
	p := strings.TrimRight(protected, "=")
	p = strings.NewReplacer("+", "-", "/", "_").Replace(p)
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return "", false
	}
	h, err := sj.Parse(raw)
	if err != nil {
		return "", false
	}
	k := h.Get("kid")
	if k == nil || k.Kind != sj.String {
		return "", false
	}
	return k.String, true
}
