package agentfleet_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
)

func TestSlowDripAgent(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{DripInterval: 2 * time.Millisecond})
	card := []byte(`{"name":"slow"}`)
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.SlowDrip, Card: card})
	resp, err := http.Get(a.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reads int
	var got []byte
	buf := make([]byte, 64)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			reads++
			got = append(got, buf[:n]...)
		}
		if err != nil {
			break
		}
	}
	// One byte per write: the client sees many small reads, not one.
	if !bytes.Equal(got, card) || reads < len(card)/2 {
		t.Errorf("got %q in %d reads", got, reads)
	}
}

func TestHangAfterHeadersAgent(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HangAfterHeaders})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.URL(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("headers did not arrive: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("body read ended with %v, want the deadline", err)
	}
}

func TestHugeBodyAgent(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	for _, declare := range []bool{false, true} {
		a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HugeBody, Size: 3 << 20, DeclareLength: declare})
		resp, body := do(t, http.DefaultClient, newReq(t, a.URL()))
		if len(body) != 3<<20 || !json.Valid(body) {
			t.Errorf("declared=%v: %d bytes, valid JSON %v", declare, len(body), json.Valid(body))
		}
		if declare != (resp.ContentLength == 3<<20) {
			t.Errorf("declared=%v: Content-Length %d", declare, resp.ContentLength)
		}
	}
}

func TestGzipBombAgent(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.GzipBomb, Size: 4 << 20})
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	req := newReq(t, a.URL())
	req.Header.Set("Accept-Encoding", "gzip")
	resp, compressed := do(t, raw, req)
	if resp.Header.Get("Content-Encoding") != "gzip" || len(compressed) > 64<<10 {
		t.Fatalf("%s, %d compressed bytes", resp.Header.Get("Content-Encoding"), len(compressed))
	}
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n != 4<<20 {
		t.Errorf("inflated %d bytes (%v), want 4 MiB from %d", n, err, len(compressed))
	}
}

func TestHugeHeadersAgent(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HugeHeaders})
	resp, _ := do(t, http.DefaultClient, newReq(t, a.URL()))
	size := 0
	for k, vs := range resp.Header {
		for _, v := range vs {
			size += len(k) + len(v) + 4
		}
	}
	if size < 96<<10 {
		t.Errorf("headers are %d bytes, want about 100 KiB", size)
	}
}

func TestTLSFleet(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{TLS: true, Hosts: 2, BaseAddr: "127.0.0.80"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: fleet.Hosts()[1]})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = fleet.CertPool()
	resp, body := do(t, &http.Client{Transport: tr}, newReq(t, a.URL()))
	if resp.TLS == nil || !bytes.Equal(body, a.Card()) || a.URL()[:8] != "https://" {
		t.Errorf("TLS fleet: %v %s", resp.TLS, a.URL())
	}
	if !bytes.Contains(fleet.CA().PEM(), []byte("BEGIN CERTIFICATE")) {
		t.Error("CA PEM")
	}
}

// A 10,000-agent fleet needs one listener per address, not per agent.
func TestTenThousandAgents(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 50, BaseAddr: "127.0.1.1"})
	urls := map[string]bool{}
	var last *agentfleet.AgentHandle
	for range 10000 {
		last = fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
		urls[last.URL()] = true
	}
	if len(urls) != 10000 || len(fleet.Hosts()) != 50 {
		t.Fatalf("%d distinct URLs on %d hosts", len(urls), len(fleet.Hosts()))
	}
	_, body := do(t, http.DefaultClient, newReq(t, last.URL()))
	if !bytes.Equal(body, last.Card()) {
		t.Error("last agent serves the wrong card")
	}
}
