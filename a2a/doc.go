// Package a2a makes Cardex an A2A agent (docs/discovery.md "A2A"): its own
// Agent Card at /.well-known/agent-card.json, and a JSON-RPC and an
// HTTP+JSON interface that answer SendMessage (A2A 1.0) and message/send
// (A2A 0.3, chosen by the A2A-Version header) with a Message: a short text
// summary and a data part listing the matching agents.
//
// Cardex keeps no tasks: every answer is a Message (A2A 1.0 §3.1.1 lets
// SendMessage return one), so task reads answer TaskNotFound, listing tasks
// answers an empty list, and streaming, push notifications and the extended
// card answer the protocol's "not supported" errors.
//
// The few methods are implemented here rather than through an A2A SDK: a
// registry needs SendMessage and fixed errors in two protocol versions, and
// the SDKs bring a gRPC dependency tree into the binary for it. The SDKs'
// clients (a2a-go v0.3 and v2) test this server.
package a2a
