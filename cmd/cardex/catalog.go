package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/cardexhq/cardex/registry"
)

const catalogUsage = `Usage:
  cardex catalog list [--json]
  cardex catalog pause ID
  cardex catalog resume ID
  cardex catalog remove ID
Every subcommand also takes --data DIR and --database-url URL.
Removing a catalog keeps the agents it brought, with it as their provenance.`

// cliAdmin is who the command line acts as: an admin, audited as "cli".
var cliAdmin = registry.Principal{Role: registry.RoleAdmin, Name: "cli"}

// runCatalog is `cardex catalog` (docs/operator-guide.md "Catalogs"). Like
// `cardex token`, it opens an existing store without the server lock.
func runCatalog(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, catalogUsage)
		return exitUsage
	}
	switch args[0] {
	case "list":
		return runCatalogList(ctx, e, args[1:])
	case "pause":
		return runCatalogChange(ctx, e, "pause", "paused", args[1:], (*registry.Service).PauseCatalog)
	case "resume":
		return runCatalogChange(ctx, e, "resume", "resumed", args[1:], (*registry.Service).ResumeCatalog)
	case "remove":
		return runCatalogChange(ctx, e, "remove", "removed", args[1:], (*registry.Service).RemoveCatalog)
	case "-h", "--help", "help":
		fmt.Fprintln(e.stdout, catalogUsage)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "cardex catalog: unknown subcommand %q\n%s\n", args[0], catalogUsage)
	return exitUsage
}

func runCatalogList(ctx context.Context, e *env, args []string) int {
	var asJSON bool
	sf, _, pos, code, ok := storeSubFlags(e, "catalog", catalogUsage, "list", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print a JSON array")
	})
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "cardex catalog list: takes no arguments")
		return exitUsage
	}
	svc, closeStore, code := openStoreService(ctx, e, "catalog list", sf)
	if code != exitOK {
		return code
	}
	defer closeStore()
	list, err := svc.Catalogs(ctx, cliAdmin)
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex catalog list:", err)
		return exitFail
	}
	if asJSON {
		b, _ := json.Marshal(list)
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	printCatalogs(e.stdout, list)
	return exitOK
}

func printCatalogs(w io.Writer, list []registry.Catalog) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tHEALTH\tAGENTS\tLAST CRAWL\tURL\tLAST ERROR")
	for _, c := range list {
		last, lastErr := "-", c.LastError
		if c.LastCrawledAt != nil {
			last = c.LastCrawledAt.UTC().Format(time.RFC3339)
		}
		if lastErr == "" {
			lastErr = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", c.ID, c.Status, c.Health, c.Agents, last, c.URL, lastErr)
	}
	tw.Flush()
}

func runCatalogChange(ctx context.Context, e *env, name, done string, args []string,
	change func(*registry.Service, context.Context, registry.Principal, string) (*registry.Catalog, error)) int {
	sf, fs, pos, code, ok := storeSubFlags(e, "catalog", catalogUsage, name, args, nil)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(e.stderr, "cardex catalog %s: takes one catalog ID (see cardex catalog list)\n", name)
		fs.Usage()
		return exitUsage
	}
	svc, closeStore, code := openStoreService(ctx, e, "catalog "+name, sf)
	if code != exitOK {
		return code
	}
	defer closeStore()
	c, err := change(svc, ctx, cliAdmin, pos[0])
	switch {
	case errors.Is(err, registry.ErrNotFound):
		fmt.Fprintf(e.stderr, "cardex catalog %s: no catalog with id %q\n", name, pos[0])
		return exitFail
	case errors.Is(err, registry.ErrInvalidTransition):
		fmt.Fprintf(e.stderr, "cardex catalog %s: catalog %s is removed; a removed catalog cannot be paused or resumed\n", name, pos[0])
		return exitFail
	case err != nil:
		fmt.Fprintf(e.stderr, "cardex catalog %s: %v\n", name, err)
		return exitFail
	}
	fmt.Fprintf(e.stdout, "%s %s (%s, status %s)\n", done, c.ID, c.URL, c.Status)
	if name == "remove" {
		fmt.Fprintf(e.stdout, "the %d agents it brought stay, with it as their provenance\n", c.Agents)
	}
	return exitOK
}
