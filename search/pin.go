package search

// Queries read the last snapshot of the index whose segments the indexer
// has decoded into tables (the pinned snapshot, zapread.Readers), not
// Bleve's newest. A merge introduces its segment into the newest snapshot
// at once; at 100,000 agents the indexer's merge into one segment, or
// Bleve's own merge of large segments, takes seconds to decode, and every
// query that met the segment first waited for that decode — the searches
// queued behind them were shed (docs/benchmarks.md "Under real load").
// Now the indexer decodes the new segments (facetTables.warm) and only
// then pins the snapshot holding them; until then queries read the
// previous one, which holds the same agents: a merge moves documents, it
// does not change them.
//
// Batches do change them. The indexer pins the snapshot of each batch it
// decodes at once (while queries run, and at the end of a backlog). A
// batch applied without decoding (a backlog with no query running) leaves
// the pin where it is: a query that comes reads the last decoded snapshot,
// and the indexer's next step, which a query makes decode, pins the newest.
// Unpinning there instead had the first query decode every segment the
// backlog's merges had made, about 100,000 documents at the end of an
// import: seconds, and one query in each such run failed its 2 s timeout
// (docs/benchmarks.md "Under real load", fifth pass). Search results are
// therefore at most a batch and its decode older than the last batch
// applied while queries come, and the epoch moves when what they read
// does (Indexer.decode), so no older answer is served from the cache.

// close unpins the generation's snapshot and closes its index. No query
// holds the generation then (swap and Close take the write lock).
func (g *generation) close() error {
	g.readers.Unpin()
	return g.idx.Close()
}
