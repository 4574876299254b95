#!/usr/bin/env bash
# Device call 4 for issue 4: the bulk-copy kernel beside the other variants and the peer copy,
# and --search on the grid whose full sweep was measured in call 3.
set -uo pipefail
source bench/device/common.sh
ub_build || exit 1
W=$(mktemp -d)
ub_gpu_tests "$W"
$UB env --json > "$W/env.json"
for round in 1 2; do
  python3 bench/peers/bandwidth_peer.py > "$W/bw_peer_$round.json"; cat "$W/bw_peer_$round.json"
  for k in bulk tiled8cs memcpy; do
    $UB bandwidth --sizes 1G,4G --ops copy --kernel $k --out "$W/bw_${k}_$round.jsonl" > "$W/bw_${k}_$round.txt" 2>/dev/null
    echo "== $k round $round"; grep -E "GiB" "$W/bw_${k}_$round.txt"
  done
done
GRID="--m-range 1024 16385 2048 --n-range 1024 16385 2048 --k-range 1024 16385 2048"
$UB mamf --search $GRID --warmup-s 10 --out "$W/search.jsonl" > "$W/search.txt" 2> "$W/search.err"
grep -E "^(mean|median|max):|Tried|search looked" "$W/search.txt"
tar czf "$OUT/issue4_final.tgz" -C "$W" .
