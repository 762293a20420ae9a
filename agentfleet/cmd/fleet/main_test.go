package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	c, err := parse([]string{"-agents", "10000"})
	if err != nil || c.hosts != 100 || c.listen != "127.0.0.1" || c.behavior != "normal" {
		t.Errorf("defaults: %+v %v", c, err)
	}
	for _, bad := range [][]string{{"-agents", "0"}, {"-behavior", "gzip-bomb"}, {"-ca-out", "x.pem"}, {"-signed-percent", "101"}, {"-nope"}} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// The command writes one URL per agent and serves them until cancelled.
func TestRunServesAndPrintsURLs(t *testing.T) {
	dir := t.TempDir()
	out, ca := filepath.Join(dir, "urls.txt"), filepath.Join(dir, "ca.pem")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-agents", "250", "-hosts", "5", "-listen", "127.0.0.90", "-out", out, "-tls", "-ca-out", ca, "-signed-percent", "30"},
			io.Discard, slog.New(slog.DiscardHandler))
	}()
	var urls []string
	for deadline := time.Now().Add(10 * time.Second); len(urls) < 250 && time.Now().Before(deadline); {
		urls = readLines(t, out)
		time.Sleep(5 * time.Millisecond)
	}
	if len(urls) != 250 || !strings.HasPrefix(urls[0], "https://127.0.0.90:") || !strings.HasPrefix(urls[4], "https://127.0.0.94:") {
		t.Fatalf("%d URLs, first %q", len(urls), urls[:min(5, len(urls))])
	}
	pem, err := os.ReadFile(ca)
	if err != nil || !strings.Contains(string(pem), "BEGIN CERTIFICATE") {
		t.Fatalf("CA file: %v", err)
	}
	// A plain client without the CA must fail; the fleet is really TLS.
	if _, err := http.Get(urls[0]); err == nil {
		t.Error("TLS fleet answered a client without its CA")
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	// Agents 0-29 of every hundred are signed, 30-99 are not.
	for i, wantSigned := range map[int]bool{0: true, 29: true, 30: false, 99: false, 129: true} {
		body := fetch(t, client, urls[i])
		if strings.Contains(body, `"signatures"`) != wantSigned {
			t.Errorf("agent %d: signed=%v, want %v", i, !wantSigned, wantSigned)
		}
	}
	u, _ := url.Parse(urls[0])
	if jwks := fetch(t, client, "https://"+u.Host+"/.well-known/jwks.json"); !strings.Contains(jwks, `"kty":"EC"`) {
		t.Errorf("key set: %s", jwks)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

func readLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines
}

func fetch(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return string(b)
}
