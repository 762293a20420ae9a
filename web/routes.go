package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// handlerFunc is a page handler: it renders or redirects, or returns an
// error that fail() turns into an error page.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// routes is the UI's route table (CONTRIBUTING.md). Every action is a POST:
// a GET to an action URL answers 405 and changes nothing (docs/threats.md
// I.77), and http.CrossOriginProtection refuses cross-site POSTs.
func (u *ui) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	r := router{u: u, mux: mux}
	r.handle("/{$}", on{"GET", u.catalogue})
	r.handle("/agents/{id}", on{"GET", u.agentPage})
	r.handle("/agents/{id}/versions/{seq}", on{"GET", u.versionPage})
	r.handle("/tags", on{"GET", u.tagsPage})
	r.handle("/legend", on{"GET", u.legendPage})
	r.handle("/api-reference", on{"GET", u.referencePage})
	r.handle("/publish", on{"GET", u.publishForm}, on{"POST", u.publishSubmit})
	r.handle("/publish/{id}", on{"GET", u.publishStatus})
	r.handle("/claims", on{"POST", u.claimStart})
	r.handle("/claims/{id}", on{"GET", u.claimPage})
	r.handle("/claims/{id}/verify", on{"POST", u.claimVerify})
	r.handle("/admin", on{"GET", u.adminHome})
	r.handle("/admin/login", on{"POST", u.login})
	r.handle("/admin/logout", on{"POST", u.logout})
	r.handle("/auth/oidc/login", on{"GET", u.oidcLogin})
	r.handle("/auth/oidc/callback", on{"GET", u.oidcCallback})
	r.handle("/admin/bulk", on{"POST", u.admin(u.bulkAct)})
	r.handle("/admin/agents/{id}", on{"GET", u.admin(u.review)})
	r.handle("/admin/agents/{id}/act", on{"POST", u.admin(u.act)})
	r.handle("/admin/agents/{id}/keys", on{"POST", u.admin(u.pinKeys)})
	r.handle("/admin/agents/{id}/unpin", on{"POST", u.admin(u.unpinKeys)})
	r.handle("/admin/agents/{id}/crawl", on{"POST", u.admin(u.crawl)})
	r.handle("/admin/agents/{id}/visibility", on{"POST", u.admin(u.setVisibility)})
	r.handle("/admin/agents/{id}/probing", on{"POST", u.admin(u.setProbing)})
	r.handle("/admin/audit", on{"GET", u.admin(u.auditPage)})
	r.handle("/admin/audit/export", on{"GET", u.admin(u.auditExport)})
	r.handle("/admin/tokens", on{"GET", u.admin(u.tokensPage)}, on{"POST", u.admin(u.createToken)})
	r.handle("/admin/tokens/{id}/revoke", on{"POST", u.admin(u.revokeToken)})
	r.handle("/admin/catalogs", on{"GET", u.admin(u.catalogsPage)})
	r.handle("/admin/catalogs/{id}/pause", on{"POST", u.admin(u.catalogChange("pause", u.svc.PauseCatalog))})
	r.handle("/admin/catalogs/{id}/resume", on{"POST", u.admin(u.catalogChange("resume", u.svc.ResumeCatalog))})
	r.handle("/admin/catalogs/{id}/remove", on{"POST", u.admin(u.catalogChange("remove", u.svc.RemoveCatalog))})
	r.handle("/static/{name}", on{"GET", u.assets.serve})
	mux.Handle("/", r.wrap(func(w http.ResponseWriter, r *http.Request) error { return errNotFound }))

	cop := http.NewCrossOriginProtection()
	if o := origin(u.cfg.BaseURL); o != "" {
		// Behind a proxy that rewrites Host, the public origin is still
		// this one (the browser's Sec-Fetch-Site usually settles it first).
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, errors.Join(ErrConfig, err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.fail(w, r, errCrossOrigin)
	}))
	return u.headers(u.session(u.limitReads(cop.Handler(mux)))), nil
}

// origin is scheme://host[:port] of a base URL, "" when there is none.
func origin(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// on pairs a method with its handler.
type on struct {
	method string
	h      handlerFunc
}

type router struct {
	u   *ui
	mux *http.ServeMux
}

// handle registers path for each method/handler pair, plus a fallback that
// answers other methods with the UI's 405 page and an Allow header.
func (rt router) handle(path string, ons ...on) {
	var allow []string
	for _, o := range ons {
		rt.mux.Handle(o.method+" "+path, rt.wrap(o.h))
		allow = append(allow, o.method)
		if o.method == "GET" {
			allow = append(allow, "HEAD")
		}
	}
	slices.Sort(allow)
	rt.mux.Handle(path, rt.wrap(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return errMethod
	}))
}

func (rt router) wrap(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			rt.u.fail(w, r, err)
		}
	})
}

// headers sets the security headers of every response, error pages and
// static files included (docs/threats.md H.76): no inline script or style
// can run, nothing may frame the UI, and forms post only to this origin.
func (u *ui) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// CSP is the Content-Security-Policy of every UI response.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
