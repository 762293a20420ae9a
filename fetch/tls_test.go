package fetch_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

func tlsServer(t *testing.T, cfg *tls.Config) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"tls"}`))
	}))
	srv.TLS = cfg
	srv.Config.ErrorLog = discardLog()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// B.23: certificate and protocol failures are class tls; never skipped.
func TestTLSFailuresB23(t *testing.T) {
	ca, err := agentfleet.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	lo := []net.IP{net.ParseIP("127.0.0.1")}
	good, _ := ca.Issue(agentfleet.LeafSpec{IPs: lo})
	wrongHost, _ := ca.Issue(agentfleet.LeafSpec{IPs: []net.IP{net.ParseIP("127.0.0.99")}, DNSNames: []string{"other.test"}})
	expired, _ := ca.Issue(agentfleet.LeafSpec{IPs: lo, NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	self, _ := agentfleet.SelfSigned(agentfleet.LeafSpec{IPs: lo})

	p := loopbackPolicy()
	p.RootCAs = ca.Pool()
	f := newFetcher(t, fetch.Config{Policy: p})

	ok := tlsServer(t, &tls.Config{Certificates: []tls.Certificate{good}})
	if _, err := f.Fetch(t.Context(), fetch.Request{URL: ok.URL}); err != nil {
		t.Fatalf("valid certificate: %v", err)
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	cases := []struct {
		name  string
		cfg   *tls.Config
		check func(error) bool
	}{
		{"self-signed", &tls.Config{Certificates: []tls.Certificate{self}}, func(err error) bool { return errors.As(err, &unknown) }},
		{"wrong host", &tls.Config{Certificates: []tls.Certificate{wrongHost}}, func(err error) bool { return errors.As(err, &host) }},
		{"expired", &tls.Config{Certificates: []tls.Certificate{expired}}, func(err error) bool {
			return errors.As(err, &invalid) && invalid.Reason == x509.Expired
		}},
		{"TLS 1.1", &tls.Config{Certificates: []tls.Certificate{good}, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, func(err error) bool {
			// The server alerts protocol_version (70): the client offered
			// only TLS 1.2 and up.
			var oe *net.OpError
			return errors.As(err, &oe) && oe.Op == "remote error"
		}},
	}
	for _, c := range cases {
		srv := tlsServer(t, c.cfg)
		_, err := f.Fetch(t.Context(), fetch.Request{URL: srv.URL})
		wantClass(t, err, fetch.ClassTLS)
		if !c.check(err) {
			t.Errorf("%s: %v (%T) is not the expected TLS error", c.name, err, errors.Unwrap(err))
		}
	}
	// The fleet CA is not a system root: without RootCAs the fleet fails.
	fleet := agentfleet.Start(t, agentfleet.Options{TLS: true, BaseAddr: "127.0.0.40"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	sys := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	_, err = sys.Fetch(t.Context(), fetch.Request{URL: a.URL()})
	wantClass(t, err, fetch.ClassTLS)
	p.RootCAs = fleet.CertPool()
	withCA := newFetcher(t, fetch.Config{Policy: p})
	if _, err := withCA.Fetch(t.Context(), fetch.Request{URL: a.URL()}); err != nil {
		t.Errorf("fleet with its CA: %v", err)
	}
	if a.Requests() != 1 {
		t.Errorf("agent saw %d requests, want 1 (the failed handshake sends none)", a.Requests())
	}
}

// B.23: plain HTTP on a TLS port — "server speaks plain HTTP".
func TestPlainHTTPOnTLSPortB23(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{BaseAddr: "127.0.0.41"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: "https" + a.URL()[len("http"):]})
	wantClass(t, err, fetch.ClassTLS)
	if !errors.Is(err, fetch.ErrPlainHTTPOnTLSPort) {
		t.Errorf("err = %v", err)
	}
}

// B.18: a TLS handshake that stalls fails at the TLS timeout.
func TestTLSHandshakeStallB18(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.42:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // accept, then say nothing
		}
	}()
	p := loopbackPolicy()
	p.TLSHandshakeTimeout = 100 * time.Millisecond
	f := newFetcher(t, fetch.Config{Policy: p})
	_, err = f.Fetch(t.Context(), fetch.Request{URL: "https://" + ln.Addr().String() + "/"})
	wantClass(t, err, fetch.ClassTimeout)
	if !errors.Is(err, fetch.ErrTLSHandshakeTimeout) {
		t.Errorf("err = %v", err)
	}
}

// B.23: a server that answers an HTTP/1.1 request with HTTP/2 frames (an h2c
// preface) is a failed connection with a clear cause, not a card.
func TestHTTP2PrefaceOnPlainHTTPB23(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.43:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				c.Read(buf)
				// An empty SETTINGS frame, then a GOAWAY.
				c.Write([]byte("\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"))
			}()
		}
	}()
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	_, err = f.Fetch(t.Context(), fetch.Request{URL: "http://" + ln.Addr().String() + "/"})
	wantClass(t, err, fetch.ClassConnect)
}

// A second connection to a host resumes the TLS session of the first
// instead of verifying the chain again.
func TestTLSSessionResumed(t *testing.T) {
	ca, err := agentfleet.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := ca.Issue(agentfleet.LeafSpec{IPs: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}})
	srv := tlsServer(t, &tls.Config{Certificates: []tls.Certificate{leaf}})
	p := loopbackPolicy()
	p.RootCAs = ca.Pool()
	f := newFetcher(t, fetch.Config{Policy: p})
	addr := srv.Listener.Addr().String()
	dial := func() bool {
		t.Helper()
		c, err := f.DialTLS(t.Context(), addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Reading the answer takes in the session ticket the server sends
		// after the handshake.
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(c); err != nil {
			t.Fatal(err)
		}
		return c.ConnectionState().DidResume
	}
	if dial() {
		t.Fatal("the first connection resumed a session")
	}
	if !dial() {
		t.Error("the second connection did not resume the first one's session")
	}
}
