package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/migrations"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// runCLIEnv runs the CLI in-process with an environment.
func runCLIEnv(t *testing.T, envv map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return envv[k] }}
	code = run(t.Context(), e, args)
	return code, out.String(), errb.String()
}

func authenticate(t *testing.T, dir, token string) (registry.Principal, error) {
	t.Helper()
	s, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return registry.NewService(s, registry.ServiceConfig{}).Authenticate(t.Context(), token)
}

// migratedDir is a data directory holding a migrated, empty database, as
// `cardex migrate` or a first `cardex serve` leaves it.
func migratedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "", "migrate", "--data", dir); code != exitOK {
		t.Fatalf("migrate: %d %s", code, errs)
	}
	return dir
}

// Tools other than serve and migrate refuse a store that does not exist
// (a mistyped --data) with exit 2 and a message naming the flag, and
// create nothing: before, `token create` made a new empty database and
// printed a token the running server answered 401 to.
func TestStoreToolsRefuseMissingDatabase(t *testing.T) {
	for _, args := range [][]string{
		{"token", "create", "--role", "admin"},
		{"token", "list"},
		{"token", "revoke", "ops"},
		{"reindex"},
	} {
		dir := filepath.Join(t.TempDir(), "typo")
		code, out, errs := runCLI(t, "", append(args, "--data", dir)...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 ||
			!strings.Contains(errs, "no Cardex database in --data "+dir) || !strings.Contains(errs, "cardex migrate") {
			t.Errorf("%v: code %d stdout %q stderr %q", args, code, out, errs)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v created %s: %v", args, dir, err)
		}
	}
	// PostgreSQL: a database Cardex never migrated is refused the same way.
	url := registrytest.PostgresURL(t)
	code, out, errs := runCLIEnv(t, map[string]string{"CARDEX_DATABASE_URL": url}, "token", "create", "--role", "admin")
	if code != exitUsage || out != "" || !strings.Contains(errs, "no Cardex database in --database-url") {
		t.Fatalf("postgres: code %d stdout %q stderr %q", code, out, errs)
	}
	if code, _, errs := runCLIEnv(t, map[string]string{"CARDEX_DATABASE_URL": url}, "migrate"); code != exitOK {
		t.Fatalf("migrate: %s", errs)
	}
	if code, out, errs := runCLIEnv(t, map[string]string{"CARDEX_DATABASE_URL": url}, "token", "create", "--role", "admin"); code != exitOK || !strings.HasPrefix(out, "cdx_") {
		t.Fatalf("after migrate: code %d stdout %q stderr %q", code, out, errs)
	}
}

func TestTokenCreatePrintsTokenFirst(t *testing.T) {
	dir := migratedDir(t)
	code, out, errs := runCLI(t, "", "token", "create", "--role", "admin", "--name", "ops", "--data", dir)
	if code != exitOK {
		t.Fatalf("code %d stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "cdx_") || len(lines[0]) != 64 {
		t.Fatalf("stdout %q", out)
	}
	p, err := authenticate(t, dir, lines[0])
	if err != nil || p.Role != registry.RoleAdmin || p.Name != "ops" {
		t.Fatalf("the printed token does not authenticate: %+v, %v", p, err)
	}
}

func TestTokenCreateJSON(t *testing.T) {
	dir := migratedDir(t)
	code, out, errs := runCLIEnv(t, map[string]string{"CARDEX_DATA": dir},
		"token", "create", "--role", "publisher", "--host", "a.example.com", "--host", "B.example.com", "--expires", "90d", "--json")
	if code != exitOK {
		t.Fatalf("code %d stderr %q", code, errs)
	}
	first, _, _ := strings.Cut(out, "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(first), &got); err != nil {
		t.Fatalf("first line %q: %v", first, err)
	}
	if groups, ok := got["groups"].([]any); len(got) != 7 || !ok || len(groups) != 0 || got["role"] != "publisher" || !strings.HasPrefix(got["name"].(string), "publisher-") {
		t.Fatalf("json %v", got)
	}
	hosts, _ := got["hosts"].([]any)
	if len(hosts) != 2 || hosts[0] != "a.example.com" || hosts[1] != "b.example.com" {
		t.Fatalf("hosts %v", got["hosts"])
	}
	exp, err := time.Parse(time.RFC3339, got["expiresAt"].(string))
	if err != nil || time.Until(exp) < 89*24*time.Hour || time.Until(exp) > 91*24*time.Hour {
		t.Fatalf("expiresAt %v, %v", got["expiresAt"], err)
	}
	// CARDEX_DATA chose the store.
	p, err := authenticate(t, dir, got["token"].(string))
	if err != nil || p.TokenID != got["id"] || len(p.Hosts) != 2 {
		t.Fatalf("%+v, %v", p, err)
	}
}

func TestTokenBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"token"},
		{"token", "mint"},
		{"token", "create", "--data", dir},
		{"token", "create", "--role", "root", "--data", dir},
		{"token", "create", "--role", "publisher", "--data", dir},
		{"token", "create", "--role", "admin", "--host", "a.com", "--data", dir},
		{"token", "create", "--role", "admin", "--expires", "soon", "--data", dir},
		{"token", "create", "--role", "admin", "--expires", "-3d", "--data", dir},
		{"token", "create", "--role", "admin", "--frobnicate", "--data", dir},
		{"token", "create", "--role", "admin", "extra", "--data", dir},
		{"token", "create", "--role", "admin", "--database-url", "mysql://x"},
		{"token", "revoke", "--data", dir},
		{"token", "list", "x", "--data", dir},
	} {
		code, out, errs := runCLI(t, "", args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "cardex token") {
			t.Errorf("%v: code %d stdout %q stderr %q", args, code, out, errs)
		}
	}
}

func TestTokenListAndRevoke(t *testing.T) {
	dir := migratedDir(t)
	for _, name := range []string{"alpha", "beta"} {
		if code, _, errs := runCLI(t, "", "token", "create", "--role", "reader", "--name", name, "--data", dir); code != exitOK {
			t.Fatalf("create %s: %s", name, errs)
		}
	}
	code, out, _ := runCLI(t, "", "token", "revoke", "beta", "--data", dir)
	if code != exitOK || out != "revoked beta\n" {
		t.Fatalf("revoke: %d %q", code, out)
	}
	code, out, errs := runCLI(t, "", "token", "list", "--data", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
		!strings.Contains(lines[1], "alpha") || !strings.HasSuffix(lines[1], "active") ||
		!strings.Contains(lines[2], "beta") || !strings.HasSuffix(lines[2], "revoked") {
		t.Fatalf("list: %d %q %q", code, out, errs)
	}
	for _, col := range []string{"NAME", "ROLE", "HOSTS", "CREATED", "LAST USED", "EXPIRES"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header lacks %s: %q", col, lines[0])
		}
	}
	code, _, errs = runCLI(t, "", "token", "revoke", "gamma", "--data", dir)
	if code != exitFail || !strings.Contains(errs, `no token with id or name "gamma"`) {
		t.Fatalf("revoke unknown: %d %q", code, errs)
	}
	code, out, _ = runCLI(t, "", "token", "list", "--json", "--data", dir)
	var toks []registry.Token
	if code != exitOK || json.Unmarshal([]byte(out), &toks) != nil || len(toks) != 2 || toks[1].RevokedAt == nil {
		t.Fatalf("list --json: %d %q", code, out)
	}
}

// A token can be created while a server holds the data directory
// (docs/api.md; docs/threats.md F.67 locks out second servers only).
func TestTokenCreateBesideServer(t *testing.T) {
	dir := t.TempDir()
	server, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir, ServerLock: true})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	code, out, errs := runCLI(t, "", "token", "create", "--role", "admin", "--data", dir)
	if code != exitOK {
		t.Fatalf("code %d stderr %q", code, errs)
	}
	p, err := registry.NewService(server, registry.ServiceConfig{}).Authenticate(t.Context(), strings.TrimSpace(out))
	if err != nil || p.Role != registry.RoleAdmin {
		t.Fatalf("the server does not see the new token: %+v, %v", p, err)
	}
}

func TestMigrate(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "", "migrate", "--data", dir)
	want := fmt.Sprintf("schema version %d (sqlite)\n", latestSchema(t, migrations.SQLite()))
	if code != exitOK || out != want {
		t.Fatalf("migrate: %d %q %q", code, out, errs)
	}
	// Again: nothing to do, same answer.
	if code, out, _ := runCLI(t, "", "migrate", "--data", dir); code != exitOK || out != want {
		t.Fatalf("second migrate: %d %q", code, out)
	}
	for _, args := range [][]string{{"migrate", "now"}, {"migrate", "--bogus"}, {"migrate", "--database-url", "sqlite://x"}} {
		if code, out, errs := runCLI(t, "", args...); code != exitUsage || out != "" || errs == "" {
			t.Errorf("%v: %d %q %q", args, code, out, errs)
		}
	}
}

func TestMigratePostgres(t *testing.T) {
	url := registrytest.PostgresURL(t)
	code, out, errs := runCLIEnv(t, map[string]string{"CARDEX_DATABASE_URL": url}, "migrate")
	if want := fmt.Sprintf("schema version %d (postgres)\n", latestSchema(t, migrations.Postgres())); code != exitOK || out != want {
		t.Fatalf("migrate: %d %q %q", code, out, errs)
	}
	s, err := registry.Open(context.Background(), registry.OpenOptions{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := s.MigrationsCurrent(t.Context()); !ok || err != nil {
		t.Fatalf("MigrationsCurrent %v %v", ok, err)
	}
}

// latestSchema is the highest migration version in fsys: the version a
// fresh database is migrated to.
func latestSchema(t *testing.T, fsys fs.FS) int64 {
	t.Helper()
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("migrations: %v %v", names, err)
	}
	var latest int64
	for _, n := range names {
		num, _, _ := strings.Cut(n, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", n, err)
		}
		latest = max(latest, v)
	}
	return latest
}

// TestTokenCreateGroups: `token create --groups` makes a token holding
// those groups (sorted, exact), shown by --json and `token list`; an admin
// token and a malformed name are usage errors naming the problem.
func TestTokenCreateGroups(t *testing.T) {
	dir := migratedDir(t)
	code, out, errs := runCLI(t, "", "token", "create", "--role", "reader", "--name", "pay", "--groups", "risk, payments", "--json", "--data", dir)
	if code != exitOK {
		t.Fatalf("create: %d %s", code, errs)
	}
	var created struct {
		Groups []string `json:"groups"`
		Token  string   `json:"token"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || strings.Join(created.Groups, ",") != "payments,risk" {
		t.Fatalf("--json %s (%v)", out, err)
	}
	p, err := authenticate(t, dir, created.Token)
	if err != nil || strings.Join(p.Groups, ",") != "payments,risk" {
		t.Fatalf("authenticates as %+v %v", p, err)
	}
	if code, out, _ = runCLI(t, "", "token", "list", "--data", dir); code != exitOK || !strings.Contains(out, "GROUPS") || !strings.Contains(out, " payments,risk ") {
		t.Errorf("list: %d\n%s", code, out)
	}
	for _, c := range []struct{ args, msg string }{
		{"--role admin --groups payments", "an admin token sees every agent and holds no groups"},
		{"--role reader --groups payments,,risk", "a group name is 1 to 256 bytes"},
	} {
		code, _, errs := runCLI(t, "", append(append([]string{"token", "create"}, strings.Fields(c.args)...), "--data", dir)...)
		if code != exitUsage || !strings.Contains(errs, "cardex token create: "+c.msg) {
			t.Errorf("%s: %d %s", c.args, code, errs)
		}
	}
}
