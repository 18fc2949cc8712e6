//! Kernels written with the C++ declarations students bring (file-scope constants, `enum`,
//! namespaces, `typedef`, `auto`, default arguments, `nullptr`) count exactly as the same kernels
//! written in C with `#define`s and literals: the front end folds the constants and resolves the
//! names, so neither the accesses nor the instructions change. Each test also checks the global
//! memory counters against numbers worked out by hand.

mod common;

use common::h100_launch;
use memplay_sim::{simulate, SimulationReport};

/// Simulates `kernel` of `source` on the H100 (`common::h100_launch`), which must succeed.
fn run(
    source: &str,
    kernel: &str,
    grid: [u32; 2],
    block: [u32; 2],
    buffers: &[(&str, u64)],
    args: &[(&str, i64)],
) -> SimulationReport {
    simulate(&h100_launch(source, kernel, grid, block, buffers, args))
        .unwrap_or_else(|e| panic!("{kernel} simulates: {e:?}"))
}

const TILED: &str = "
__global__ void mm(const float* a, const float* b, float* c, int n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int p = 0; p < n / TILE; ++p) {
    as[ty][tx] = a[row * n + p * TILE + tx];
    bs[ty][tx] = b[(p * TILE + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}
";

#[test]
fn a_file_scope_const_tile_counts_as_the_define_of_the_same_tile() {
    let bytes = 64 * 64 * 4;
    let buffers = [("a", bytes), ("b", bytes), ("c", bytes)];
    let with_const = format!("const int TILE = 16;\n{TILED}");
    let with_define = format!("#define TILE 16\n{TILED}");
    let launch = |source: &str| run(source, "mm", [4, 4], [16, 16], &buffers, &[("n", 64)]);
    let (constant, define) = (launch(&with_const), launch(&with_define));
    assert_eq!(constant.counters, define.counters);
    // The loads of `as[ty][k]` fuse the same way (the sources differ in length, so the spans
    // of the sites do).
    let fused = |report: &SimulationReport| -> Vec<(String, f64, f64)> {
        let sites = report.fused_loads.iter();
        sites
            .map(|s| (s.array.clone(), s.loads_as_written, s.loads_as_compiled))
            .collect()
    };
    assert_eq!(fused(&constant), fused(&define));
    assert_eq!(fused(&constant).len(), 1);
    // `constexpr auto` and an `auto` loop variable: the loop still unrolls and its loads fuse.
    let with_auto =
        format!("constexpr auto TILE = 16;\n{TILED}").replace("int k = 0", "auto k = 0");
    let deduced = launch(&with_auto);
    assert_eq!(deduced.counters, define.counters);
    assert_eq!(fused(&deduced), fused(&define));
    assert_eq!(constant.shared_bytes_per_block, 2 * 16 * 16 * 4);
    // 16 blocks of 8 warps, 4 phases, one load of `a` and one of `b` per warp and phase; a warp
    // reads two rows of 16 floats, 64 bytes each: 2 sectors a row.
    assert_eq!(constant.counters.global_ld_requests, 16.0 * 8.0 * 4.0 * 2.0);
    assert_eq!(constant.counters.global_ld_sectors, 1024.0 * 4.0);
}

#[test]
fn an_enumerator_used_as_an_index_counts_as_its_value() {
    let with_enum = "enum Channel { RED, GREEN, BLUE, ALPHA };\n\
                     __global__ void green(const float* rgba, float* out) {\n\
                     \x20 int i = threadIdx.x;\n\
                     \x20 out[i] = rgba[4 * i + GREEN] + rgba[4 * i + Channel::ALPHA];\n}";
    let with_literal = "__global__ void green(const float* rgba, float* out) {\n\
                        \x20 int i = threadIdx.x;\n\
                        \x20 out[i] = rgba[4 * i + 1] + rgba[4 * i + 3];\n}";
    let buffers = [("rgba", 32 * 16), ("out", 32 * 4)];
    let launch = |source: &str| run(source, "green", [1, 1], [32, 1], &buffers, &[]);
    let (named, literal) = (launch(with_enum), launch(with_literal));
    assert_eq!(named.counters, literal.counters);
    // Each load reads one float of every 16-byte pixel, 32 pixels over 512 bytes: 16 sectors.
    assert_eq!(named.counters.global_ld_requests, 2.0);
    assert_eq!(named.counters.global_ld_sectors, 32.0);
    assert_eq!(named.counters.global_st_sectors, 4.0);
}

#[test]
fn namespaces_aliases_auto_defaults_and_nullptr_count_as_plain_c() {
    let cpp = "namespace img {\n\
               \x20 typedef float pixel;\n\
               \x20 constexpr int stride = 2;\n\
               \x20 __device__ pixel scaled(pixel v, pixel by = 2.0f) { return v * by; }\n\
               }\n\
               namespace im = img;\nusing namespace img;\n\
               __global__ void k(const float* in, float* out) {\n\
               \x20 auto i = blockIdx.x * blockDim.x + threadIdx.x;\n\
               \x20 const pixel* src = in;\n\
               \x20 if (src != nullptr) out[i] = scaled(src[i * im::stride]);\n}";
    let c = "__device__ float scaled(float v, float by) { return v * by; }\n\
             __global__ void k(const float* in, float* out) {\n\
             \x20 unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             \x20 const float* src = in;\n\
             \x20 if (src != 0) out[i] = scaled(src[i * 2], 2.0f);\n}";
    let buffers = [("in", 128 * 4), ("out", 64 * 4)];
    let launch = |source: &str| run(source, "k", [2, 1], [32, 1], &buffers, &[]);
    let (cpp, c) = (launch(cpp), launch(c));
    assert_eq!(cpp.counters, c.counters);
    // Two warps, each reading every other float of 256 bytes (8 sectors) and writing 128 (4).
    assert_eq!(cpp.counters.global_ld_sectors, 16.0);
    assert_eq!(cpp.counters.global_st_sectors, 8.0);
}
