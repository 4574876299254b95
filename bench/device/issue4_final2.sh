#!/usr/bin/env bash
# Device call 5 for issue 4: copy kernels (with the 256-byte-fetch variant) against the peer,
# then the full grid and --search on the same machine, full grid first.
set -uo pipefail
source bench/device/common.sh
ub_build || exit 1
W=$(mktemp -d)
ub_gpu_tests "$W" Bandwidth
$UB env --json > "$W/env.json"
python3 bench/peers/bandwidth_peer.py > "$W/bw_peer.json"; cat "$W/bw_peer.json"
for k in tiled8pf tiled8cs memcpy; do
  $UB bandwidth --sizes 1G,4G --kernel $k --out "$W/bw_${k}.jsonl" > "$W/bw_${k}.txt" 2>/dev/null
  echo "== $k"; grep -E "GiB" "$W/bw_${k}.txt"
done
GRID="--m-range 1024 16385 2048 --n-range 1024 16385 2048 --k-range 1024 16385 2048"
$UB mamf $GRID --warmup-s 10 --out "$W/full.jsonl" > "$W/full.txt" 2> "$W/full.err"
$UB mamf --search $GRID --warmup-s 10 --out "$W/search.jsonl" > "$W/search.txt" 2> "$W/search.err"
for f in full search; do echo "== $f"; grep -E "^(mean|median|max):|Tried|search looked" "$W/$f.txt"; done
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
for f in ("full", "search"):
    s = [json.loads(l) for l in open(f"{w}/{f}.jsonl")]
    summ = [r for r in s if r["type"] == "mamf_summary"][0]
    print(f, "elapsed_s", round(summ["elapsed_s"], 1), "best median", summ["best"]["median"])
PY
tar czf "$OUT/issue4_final2.tgz" -C "$W" .
