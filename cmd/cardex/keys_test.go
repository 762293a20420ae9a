package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The publisher's path: generate a key, publish the JWKS printed, sign
// (kid defaults to the same thumbprint), verify against that JWKS.
func TestKeysGenerateSignVerify(t *testing.T) {
	for _, alg := range []string{"ES256", "EdDSA", "RS256"} {
		t.Run(alg, func(t *testing.T) {
			dir := t.TempDir()
			key := filepath.Join(dir, "key.pem")
			code, jwks, errs := runCLI(t, "", "keys", "generate", "--alg", alg, "--out", key)
			if code != exitOK || !strings.Contains(errs, "/.well-known/jwks.json") {
				t.Fatalf("code=%d %s", code, errs)
			}
			var set struct {
				Keys []map[string]any `json:"keys"`
			}
			if err := json.Unmarshal([]byte(jwks), &set); err != nil || len(set.Keys) != 1 {
				t.Fatalf("%v: %s", err, jwks)
			}
			k := set.Keys[0]
			if k["alg"] != alg || k["use"] != "sig" || k["d"] != nil || k["p"] != nil || k["kid"] == "" {
				t.Fatalf("JWK %v", k)
			}
			if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("key file %v %v", fi, err)
			}
			// jwks of the same key prints the same set.
			if code, again, _ := runCLI(t, "", "keys", "jwks", key); code != exitOK || again != jwks {
				t.Fatalf("keys jwks: %d\n%s\nvs\n%s", code, again, jwks)
			}
			code, signed, errs := runCLI(t, "", "sign", "--key", key, writeFile(t, "card.json", cliCard))
			if code != exitOK || errs != "" {
				t.Fatalf("sign: %d %s", code, errs)
			}
			if !strings.Contains(protectedOf(t, signed, 0), `"kid":"`+k["kid"].(string)+`"`) {
				t.Fatalf("kid differs: %s", protectedOf(t, signed, 0))
			}
			code, out, _ := runCLI(t, "", "verify", "--jwks", writeFile(t, "jwks.json", jwks), writeFile(t, "signed.json", signed))
			if code != exitOK || !strings.Contains(out, "card: verified") {
				t.Fatalf("verify: %d %s", code, out)
			}
			// A second generate never overwrites the key.
			if code, _, errs := runCLI(t, "", "keys", "generate", "--out", key); code != exitUsage || !strings.Contains(errs, "never overwritten") {
				t.Fatalf("overwrite: %d %s", code, errs)
			}
		})
	}
}

func TestKeysBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"keys"}, "Usage: cardex keys"},
		{[]string{"keys", "rotate"}, `unknown subcommand "rotate"`},
		{[]string{"keys", "generate"}, "--out is required"},
		{[]string{"keys", "generate", "--alg", "HS256", "--out", filepath.Join(t.TempDir(), "k.pem")}, "not one of"},
		{[]string{"keys", "jwks", writeFile(t, "pub.json", `{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}`)}, "unsupported signing key"},
	} {
		code, out, errs := runCLI(t, "", c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: code=%d out=%q err=%q", c.args, code, out, errs)
		}
	}
}

// The default profile makes one signature for every verifier: "unset"
// values are removed and said on stderr; members that keep the spec and SDK
// forms apart are refused by name. --profile signs one form and says which
// others differ.
func TestSignProfiles(t *testing.T) {
	keyPath, _, _ := newSigningKey(t)
	empties := strings.Replace(cliCard, `"version":"1.0.0",`, `"version":"1.0.0","documentationUrl":"","iconUrl":null,`, 1)
	code, out, errs := runCLI(t, "", "sign", "--key", keyPath, writeFile(t, "e.json", empties))
	if code != exitOK || strings.Contains(out, "documentationUrl") || strings.Contains(out, "iconUrl") ||
		!strings.Contains(errs, "removed 2 members") || !strings.Contains(errs, "/documentationUrl: empty string") || !strings.Contains(errs, "/iconUrl: null") {
		t.Fatalf("code=%d\n%s\n%s", code, out, errs)
	}
	hybrid := strings.Replace(cliCard, `"version":"1.0.0",`, `"version":"1.0.0","url":"https://cli.example/a2a","preferredTransport":"JSONRPC",`, 1)
	code, out, errs = runCLI(t, "", "sign", "--key", keyPath, writeFile(t, "h.json", hybrid))
	if code != exitUsage || out != "" || !strings.Contains(errs, "/url: not a member of the v1 AgentCard") || !strings.Contains(errs, "/preferredTransport:") {
		t.Fatalf("hybrid: code=%d %s", code, errs)
	}
	code, out, errs = runCLI(t, "", "sign", "--key", keyPath, "--profile", "spec", writeFile(t, "h2.json", hybrid))
	if code != exitOK || !strings.Contains(out, `"url"`) || !strings.Contains(errs, "sdk (the a2a-js and a2a-python verifiers) differs") {
		t.Fatalf("--profile spec: code=%d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "sign", "--key", keyPath, "--profile", "jcs", writeFile(t, "c.json", cliCard)); code != exitUsage || !strings.Contains(errs, "--profile") {
		t.Fatalf("bad profile: %d %s", code, errs)
	}
}
