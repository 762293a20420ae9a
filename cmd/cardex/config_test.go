package main

import (
	"bytes"
	"errors"
	"flag"
	"net/netip"
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
	for _, name := range []string{"addr", "addr-file", "data", "database-url", "tls-cert", "tls-key", "base-url", "log-format",
		"log-level", "allow-networks", "allow-insecure-http", "submit-rate", "read-rate", "gone-after", "trusted-proxies"} {
		if !strings.Contains(help, "  --"+name+" ") && !strings.Contains(help, "  --"+name+"\n") {
			t.Errorf("help lacks --%s", name)
		}
		if !strings.Contains(help, "env: "+envName(name)+"\n") {
			t.Errorf("help lacks %s", envName(name))
		}
	}
	if !strings.Contains(help, `default: ":8080", env: CARDEX_ADDR`) || !strings.Contains(help, `default: "10", env: CARDEX_SUBMIT_RATE`) {
		t.Errorf("help lacks defaults:\n%s", help)
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
