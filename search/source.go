package search

import (
	"context"

	"github.com/cardexhq/cardex/registry"
)

// Source is what the search index needs of the registry: the change log to
// follow and the agents' current state. The registry's SQL store implements
// it; the index never reads SQL itself (CONTRIBUTING.md: consumers declare
// the interfaces they need).
type Source interface {
	// Changes returns at most limit change-log entries with Seq > after, in
	// Seq order, and the sequence to continue after (the last Seq
	// returned, or after when there are none).
	Changes(ctx context.Context, after int64, limit int) ([]registry.Change, int64, error)
	// LatestSeq is the newest sequence in the change log, 0 when empty.
	LatestSeq(ctx context.Context) (int64, error)
	// Agents returns the current state of the agents with these ids,
	// removed ones included. An id that is absent from the result no
	// longer exists and is deleted from the index.
	Agents(ctx context.Context, ids []string) ([]registry.Agent, error)
	// ListAgents pages through every agent, in ascending id order,
	// starting after afterID ("" for the first page), at most limit.
	ListAgents(ctx context.Context, afterID string, limit int) ([]registry.Agent, error)
}

// maxBatch is the most agents written in one Bleve batch
// (docs/design.md "Dependencies": batches of ≤ 1,000).
const maxBatch = 1000

// searchable tells whether an agent belongs in the index at all. Removed
// agents are tombstones: they are deleted from the index, so no stale state
// can show them (docs/threats.md G.72). Every other status stays indexed with
// its status, health and visibility as filter fields, and the caller's
// registry.Scope decides who sees it.
func searchable(a registry.Agent) bool {
	return a.Status != registry.StatusRemoved
}
