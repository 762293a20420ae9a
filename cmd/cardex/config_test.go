package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestServeConfigDefaults(t *testing.T) {
	c, err := parseServeConfig(nil, envMap(nil), &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.Store.data != "./cardex-data" || c.Store.databaseURL != "" || c.LogFormat != "text" || c.LogLevel != "info" ||
		c.SubmitRate != 10 || c.ReadRate != 50 || c.GoneAfter != 168*time.Hour || c.AllowInsecureHTTP || len(c.AllowNetworks) != 0 {
		t.Fatalf("defaults %+v", c)
	}
	l := c.limits()
	if l.SubmitPerAddress.N != 10 || l.SubmitPerAddress.Per != time.Minute || l.SubmitPerDomain.N != 100 || l.SubmitPerDomain.Per != time.Hour ||
		l.ReadPerAddress.N != 50 || l.ReadPerAddress.Burst != 100 || l.ReadPerAddress.Per != time.Second {
		t.Fatalf("limits %+v", l)
	}
}

// A flag wins over its environment twin, which wins over the default.
func TestServeConfigPrecedence(t *testing.T) {
	env := envMap(map[string]string{
		"CARDEX_ADDR":                "127.0.0.1:9000",
		"CARDEX_DATA":                "/srv/env-data",
		"CARDEX_LOG_FORMAT":          "json",
		"CARDEX_ALLOW_NETWORKS":      "10.0.0.0/8, 192.168.1.7",
		"CARDEX_ALLOW_INSECURE_HTTP": "true",
		"CARDEX_SUBMIT_RATE":         "3",
		"CARDEX_GONE_AFTER":          "24h",
	})
	c, err := parseServeConfig([]string{"--addr", "127.0.0.1:9001", "--submit-rate", "0", "--allow-networks", "127.0.0.0/8", "--allow-networks", "::1/128"}, env, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	if c.Addr != "127.0.0.1:9001" || c.Store.data != "/srv/env-data" || c.LogFormat != "json" || !c.AllowInsecureHTTP ||
		c.SubmitRate != 0 || c.GoneAfter != 24*time.Hour || len(c.AllowNetworks) != 2 || c.AllowNetworks[0] != want[0] || c.AllowNetworks[1] != want[1] {
		t.Fatalf("config %+v", c)
	}
	if l := c.limits(); l.SubmitPerAddress.N != 0 || l.SubmitPerDomain.N != 0 {
		t.Fatalf("--submit-rate 0 left a limit: %+v", l)
	}
	c, err = parseServeConfig(nil, env, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AllowNetworks) != 2 || c.AllowNetworks[1] != netip.MustParsePrefix("192.168.1.7/32") || c.SubmitRate != 3 {
		t.Fatalf("env config %+v", c)
	}
}

// Validate names the bad setting (flag and variable).
func TestServeConfigValidate(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--addr", "8080"}, nil, "--addr (CARDEX_ADDR)"},
		{[]string{"--addr", "localhost:http2"}, nil, "--addr (CARDEX_ADDR)"},
		{[]string{"--data", ""}, nil, "--data is empty"},
		{[]string{"--database-url", "mysql://x"}, nil, "--database-url must be a postgres:// URL"},
		{[]string{"--tls-cert", "cert.pem"}, nil, "--tls-cert (CARDEX_TLS_CERT)"},
		{[]string{"--tls-cert", "/no/such/cert.pem", "--tls-key", "/no/such/key.pem"}, nil, "--tls-cert (CARDEX_TLS_CERT)"},
		{[]string{"--base-url", "cardex.example.com"}, nil, "--base-url (CARDEX_BASE_URL)"},
		{[]string{"--base-url", "https://cardex.example.com/?x=1"}, nil, "--base-url (CARDEX_BASE_URL)"},
		{[]string{"--log-format", "xml"}, nil, "--log-format (CARDEX_LOG_FORMAT)"},
		{[]string{"--log-level", "loud"}, nil, "--log-level (CARDEX_LOG_LEVEL)"},
		{[]string{"--submit-rate", "-1"}, nil, "--submit-rate (CARDEX_SUBMIT_RATE)"},
		{[]string{"--read-rate", "-5"}, nil, "--read-rate (CARDEX_READ_RATE)"},
		{[]string{"--gone-after", "0s"}, nil, "--gone-after (CARDEX_GONE_AFTER)"},
		{[]string{"--session-idle", "0s"}, nil, "--session-idle (CARDEX_SESSION_IDLE)"},
		{[]string{"--session-idle", "13h"}, nil, "--session-idle (CARDEX_SESSION_IDLE)"},
		{[]string{"--auto-approve", "always"}, nil, "--auto-approve (CARDEX_AUTO_APPROVE)"},
		{nil, map[string]string{"CARDEX_AUTO_APPROVE": "signed"}, "--auto-approve (CARDEX_AUTO_APPROVE)"},
		{nil, map[string]string{"CARDEX_READ_RATE": "fast"}, "CARDEX_READ_RATE"},
		{nil, map[string]string{"CARDEX_ALLOW_NETWORKS": "10.0.0.0/33"}, "CARDEX_ALLOW_NETWORKS"},
		{[]string{"extra"}, nil, `unexpected argument "extra"`},
	}
	for _, tc := range cases {
		_, err := parseServeConfig(tc.args, envMap(tc.env), &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: err %v, want it to name %s", tc.args, tc.env, err, tc.want)
		}
	}
	// A bad flag value is a flag error (usage), not a crash.
	if _, err := parseServeConfig([]string{"--submit-rate", "ten"}, envMap(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("--submit-rate ten accepted")
	}
}

// --help documents every setting with its default and variable.
func TestServeHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := parseServeConfig([]string{"--help"}, envMap(nil), &out, &bytes.Buffer{})
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v", err)
	}
	help := out.String()
	// Every docs/configuration.md serve setting, plus this server's own extras.
	for _, name := range []string{"addr", "data", "database-url", "demo", "tls-cert", "tls-key", "base-url", "log-format",
		"log-level", "allow-networks", "allow-insecure-http", "ca-file", "crawl-tick", "crawl-workers", "crawl-per-host",
		"crawl-interval", "crawl-min-interval", "crawl-max-interval", "crawl-timeout", "lease-ttl", "gone-after",
		"submit-rate", "read-rate", "addr-file", "trusted-proxies", "config-dump", "auto-approve", "probe-interval", "probe-workers", "probe-rate-floor", "probe-history", "probe-max-interfaces", "probe-max-off-domain", "search-synonyms",
		"auto-approve-per-domain", "catalog-max-new", "catalog-max-agents"} {
		if !strings.Contains(help, "  --"+name+" ") && !strings.Contains(help, "  --"+name+"\n") {
			t.Errorf("help lacks --%s", name)
		}
		if !strings.Contains(help, "env: "+envName(name)+"\n") {
			t.Errorf("help lacks %s", envName(name))
		}
	}
	for _, want := range []string{`default: ":8080", env: CARDEX_ADDR`, `default: "10", env: CARDEX_SUBMIT_RATE`,
		`default: "10s", env: CARDEX_CRAWL_TICK`, `default: "32", env: CARDEX_CRAWL_WORKERS`, `default: "2", env: CARDEX_CRAWL_PER_HOST`,
		`default: "1h0m0s", env: CARDEX_CRAWL_INTERVAL`, `default: "5m0s", env: CARDEX_CRAWL_MIN_INTERVAL`,
		`default: "24h0m0s", env: CARDEX_CRAWL_MAX_INTERVAL`, `default: "10s", env: CARDEX_CRAWL_TIMEOUT`,
		`default: "2m0s", env: CARDEX_LEASE_TTL`, `default: "168h0m0s", env: CARDEX_GONE_AFTER`,
		`default: "15m0s", env: CARDEX_PROBE_INTERVAL`, `default: "16", env: CARDEX_PROBE_WORKERS`, `default: "20", env: CARDEX_PROBE_RATE_FLOOR`, `default: "48h0m0s", env: CARDEX_PROBE_HISTORY`,
		`default: "20", env: CARDEX_AUTO_APPROVE_PER_DOMAIN`, `default: "100", env: CARDEX_CATALOG_MAX_NEW`, `default: "1000", env: CARDEX_CATALOG_MAX_AGENTS`} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %s:\n%s", want, help)
		}
	}
	// Value names are words for values, never stray words of the usage
	// (Go's flag package takes a back-quoted word as the value name), and a
	// switch has none: no trailing space.
	for _, line := range []string{"  --gone-after duration\n", "  --read-rate int\n", "  --submit-rate int\n", "  --demo\n", "  --allow-insecure-http\n"} {
		if !strings.Contains(help, line) {
			t.Errorf("help lacks the line %q", line)
		}
	}
	if strings.Contains(help, " \n") {
		t.Errorf("help has trailing spaces:\n%s", help)
	}
	code, stdout, stderr := runCLI(t, "", "serve", "--help")
	if code != exitOK || stdout != help || stderr != "" {
		t.Fatalf("serve --help: code %d stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "serve", "--log-format", "xml")
	if code != exitUsage || !strings.Contains(stderr, "--log-format (CARDEX_LOG_FORMAT)") {
		t.Fatalf("bad setting: code %d stderr %q", code, stderr)
	}
}

// A flag beats its environment twin, which beats the default, for the
// crawl settings too.
func TestServeConfigCrawlPrecedence(t *testing.T) {
	env := envMap(map[string]string{"CARDEX_CRAWL_WORKERS": "8", "CARDEX_CRAWL_TICK": "3s", "CARDEX_LEASE_TTL": "5m"})
	c, err := parseServeConfig([]string{"--crawl-workers", "4"}, env, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.CrawlWorkers != 4 || c.CrawlTick != 3*time.Second || c.LeaseTTL != 5*time.Minute || c.CrawlPerHost != 2 ||
		c.CrawlInterval != time.Hour || c.CrawlMinInterval != 5*time.Minute || c.CrawlMaxInterval != 24*time.Hour || c.CrawlTimeout != 10*time.Second {
		t.Fatalf("config %+v", c)
	}
	c, err = parseServeConfig(nil, envMap(nil), &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.CrawlWorkers != 32 || c.CrawlTick != 10*time.Second || c.LeaseTTL != 2*time.Minute {
		t.Fatalf("defaults %+v", c)
	}
}

// Validate names the bad crawl or probe setting; --probe-interval 0 (off)
// and 1s (the least) are fine.
func TestServeConfigProbeSettings(t *testing.T) {
	for _, v := range []string{"0", "1s", "15m"} {
		c, err := parseServeConfig([]string{"--probe-interval", v}, envMap(nil), &bytes.Buffer{}, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("--probe-interval %s: %v", v, err)
		}
		if want, _ := time.ParseDuration(v + map[bool]string{true: "s"}[v == "0"]); c.ProbeInterval != want {
			t.Errorf("--probe-interval %s: %v", v, c.ProbeInterval)
		}
	}
}

// Validate names the bad crawl setting.
func TestServeConfigValidateCrawl(t *testing.T) {
	dir := t.TempDir()
	oneWordGroup := filepath.Join(dir, "bad.txt")
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(oneWordGroup, []byte("# groups\ncar, automobile\nlonely\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte("car, automobile # same thing\n\nbike,bicycle , cycle\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseServeConfig([]string{"--search-synonyms", good}, envMap(nil), &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil || fmt.Sprint(c.synonyms) != "[[car automobile] [bike bicycle cycle]]" {
		t.Fatalf("synonyms %v, err %v", c, err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--crawl-tick", "1500ms"}, "--crawl-tick (CARDEX_CRAWL_TICK)"},
		{[]string{"--crawl-tick", "0s"}, "--crawl-tick (CARDEX_CRAWL_TICK)"},
		{[]string{"--crawl-workers", "0"}, "--crawl-workers (CARDEX_CRAWL_WORKERS)"},
		{[]string{"--crawl-per-host", "0"}, "--crawl-per-host (CARDEX_CRAWL_PER_HOST)"},
		{[]string{"--crawl-interval", "-1s"}, "--crawl-interval (CARDEX_CRAWL_INTERVAL)"},
		{[]string{"--crawl-interval", "1m"}, "--crawl-interval (CARDEX_CRAWL_INTERVAL)"},
		{[]string{"--crawl-min-interval", "2h", "--crawl-max-interval", "1h"}, "--crawl-min-interval (CARDEX_CRAWL_MIN_INTERVAL)"},
		{[]string{"--crawl-timeout", "0s"}, "--crawl-timeout (CARDEX_CRAWL_TIMEOUT)"},
		{[]string{"--lease-ttl", "15s"}, "--lease-ttl (CARDEX_LEASE_TTL)"},
		{[]string{"--ca-file", "/no/such/ca.pem"}, "--ca-file (CARDEX_CA_FILE)"},
		{[]string{"--search-synonyms", "/no/such/synonyms.txt"}, "--search-synonyms (CARDEX_SEARCH_SYNONYMS)"},
		{[]string{"--search-synonyms", oneWordGroup}, "--search-synonyms (CARDEX_SEARCH_SYNONYMS)"},
		{[]string{"--demo", "--database-url", "postgres://db/x"}, "--demo (CARDEX_DEMO)"},
		{[]string{"--probe-interval", "500ms"}, "--probe-interval (CARDEX_PROBE_INTERVAL)"},
		{[]string{"--probe-interval", "-1s"}, "--probe-interval (CARDEX_PROBE_INTERVAL)"},
		{[]string{"--probe-workers", "0"}, "--probe-workers (CARDEX_PROBE_WORKERS)"},
		{[]string{"--probe-rate-floor", "0"}, "--probe-rate-floor (CARDEX_PROBE_RATE_FLOOR)"},
		{[]string{"--probe-rate-floor", "10001"}, "--probe-rate-floor (CARDEX_PROBE_RATE_FLOOR)"},
		{[]string{"--probe-history", "12h"}, "--probe-history (CARDEX_PROBE_HISTORY)"},
		{[]string{"--probe-max-interfaces", "0"}, "--probe-max-interfaces (CARDEX_PROBE_MAX_INTERFACES)"},
		{[]string{"--probe-max-interfaces", "65"}, "--probe-max-interfaces (CARDEX_PROBE_MAX_INTERFACES)"},
		{[]string{"--probe-max-off-domain", "-1"}, "--probe-max-off-domain (CARDEX_PROBE_MAX_OFF_DOMAIN)"},
		{[]string{"--probe-max-interfaces", "4", "--probe-max-off-domain", "5"}, "--probe-max-off-domain (CARDEX_PROBE_MAX_OFF_DOMAIN)"},
	}
	for _, tc := range cases {
		_, err := parseServeConfig(tc.args, envMap(nil), &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want it to name %s", tc.args, err, tc.want)
		}
	}
}

// --config-dump prints the effective settings and exits 0; the database
// password never appears.
func TestServeConfigDump(t *testing.T) {
	var out bytes.Buffer
	_, err := parseServeConfig([]string{"--config-dump", "--crawl-workers", "7", "--tls-cert", "testdata/none"},
		envMap(map[string]string{"CARDEX_DATABASE_URL": "postgres://cardex:s3cret-pw@db.internal:5432/cardex?sslmode=require"}),
		&out, &bytes.Buffer{})
	// A bad setting is reported, not dumped.
	if !errors.Is(err, errConfig) || out.Len() != 0 {
		t.Fatalf("err %v, output %q", err, out.String())
	}
	code, stdout, stderr := runCLIEnv(t, map[string]string{"CARDEX_DATABASE_URL": "postgres://cardex:s3cret-pw@db.internal:5432/cardex?sslmode=require"},
		"serve", "--config-dump", "--crawl-workers", "7", "--allow-networks", "10.0.0.0/8")
	if code != exitOK || stderr != "" {
		t.Fatalf("code %d stderr %q", code, stderr)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if strings.Contains(stdout, "s3cret-pw") {
		t.Fatalf("password printed:\n%s", stdout)
	}
	if got["database-url"] != "postgres://cardex:xxxxx@db.internal:5432/cardex?sslmode=require" || got["crawl-workers"] != "7" ||
		got["allow-networks"] != "10.0.0.0/8" || got["crawl-tick"] != "10s" || got["addr"] != ":8080" {
		t.Fatalf("dump %v", got)
	}
	if _, ok := got["config-dump"]; ok {
		t.Fatal("the dump lists --config-dump itself")
	}
}

// Every place a PostgreSQL URL can carry a secret is redacted in the dump:
// the user information's password and password-like query parameters.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "",
		"postgres://db.internal/cardex":      "postgres://db.internal/cardex",
		"postgres://u:pw1@db/cardex":         "postgres://u:xxxxx@db/cardex",
		"postgres://u@db/cardex?password=x2": "postgres://u@db/cardex?password=xxxxx",
		"postgres://u@db/c?sslmode=require&sslpassword=x3&sslmode=verify-full": "postgres://u@db/c?sslmode=require&sslmode=verify-full&sslpassword=xxxxx",
		"postgres://u@db/c?PassWord=x4&application_name=cardex":                "postgres://u@db/c?PassWord=xxxxx&application_name=cardex",
		"postgres://u@db/c?auth_token=x5":                                      "postgres://u@db/c?auth_token=xxxxx",
		"postgres://u@db/c?password=%zz":                                       "(unparsable, redacted)",
		"postgres://u:pw@[db/c":                                                "(unparsable, redacted)",
	} {
		got := redactURL(in)
		if got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
		for _, secret := range []string{"pw1", "x2", "x3", "x4", "x5"} {
			if strings.Contains(got, secret) {
				t.Errorf("redactURL(%q) keeps %q", in, secret)
			}
		}
	}
	code, stdout, _ := runCLIEnv(t, map[string]string{"CARDEX_DATABASE_URL": "postgres://cardex@db.internal/cardex?password=x2"},
		"serve", "--config-dump")
	if code != exitOK || strings.Contains(stdout, "x2") || !strings.Contains(stdout, "password=xxxxx") {
		t.Fatalf("code %d dump:\n%s", code, stdout)
	}
}

// --demo uses ./cardex-demo unless --data (or CARDEX_DATA) is given
// (docs/configuration.md).
func TestServeConfigDemoData(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--demo"}, nil, "./cardex-demo"},
		{[]string{"--demo", "--data", "/srv/demo"}, nil, "/srv/demo"},
		{[]string{"--demo"}, map[string]string{"CARDEX_DATA": "/srv/env"}, "/srv/env"},
		{nil, map[string]string{"CARDEX_DEMO": "true"}, "./cardex-demo"},
		{nil, nil, "./cardex-data"},
	} {
		c, err := parseServeConfig(tc.args, envMap(tc.env), &bytes.Buffer{}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Store.data != tc.want {
			t.Errorf("%v %v: data %q, want %q", tc.args, tc.env, c.Store.data, tc.want)
		}
	}
}

// --demo allows 16 requests in flight per host (its fleet is its own
// loopback addresses) unless --crawl-per-host or its variable is given;
// a plain server keeps 2.
func TestServeConfigDemoPerHost(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want int
	}{
		{[]string{"--demo"}, nil, 16},
		{[]string{"--demo", "--crawl-per-host", "3"}, nil, 3},
		{[]string{"--demo"}, map[string]string{"CARDEX_CRAWL_PER_HOST": "4"}, 4},
		{nil, nil, 2},
	} {
		c, err := parseServeConfig(tc.args, envMap(tc.env), &bytes.Buffer{}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if c.CrawlPerHost != tc.want {
			t.Errorf("%v %v: crawl-per-host %d, want %d", tc.args, tc.env, c.CrawlPerHost, tc.want)
		}
	}
}
