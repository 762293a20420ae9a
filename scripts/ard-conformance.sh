#!/usr/bin/env bash
# Runs the ARD conformance tool (ards-project/ard-spec,
# conformance/bin/conformance-test: Python 3, no dependencies) against
# Cardex: builds cardex, starts the demo on a free loopback port in a
# temporary directory, and runs the tool's modes on it — manifest on
# /.well-known/ard.json, publisher on Cardex's own origin (when the tool has
# that mode), registry on /ard. The tool is not part of this repository and
# is on no package registry: pass the path of a copy as the first argument
# or in ARD_CONFORMANCE. Exit non-zero when any mode reports an error.
set -euo pipefail
cd "$(dirname "$0")/.."
tool="${1:-${ARD_CONFORMANCE:-}}"
if [ -z "$tool" ] || [ ! -f "$tool" ]; then
  echo "usage: scripts/ard-conformance.sh PATH/TO/conformance-test (or set ARD_CONFORMANCE)" >&2
  exit 2
fi
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

go build -o "$tmp/cardex" ./cmd/cardex
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
"$tmp/cardex" serve --demo --data "$tmp/demo" --addr "127.0.0.1:$port" --base-url "$base" >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  if curl -sf "$base/readyz" >/dev/null && curl -sf "$base/api/v1/agents?pageSize=1" | grep -q '"totalSize":[1-9]'; then break; fi
  sleep 1
done
curl -sf "$base/readyz" >/dev/null || { echo "cardex did not get ready:"; tail -20 "$tmp/serve.log"; exit 1; }

# One identifier to look up: the first agent ard.json lists.
ident=$(curl -sf "$base/.well-known/ard.json" | python3 -c 'import json,sys; e=[x for x in json.load(sys.stdin)["entries"] if x["type"]=="application/a2a-agent-card+json"]; print(e[0]["identifier"] if e else "")')

status=0
run() {
  echo "== conformance-test $*"
  python3 "$tool" "$@" || status=1
}
run manifest "$base/.well-known/ard.json"
if python3 "$tool" 2>&1 | grep -q 'publisher'; then
  run publisher "127.0.0.1:$port"
else
  echo "== this copy of the tool has no publisher mode; skipped"
fi
registry_args=(registry "$base/ard")
if python3 "$tool" 2>&1 | grep -q 'lookup-identifier' && [ -n "$ident" ]; then
  registry_args+=(--lookup-identifier "$ident")
fi
run "${registry_args[@]}"
if [ "$status" -ne 0 ]; then
  echo "ARD conformance: errors (see above)"
fi
exit "$status"
