#!/usr/bin/env bash
# The bundled example, end to end: register a golden set, scan training data with planted
# leaks (exit 1 and a review file), scrub them, then scan a clean file (exit 0). Runs in
# ./demo-out ($DEMO_OUT). Every command is printed exactly as it runs (`contam-guard` stands for
# the binary in use: $CONTAM_GUARD, or this checkout's .venv), so each line can be copied.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${CONTAM_GUARD:-$here/.venv/bin/contam-guard}"
out="${DEMO_OUT:-$here/demo-out}"
rm -rf "$out" && mkdir -p "$out/golden" "$out/data"
cp "$here"/examples/golden/arith-mini.jsonl "$out/golden/"
cp "$here"/examples/data/*.jsonl "$out/data/"
cd "$out"

# Print "$ COMMAND ARGS" (arguments shell-quoted where needed; bold on a terminal), then run
# exactly that.
bold="" plain=""
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
show() {
  local line
  printf -v line ' %q' "${@:2}"
  printf '\n%s$ %s%s%s\n' "$bold" "$1" "$line" "$plain"
}
run() { show "$@"; "$@"; }
cg() { show contam-guard "$@"; "$bin" "$@"; }

# Like `cg`, but the exit code is the result: printed, and checked against the one expected.
cg_expect() {
  local want="$1" code=0
  shift
  cg "$@" || code=$?
  echo "exit code: $code"
  [ "$code" -eq "$want" ] || { echo "demo: expected exit $want from: contam-guard $*" >&2; exit 1; }
}

cg init
cg register arith-mini golden/arith-mini.jsonl --field question --field answer --id-field id
cg sets
cg verify

cg_expect 1 scan data/train.jsonl --review review.md --review-json review.json --items-csv items.csv \
  --review-html review.html --show-golden
echo "(1: a failing rule fired; the example plants leaks on purpose)"

run cat review.md

cg scrub data/train.jsonl -o train.clean.jsonl --log removed.jsonl
cg_expect 0 scan train.clean.jsonl --only gpt3
echo "(the scrubbed copy no longer shares a 13-word run with any golden item)"

cg_expect 0 scan data/clean.jsonl
echo "(clean)"
echo
echo "Outputs are in $out: review.md, review.html, review.json, items.csv, train.clean.jsonl,"
echo "removed.jsonl (the scrub log) and .contam-guard/manifest.json"
