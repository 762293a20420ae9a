package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cardexhq/cardex/registry"
)

const tokenUsage = `Usage:
  cardex token create --role admin|publisher|reader [--name N] [--host H]… [--groups G1,G2] [--expires 90d] [--json]
  cardex token list [--json]
  cardex token revoke ID|NAME
Every subcommand also takes --data DIR and --database-url URL.`

// runToken is `cardex token` (docs/api.md). It opens the store
// without the server lock, so it may run beside a server on the same
// SQLite file.
func runToken(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, tokenUsage)
		return exitUsage
	}
	switch args[0] {
	case "create":
		return runTokenCreate(ctx, e, args[1:])
	case "list":
		return runTokenList(ctx, e, args[1:])
	case "revoke":
		return runTokenRevoke(ctx, e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(e.stdout, tokenUsage)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "cardex token: unknown subcommand %q\n%s\n", args[0], tokenUsage)
	return exitUsage
}

// hostList is the repeatable --host flag.
type hostList []string

func (h *hostList) String() string     { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error { *h = append(*h, v); return nil }

// parseExpiry reads "90d", "12h", "30m" (a Go duration, plus days).
func parseExpiry(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.Atoi(n)
		if err != nil || d <= 0 || d > 36500 {
			return 0, fmt.Errorf("--expires %q: want a positive number of days such as 90d", s)
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--expires %q: want a duration such as 90d or 12h", s)
	}
	return d, nil
}

// tokenFlags parses a token subcommand's flags, which may come before or
// after its arguments (`token revoke NAME --data DIR`); ok is false when
// the command should exit with code.
func tokenFlags(e *env, name string, args []string, extra func(fs *flag.FlagSet)) (sf *storeFlags, fs *flag.FlagSet, pos []string, code int, ok bool) {
	return storeSubFlags(e, "token", tokenUsage, name, args, extra)
}

// storeSubFlags parses the flags of `cardex CMD NAME` (a store
// subcommand: token, catalog), which may come before or after its
// arguments; ok is false when the command should exit with code.
func storeSubFlags(e *env, cmd, usage, name string, args []string, extra func(fs *flag.FlagSet)) (sf *storeFlags, fs *flag.FlagSet, pos []string, code int, ok bool) {
	fs = flag.NewFlagSet("cardex "+cmd+" "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	sf = &storeFlags{}
	sf.register(fs, e.getenv)
	if extra != nil {
		extra(fs)
	}
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usage)
		fs.PrintDefaults()
	}
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, nil, exitOK, false
			}
			return nil, nil, nil, exitUsage, false
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if err := sf.validate(); err != nil {
		fmt.Fprintf(e.stderr, "cardex %s %s: %v\n", cmd, name, err)
		return nil, nil, nil, exitUsage, false
	}
	return sf, fs, pos, 0, true
}

// openService opens the store a server created; code is the exit code
// when it cannot.
func openService(ctx context.Context, e *env, cmd string, sf *storeFlags) (svc *registry.Service, closeStore func(), code int) {
	return openStoreService(ctx, e, "token "+cmd, sf)
}

// openStoreService is openService for `cardex CMD` (cmd is "token list",
// "catalog pause", …).
func openStoreService(ctx context.Context, e *env, cmd string, sf *storeFlags) (svc *registry.Service, closeStore func(), code int) {
	store, err := sf.openExisting(ctx, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex %s: %v\n", cmd, err)
		return nil, nil, storeExitCode(err)
	}
	return registry.NewService(store, registry.ServiceConfig{}), func() { store.Close() }, exitOK
}

func runTokenCreate(ctx context.Context, e *env, args []string) int {
	var (
		role, name, expires string
		groups              string
		hosts               hostList
		asJSON              bool
	)
	sf, fs, pos, code, ok := tokenFlags(e, "create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&role, "role", "", "token role: admin, publisher or reader (required)")
		fs.StringVar(&name, "name", "", "token name (default {role}-{id})")
		fs.Var(&hosts, "host", "host a publisher token may act on (repeatable)")
		fs.StringVar(&groups, "groups", "", `comma-separated groups a reader or publisher token holds: it sees the agents of visibility "groups" for one of them`)
		fs.StringVar(&expires, "expires", "", "lifetime such as 90d or 12h (default: never)")
		fs.BoolVar(&asJSON, "json", false, `print {"id","name","role","hosts","groups","expiresAt","token"}`)
	})
	if !ok {
		return code
	}
	req := registry.TokenRequest{Role: registry.Role(role), Name: name, Hosts: hosts}
	if groups != "" {
		// Names as given, compared exactly (case-sensitive); a group name
		// holds no comma (registry.NormalizeGroups).
		for _, g := range strings.Split(groups, ",") {
			req.Groups = append(req.Groups, strings.TrimSpace(g))
		}
	}
	usageErr := func(msg string) int {
		fmt.Fprintln(e.stderr, "cardex token create:", msg)
		fs.Usage()
		return exitUsage
	}
	switch {
	case len(pos) > 0:
		return usageErr("takes no arguments")
	case role == "":
		return usageErr("--role is required")
	}
	if expires != "" {
		d, err := parseExpiry(expires)
		if err != nil {
			return usageErr(err.Error())
		}
		at := time.Now().Add(d).UTC()
		req.ExpiresAt = &at
	}
	svc, closeStore, code := openService(ctx, e, "create", sf)
	if code != exitOK {
		return code
	}
	defer closeStore()
	secret, tok, err := svc.CreateToken(ctx, req)
	var ve *registry.ValidationError
	if errors.As(err, &ve) {
		return usageErr(ve.Errors[0].Message)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex token create:", err)
		return exitFail
	}
	if asJSON {
		out := struct {
			ID        string     `json:"id"`
			Name      string     `json:"name"`
			Role      string     `json:"role"`
			Hosts     []string   `json:"hosts"`
			Groups    []string   `json:"groups"`
			ExpiresAt *time.Time `json:"expiresAt"`
			Token     string     `json:"token"`
		}{tok.ID, tok.Name, string(tok.Role), tok.Hosts, tok.Groups, tok.ExpiresAt, secret}
		b, _ := json.Marshal(out)
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	fmt.Fprintln(e.stdout, secret)
	fmt.Fprintf(e.stderr, "created %s token %q (id %s); the token is shown only once\n", tok.Role, tok.Name, tok.ID)
	return exitOK
}

func runTokenList(ctx context.Context, e *env, args []string) int {
	var asJSON bool
	sf, _, pos, code, ok := tokenFlags(e, "list", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print a JSON array")
	})
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "cardex token list: takes no arguments")
		return exitUsage
	}
	svc, closeStore, code := openService(ctx, e, "list", sf)
	if code != exitOK {
		return code
	}
	defer closeStore()
	toks, err := svc.ListTokens(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex token list:", err)
		return exitFail
	}
	if asJSON {
		b, _ := json.Marshal(toks)
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	printTokens(e.stdout, toks, time.Now())
	return exitOK
}

func printTokens(w io.Writer, toks []registry.Token, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tHOSTS\tGROUPS\tCREATED\tLAST USED\tEXPIRES\tSTATE")
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, t := range toks {
		state := "active"
		switch {
		case t.RevokedAt != nil:
			state = "revoked"
		case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
			state = "expired"
		}
		hosts := strings.Join(t.Hosts, ",")
		if t.Origin != "" {
			hosts = t.Origin // a claim's token acts on this origin only (docs/claims.md)
		}
		if hosts == "" {
			hosts = "-"
		}
		groups := strings.Join(t.Groups, ",")
		if groups == "" {
			groups = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.Role, hosts, groups,
			t.CreatedAt.UTC().Format(time.RFC3339), when(t.LastUsedAt), when(t.ExpiresAt), state)
	}
	tw.Flush()
}

func runTokenRevoke(ctx context.Context, e *env, args []string) int {
	sf, fs, pos, code, ok := tokenFlags(e, "revoke", args, nil)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "cardex token revoke: takes one ID or NAME")
		fs.Usage()
		return exitUsage
	}
	svc, closeStore, code := openService(ctx, e, "revoke", sf)
	if code != exitOK {
		return code
	}
	defer closeStore()
	if err := svc.RevokeToken(ctx, pos[0]); err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			fmt.Fprintf(e.stderr, "cardex token revoke: no token with id or name %q\n", pos[0])
		} else {
			fmt.Fprintln(e.stderr, "cardex token revoke:", err)
		}
		return exitFail
	}
	fmt.Fprintf(e.stdout, "revoked %s\n", pos[0])
	return exitOK
}
