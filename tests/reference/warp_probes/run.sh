#!/bin/bash
# Builds warp_probes.cu and measures it on an H100: the SASS of each kernel, timings, then two passes of
# Nsight Compute (the required metrics, then the pipes and atomics; a separate pass so that a metric
# this ncu lacks cannot cost the required ones). Usage: OUT=dir bash run.sh
set -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-./out}; mkdir -p "$OUT"
BIN=$(mktemp -d)/warp_probes
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,memory.total,driver_version --format=csv > "$OUT/smi.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -lineinfo -Xptxas -v -o "$BIN" warp_probes.cu 2> "$OUT/ptxas.txt" \
  || { tail -40 "$OUT/ptxas.txt"; exit 1; }
# The encodings are left out (they double the file): the instructions are what tests read.
cuobjdump -sass "$BIN" | sed -E 's#[[:space:]]*/\* 0x[0-9a-f]+ \*/##; /^[[:space:]]*$/d' > "$OUT/warp_probes.sass"
"$BIN" time > "$OUT/time.jsonl" || { tail -5 "$OUT/time.jsonl"; exit 1; }
echo "time: $(grep -c '"ms"' "$OUT/time.jsonl") launches"
M1=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg
M1=$M1,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum
M1=$M1,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M1=$M1,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M1=$M1,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
M1=$M1,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum
M2=smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum
M2=$M2,smsp__inst_executed_pipe_lsu.sum,smsp__inst_executed_pipe_fp16.sum,smsp__inst_executed_pipe_adu.sum
M2=$M2,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
M2=$M2,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,smsp__warps_active.avg.pct_of_peak_sustained_active
for pass in 1 2; do
  if [ "$pass" = 1 ]; then M=$M1; else M=$M2; fi
  timeout 400 ncu --clock-control none --metrics "$M" --csv "$BIN" ncu > "$OUT/ncu$pass.raw" 2> "$OUT/ncu$pass.err"
  echo "ncu pass $pass rc=$?"; tail -2 "$OUT/ncu$pass.err"; rm -f "$OUT/ncu$pass.err"
  grep '^"' "$OUT/ncu$pass.raw" > "$OUT/ncu$pass.csv"
  grep "^{" "$OUT/ncu$pass.raw" > "$OUT/ncu_launches.jsonl"
  rm -f "$OUT/ncu$pass.raw"
done
python3 join.py "$OUT"
