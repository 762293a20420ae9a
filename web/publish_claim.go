package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/cardexhq/cardex/registry"
)

// claimView is the claim page: the URL to serve and the token, a verify
// button, and after a successful verification the publisher token, once.
type claimView struct {
	Claim          *registry.HostClaim
	Expired        bool
	Error          string // why the last verification failed
	ErrorClass     string
	PublisherToken string // shown once, right after verification
	TokenID        string
}

// claimStart is POST /claims {host}: issue a host claim
// (docs/claims.md) and show its page. Anonymous callers spend what the
// API's claims spend (allowClaim), and the registry caps their unverified
// claims per host.
func (u *ui) claimStart(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errBadRequest
	}
	host := strings.TrimSpace(r.PostForm.Get("host"))
	requester, err := u.allowClaim(r)
	if err != nil {
		return err
	}
	c, err := u.svc.CreateHostClaim(r.Context(), registry.ClaimRequest{Host: host, Scheme: r.PostForm.Get("scheme"), Requester: requester})
	var ve *registry.ValidationError
	var ue *registry.URLError
	switch {
	case errors.As(err, &ve) && len(ve.Errors) > 0:
		u.render(w, r, http.StatusBadRequest, "publish", "Publish an agent", publishView{ClaimHost: host, ClaimError: ve.Errors[0].Message, Schemes: u.svc.ClaimSchemes()})
		return nil
	case errors.As(err, &ue):
		u.render(w, r, http.StatusBadRequest, "publish", "Publish an agent", publishView{ClaimHost: host, ClaimError: ue.Reason, Schemes: u.svc.ClaimSchemes()})
		return nil
	case err != nil:
		return err
	}
	return seeOther(w, r, "/claims/"+c.ID)
}

// claimPage is GET /claims/{id}: whoever holds the id sees the
// claim. The id verifies the claim, so the page is never cached.
func (u *ui) claimPage(w http.ResponseWriter, r *http.Request) error {
	c, err := u.hostClaim(r)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	u.render(w, r, http.StatusOK, "publish_claim", "Claim "+c.Host, claimView{Claim: c, Expired: !u.cfg.Now().Before(c.ExpiresAt)})
	return nil
}

// claimVerify is POST /claims/{id}/verify: Cardex fetches the claim
// URL through its crawler; on success the page shows the publisher token,
// this once.
func (u *ui) claimVerify(w http.ResponseWriter, r *http.Request) error {
	if _, err := u.allowClaim(r); err != nil {
		return err
	}
	c, err := u.hostClaim(r)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	ct, err := u.svc.VerifyHostClaim(r.Context(), c.ID)
	var ce *registry.ClaimError
	switch {
	case errors.As(err, &ce):
		v := claimView{Claim: c, Expired: ce.Reason == registry.ClaimExpired, Error: claimReasons[ce.Reason], ErrorClass: ce.ErrorClass}
		u.render(w, r, http.StatusConflict, "publish_claim", "Claim "+c.Host, v)
		return nil
	case err != nil:
		return err
	}
	verified := ct.Token.CreatedAt
	c.VerifiedAt = &verified
	u.render(w, r, http.StatusOK, "publish_claim", "Claim "+c.Host, claimView{Claim: c, PublisherToken: ct.PublisherToken, TokenID: ct.Token.ID})
	return nil
}

// allowClaim spends what a claim or a verification costs an anonymous
// visitor: the per-address budget only, never the per-domain one others
// could exhaust against the host's owner (docs/claims.md "Who can stop a
// claim"). Signed-in admins are not limited; a publisher the identity
// provider signed in spends its own budget, as a publisher token does on
// the API. It returns the requester.
func (u *ui) allowClaim(r *http.Request) (string, error) {
	switch p := principal(r); p.Role {
	case registry.RoleAdmin:
		return "", nil
	case registry.RolePublisher:
		if refused := u.limits.SubmitToken(p.TokenID, 1, u.cfg.Now()); refused != nil {
			return "", rateLimited{refused.Wait}
		}
		return registry.RequesterToken(p.TokenID), nil
	}
	key := u.clientKey(r)
	if ok, wait := u.limits.SubmitAddr(key, u.cfg.Now()); !ok {
		return "", rateLimited{wait}
	}
	return key, nil
}

// hostClaim reads the claim named in the path; an unknown one is a claim
// the visitor should ask for again, not a missing agent.
func (u *ui) hostClaim(r *http.Request) (*registry.HostClaim, error) {
	c, err := u.svc.HostClaim(r.Context(), r.PathValue("id"))
	if errors.Is(err, registry.ErrNotFound) {
		return nil, errNoClaim
	}
	return c, err
}

// claimReasons say what a failed verification means in plain words.
var claimReasons = map[string]string{
	registry.ClaimExpired:      "This claim has expired. Ask for a new one.",
	registry.ClaimReplayed:     "This claim was verified already; its publisher token was shown then. Ask for a new claim if you lost it.",
	registry.ClaimWrongContent: "The claim URL answered, but not with the token. Serve the token alone, as plain text.",
	registry.ClaimFetchFailed:  "Cardex could not fetch the claim URL.",
}
