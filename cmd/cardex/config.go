package main

import (
	"encoding/json"
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

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// defaultAddr is --addr's default. A variable only so a test can stand
// in for "the default port is taken" without binding the real one.
var defaultAddr = ":8080"

// serveConfig is every `cardex serve` setting (docs/configuration.md). Each one is
// a flag with a CARDEX_<FLAG> environment twin; a flag on the command line
// wins over the environment, which wins over the default.
type serveConfig struct {
	Addr              string
	AddrFile          string
	DebugAddr         string     // --debug-addr: runtime profiles on loopback (debug.go); empty: off
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
	// PublisherSubmitRate is each publisher token's own budget of
	// submissions, claims and crawl requests per minute; 0 disables.
	PublisherSubmitRate int
	// Host claims (docs/claims.md "Who can stop a claim").
	ClaimFetchesPerHost int           // claim fetches in flight per canonical host
	ClaimVerifyInterval time.Duration // least time between two verification attempts of one claim
	ClaimPending        int           // unverified claims per host and client
	GoneAfter           time.Duration
	SessionIdle         time.Duration // admin web sessions end after this long without a request
	SessionMaxAge       time.Duration // admin web sessions end this long after sign-in
	TrustedProxies      prefixList
	// CardKey signs Cardex's own agent card (docs/discovery.md).
	CardKey string
	// AutoApprove is the approval policy: never, claimed or verified
	// (docs/claims.md).
	AutoApprove string
	// AutoApprovePerDomain bounds the policy's approvals per registrable
	// domain and UTC day (docs/claims.md).
	AutoApprovePerDomain int
	// CatalogMaxNew and CatalogMaxAgents bound the agents one crawl of a
	// catalog registers and the agents a catalog registers in all
	// (docs/discovery.md).
	CatalogMaxNew    int
	CatalogMaxAgents int
	// ARDPeers are the ARD registries POST /ard/search federates with
	// (docs/discovery.md "Federated search"); none: federation off.
	ARDPeers peerList
	// WebFederation shows the peers' results on the web catalogue's
	// searches too.
	WebFederation bool
	// ardCall reaches them through the crawler's client (ardPeerCall).
	ardCall discover.PeerCall
	// limiters are the rate-limit buckets handler built, shared with the
	// scheduled catalog crawl (crawlCatalogs).
	limiters *ratelimit.Limiters

	// Demo runs the self-contained demo catalogue (demo/): SQLite in
	// ./cardex-demo unless --data is given, a loopback fleet of agents.
	Demo bool
	// dataSet records that --data (or CARDEX_DATA) was given, so --demo
	// knows whether to use its own directory.
	dataSet bool
	// addrSet records that --addr (or CARDEX_ADDR) was given: a demo on
	// the default address moves to a free port when another has it.
	addrSet bool
	// ConfigDump prints the effective settings (secrets redacted) and exits.
	ConfigDump bool
	// CAFile adds trusted roots for card and key-set fetches (docs/security.md "Network policy").
	CAFile string
	// SearchSynonyms names a file of synonym groups added to the index's
	// built-in list (search.ParseSynonyms); synonyms holds them parsed.
	SearchSynonyms string
	synonyms       [][]string

	// Crawler settings (docs/configuration.md).
	CrawlTick        time.Duration
	CrawlWorkers     int
	CrawlPerHost     int
	CrawlInterval    time.Duration
	CrawlMinInterval time.Duration
	CrawlMaxInterval time.Duration
	CrawlTimeout     time.Duration
	LeaseTTL         time.Duration

	// Liveness probes (docs/liveness.md): 0 disables them.
	ProbeInterval time.Duration
	ProbeWorkers  int
	ProbeHistory  time.Duration
	// ProbeRateFloor is the least pace of probe rounds, agents a second
	// (docs/liveness.md "Pacing").
	ProbeRateFloor int
	// Per-agent caps of a probe round (docs/liveness.md, docs/threats.md
	// K.98, K.99).
	ProbeMaxInterfaces int
	ProbeMaxOffDomain  int

	// Single sign-on with an OpenID Connect provider (docs/identity.md):
	// off unless OIDCIssuer is set. oidc is the checked configuration
	// (the client secret read from its file), built by Validate.
	OIDCIssuer           string
	OIDCName             string
	OIDCClientID         string
	OIDCClientSecretFile string
	OIDCScopes           string
	OIDCGroupsClaim      string
	OIDCSubjectClaim     string
	OIDCAdminGroups      string
	OIDCPublisherHosts   string
	OIDCAudience         string
	oidc                 *identity.Config
}

// Defaults of the crawler settings (docs/configuration.md).
const (
	defaultCrawlTick        = 10 * time.Second
	defaultCrawlWorkers     = 32
	defaultCrawlPerHost     = 2
	defaultCrawlInterval    = time.Hour
	defaultCrawlMinInterval = 5 * time.Minute
	defaultCrawlMaxInterval = 24 * time.Hour
	defaultCrawlTimeout     = 10 * time.Second
	defaultLeaseTTL         = 2 * time.Minute
	defaultProbeInterval    = 15 * time.Minute
	defaultProbeWorkers     = 16
	defaultProbeHistory     = 48 * time.Hour
	defaultDemoDir          = "./cardex-demo"
	demoCrawlPerHost        = 16 // --crawl-per-host under --demo unless given
)

// errConfig marks a bad setting (exit code 2).
var errConfig = errors.New("bad setting")

// errConfigDumped: --config-dump printed the settings; the command exits 0.
var errConfigDumped = errors.New("settings printed")

// envName is the environment twin of a flag: --database-url ↔
// CARDEX_DATABASE_URL.
func envName(flagName string) string {
	return "CARDEX_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (c *serveConfig) flags(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.Addr, "addr", defaultAddr, "listen address `host:port`")
	fs.StringVar(&c.AddrFile, "addr-file", "", "after listening, write the bound address to this `file` (useful with port 0)")
	fs.StringVar(&c.DebugAddr, "debug-addr", "", "serve Go's runtime profiles (/debug/pprof/) on this loopback `host:port`; empty: off")
	c.Store.register(fs, getenv)
	fs.StringVar(&c.TLSCert, "tls-cert", "", "TLS certificate chain `PEM` file; with --tls-key, serve HTTPS")
	fs.StringVar(&c.TLSKey, "tls-key", "", "TLS private key `PEM` file")
	fs.StringVar(&c.BaseURL, "base-url", "", "public `URL` of this server when behind a proxy (used for absolute links such as Location)")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.Var(&c.AllowNetworks, "allow-networks", "`CIDR[,CIDR…]` of reserved ranges card and key-set URLs may point into, on any port (repeatable)")
	fs.BoolVar(&c.AllowInsecureHTTP, "allow-insecure-http", false, "accept http:// card and key-set URLs (reserved addresses still need --allow-networks)")
	fs.StringVar(&c.CAFile, "ca-file", "", "extra trusted root certificates (`PEM` file) for card and key-set fetches")
	fs.StringVar(&c.SearchSynonyms, "search-synonyms", "", "`file` of synonym groups for search, one group of comma-separated words per line (# comments); added to the built-in list")
	fs.IntVar(&c.SubmitRate, "submit-rate", 10, "anonymous submissions per minute per client address (and 10× per hour per registrable domain); 0 disables")
	fs.IntVar(&c.ReadRate, "read-rate", 50, "anonymous reads per second per client address, bursts of twice that; each reader or publisher token has the same budget of its own; 0 disables")
	fs.IntVar(&c.PublisherSubmitRate, "publisher-submit-rate", 10, "submissions, host claims, claim verifications and crawl requests per minute per publisher token; 0 disables")
	fs.IntVar(&c.ClaimFetchesPerHost, "claim-fetches-per-host", fetch.DefaultClaimsPerHost, "host-claim fetches in flight per host; the others wait their turn")
	fs.DurationVar(&c.ClaimVerifyInterval, "claim-verify-interval", registry.DefaultClaimAttemptInterval, "least time between two verification attempts of one host claim")
	fs.IntVar(&c.ClaimPending, "claim-pending-per-client", registry.DefaultClaimsPending, "unverified host claims one client address (or publisher token) may hold on one host")
	fs.DurationVar(&c.GoneAfter, "gone-after", 168*time.Hour, "an agent failing for this long is gone")
	fs.DurationVar(&c.SessionIdle, "session-idle", registry.DefaultSessionIdle, "a web session ends after this long without a request")
	fs.DurationVar(&c.SessionMaxAge, "session-max-age", registry.DefaultSessionMaxAge, "a web session (token or identity-provider sign-in) ends this long after sign-in")
	fs.StringVar(&c.AutoApprove, "auto-approve", string(registry.AutoApproveNever), "approval `policy`: never, claimed (agents submitted with a publisher token from a verified host claim) or verified (also any agent whose card verifies under its origin's keys)")
	fs.IntVar(&c.AutoApprovePerDomain, "auto-approve-per-domain", registry.DefaultAutoApprovePerDomain, "agents of one registrable domain the approval policy approves per UTC day; past it they wait for a curator")
	fs.IntVar(&c.CatalogMaxNew, "catalog-max-new", registry.DefaultCatalogMaxNew, "agents one crawl of an AI Catalog may register; later crawls register the rest")
	fs.IntVar(&c.CatalogMaxAgents, "catalog-max-agents", registry.DefaultCatalogMaxAgents, "agents one AI Catalog may register in all")
	fs.DurationVar(&c.CrawlTick, "crawl-tick", defaultCrawlTick, "how often the crawler asks the database for due agents, in whole seconds")
	fs.IntVar(&c.CrawlWorkers, "crawl-workers", defaultCrawlWorkers, "crawler worker pool size")
	fs.IntVar(&c.CrawlPerHost, "crawl-per-host", defaultCrawlPerHost, "requests in flight per host: crawls, liveness probes (at most half) and claim checks together")
	fs.DurationVar(&c.CrawlInterval, "crawl-interval", defaultCrawlInterval, "re-crawl interval when the host gives no caching hint")
	fs.DurationVar(&c.CrawlMinInterval, "crawl-min-interval", defaultCrawlMinInterval, "shortest re-crawl interval (clamps max-age, Retry-After and back-off)")
	fs.DurationVar(&c.CrawlMaxInterval, "crawl-max-interval", defaultCrawlMaxInterval, "longest re-crawl interval (clamps max-age, Retry-After and back-off)")
	fs.DurationVar(&c.CrawlTimeout, "crawl-timeout", defaultCrawlTimeout, "limit for one fetch, redirects and body included")
	fs.DurationVar(&c.LeaseTTL, "lease-ttl", defaultLeaseTTL, "how long a claimed agent is held by this server; a crashed server's agents are crawled again after it")
	fs.DurationVar(&c.ProbeInterval, "probe-interval", defaultProbeInterval, "how often each approved agent's interfaces are probed for A2A liveness (jittered ±10 %; at least 1s; 0 disables probing)")
	fs.IntVar(&c.ProbeWorkers, "probe-workers", defaultProbeWorkers, "agents probed at once")
	fs.IntVar(&c.ProbeRateFloor, "probe-rate-floor", prober.DefaultRateFloor, "the least pace of probe rounds, agents a second; the pace is the larger of it and the approved agents over 0.8 × --probe-interval (1 to 10000)")
	fs.IntVar(&c.ProbeMaxInterfaces, "probe-max-interfaces", prober.DefaultMaxInterfaces, "interfaces probed per agent and round, in card order (1 to 64)")
	fs.IntVar(&c.ProbeMaxOffDomain, "probe-max-off-domain", prober.DefaultMaxOffDomain, "of those, interfaces off the card's registrable domain, probed only for agents a curator approved (0 to 16; 0: none)")
	fs.DurationVar(&c.ProbeHistory, "probe-history", defaultProbeHistory, "how long each probe is kept (at least 24h; daily roll-ups are kept 90 days)")
	fs.BoolVar(&c.Demo, "demo", false, "run the demo catalogue: SQLite in "+defaultDemoDir+" unless --data is given, and a loopback fleet of sample agents")
	fs.BoolVar(&c.ConfigDump, "config-dump", false, "print the effective settings as JSON (secrets redacted) and exit")
	fs.StringVar(&c.CardKey, "card-key", "", "private key `FILE` (PEM or JWK) that signs Cardex's own agent card at /.well-known/agent-card.json; needs --base-url")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", "", "OpenID Connect provider `URL` (its discovery document is read from {URL}/.well-known/openid-configuration); enables \"Sign in with\" on the web UI; https, or http on loopback only")
	fs.StringVar(&c.OIDCName, "oidc-name", "", "what the sign-in button calls the provider (default: the issuer's host)")
	fs.StringVar(&c.OIDCClientID, "oidc-client-id", "", "the web UI's client `id` at the provider; its redirect URI is {--base-url}/auth/oidc/callback")
	fs.StringVar(&c.OIDCClientSecretFile, "oidc-client-secret-file", "", "`file` holding the client secret (a trailing newline is ignored); none for a public client, which relies on PKCE")
	fs.StringVar(&c.OIDCScopes, "oidc-scopes", identity.DefaultScopes, "scopes asked for at sign-in, space-separated (Dex needs groups added)")
	fs.StringVar(&c.OIDCGroupsClaim, "oidc-groups-claim", identity.DefaultGroupsClaim, "the `claim` listing a person's groups, matched exactly as the provider sends them")
	fs.StringVar(&c.OIDCSubjectClaim, "oidc-subject-claim", identity.DefaultSubjectClaim, "the `claim` holding the stable id recorded in the audit log (oid for Microsoft Entra ID)")
	fs.StringVar(&c.OIDCAdminGroups, "oidc-admin-groups", "", "`GROUP[,GROUP…]` whose members are admins")
	fs.StringVar(&c.OIDCPublisherHosts, "oidc-publisher-hosts", "", "`GROUP=host[,host…][;GROUP=…]`: members of each group are publishers for those hosts; everyone else signed in is a reader")
	fs.StringVar(&c.OIDCAudience, "oidc-audience", "", "accept the provider's JWT access tokens issued for this `audience` as bearer credentials on the API, MCP and A2A (off when empty; must differ from --oidc-client-id)")
	fs.Var(&c.ARDPeers, "ard-peer", "base `URL` of another ARD registry's API that POST /ard/search asks with federation auto and names with referrals (repeatable; default none: federation off)")
	fs.BoolVar(&c.WebFederation, "web-federation", false, "show the --ard-peer registries' results, with their source, under the web catalogue's search results")
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
	c.dataSet = set["data"] || getenv("CARDEX_DATA") != ""
	c.addrSet = set["addr"] || getenv("CARDEX_ADDR") != ""
	if c.Demo && !c.dataSet {
		c.Store.data = defaultDemoDir
	}
	if c.Demo && !set["crawl-per-host"] && getenv("CARDEX_CRAWL_PER_HOST") == "" {
		// The demo's fleet answers on a handful of loopback addresses of its
		// own: the politeness a stranger's host is owed would only make its
		// first screen wait (docs/operator-guide.md "The demo").
		c.CrawlPerHost = demoCrawlPerHost
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.ConfigDump {
		if err := c.dump(fs, stdout); err != nil {
			return nil, err
		}
		return nil, errConfigDumped
	}
	return c, nil
}

func serveUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintln(w, "Usage: cardex serve [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Runs the registry in one process: the REST API under /api/v1, /healthz and")
	fmt.Fprintln(w, "/readyz, the web UI, Prometheus metrics at /metrics, the crawler and the")
	fmt.Fprintln(w, "search indexer. --demo runs a self-contained demo catalogue.")
	fmt.Fprintln(w, "Every flag has an environment twin; a flag wins over its variable.")
	fmt.Fprintln(w)
	fs.VisitAll(func(f *flag.Flag) {
		// UnquoteUsage names the value after a back-quoted word of the
		// usage, or after the flag's type; a switch takes no value.
		arg, usage := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if arg != "" {
			head += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s\n    \tdefault: %q, env: %s\n", head, usage, f.DefValue, envName(f.Name))
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
	if c.CardKey != "" {
		if c.BaseURL == "" {
			return bad("card-key", "a signed agent card names the server's public URL: set --base-url too")
		}
		if _, err := loadCardKey(c.CardKey); err != nil {
			return bad("card-key", "%v", err)
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
	if c.PublisherSubmitRate < 0 {
		return bad("publisher-submit-rate", "must not be negative")
	}
	if c.ClaimFetchesPerHost < 0 {
		return bad("claim-fetches-per-host", "must not be negative")
	}
	if c.ClaimVerifyInterval < 0 {
		return bad("claim-verify-interval", "must not be negative")
	}
	if c.ClaimPending < 0 {
		return bad("claim-pending-per-client", "must not be negative")
	}
	if c.GoneAfter <= 0 {
		return bad("gone-after", "must be positive")
	}
	if c.SessionIdle <= 0 || c.SessionMaxAge <= 0 {
		return bad("session-idle", "--session-idle and --session-max-age must be positive")
	}
	if c.SessionIdle > c.SessionMaxAge {
		return bad("session-idle", "must not be longer than --session-max-age")
	}
	if _, err := registry.ParseAutoApprove(c.AutoApprove); err != nil {
		return bad("auto-approve", "%q is not never, claimed or verified", c.AutoApprove)
	}
	if c.AutoApprovePerDomain <= 0 {
		return bad("auto-approve-per-domain", "must be positive")
	}
	if c.CatalogMaxNew <= 0 || c.CatalogMaxAgents <= 0 {
		return bad("catalog-max-new", "--catalog-max-new and --catalog-max-agents must be positive")
	}
	if c.CAFile != "" {
		if _, err := fetch.LoadCAFile(c.CAFile); err != nil {
			return bad("ca-file", "%v", err)
		}
	}
	if c.SearchSynonyms != "" {
		f, err := os.Open(c.SearchSynonyms)
		if err != nil {
			return bad("search-synonyms", "%v", err)
		}
		c.synonyms, err = search.ParseSynonyms(f)
		f.Close()
		if err != nil {
			return bad("search-synonyms", "%v", err)
		}
	}
	if c.DebugAddr != "" {
		if err := checkDebugAddr(c.DebugAddr); err != nil {
			return bad("debug-addr", "%v", err)
		}
	}
	// The scheduler ticks with cron, which counts whole seconds.
	if c.CrawlTick < time.Second || c.CrawlTick%time.Second != 0 {
		return bad("crawl-tick", "%s is not a whole number of seconds (at least 1s)", c.CrawlTick)
	}
	if c.CrawlWorkers < 1 || c.CrawlWorkers > 4096 {
		return bad("crawl-workers", "%d is not between 1 and 4096", c.CrawlWorkers)
	}
	if c.CrawlPerHost < 1 {
		return bad("crawl-per-host", "must be at least 1")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"crawl-interval", c.CrawlInterval}, {"crawl-min-interval", c.CrawlMinInterval}, {"crawl-max-interval", c.CrawlMaxInterval}, {"crawl-timeout", c.CrawlTimeout}, {"lease-ttl", c.LeaseTTL}} {
		if d.v <= 0 {
			return bad(d.name, "must be positive")
		}
	}
	if c.CrawlMinInterval > c.CrawlMaxInterval {
		return bad("crawl-min-interval", "%s is longer than --crawl-max-interval %s", c.CrawlMinInterval, c.CrawlMaxInterval)
	}
	if c.CrawlInterval < c.CrawlMinInterval || c.CrawlInterval > c.CrawlMaxInterval {
		return bad("crawl-interval", "%s is outside --crawl-min-interval %s and --crawl-max-interval %s", c.CrawlInterval, c.CrawlMinInterval, c.CrawlMaxInterval)
	}
	// A crawl gets at most half the lease and must record a quarter lease
	// before it ends (crawler.Scheduler.run), so a fetch limit beyond half
	// the lease would be cut short by the lease rather than by the policy.
	if c.CrawlTimeout > c.LeaseTTL/2 {
		return bad("lease-ttl", "%s must be at least twice --crawl-timeout %s", c.LeaseTTL, c.CrawlTimeout)
	}
	if c.ProbeInterval != 0 && c.ProbeInterval < time.Second {
		return bad("probe-interval", "%s is below 1s (0 disables probing)", c.ProbeInterval)
	}
	if c.ProbeWorkers < 1 || c.ProbeWorkers > 4096 {
		return bad("probe-workers", "%d is not between 1 and 4096", c.ProbeWorkers)
	}
	if c.ProbeRateFloor < 1 || c.ProbeRateFloor > 10000 {
		return bad("probe-rate-floor", "%d is not between 1 and 10000", c.ProbeRateFloor)
	}
	if c.ProbeMaxInterfaces < 1 || c.ProbeMaxInterfaces > 64 {
		return bad("probe-max-interfaces", "%d is not between 1 and 64", c.ProbeMaxInterfaces)
	}
	if c.ProbeMaxOffDomain < 0 || c.ProbeMaxOffDomain > min(16, c.ProbeMaxInterfaces) {
		return bad("probe-max-off-domain", "%d is not between 0 and %d", c.ProbeMaxOffDomain, min(16, c.ProbeMaxInterfaces))
	}
	if c.ProbeHistory < 24*time.Hour {
		return bad("probe-history", "%s is below 24h (the 24-hour uptime reads a day of probes)", c.ProbeHistory)
	}
	if c.Demo && c.Store.databaseURL != "" {
		return bad("demo", "the demo runs on SQLite; drop --database-url")
	}
	return c.validateOIDC(bad)
}

// validateOIDC checks the single sign-on settings and builds c.oidc.
func (c *serveConfig) validateOIDC(bad func(name, format string, a ...any) error) error {
	if c.OIDCIssuer == "" {
		for _, f := range []struct{ name, v string }{{"oidc-client-id", c.OIDCClientID}, {"oidc-client-secret-file", c.OIDCClientSecretFile},
			{"oidc-admin-groups", c.OIDCAdminGroups}, {"oidc-publisher-hosts", c.OIDCPublisherHosts}, {"oidc-audience", c.OIDCAudience}, {"oidc-name", c.OIDCName}} {
			if f.v != "" {
				return bad(f.name, "needs --oidc-issuer")
			}
		}
		return nil
	}
	hosts, err := identity.ParsePublisherHosts(c.OIDCPublisherHosts)
	if err != nil {
		return bad("oidc-publisher-hosts", "%v", err)
	}
	secret := ""
	if c.OIDCClientSecretFile != "" {
		b, err := os.ReadFile(c.OIDCClientSecretFile)
		if err != nil {
			return bad("oidc-client-secret-file", "%v", err)
		}
		// Files written by editors and secret stores end in a newline.
		secret = strings.TrimRight(string(b), "\r\n")
		if secret == "" {
			return bad("oidc-client-secret-file", "%s is empty", c.OIDCClientSecretFile)
		}
	}
	cfg := &identity.Config{Issuer: c.OIDCIssuer, Name: c.OIDCName, ClientID: c.OIDCClientID, ClientSecret: secret,
		BaseURL: c.BaseURL, Scopes: identity.ParseScopes(c.OIDCScopes), GroupsClaim: c.OIDCGroupsClaim,
		SubjectClaim: c.OIDCSubjectClaim, AdminGroups: identity.ParseList(c.OIDCAdminGroups), PublisherHosts: hosts,
		Audience: c.OIDCAudience}
	if err := cfg.Validate(); err != nil {
		return bad("oidc-issuer", "%v", err)
	}
	c.oidc = cfg
	return nil
}

// limits turns the rate settings into the server's limits, which the API
// and the web UI share (docs/configuration.md "Rate limits").
// The per-domain budget scales with the per-address one (100 per hour at
// the default 10 per minute), and --submit-rate 0 disables both.
func (c *serveConfig) limits() ratelimit.Limits {
	l := ratelimit.DefaultLimits()
	l.SubmitPerAddress = ratelimit.Rate{N: c.SubmitRate, Per: time.Minute}
	l.SubmitPerDomain = ratelimit.Rate{N: 10 * c.SubmitRate, Per: time.Hour}
	l.ReadPerAddress = ratelimit.Rate{N: c.ReadRate, Per: time.Second, Burst: 2 * c.ReadRate}
	l.SubmitPerToken = ratelimit.Rate{N: c.PublisherSubmitRate, Per: time.Minute}
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

// dump writes the effective settings as one JSON object keyed by flag
// name. The database URL's password is replaced by "xxxxx"; the TLS key is
// named by its path only, its content is never read here.
func (c *serveConfig) dump(fs *flag.FlagSet, w io.Writer) error {
	out := map[string]any{}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "config-dump" {
			return
		}
		v := f.Value.String()
		if f.Name == "database-url" {
			v = redactURL(v)
		}
		out[f.Name] = v
	})
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// redactURL hides every secret a database URL can carry: the password of
// its user information, and the query parameters PostgreSQL's drivers read
// secrets from (password, sslpassword, and anything whose name says pass,
// secret, token or key). An unparsable URL is hidden whole, since it may
// still carry one.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable, redacted)"
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return "(unparsable, redacted)"
		}
		for k := range q {
			if secretParam(k) {
				q[k] = []string{"xxxxx"}
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// secretParam reports whether a connection parameter names a secret.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"pass", "pwd", "secret", "token", "key"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
