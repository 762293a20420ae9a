package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// handlerFunc is a page handler: it renders or redirects, or returns an
// error that fail() turns into an error page.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// routes is the UI's route table (CONTRIBUTING.md), on the router the API
// uses too (echo). Every action is a POST:
// a GET to an action URL answers 405 and changes nothing (docs/threats.md
// I.77), and http.CrossOriginProtection refuses cross-site POSTs.
func (u *ui) routes() (http.Handler, error) {
	e := echo.New()
	r := router{u: u, e: e, allow: map[string]string{}}
	e.HTTPErrorHandler = r.routerError
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
	return u.accessLog(u.headers(u.session(u.limitReads(cop.Handler(e))))), nil
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
	u *ui
	e *echo.Echo
	// allow is each route's Allow header, by echo path.
	allow map[string]string
}

// handle registers path (net/http pattern syntax: {name} segments, /{$}
// for the root alone) for each method/handler pair, GET with HEAD, plus a
// fallback that answers every other method with the UI's 405 page and an
// Allow header.
func (rt router) handle(path string, ons ...on) {
	p := echoPath(path)
	var allow []string
	for _, o := range ons {
		allow = append(allow, o.method)
		if o.method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	slices.Sort(allow)
	rt.allow[p] = strings.Join(allow, ", ")
	// Any first: the methods registered after it replace its handler.
	rt.e.Any(p, rt.wrap(path, func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", rt.allow[p])
		return errMethod
	}))
	for _, o := range ons {
		methods := []string{o.method}
		if o.method == http.MethodGet {
			methods = append(methods, http.MethodHead)
		}
		rt.e.Match(methods, p, rt.wrap(path, o.h))
	}
}

// echoPath is a net/http pattern's path in echo's syntax.
func echoPath(path string) string {
	if path == "/{$}" {
		return "/"
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// wrap runs h as an echo handler: the route's parameters become the
// request's path values (r.PathValue, unescaped as net/http does) and the
// route names the request in the access log.
func (rt router) wrap(route string, h handlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		for _, n := range c.ParamNames() {
			v := c.Param(n)
			if uv, err := url.PathUnescape(v); err == nil {
				v = uv
			}
			r.SetPathValue(n, v)
		}
		if l, ok := r.Context().Value(routeKey{}).(*string); ok {
			*l = route
		}
		if err := h(c.Response(), r); err != nil {
			rt.u.fail(c.Response(), r, err)
		}
		return nil
	}
}

// routerError answers what the router itself refuses: a path no route
// has (404) and a method echo does not register for a route's path (405).
func (rt router) routerError(err error, c echo.Context) {
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he) && he.Code == http.StatusMethodNotAllowed:
		c.Response().Header().Set("Allow", rt.allow[c.Path()])
		rt.u.fail(c.Response(), c.Request(), errMethod)
	case errors.As(err, &he) && he.Code == http.StatusNotFound:
		rt.u.fail(c.Response(), c.Request(), errNotFound)
	default:
		rt.u.fail(c.Response(), c.Request(), err)
	}
}

// routeKey carries a *string the router sets to the matched route.
type routeKey struct{}

// notFoundRoute is the route label of a request no route matched: one
// label keeps a scanner probing random paths from growing the metric
// series.
const notFoundRoute = "web:unmatched"

// accessLog logs and observes each UI request after it is answered (the
// API logs its own with its route templates): the method, the matched
// route, the path without its query string (search terms and tokens in a
// query are not the log's business), the status and the time taken.
func (u *ui) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		route := notFoundRoute
		r = r.WithContext(context.WithValue(r.Context(), routeKey{}, &route))
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		d := time.Since(start)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		if u.cfg.Observe != nil {
			u.cfg.Observe(route, status, d)
		}
		u.log.LogAttrs(r.Context(), slog.LevelInfo, "http request", slog.String("method", r.Method), slog.String("route", route),
			slog.String("path", r.URL.Path), slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000))
	})
}

// statusRecorder remembers the status a handler sent.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flush,
// deadlines) through the recorder.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

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
