package search

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// productionImports maps each non-test Go file under search/ (this package
// and the ones below it) to its imports.
func productionImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "corpus") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[path] = append(out[path], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The index's lock is asked of the lock file itself (boltHeld), not of
// Bolt's error values: nothing under search/ imports Bolt.
func TestNoBoltImport(t *testing.T) {
	for file, imps := range productionImports(t) {
		for _, p := range imps {
			if strings.HasPrefix(p, "go.etcd.io/bbolt") {
				t.Errorf("%s imports %s", file, p)
			}
		}
	}
}

// Bleve's internals: the scorch index and its merge plans, the segment
// and index APIs below bleve.Index, the zap segment formats.
var bleveInternals = []string{
	"github.com/blevesearch/bleve/v2/index/",
	"github.com/blevesearch/bleve_index_api",
	"github.com/blevesearch/scorch_segment_api",
	"github.com/blevesearch/zapx/",
	"github.com/blevesearch/upsidedown_store_api",
}

// search/zapread is the one importer of Bleve's internals (the fence of
// docs/design.md "Search"); the rest of search uses Bleve's public API and
// the zapread seam.
func TestOnlyZapreadImportsBleveInternals(t *testing.T) {
	fenced := 0
	for file, imps := range productionImports(t) {
		inFence := filepath.Dir(file) == "zapread"
		for _, p := range imps {
			internal := false
			for _, prefix := range bleveInternals {
				internal = internal || strings.HasPrefix(p, prefix)
			}
			switch {
			case internal && !inFence:
				t.Errorf("%s imports Bleve's internal %s: go through search/zapread", file, p)
			case internal:
				fenced++
			}
		}
	}
	if fenced == 0 {
		t.Fatal("search/zapread imports none of Bleve's internals: is the list of internals still right?")
	}
}
