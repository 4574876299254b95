#!/usr/bin/env bash
# A long fuzz run, off CI: the libFuzzer targets of tests/fuzz (built by the test build into
# build/tests/fuzz, or copied elsewhere), all at once, each in libFuzzer's fork mode from its
# corpus in the repository, for SECONDS each, the cores shared out by weight.
#   bench/fuzz_campaign.sh BIN_DIR OUT_DIR SECONDS NAME:FORKS ...
#   e.g. bench/fuzz_campaign.sh build/tests/fuzz out 540 mamf:4 trace:4 sweep_log:2 records:2
# Writes OUT_DIR/fuzz.jsonl (a line per target: forks, seconds, executions, crashes found, inputs in
# its corpus at the end) and OUT_DIR/logs/NAME.log; what a target found is kept in OUT_DIR/crashes_NAME/.
# The inputs a target finds go to FUZZ_CORPORA/NAME (OUT_DIR/work_NAME unless FUZZ_CORPORA is set):
# campaigns that share FUZZ_CORPORA go on from where the one before stopped, each corpus minimised
# first (libFuzzer's -merge=1; OUT_DIR/logs/NAME_merge.log). FUZZ_TREE (the commit the binaries were
# built from) is written into each line when set.
# The binaries read data/ (the trace target's kernel classes) at the path of the tree they were
# built from: on another machine, make that path lead to a checkout, or every trace job dies at once.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: bench/fuzz_campaign.sh BIN_DIR OUT_DIR SECONDS NAME:FORKS ...}
out=${2:?usage: bench/fuzz_campaign.sh BIN_DIR OUT_DIR SECONDS NAME:FORKS ...}
secs=${3:?usage: bench/fuzz_campaign.sh BIN_DIR OUT_DIR SECONDS NAME:FORKS ...}
shift 3
[ $# -gt 0 ] || { echo "fuzz_campaign.sh: name at least one target as NAME:FORKS" >&2; exit 2; }
mkdir -p "$out/logs"
corpus_of() { if [ -n "${FUZZ_CORPORA:-}" ]; then echo "$FUZZ_CORPORA/$1"; else echo "$out/work_$1"; fi; }
flags_of() { local v="FUZZ_FLAGS_$1"; echo "${!v:-}"; }
# What an input may take, the same when minimising as when fuzzing.
limits=(-timeout=5 -rss_limit_mb=2048 -max_len=262144)
# A corpus carried over from earlier campaigns holds many inputs that add nothing; each costs time on
# every pass of fork mode (a target with 7 400 inputs ran at half its rate). Keep the smallest set
# with the same coverage; if the merge fails, the corpus stays as it was.
minimise() {
  local name=$1 work=$2 fresh="$2.minimised"
  [ -n "$(ls -A "$work")" ] || return 0
  rm -rf "$fresh" && mkdir -p "$fresh"
  if "$bin/${name}_fuzzer" -merge=1 "${limits[@]}" "$fresh" "$work" > "$out/logs/${name}_merge.log" 2>&1; then
    rm -rf "$work" && mv "$fresh" "$work"
  else
    rm -rf "$fresh"
  fi
}
pids=()
for spec in "$@"; do
  name=${spec%%:*} forks=${spec##*:}
  [ -x "$bin/${name}_fuzzer" ] || { echo "fuzz_campaign.sh: no $bin/${name}_fuzzer" >&2; exit 2; }
  work=$(corpus_of "$name")
  mkdir -p "$work" "$out/crashes_$name"
  minimise "$name" "$work"
  # shellcheck disable=SC2046  # the flags are words of their own
  ASAN_OPTIONS=detect_leaks=1 "$bin/${name}_fuzzer" $(flags_of "$name") -fork="$forks" -ignore_crashes=1 -max_total_time="$secs" \
    "${limits[@]}" -artifact_prefix="$out/crashes_$name/" \
    "$work" "$here/../tests/fuzz/corpus/$name" > "$out/logs/$name.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
: > "$out/fuzz.jsonl"
for spec in "$@"; do
  name=${spec%%:*} forks=${spec##*:}
  # Fork mode's progress lines start "#<executions>:"; the last one is the total.
  execs=$(grep -oE '^#[0-9]+' "$out/logs/$name.log" | tail -1 | tr -d '#')
  crashes=$(find "$out/crashes_$name" -type f | wc -l)
  inputs=$(find "$(corpus_of "$name")" -type f | wc -l)
  tree=${FUZZ_TREE:+\"tree\": \"$FUZZ_TREE\", }
  flags=$(flags_of "$name")
  flags=${flags:+, \"flags\": \"$flags\"}
  printf '{%s"target": "%s", "forks": %s, "seconds": %s, "executions": %s, "crashes": %s, "corpus": %s%s}\n' \
    "$tree" "$name" "$forks" "$secs" "${execs:-0}" "$crashes" "$inputs" "$flags" | tee -a "$out/fuzz.jsonl"
done
