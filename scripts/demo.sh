#!/usr/bin/env bash
# Demo: a host and two joiners on loopback. Alice joins and leaves after
# WorldReady; Bob joins, stays a few seconds (seeing notices), and leaves.
# Everything started here is stopped on exit.
# Usage: scripts/demo.sh [PORT]   (default 30555)
set -euo pipefail
cd "$(dirname "$0")/.."
port="${1:-30555}"
addr="127.0.0.1:$port"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "== building"
go build -o "$work/host" ./cmd/host
go build -o "$work/join" ./cmd/join

echo "== host serve --listen $addr"
"$work/host" serve --listen "$addr" >"$work/host.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
  grep -q 'msg=hosting' "$work/host.log" 2>/dev/null && break
  sleep 0.1
done
grep -q 'msg=hosting' "$work/host.log" || { cat "$work/host.log"; echo "host did not start" >&2; exit 1; }

echo "== Bob joins and stays"
"$work/join" "$addr" --name Bob -q --no-input >"$work/bob.log" 2>&1 &
bob=$!
pids+=($bob)
sleep 1

echo "== Alice joins with --exit-after-ready"
"$work/join" "$addr" --name Alice -q --exit-after-ready
echo "(Alice exited with $?)"

echo "== a third joiner with a name already online is refused (exit 3)"
set +e
"$work/join" "$addr" --name bob -q --exit-after-ready
echo "(exit $?)"
set -e

sleep 1
kill -INT "$bob"
wait "$bob" || true
echo "== Bob's output"
cat "$work/bob.log"

kill -INT "${pids[0]}"
wait "${pids[0]}" || true
echo "== host log"
cat "$work/host.log"
