package web

import (
	"net/http"
	"net/url"

	"github.com/cardexhq/cardex/registry"
)

type tagView struct {
	Value string
	Count int
	URL   string
}

// tagsPage is GET /tags: every tag the visitor may list, with counts, each
// linking to the catalogue filtered by it.
func (u *ui) tagsPage(w http.ResponseWriter, r *http.Request) error {
	prefix := r.URL.Query().Get("prefix")
	tags, err := u.idx.Tags(r.Context(), prefix, registry.ScopeOf(principal(r)), 1000)
	if err != nil {
		return err
	}
	out := make([]tagView, len(tags))
	for i, t := range tags {
		out[i] = tagView{Value: t.Value, Count: t.Count, URL: "/?" + url.Values{"tag": {t.Value}}.Encode()}
	}
	u.render(w, r, http.StatusOK, "tags", "Tags", struct {
		Prefix string
		Tags   []tagView
	}{prefix, out})
	return nil
}
