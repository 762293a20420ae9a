package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/registry"
)

type publishView struct {
	CardURL  string
	Error    string
	Existing string // id of the agent already registered under this URL
	// The catalog form (publishCatalog).
	CatalogURL   string
	CatalogError string
	// The host-claim form (publish_claim.go).
	ClaimHost  string
	ClaimError string
	Schemes    []string // the schemes a claim may be served over
}

const maxFormBytes = 64 << 10

// publishForm is GET /publish.
func (u *ui) publishForm(w http.ResponseWriter, r *http.Request) error {
	u.render(w, r, http.StatusOK, "publish", "Publish an agent", publishView{Schemes: u.svc.ClaimSchemes()})
	return nil
}

// publishSubmit is POST /publish: anyone may submit a card URL; Cardex
// fetches the card from that URL's host, never takes content from the form
// (docs/design.md principle 1). Anonymous submissions are rate-limited per
// client address like the API's (docs/api.md).
func (u *ui) publishSubmit(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errBadRequest
	}
	p := principal(r)
	in := strings.TrimSpace(r.PostForm.Get("cardUrl"))
	if cat := strings.TrimSpace(r.PostForm.Get("catalogUrl")); cat != "" || aicatalog.NamesCatalog(in) {
		if cat == "" {
			cat = in
		}
		return u.publishCatalog(w, r, cat)
	}
	if err := u.allowSubmission(r, in); err != nil {
		return err
	}
	a, err := u.svc.Submit(r.Context(), p, in, "")
	if err == nil {
		u.kick()
		return seeOther(w, r, "/publish/"+a.ID)
	}
	v := publishView{CardURL: in, Schemes: u.svc.ClaimSchemes()}
	status := http.StatusBadRequest
	var dup *registry.DuplicateError
	var ue *registry.URLError
	var ve *registry.ValidationError
	switch {
	case errors.As(err, &dup):
		status, v.Existing = http.StatusConflict, dup.AgentID
		v.Error = "This card URL is already registered."
	case errors.Is(err, registry.ErrAgentRemoved):
		status = http.StatusConflict
		v.Error = "This agent was removed from the catalogue by an admin and cannot be submitted again."
	case errors.As(err, &ue):
		v.Error = "This is not a card URL Cardex can fetch: " + ue.Reason
	case errors.As(err, &ve):
		v.Error = "The card URL is not valid."
	default:
		return err
	}
	u.render(w, r, status, "publish", "Publish an agent", v)
	return nil
}

// publishCatalog registers an AI Catalog and crawls it at once (the API's
// catalogUrl, docs/discovery.md): the page lists the agents it registered,
// each with its status page, and what Cardex made of every entry.
func (u *ui) publishCatalog(w http.ResponseWriter, r *http.Request, in string) error {
	sub, err := u.svc.SubmitCatalog(r.Context(), principal(r), in, u.catalogBudget(r, in))
	if err == nil {
		if len(sub.Agents) > 0 {
			u.kick()
		}
		var entries []catalogEntryView
		_ = json.Unmarshal(sub.Entries, &entries)
		u.render(w, r, http.StatusOK, "publish_catalog", "Catalog submitted", struct {
			Sub     *registry.CatalogSubmission
			Entries []catalogEntryView
		}{sub, entries})
		return nil
	}
	v := publishView{CatalogURL: in, Schemes: u.svc.ClaimSchemes()}
	status := http.StatusBadRequest
	var ce *registry.CatalogError
	var ue *registry.URLError
	switch {
	case errors.As(err, &ce) && ce.Reason == registry.CatalogNotACatalog:
		status = http.StatusUnprocessableEntity
		v.CatalogError = "This is not an AI Catalog: " + ce.Detail
	case errors.As(err, &ce):
		status = http.StatusUnprocessableEntity
		v.CatalogError = "The catalog could not be fetched (" + ce.ErrorClass + "): " + ce.Detail
	case errors.As(err, &ue):
		v.CatalogError = "This is not a catalog URL Cardex can fetch: " + ue.Reason
	default:
		return err
	}
	u.render(w, r, status, "publish", "Publish an agent", v)
	return nil
}

// catalogEntryView is one entry of a catalog crawl's trace, as the
// submission page shows it.
type catalogEntryView struct {
	Catalog    string `json:"catalog"`
	Index      int    `json:"index"`
	Identifier string `json:"identifier"`
	URL        string `json:"url"`
	Outcome    string `json:"outcome"`
	Message    string `json:"message"`
	Agent      string `json:"agent"`
}

// allowSubmission spends a submission budget as the API does
// (docs/security.md "Budgets per token kind"): none for an admin, a
// publisher's own for a publisher the identity provider signed in, and for
// anyone else (anonymous, or a reader signed in) per client address, then
// per registrable domain of the URL's host. Host claims spend the same
// budget.
func (u *ui) allowSubmission(r *http.Request, rawURL string) error {
	switch p := principal(r); p.Role {
	case registry.RoleAdmin:
		return nil
	case registry.RolePublisher:
		if refused := u.limits.SubmitToken(p.TokenID, 1, u.cfg.Now()); refused != nil {
			return rateLimited{refused.Wait}
		}
		return nil
	}
	if refused := u.limits.Submit(u.clientKey(r), rawURL, u.cfg.Now()); refused != nil {
		return rateLimited{refused.Wait}
	}
	return nil
}

// catalogBudget is the API's budget of a catalog submission (api
// catalogBudget, docs/threats.md K.97): nothing for a signed-in admin, one
// unit per agent registered of the client's and the catalog's domain's
// buckets for anyone else.
func (u *ui) catalogBudget(r *http.Request, catalogURL string) registry.CatalogBudget {
	if principal(r).Role == registry.RoleAdmin {
		return registry.CatalogBudget{}
	}
	b := u.limits.Agents(u.clientKey(r), catalogURL)
	if p := principal(r); p.Role == registry.RolePublisher {
		b = u.limits.TokenAgents(p.TokenID, catalogURL)
	}
	return registry.CatalogBudget{
		Admit: func() error {
			if refused := b.Admit(u.cfg.Now()); refused != nil {
				return rateLimited{refused.Wait}
			}
			return nil
		},
		Spend: func(n int) (int, string) {
			got, refused := b.Spend(n, u.cfg.Now())
			if refused != nil {
				return got, refused.Detail
			}
			return got, ""
		},
	}
}

// publishStatus is GET /publish/{id}: what happened to a submission. The
// page refreshes itself (progressive enhancement, see app.js) until the
// first fetch is recorded.
func (u *ui) publishStatus(w http.ResponseWriter, r *http.Request) error {
	a, err := u.svc.Get(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	u.render(w, r, http.StatusOK, "publish_status", "Submission status", struct {
		A       *registry.Agent
		Waiting bool
	}{a, a.LastFetchedAt == nil})
	return nil
}
