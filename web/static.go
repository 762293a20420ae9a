package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var staticFS embed.FS

// assets are the static files under content-hashed names
// (app.3f9a0c1d2e.css), so they can be cached forever (CONTRIBUTING.md).
type assets struct {
	byName map[string]string // "app.css" → "app.3f9a0c1d2e.css"
	files  map[string][]byte // hashed name → content
}

func loadAssets() (*assets, error) {
	a := &assets{byName: map[string]string{}, files: map[string][]byte{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, "LICENSE") {
			return nil
		}
		name := strings.TrimPrefix(p, "static/")
		if strings.Contains(name, "/") {
			return fmt.Errorf("web: static files are flat, found %s", p)
		}
		sum := sha256.Sum256(b)
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:5]) + ext
		a.byName[name] = hashed
		a.files[hashed] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	for _, need := range []string{"app.css", "app.js"} {
		if a.byName[need] == "" {
			return nil, fmt.Errorf("web: static file %s is missing", need)
		}
	}
	return a, nil
}

// url is the hashed URL of a static file; templates call it as {{asset "app.css"}}.
func (a *assets) url(name string) (string, error) {
	h, ok := a.byName[name]
	if !ok {
		return "", fmt.Errorf("web: no static file %q", name)
	}
	return "/static/" + h, nil
}

func (a *assets) serve(w http.ResponseWriter, r *http.Request) error {
	b, ok := a.files[r.PathValue("name")]
	if !ok {
		return errNotFound
	}
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(r.PathValue("name"))))
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Write(b)
	return nil
}
