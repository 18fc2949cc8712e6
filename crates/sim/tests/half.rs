//! `half` and `__nv_bfloat16` (cuda_fp16.h, cuda_bf16.h): 2-byte elements in memory, so a warp's
//! accesses have the sectors and banks the hardware sees (`tests/reference/warp_probes`: a copy
//! of halves is `LDG.E.U16`, 2 sectors a request), and their conversions rounded to nearest even
//! as the hardware's are. The expected values are worked out by hand in each test.

mod common;

use common::{f32s, h100_launch, one_block_counters, one_warp_buffers, GLOBAL_COUNTERS};
use memplay_sim::simulate;

#[test]
fn a_warp_copying_consecutive_halves_makes_one_request_of_two_sectors_and_a_half2_one_of_four() {
    let source = "#include <cuda_fp16.h>
__global__ void copy(half* dst, const half* src) { dst[threadIdx.x] = src[threadIdx.x]; }
__global__ void copy2(half2* dst, const half2* src) { dst[threadIdx.x] = src[threadIdx.x]; }
";
    // 32 halves are 64 bytes, two 32-byte sectors; 32 half2 are 128 bytes, four.
    let halves = one_block_counters(
        source,
        "copy",
        32,
        &[("dst", 64), ("src", 64)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(halves, [1.0, 2.0, 1.0, 2.0]);
    let pairs = one_block_counters(
        source,
        "copy2",
        32,
        &[("dst", 128), ("src", 128)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(pairs, [1.0, 4.0, 1.0, 4.0]);
}

#[test]
fn a_column_of_a_32_by_32_half_tile_is_a_16_way_conflict_and_a_row_none() {
    // A row of 32 halves is 64 bytes, 16 banks: lane l's column element is word 16 l, in bank 0
    // or 16, so 16 lanes share each of two banks with different words (16 wavefronts). A row's
    // 32 halves are 16 words, two lanes in each, which a bank serves at once (1 wavefront).
    let source = "#include <cuda_fp16.h>
__global__ void column(float* out) {
  __shared__ half tile[32][32];
  tile[threadIdx.x][0] = __float2half(1.0f);
  __syncthreads();
  out[threadIdx.x] = __half2float(tile[threadIdx.x][0]);
}
__global__ void row(float* out) {
  __shared__ half tile[32][32];
  tile[0][threadIdx.x] = __float2half(1.0f);
  __syncthreads();
  out[threadIdx.x] = __half2float(tile[0][threadIdx.x]);
}
";
    let names = [
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ];
    assert_eq!(
        one_block_counters(source, "column", 32, &[("out", 128)], names),
        [16.0, 16.0]
    );
    assert_eq!(
        one_block_counters(source, "row", 32, &[("out", 128)], names),
        [1.0, 1.0]
    );
}

#[test]
fn conversions_round_to_nearest_even_and_arithmetic_rounds_where_a_half_is_kept() {
    let source = "#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void values(float* out) {
  half third = __float2half(1.0f / 3.0f);
  half big = __float2half(70000.0f);
  __nv_bfloat16 tie = __float2bfloat16(1.0f + 1.0f / 256.0f);
  __nv_bfloat16 up = __float2bfloat16(1.0f + 3.0f / 256.0f);
  half sum = third * third + __float2half(1.0f);
  half2 p = __floats2half2_rn(1.5f, -2.0f);
  half2 q = __hmul2(p, p);
  half2 r = __hfma2(__float2half2_rn(2.0f), p, q);
  out[0] = __half2float(third);
  out[1] = __half2float(big);
  out[2] = __bfloat162float(tie);
  out[3] = __bfloat162float(up);
  out[4] = __half2float(sum);
  out[5] = __low2float(q) + 10 * __high2float(q);
  out[6] = __low2float(r) + 10 * __high2float(r);
  out[7] = __hlt(third, __float2half(0.5f)) ? 1.0f : 0.0f;
  out[8] = sizeof(half) + 10 * sizeof(half2) + 100 * sizeof(__nv_bfloat16);
}
";
    let out = one_warp_buffers(source, "values", &[("out", 36)]);
    let out = f32s(&out[0]);
    // 1/3 is 0x3555 in binary16: (1 + 341/1024) / 4 = 1365/4096.
    assert_eq!(out[0], 1365.0 / 4096.0);
    // Past 65504, the largest half, a conversion gives infinity.
    assert_eq!(out[1], f32::INFINITY);
    // bfloat16 keeps 7 bits after the point: 1 + 2^-8 is half way to 1 + 2^-7 and goes to the
    // even 1.0; 1 + 3 2^-8 is half way between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
    assert_eq!(out[2], 1.0);
    assert_eq!(out[3], 1.0 + 1.0 / 64.0);
    // (1365/4096)^2 + 1 = 1.11105..., 1137.72 in units of 2^-10: 1138/1024.
    assert_eq!(out[4], 1138.0 / 1024.0);
    // (1.5^2, (-2)^2) = (2.25, 4); 2 (1.5, -2) + (2.25, 4) = (5.25, 0).
    assert_eq!(out[5], 2.25 + 40.0);
    assert_eq!(out[6], 5.25);
    assert_eq!(out[7], 1.0);
    assert_eq!(out[8], 2.0 + 40.0 + 200.0);
}

#[test]
fn a_half2_axpy_reads_two_requests_of_four_sectors_a_warp() {
    // warp_probes' w_half2_axpy shape: y[i] = a x[i] + y[i] over half2, 8 warps a block.
    let source = "#include <cuda_fp16.h>
__global__ void axpy2(half2* y, const half2* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma2(__float2half2_rn(2.0f), x[i], y[i]);
}
";
    let input = h100_launch(
        source,
        "axpy2",
        [4, 1],
        [256, 1],
        &[("y", 4096), ("x", 4096)],
        &[("n", 1024)],
    );
    let report = simulate(&input).expect("simulates");
    let c = |name: &str| report.counters.get(name).unwrap_or(f64::NAN);
    assert_eq!(c(GLOBAL_COUNTERS[0]), 64.0);
    assert_eq!(c(GLOBAL_COUNTERS[1]), 256.0);
}
