#!/usr/bin/env bash
# Runs the a2a-js client (npm @a2a-js/sdk, pinned below) against Cardex's own
# A2A agent: builds cardex, starts the demo on a free loopback port in a
# temporary directory, installs the SDK there (never in the repository),
# sends a find-agents message and a task read, and checks the answers.
# Needs go, node 18+ and npm. Exit 0 when every check passes.
set -euo pipefail
cd "$(dirname "$0")/.."
sdk="${A2A_JS_SDK:-@a2a-js/sdk@1.3.0}"
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

go build -o "$tmp/cardex" ./cmd/cardex
(cd "$tmp" && npm init -y >/dev/null && npm install --silent "$sdk" >/dev/null)

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
"$tmp/cardex" serve --demo --data "$tmp/demo" --addr "127.0.0.1:$port" --base-url "$base" >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  if curl -sf "$base/readyz" >/dev/null && curl -sf "$base/api/v1/agents?pageSize=1" | grep -q '"totalSize":[1-9]'; then break; fi
  sleep 1
done
curl -sf "$base/readyz" >/dev/null || { echo "cardex did not get ready:"; tail -20 "$tmp/serve.log"; exit 1; }
NODE_PATH="$tmp/node_modules" CARDEX_URL="$base" node --input-type=module < scripts/a2a-js-client.mjs
