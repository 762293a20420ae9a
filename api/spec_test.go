package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/problems"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	// Every problem slug has its page and is listed in the Problem schema.
	enum := doc.Components.Schemas["Problem"].Value.Properties["type"].Value.Enum
	if len(enum) != len(problemTypes) {
		t.Fatalf("Problem.type enum has %d values, the catalogue %d", len(enum), len(problemTypes))
	}
	for slug := range problemTypes {
		if !slices.Contains(enum, any("/problems/"+slug)) {
			t.Errorf("slug %s missing from the Problem schema", slug)
		}
	}
	// The API explains exactly the problem types the shared table knows.
	if len(problems.Slugs()) != len(problemTypes) {
		t.Errorf("the problems table has %d types, the API's catalogue %d", len(problems.Slugs()), len(problemTypes))
	}
	for _, slug := range problems.Slugs() {
		if _, ok := problemTypes[slug]; !ok {
			t.Errorf("problem type %s has no explanation", slug)
		}
	}
}

// The route table and the document describe the same operations, both ways.
func TestRoutesMatchOpenAPI(t *testing.T) {
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Service: registrytest.Service(registrytest.SQLite(t), nil)})
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, r := range h.(*echo.Echo).Routes() {
		if r.Method == echo.RouteNotFound || r.Method == http.MethodHead {
			continue
		}
		path := r.Path
		for _, seg := range strings.Split(path, "/") {
			if strings.HasPrefix(seg, ":") {
				path = strings.Replace(path, seg, "{"+seg[1:]+"}", 1)
			}
		}
		served[r.Method+" "+path] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for op := range served {
		if !documented[op] {
			t.Errorf("served but not documented: %s", op)
		}
	}
	for op := range documented {
		if !served[op] {
			t.Errorf("documented but not served: %s", op)
		}
	}
	if len(served) != 41 {
		t.Errorf("%d operations served, want 41", len(served))
	}
}

func TestNewRequiresService(t *testing.T) {
	if _, err := New(Config{}); err != ErrNoService {
		t.Fatalf("err = %v", err)
	}
}
