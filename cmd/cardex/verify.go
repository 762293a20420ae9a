package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/strictjson"
	"github.com/cardexhq/cardex/verifier"
)

// verifyCmd is `cardex verify`. Its fields are the outside world it needs,
// wired in the commands table (nil fields use the defaults below).
type verifyCmd struct {
	// cards fetches a card URL; nil: the crawler's hardened fetcher under
	// the network flags (netpolicy.go).
	cards cardFetcher
	// keys builds the key set fetcher; nil: the same hardened fetcher, so
	// key sets get the dial-time address check too (docs/security.md "Network policy").
	keys func(allowHTTP bool) verifier.KeySetFetcher
}

func (c *verifyCmd) run(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet("cardex verify", e)
	jwksFile := fs.String("jwks", "", "JWKS `FILE` of trusted (pinned) keys")
	origin := fs.String("origin", "", "agent origin `URL` whose jku and /.well-known/jwks.json key sets may be fetched")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	var np netPolicyFlags
	np.register(fs)
	allowHTTP := &np.insecure
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: cardex verify [--jwks FILE] [--origin URL] [--json] [--allow-networks CIDR,…] [--allow-insecure-http] [--ca-file PEM] [--timeout 10s] CARD.json|URL|-")
		fmt.Fprintln(e.stderr, "Exit status: 0 verified, 1 not verified, 2 bad input.")
		fs.PrintDefaults()
	}
	pos, code := parseFlagsAndArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "cardex verify: exactly one card (file, URL or -) is required")
		fs.Usage()
		return exitUsage
	}
	opts := verifier.VerifyOptions{}
	if *jwksFile != "" {
		raw, err := os.ReadFile(*jwksFile)
		if err != nil {
			fmt.Fprintf(e.stderr, "cardex verify: --jwks: %v\n", err)
			return exitUsage
		}
		if err := verifier.CheckKeySet(raw); err != nil {
			fmt.Fprintf(e.stderr, "cardex verify: --jwks %s: %v\n", *jwksFile, err)
			return exitUsage
		}
		opts.Pinned = raw
	}
	if *origin != "" {
		o, err := verifier.NormalizeOrigin(*origin)
		if err != nil {
			fmt.Fprintf(e.stderr, "cardex verify: --origin %q: %v\n", *origin, err)
			return exitUsage
		}
		opts.Origin = o
	}

	if opts.Origin == "" && isURL(pos[0]) {
		// A card fetched by URL is verified against the keys of its origin.
		o, err := verifier.NormalizeOrigin(pos[0])
		if err != nil {
			fmt.Fprintf(e.stderr, "cardex verify: %s: %v\n", pos[0], err)
			return exitUsage
		}
		opts.Origin = o
	}
	if strings.HasPrefix(opts.Origin, "http://") && !*allowHTTP {
		fmt.Fprintf(e.stderr, "cardex verify: origin %s is http; pass --allow-insecure-http to fetch its key sets\n", opts.Origin)
		return exitUsage
	}
	var hardened *fetch.Fetcher
	if (c.cards == nil && isURL(pos[0])) || (c.keys == nil && opts.Origin != "") {
		f, err := np.fetcher()
		if err != nil {
			fmt.Fprintf(e.stderr, "cardex verify: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		hardened = f
	}
	raw, err := c.readCard(ctx, e, pos[0], hardened)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex verify: %v\n", err)
		return exitUsage
	}
	card, err := strictjson.Parse(raw)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex verify: %s is not valid JSON: %v\n", pos[0], err)
		return exitUsage
	}
	if card.Kind != strictjson.Object {
		fmt.Fprintf(e.stderr, "cardex verify: %s is a JSON %s, not an agent card object\n", pos[0], card.Kind)
		return exitUsage
	}
	cfg := verifier.Config{}
	if opts.Origin != "" {
		if c.keys != nil {
			cfg.Fetcher = c.keys(*allowHTTP)
		} else {
			cfg.Fetcher = hardened
		}
	}
	verdict := verifier.New(cfg).Verify(ctx, card, opts)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(verdict); err != nil {
			fmt.Fprintf(e.stderr, "cardex verify: %v\n", err)
			return exitFail
		}
	} else {
		printVerdict(e.stdout, verdict)
	}
	reportLintErrors(e.stderr, raw)
	if verdict.Verified() {
		return exitOK
	}
	return exitFail
}

// reportLintErrors notes on stderr the lint errors of a document whose
// signatures were just checked: a signature can be valid over a document
// that is no listable agent card (no name, no A2A endpoint; docs/lint.md).
// The exit status stays the verdict's.
func reportLintErrors(w io.Writer, raw []byte) {
	var inv *agentcard.InvalidError
	if _, err := agentcard.Parse(raw, agentcard.Options{}); !errors.As(err, &inv) {
		return
	}
	for _, p := range inv.Problems {
		if p.Severity == agentcard.SeverityError {
			fmt.Fprintf(w, "cardex verify: lint error %s %s: %s (not a listable agent card; see cardex lint)\n", p.Code, orDash(p.Pointer), p.Message)
		}
	}
}

// readCard reads the card from a file, stdin ("-") or a URL.
func (c *verifyCmd) readCard(ctx context.Context, e *env, arg string, hardened *fetch.Fetcher) ([]byte, error) {
	switch {
	case arg == "-":
		return io.ReadAll(io.LimitReader(e.stdin, int64(strictjson.DefaultLimits.MaxBytes)+1))
	case isURL(arg):
		fetch := c.cards
		if fetch == nil {
			fetch = cardFetcherFor(hardened)
		}
		data, err := fetch(ctx, arg)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %s", arg, describeFetchError(err))
		}
		return data, nil
	}
	return os.ReadFile(arg)
}

func isURL(arg string) bool {
	lower := strings.ToLower(arg)
	return strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://")
}

func printVerdict(w io.Writer, v verifier.Verdict) {
	for _, s := range v.Signatures {
		fmt.Fprintf(w, "signature %d: %s\n", s.Index, s.Status)
		fmt.Fprintf(w, "  kid:        %q\n", s.Kid)
		fmt.Fprintf(w, "  alg:        %s\n", orDash(s.Alg))
		fmt.Fprintf(w, "  key source: %s\n", s.KeySource)
		fmt.Fprintf(w, "  profile:    %s\n", orDash(s.Profile))
		fmt.Fprintf(w, "  reason:     %s\n", s.Reason)
		if len(s.Unsigned) > 0 {
			fmt.Fprintf(w, "  not covered by the signature, ignored: %s\n", strings.Join(s.Unsigned, ", "))
		}
	}
	switch {
	case v.Status == verifier.StatusUnsigned:
		fmt.Fprintln(w, "card: unsigned (no signatures)")
	case v.Profile != "":
		fmt.Fprintf(w, "card: %s (profile %s)\n", v.Status, v.Profile)
	default:
		fmt.Fprintf(w, "card: %s\n", v.Status)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
