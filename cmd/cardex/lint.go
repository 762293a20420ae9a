package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/strictjson"
)

// cardFetcher fetches the body of a card URL. The crawler's hardened client
// (SSRF guard, limits of docs/security.md "Network policy") is the one to wire in; lint never
// opens connections of its own.
type cardFetcher func(ctx context.Context, url string) ([]byte, error)

// lintCommand is `cardex lint [--json] CARD.json|URL|-` (docs/configuration.md).
type lintCommand struct {
	fetch cardFetcher // nil: the crawler's hardened fetcher under the network flags
}

func newLintCommand(fetch cardFetcher) *lintCommand { return &lintCommand{fetch: fetch} }

const lintUsage = "Usage: cardex lint [--json] [--allow-networks CIDR,…] [--allow-insecure-http] [--ca-file PEM] [--timeout 10s] CARD.json|URL|-"

// lintReport is the --json output.
type lintReport struct {
	Valid    bool                `json:"valid"`
	Problems []agentcard.Problem `json:"problems"`
}

func (l *lintCommand) run(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print {\"valid\", \"problems\"} as JSON")
	var np netPolicyFlags
	np.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), lintUsage)
		fmt.Fprintln(fs.Output(), "Checks an agent card (a file, - for stdin, or a URL) and lists its problems.")
		fmt.Fprintln(fs.Output(), "A URL is fetched like the crawler does: https on port 443 to public addresses only, unless the network flags allow more.")
		fmt.Fprintln(fs.Output(), "Exit status: 0 no errors (warnings allowed), 1 errors, 2 unreadable input or bad flags.")
		fs.PrintDefaults()
	}
	pos, code := parseFlagsAndArgs(fs, args)
	if code >= 0 {
		return code
	}
	if code, ok := oneArgument(fs, "cardex lint", "exactly one card (file, - or URL) is required", pos); !ok {
		return code
	}
	target := pos[0]
	data, opts, err := l.read(ctx, e, target, &np)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex lint: %v\n", err)
		return exitUsage
	}
	rep := lintReport{Valid: true}
	shape := ""
	parsed, err := agentcard.Parse(data, opts)
	var inv *agentcard.InvalidError
	switch {
	case err == nil:
		rep.Problems = parsed.Problems
		shape = parsed.Card.Shape
	case errors.As(err, &inv):
		rep.Valid = false
		rep.Problems = inv.Problems
	default:
		fmt.Fprintf(e.stderr, "cardex lint: %v\n", err)
		return exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "cardex lint: %v\n", err)
			return exitUsage
		}
	} else {
		printLintText(e.stdout, rep, shape)
	}
	if !rep.Valid {
		return exitFail
	}
	return exitOK
}

// read returns the card bytes. It reads one byte more than the card limit
// so an oversized card is reported by Parse as "too-large", not cut short.
func (l *lintCommand) read(ctx context.Context, e *env, target string, np *netPolicyFlags) ([]byte, agentcard.Options, error) {
	limit := int64(strictjson.DefaultLimits.MaxBytes) + 1
	lower := strings.ToLower(target)
	switch {
	case strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://"):
		fetch := l.fetch
		if fetch == nil {
			f, err := np.fetcher()
			if err != nil {
				return nil, agentcard.Options{}, err
			}
			defer f.Close()
			fetch = cardFetcherFor(f)
		}
		data, err := fetch(ctx, target)
		if err != nil {
			return nil, agentcard.Options{}, fmt.Errorf("fetch %s: %s", target, describeFetchError(err))
		}
		return data, agentcard.Options{CardURL: target}, nil
	case target == "-":
		data, err := io.ReadAll(io.LimitReader(e.stdin, limit))
		return data, agentcard.Options{}, err
	}
	f, err := os.Open(target)
	if err != nil {
		return nil, agentcard.Options{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, agentcard.Options{}, fmt.Errorf("read %s: %w", target, err)
	}
	return data, agentcard.Options{}, nil
}

// printLintText prints one line per problem, `severity code pointer:
// message`, then a summary line. The root pointer "" prints as "/".
func printLintText(w io.Writer, rep lintReport, shape string) {
	errs, warns := 0, 0
	for _, p := range rep.Problems {
		printLintLine(w, p)
		if p.Severity == agentcard.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	verdict := "invalid card"
	if rep.Valid {
		verdict = "valid " + shape + " card"
	}
	fmt.Fprintf(w, "%s: %s, %s\n", verdict, plural(errs, "error"), plural(warns, "warning"))
}

// printLintLine prints one problem as `severity code pointer: message`.
func printLintLine(w io.Writer, p agentcard.Problem) {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	fmt.Fprintf(w, "%s %s %s: %s\n", p.Severity, p.Code, ptr, p.Message)
}

// lintRefuses runs lint's rules (agentcard.Parse, as `cardex lint` does)
// on a card about to be signed and prints its errors to w. A signature
// over a card lint rejects ({}, a card without any endpoint) would vouch
// for something no client can use, so `cardex sign` refuses it
// (docs/publishing.md). It reports true when the card must not be signed.
func lintRefuses(w io.Writer, cmd, name string, card []byte) bool {
	_, err := agentcard.Parse(card, agentcard.Options{})
	if err == nil {
		return false
	}
	var inv *agentcard.InvalidError
	if !errors.As(err, &inv) {
		fmt.Fprintf(w, "%s: %s: %v\n", cmd, name, err)
		return true
	}
	errs := 0
	for _, p := range inv.Problems {
		if p.Severity == agentcard.SeverityError {
			errs++
		}
	}
	fmt.Fprintf(w, "%s: %s: not signed: `cardex lint` finds %s:\n", cmd, name, plural(errs, "error"))
	for _, p := range inv.Problems {
		if p.Severity == agentcard.SeverityError {
			printLintLine(w, p)
		}
	}
	return true
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
