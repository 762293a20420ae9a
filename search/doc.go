// Package search is Cardex's full-text index of agents and their skills,
// kept in Bleve. The index is derived data (docs/design.md principle 2): an
// Indexer follows the registry's change log, re-reading each changed agent's
// current state, and the whole index can be rebuilt from SQL into a new
// directory and swapped in while the old one keeps answering queries.
//
// Skills are nested documents (Bleve v2.6 nested mappings), so a query such
// as "invoices finance" can be required to match within ONE skill. Every
// filter and facet field is a keyword field with doc values on the agent
// document, and user text only ever reaches Match and Phrase queries, never a
// query-string query (docs/threats.md G.71).
//
// Search returns agent ids, scores, facets and highlighted matches; callers
// hydrate the ids from SQL and re-check visibility there (G.72).
package search
