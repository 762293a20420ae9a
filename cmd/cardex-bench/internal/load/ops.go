package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Operation names, as reported.
const (
	opList     = "list"
	opSearch   = "search"
	opAgent    = "get-agent"
	opCard     = "get-card"
	opVersions = "versions"
	opChanges  = "changes"
	opSkills   = "skills"
	opTags     = "tags"
	opSubmit   = "submit"
	opApprove  = "approve"
	opCrawl    = "crawl"
)

var (
	readOps  = []string{opList, opSearch, opAgent, opCard, opVersions, opChanges, opSkills, opTags}
	writeOps = []string{opSubmit, opApprove, opCrawl}
)

// searchWords are q values: words the fleet's and the samples' cards use,
// and one that matches nothing.
var searchWords = []string{"agent", "weather", "travel", "search", "data", "booking", "nothing-matches-this"}

// agentRef is an agent seen in a list answer.
type agentRef struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	VersionSeq int64  `json:"versionSeq"`
}

// pool is what the clients learn while they run: agents seen (for reads by
// id and for writes) and tags (for filters). Lists refresh it, so the mix
// follows the catalogue as submissions and crawls change it.
type pool struct {
	mu     sync.Mutex
	agents []agentRef
	tags   []string
	seq    atomic.Int64 // submissions sent, for distinct URLs
	runID  uint32
	made   created // the agents this run submitted (cleanup.go)
}

func (p *pool) setAgents(a []agentRef) {
	if len(a) == 0 {
		return
	}
	p.mu.Lock()
	p.agents = a
	p.mu.Unlock()
}

func (p *pool) setTags(t []string) {
	if len(t) == 0 {
		return
	}
	p.mu.Lock()
	p.tags = t
	p.mu.Unlock()
}

// pick returns a random known agent, ok false when none is known.
func (p *pool) pick(r *rand.Rand) (agentRef, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.agents) == 0 {
		return agentRef{}, false
	}
	return p.agents[r.IntN(len(p.agents))], true
}

// pickWhere returns a random known agent for which keep holds.
func (p *pool) pickWhere(r *rand.Rand, keep func(agentRef) bool) (agentRef, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var c []agentRef
	for _, a := range p.agents {
		if keep(a) {
			c = append(c, a)
		}
	}
	if len(c) == 0 {
		return agentRef{}, false
	}
	return c[r.IntN(len(c))], true
}

func (p *pool) pickTag(r *rand.Rand) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tags) == 0 {
		return ""
	}
	return p.tags[r.IntN(len(p.tags))]
}

// submitURL fills the -submit-url template with the next number of the
// run: {n} is "<run>-<seq>", {ip} a 127.0.0.0/8 address unique within the
// run and offset by the run's id (nothing listens there, so a server crawls it to a connect error
// without leaving the machine).
func (p *pool) submitURL(tmpl string) string {
	n := p.seq.Add(1)
	// A bijection of n-1 onto 127.[1-254].[0-255].[1-254] (16.5 million
	// addresses; neither .0 nor .255 in the last octet).
	// Offset by the run's id so that two runs against one server (a -keep
	// run after a removing one) do not submit each other's URLs.
	i := (int64(p.runID) + n - 1) % (254 * 256 * 254)
	ip := fmt.Sprintf("127.%d.%d.%d", 1+(i/(254*256))%254, (i/254)%256, 1+i%254)
	r := strings.NewReplacer("{n}", fmt.Sprintf("%08x-%d", p.runID, n), "{ip}", ip)
	return r.Replace(tmpl)
}

func fetched(a agentRef) bool    { return a.VersionSeq > 0 }
func approvable(a agentRef) bool { return a.Status == "pending" && a.VersionSeq > 0 }

// client sends the requests of one simulated user.
type client struct {
	cfg  *Config
	http *http.Client
	pool *pool
	rand *rand.Rand
}

// result is one request's outcome; status 0 with err is a transport error.
type result struct {
	op     string
	status int
	err    error
}

// call sends method path with an optional JSON body and decodes a 2xx
// JSON answer into out when out is non-nil.
func (c *client) call(ctx context.Context, method, path string, body any, out any) (int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.URL+path, r)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if out != nil && res.StatusCode/100 == 2 {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			return res.StatusCode, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	// Drain so the connection is reused.
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

// choose picks the next operation: a write with probability WriteRatio,
// else a read, uniformly within each group.
func (c *client) choose() string {
	if c.rand.Float64() < c.cfg.WriteRatio {
		return writeOps[c.rand.IntN(len(writeOps))]
	}
	return readOps[c.rand.IntN(len(readOps))]
}

// do runs op once. An operation that needs a known agent and has none
// lists instead, so every slot of the run sends a request.
func (c *client) do(ctx context.Context, op string) result {
	a, known := c.pool.pick(c.rand)
	switch op {
	case opAgent, opVersions, opCrawl:
		if !known {
			op = opList
		}
	case opCard:
		// Only a fetched agent has a card (404 before the first fetch).
		if a, known = c.pool.pickWhere(c.rand, fetched); !known {
			op = opList
		}
	case opApprove:
		if a, known = c.pool.pickWhere(c.rand, approvable); !known {
			op = opCrawl
			if a, known = c.pool.pick(c.rand); !known {
				op = opList
			}
		}
	}
	res := result{op: op}
	esc := url.PathEscape(a.ID)
	switch op {
	case opList:
		var page struct {
			Agents []agentRef `json:"agents"`
		}
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/agents?pageSize=100", nil, &page)
		c.pool.setAgents(page.Agents)
	case opSearch:
		q := url.Values{"q": {searchWords[c.rand.IntN(len(searchWords))]}}
		if tag := c.pool.pickTag(c.rand); tag != "" && c.rand.IntN(2) == 0 {
			q.Set("tag", tag)
		}
		if c.rand.IntN(3) == 0 {
			q.Set("sort", "name")
		}
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/agents?"+q.Encode(), nil, nil)
	case opAgent:
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/agents/"+esc, nil, nil)
	case opCard:
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/agents/"+esc+"/card", nil, nil)
	case opVersions:
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/agents/"+esc+"/versions", nil, nil)
	case opChanges:
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/changes?limit=50&after="+strconv.Itoa(c.rand.IntN(100)), nil, nil)
	case opSkills:
		q := url.Values{"q": {searchWords[c.rand.IntN(len(searchWords))]}}
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/skills?"+q.Encode(), nil, nil)
	case opTags:
		var tags struct {
			Tags []struct {
				Value string `json:"value"`
			} `json:"tags"`
		}
		res.status, res.err = c.call(ctx, http.MethodGet, "/api/v1/tags?limit=50", nil, &tags)
		vals := make([]string, len(tags.Tags))
		for i, t := range tags.Tags {
			vals[i] = t.Value
		}
		c.pool.setTags(vals)
	case opSubmit:
		body := map[string]string{"cardUrl": c.pool.submitURL(c.cfg.SubmitURL)}
		var made struct {
			ID string `json:"id"`
		}
		res.status, res.err = c.call(ctx, http.MethodPost, "/api/v1/agents", body, &made)
		c.pool.made.add(made.ID)
	case opApprove:
		body := map[string]int64{"versionSeq": a.VersionSeq}
		res.status, res.err = c.call(ctx, http.MethodPost, "/api/v1/agents/"+esc+"/approve", body, nil)
	case opCrawl:
		res.status, res.err = c.call(ctx, http.MethodPost, "/api/v1/agents/"+esc+"/crawl", map[string]any{}, nil)
	}
	return res
}
