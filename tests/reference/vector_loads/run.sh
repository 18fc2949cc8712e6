#!/bin/bash
# Builds vector_loads.cu and measures it on an H100: the SASS of each kernel, timings, then Nsight
# Compute's load and store instructions, requests and sectors per launch. Usage: OUT=dir bash run.sh
set -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-./out}; mkdir -p "$OUT"
BIN=$(mktemp -d)/vector_loads
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,memory.total,driver_version --format=csv > "$OUT/smi.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -lineinfo -Xptxas -v -o "$BIN" vector_loads.cu 2> "$OUT/ptxas.txt" \
  || { tail -40 "$OUT/ptxas.txt"; exit 1; }
cuobjdump -sass "$BIN" > "$OUT/vector_loads.sass"
"$BIN" time > "$OUT/time.jsonl" || { tail -5 "$OUT/time.jsonl"; exit 1; }
echo "time: $(grep -c '"ms"' "$OUT/time.jsonl") launches"
M=smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M=$M,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__inst_executed.sum
ncu --metrics $M --csv "$BIN" ncu > "$OUT/ncu.csv" 2> "$OUT/ncu.err" || { tail -5 "$OUT/ncu.err"; exit 1; }
echo "ncu: $(grep -c gpu__time_duration "$OUT/ncu.csv") rows"
grep '^"' "$OUT/ncu.csv" > "$OUT/ncu.csv.only" && mv "$OUT/ncu.csv.only" "$OUT/ncu.csv"
python3 join.py "$OUT"
