#!/usr/bin/env bash
# Device call 2 for issue 4: GPU tests, then ours and the peer side by side, alternating:
# bandwidth (both kernel shapes), mamf on the 27-shape set and on the peer's quick set, bf16
# and fp8. Everything lands in $OUT/issue4.tgz; the tail of the output is the summary.
set -uo pipefail
source bench/device/common.sh
ub_build || exit 1
W=$(mktemp -d)
ub_gpu_tests "$W"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv > "$W/nvidia-smi.csv"
$UB env --json > "$W/env.json"
python3 -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())" > "$W/torch.txt"

$UB bandwidth --sizes 64M,256M,1G,4G --kernel tiled --out "$W/bw_tiled.jsonl" > "$W/bw_tiled.txt"
python3 bench/peers/bandwidth_peer.py > "$W/bw_peer.json"
$UB bandwidth --sizes 1G,4G --kernel persistent --out "$W/bw_persistent.jsonl" > "$W/bw_persistent.txt"
tail -n +1 "$W/bw_tiled.txt" "$W/bw_peer.json" "$W/bw_persistent.txt" | grep -E "copy|read|write"

for dt in bf16 fp8; do
  $UB mamf --dtype $dt --warmup-s 10 --out "$W/ours27_$dt.jsonl" > "$W/ours27_$dt.txt" 2> "$W/ours27_$dt.err"
  python3 bench/peers/mamf_peer.py --dtype $dt --warmup-s 10 --out "$W/peer27_$dt.jsonl" > "$W/peer27_$dt.txt" 2>&1
  python3 bench/peers/mamf_peer.py --dtype $dt --warmup-s 10 --m_range 0 20480 256 --n 4096 --k 4096 \
      --out "$W/peerquick_$dt.jsonl" > "$W/peerquick_$dt.txt" 2>&1
  $UB mamf --dtype $dt --warmup-s 10 --m-range 0 20480 256 --n 4096 --k 4096 \
      --out "$W/oursquick_$dt.jsonl" > "$W/oursquick_$dt.txt" 2> "$W/oursquick_$dt.err"
done
for f in ours27_bf16 peer27_bf16 oursquick_bf16 peerquick_bf16 ours27_fp8 peer27_fp8 oursquick_fp8 peerquick_fp8; do
  echo "== $f"; grep -E "^(mean|median|max):|elapsed|Tried|GPU .*: search" "$W/$f.txt" "$W/$f.err" 2>/dev/null | sed 's/^[^:]*://'
done
tar czf "$OUT/issue4.tgz" -C "$W" .
