package main

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// The intended import direction of CONTRIBUTING.md, checked on the
// module's production code (test files may import anything): cmd → api,
// web, crawler, search → registry → agentcard; crawler → verifier →
// agentcard; crawler and prober → fetch, the hardened client, which sits on
// the leaves only, and → leasework, the lease-worker loop; web and api never
// import each other; leaves stay leaves.
// The cardex binary never links the testing package, net/http/httptest or
// a Cardex package whose path ends in "test".
func TestImportDirection(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const mod = "github.com/cardexhq/cardex/"
	out, err := exec.CommandContext(ctx, "go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	// forbidden[p] are the module packages p must not import; "*" is every
	// module package but the ones allowed[p] names.
	forbidden := map[string][]string{
		"api":        {"web"},
		"web":        {"api"},
		"registry":   {"api", "web", "crawler", "fetch", "search", "verifier", "agentfleet", "ratelimit"},
		"search":     {"api", "web", "crawler", "fetch", "verifier", "agentfleet"},
		"crawler":    {"api", "web", "search", "agentfleet"},
		"prober":     {"api", "web", "crawler", "search", "verifier", "agentfleet"},
		"fetch":      {"*"},
		"verifier":   {"api", "web", "crawler", "fetch", "search", "registry", "agentfleet"},
		"agentcard":  {"*"},
		"strictjson": {"*"},
		"ratelimit":  {"*"},
		"cardurl":    {"*"},
		"problems":   {"api", "web", "crawler", "verifier", "agentfleet"},
		// The discovery surfaces are faces like api and web: they share
		// only what sits below them (discover, search, registry).
		"a2a":       {"api", "web", "mcpserver", "catalog", "crawler", "agentfleet"},
		"mcpserver": {"api", "web", "a2a", "catalog", "crawler", "agentfleet"},
		"catalog":   {"api", "web", "a2a", "mcpserver", "crawler", "agentfleet"},
		"discover":  {"api", "web", "a2a", "mcpserver", "catalog", "crawler", "agentfleet"},
		"aicatalog": {"*"},
		// The lease-worker loop of the crawler and the prober knows
		// nothing of what it runs.
		"leasework": {"*"},
		// The gate between interactive and background work is a leaf
		// too: the indexer, the crawler and the prober are handed its
		// methods by serve.
		"pace": {"*"},
		// The tests' polling helper is a leaf.
		"internal/polltest": {"*"},
		// The demo drives the registry's use cases like any client; the
		// faces, the index and the prober are serve's to wire.
		"demo": {"api", "web", "search", "prober", "a2a", "mcpserver", "catalog", "discover", "ratelimit"},
		// The identity provider sits below the faces, beside registry.
		"identity": {"api", "web", "a2a", "mcpserver", "catalog", "discover", "crawler", "search", "verifier", "problems", "agentfleet"},
	}
	allowed := map[string][]string{
		"agentcard": {"strictjson"},
		"aicatalog": {"strictjson"},
		"fetch":     {"cardurl", "ratelimit", "buildinfo"},
		"ratelimit": {"cardurl"},
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], mod)
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			dep := strings.TrimPrefix(imp, mod)
			// Test helper packages (prober/probertest) may wrap the fleet,
			// and the demo serves it.
			if dep == "agentfleet" && pkg != "demo" && !strings.HasPrefix(pkg, "cmd/") && !strings.HasPrefix(pkg, "agentfleet/") && !strings.HasSuffix(pkg, "test") {
				t.Errorf("%s imports the fake agent fleet", pkg)
			}
			for _, f := range forbidden[pkg] {
				if (f == "*" && !slices.Contains(allowed[pkg], dep)) || dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
	deps, err := exec.CommandContext(ctx, "go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, deps)
	}
	// Test helpers stay out of the binary too: net/http/httptest, and every
	// Cardex package named for tests (prober/probertest, …); what the demo
	// needs of them lives in agentfleet. The demo is part of the binary,
	// so this covers it and every package it links.
	linked := map[string]bool{}
	for line := range strings.Lines(string(deps)) {
		dep := strings.TrimSpace(line)
		linked[dep] = true
		switch {
		case dep == "testing", strings.HasPrefix(dep, "testing/"), dep == "net/http/httptest":
			t.Errorf("the cardex binary links %s", dep)
		case strings.HasPrefix(dep, mod) && strings.HasSuffix(dep, "test"):
			t.Errorf("the cardex binary links the test package %s", dep)
		}
	}
	for _, p := range []string{"demo", "agentfleet"} {
		if !linked[mod+p] {
			t.Errorf("the cardex binary does not link %s: this check no longer covers it", p)
		}
	}
}
