package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/verifier"
)

const crawlUsage = "Usage: cardex crawl [--json] [--catalog] [--allow-networks CIDR,…] [--allow-insecure-http] [--ca-file PEM] [--timeout 10s] URL"

// crawlReport is the --json output: one object per run.
type crawlReport struct {
	CardURL    string              `json:"cardUrl"` // the target as read (a bare host means its well-known URL)
	URL        string              `json:"url"`     // where the answer came from, after same-origin redirects
	HTTPStatus int                 `json:"httpStatus"`
	Bytes      int64               `json:"bytes"` // read from the network: headers and bodies of every request, before decompression
	DurationMS int64               `json:"durationMs"`
	Valid      bool                `json:"valid"` // a valid card was fetched (exit 0)
	Error      *crawlError         `json:"error"`
	Card       *crawlCard          `json:"card"`
	Problems   []agentcard.Problem `json:"problems"`
	Verdict    *verifier.Verdict   `json:"verdict"`
}

type crawlError struct {
	Class   string `json:"class"` // docs/security.md "Network policy" error classes
	Message string `json:"message"`
}

type crawlCard struct {
	Name             string   `json:"name"`
	Version          string   `json:"version"`
	Shape            string   `json:"shape"`
	ProtocolVersions []string `json:"protocolVersions"`
	Skills           int      `json:"skills"`
}

// runCrawl is `cardex crawl`: one fetch, parse and verify under the
// production network policy plus the allowances given; nothing is stored
// (docs/design.md "CLI", docs/configuration.md exit codes).
func runCrawl(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	asCatalog := fs.Bool("catalog", false, "URL is an AI Catalog (a URL on /.well-known/ai-catalog.json is one anyway; a bare host means that path): crawl it and its nested catalogs and print what Cardex makes of each entry")
	var np netPolicyFlags
	np.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), crawlUsage)
		fmt.Fprintln(fs.Output(), "Fetches, parses and verifies one agent card as the crawler would; nothing is stored.")
		fmt.Fprintln(fs.Output(), "A bare host means its /.well-known/agent-card.json, with the legacy agent.json fallback.")
		fmt.Fprintln(fs.Output(), "With --catalog, the URL is an AI Catalog: exit 0 when it was read (whatever its entries are), 1 when not.")
		fmt.Fprintln(fs.Output(), "Exit status: 0 fetched a valid card, 1 fetch or card failed, 2 bad flags.")
		fs.PrintDefaults()
	}
	pos, code := parseFlagsAndArgs(fs, args)
	if code >= 0 {
		return code
	}
	if code, ok := oneArgument(fs, "cardex crawl", "a URL is required", pos); !ok {
		return code
	}
	raw := pos[0]
	f, err := np.fetcher()
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex crawl: %v\n", err)
		return exitUsage
	}
	defer f.Close()
	if *asCatalog || aicatalog.NamesCatalog(raw) {
		return crawlCatalog(ctx, e, f, raw, *asJSON)
	}
	var rep crawlReport
	target, err := crawler.TargetFor(raw, f.Policy())
	var fe *fetch.FetchError
	switch {
	case errors.As(err, &fe):
		// Refused by the network policy before anything was resolved,
		// exactly as POST /agents refuses it: a failed fetch, not bad usage.
		rep = report(crawler.Target{CardURL: raw}, crawler.Outcome{Err: err})
	case err != nil:
		fmt.Fprintf(e.stderr, "cardex crawl: %v\n", err)
		return exitUsage
	default:
		p := &crawler.Pipeline{Fetcher: f, Verifier: verifier.New(verifier.Config{Fetcher: f})}
		rep = report(target, p.Crawl(ctx, target))
	}
	if *asJSON {
		if err := json.NewEncoder(e.stdout).Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "cardex crawl: %v\n", err)
			return exitFail
		}
	} else {
		printCrawl(e.stdout, rep)
	}
	if !rep.Valid {
		return exitFail
	}
	return exitOK
}

// catalogReport is crawl --catalog --json: the catalog's URL, the error of
// its root document (null when it was read) and the crawl's trace.
type catalogReport struct {
	CatalogURL string                `json:"catalogUrl"`
	Error      *crawlError           `json:"error"`
	Crawl      *crawler.CatalogCrawl `json:"crawl"`
}

// crawlCatalog is `cardex crawl --catalog`: the catalog crawl the registry
// runs (docs/discovery.md), under the same card-URL rule and network
// policy, nothing stored. Exit 0 when the catalog was read.
func crawlCatalog(ctx context.Context, e *env, f *fetch.Fetcher, raw string, asJSON bool) int {
	rep := catalogReport{CatalogURL: raw}
	target, err := crawler.TargetFor(raw, f.Policy())
	var fe *fetch.FetchError
	switch {
	case errors.As(err, &fe):
		class, msg := fetchErrorParts(err)
		rep.Error = &crawlError{Class: class, Message: msg}
	case err != nil:
		fmt.Fprintf(e.stderr, "cardex crawl: %v\n", err)
		return exitUsage
	default:
		rep.CatalogURL = target.CardURL
		if target.BareHost {
			origin, _ := fetch.OriginOf(target.CardURL)
			rep.CatalogURL = origin + aicatalog.WellKnownPath
		}
		rep.Crawl, err = crawler.CatalogCrawler{Fetcher: f}.CrawlCatalog(ctx, rep.CatalogURL, "")
		if err != nil {
			class, msg := fetchErrorParts(err)
			rep.Error = &crawlError{Class: class, Message: msg}
		}
	}
	if asJSON {
		if err := json.NewEncoder(e.stdout).Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "cardex crawl: %v\n", err)
			return exitFail
		}
	} else {
		printCatalog(e.stdout, rep)
	}
	if rep.Error != nil {
		return exitFail
	}
	return exitOK
}

func printCatalog(w io.Writer, r catalogReport) {
	fmt.Fprintf(w, "catalog    %s\n", r.CatalogURL)
	if r.Error != nil {
		fmt.Fprintf(w, "error      %s: %s\n", r.Error.Class, r.Error.Message)
	}
	if r.Crawl == nil {
		return
	}
	fmt.Fprintf(w, "domain     %s\n", r.Crawl.Domain)
	if d := r.Crawl.Superseded; d != nil {
		// The host's ARD document was not there (docs/discovery.md
		// "Resolving a host").
		fmt.Fprintf(w, "not there  %s — %s\n", d.URL, d.Error)
	}
	for _, d := range r.Crawl.Documents {
		fmt.Fprintf(w, "document   %s depth %d, %d entries", d.URL, d.Depth, d.Entries)
		if d.Error != "" {
			fmt.Fprintf(w, " — %s", d.Error)
		}
		fmt.Fprintln(w)
	}
	for _, en := range r.Crawl.Entries {
		fmt.Fprintf(w, "entry      %s #%d %q: %s", en.Catalog, en.Index, en.Identifier, en.Outcome)
		if en.Agent != "" {
			fmt.Fprintf(w, " as %s", en.Agent)
		}
		if en.Message != "" {
			fmt.Fprintf(w, " — %s", en.Message)
		}
		fmt.Fprintln(w)
	}
	if r.Crawl.Truncated {
		fmt.Fprintln(w, "truncated  the crawl stopped at its limits")
	}
}

func report(t crawler.Target, out crawler.Outcome) crawlReport {
	rep := crawlReport{
		CardURL: t.CardURL, URL: out.URL, HTTPStatus: out.Status, Bytes: out.Bytes,
		DurationMS: out.Duration.Milliseconds(), Problems: out.Problems,
	}
	if rep.Problems == nil {
		rep.Problems = []agentcard.Problem{}
	}
	if out.Err != nil {
		class, msg := fetchErrorParts(out.Err)
		rep.Error = &crawlError{Class: class, Message: msg}
		return rep
	}
	if out.Parsed == nil {
		// Unreachable today (the pipeline turns a 304 to an unconditional
		// request into an error), but never dereference a missing card.
		rep.Error = &crawlError{Class: fetch.ClassHTTPStatus, Message: "the answer carried no card"}
		return rep
	}
	c := out.Parsed.Card
	rep.Valid = true
	rep.Card = &crawlCard{Name: c.Name, Version: c.Version, Shape: c.Shape, ProtocolVersions: c.ProtocolVersions, Skills: len(c.Skills)}
	if rep.Card.ProtocolVersions == nil {
		rep.Card.ProtocolVersions = []string{}
	}
	rep.Verdict = &out.Verdict
	return rep
}

func printCrawl(w io.Writer, r crawlReport) {
	fmt.Fprintf(w, "url        %s\n", r.URL)
	if r.URL != r.CardURL {
		fmt.Fprintf(w, "card url   %s\n", r.CardURL)
	}
	if r.HTTPStatus != 0 {
		fmt.Fprintf(w, "status     %d\n", r.HTTPStatus)
	}
	fmt.Fprintf(w, "bytes      %d read from the network (headers and bodies of every request, before decompression)\n", r.Bytes)
	fmt.Fprintf(w, "duration   %dms\n", r.DurationMS)
	if r.Error != nil {
		fmt.Fprintf(w, "error      %s: %s\n", r.Error.Class, r.Error.Message)
	}
	if c := r.Card; c != nil {
		pv := strings.Join(c.ProtocolVersions, ", ")
		if pv == "" {
			pv = "none declared"
		}
		fmt.Fprintf(w, "card       %q version %q, %s shape, protocol %s, %s\n", c.Name, c.Version, c.Shape, pv, plural(c.Skills, "skill"))
	}
	for _, p := range r.Problems {
		ptr := p.Pointer
		if ptr == "" {
			ptr = "/"
		}
		fmt.Fprintf(w, "problem    %s %s %s: %s\n", p.Severity, p.Code, ptr, p.Message)
	}
	if v := r.Verdict; v != nil {
		fmt.Fprintf(w, "trust      %s\n", v.Status)
		for _, s := range v.Signatures {
			fmt.Fprintf(w, "signature  #%d kid=%q alg=%s source=%s: %s", s.Index, s.Kid, s.Alg, s.KeySource, s.Status)
			if s.Profile != "" {
				fmt.Fprintf(w, " (profile %s)", s.Profile)
			}
			if s.Reason != "" {
				fmt.Fprintf(w, " — %s", s.Reason)
			}
			fmt.Fprintln(w)
		}
	}
}
