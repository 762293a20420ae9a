package api

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
)

// GET /api/v1/agents and /skills read every filter of the one filter
// table (search.FilterTable) and openapi.yaml documents each; a value
// outside an enumeration names its parameter.
func TestSearchFiltersFollowTheFilterTable(t *testing.T) {
	h := newSearchHarness(t, registrytest.SQLite(t))
	admin := h.token(registry.RoleAdmin)
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/agents", "/api/v1/skills"} {
		var documented []string
		for _, p := range doc.Paths.Find(path).Get.Parameters {
			documented = append(documented, p.Value.Name)
		}
		for _, f := range search.FilterTable() {
			if !slices.Contains(documented, f.Name) {
				t.Errorf("GET %s: openapi.yaml lacks the %s filter", path, f.Name)
			}
			v := "x"
			if f.Values != nil {
				v = f.Values[0]
			}
			h.do(req{method: "GET", path: path + "?" + url.Values{f.Name: {v}}.Encode(), token: admin}).expectStatus(t, http.StatusOK)
			if f.Values != nil {
				pr := h.do(req{method: "GET", path: path + "?" + f.Name + "=no-such-value", token: admin}).expectProblem(t, http.StatusBadRequest, "validation-failed")
				if len(pr.Errors) != 1 || pr.Errors[0].Pointer != "/"+f.Name || pr.Errors[0].Code != "enum" {
					t.Errorf("GET %s?%s=no-such-value: errors %+v", path, f.Name, pr.Errors)
				}
			}
		}
	}
}
