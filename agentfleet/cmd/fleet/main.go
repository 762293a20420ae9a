// Command fleet runs a loopback fleet of fake A2A agents for benchmarks and
// manual tests, prints one card URL per line, and serves until interrupted.
//
//	go run ./agentfleet/cmd/fleet -agents 10000 -listen 127.0.0.1 -out urls.txt
//
// Crawl it with --allow-networks 127.0.0.0/8 --allow-insecure-http (and
// --ca-file with -tls -ca-out).
package main

import (
	"bufio"
	"context"
	"crypto"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/verifier"
)

type config struct {
	agents      int
	hosts       int
	listen      string
	port        int
	tls         bool
	caOut       string
	out         string
	behavior    string
	changeEvery int
	signedPct   int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, os.Args[1:], os.Stdout, log); err != nil {
		log.Error("fleet failed", "err", err)
		os.Exit(1)
	}
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	fs.IntVar(&c.agents, "agents", 1000, "number of agents")
	fs.IntVar(&c.hosts, "hosts", 0, "number of loopback addresses (default: one per 100 agents, at most 200)")
	fs.StringVar(&c.listen, "listen", "127.0.0.1", "first loopback address; the others count up from it")
	fs.IntVar(&c.port, "port", 0, "port on every address (0: a free port per address)")
	fs.BoolVar(&c.tls, "tls", false, "serve https with a fleet CA")
	fs.StringVar(&c.caOut, "ca-out", "", "write the fleet CA certificate (PEM) here (with -tls)")
	fs.StringVar(&c.out, "out", "", "write the agent URLs here instead of stdout")
	fs.StringVar(&c.behavior, "behavior", "normal", "normal, conditional or changing")
	fs.IntVar(&c.changeEvery, "change-every", 10, "requests per card version (with -behavior changing)")
	fs.IntVar(&c.signedPct, "signed-percent", 0, "percentage of agents serving a card signed with their host's ES256 key (JWKS at /.well-known/jwks.json)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.agents <= 0 {
		return c, fmt.Errorf("-agents must be positive")
	}
	if c.hosts <= 0 {
		c.hosts = min(max(c.agents/100, 1), 200)
	}
	switch agentfleet.Behavior(c.behavior) {
	case agentfleet.Normal, agentfleet.Conditional, agentfleet.Changing:
	default:
		return c, fmt.Errorf("-behavior %q: want normal, conditional or changing", c.behavior)
	}
	if c.signedPct < 0 || c.signedPct > 100 {
		return c, fmt.Errorf("-signed-percent must be between 0 and 100")
	}
	if c.caOut != "" && !c.tls {
		return c, fmt.Errorf("-ca-out needs -tls")
	}
	return c, nil
}

// sign signs with the verifier's spec profile, so signed agents verify.
func sign(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	return verifier.Sign(card, key, verifier.SignOptions{Kid: kid, Jku: jku})
}

// run starts the fleet, writes the URLs, and serves until ctx ends.
func run(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	fleet, err := agentfleet.New(agentfleet.Options{Hosts: c.hosts, BaseAddr: c.listen, Port: c.port, TLS: c.tls, Signer: sign})
	if err != nil {
		return err
	}
	defer fleet.Close()
	if c.caOut != "" {
		if err := os.WriteFile(c.caOut, fleet.CA().PEM(), 0o644); err != nil {
			return err
		}
	}
	w := stdout
	if c.out != "" {
		f, err := os.Create(c.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	for i := range c.agents {
		b := agentfleet.Behavior(c.behavior)
		if i%100 < c.signedPct {
			b = agentfleet.Signed
		}
		a, err := fleet.TryAdd(agentfleet.Agent{Behavior: b, ChangeEvery: c.changeEvery})
		if err != nil {
			return err
		}
		fmt.Fprintln(bw, a.URL())
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	origins := make([]string, 0, len(fleet.Hosts()))
	for _, h := range fleet.Hosts() {
		origins = append(origins, h.Origin())
	}
	log.Info("fleet serving", "agents", c.agents, "hosts", len(origins), "first", origins[0], "last", origins[len(origins)-1])
	<-ctx.Done()
	var total int64
	for _, h := range fleet.Hosts() {
		total += h.Requests()
	}
	log.Info("fleet stopped", "requests", total, "origins", strings.Join(origins[:min(3, len(origins))], ","))
	return nil
}
