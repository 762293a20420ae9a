package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// `cardex catalog` lists the catalogs of an existing store and pauses,
// resumes and removes them, audited as "cli"; a missing database, an
// unknown id and a removed catalog's resume are refused with their exit
// codes.
func TestCatalogCommands(t *testing.T) {
	dir := migratedDir(t)
	func() {
		s, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		svc := registry.NewService(s, registry.ServiceConfig{})
		if _, err := svc.Submit(t.Context(), registry.Anonymous, "acme.example.com", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.RecordCatalog(t.Context(), registry.CatalogCrawl{URL: "https://acme.example.com/.well-known/ai-catalog.json",
			Error: "catalog answered 404", ErrorClass: "http_status", HTTPStatus: 404, NextCrawlAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}()
	code, out, errs := runCLI(t, "", "catalog", "list", "--json", "--data", dir)
	var list []registry.Catalog
	if code != exitOK || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
		t.Fatalf("list --json: %d %q %q", code, out, errs)
	}
	id := list[0].ID
	code, out, _ = runCLI(t, "", "catalog", "list", "--data", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ID STATUS HEALTH AGENTS LAST CRAWL URL LAST ERROR" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), id+" active failing 0 ") ||
		!strings.HasSuffix(lines[1], "https://acme.example.com/.well-known/ai-catalog.json  catalog answered 404") {
		t.Fatalf("list: %d %q", code, out)
	}
	want := func(args []string, wantCode int, wantOut, wantErr string) {
		t.Helper()
		code, out, errs := runCLI(t, "", append(append([]string{"catalog"}, args...), "--data", dir)...)
		if code != wantCode || out != wantOut || !strings.Contains(errs, wantErr) {
			t.Errorf("%v: code %d stdout %q stderr %q", args, code, out, errs)
		}
	}
	cat := "https://acme.example.com/.well-known/ai-catalog.json"
	want([]string{"pause", id}, exitOK, fmt.Sprintf("paused %s (%s, status paused)\n", id, cat), "")
	want([]string{"pause", id}, exitOK, fmt.Sprintf("paused %s (%s, status paused)\n", id, cat), "")
	want([]string{"resume", id}, exitOK, fmt.Sprintf("resumed %s (%s, status active)\n", id, cat), "")
	want([]string{"remove", id}, exitOK, fmt.Sprintf("removed %s (%s, status removed)\nthe 0 agents it brought stay, with it as their provenance\n", id, cat), "")
	want([]string{"resume", id}, exitFail, "", "a removed catalog cannot be paused or resumed")
	want([]string{"pause", "nope"}, exitFail, "", `no catalog with id "nope"`)
	want([]string{"pause"}, exitUsage, "", "takes one catalog ID")
	want([]string{"list", "extra"}, exitUsage, "", "takes no arguments")
	want([]string{"frobnicate"}, exitUsage, "", `unknown subcommand "frobnicate"`)
	// Audited as the command line, once per change.
	s, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page, err := registry.NewService(s, registry.ServiceConfig{}).AuditLog(t.Context(), registry.Principal{Role: registry.RoleAdmin},
		registry.AuditQuery{Actions: []string{"catalog-pause", "catalog-resume", "catalog-remove"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Entries {
		got = append(got, e.ActorName+" "+e.Action)
	}
	if strings.Join(got, ",") != "cli catalog-pause,cli catalog-resume,cli catalog-remove" {
		t.Errorf("audit %v", got)
	}
	// A --data that holds no database is refused, and nothing is created.
	for _, args := range [][]string{{"catalog", "list"}, {"catalog", "pause", id}, {"catalog", "remove", id}} {
		typo := filepath.Join(t.TempDir(), "typo")
		code, out, errs := runCLI(t, "", append(args, "--data", typo)...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "no Cardex database in --data "+typo) {
			t.Errorf("%v: code %d stdout %q stderr %q", args, code, out, errs)
		}
		if _, err := os.Stat(typo); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v created %s: %v", args, typo, err)
		}
	}
}
