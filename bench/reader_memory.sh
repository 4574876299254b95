#!/usr/bin/env bash
# Peak memory and time of the analysis commands reading one large training log: benchmark.py's
# sweep format (tests/fixtures/sweep_h200.log's headers) with two lengths and as many steps as fill
# SIZE_MB, read by `memfit` (once) and `compare` (the file against itself), under /usr/bin/time.
#   bench/reader_memory.sh OUT_DIR [SIZE_MB]     UB: the binary [build/upgradebench]
# Prints and writes OUT_DIR/reader_memory.jsonl: one line per command (MB read, peak RSS, seconds).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: bench/reader_memory.sh OUT_DIR [SIZE_MB]}
size_mb=${2:-200}
ub=${UB:-$here/../build/upgradebench}
mkdir -p "$out"
log=$out/large_sweep.log
python3 - "$here/../tests/fixtures/sweep_h200.log" "$log" "$size_mb" <<'PY'
import sys
src, dst, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
head = [l for l in open(src).read().splitlines()[:3]]  # the block line and its two headers
with open(dst, "w") as f:
    for i, (seqlen, gib) in enumerate([(8192, 16.3), (16384, 19.1)]):  # two lengths: memfit fits a line
        f.write("\n".join(l.replace("8192", str(seqlen)) for l in head) + "\n")
        n = 0
        while f.tell() < (mb << 20) * (i + 1) // 2:
            f.write('{"step": %d, "warmup": false, "exec_time_ms": "%.2f", "tflops": "141.11", "peak_mem_gib": "%.1f"}\n'
                    % (n, 2988 * (i + 1) + (n % 97) / 97, gib))
            n += 1
PY
: > "$out/reader_memory.jsonl"
for cmd in "memfit $log --capacity-gib 130" "compare $log $log --force"; do
  /usr/bin/time -f "%M %e" -o "$out/time.txt" "$ub" $cmd > /dev/null 2> "$out/stderr.txt" || echo "$cmd failed" >&2
  read -r kib secs < "$out/time.txt"
  line=$(awk -v c="${cmd%% *}" -v mb="$size_mb" -v kib="$kib" -v s="$secs" \
    'BEGIN { printf "{\"command\": \"%s\", \"file_mb\": %d, \"peak_rss_mib\": %.1f, \"seconds\": %s}", c, mb, kib / 1024, s }')
  echo "$line" | tee -a "$out/reader_memory.jsonl"
done
rm -f "$log" "$out/time.txt"
