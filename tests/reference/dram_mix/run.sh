#!/bin/bash
# Builds dram_mix.cu and measures it on an H100: timings, then Nsight Compute's DRAM bytes and time
# per launch. Usage: OUT=dir bash run.sh
set -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-./out}; mkdir -p "$OUT"
BIN=$(mktemp -d)/dram_mix
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,memory.total,driver_version --format=csv > "$OUT/smi.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -lineinfo -Xptxas -v -o "$BIN" dram_mix.cu 2> "$OUT/ptxas.txt" \
  || { tail -40 "$OUT/ptxas.txt"; exit 1; }
"$BIN" time > "$OUT/time.jsonl" || { tail -5 "$OUT/time.jsonl"; exit 1; }
echo "time: $(grep -c '"ms"' "$OUT/time.jsonl") launches"
ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_op_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
  --csv "$BIN" ncu > "$OUT/ncu.csv" 2> "$OUT/ncu.err" || { tail -5 "$OUT/ncu.err"; exit 1; }
echo "ncu: $(grep -c dram__bytes_read "$OUT/ncu.csv") rows"
