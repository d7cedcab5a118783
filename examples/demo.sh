#!/usr/bin/env bash
# The bundled example, end to end: register a golden set, scan training data with planted
# leaks (exit 1 and a review file), then scan a clean file (exit 0). Runs in ./demo-out.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cg="${CONTAM_GUARD:-$here/.venv/bin/contam-guard}"
out="$here/demo-out"
rm -rf "$out" && mkdir -p "$out/golden" "$out/data"
cp "$here"/examples/golden/arith-mini.jsonl "$out/golden/"
cp "$here"/examples/data/*.jsonl "$out/data/"
cd "$out"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step contam-guard init
"$cg" init
step contam-guard register arith-mini golden/arith-mini.jsonl --field question --field answer --id-field id
"$cg" register arith-mini golden/arith-mini.jsonl --field question --field answer --id-field id
step contam-guard sets
"$cg" sets
step contam-guard verify
"$cg" verify

step contam-guard scan data/train.jsonl --review review.md --review-json review.json --items-csv items.csv
set +e
"$cg" scan data/train.jsonl --review review.md --review-json review.json --items-csv items.csv \
  --review-html review.html --show-golden
code=$?
set -e
echo "exit code: $code (1: a failing rule fired; the example plants leaks on purpose)"
[ "$code" -eq 1 ] || { echo "demo: expected exit 1 from the leaky scan" >&2; exit 1; }

step cat review.md
cat review.md

step contam-guard scrub data/train.jsonl -o train.clean.jsonl --log removed.jsonl
"$cg" scrub data/train.jsonl -o train.clean.jsonl --log removed.jsonl
step contam-guard scan train.clean.jsonl --only gpt3
"$cg" scan train.clean.jsonl --only gpt3
echo "exit code: 0 (the scrubbed copy no longer shares a 13-word run with any golden item)"

step contam-guard scan data/clean.jsonl
"$cg" scan data/clean.jsonl
echo "exit code: 0 (clean)"
echo
echo "Outputs are in demo-out/: review.md, review.html, review.json, items.csv, train.clean.jsonl,"
echo "removed.jsonl (the scrub log) and .contam-guard/manifest.json"
