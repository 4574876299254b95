#!/usr/bin/env bash
# Device call 3 for issue 4: bandwidth kernel variants against the peer copy, then the full grid
# M,N,K in 1024..16384 step 2048 (512 shapes) against --search on the same grid, bf16.
set -uo pipefail
source bench/device/common.sh
ub_build || exit 1
W=$(mktemp -d)
ub_gpu_tests "$W" Bandwidth
$UB env --json > "$W/env.json"
python3 bench/peers/bandwidth_peer.py > "$W/bw_peer_before.json"
for k in tiled tiled8 tiled8cs persistent memcpy; do
  $UB bandwidth --sizes 1G,4G --kernel $k --out "$W/bw_$k.jsonl" > "$W/bw_$k.txt" 2>/dev/null
  echo "== $k"; grep -E "GiB" "$W/bw_$k.txt"
done
python3 bench/peers/bandwidth_peer.py > "$W/bw_peer_after.json"
cat "$W"/bw_peer_*.json
GRID="--m-range 1024 16385 2048 --n-range 1024 16385 2048 --k-range 1024 16385 2048"
/usr/bin/time -f "full grid wall %e s" $UB mamf $GRID --warmup-s 10 --out "$W/full.jsonl" > "$W/full.txt" 2> "$W/full.err"
/usr/bin/time -f "search wall %e s" $UB mamf --search $GRID --warmup-s 10 --out "$W/search.jsonl" > "$W/search.txt" 2> "$W/search.err"
for f in full search; do echo "== $f"; grep -E "^(mean|median|max):|Tried|search looked" "$W/$f.txt"; tail -1 "$W/$f.err"; done
tar czf "$OUT/issue4_search.tgz" -C "$W" .
