package agentfleet

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

func (a *AgentHandle) serve(w http.ResponseWriter, r *http.Request) {
	a.reqs.enter()
	defer a.reqs.leave()
	hdr := w.Header()
	switch a.a.Behavior {
	case Normal, Signed, Tampered, OffOriginJKU:
		hdr.Set("Content-Type", "application/json")
		w.Write(a.a.Card)
	case Conditional:
		a.serveConditional(w, r, a.a.Card, 0)
	case Changing:
		a.serveChanging(w, r)
	case SlowDrip:
		a.drip(w, r)
	case HangAfterHeaders:
		hdr.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-a.host.fleet.closed:
		}
	case HugeBody:
		a.huge(w, r)
	case GzipBomb:
		a.bomb(w, r)
	case HugeHeaders:
		pad := strings.Repeat("x", 1000)
		for i := range 100 {
			hdr.Set("X-Pad-"+strconv.Itoa(i), pad)
		}
		hdr.Set("Content-Type", "application/json")
		w.Write(a.a.Card)
	case RedirectChain:
		hop, _ := strconv.Atoi(r.URL.Query().Get("hop"))
		hops := max(a.a.Hops, 1)
		if hop >= hops {
			hdr.Set("Content-Type", "application/json")
			w.Write(a.a.Card)
			return
		}
		a.redirect(w, fmt.Sprintf("%s?hop=%d", a.path, hop+1))
	case RedirectLoop:
		if r.URL.Query().Get("loop") == "" {
			a.redirect(w, a.path+"?loop=1")
		} else {
			a.redirect(w, a.path)
		}
	case Redirect:
		a.redirect(w, a.a.Location)
	case Status:
		if a.a.RetryAfter != "" {
			hdr.Set("Retry-After", a.a.RetryAfter)
		}
		hdr.Set("Content-Type", "application/json")
		w.WriteHeader(a.a.Status)
		fmt.Fprintf(w, `{"error":%q}`, http.StatusText(a.a.Status))
	case NotJSON:
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("Service temporarily unavailable, please try again later.\n"))
	case HTMLPage:
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!DOCTYPE html>\n<html><head><title>Error</title></head><body><h1>Something went wrong</h1><p>The page you requested is unavailable.</p></body></html>\n"))
	}
}

func (a *AgentHandle) redirect(w http.ResponseWriter, location string) {
	code := a.a.RedirectStatus
	if code == 0 {
		code = http.StatusFound
	}
	// Set verbatim: http.Redirect would clean and escape hostile targets.
	w.Header().Set("Location", location)
	w.WriteHeader(code)
}

// serveConditional answers with validators and honours If-None-Match and
// If-Modified-Since (A2A §8.6; a2a-js style weak ETag).
func (a *AgentHandle) serveConditional(w http.ResponseWriter, r *http.Request, body []byte, version int) {
	sum := sha256.Sum256(body)
	etag := `W/"` + hex.EncodeToString(sum[:8]) + `"`
	modified := a.host.fleet.start.Add(time.Duration(version) * time.Second)
	hdr := w.Header()
	hdr.Set("ETag", etag)
	hdr.Set("Last-Modified", modified.Format(http.TimeFormat))
	hdr.Set("Cache-Control", "public, max-age=3600")
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etagMatches(inm, etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !modified.After(ims) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", "application/json")
	w.Write(body)
}

// etagMatches is the weak comparison of RFC 9110 §8.8.3.2.
func etagMatches(list, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

func (a *AgentHandle) serveChanging(w http.ResponseWriter, r *http.Request) {
	n := a.reqs.n.Load() // this request's number, counted on entry
	version := int(n-1) / a.a.ChangeEvery
	a.mu.Lock()
	if version != a.version || a.body == nil {
		if body, err := a.cardVersion(version); err == nil {
			a.version, a.body = version, body
		}
	}
	body, v := a.body, a.version
	a.mu.Unlock()
	a.serveConditional(w, r, body, v)
}

func (a *AgentHandle) cardVersion(version int) ([]byte, error) {
	v := fmt.Sprintf("1.%d.0", version)
	return withVersion(a.a.Card, v)
}

func (a *AgentHandle) drip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	t := time.NewTicker(a.host.fleet.opts.DripInterval)
	defer t.Stop()
	for i := range len(a.a.Card) {
		select {
		case <-r.Context().Done():
			return
		case <-a.host.fleet.closed:
			return
		case <-t.C:
		}
		if _, err := w.Write(a.a.Card[i : i+1]); err != nil {
			return
		}
		fl.Flush()
	}
}

func (a *AgentHandle) huge(w http.ResponseWriter, r *http.Request) {
	size := a.a.Size
	if size <= 0 {
		size = 2 << 30
	}
	head, tail := []byte(`{"name":"huge","padding":"`), []byte(`"}`)
	if a.a.DeclareLength {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.Header().Set("Content-Type", "application/json")
	pad := bytes.Repeat([]byte("a"), 32<<10)
	w.Write(head)
	for left := size - int64(len(head)+len(tail)); left > 0; {
		chunk := pad[:min(int64(len(pad)), left)]
		if _, err := w.Write(chunk); err != nil || r.Context().Err() != nil {
			return
		}
		left -= int64(len(chunk))
	}
	w.Write(tail)
}

var (
	bombOnce   sync.Once
	bombMember []byte // one gzip member: 1 MiB of JSON whitespace
)

const bombUnit = 1 << 20

// bombData is the bomb's gzip member, compressed once per process.
func bombData() []byte {
	bombOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(bytes.Repeat([]byte(" "), bombUnit))
		zw.Close()
		bombMember = buf.Bytes()
	})
	return bombMember
}

// bomb streams gzip members of 1 MiB of spaces each (about 1 KiB
// compressed); a gzip reader inflates the concatenation as one stream.
func (a *AgentHandle) bomb(w http.ResponseWriter, r *http.Request) {
	member := bombData()
	size := a.a.Size
	if size <= 0 {
		size = 10 << 30
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Encoding", "gzip")
	for sent := int64(0); sent < size; sent += bombUnit {
		if _, err := w.Write(member); err != nil || r.Context().Err() != nil {
			return
		}
	}
}
