//! Kernel templates count exactly as the same kernels written with `#define`s: an
//! instantiation reads the template with each type parameter bound and each value parameter
//! written as its literal, so array sizes, loop bounds, unrolling and load fusion are those of
//! the `#define` version. Each test also checks the global memory counters against numbers
//! worked out by hand.

mod common;

use common::h100_launch;
use memplay_sim::{simulate, SimulationError, SimulationReport};

/// `kernel` of `source` simulated on the H100 (`common::h100_launch`).
fn launch(
    source: &str,
    kernel: &str,
    grid: [u32; 2],
    block: [u32; 2],
    buffers: &[(&str, u64)],
    args: &[(&str, i64)],
) -> Result<SimulationReport, SimulationError> {
    simulate(&h100_launch(source, kernel, grid, block, buffers, args))
}

/// The tiled matrix product's body, over `TILE`.
const TILED_BODY: &str = "(const float* a, const float* b, float* c, int n) {
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

/// The fused shared loads of a report: array, loads as written, loads as compiled.
fn fused(report: &SimulationReport) -> Vec<(String, f64, f64)> {
    let sites = report.fused_loads.iter();
    sites
        .map(|s| (s.array.clone(), s.loads_as_written, s.loads_as_compiled))
        .collect()
}

#[test]
fn a_tiled_matmul_template_counts_as_its_define_version_at_tiles_8_and_16() {
    let bytes = 64 * 64 * 4;
    let buffers = [("a", bytes), ("b", bytes), ("c", bytes)];
    let template = format!("template <int TILE>\n__global__ void mm{TILED_BODY}");
    // (tile, requests, sectors): a block of TILE x TILE threads, n / TILE phases, one load of
    // `a` and one of `b` per warp and phase. Tile 16: 16 blocks of 8 warps, 4 phases, 1,024
    // requests of two rows of 16 floats (2 sectors each). Tile 8: 64 blocks of 2 warps, 8
    // phases, 2,048 requests of four rows of 8 floats (1 sector each).
    for (tile, requests, sectors) in [(16u32, 1024.0, 4096.0), (8, 2048.0, 8192.0)] {
        let blocks = 64 / tile;
        let define = format!("#define TILE {tile}\n__global__ void mm{TILED_BODY}");
        let by_define = launch(
            &define,
            "mm",
            [blocks; 2],
            [tile; 2],
            &buffers,
            &[("n", 64)],
        )
        .expect("the #define version simulates");
        let name = format!("mm<{tile}>");
        let by_template = launch(
            &template,
            &name,
            [blocks; 2],
            [tile; 2],
            &buffers,
            &[("n", 64)],
        )
        .expect("the template simulates");
        assert_eq!(by_template.kernel, name);
        assert_eq!(by_template.counters, by_define.counters, "tile {tile}");
        assert_eq!(fused(&by_template), fused(&by_define), "tile {tile}");
        assert_eq!(fused(&by_template).len(), 1, "tile {tile}");
        assert_eq!(
            by_template.shared_bytes_per_block,
            u64::from(2 * tile * tile * 4),
            "tile {tile}"
        );
        assert_eq!(by_template.counters.global_ld_requests, requests);
        assert_eq!(by_template.counters.global_ld_sectors, sectors);
    }
}

#[test]
fn a_launch_names_its_instantiation_in_any_spelling() {
    let template = format!("template <int TILE>\n__global__ void mm{TILED_BODY}");
    let bytes = 32 * 32 * 4;
    let buffers = [("a", bytes), ("b", bytes), ("c", bytes)];
    let run = |name: &str| launch(&template, name, [2, 2], [16, 16], &buffers, &[("n", 32)]);
    let plain = run("mm<16>").expect("simulates");
    let spelled = run("mm< 0x10 >").expect("simulates");
    assert_eq!(spelled.kernel, "mm<16>");
    assert_eq!(spelled.counters, plain.counters);
    let Err(SimulationError::Kernel(missing)) = run("mm") else {
        panic!("a template launched without its argument is refused");
    };
    assert_eq!(
        missing.message,
        "'mm' needs its template argument TILE (template <int TILE>)"
    );
}

const BLOCK_SUM: &str = "
template <typename T, unsigned int BLOCK = 256>
__global__ void block_sum(const T* in, T* out) {
  __shared__ T part[BLOCK];
  unsigned int t = threadIdx.x;
  part[t] = in[blockIdx.x * BLOCK + t];
  __syncthreads();
  for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = part[0];
}
";

#[test]
fn a_reduction_over_double_reads_twice_the_bytes_of_the_one_over_float() {
    let run = |ty: &str, size: u64| {
        let buffers = [("in", 4 * 256 * size), ("out", 4 * size)];
        let name = format!("block_sum<{ty}>");
        launch(BLOCK_SUM, &name, [4, 1], [256, 1], &buffers, &[]).expect("simulates")
    };
    let (single, double) = (run("float", 4), run("double", 8));
    assert_eq!(single.kernel, "block_sum<float, 256>");
    assert_eq!(double.kernel, "block_sum<double, 256>");
    // 4 blocks of 8 warps load once each: 32 requests either way, of 128 or 256 bytes, so 4 or
    // 8 sectors each.
    assert_eq!(single.counters.global_ld_requests, 32.0);
    assert_eq!(double.counters.global_ld_requests, 32.0);
    assert_eq!(single.counters.global_ld_sectors, 128.0);
    assert_eq!(double.counters.global_ld_sectors, 256.0);
    assert_eq!(single.shared_bytes_per_block, 1024);
    assert_eq!(double.shared_bytes_per_block, 2048);
}

#[test]
fn a_deduced_device_template_counts_as_the_helper_written_for_its_type() {
    let body = "__global__ void twice(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = doubled(in, i);
}
";
    let template = format!(
        "template <typename T> __device__ T doubled(const T* p, int i) {{ return p[i] + p[i]; }}\n{body}"
    );
    let plain = format!(
        "__device__ float doubled(const float* p, int i) {{ return p[i] + p[i]; }}\n{body}"
    );
    let buffers = [("in", 1024 * 4), ("out", 1024 * 4)];
    let run =
        |source: &str| launch(source, "twice", [4, 1], [256, 1], &buffers, &[]).expect("simulates");
    let (deduced, written) = (run(&template), run(&plain));
    assert_eq!(deduced.counters, written.counters);
    // 32 warps store 128 bytes each: 4 sectors a request.
    assert_eq!(deduced.counters.global_st_requests, 32.0);
    assert_eq!(deduced.counters.global_st_sectors, 128.0);
}

#[test]
fn an_explicit_specialisation_replaces_the_template_and_conversion_operators_convert_implicitly() {
    // `Width<T>` reports sizeof(T) and converts to 1; the specialisation for double reports 100
    // and converts to 2. Each lane writes 1000 * 4 + 100 + 10 * 2 + 1 = 4121.
    let source = "template <class T> struct Width {
  __device__ int bytes() const { return sizeof(T); }
  __device__ operator int() const { return 1; }
};
template <> struct Width<double> {
  __device__ int bytes() const { return 100; }
  __device__ operator int() const { return 2; }
};
__global__ void widths(int* out) {
  int special = Width<double>();
  Width<float> plain;
  int one = plain;
  out[threadIdx.x] = 1000 * Width<float>().bytes() + Width<double>().bytes() + 10 * special + one;
}
";
    let out = common::one_warp_buffers(source, "widths", &[("out", 128)]);
    assert_eq!(common::i32s(&out[0]), vec![4121; 32]);
}

#[test]
fn the_classic_shared_memory_helper_hands_out_the_dynamic_shared_block_as_float_and_double() {
    // A block sum of 128 through `T* partial = SharedMemory<T>();` (tests/programs has the whole
    // program). Per block of 4 warps: stores 4 (the fill) + 2 + 1 (s = 64, 32) + 5 (s = 16 .. 1,
    // warp 0) = 12; loads twice the 8 steps' instructions + 1 for partial[0] = 17. Four blocks:
    // 48 and 68 instructions. A full warp of doubles is two wavefronts: double's loads take
    // (2 + 2 + 1 full-warp steps) x 2 x 2 + 5 x 2 + 1 = 23 wavefronts a block, 92 in all.
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/programs/shared_memory_helper.cu"
    ))
    .expect("the program");
    for (kernel, element, wavefronts) in [
        ("block_sum<float>", 4, 68.0),
        ("block_sum<double>", 8, 92.0),
    ] {
        let mut input = h100_launch(
            &source,
            kernel,
            [4, 1],
            [128, 1],
            &[("in", 512 * element), ("out", 4 * element)],
            &[("n", 512)],
        );
        input.dyn_smem = 128 * element as u32;
        let report = simulate(&input).unwrap_or_else(|e| panic!("{kernel}: {e}"));
        let c = &report.counters;
        assert_eq!(c.shared_st_instructions, 48.0, "{kernel}");
        assert_eq!(c.shared_ld_instructions, 68.0, "{kernel}");
        assert_eq!(c.shared_ld_wavefronts, wavefronts, "{kernel}");
    }
}
