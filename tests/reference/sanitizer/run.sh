#!/bin/bash
# Builds planted.cu and runs each kernel under compute-sanitizer's racecheck, synccheck and
# initcheck, one file of reports per tool. Usage: OUT=dir bash run.sh
set -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-./out}; mkdir -p "$OUT"
BIN=$(mktemp -d)/planted
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/smi.txt" 2>&1
compute-sanitizer --version >> "$OUT/smi.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -lineinfo -o "$BIN" planted.cu || exit 1
KERNELS="tiled_matmul tiled_no_second_sync tiled_no_first_sync block_sync_in_branch warp_shfl_in_branch
warp_sync_in_branch warp_reduce reduce_past_written reduce_padded read_unwritten_global"
for tool in racecheck synccheck initcheck; do
  : > "$OUT/$tool.txt"
  for k in $KERNELS; do
    echo "=== $k" >> "$OUT/$tool.txt"
    extra=""
    [ "$tool" = racecheck ] && extra="--racecheck-report all"
    timeout 120 compute-sanitizer --tool "$tool" $extra --show-backtrace no "$BIN" "$k" >> "$OUT/$tool.txt" 2>&1
    echo "=== rc $?" >> "$OUT/$tool.txt"
  done
done
