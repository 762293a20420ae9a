package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cardexhq/cardex/api"
)

// serveConfig is every `cardex serve` setting (CONTRACT.md §6). Each one is
// a flag with a CARDEX_<FLAG> environment twin; a flag on the command line
// wins over the environment, which wins over the default.
type serveConfig struct {
	Addr              string
	AddrFile          string
	Store             storeFlags // --data, --database-url (store.go, shared with the other store commands)
	TLSCert           string
	TLSKey            string
	BaseURL           string
	LogFormat         string
	LogLevel          string
	AllowNetworks     prefixList
	AllowInsecureHTTP bool
	SubmitRate        int // anonymous submissions per minute per client address; 0 disables
	ReadRate          int // anonymous reads per second per client address; 0 disables
	GoneAfter         time.Duration
	TrustedProxies    prefixList
}

// errConfig marks a bad setting (exit code 2).
var errConfig = errors.New("bad setting")

// envName is the environment twin of a flag: --database-url ↔
// CARDEX_DATABASE_URL.
func envName(flagName string) string {
	return "CARDEX_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (c *serveConfig) flags(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.Addr, "addr", ":8080", "listen address `host:port`")
	fs.StringVar(&c.AddrFile, "addr-file", "", "after listening, write the bound address to this `file` (useful with port 0)")
	c.Store.register(fs, getenv)
	fs.StringVar(&c.TLSCert, "tls-cert", "", "TLS certificate chain `PEM` file; with --tls-key, serve HTTPS")
	fs.StringVar(&c.TLSKey, "tls-key", "", "TLS private key `PEM` file")
	fs.StringVar(&c.BaseURL, "base-url", "", "public `URL` of this server when behind a proxy (used for absolute links such as Location)")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.Var(&c.AllowNetworks, "allow-networks", "`CIDR[,CIDR…]` of reserved ranges card URLs may point into (repeatable)")
	fs.BoolVar(&c.AllowInsecureHTTP, "allow-insecure-http", false, "accept http:// card URLs")
	fs.IntVar(&c.SubmitRate, "submit-rate", 10, "anonymous submissions per `minute` per client address (and 10× per hour per registrable domain); 0 disables")
	fs.IntVar(&c.ReadRate, "read-rate", 50, "anonymous reads per `second` per client address, bursts of twice that; 0 disables")
	fs.DurationVar(&c.GoneAfter, "gone-after", 168*time.Hour, "an agent failing this `long` is gone")
	fs.Var(&c.TrustedProxies, "trusted-proxies", "`CIDR[,CIDR…]` of reverse proxies whose X-Forwarded-For is believed for rate limits (repeatable; default none: the TCP peer is the client)")
}

// parseServeConfig fills the config from args and the environment. --help
// prints the settings to stdout and returns flag.ErrHelp.
func parseServeConfig(args []string, getenv func(string) string, stdout, stderr io.Writer) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("cardex serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.flags(fs, getenv)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			serveUsage(fs, stdout)
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errConfig, fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		if v := getenv(name); v != "" && !set[f.Name] {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s=%q: %v", errConfig, name, v, err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, c.Validate()
}

func serveUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintln(w, "Usage: cardex serve [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Runs the registry: the REST API under /api/v1, /healthz and /readyz.")
	fmt.Fprintln(w, "Every flag has an environment twin; a flag wins over its variable.")
	fmt.Fprintln(w)
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s %s\n    \t%s\n    \tdefault: %q, env: %s\n", f.Name, arg, usage, f.DefValue, envName(f.Name))
	})
}

// Validate names the first bad setting.
func (c *serveConfig) Validate() error {
	bad := func(name, format string, a ...any) error {
		return fmt.Errorf("%w: --%s (%s): %s", errConfig, name, envName(name), fmt.Sprintf(format, a...))
	}
	if _, port, err := net.SplitHostPort(c.Addr); err != nil {
		return bad("addr", "%q is not host:port", c.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return bad("addr", "%q has no valid port", c.Addr)
	}
	if err := c.Store.validate(); err != nil {
		return fmt.Errorf("%w: %w", errConfig, err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return bad("tls-cert", "--tls-cert and --tls-key go together")
	}
	for _, f := range []struct{ name, path string }{{"tls-cert", c.TLSCert}, {"tls-key", c.TLSKey}} {
		if f.path == "" {
			continue
		}
		file, err := os.Open(f.path)
		if err != nil {
			return bad(f.name, "%v", err)
		}
		file.Close()
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return bad("base-url", "%q must be an absolute http(s) URL without query, fragment or userinfo", c.BaseURL)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return bad("log-format", "%q is not text or json", c.LogFormat)
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return bad("log-level", "%q is not debug, info, warn or error", c.LogLevel)
	}
	if c.SubmitRate < 0 {
		return bad("submit-rate", "must not be negative")
	}
	if c.ReadRate < 0 {
		return bad("read-rate", "must not be negative")
	}
	if c.GoneAfter <= 0 {
		return bad("gone-after", "must be positive")
	}
	return nil
}

// limits turns the rate settings into the API's limits (CONTRACT.md §5).
// The per-domain budget scales with the per-address one (100 per hour at
// the default 10 per minute), and --submit-rate 0 disables both.
func (c *serveConfig) limits() api.Limits {
	l := api.DefaultLimits()
	l.SubmitPerAddress = api.Rate{N: c.SubmitRate, Per: time.Minute}
	l.SubmitPerDomain = api.Rate{N: 10 * c.SubmitRate, Per: time.Hour}
	l.ReadPerAddress = api.Rate{N: c.ReadRate, Per: time.Second, Burst: 2 * c.ReadRate}
	return l
}

func (c *serveConfig) logger(w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel)) // checked by Validate
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// prefixList is a repeatable flag of comma-separated CIDR prefixes.
type prefixList []netip.Prefix

func (p *prefixList) String() string {
	if p == nil {
		return ""
	}
	s := make([]string, len(*p))
	for i, x := range *p {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (p *prefixList) Set(v string) error {
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part) // a single address is its own /32 or /128
			if aerr != nil {
				return fmt.Errorf("%q is not a CIDR prefix", part)
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		*p = append(*p, pfx.Masked())
	}
	return nil
}
