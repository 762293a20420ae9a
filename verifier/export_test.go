package verifier

import (
	"errors"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://Agent.Example/.well-known/agent-card.json": "https://agent.example",
		"https://agent.example:443/x":                       "https://agent.example",
		"https://agent.example.:8443":                       "https://agent.example:8443",
		"http://127.0.0.1:8080/card.json":                   "http://127.0.0.1:8080",
		"http://[::1]:80/":                                  "http://[::1]",
		"https://[::1]:8443":                                "https://[::1]:8443",
	} {
		if got, err := NormalizeOrigin(in); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "agent.example", "ftp://agent.example", "https://user@agent.example", "https:///x", "mailto:a@b"} {
		if _, err := NormalizeOrigin(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckKeySet(t *testing.T) {
	if err := CheckKeySet(es256JWKS(t)); err != nil {
		t.Fatal(err)
	}
	if err := CheckKeySet([]byte(`{"keys":[{"kty":"oct","k":"AA"}]}`)); !errors.Is(err, ErrKeySetPrivate) {
		t.Fatalf("err=%v", err)
	}
	if err := CheckKeySet([]byte(`{"k1":"-----BEGIN PUBLIC KEY-----"}`)); !errors.Is(err, ErrKeySetMalformed) {
		t.Fatalf("err=%v", err)
	}
}
