#!/usr/bin/env bash
# balance-latency.sh: how long `bloomwatch wallet balance` takes while a
# sync runs, on the demo's wallet. It builds bloomwatch, starts the demo
# headless on a long chain (BLOCKS, default 1500) with a home of its own,
# and from the moment the demo's node API is up runs `wallet balance
# --datadir DEMO --json` RUNS times (default 20), each after one
# wallet.balance request with curl (the API's answer without a Go process
# to start), printing both wall times in ms with the height the wallet had
# reached; then `bloomwatch --version` as many times, the cost of starting
# the process alone. Run it in the
# loopback namespace (the demo's btcd listens on its 127.0.0.1); curl is
# needed:
#
#   ../shared/tools/loopback-only scripts/balance-latency.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BLOCKS=${BLOCKS:-1500}
RUNS=${RUNS:-20}
work=$(mktemp -d)
export GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" XDG_CACHE_HOME="${XDG_CACHE_HOME:-$HOME/.cache}"
go build -o "$work/bloomwatch" ./cmd/bloomwatch
export HOME="$work/home"
mkdir -p "$HOME"
bw="$work/bloomwatch"
"$bw" demo --no-tui --blocks "$BLOCKS" --log-level warn >"$work/demo.out" 2>"$work/demo.err" &
demo=$!
trap 'kill -INT $demo 2>/dev/null; wait $demo 2>/dev/null; rm -rf "$work"' EXIT
running="$HOME/.bloomwatch/demo.running"
until [ -f "$running" ] && [ -f "$(cat "$running")/api.address" ]; do
	kill -0 $demo 2>/dev/null || { cat "$work/demo.err" >&2; exit 1; }
	sleep 0.05
done
dir=$(cat "$running")
echo "uptime: $(uptime)"
cookie=$(cat "$dir/.cookie")
addr=$(cat "$dir/api.address")
echo "while the demo's sync runs: the node API's answer (curl, no Go process to start), then the whole command:"
for _ in $(seq "$RUNS"); do
	api=$(curl -s -o /dev/null -w '%{time_total}' -u "$cookie" \
		-d '{"jsonrpc":"2.0","id":1,"method":"wallet.balance"}' "http://$addr/")
	s=$(date +%s%N)
	out=$("$bw" wallet balance --datadir "$dir" --json)
	e=$(date +%s%N)
	echo "api $(awk -v t="$api" 'BEGIN{printf "%.1f", t * 1000}') ms, wallet balance $(((e - s) / 1000000)) ms, $(echo "$out" | grep -o '"synced_height": *[-0-9]*')"
done
echo "bloomwatch --version (process start alone):"
for _ in $(seq "$RUNS"); do
	s=$(date +%s%N)
	"$bw" --version >/dev/null
	e=$(date +%s%N)
	echo "$(((e - s) / 1000000)) ms"
done
