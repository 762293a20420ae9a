// Package discover is what the agent-facing discovery surfaces (the A2A
// agent in package a2a, the MCP server in package mcpserver) share: the
// structured search request (the filters of GET /api/v1/agents, as JSON),
// the agent summary they answer with, and the gate that turns an HTTP
// request into a caller (bearer token to role, anonymous rate limit). It
// lists agents only through search.Find and reads one only through
// registry.Service.Get, so every surface shows exactly what the same caller
// sees in GET /api/v1/agents (docs/discovery.md).
package discover
