package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
)

// What a run creates is its own: every agent it submits is remembered by
// id and, unless -keep, removed when the run ends (DELETE, with a reason
// naming the run, so the target's audit log says what happened). With
// -keep the ids go to a file, and `-remove FILE` removes them later.

// created records the agents this run submitted.
type created struct {
	mu  sync.Mutex
	ids []string
}

func (c *created) add(id string) {
	if id == "" {
		return
	}
	c.mu.Lock()
	c.ids = append(c.ids, id)
	c.mu.Unlock()
}

func (c *created) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

// removeAgents deletes ids from the target, 8 at a time, and returns how
// many are gone (removed now, or already removed or unknown) and the
// first failure.
func removeAgents(ctx context.Context, cl *client, ids []string, reason string) (int, error) {
	var mu sync.Mutex
	var firstErr error
	removed := 0
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			st, err := cl.call(ctx, http.MethodDelete, "/api/v1/agents/"+url.PathEscape(id), map[string]string{"reason": reason}, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && (st == http.StatusOK || st == http.StatusNotFound):
				removed++
			case err == nil:
				err = fmt.Errorf("removing %s: HTTP %d", id, st)
				fallthrough
			default:
				if firstErr == nil {
					firstErr = err
				}
			}
		})
	}
	wg.Wait()
	return removed, firstErr
}

// writeIDs writes one id a line.
func writeIDs(path string, ids []string) error {
	return os.WriteFile(path, []byte(strings.Join(ids, "\n")+"\n"), 0o644)
}

func readIDs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			ids = append(ids, id)
		}
	}
	return ids, sc.Err()
}

// removeRun is `cardex-bench load -remove FILE`: remove the agents an earlier
// -keep run listed.
func removeRun(ctx context.Context, c *Config, stdout *strings.Builder) error {
	ids, err := readIDs(c.Remove)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return errors.New(c.Remove + " lists no agent ids")
	}
	cl := &client{cfg: c, http: &http.Client{Timeout: c.Timeout}}
	n, err := removeAgents(ctx, cl, ids, "cardex-bench load: removing the agents listed in "+c.Remove)
	fmt.Fprintf(stdout, "removed %d of %d agents listed in %s\n", n, len(ids), c.Remove)
	return err
}
