//! End-to-end tests of the kernel language on the lecture kernels: they parse, compute what they
//! should, record the accesses the slides describe, and fail with the right line and column.

use super::*;
use crate::access::{AccessKind, AccessWidth, Space, WarpAccess};

use crate::lesson_kernels::{ADJ_DIFF, ATOMICS, BANKS, COALESCING, MATMUL, TRANSPOSE};

/// Seed 000, "Better Implementation" of `mat_mul`, both slides joined as printed: the second slide
/// loads `s_b` with an undeclared `m` where it means `p`.
const SEED_000_TILED_MATMUL: &str = "\
__global__ void mat_mul(float *a, float *b,
                        float *ab, int width)
{
    // shorthand
    int tx = threadIdx.x, ty = threadIdx.y;
    int bx = blockIdx.x, by = blockIdx.y;
    // allocate tiles in __shared__ memory
    __shared__ float s_a[TILE_WIDTH][TILE_WIDTH];
    __shared__ float s_b[TILE_WIDTH][TILE_WIDTH];
    // calculate the row & col index
    int row = by*blockDim.y + ty;
    int col = bx*blockDim.x + tx;

    float result = 0;
// loop over the tiles of the input in phases
for(int p = 0; p < width/TILE_WIDTH; ++p)
{
    // collaboratively load tiles into __shared__
    s_a[ty][tx] = a[row*width + (p*TILE_WIDTH + tx)];
    s_b[ty][tx] = b[(m*TILE_WIDTH + ty)*width + col];
    __syncthreads();

    // dot product between row of s_a and col of s_b
    for(int k = 0; k < TILE_WIDTH; ++k)
        result += s_a[ty][k] * s_b[k][tx];
    __syncthreads();
}

ab[row*width+col] = result;
}
";

/// Seed 001, "Review: Tiled Matrix Multiplication Kernel", as printed (`register` loop counters,
/// a `const int` parameter, `0.0F`).
const SEED_001_TILED_MATMUL: &str = "\
__global__ void matmul(float* g_C, const float* g_A, const float* g_B, const int width) {
    __shared__ float s_A[TILE_WIDTH][TILE_WIDTH];
    __shared__ float s_B[TILE_WIDTH][TILE_WIDTH];

    int by = blockIdx.y; int bx = blockIdx.x;
    int ty = threadIdx.y; int tx = threadIdx.x;
    int gy = by * TILE_WIDTH + ty; // global y index
    int gx = bx * TILE_WIDTH + tx; // global x index
    float sum = 0.0F;

    for (register int m = 0; m < width / TILE_WIDTH; ++m) {
        // read into the shared memory blocks
        s_A[ty][tx] = g_A[gy * width + (m * TILE_WIDTH + tx)];
        s_B[ty][tx] = g_B[(m * TILE_WIDTH + ty) * width + gx];
        __syncthreads();
        // use the shared memory blocks to get the partial sum
        for (register int k = 0; k < TILE_WIDTH; ++k) {
            sum += s_A[ty][k] * s_B[k][tx];
        }
        __syncthreads();
    }
    g_C[gy * width + gx] = sum;
}
";

/// Seed 004's tiled kernel as printed: `#define TILE_WDITH` (sic) and an inner loop that reads
/// `Mds[ty][tx] * Nds[ty][tx]` instead of `Mds[ty][k] * Nds[k][tx]`.
const SEED_004_TILED_MATMUL: &str = "\
#define TILE_WDITH 16
__global__ void matrixMulKernel(float* M, float* N, float* P, int Width) {
// Shared memory arrays scoped to block
__shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
__shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
// Save thread and block indexes in register variables scoped to individual thread
int bx = blockIdx.x; int by = blockIdx.y;
int tx = threadIdx.x; int ty = threadIdx.y;
// Identify the row and column of the P element to work on
int Row = by * TILE_WIDTH + ty;
int Col = bx * TILE_WIDTH + tx;
// Loop over the M and N tiles required to compute P element
float Pvalue = 0;
for (int ph = 0; ph < Width/TILE_WIDTH; ++ph){
// Collaborative loading of M and N tiles into shared memory
Mds[ty][tx] = M[Row*Width + ph*TILE_WIDTH + tx];
Nds[ty][tx] = N[(ph*TILE_WIDTH + ty)*Width + Col];
__syncthreads();
for (int k = 0; k < TILE_WIDTH; ++k){
Pvalue += Mds[ty][tx] * Nds[ty][tx];
}
__syncthreads();
}
P[Row*Width + Col] = Pvalue;
}
";

fn defines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn launch(
    grid: [u32; 3],
    block: [u32; 3],
    dyn_smem: u32,
    args: &[(&str, Value)],
    buffers: &[(&str, u64)],
) -> Launch {
    Launch {
        grid: Dim3::new(grid[0], grid[1], grid[2]),
        block: Dim3::new(block[0], block[1], block[2]),
        dyn_smem,
        args: args.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        buffers: buffers.iter().map(|(n, b)| (n.to_string(), *b)).collect(),
        fills: vec![],
        pointers: vec![],
    }
}

fn all_blocks(l: &Launch) -> Vec<[u32; 3]> {
    let mut out = Vec::new();
    for z in 0..l.grid.z {
        for y in 0..l.grid.y {
            for x in 0..l.grid.x {
                out.push([x, y, z]);
            }
        }
    }
    out
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Every reference kernel file parses and checks, with the kernels it should have.
mod front_end {
    use super::*;

    fn check(source: &str, overrides: &[(&str, &str)], expected_kernels: &[&str]) {
        let program = compile(source, &defines(overrides)).unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(program.kernel_names(), expected_kernels);
    }

    #[test]
    fn every_reference_kernel_file_compiles() {
        check(ADJ_DIFF, &[], &["adj_diff_naive", "adj_diff_shared"]);
        check(ATOMICS, &[], &["sum_global_atomic", "sum_hier_atomic"]);
        check(BANKS, &[], &["smem_stride", "row_per_thread"]);
        check(BANKS, &[("PAD", "1")], &["smem_stride", "row_per_thread"]);
        check(
            COALESCING,
            &[],
            &["strided_copy", "offset_copy", "rows_copy"],
        );
        check(MATMUL, &[], &["mm_naive", "mm_tiled"]);
        check(
            MATMUL,
            &[("TILE_WIDTH", "32"), ("PAD", "1")],
            &["mm_naive", "mm_tiled"],
        );
        check(
            TRANSPOSE,
            &[("PAD", "1")],
            &["tr_copy", "tr_naive", "tr_shared"],
        );
    }

    #[test]
    fn seed_002_thread_local_and_constant_memory_examples_compile() {
        check(
            "__constant__ float myparam;\n\
             __constant__ float constKernel[16];\n\
             __device__ int my_global_variable;\n\
             __global__ void kernel(float2 *result, float2 *a, float2 *b)\n\
             {\n\
               float2 p = a[threadIdx.x];\n\
               float2 heap[10];\n\
               float2 bvals[2];\n\
               bvals[0] = b[threadIdx.x];\n\
               bvals[1] = b[threadIdx.x + blockDim.x];\n\
               float val = myparam; val = constKernel[0];\n\
               int *ptr = &my_global_variable;\n\
               heap[threadIdx.x % 10] = p;\n\
               result[threadIdx.x] = make_float2(bvals[0].x + val, heap[3].y + *ptr);\n\
             }",
            &[],
            &["kernel"],
        );
    }

    #[test]
    fn seed_001_pitched_rows_with_char_pointer_casts_compile() {
        check(
            "__global__ void MyKernel(float* devPtr, size_t pitch, int width, int height) {\n\
                 for (int r = 0; r < height; ++r) {\n\
                     float* row = (float*)((char*)devPtr + r * pitch);\n\
                     for (int c = 0; c < width; ++c) {\n\
                         float element = row[c];\n\
                     }\n\
                 }\n\
             }",
            &[],
            &["MyKernel"],
        );
    }

    #[test]
    fn device_helpers_are_not_kernels() {
        check(
            "__device__ float square(float x) { return x * x; }\n\
             __global__ void k(float* a) { a[threadIdx.x] = square(a[threadIdx.x]); }",
            &[],
            &["k"],
        );
    }
}

/// Kernels compute what they should: outputs compared byte for byte with a reference computed
/// from the same (seeded) inputs.
mod results {
    use super::*;
    use std::collections::HashMap;

    /// Runs every block of the launch and compares buffer `output` with `reference(inputs)`, where
    /// `inputs` holds every buffer's contents before the run.
    fn check(
        source: &str,
        overrides: &[(&str, &str)],
        kernel: &str,
        l: Launch,
        output: &str,
        reference: impl Fn(&HashMap<String, Vec<u8>>) -> Vec<u8>,
    ) {
        let program = compile(source, &defines(overrides)).unwrap_or_else(|d| panic!("{d}"));
        let mut sim = Simulation::new(&program, kernel, &l, 7).unwrap_or_else(|d| panic!("{d}"));
        let mut inputs = HashMap::new();
        for (name, _) in &l.buffers {
            inputs.insert(name.clone(), sim.read_buffer(name).unwrap_or_default());
        }
        for b in all_blocks(&l) {
            sim.run_block(b, 10_000_000)
                .unwrap_or_else(|d| panic!("{d}"));
        }
        let found = sim.read_buffer(output).unwrap_or_default();
        let expected = reference(&inputs);
        assert_eq!(found.len(), expected.len());
        if let Some(i) = (0..found.len()).find(|&i| found[i] != expected[i]) {
            panic!(
                "{kernel}: byte {i} of '{output}' differs (element {}): {:?} != {:?}",
                i / 4,
                &found[i / 4 * 4..i / 4 * 4 + 4],
                &expected[i / 4 * 4..i / 4 * 4 + 4]
            );
        }
    }

    fn adjacent_difference(inputs: &HashMap<String, Vec<u8>>, n: usize) -> Vec<u8> {
        let input = i32s(&inputs["input"]);
        let mut result = i32s(&inputs["result"]);
        for i in 1..n {
            result[i] = input[i].wrapping_sub(input[i - 1]);
        }
        i32_bytes(&result)
    }

    #[test]
    fn adj_diff_naive_gives_input_i_minus_input_i_minus_one() {
        let l = launch(
            [4, 1, 1],
            [256, 1, 1],
            0,
            &[("n", Value::Int(1000))],
            &[("result", 4000), ("input", 4000)],
        );
        check(ADJ_DIFF, &[], "adj_diff_naive", l, "result", |i| {
            adjacent_difference(i, 1000)
        });
    }

    #[test]
    fn adj_diff_shared_gives_the_same_through_shared_memory() {
        let l = launch(
            [4, 1, 1],
            [256, 1, 1],
            1024,
            &[("n", Value::Int(1000))],
            &[("result", 4000), ("input", 4000)],
        );
        check(ADJ_DIFF, &[], "adj_diff_shared", l, "result", |i| {
            adjacent_difference(i, 1000)
        });
    }

    fn matmul(inputs: &HashMap<String, Vec<u8>>, n: usize) -> Vec<u8> {
        let (a, b) = (f32s(&inputs["a"]), f32s(&inputs["b"]));
        let mut c = vec![0f32; n * n];
        for row in 0..n {
            for col in 0..n {
                let mut r = 0f32;
                for k in 0..n {
                    r += a[row * n + k] * b[k * n + col];
                }
                c[row * n + col] = r;
            }
        }
        f32_bytes(&c)
    }

    fn matmul_launch(n: u32, tile: u32) -> Launch {
        let bytes = u64::from(n * n * 4);
        launch(
            [n / tile, n / tile, 1],
            [tile, tile, 1],
            0,
            &[("n", Value::Int(i64::from(n)))],
            &[("a", bytes), ("b", bytes), ("c", bytes)],
        )
    }

    #[test]
    fn mm_naive_and_mm_tiled_agree_with_the_row_times_column_sum() {
        check(MATMUL, &[], "mm_naive", matmul_launch(64, 16), "c", |i| {
            matmul(i, 64)
        });
        check(MATMUL, &[], "mm_tiled", matmul_launch(64, 16), "c", |i| {
            matmul(i, 64)
        });
        check(
            MATMUL,
            &[("PAD", "1")],
            "mm_tiled",
            matmul_launch(64, 16),
            "c",
            |i| matmul(i, 64),
        );
        check(
            MATMUL,
            &[("TILE_WIDTH", "32")],
            "mm_tiled",
            matmul_launch(64, 32),
            "c",
            |i| matmul(i, 64),
        );
    }

    #[test]
    fn seed_001_tiled_matmul_with_register_counters_multiplies() {
        let n = 64usize;
        let bytes = (n * n * 4) as u64;
        let l = launch(
            [4, 4, 1],
            [16, 16, 1],
            0,
            &[("width", Value::Int(n as i64))],
            &[("g_C", bytes), ("g_A", bytes), ("g_B", bytes)],
        );
        check(
            SEED_001_TILED_MATMUL,
            &[("TILE_WIDTH", "16")],
            "matmul",
            l,
            "g_C",
            |i| {
                let renamed: HashMap<String, Vec<u8>> = [
                    ("a".to_string(), i["g_A"].clone()),
                    ("b".to_string(), i["g_B"].clone()),
                ]
                .into();
                matmul(&renamed, n)
            },
        );
    }

    fn transposed(inputs: &HashMap<String, Vec<u8>>, n: usize, transpose: bool) -> Vec<u8> {
        let input = f32s(&inputs["in"]);
        let mut out = vec![0f32; n * n];
        for y in 0..n {
            for x in 0..n {
                out[if transpose { x * n + y } else { y * n + x }] = input[y * n + x];
            }
        }
        f32_bytes(&out)
    }

    #[test]
    fn transpose_kernels_transpose_and_the_copy_copies() {
        let l = || {
            launch(
                [2, 2, 1],
                [32, 8, 1],
                0,
                &[("n", Value::Int(64))],
                &[("out", 64 * 64 * 4), ("in", 64 * 64 * 4)],
            )
        };
        check(TRANSPOSE, &[], "tr_copy", l(), "out", |i| {
            transposed(i, 64, false)
        });
        check(TRANSPOSE, &[], "tr_naive", l(), "out", |i| {
            transposed(i, 64, true)
        });
        check(TRANSPOSE, &[], "tr_shared", l(), "out", |i| {
            transposed(i, 64, true)
        });
        check(TRANSPOSE, &[("PAD", "1")], "tr_shared", l(), "out", |i| {
            transposed(i, 64, true)
        });
    }

    fn sum(inputs: &HashMap<String, Vec<u8>>) -> Vec<u8> {
        let total: i32 = i32s(&inputs["in"])
            .iter()
            .fold(0i32, |acc, v| acc.wrapping_add(*v));
        let before = i32s(&inputs["result"])[0];
        i32_bytes(&[before.wrapping_add(total)])
    }

    #[test]
    fn global_and_hierarchical_atomics_give_the_same_sum() {
        let l = || {
            launch(
                [4, 1, 1],
                [256, 1, 1],
                0,
                &[("n", Value::Int(1000))],
                &[("in", 4000), ("result", 4)],
            )
        };
        check(ATOMICS, &[], "sum_global_atomic", l(), "result", sum);
        check(ATOMICS, &[], "sum_hier_atomic", l(), "result", sum);
    }

    #[test]
    fn smem_stride_sums_consecutive_words_from_lane_times_stride() {
        // s[i] = i, lane t reads s[2t], s[2t+1], s[2t+2], s[2t+3]: 8t + 6.
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[("stride", Value::Int(2)), ("iters", Value::Int(4))],
            &[("out", 128)],
        );
        check(BANKS, &[], "smem_stride", l, "out", |_| {
            f32_bytes(&(0..32).map(|t| (8 * t + 6) as f32).collect::<Vec<_>>())
        });
    }

    #[test]
    fn row_per_thread_sums_each_row_of_a_32_by_32_block() {
        let l = launch(
            [2, 1, 1],
            [32, 1, 1],
            0,
            &[],
            &[("out", 2 * 32 * 4), ("in", 2 * 1024 * 4)],
        );
        let rows = |inputs: &HashMap<String, Vec<u8>>| {
            let input = f32s(&inputs["in"]);
            let mut out = Vec::new();
            for b in 0..2 {
                for t in 0..32 {
                    let mut acc = 0f32;
                    for j in 0..32 {
                        acc += input[b * 1024 + t * 32 + j];
                    }
                    out.push(acc);
                }
            }
            f32_bytes(&out)
        };
        check(BANKS, &[("PAD", "1")], "row_per_thread", l, "out", rows);
    }

    #[test]
    fn strided_and_offset_copies_pick_the_right_elements() {
        let l = launch(
            [2, 1, 1],
            [64, 1, 1],
            0,
            &[("stride", Value::Int(3)), ("n_out", Value::Int(100))],
            &[("out", 400), ("in", 1200)],
        );
        check(COALESCING, &[], "strided_copy", l, "out", |i| {
            let input = f32s(&i["in"]);
            let mut out = f32s(&i["out"]);
            for (k, slot) in out.iter_mut().enumerate().take(100) {
                *slot = input[k * 3];
            }
            f32_bytes(&out)
        });
        let l = launch(
            [2, 1, 1],
            [64, 1, 1],
            0,
            &[("offset", Value::Int(5)), ("n", Value::Int(120))],
            &[("out", 512), ("in", 600)],
        );
        check(COALESCING, &[], "offset_copy", l, "out", |i| {
            let input = f32s(&i["in"]);
            let mut out = f32s(&i["out"]);
            for (k, slot) in out.iter_mut().enumerate().take(120) {
                *slot = input[k + 5];
            }
            f32_bytes(&out)
        });
    }

    #[test]
    fn seed_004_tiled_kernel_with_its_index_bug_runs_and_multiplies_tile_elements() {
        // Each phase adds TILE_WIDTH * M[row][ph*T+tx] * N[ph*T+ty][col]: the bug, faithfully run.
        let n = 32usize;
        let bytes = (n * n * 4) as u64;
        let l = launch(
            [2, 2, 1],
            [16, 16, 1],
            0,
            &[("Width", Value::Int(n as i64))],
            &[("M", bytes), ("N", bytes), ("P", bytes)],
        );
        check(
            SEED_004_TILED_MATMUL,
            &[("TILE_WIDTH", "16")],
            "matrixMulKernel",
            l,
            "P",
            |i| {
                let (m, nn) = (f32s(&i["M"]), f32s(&i["N"]));
                let mut p = vec![0f32; n * n];
                for row in 0..n {
                    for col in 0..n {
                        let (tx, ty) = (col % 16, row % 16);
                        let mut v = 0f32;
                        for ph in 0..n / 16 {
                            let (a, b) = (m[row * n + ph * 16 + tx], nn[(ph * 16 + ty) * n + col]);
                            for _ in 0..16 {
                                v += a * b;
                            }
                        }
                        p[row * n + col] = v;
                    }
                }
                f32_bytes(&p)
            },
        );
    }

    #[test]
    fn divergent_loops_with_break_continue_and_return_follow_each_lane() {
        // Lane t counts the odd numbers below t, stopping at 9; lanes above 20 return early.
        let source = "__global__ void k(int* out) {\n\
              int t = threadIdx.x;\n\
              if (t > 20) { out[t] = -1; return; }\n\
              int c = 0;\n\
              for (int i = 0; i < t; i++) {\n\
                if (i % 2 == 0) continue;\n\
                if (i > 9) break;\n\
                c++;\n\
              }\n\
              int j = 0;\n\
              do { j += 2; } while (j < t);\n\
              out[t] = c * 100 + j;\n\
            }";
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[("out", 128)]);
        check(source, &[], "k", l, "out", |_| {
            let out: Vec<i32> = (0..32)
                .map(|t: i32| {
                    if t > 20 {
                        return -1;
                    }
                    let c = (0..t).filter(|i| i % 2 == 1 && *i <= 9).count() as i32;
                    let mut j = 0;
                    loop {
                        j += 2;
                        if j >= t {
                            break;
                        }
                    }
                    c * 100 + j
                })
                .collect();
            i32_bytes(&out)
        });
    }

    #[test]
    fn values_every_lane_shares_stay_right_where_a_branch_or_a_short_warp_splits_them() {
        // `u` starts uniform (blockIdx and a parameter), is changed in the odd lanes only, and
        // stepped by a loop counter every lane shares; the block's second warp has 8 lanes of
        // 32, so nothing it computes is uniform over its 32 lanes (`interp/registers`).
        let source = "__global__ void k(int* out, int base) {\n\
              int t = threadIdx.x;\n\
              int u = blockIdx.x * 3 + base;\n\
              if (t & 1) u = u + 5;\n\
              int s = 0;\n\
              for (int k = 0; k < 4; ++k) { s += u * k; u = -u; }\n\
              float f = (float)(base * 2);\n\
              out[blockIdx.x * 40 + t] = s + (int)(f * 0.5f) + (t < 36 ? 1000 : 0);\n\
            }";
        let l = launch(
            [2, 1, 1],
            [40, 1, 1],
            0,
            &[("base", Value::Int(7))],
            &[("out", 320)],
        );
        check(source, &[], "k", l, "out", |_| {
            let out: Vec<i32> = (0..2)
                .flat_map(|block: i32| (0..40).map(move |t: i32| (block, t)))
                .map(|(block, t)| {
                    let mut u = block * 3 + 7;
                    if t & 1 == 1 {
                        u += 5;
                    }
                    let mut s = 0;
                    for k in 0..4 {
                        s += u * k;
                        u = -u;
                    }
                    s + 7 + if t < 36 { 1000 } else { 0 }
                })
                .collect();
            i32_bytes(&out)
        });
    }

    #[test]
    fn device_functions_return_per_lane() {
        // Lanes above 10 return early from `clamp_to`; the others fall through to the end.
        let source = "__device__ int clamp_to(int v, int hi) {\n\
              if (v > hi) return hi;\n\
              return v;\n\
            }\n\
            __device__ float twice(float x) { return 2.0f * x; }\n\
            __global__ void k(int* out) {\n\
              out[threadIdx.x] = clamp_to(threadIdx.x, 10) + clamp_to(3, 1) * 100 + (int)twice(0.5f) * 1000;\n\
            }";
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[("out", 128)]);
        check(source, &[], "k", l, "out", |_| {
            i32_bytes(
                &(0..32)
                    .map(|t: i32| t.min(10) + 100 + 1000)
                    .collect::<Vec<_>>(),
            )
        });
    }

    #[test]
    fn c_arithmetic_conversions_shifts_and_vectors() {
        let source = "__device__ int twice(int x) { return 2 * x; }\n\
            __constant__ int table[4] = {10, 20, 30, 40};\n\
            __global__ void k(int* out, float4* v) {\n\
              unsigned int u = 1u;\n\
              int minus = -1;\n\
              out[0] = (minus < u) ? 1 : 0;\n\
              out[1] = (-7) / 2;\n\
              out[2] = (-7) % 2;\n\
              out[3] = (int)(1u << 31 >> 30);\n\
              out[4] = -8 >> 1;\n\
              out[5] = (int)3.99f + (int)-2.5f;\n\
              out[6] = twice(table[2]) + max(3, 9) + min(-2, 4);\n\
              float4 a = v[0];\n\
              a.y = 5.0f;\n\
              out[7] = (int)(a.y * 2.0f);\n\
              out[8] = sizeof(float4) + sizeof(double);\n\
              int x = 7; x <<= 2; x ^= 5; x %= 7;\n\
              out[9] = x;\n\
            }";
        let l = launch([1, 1, 1], [1, 1, 1], 0, &[], &[("out", 40), ("v", 16)]);
        // -1 < 1u is false in C: -1 converts to 4294967295.
        check(source, &[], "k", l, "out", |_| {
            i32_bytes(&[0, -3, -1, 2, -4, 1, 67, 10, 24, 4])
        });
    }
}

/// The records a warp's memory instructions make.
mod records {
    use super::*;

    /// Runs `block` and compares the `nth` record of `warp` in `space` of `kind` with `expected`.
    #[allow(clippy::too_many_arguments)]
    fn check(
        source: &str,
        overrides: &[(&str, &str)],
        kernel: &str,
        l: Launch,
        block: [u32; 3],
        warp: u32,
        pick: (Space, AccessKind, usize),
        expected: WarpAccess,
    ) {
        let program = compile(source, &defines(overrides)).unwrap_or_else(|d| panic!("{d}"));
        let mut sim = Simulation::new(&program, kernel, &l, 7).unwrap_or_else(|d| panic!("{d}"));
        let run = sim
            .run_block(block, 1_000_000)
            .unwrap_or_else(|d| panic!("{d}"));
        let (space, kind, nth) = pick;
        let found = run
            .records
            .iter()
            .filter(|r| r.warp == warp && r.access.space == space && r.access.kind == kind)
            .nth(nth)
            .unwrap_or_else(|| panic!("no record {nth} of {space:?} {kind:?} in warp {warp}"));
        assert_eq!(found.access, expected);
    }

    fn access(
        space: Space,
        kind: AccessKind,
        bytes: u32,
        address: impl FnMut(u32) -> Option<u64>,
    ) -> WarpAccess {
        WarpAccess::from_fn(
            space,
            kind,
            AccessWidth::new(bytes).unwrap_or(AccessWidth::FOUR),
            address,
        )
    }

    #[test]
    fn stride_two_loads_are_eight_bytes_apart() {
        let l = launch(
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[("stride", Value::Int(2)), ("iters", Value::Int(4))],
            &[("out", 256)],
        );
        check(
            BANKS,
            &[],
            "smem_stride",
            l.clone(),
            [0, 0, 0],
            0,
            (Space::Shared, AccessKind::Load, 0),
            access(Space::Shared, AccessKind::Load, 4, |lane| {
                Some(8 * u64::from(lane))
            }),
        );
        // Warp 1's lanes are threads 32..63: idx = (32 + lane) * 2.
        check(
            BANKS,
            &[],
            "smem_stride",
            l,
            [0, 0, 0],
            1,
            (Space::Shared, AccessKind::Load, 0),
            access(Space::Shared, AccessKind::Load, 4, |lane| {
                Some(8 * u64::from(32 + lane))
            }),
        );
    }

    #[test]
    fn coalesced_global_loads_are_consecutive_words_from_the_buffer_base() {
        // `in` is the second buffer: `out` (256 bytes) takes 0x1000_0000, `in` follows.
        let l = launch(
            [2, 1, 1],
            [32, 1, 1],
            0,
            &[("offset", Value::Int(1)), ("n", Value::Int(64))],
            &[("out", 256), ("in", 512)],
        );
        let base = interp::GLOBAL_BASE + 256;
        check(
            COALESCING,
            &[],
            "offset_copy",
            l,
            [1, 0, 0],
            0,
            (Space::Global, AccessKind::Load, 0),
            access(Space::Global, AccessKind::Load, 4, |lane| {
                Some(base + 4 * (32 + 1 + u64::from(lane)))
            }),
        );
    }

    #[test]
    fn divergent_lanes_are_absent_from_the_record() {
        // adj_diff_naive: thread 0 of block 0 fails `i > 0`; `result` (128 bytes) is padded to 256.
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[("n", Value::Int(32))],
            &[("result", 128), ("input", 128)],
        );
        let input = interp::GLOBAL_BASE + 256;
        check(
            ADJ_DIFF,
            &[],
            "adj_diff_naive",
            l,
            [0, 0, 0],
            0,
            (Space::Global, AccessKind::Load, 1),
            access(Space::Global, AccessKind::Load, 4, |lane| {
                (lane > 0).then(|| input + 4 * u64::from(lane - 1))
            }),
        );
    }

    #[test]
    fn the_padded_row_per_thread_column_store_spreads_over_rows() {
        // s[j][t] with PAD 1: row j starts at j * 33 words.
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[("out", 128), ("in", 4096)]);
        check(
            BANKS,
            &[("PAD", "1")],
            "row_per_thread",
            l.clone(),
            [0, 0, 0],
            0,
            (Space::Shared, AccessKind::Store, 3),
            access(Space::Shared, AccessKind::Store, 4, |lane| {
                Some(4 * (3 * 33 + u64::from(lane)))
            }),
        );
        // s[t][j]: lane t reads word t * 33 + j.
        check(
            BANKS,
            &[("PAD", "1")],
            "row_per_thread",
            l,
            [0, 0, 0],
            0,
            (Space::Shared, AccessKind::Load, 5),
            access(Space::Shared, AccessKind::Load, 4, |lane| {
                Some(4 * (u64::from(lane) * 33 + 5))
            }),
        );
    }

    #[test]
    fn a_shared_partial_sum_is_one_shared_atomic_per_warp() {
        let l = launch(
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[("n", Value::Int(64))],
            &[("in", 256), ("result", 4)],
        );
        check(
            ATOMICS,
            &[],
            "sum_hier_atomic",
            l,
            [0, 0, 0],
            1,
            (Space::Shared, AccessKind::Atomic, 0),
            access(Space::Shared, AccessKind::Atomic, 4, |_| Some(0)),
        );
    }

    #[test]
    fn dynamically_indexed_thread_arrays_use_interleaved_local_memory() {
        // heap[i] of thread t of a 64-thread block is at (i * 64 + t) * 4.
        let source = "__global__ void k(float* out, int j) {\n\
            float heap[10];\n\
            for (int i = 0; i < 10; i++) heap[i] = i;\n\
            out[threadIdx.x] = heap[j];\n\
            }";
        let l = launch(
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[("j", Value::Int(3))],
            &[("out", 256)],
        );
        check(
            source,
            &[],
            "k",
            l.clone(),
            [0, 0, 0],
            1,
            (Space::Local, AccessKind::Load, 0),
            access(Space::Local, AccessKind::Load, 4, |lane| {
                Some((3 * 64 + 32 + u64::from(lane)) * 4)
            }),
        );
        check(
            source,
            &[],
            "k",
            l,
            [0, 0, 0],
            0,
            (Space::Local, AccessKind::Store, 2),
            access(Space::Local, AccessKind::Store, 4, |lane| {
                Some((2 * 64 + u64::from(lane)) * 4)
            }),
        );
    }

    #[test]
    fn constant_reads_are_constant_records() {
        let source = "__constant__ float weights[8];\n\
            __global__ void k(float* out) { out[threadIdx.x] = weights[threadIdx.x / 8]; }";
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[("out", 128)]);
        check(
            source,
            &[],
            "k",
            l,
            [0, 0, 0],
            0,
            (Space::Constant, AccessKind::Load, 0),
            access(Space::Constant, AccessKind::Load, 4, |lane| {
                Some(4 * u64::from(lane / 8))
            }),
        );
    }

    #[test]
    fn float4_loads_are_sixteen_bytes_wide() {
        let source = "__global__ void k(float4* out, const float4* in) { out[threadIdx.x] = in[threadIdx.x]; }";
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[("out", 512), ("in", 512)]);
        let base = interp::GLOBAL_BASE + 512;
        check(
            source,
            &[],
            "k",
            l,
            [0, 0, 0],
            0,
            (Space::Global, AccessKind::Load, 0),
            access(Space::Global, AccessKind::Load, 16, |lane| {
                Some(base + 16 * u64::from(lane))
            }),
        );
    }
}

/// How many records of each kind a block makes, and its flops.
mod counts {
    use super::*;

    /// Tallies records by space and kind as they happen, as a counter would.
    #[derive(Default)]
    struct Tally([[u64; 3]; 4]);

    impl RecordSink for Tally {
        fn record(&mut self, record: &MemRecord) {
            let space = record.access.space as usize;
            let kind = record.access.kind as usize;
            self.0[space][kind] += 1;
        }
    }

    /// Runs `blocks` and summarises their records as "Space Kind count" (in a fixed order, only
    /// non-zero counts) followed by the flops.
    fn check(
        source: &str,
        overrides: &[(&str, &str)],
        kernel: &str,
        l: Launch,
        blocks: &[[u32; 3]],
        expected: &str,
    ) {
        let program = compile(source, &defines(overrides)).unwrap_or_else(|d| panic!("{d}"));
        let mut sim = Simulation::new(&program, kernel, &l, 7).unwrap_or_else(|d| panic!("{d}"));
        let mut tally = Tally::default();
        let mut flops = 0;
        let started = std::time::Instant::now();
        for b in blocks {
            let stats = sim
                .run_block_into(*b, 100_000_000, &mut tally)
                .unwrap_or_else(|d| panic!("{d}"));
            flops += stats.flops;
        }
        eprintln!(
            "{kernel}: {} blocks in {:?}",
            blocks.len(),
            started.elapsed()
        );
        let mut parts = Vec::new();
        for (space, name) in [Space::Global, Space::Shared, Space::Local, Space::Constant]
            .iter()
            .zip(["Global", "Shared", "Local", "Constant"])
        {
            for (kind, kname) in [AccessKind::Atomic, AccessKind::Load, AccessKind::Store]
                .iter()
                .zip(["Atomic", "Load", "Store"])
            {
                let n = tally.0[*space as usize][*kind as usize];
                if n > 0 {
                    parts.push(format!("{name} {kname} {n}"));
                }
            }
        }
        parts.push(format!("flops {flops}"));
        assert_eq!(parts.join(", "), expected);
    }

    #[test]
    fn tiled_matmul_1024_loads_each_tile_once_per_phase() {
        // Per block of 8 warps and 64 phases: 2 global loads and 2 shared stores per warp and
        // phase, 2 x 16 shared loads in the inner loop, one global store per warp at the end;
        // 256 threads x 1024 multiply-adds x 2 flops. Eight blocks in release mode (the timing
        // printed is the figure reported for the interpreter's speed), one in debug mode.
        let blocks: Vec<[u32; 3]> = if cfg!(debug_assertions) {
            vec![[5, 7, 0]]
        } else {
            (0..8).map(|i| [i * 8, 63 - i, 0]).collect()
        };
        let b = blocks.len() as u64;
        let expected = format!(
            "Global Load {}, Global Store {}, Shared Load {}, Shared Store {}, flops {}",
            b * 8 * 64 * 2,
            b * 8,
            b * 8 * 64 * 32,
            b * 8 * 64 * 2,
            b * 256 * 1024 * 2
        );
        let bytes = 1024 * 1024 * 4;
        let l = launch(
            [64, 64, 1],
            [16, 16, 1],
            0,
            &[("n", Value::Int(1024))],
            &[("a", bytes), ("b", bytes), ("c", bytes)],
        );
        check(MATMUL, &[], "mm_tiled", l, &blocks, &expected);
    }

    #[test]
    fn adj_diff_shared_reads_global_memory_once_per_thread_plus_the_boundary() {
        // Block 1 of 4: 8 warps load input[i] once; lane 0 of warp 0 takes the `else if` branch,
        // which reads input[i-1] and is an instruction (a load and a store) of its own.
        let l = launch(
            [4, 1, 1],
            [256, 1, 1],
            1024,
            &[("n", Value::Int(1024))],
            &[("result", 4096), ("input", 4096)],
        );
        check(
            ADJ_DIFF,
            &[],
            "adj_diff_shared",
            l,
            &[[1, 0, 0]],
            "Global Load 9, Global Store 9, Shared Load 17, Shared Store 8, flops 0",
        );
    }

    #[test]
    fn adj_diff_naive_loads_twice_per_element() {
        let l = launch(
            [4, 1, 1],
            [256, 1, 1],
            0,
            &[("n", Value::Int(1024))],
            &[("result", 4096), ("input", 4096)],
        );
        check(
            ADJ_DIFF,
            &[],
            "adj_diff_naive",
            l,
            &[[1, 0, 0]],
            "Global Load 16, Global Store 8, flops 0",
        );
    }

    #[test]
    fn register_arrays_with_constant_indices_make_no_records() {
        // seed 002: "small array, and indices known at compile time" stays in registers.
        let source = "__global__ void k(float2* result, float2* b) {\n\
            float2 bvals[2];\n\
            bvals[0] = b[threadIdx.x];\n\
            bvals[1] = b[threadIdx.x + blockDim.x];\n\
            float w[4];\n\
            for (int i = 0; i < 4; ++i) w[i] = i * bvals[i % 2].x;\n\
            result[threadIdx.x] = make_float2(w[0] + w[3], w[1] * w[2]);\n\
            }";
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[],
            &[("result", 256), ("b", 512)],
        );
        check(
            source,
            &[],
            "k",
            l,
            &[[0, 0, 0]],
            "Global Load 2, Global Store 1, flops 192",
        );
    }

    #[test]
    fn hierarchical_atomics_make_one_shared_atomic_per_warp_and_one_global() {
        let l = launch(
            [4, 1, 1],
            [256, 1, 1],
            0,
            &[("n", Value::Int(1024))],
            &[("in", 4096), ("result", 4)],
        );
        check(ATOMICS, &[], "sum_hier_atomic", l.clone(), &[[2, 0, 0]], "Global Atomic 1, Global Load 8, Shared Atomic 8, Shared Load 1, Shared Store 1, flops 0");
        check(
            ATOMICS,
            &[],
            "sum_global_atomic",
            l,
            &[[2, 0, 0]],
            "Global Atomic 8, Global Load 8, flops 0",
        );
    }
}

/// Errors point at the right line and column.
mod errors {
    use super::*;

    /// Compiles `source` and, if that works, runs every block of `l`; the first error must read
    /// `expected` ("LINE:COL: message").
    fn check(source: &str, overrides: &[(&str, &str)], kernel: &str, l: Launch, expected: &str) {
        let outcome = compile(source, &defines(overrides)).and_then(|program| {
            let config = RunConfig {
                step_budget: 100_000,
                blocks: BlockSelection::All,
                seed: 3,
            };
            run(&program, kernel, &l, &config).map(|_| ())
        });
        assert_eq!(
            outcome.map_err(|d| d.to_string()),
            Err(expected.to_string())
        );
    }

    fn one_warp(buffers: &[(&str, u64)]) -> Launch {
        launch([1, 1, 1], [32, 1, 1], 0, &[], buffers)
    }

    #[test]
    fn seed_000_tiled_matmul_uses_an_undeclared_m() {
        let l = launch([1, 1, 1], [16, 16, 1], 0, &[("width", Value::Int(16))], &[]);
        check(
            SEED_000_TILED_MATMUL,
            &[("TILE_WIDTH", "16")],
            "mat_mul",
            l,
            "20:22: 'm' is not declared",
        );
    }

    #[test]
    fn an_out_of_bounds_global_index_names_the_buffer() {
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[("offset", Value::Int(262_144)), ("n", Value::Int(32))],
            &[("out", 128), ("in", 1_048_576)],
        );
        check(
            COALESCING,
            &[],
            "offset_copy",
            l,
            "9:23: index 262144 is outside buffer 'in' (1048576 bytes)",
        );
    }

    #[test]
    fn a_negative_index_is_reported_as_negative() {
        // adj_diff_naive without its `i > 0` guard reads input[-1] in thread 0.
        let source = "__global__ void k(int* result, const int* input) {\n  int i = threadIdx.x;\n  result[i] = input[i] - input[i - 1];\n}";
        check(
            source,
            &[],
            "k",
            one_warp(&[("result", 128), ("input", 128)]),
            "3:26: index -1 is outside buffer 'input' (128 bytes)",
        );
    }

    #[test]
    fn too_much_shared_or_local_memory_is_an_error_not_an_allocation() {
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            1 << 30,
            &[("n", Value::Int(32))],
            &[("result", 128), ("input", 128)],
        );
        check(ADJ_DIFF, &[], "adj_diff_shared", l, "8:17: a block of 'adj_diff_shared' uses 1073741824 bytes of shared memory; no GPU gives a block more than 232448");
        let source =
            "__global__ void k(float* out, int j) {\n  float big[1000000];\n  out[0] = big[j];\n}";
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[("j", Value::Int(0))],
            &[("out", 128)],
        );
        check(source, &[], "k", l, "1:17: the per-thread arrays of 'k' take 4000000 bytes; a thread has at most 524288 bytes of local memory");
    }

    #[test]
    fn deep_but_allowed_expressions_compile_and_run() {
        // A chain of 190 additions is a tree 190 deep; 40 nested parentheses nest the parser.
        let chain = vec!["threadIdx.x"; 190].join(" + ");
        let nested = format!("{}x{}", "(".repeat(40), ")".repeat(40));
        let source = format!("__global__ void k(int* out) {{\n  int x = {chain};\n  out[threadIdx.x] = {nested} / 0;\n}}");
        check(
            &source,
            &[],
            "k",
            one_warp(&[("out", 128)]),
            "3:22: integer division by zero (in lane 0 of warp 0)",
        );
    }

    #[test]
    fn an_out_of_bounds_shared_index_names_the_array() {
        let source = "__global__ void k(float* out) {\n  __shared__ float s[32];\n  s[threadIdx.x + 1] = 1.0f;\n}";
        check(
            source,
            &[],
            "k",
            one_warp(&[("out", 128)]),
            "3:3: index 32 is outside shared array 's' (128 bytes)",
        );
    }

    #[test]
    fn a_barrier_inside_a_divergent_branch_is_an_error() {
        let source = "__global__ void k(float* out) {\n  if (threadIdx.x < 16) {\n    __syncthreads();\n  }\n}";
        check(source, &[], "k", one_warp(&[("out", 128)]), "3:5: __syncthreads() is reached by only some threads of the block (in warp 0, 16 of 32 lanes)");
    }

    #[test]
    fn warps_that_returned_entirely_do_not_block_a_barrier() {
        // The whole second warp returns before the barrier; the first warp must still pass it.
        let source = "__global__ void k(int* out) {\n  __shared__ int s[64];\n  if (threadIdx.x >= 32) return;\n  s[threadIdx.x] = 1;\n  __syncthreads();\n  out[threadIdx.x] = s[31 - threadIdx.x];\n  int zero = 0;\n  out[0] = 1 / zero;\n}";
        let l = launch([1, 1, 1], [64, 1, 1], 0, &[], &[("out", 256)]);
        // It runs past the barrier and reaches the deliberate division by zero.
        check(
            source,
            &[],
            "k",
            l,
            "8:12: integer division by zero (in lane 0 of warp 0)",
        );
    }

    #[test]
    fn integer_division_by_zero_is_an_error() {
        let source =
            "__global__ void k(int* out) {\n  out[threadIdx.x] = 100 / (int)threadIdx.x;\n}";
        check(
            source,
            &[],
            "k",
            one_warp(&[("out", 128)]),
            "2:22: integer division by zero (in lane 0 of warp 0)",
        );
    }

    #[test]
    fn an_endless_loop_stops_at_the_step_budget() {
        let source = "__global__ void k(int* out) {\n  int x = 0;\n  while (1) { x++; }\n}";
        check(
            source,
            &[],
            "k",
            one_warp(&[("out", 128)]),
            "3:10: the simulation used up its step budget of 100000 steps (a smaller launch or fewer loop iterations fit)",
        );
    }

    #[test]
    fn an_unknown_kernel_lists_the_kernels() {
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[("n", Value::Int(32))],
            &[("result", 128), ("input", 128)],
        );
        check(
            ADJ_DIFF,
            &[],
            "adj_diff",
            l,
            "0:0: there is no kernel named 'adj_diff' (kernels: adj_diff_naive, adj_diff_shared)",
        );
    }

    #[test]
    fn a_missing_semicolon_points_after_the_statement() {
        let source = "__global__ void k(int* out) {\n  int i = threadIdx.x\n  out[i] = 0;\n}";
        check(
            source,
            &[],
            "k",
            one_warp(&[("out", 128)]),
            "2:22: expected ';' after the declaration, found 'out'",
        );
    }

    #[test]
    fn an_unterminated_comment_points_at_its_start() {
        let source = "__global__ void k(int* out) {\n  out[0] = 1; /* forgot to close\n}";
        check(
            source,
            &[],
            "k",
            one_warp(&[("out", 128)]),
            "2:15: unterminated /* comment",
        );
    }

    #[test]
    fn type_errors_are_reported_before_running() {
        let l = || one_warp(&[("out", 128)]);
        check(
            "__global__ void k(int* out, int n) { out[0] = n[1]; }",
            &[],
            "k",
            l(),
            "1:47: cannot index a value of type 'int': it is neither an array nor a pointer",
        );
        check(
            "__global__ void k(const int* out) { out[0] = 1; }",
            &[],
            "k",
            l(),
            "1:37: '=' cannot change a const or __constant__ location",
        );
        check(
            "__global__ void k(int* out) { atomicAdd(out); }",
            &[],
            "k",
            l(),
            "1:31: 'atomicAdd' takes 2 arguments, not 1",
        );
        check(
            "__global__ void k(int* out) { out[1.5f] = 0; }",
            &[],
            "k",
            l(),
            "1:35: an array index must be an integer, not 'float'",
        );
        check(
            "__constant__ int c;\n__global__ void k(int* out) { c = 1; }",
            &[],
            "k",
            l(),
            "2:31: '=' cannot change a const or __constant__ location",
        );
    }

    #[test]
    fn launch_mistakes_point_at_the_parameter() {
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[],
            &[("result", 128), ("input", 128)],
        );
        check(
            ADJ_DIFF,
            &[],
            "adj_diff_naive",
            l,
            "2:67: the launch gives no value for the parameter 'n'",
        );
    }
}

/// Constructs at the edges of the language: fences, endless `for` headers, huge indices, `const`
/// pointers, kernels next to broken ones, the shared step budget, launch mistakes.
mod edges {
    use super::*;

    /// Compiles `source`, runs every block of `l` and returns buffer `output` as `int`s, or the
    /// first error as "LINE:COL: message".
    fn ints(source: &str, kernel: &str, l: &Launch, output: &str) -> Result<Vec<i32>, String> {
        let program = compile(source, &[]).map_err(|d| d.to_string())?;
        let mut sim = Simulation::new(&program, kernel, l, 1).map_err(|d| d.to_string())?;
        for b in all_blocks(l) {
            sim.run_block(b, 1_000_000).map_err(|d| d.to_string())?;
        }
        Ok(sim.read_i32s(output).unwrap_or_default())
    }

    fn one_warp(buffers: &[(&str, u64)]) -> Launch {
        launch([1, 1, 1], [32, 1, 1], 0, &[], buffers)
    }

    fn error(source: &str, l: &Launch) -> String {
        match ints(source, "k", l, "a") {
            Ok(values) => panic!("expected an error, the kernel ran and wrote {values:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn thread_fences_run_in_a_kernel_and_in_a_device_function_defined_after_it() {
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[]);
        assert_eq!(
            ints("__global__ void k() { __threadfence(); }", "k", &l, "a"),
            Ok(vec![])
        );
        let source = "__global__ void k(int* a) {\n  a[threadIdx.x] = 1;\n  __threadfence_block();\n  publish(a);\n}\n\
                      __device__ void publish(int* a) {\n  __threadfence();\n  a[0] = 7;\n  __threadfence_block();\n}";
        let mut expected = vec![1; 32];
        expected[0] = 7;
        assert_eq!(
            ints(source, "k", &one_warp(&[("a", 128)]), "a"),
            Ok(expected)
        );
    }

    #[test]
    fn a_for_loop_without_a_condition_ends_at_break_or_return() {
        let l = one_warp(&[("a", 128)]);
        let run = |body: &str| {
            ints(
                &format!("__global__ void k(int* a) {{ {body} }}"),
                "k",
                &l,
                "a",
            )
        };
        let mut first_is_one = vec![0; 32];
        first_is_one[0] = 1;
        assert_eq!(run("for (;;) { a[0] = 1; break; }").map(|a| a[0]), Ok(1));
        assert_eq!(
            run("for (;;) { a[threadIdx.x] = 0; if (threadIdx.x == 0) { a[0] = 1; } return; }"),
            Ok(first_is_one)
        );
        // Lanes leave at different iterations: lane t stops after t + 1.
        assert_eq!(
            run("int n = 0; for (int i = 0;; i++) { n++; if (i >= threadIdx.x) break; } a[threadIdx.x] = n;"),
            Ok((1..=32).collect())
        );
        assert_eq!(
            run(
                "int i = 0; for (;; ++i) { if (i == 3) { a[threadIdx.x] = i; return; } } a[0] = 5;"
            ),
            Ok(vec![3; 32])
        );
    }

    #[test]
    fn the_warps_of_a_block_share_one_step_budget() {
        let source = "__global__ void k(int* a) {\n  int x = 0;\n  for (int i = 0; i < 100; i++) { x += i; }\n  a[threadIdx.x] = x;\n}";
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        let steps_of = |threads: u32, budget: u64| {
            let l = launch([1, 1, 1], [threads, 1, 1], 0, &[], &[("a", 4096)]);
            let mut sim = Simulation::new(&program, "k", &l, 1).unwrap_or_else(|d| panic!("{d}"));
            sim.run_block([0, 0, 0], budget)
                .map(|run| run.steps)
                .map_err(|d| d.to_string())
        };
        let one_warp = steps_of(32, 1_000_000).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(steps_of(1024, 32 * one_warp), Ok(32 * one_warp));
        // Two warps' worth is used up by the first two warps; the third stops at its first step.
        assert_eq!(
            steps_of(1024, 2 * one_warp),
            Err(format!("2:7: the simulation used up its step budget of {} steps (a smaller launch or fewer loop iterations fit)", 2 * one_warp))
        );
        // The budget of `run` is for all the blocks of the run together.
        let config = |step_budget| RunConfig {
            step_budget,
            blocks: BlockSelection::All,
            seed: 1,
        };
        let l = launch([4, 1, 1], [32, 1, 1], 0, &[], &[("a", 128)]);
        assert!(run(&program, "k", &l, &config(4 * one_warp)).is_ok());
        assert!(run(&program, "k", &l, &config(3 * one_warp)).is_err());
    }

    #[test]
    fn huge_indices_are_out_of_bounds_with_their_true_value() {
        let l = one_warp(&[("a", 128)]);
        let k = |statement: &str| format!("__global__ void k(int* a) {{\n  {statement}\n}}");
        assert_eq!(
            error(&k("a[-9223372036854775807LL-1] = 1;"), &l),
            "2:3: index -9223372036854775808 is outside buffer 'a' (128 bytes)"
        );
        assert_eq!(
            error(&k("a[0] = *(a + 4611686018427387904LL);"), &l),
            "2:11: index 4611686018427387904 is outside buffer 'a' (128 bytes)"
        );
        assert_eq!(
            error(&k("a[0] = a[9223372036854775807LL];"), &l),
            "2:10: index 9223372036854775807 is outside buffer 'a' (128 bytes)"
        );
        // An index that fits 64 bits but not the 48 bits of an address.
        assert_eq!(
            error(&k("int* p = a + (1LL << 50);"), &l),
            "2:12: index 1125899906842624 is outside buffer 'a' (128 bytes)"
        );
        assert_eq!(
            error(&k("long long i = 1LL << 62;\n  int* p = a;\n  p += i;"), &l),
            "4:3: index 4611686018427387904 is outside buffer 'a' (128 bytes)"
        );
        // Arrays addressed straight from their object: a 2-D shared array counts whole elements.
        assert_eq!(
            error(
                &k("__shared__ int s[4][8];\n  a[0] = s[1][9223372036854775807LL];"),
                &l
            ),
            "3:10: index 9223372036854775815 is outside shared array 's' (128 bytes)"
        );
        assert_eq!(
            error(
                &k("__shared__ int s[4];\n  s[(int)threadIdx.x - 5] = 1;"),
                &l
            ),
            "3:3: index -5 is outside shared array 's' (16 bytes)"
        );
    }

    #[test]
    fn a_pointer_may_step_before_a_shared_array_at_address_zero_and_back() {
        let source = "__global__ void k(int* a) {\n  __shared__ int s[32];\n  s[threadIdx.x] = threadIdx.x;\n  __syncthreads();\n  int* p = s - 1;\n  p--;\n  a[threadIdx.x] = p[threadIdx.x + 2] - (int)(p - s);\n}";
        assert_eq!(
            ints(source, "k", &one_warp(&[("a", 128)]), "a"),
            Ok((2..34).collect())
        );
    }

    #[test]
    fn a_pointer_to_const_moves_but_what_it_points_to_stays() {
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[("k", Value::Int(3))],
            &[("a", 128)],
        );
        let source = "__global__ void k(int* a, int k) {\n  const int* p = a;\n  p += k;\n  p++;\n  const int* q;\n  q = p;\n  a[threadIdx.x] = q - a;\n}";
        assert_eq!(ints(source, "k", &l, "a"), Ok(vec![4; 32]));
        let rejected = |statement: &str| {
            let source = format!(
                "__global__ void k(int* a, int k) {{\n  const int* p = a;\n  {statement}\n}}"
            );
            ints(&source, "k", &l, "a").map(|_| ())
        };
        assert_eq!(
            rejected("*p = 1;"),
            Err("3:3: '=' cannot change a const or __constant__ location".to_string())
        );
        assert_eq!(
            rejected("p[0] += 1;"),
            Err("3:3: '+=' cannot change a const or __constant__ location".to_string())
        );
        assert_eq!(
            rejected("const int w[2] = {1, 2};\n  w[k % 2] = 3;"),
            Err("4:3: '=' cannot change a const or __constant__ location".to_string())
        );
        assert_eq!(
            rejected("const int n = 2;\n  n++;"),
            Err("4:3: '++' cannot change a const or __constant__ location".to_string())
        );
    }

    #[test]
    fn a_const_pointer_stays_but_what_it_points_to_may_change() {
        let l = launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[("k", Value::Int(3))],
            &[("a", 128)],
        );
        let source = "__global__ void k(int* const a, int k) {\n  int* const p = a + k;\n  p[threadIdx.x % 4] = 7;\n  const int* const q = p;\n  a[threadIdx.x] = 2 * q[0];\n}";
        assert_eq!(ints(source, "k", &l, "a"), Ok(vec![14; 32]));
        let rejected = |statement: &str| {
            let source = format!(
                "__global__ void k(int* const a, int k) {{\n  int* const p = a;\n  {statement}\n}}"
            );
            ints(&source, "k", &l, "a").map(|_| ())
        };
        assert_eq!(
            rejected("p += k;"),
            Err("3:3: '+=' cannot change a const or __constant__ location".to_string())
        );
        assert_eq!(
            rejected("a++;"),
            Err("3:3: '++' cannot change a const or __constant__ location".to_string())
        );
    }

    const BROKEN_AND_WORKING: &str = "__device__ int helper(int x) { return x + undeclared; }\n\
        __device__ int twice(int x) { return helper(x) - helper(x) + 2 * x; }\n\
        __global__ void uses_helper(int* a) { a[threadIdx.x] = twice(1); }\n\
        __global__ void broken(int* a) { a[0] = 1.5f % 2; }\n\
        __global__ void fine(int* a) { a[threadIdx.x] = 42; }";

    #[test]
    fn a_broken_kernel_does_not_stop_the_other_kernels_of_its_file() {
        let l = one_warp(&[("a", 128)]);
        let program = compile(BROKEN_AND_WORKING, &[]).unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(program.kernel_names(), ["uses_helper", "broken", "fine"]);
        assert_eq!(ints(BROKEN_AND_WORKING, "fine", &l, "a"), Ok(vec![42; 32]));
        assert_eq!(
            ints(BROKEN_AND_WORKING, "broken", &l, "a"),
            Err("4:41: '%' needs integer operands, not 'float'".to_string())
        );
        // The helper's error shows when a kernel that calls it, through `twice`, is launched.
        assert_eq!(
            ints(BROKEN_AND_WORKING, "uses_helper", &l, "a"),
            Err("1:43: 'undeclared' is not declared".to_string())
        );
        assert_eq!(
            program
                .kernel("broken")
                .map(|f| f.name.clone())
                .map_err(|d| d.to_string()),
            Err("4:41: '%' needs integer operands, not 'float'".to_string())
        );
    }

    #[test]
    fn an_unsupported_statement_fails_only_its_own_kernel() {
        let source = "__global__ void uses_goto(int* a) { a[0] = 1; }\n\
                      __global__ void fine(int* a) { a[threadIdx.x] = 42; }";
        let mut unit = parse(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        // What the parser keeps of a `goto` it skipped.
        let unsupported = Diagnostic::new(
            Span {
                line: 1,
                col: 37,
                ..Span::default()
            },
            "'goto' is not simulated",
        );
        if let Some(ast::Item::Function(f)) = unit.items.first_mut() {
            f.body.push(ast::Stmt {
                kind: ast::StmtKind::Unsupported(unsupported.clone()),
                span: unsupported.span,
            });
        }
        let program = sema::check(&unit).unwrap_or_else(|d| panic!("{d}"));
        let l = one_warp(&[("a", 128)]);
        assert!(Simulation::new(&program, "fine", &l, 1).is_ok());
        assert_eq!(
            Simulation::new(&program, "uses_goto", &l, 1)
                .map(|_| ())
                .map_err(|d| d.to_string()),
            Err("1:37: 'goto' is not simulated".to_string())
        );
    }

    #[test]
    fn errors_of_the_file_itself_still_fail_the_whole_file() {
        let twice =
            "__global__ void k(int* a) { a[0] = 1; }\n__device__ int k(int x) { return x; }";
        assert_eq!(
            compile(twice, &[]).map(|_| ()).map_err(|d| d.to_string()),
            Err("2:16: 'k' is defined twice".to_string())
        );
        // A recursive function is refused by itself: a kernel that calls it fails with the
        // refusal, the others run.
        let recursive = "__device__ int f(int x) { return x > 0 ? f(x - 1) : 0; }\n\
                         __global__ void k(int* a) { a[0] = 1; }\n\
                         __global__ void calls(int* a) { a[0] = f(3); }";
        let program = compile(recursive, &[]).unwrap_or_else(|d| panic!("{d}"));
        let l = one_warp(&[("a", 128)]);
        assert!(Simulation::new(&program, "k", &l, 1).is_ok());
        assert_eq!(
            Simulation::new(&program, "calls", &l, 1)
                .map(|_| ())
                .map_err(|d| d.to_string()),
            Err("1:16: 'f' calls itself (recursion is not supported by the simulator)".to_string())
        );
    }

    #[test]
    fn atomics_name_64_bit_types_as_their_signatures_do() {
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[("a", 128), ("b", 128)]);
        let source = "__global__ void k(long long* a, unsigned long long* b) {\n  atomicAdd(b, 1);\n  atomicMin(a, 1);\n  atomicAdd(a, 1);\n}";
        assert_eq!(
            ints(source, "k", &l, "a").map(|_| ()),
            Err("4:13: 'atomicAdd' does not work on 'long long': it works on int, unsigned int, unsigned long long, float, double, half, __nv_bfloat16, half2 or __nv_bfloat162".to_string())
        );
    }

    #[test]
    fn a_value_for_a_pointer_or_a_buffer_for_a_number_is_a_launch_error() {
        let source = "__global__ void k(float* a, int n) {\n  a[0] = n;\n}";
        let check = |args: &[(&str, Value)], buffers: &[(&str, u64)]| {
            let l = launch([1, 1, 1], [32, 1, 1], 0, args, buffers);
            ints(source, "k", &l, "a").map(|_| ())
        };
        assert_eq!(
            check(&[("n", Value::Int(1))], &[("a", 128), ("n", 4)]),
            Err(
                "1:33: 'n' is a scalar parameter (int): give it a value, not a buffer size"
                    .to_string()
            )
        );
        assert_eq!(
            check(
                &[("n", Value::Int(1)), ("a", Value::Float(64.5))],
                &[("a", 128)]
            ),
            Err(
                "1:26: 'a' is a pointer parameter (float*): give it a buffer size, not a value"
                    .to_string()
            )
        );
        assert_eq!(
            check(&[("n", Value::Int(1)), ("m", Value::Int(2))], &[("a", 128)]),
            Err("1:17: 'k' has no parameter named 'm'".to_string())
        );
        assert_eq!(
            check(&[("n", Value::Int(1))], &[("a", 128), ("b", 128)]),
            Err("1:17: 'k' has no parameter named 'b'".to_string())
        );
        assert_eq!(
            check(&[("n", Value::Int(1)), ("n", Value::Int(2))], &[("a", 128)]),
            Err("1:33: the launch gives the parameter 'n' twice".to_string())
        );
        assert_eq!(
            check(&[("n", Value::Float(64.5))], &[("a", 128)]),
            Err("1:33: the value 64.5 does not fit the parameter 'n' (int)".to_string())
        );
        assert_eq!(check(&[("n", Value::Int(1))], &[("a", 128)]), Ok(()));
    }

    #[test]
    fn values_print_as_they_are_written() {
        let shown: Vec<String> = [
            Value::Float(64.5),
            Value::Float(64.0),
            Value::Int(-3),
            Value::Bool(true),
        ]
        .iter()
        .map(|v| v.to_string())
        .collect();
        assert_eq!(shown, ["64.5", "64.0", "-3", "true"]);
    }
    #[test]
    fn the_deepest_calls_of_the_deepest_expressions_check_and_run_on_a_1_mb_stack() {
        // A browser gives WebAssembly about 1 MB of stack. Each of the 24 nested calls the
        // interpreter allows sits at the bottom of a 190-deep chain of additions.
        let calls = limits::MAX_CALL_DEPTH as usize;
        let last = calls - 1;
        let mut source = format!("__device__ int f{last}(int x) {{ return x; }}\n");
        for i in (0..last).rev() {
            let chain = " + 1".repeat(190);
            source.push_str(&format!(
                "__device__ int f{i}(int x) {{ return f{}(x){chain}; }}\n",
                i + 1
            ));
        }
        source.push_str("__global__ void k(int* a) { a[threadIdx.x] = f0(1); }\n");
        let outcome = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || ints(&source, "k", &one_warp(&[("a", 128)]), "a"))
            .expect("a thread starts")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        assert_eq!(outcome, Ok(vec![1 + 190 * last as i32; 32]));
    }
}

/// Arbitrary input never panics, and the interpreter always stops.
mod properties {
    use super::*;
    use proptest::prelude::*;

    const TOKENS: [&str; 48] = [
        "__global__",
        "void",
        "int",
        "float",
        "k",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ",",
        "=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "<",
        ">",
        "<<",
        "&&",
        "?",
        ":",
        "if",
        "else",
        "for",
        "while",
        "return",
        "break",
        "threadIdx",
        ".",
        "x",
        "__shared__",
        "s",
        "a",
        "1",
        "0",
        "32",
        "#define",
        "#ifndef",
        "#endif",
        "\n",
        "/*",
        "*/",
        "__syncthreads",
        "float4",
    ];

    /// A check that just must not panic: compile whatever it is, and run what compiles.
    fn check(source: &str, budget: u64) {
        if let Ok(program) = compile(source, &[]) {
            for name in program.kernel_names() {
                let kernel = &program.functions[program.kernel_index(name).unwrap_or(0)];
                let mut l = launch([2, 1, 1], [40, 1, 1], 64, &[], &[]);
                for p in &kernel.params {
                    match p.ty {
                        ast::Type::Pointer { .. } => l.buffers.push((p.name.clone(), 256)),
                        _ => l.args.push((p.name.clone(), Value::Int(3))),
                    }
                }
                let config = RunConfig {
                    step_budget: budget,
                    blocks: BlockSelection::All,
                    seed: 1,
                };
                let _ = run(&program, name, &l, &config);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn arbitrary_text_never_panics(source in "\\PC{0,200}") {
            check(&source, 1000);
        }

        #[test]
        fn token_soup_never_panics(tokens in proptest::collection::vec(0..TOKENS.len(), 0..80)) {
            let source: Vec<&str> = tokens.iter().map(|&i| TOKENS[i]).collect();
            check(&source.join(" "), 1000);
        }

        #[test]
        fn small_kernels_terminate_without_panicking(
            ops in proptest::collection::vec((0usize..12, 0i64..40, 0i64..40), 1..12)
        ) {
            // Statements over `a` (global), `s` (shared) and `x`, `i` (registers), with loops,
            // branches, barriers and out-of-range indices mixed in.
            let mut body = String::from("int x = threadIdx.x; int i = 0;\n");
            for (op, p, q) in ops {
                body.push_str(&match op {
                    0 => format!("x = x * {p} + {q};\n"),
                    1 => format!("a[(x + {p}) % 80] = x;\n"),
                    2 => format!("s[x % {}] = a[{q}];\n", p + 1),
                    3 => "__syncthreads();\n".to_string(),
                    4 => format!("if (x > {p}) {{ x -= {q}; }} else {{ x += 1; }}\n"),
                    5 => format!("for (i = 0; i < {p}; i++) {{ x += i; if (x > {q}) break; }}\n"),
                    6 => format!("while (x > {p}) {{ x = x / 2; }}\n"),
                    7 => format!("if (threadIdx.x == {p}) return;\n"),
                    8 => format!("x = x / ({p} - {q});\n"),
                    9 => format!("atomicAdd(&a[{p}], x);\n"),
                    10 => format!("x = (x > {p}) ? s[{q}] : a[{q}];\n"),
                    _ => format!("do {{ x++; }} while (x < {p});\n"),
                });
            }
            let source = format!("__global__ void k(int* a) {{\n__shared__ int s[40];\n{body}}}");
            check(&source, 5000);
        }
    }
}

/// The value of `expression` against `source`, or the error's column and a word of its message.
fn check_constant(source: &str, expression: &str, expected: Result<i64, (u32, &str)>) {
    match (
        super::constant_expression(source, &[], expression),
        expected,
    ) {
        (Ok(value), Ok(want)) => assert_eq!(value, want, "{expression}"),
        (Err(error), Err((col, word))) => {
            assert_eq!(error.span.col, col, "{expression}: {error}");
            assert!(error.message.contains(word), "{expression}: {error}");
        }
        (found, want) => panic!("{expression}: found {found:?}, expected {want:?}"),
    }
}

#[test]
fn a_launch_is_written_with_the_sources_defines() {
    let source = "#define N (1 << 20)\n#define BLOCK 256\n__global__ void k(float* x) {}\n";
    check_constant(source, "(N + BLOCK - 1) / BLOCK", Ok(4096));
    check_constant(source, "N * 4", Ok(4 << 20));
    check_constant(source, "-3", Ok(-3));
    check_constant(source, "1024 * 1024 * 1024 * 4LL", Ok(4 << 30));
    check_constant(source, "N / 0", Err((1, "division by zero")));
    check_constant(source, "N + M", Err((1, "no #define")));
    check_constant(source, "N +", Err((4, "expected")));
    check_constant(source, "N; int y", Err((1, "one expression")));
    check_constant(source, "", Err((1, "empty")));
}

#[test]
fn a_launchs_values_are_folded_together_and_a_bad_one_is_placed_alone() {
    let source = "#define N 1000\n__global__ void k(float* x) {}\n";
    let values = super::constant_expressions(source, &[], &["N / 8", "(N + 255) / 256", "7"]);
    let values: Vec<i64> = values.into_iter().map(|v| v.expect("a value")).collect();
    assert_eq!(values, [125, 4, 7]);
    let mixed = super::constant_expressions(source, &[], &["N", "N +", "2"]);
    assert_eq!(mixed[0].as_ref().ok(), Some(&1000));
    assert_eq!(mixed[1].as_ref().map_err(|e| e.span.col).err(), Some(4));
    assert_eq!(mixed[2].as_ref().ok(), Some(&2));
}

/// What the interpreter hands a sink of the loop iterations a warp skips, when the sink says
/// what it still needs of them (`RecordSink::repeats_needed`).
mod repeats {
    use super::*;

    /// Each call the sink gets, in order: a run of records as `[iteration:index ...]`, and
    /// `ran` for `repeats_ran`.
    struct Calls {
        needed: Option<RepeatsNeeded>,
        calls: Vec<String>,
    }

    impl RecordSink for Calls {
        fn record(&mut self, _record: &MemRecord) {}

        fn repeats_needed(&mut self, _warp: u32, iterations: u64) -> Option<RepeatsNeeded> {
            self.calls.push(format!("needed of {iterations}"));
            self.needed.clone()
        }

        fn repeats_ran(&mut self, _warp: u32) {
            self.calls.push("ran".to_string());
        }

        fn records_repeated_from<'r>(
            &mut self,
            count: usize,
            repeated: &dyn Fn(usize) -> (&'r MemRecord, Repeated),
        ) {
            let run: Vec<String> = (0..count)
                .map(|i| {
                    let (_, repeated) = repeated(i);
                    format!("{}:{}", repeated.iteration, repeated.index)
                })
                .collect();
            self.calls.push(format!("[{}]", run.join(" ")));
        }

        fn iterations_repeated_from(&mut self, iterations: &IterationsRepeated<'_>) {
            let (first, last) = (iterations.first, iterations.last);
            self.calls.push(format!("<{first} to {last}>"));
            iterations.each(self);
        }
    }

    /// A loop of six phases, each a run to a barrier of two records (a global load, a shared
    /// store) and a run of two more (a shared load, a global store): the warp runs the first
    /// phase and skips the five after it.
    fn check(needed: Option<RepeatsNeeded>, expected: &str) {
        let source = "__global__ void k(float* out, const float* in) {
  __shared__ float s[32];
  for (int p = 0; p < 6; ++p) {
    s[threadIdx.x] = in[p * 32 + threadIdx.x];
    __syncthreads();
    out[p * 32 + threadIdx.x] = s[threadIdx.x];
    __syncthreads();
  }
}";
        check_source(source, needed, expected);
    }

    /// A loop of six iterations with no barrier, each a global load and a global store.
    fn check_without_barriers(needed: Option<RepeatsNeeded>, expected: &str) {
        let source = "__global__ void k(float* out, const float* in) {
  for (int p = 0; p < 6; ++p) {
    out[p * 32 + threadIdx.x] = in[p * 32 + threadIdx.x];
  }
}";
        check_source(source, needed, expected);
    }

    fn check_source(source: &str, needed: Option<RepeatsNeeded>, expected: &str) {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        let l = launch([1, 1, 1], [32, 1, 1], 0, &[], &[("out", 768), ("in", 768)]);
        let mut sim = Simulation::new(&program, "k", &l, 7).unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(sim.summarise_loops(&[]), 1);
        let mut sink = Calls {
            needed,
            calls: Vec::new(),
        };
        sim.run_block_into([0, 0, 0], 1_000_000, &mut sink)
            .unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(sink.calls.join(" "), expected);
    }

    #[test]
    fn a_sink_that_needs_every_repeat_gets_every_one() {
        check(
            None,
            "needed of 5 [1:0 1:1] [1:2 1:3] [2:0 2:1] [2:2 2:3] [3:0 3:1] [3:2 3:3] \
             [4:0 4:1] [4:2 4:3] [5:0 5:1] [5:2 5:3]",
        );
    }

    #[test]
    fn repeats_a_sink_takes_at_once_are_not_handed_before_its_tail() {
        // The store after the first barrier needs only that the warp ran, once for its run;
        // the first skipped phase to the one before the last (the tail of one) hand the rest.
        let needed = RepeatsNeeded {
            tail: 1,
            needs: vec![
                RepeatNeed::Record,
                RepeatNeed::Nothing,
                RepeatNeed::WarpRan,
                RepeatNeed::WarpRan,
            ],
        };
        check(
            Some(needed),
            "needed of 5 [1:0] ran [2:0] ran [3:0] ran [4:0] ran [5:0 5:1] [5:2 5:3]",
        );
    }

    #[test]
    fn a_loop_without_barriers_hands_its_skipped_iterations_at_once() {
        check_without_barriers(
            None,
            "needed of 5 <1 to 5> [1:0 1:1] [2:0 2:1] [3:0 3:1] [4:0 4:1] [5:0 5:1]",
        );
    }

    #[test]
    fn a_loop_without_barriers_hands_at_once_only_the_iterations_before_the_sinks_tail() {
        let needed = RepeatsNeeded {
            tail: 1,
            needs: vec![RepeatNeed::Record, RepeatNeed::WarpRan],
        };
        check_without_barriers(
            Some(needed),
            "needed of 5 <1 to 4> ran [1:0] ran [2:0] ran [3:0] ran [4:0] [5:0 5:1]",
        );
    }

    #[test]
    fn a_record_past_the_sinks_needs_is_handed() {
        let needed = RepeatsNeeded {
            tail: 2,
            needs: vec![RepeatNeed::Nothing],
        };
        check(
            Some(needed),
            "needed of 5 [1:1] [1:2 1:3] [2:1] [2:2 2:3] [3:1] [3:2 3:3] \
             [4:0 4:1] [4:2 4:3] [5:0 5:1] [5:2 5:3]",
        );
    }
}

/// Runs `work` on a thread with a 1 MB stack, about what a browser gives WebAssembly, and
/// returns its result (a failed assertion inside fails the test).
fn on_a_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let thread = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(work)
        .expect("a thread starts");
    match thread.join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// The error that reading `source` ends in, read on a 1 MB stack.
fn parse_error_on_a_small_stack(source: String) -> String {
    on_a_small_stack(move || match crate::kernel::parse(&source, &[]) {
        Ok(_) => "no error".to_string(),
        Err(diagnostic) => diagnostic.to_string(),
    })
}

/// `__global__ void k(int* a, int x) { BODY }`: the column of `BODY` is 36.
fn kernel(body: &str) -> String {
    format!("__global__ void k(int* a, int x) {{ {body} }}")
}

/// Kernels nested exactly as deep as the limits allow: each parses, compiles and runs on a
/// 1 MB stack, so the limits are safe for sema and the interpreter too. One level more is an
/// error.
#[test]
fn kernels_nested_exactly_at_the_limits_compile_and_run_on_a_small_stack() {
    use crate::kernel::{compile, run, BlockSelection, Dim3, Launch, RunConfig};
    // The deepest expression tree: `a[0] = ` and a chain of 199 terms make 200 levels.
    let chain = |terms: usize| format!("a[0] = x{};", " + x".repeat(terms - 1));
    // Statements nested 94 deep (blocks, then `if`s, then loops); the innermost one, at 95, reaches
    // level 96 in its index and its right-hand side, and holds the deepest tree.
    let statements = |extra: usize| {
        format!(
            "{}{}{}{} {{ a[0] += x{}; x = 2; }} {}",
            "{ ".repeat(39 + extra),
            "if (x > 0) ".repeat(30),
            "for (int i = 0; i < 1; ++i) ".repeat(23),
            "while (x == 1) ",
            " + x".repeat(197),
            "} ".repeat(39 + extra)
        )
    };
    // Brackets nested to the limit after `a[0] = ` (levels 1 and 2): each `(` is a level and
    // the `-` inside it one more, and each adds two levels to the tree.
    let brackets = |depth: usize| {
        format!(
            "a[0] = {}x{};",
            "x * (-x + ".repeat(depth),
            ")".repeat(depth)
        )
    };
    // Conditionals and prefix operators.
    let conditionals = |depth: usize| format!("a[1] = {}x;", "x > 1 ? 1 : ".repeat(depth));
    let prefixes = |depth: usize| format!("a[2] = {}x;", "- ~".repeat(depth / 2));
    let source = [
        kernel(&chain(199)).replace("void k(", "void chain("),
        kernel(&statements(0)).replace("void k(", "void statements("),
        kernel(&brackets(93)).replace("void k(", "void brackets("),
        kernel(&conditionals(94)).replace("void k(", "void conditionals("),
        kernel(&prefixes(94)).replace("void k(", "void prefixes("),
    ]
    .join("\n");
    let ran = on_a_small_stack(move || {
        let program = compile(&source, &[])?;
        let launch = Launch {
            grid: Dim3::new(1, 1, 1),
            block: Dim3::new(32, 1, 1),
            dyn_smem: 0,
            args: vec![("x".to_string(), crate::kernel::Value::Int(1))],
            buffers: vec![("a".to_string(), 64)],
            fills: vec![],
            pointers: vec![],
        };
        let config = RunConfig {
            step_budget: 1_000_000,
            blocks: BlockSelection::All,
            seed: 1,
        };
        let mut stores = Vec::new();
        for kernel in [
            "chain",
            "statements",
            "brackets",
            "conditionals",
            "prefixes",
        ] {
            let runs = run(&program, kernel, &launch, &config)?;
            stores.push(format!("{kernel}: {} records", runs[0].records.len()));
        }
        Ok::<_, Diagnostic>(stores)
    });
    assert_eq!(
        ran,
        Ok(vec![
            "chain: 1 records".to_string(),
            "statements: 2 records".to_string(),
            "brackets: 1 records".to_string(),
            "conditionals: 1 records".to_string(),
            "prefixes: 1 records".to_string(),
        ])
    );
    let deeper = [
        (
            chain(200),
            "1:41: this expression is deeper than the simulator's limit of 200 levels",
        ),
        (
            statements(1),
            "1:1110: the code nests deeper than the simulator's limit of 96 levels",
        ),
        (
            brackets(94),
            "1:979: the code nests deeper than the simulator's limit of 96 levels",
        ),
        (
            conditionals(95),
            "1:1179: the code nests deeper than the simulator's limit of 96 levels",
        ),
        (
            prefixes(96),
            "1:186: the code nests deeper than the simulator's limit of 96 levels",
        ),
    ];
    for (body, expected) in deeper {
        assert_eq!(parse_error_on_a_small_stack(kernel(&body)), expected);
    }
}

/// A file with an unsupported construct or an error in one kernel (`->` to a member an `int`
/// does not have): the others compile and run, and the one that has it reports it when run.
#[test]
fn only_the_kernel_with_an_unsupported_construct_fails() {
    use crate::kernel::{compile, run, BlockSelection, Dim3, Launch, RunConfig};
    let source = "__global__ void uses_goto(int* a) { goto end; end: a[0] = 1; }\n\
                  __global__ void uses_arrow(int* a) { int y = a->x; }\n\
                  __global__ void fine(int* a) { a[threadIdx.x] = 1; }";
    let program = compile(source, &[]);
    let launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(32, 1, 1),
        dyn_smem: 0,
        args: vec![],
        buffers: vec![("a".to_string(), 128)],
        fills: vec![],
        pointers: vec![],
    };
    let config = RunConfig {
        step_budget: 10_000,
        blocks: BlockSelection::All,
        seed: 1,
    };
    let outcomes: Vec<String> = ["uses_goto", "uses_arrow", "fine"]
        .iter()
        .map(|kernel| {
            match program
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|p| run(p, kernel, &launch, &config))
            {
                Ok(runs) => format!("{kernel}: {} records", runs[0].records.len()),
                Err(d) => format!("{kernel}: {d}"),
            }
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            "uses_goto: 1:37: 'goto' is not simulated; use a loop with 'break' or 'continue', or if/else",
            "uses_arrow: 2:49: 'int' has no member 'x'",
            "fine: 1 records",
        ]
    );
}
