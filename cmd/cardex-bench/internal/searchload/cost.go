package searchload

import (
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
)

// The cost mode (-cost) measures what one anonymous request makes the
// server do when every approved card is as large as a card may be
// (docs/benchmarks.md "Cost of anonymous requests"): N cards of
// costCardBytes, each with 200 skills (the most a card may declare) whose
// descriptions carry the word costWord, so every search matches every
// agent, and the rest of the size in an extension's params, which cards
// carry and the index does not read. The server runs with its
// default rate limits; setup uses an admin token, every measured request
// is anonymous.

// costCardBytes is the size of each generated card: just under the
// default card size limit of 512 KiB (docs/security.md).
const costCardBytes = 510 << 10

// costWord is in every card's prose.
const costWord = "ledger"

// costCard is card i of the cost fleet, exactly costCardBytes long.
func costCard(i int) ([]byte, error) {
	r := rand.New(rand.NewPCG(uint64(i), 0x636f7374))
	word := func() string {
		const syl = "kamitorelusanipodevaxiquzeb"
		n := 2 + r.IntN(3)
		var b strings.Builder
		for range n {
			j := r.IntN(len(syl) - 1)
			b.WriteString(syl[j : j+2])
		}
		return b.String()
	}
	prose := func(n int) string {
		var b strings.Builder
		b.WriteString(costWord)
		for b.Len() < n {
			b.WriteByte(' ')
			b.WriteString(word())
		}
		return b.String()[:n]
	}
	type skill struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
		Examples    []string `json:"examples"`
	}
	build := func(padBytes int) ([]byte, error) {
		r = rand.New(rand.NewPCG(uint64(i), 0x636f7374))
		skills := make([]skill, 200)
		for j := range skills {
			skills[j] = skill{ID: fmt.Sprintf("skill-%d-%d", i, j), Name: fmt.Sprintf("Skill %d of cost agent %d", j, i),
				Description: prose(300), Tags: []string{word(), word(), word(), costWord}, Examples: []string{prose(100)}}
		}
		var pad []string
		for n := 0; n < padBytes; n += 1003 {
			pad = append(pad, prose(1000))
		}
		card := map[string]any{
			"name":        fmt.Sprintf("Cost agent %d", i),
			"description": prose(2000),
			"supportedInterfaces": []map[string]string{{"url": fmt.Sprintf("https://cost%d.example/a2a", i),
				"protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
			"provider": map[string]string{"organization": "Cost Org", "url": "https://cost.example"},
			"version":  "1.0.0",
			"capabilities": map[string]any{"streaming": true, "extensions": []map[string]any{{
				"uri": "https://cost.example/ext/bulk", "description": "bulk data", "params": map[string]any{"bulk": pad}}}},
			"defaultInputModes":  []string{"text/plain"},
			"defaultOutputModes": []string{"application/json"},
			"skills":             skills,
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(card)
		return buf.Bytes(), err
	}
	b, err := build(0)
	if err != nil {
		return nil, err
	}
	// Fill with the extension's params, then shorten until it fits.
	for pad := costCardBytes - len(b); ; pad -= 1003 {
		if b, err = build(pad); err != nil {
			return nil, err
		}
		if len(b) <= costCardBytes {
			break
		}
	}
	// Pad with trailing white space, which JSON allows, to the exact size.
	return append(b, bytes.Repeat([]byte(" "), costCardBytes-len(b))...), nil
}

func startCostFleet(cfg *Config) (*agentfleet.Fleet, []string, error) {
	f, err := agentfleet.New(agentfleet.Options{Hosts: cfg.Hosts})
	if err != nil {
		return nil, nil, err
	}
	urls := make([]string, cfg.Agents)
	for i := range cfg.Agents {
		card, err := costCard(i)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		h, err := f.TryAdd(agentfleet.Agent{Behavior: agentfleet.Normal, Card: card})
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		urls[i] = h.URL()
	}
	return f, urls, nil
}

// costKind is one kind of anonymous request.
type costKind struct {
	Name   string
	Method string
	Path   string
	Body   string
	Header map[string]string
}

func mcpCall(name, method, params string) costKind {
	return costKind{Name: name, Method: http.MethodPost, Path: "/mcp",
		Body: `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`,
		Header: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2025-11-25"}}
}

func a2aFind(name, data string) costKind {
	return costKind{Name: name, Method: http.MethodPost, Path: "/a2a/jsonrpc",
		Body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER",` +
			`"parts":[{"data":` + data + `,"mediaType":"application/json"}]}}}`,
		Header: map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0"}}
}

func get(name, path string) costKind { return costKind{Name: name, Method: http.MethodGet, Path: path} }

// costKinds are the measured requests: each face at its default page size
// and at the largest page size it accepts.
func costKinds(agentID string) []costKind {
	return []costKind{
		get("api list, default page", "/api/v1/agents"),
		get("api list, pageSize 100", "/api/v1/agents?pageSize=100"),
		get("api search, default page", "/api/v1/agents?q="+costWord),
		get("api search, pageSize 100", "/api/v1/agents?q="+costWord+"&pageSize=100"),
		get("api skills, default page", "/api/v1/skills?q="+costWord),
		get("api skills, pageSize 100", "/api/v1/skills?q="+costWord+"&pageSize=100"),
		get("api tags", "/api/v1/tags"),
		get("api agent", "/api/v1/agents/"+agentID),
		get("api agent card", "/api/v1/agents/"+agentID+"/card"),
		get("web catalogue", "/"),
		get("web search", "/?q="+costWord),
		get("web agent page", "/agents/"+agentID),
		mcpCall("mcp initialize", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cost","version":"1"}}`),
		mcpCall("mcp tools/list", "tools/list", `{}`),
		mcpCall("mcp list_tags", "tools/call", `{"name":"list_tags","arguments":{}}`),
		mcpCall("mcp search_agents, default page", "tools/call", `{"name":"search_agents","arguments":{"q":"`+costWord+`"}}`),
		mcpCall("mcp search_agents, pageSize 100", "tools/call", `{"name":"search_agents","arguments":{"q":"`+costWord+`","pageSize":100}}`),
		mcpCall("mcp list_skills, pageSize 100", "tools/call", `{"name":"list_skills","arguments":{"q":"`+costWord+`","pageSize":100}}`),
		mcpCall("mcp get_agent", "tools/call", `{"name":"get_agent","arguments":{"id":"`+agentID+`"}}`),
		a2aFind("a2a find-agents, default page", `{"q":"`+costWord+`"}`),
		a2aFind("a2a find-agents, pageSize 100", `{"q":"`+costWord+`","pageSize":100}`),
	}
}

// costResult is what one kind of request cost the server.
type costResult struct {
	Kind   string  `json:"kind"`
	Status int     `json:"status"`
	Bytes  int     `json:"bytes"`
	CPUms  float64 `json:"cpuMs"`
	Wallms float64 `json:"wallMs"`
}

// loadResult is the looping-clients run.
type loadResult struct {
	Clients        int            `json:"clients"`
	Seconds        float64        `json:"seconds"`
	Requests       int64          `json:"requests"`
	Statuses       map[string]int `json:"statuses"`
	RSSStartMiB    int64          `json:"rssStartMiB"`
	RSSMaxMiB      int64          `json:"rssMaxMiB"`
	CPUSeconds     float64        `json:"serverCpuSeconds"`
	SmallQueries   int            `json:"smallQueries"`
	SmallNonOK     int            `json:"smallNonOk"`
	SmallP50ms     float64        `json:"smallP50ms"`
	SmallP99ms     float64        `json:"smallP99ms"`
	LoadAvgAtStart float64        `json:"loadAvgAtStart"`
}

type costReport struct {
	Agents    int          `json:"agents"`
	CardBytes int          `json:"cardBytes"`
	Setup     setupTimes   `json:"setup"`
	Requests  []costResult `json:"requests"`
	Load      loadResult   `json:"load"`
	Started   time.Time    `json:"started"`
	Machine   string       `json:"machine"`
}

// clientFrom is an HTTP client whose connections leave from the loopback
// address src, so each client has its own per-address read budget.
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
}

// send makes one request of kind k and returns its status and body size.
func send(ctx context.Context, c *http.Client, base string, k costKind) (int, int, error) {
	var body io.Reader
	if k.Body != "" {
		body = strings.NewReader(k.Body)
	}
	req, err := http.NewRequestWithContext(ctx, k.Method, base+k.Path, body)
	if err != nil {
		return 0, 0, err
	}
	for h, v := range k.Header {
		req.Header.Set(h, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, int(n), err
}

// measureCost runs the cost mode.
func measureCost(ctx context.Context, cfg *Config, log io.Writer) (*costReport, error) {
	rep := &costReport{Agents: cfg.Agents, CardBytes: costCardBytes, Started: time.Now().UTC(), Machine: machine()}
	tmp, err := os.MkdirTemp("", "cardex-costload-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := cfg.Cardex
	if bin == "" {
		fmt.Fprintln(log, "building cmd/cardex")
		if bin, err = bench.Build(ctx, tmp, false); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(log, "starting a fleet of %d cards of %d bytes\n", cfg.Agents, costCardBytes)
	fleet, urls, err := startCostFleet(cfg)
	if err != nil {
		return nil, err
	}
	defer fleet.Close()
	// The server's default read limit: anonymous clients are limited as
	// in production.
	s, err := startServer(ctx, bin, tmp, "--read-rate", "50")
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	setupCtx, cancel := context.WithTimeout(ctx, cfg.Setup)
	rep.Setup, err = populate(setupCtx, s, urls, false, log)
	cancel()
	if err != nil {
		return rep, err
	}
	var first struct {
		Agents []struct {
			ID string `json:"id"`
		} `json:"agents"`
	}
	if code, err := call(ctx, &http.Client{Timeout: time.Minute}, http.MethodGet, s.Base+"/api/v1/agents?pageSize=1", "", nil, &first); err != nil || code != http.StatusOK || len(first.Agents) != 1 {
		return rep, fmt.Errorf("reading one agent: status %d, %v", code, err)
	}
	pid := s.Cmd.Process.Pid
	kinds := costKinds(first.Agents[0].ID)
	c := clientFrom("127.0.0.9")
	for _, k := range kinds {
		// The read budget charges pages by size (docs/security.md "Rate
		// limits"): two seconds between kinds refill it, so each kind is
		// measured on its own, not refused for the one before.
		select {
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-time.After(2 * time.Second):
		}
		// One warm-up, then reps requests one after the other; the CPU is
		// the server's (utime+stime, 10 ms ticks) over the reps.
		if _, _, err := send(ctx, c, s.Base, k); err != nil {
			return rep, fmt.Errorf("%s: %w", k.Name, err)
		}
		const reps = 5
		cpu0, _, _ := bench.ProcStat(pid)
		start := time.Now()
		res := costResult{Kind: k.Name}
		for range reps {
			code, n, err := send(ctx, c, s.Base, k)
			if err != nil {
				return rep, fmt.Errorf("%s: %w", k.Name, err)
			}
			res.Status, res.Bytes = code, n
		}
		cpu1, _, _ := bench.ProcStat(pid)
		res.CPUms = float64((cpu1 - cpu0).Microseconds()) / 1000 / reps
		res.Wallms = float64(time.Since(start).Microseconds()) / 1000 / reps
		rep.Requests = append(rep.Requests, res)
		fmt.Fprintf(log, "%s: %d, %d bytes, %.1f CPU-ms\n", k.Name, res.Status, res.Bytes, res.CPUms)
	}
	rep.Load, err = costLoad(ctx, s, kinds, cfg.Duration)
	return rep, err
}

// costLoad runs six anonymous clients, each from its own loopback address,
// looping over every kind for d, while a seventh asks a one-result search
// ten times a second; it samples the server's RSS every 250 ms.
func costLoad(ctx context.Context, s *bench.Server, kinds []costKind, d time.Duration) (loadResult, error) {
	const clients = 6
	res := loadResult{Clients: clients, Seconds: d.Seconds(), Statuses: map[string]int{}, LoadAvgAtStart: bench.LoadAvg()}
	pid := s.Cmd.Process.Pid
	cpu0, rss0, err := bench.ProcStat(pid)
	if err != nil {
		return res, err
	}
	res.RSSStartMiB, res.RSSMaxMiB = rss0>>20, rss0>>20
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var requests atomic.Int64
	for i := range clients {
		wg.Go(func() {
			c := clientFrom(fmt.Sprintf("127.0.0.%d", 21+i))
			for j := i; ctx.Err() == nil; j++ {
				code, _, err := send(ctx, c, s.Base, kinds[j%len(kinds)])
				if ctx.Err() != nil {
					return
				}
				requests.Add(1)
				key := fmt.Sprint(code)
				if err != nil {
					key = "transport error"
				}
				mu.Lock()
				res.Statuses[key]++
				mu.Unlock()
			}
		})
	}
	var lat []time.Duration
	wg.Go(func() {
		c := clientFrom("127.0.0.40")
		small := get("small search", "/api/v1/agents?q="+costWord+"&pageSize=1")
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			start := time.Now()
			code, _, err := send(ctx, c, s.Base, small)
			if ctx.Err() != nil {
				return
			}
			lat = append(lat, time.Since(start))
			if err != nil || code != http.StatusOK {
				res.SmallNonOK++
			}
		}
	})
	wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, rss, err := bench.ProcStat(pid); err == nil {
				mu.Lock()
				res.RSSMaxMiB = max(res.RSSMaxMiB, rss>>20)
				mu.Unlock()
			}
		}
	})
	wg.Wait()
	cpu1, _, _ := bench.ProcStat(pid)
	res.CPUSeconds = (cpu1 - cpu0).Seconds()
	res.Requests = requests.Load()
	res.SmallQueries = len(lat)
	if len(lat) > 0 {
		slices.Sort(lat)
		res.SmallP50ms = bench.Ms(bench.Percentile(lat, 50))
		res.SmallP99ms = bench.Ms(bench.Percentile(lat, 99))
	}
	return res, nil
}

func (r *costReport) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return bench.WriteJSON(w, r)
	}
	fmt.Fprintf(w, "%d approved cards of %d bytes (%s); setup: crawl+approve %s, index catch-up %s\n\n", r.Agents, r.CardBytes,
		r.Machine, r.Setup.CrawlApprove.Round(time.Second), r.Setup.Index.Round(time.Second))
	fmt.Fprintln(w, "| anonymous request | status | response bytes | server CPU-ms | wall ms |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, x := range r.Requests {
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %.0f |\n", x.Kind, x.Status, x.Bytes, x.CPUms, x.Wallms)
	}
	l := r.Load
	var codes []string
	for k, v := range l.Statuses {
		codes = append(codes, fmt.Sprintf("%s×%d", k, v))
	}
	slices.Sort(codes)
	fmt.Fprintf(w, "\n%d looping anonymous clients for %.0f s: %d requests (%s), server %.1f CPU-s, RSS %d → max %d MiB (+%d); "+
		"small searches from another client: %d, non-200 %d, p50 %.1f ms, p99 %.1f ms; load average at start %.1f\n",
		l.Clients, l.Seconds, l.Requests, strings.Join(codes, ", "), l.CPUSeconds, l.RSSStartMiB, l.RSSMaxMiB, l.RSSMaxMiB-l.RSSStartMiB,
		l.SmallQueries, l.SmallNonOK, l.SmallP50ms, l.SmallP99ms, l.LoadAvgAtStart)
	return nil
}
