package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/cardexhq/cardex/registry"
)

type catalogsView struct {
	Catalogs []registry.Catalog
	Error    string
	Done     string
}

// catalogDone are the confirmations after a change, by ?done=.
var catalogDone = map[string]string{
	"pause":  "Catalog paused: it is not crawled until resumed.",
	"resume": "Catalog resumed: it is crawled again at once.",
	"remove": "Catalog removed: it is never crawled again. The agents it brought stay, with it as their provenance.",
}

// catalogsPage is GET /admin/catalogs: the crawled AI Catalogs with their
// status, health, last error and agents (docs/discovery.md "A catalog's
// lifecycle").
func (u *ui) catalogsPage(w http.ResponseWriter, r *http.Request) error {
	return u.renderCatalogs(w, r, http.StatusOK, catalogsView{Done: catalogDone[r.URL.Query().Get("done")]})
}

func (u *ui) renderCatalogs(w http.ResponseWriter, r *http.Request, status int, v catalogsView) error {
	list, err := u.svc.Catalogs(r.Context(), principal(r))
	if err != nil {
		return err
	}
	v.Catalogs = list
	u.render(w, r, status, "admin_catalogs", "Catalogs", v)
	return nil
}

// catalogChange is POST /admin/catalogs/{id}/pause, /resume and /remove.
func (u *ui) catalogChange(done string, change func(context.Context, registry.Principal, string) (*registry.Catalog, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := postForm(w, r); err != nil {
			return err
		}
		_, err := change(r.Context(), principal(r), r.PathValue("id"))
		if errors.Is(err, registry.ErrInvalidTransition) {
			return u.renderCatalogs(w, r, http.StatusConflict, catalogsView{Error: "A removed catalog cannot be paused or resumed."})
		}
		if err != nil {
			return err
		}
		return seeOther(w, r, "/admin/catalogs?done="+done)
	}
}
