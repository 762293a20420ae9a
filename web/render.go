package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
)

//go:embed templates
var templateFS embed.FS

// pageNames are the page templates; each defines "title" and "content"
// and is executed through "layout".
var pageNames = []string{
	"catalogue", "agent", "agent_version", "legend", "reference", "tags", "publish", "publish_status", "publish_catalog", "publish_claim", "error",
	"admin_login", "signed_in", "admin_queue", "admin_review", "admin_audit", "admin_tokens", "admin_catalogs",
}

type pageSet map[string]*template.Template

// parsePages parses the layout, the shared partials and each page, and
// checks that every page defines what the layout needs (CONTRIBUTING.md: a
// missing template fails at start-up, not on a request).
func parsePages(funcs template.FuncMap) (pageSet, error) {
	ps := pageSet{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/partials/*.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		for _, need := range []string{"layout", "title", "content"} {
			if t.Lookup(need) == nil {
				return nil, fmt.Errorf("web: template %s does not define %q", name, need)
			}
		}
		ps[name] = t
	}
	return ps, nil
}

// view is what every page template receives.
type view struct {
	Title string
	Admin bool // an admin session is active
	// Person is the name of a person signed in with the identity
	// provider (docs/identity.md), "" otherwise.
	Person string
	Demo   bool
	Nav    string // the page's section, for aria-current
	// Reference is whether the API reference page is served (the footer
	// links it).
	Reference bool
	Data      any
}

// render executes page into a buffer first, so a template error never
// leaves half a page behind a 200.
func (u *ui) render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	t := u.pages[page]
	v := view{Title: title, Admin: isAdmin(r), Demo: u.cfg.Demo, Nav: page, Data: data, Reference: u.reference != nil}
	if p := principal(r); p.Subject != "" {
		v.Person = p.Name
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		u.log.ErrorContext(r.Context(), "rendering page failed", "page", page, "err", err)
		if page != "error" {
			u.render(w, r, http.StatusInternalServerError, "error", "Something went wrong",
				errorPage{http.StatusInternalServerError, "Something went wrong", "The error has been logged. Try again later."})
			return
		}
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// seeOther redirects after a successful POST (post/redirect/get).
func seeOther(w http.ResponseWriter, r *http.Request, to string) error {
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}
