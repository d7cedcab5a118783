#!/usr/bin/env bash
# The GitHub Action's entry script (action.yml runs it; every input arrives in an environment
# variable, never inside the script text). It scans what the pull request (or push) adds, then
# writes, in this order: annotations (stdout), the job summary ($GITHUB_STEP_SUMMARY), the review
# files and SARIF (in $CG_OUT_DIR), the step outputs ($GITHUB_OUTPUT). Only then does it exit with
# the scan's exit code: 0 clean, 1 contamination (or a change that weakens the guard: a set removed,
# a rule disabled, a threshold raised, allowlist entries in bulk), 2 usage/config/git error (e.g. a shallow clone,
# or Git LFS files checked out without their objects: `actions/checkout` needs `lfs: true`).
#
# Inputs (all optional):
#   CG_PATHS        files or folders, one per line (with a range: only changes under them)
#   CG_BASE_REF     compare BASE..HEAD (default: the PR's base commit, or the push's "before")
#   CG_MANIFEST, CG_CONFIG, CG_FAIL_ON (rules, comma- or space-separated), CG_SARIF (true/false)
#   CG_FIELDS       fields to read, one per line (as --field; default: every string)
#   CG_ACCEPT_GUARD_CHANGE  digests of reviewed changes that weaken the guard, one per line
#                   (as --accept-guard-change; the failing scan prints the digest)
#   CG_PR_BASE_SHA, CG_PUSH_BEFORE  from the event (action.yml passes them)
#   CG_OUT_DIR      where the review files go (default: $RUNNER_TEMP/contam-guard)
#   CONTAM_GUARD    the command (default: contam-guard on PATH)
set -uo pipefail

cg="${CONTAM_GUARD:-contam-guard}"
out="${CG_OUT_DIR:-${RUNNER_TEMP:-/tmp}/contam-guard}"
mkdir -p "$out"
summary_file="${GITHUB_STEP_SUMMARY:-/dev/null}"
output_file="${GITHUB_OUTPUT:-/dev/null}"

# Escape a workflow command's message: %, CR and LF.
escape_data() {
  local s="$1"
  s="${s//'%'/'%25'}"
  s="${s//$'\r'/'%0D'}"
  s="${s//$'\n'/'%0A'}"
  printf '%s' "$s"
}

args=(scan --format github --review "$out/review.md" --review-json "$out/review.json" --summary "$out/summary.md")
if [ "${CG_SARIF:-true}" = "true" ]; then
  args+=(--sarif "$out/contam-guard.sarif")
fi
[ -n "${CG_CONFIG:-}" ] && args+=(--config "$CG_CONFIG")
[ -n "${CG_MANIFEST:-}" ] && args+=(--manifest "$CG_MANIFEST")
fail_on="${CG_FAIL_ON:-}"
for rule in ${fail_on//,/ }; do
  args+=(--fail-on "$rule")
done

while IFS= read -r field; do
  field="${field#"${field%%[![:space:]]*}"}"
  field="${field%"${field##*[![:space:]]}"}"
  [ -n "$field" ] && args+=(--field "$field")
done <<< "${CG_FIELDS:-}"

while IFS= read -r digest; do
  digest="${digest#"${digest%%[![:space:]]*}"}"
  digest="${digest%"${digest##*[![:space:]]}"}"
  [ -n "$digest" ] && args+=(--accept-guard-change "$digest")
done <<< "${CG_ACCEPT_GUARD_CHANGE:-}"

base="${CG_BASE_REF:-}"
if [ -z "$base" ]; then
  case "${GITHUB_EVENT_NAME:-}" in
    pull_request | pull_request_target | merge_group) base="${CG_PR_BASE_SHA:-}" ;;
    push)
      # A new branch's push has no "before" (all zeros): scan the given paths whole instead.
      case "${CG_PUSH_BEFORE:-}" in "" | *[!0]*) base="${CG_PUSH_BEFORE:-}" ;; *) base="" ;; esac
      ;;
  esac
fi
if [ -n "$base" ]; then
  args+=(--diff "$base..HEAD")
fi

paths=()
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [ -n "$line" ] && paths+=("$line")
done <<< "${CG_PATHS:-}"
if [ -z "$base" ] && [ "${#paths[@]}" -eq 0 ]; then
  paths=(.)  # no range to diff: audit the whole repository
fi

rm -f "$out/review.md" "$out/review.json" "$out/summary.md" "$out/contam-guard.sarif"
echo "contam-guard ${args[*]} ${paths[*]+${paths[*]}}" >&2
# Annotations go to stdout, where the runner reads them; the log (errors, notices) is kept to
# quote in the summary when the scan cannot run.
# ${paths[@]+...}: an empty array under `set -u` is an error in bash 3.2 (macOS runners).
"$cg" "${args[@]}" -- ${paths[@]+"${paths[@]}"} 2>"$out/stderr.log"
code=$?
cat "$out/stderr.log" >&2

if [ -f "$out/summary.md" ]; then
  cat "$out/summary.md" >> "$summary_file"
else
  {
    echo "## contam-guard"
    echo
    echo "The scan could not run (exit $code). From its log:"
    echo
    echo '```'
    head -c 4000 "$out/stderr.log" 2>/dev/null
    echo '```'
  } >> "$summary_file"
  msg="$(head -c 2000 "$out/stderr.log" 2>/dev/null)"
  echo "::error title=contam-guard could not scan (exit $code)::$(escape_data "$msg")"
fi

findings=""
if [ -f "$out/review.json" ]; then
  findings="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["findings"])' "$out/review.json" 2>/dev/null \
    || python -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["findings"])' "$out/review.json")"
fi
{
  echo "exit-code=$code"
  echo "findings=$findings"
  if [ -f "$out/review.md" ]; then echo "review-file=$out/review.md"; else echo "review-file="; fi
  if [ -f "$out/contam-guard.sarif" ]; then echo "sarif-file=$out/contam-guard.sarif"; else echo "sarif-file="; fi
  echo "review-dir=$out"
} >> "$output_file"

exit "$code"
