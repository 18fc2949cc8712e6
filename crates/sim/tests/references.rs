//! C++ references and `__device__` helpers that wait at `__syncthreads()`, called anywhere.
//!
//! A reference names the place it was bound to, so a kernel that reads and writes through one
//! computes what the kernel with the place written out computes, and makes the same loads and
//! stores; a helper that waits at a barrier, called inside an expression or returning early,
//! runs as the kernel with its call made a statement of its own. Each test checks the values
//! the threads write and the counters against numbers worked out by hand.

use memplay_sim::counters::Counters;
use memplay_sim::device::h100;
use memplay_sim::kernel::{compile, Dim3, Launch, Value};
use memplay_sim::{simulate, SimulationInput, SimulationReport};

/// Runs block 0 of `kernel` in `source` with `threads` threads in x, `int` buffers `g` and `out`
/// of `threads` elements, `g[t] = t` to start with, and the integer arguments given; the `out`
/// it leaves.
fn outputs(source: &str, threads: u32, args: &[(&str, i64)]) -> Vec<i32> {
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let bytes = u64::from(threads) * 4;
    let launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(threads, 1, 1),
        dyn_smem: 0,
        args: args
            .iter()
            .map(|(name, v)| (name.to_string(), Value::Int(*v)))
            .collect(),
        buffers: vec![("g".to_string(), bytes), ("out".to_string(), bytes)],
        fills: vec![],
        pointers: vec![],
    };
    let mut simulation = memplay_sim::kernel::Simulation::new(&program, "k", &launch, 1)
        .unwrap_or_else(|d| panic!("{d}"));
    let start: Vec<u8> = (0..threads as i32).flat_map(|t| t.to_le_bytes()).collect();
    assert!(simulation.write_buffer("g", &start));
    simulation
        .run_block([0, 0, 0], 10_000_000)
        .unwrap_or_else(|d| panic!("{d}"));
    simulation.read_i32s("out").expect("out is a buffer")
}

/// Simulates `k` of `source` on the H100 with a grid of `blocks` blocks of 32 x 8 threads and
/// float buffers `a` and `out` of 256 elements a block.
fn report(source: &str, blocks: u32) -> SimulationReport {
    let mut input = SimulationInput::new(source, "k", h100());
    input.grid = Dim3::new(blocks, 1, 1);
    input.block = Dim3::new(32, 8, 1);
    let bytes = u64::from(blocks) * 256 * 4;
    input.buffers = vec![("a".to_string(), bytes), ("out".to_string(), bytes)];
    simulate(&input).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The counters of memory accesses, which a reference leaves as the place written out makes
/// them.
fn memory(c: &Counters) -> [f64; 12] {
    [
        c.shared_ld_instructions,
        c.shared_st_instructions,
        c.shared_ld_wavefronts,
        c.shared_st_wavefronts,
        c.global_ld_requests,
        c.global_ld_sectors,
        c.global_st_requests,
        c.global_st_sectors,
        c.local_ld_requests,
        c.local_st_requests,
        c.barrier_warp_instructions,
        c.global_bytes_requested,
    ]
}

#[test]
fn a_reference_parameter_changes_a_local_an_element_in_each_memory_and_a_pointers_target() {
    let source = "__device__ void add(int &out, int v) { out += v; }\n\
                  __global__ void k(int* g, int* out) {\n\
                  \x20 __shared__ int s[32];\n\
                  \x20 int w[4];\n\
                  \x20 int t = threadIdx.x;\n\
                  \x20 int local = t;\n\
                  \x20 s[t] = 10 * t;\n\
                  \x20 w[t & 3] = 100;\n\
                  \x20 add(local, 1);\n\
                  \x20 add(s[t], 2);\n\
                  \x20 add(w[t & 3], 3);\n\
                  \x20 add(*(g + t), 4);\n\
                  \x20 add(g[t], local);\n\
                  \x20 out[t] = local + s[t] + w[t & 3] + 1000 * g[t];\n}";
    // local = t + 1, s[t] = 10t + 2, w = 103, g[t] = t + 4 + (t + 1) = 2t + 5.
    let expected: Vec<i32> = (0..32)
        .map(|t| (t + 1) + (10 * t + 2) + 103 + 1000 * (2 * t + 5))
        .collect();
    assert_eq!(outputs(source, 32, &[]), expected);
}

#[test]
fn a_reference_local_names_the_place_it_was_bound_to() {
    let source = "__global__ void k(int* g, int* out) {\n\
                  \x20 __shared__ int tile[4][32];\n\
                  \x20 int tx = threadIdx.x, ty = 1;\n\
                  \x20 tile[ty][tx] = tx;\n\
                  \x20 int &x = tile[ty][tx];\n\
                  \x20 ty = 2;\n\
                  \x20 x += 5;\n\
                  \x20 const int &twice = tx * 2;\n\
                  \x20 tx = 0;\n\
                  \x20 int v = 7, &r = v;\n\
                  \x20 r *= 3;\n\
                  \x20 auto &first = g[0];\n\
                  \x20 const unsigned &lane = threadIdx.x;\n\
                  \x20 out[lane] = tile[1][lane] + twice + v + 100 * first;\n}";
    // tile[1][t] = t + 5 (bound before `ty` moved), twice = 2t (bound before `tx` was
    // cleared), v = 21, g[0] = 0.
    let expected: Vec<i32> = (0..32).map(|t| (t + 5) + 2 * t + 21).collect();
    assert_eq!(outputs(source, 32, &[]), expected);
}

#[test]
fn a_reference_to_a_counter_keeps_its_loop_from_being_counted_out() {
    let source = "__device__ void skip(int &k) { k++; }\n\
                  __global__ void k(int* g, int* out) {\n\
                  \x20 int trips = 0;\n\
                  \x20 for (int i = 0; i < 8; i++) { trips += 1; skip(i); }\n\
                  \x20 for (int i = 0; i < 8; i++) { int &j = i; j += 2; trips += 10; }\n\
                  \x20 out[threadIdx.x] = trips;\n}";
    // The first loop runs for i = 0, 2, 4, 6; the second for i = 0, 3, 6.
    assert_eq!(outputs(source, 32, &[]), vec![4 + 30; 32]);
}

const TILE_WRITTEN_OUT: &str = "__global__ void k(const float* a, float* out) {\n\
  __shared__ float tile[8][32];\n\
  int tx = threadIdx.x, ty = threadIdx.y;\n\
  int i = blockIdx.x * 256 + ty * 32 + tx;\n\
  tile[ty][tx] = a[i];\n\
  __syncthreads();\n\
  tile[ty][tx] += 1.0f;\n\
  tile[ty][tx] *= 2.0f;\n\
  out[i] = tile[ty][tx];\n}";

const TILE_REFERENCE: &str = "__global__ void k(const float* a, float* out) {\n\
  __shared__ float tile[8][32];\n\
  int tx = threadIdx.x, ty = threadIdx.y;\n\
  int i = blockIdx.x * 256 + ty * 32 + tx;\n\
  tile[ty][tx] = a[i];\n\
  __syncthreads();\n\
  float &x = tile[ty][tx];\n\
  x += 1.0f;\n\
  x *= 2.0f;\n\
  out[i] = x;\n}";

const TILE_POINTER: &str = "__global__ void k(const float* a, float* out) {\n\
  __shared__ float tile[8][32];\n\
  int tx = threadIdx.x, ty = threadIdx.y;\n\
  int i = blockIdx.x * 256 + ty * 32 + tx;\n\
  tile[ty][tx] = a[i];\n\
  __syncthreads();\n\
  float *x = &tile[ty][tx];\n\
  *x += 1.0f;\n\
  *x *= 2.0f;\n\
  out[i] = *x;\n}";

const TILE_HELPER: &str =
    "__device__ void bump(float &x, const float &by) { x += by; x *= 2.0f; }\n\
__global__ void k(const float* a, float* out) {\n\
  __shared__ float tile[8][32];\n\
  int tx = threadIdx.x, ty = threadIdx.y;\n\
  int i = blockIdx.x * 256 + ty * 32 + tx;\n\
  tile[ty][tx] = a[i];\n\
  __syncthreads();\n\
  bump(tile[ty][tx], 1.0f);\n\
  out[i] = tile[ty][tx];\n}";

#[test]
fn a_reference_to_a_shared_tile_element_counts_as_the_element_written_out() {
    let written = report(TILE_WRITTEN_OUT, 4);
    // Per warp (8 a block, 4 blocks: 32): a global load and store of 32 floats (4 sectors
    // each), the tile's store, two read-modify-writes and the final read: 3 shared loads and 3
    // stores, one wavefront each (32 consecutive floats).
    let c = &written.counters;
    assert_eq!(c.global_ld_requests, 32.0);
    assert_eq!(c.global_ld_sectors, 128.0);
    assert_eq!(c.global_st_sectors, 128.0);
    assert_eq!(c.shared_ld_instructions, 96.0);
    assert_eq!(c.shared_st_instructions, 96.0);
    assert_eq!(c.shared_ld_wavefronts, 96.0);
    assert_eq!(c.barrier_warp_instructions, 32.0);
    for source in [TILE_REFERENCE, TILE_POINTER, TILE_HELPER] {
        assert_eq!(memory(&report(source, 4).counters), memory(c), "{source}");
    }
    // A reference is the pointer it stands for: the address taken once, every counter alike.
    assert_eq!(
        report(TILE_REFERENCE, 4).counters,
        report(TILE_POINTER, 4).counters
    );
}

#[test]
fn a_barrier_helper_in_a_condition_and_an_operand_counts_as_its_calls_made_statements() {
    let helper = "__device__ float tile_sum(const float* s) {\n\
                    __syncthreads();\n\
                    float v = s[0] + s[255];\n\
                    __syncthreads();\n\
                    return v;\n\
                  }\n";
    let body = |calls: &str| {
        format!(
            "{helper}__global__ void k(const float* a, float* out) {{\n\
             \x20 __shared__ float s[256];\n\
             \x20 int t = threadIdx.y * 32 + threadIdx.x;\n\
             \x20 int i = blockIdx.x * 256 + t;\n\
             \x20 s[t] = a[i];\n\
             {calls}\n}}"
        )
    };
    let in_expressions =
        body("  if (tile_sum(s) > -1.0e30f) out[i] = 2.0f * tile_sum(s) + (t > 999 || tile_sum(s) > 0.0f);");
    let as_statements = body(
        "  float p = tile_sum(s);\n\
         \x20 if (p > -1.0e30f) { float q = tile_sum(s); int r = t > 999; if (!r) r = tile_sum(s) > 0.0f; out[i] = 2.0f * q + r; }",
    );
    let (expressions, statements) = (report(&in_expressions, 2), report(&as_statements, 2));
    assert_eq!(memory(&expressions.counters), memory(&statements.counters));
    // Per warp (16): three calls of two barriers each, two shared loads each (broadcasts, one
    // wavefront), the tile's store, and the global load and store.
    let c = &expressions.counters;
    assert_eq!(c.barrier_warp_instructions, 16.0 * 6.0);
    assert_eq!(c.shared_ld_instructions, 16.0 * 6.0);
    assert_eq!(c.shared_st_instructions, 16.0);
    assert_eq!(c.global_st_requests, 16.0);
}

#[test]
fn a_thread_that_returns_early_from_a_barrier_helper_still_reaches_the_callers_barrier() {
    let source = "__device__ int stage(int* s, const int* g, int n) {\n\
                  \x20 int t = threadIdx.x;\n\
                  \x20 s[t] = g[t];\n\
                  \x20 __syncthreads();\n\
                  \x20 if (t >= n) return -1;\n\
                  \x20 for (int k = 0; k < 4; k++) if (s[k] == t) return 100 + k;\n\
                  \x20 return s[(t + 1) % n];\n\
                  }\n\
                  __global__ void k(int* g, int* out, int n) {\n\
                  \x20 __shared__ int s[64];\n\
                  \x20 int v = stage(s, g, n);\n\
                  \x20 __syncthreads();\n\
                  \x20 s[threadIdx.x] = 0;\n\
                  \x20 __syncthreads();\n\
                  \x20 out[threadIdx.x] = v + s[63 - threadIdx.x];\n}";
    // Threads 40 and up return -1; threads 0 to 3 find themselves at s[t] (g[t] = t) in the
    // loop and return 100 + t; the others return g[(t + 1) % 40]. Every thread then waits at
    // both of the kernel's barriers, so the tile is all zeros when it is read.
    let expected: Vec<i32> = (0..64)
        .map(|t| match t {
            40.. => -1,
            0..=3 => 100 + t,
            _ => (t + 1) % 40,
        })
        .collect();
    assert_eq!(outputs(source, 64, &[("n", 40)]), expected);
}

#[test]
fn a_barrier_after_an_early_return_in_a_helper_is_reached_by_only_some_threads() {
    let source = "__device__ void stage(int* s, int n) {\n\
                  \x20 if (threadIdx.x >= n) return;\n\
                  \x20 s[threadIdx.x] = 1;\n\
                  \x20 __syncthreads();\n\
                  }\n\
                  __global__ void k(int* g, int* out, int n) {\n\
                  \x20 __shared__ int s[64];\n\
                  \x20 stage(s, n);\n\
                  \x20 out[threadIdx.x] = s[threadIdx.x];\n}";
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(64, 1, 1),
        dyn_smem: 0,
        args: vec![("n".to_string(), Value::Int(40))],
        buffers: vec![("g".to_string(), 256), ("out".to_string(), 256)],
        fills: vec![],
        pointers: vec![],
    };
    let mut simulation = memplay_sim::kernel::Simulation::new(&program, "k", &launch, 1)
        .unwrap_or_else(|d| panic!("{d}"));
    let error = simulation
        .run_block([0, 0, 0], 1_000_000)
        .expect_err("threads 40 to 63 skip the helper's barrier");
    // Warp 1's lanes 8 to 31 (threads 40 to 63) returned: 8 of its 32 lanes reach it.
    assert_eq!(
        error.to_string(),
        "4:3: __syncthreads() is reached by only some threads of the block (in warp 1, 8 of 32 lanes)"
    );
}

/// The tiled matrix product of the lectures, its inner loop's body `inner`.
fn tiled_matmul(inner: &str) -> String {
    format!(
        "#define TILE 16\n\
         __device__ void mac(float &sum, const float &x, const float &y) {{ sum += x * y; }}\n\
         __global__ void k(const float* a, const float* b, float* c, int n) {{\n\
         \x20 __shared__ float as[TILE][TILE];\n\
         \x20 __shared__ float bs[TILE][TILE];\n\
         \x20 int tx = threadIdx.x, ty = threadIdx.y;\n\
         \x20 int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n\
         \x20 float sum = 0.0f;\n\
         \x20 for (int p = 0; p < n / TILE; ++p) {{\n\
         \x20   as[ty][tx] = a[row * n + p * TILE + tx];\n\
         \x20   bs[ty][tx] = b[(p * TILE + ty) * n + col];\n\
         \x20   __syncthreads();\n\
         \x20   for (int k = 0; k < TILE; ++k) {inner}\n\
         \x20   __syncthreads();\n\
         \x20 }}\n\
         \x20 c[row * n + col] = sum;\n}}"
    )
}

#[test]
fn a_helper_taking_references_to_tile_elements_counts_as_the_tiled_matmul_written_out() {
    let run = |source: &str| {
        let mut input = SimulationInput::new(source, "k", h100());
        input.grid = Dim3::new(4, 4, 1);
        input.block = Dim3::new(16, 16, 1);
        let bytes = 64 * 64 * 4;
        input.buffers = ["a", "b", "c"]
            .iter()
            .map(|name| (name.to_string(), bytes))
            .collect();
        input.args = vec![("n".to_string(), Value::Int(64))];
        simulate(&input).unwrap_or_else(|e| panic!("{e:?}"))
    };
    let written = run(&tiled_matmul("sum += as[ty][k] * bs[k][tx];"));
    let helper = run(&tiled_matmul("mac(sum, as[ty][k], bs[k][tx]);"));
    // 16 blocks of 8 warps, 4 phases. A phase's 16 reads of `as[ty][k]` fuse four by four into
    // 16-byte loads (the loads through the helper's `x` are the argument's), those of
    // `bs[k][tx]` do not: 4 + 16 shared loads a warp and phase, and 2 stores.
    let c = &helper.counters;
    assert_eq!(c.shared_ld_instructions, 128.0 * 4.0 * 20.0);
    assert_eq!(c.shared_st_instructions, 128.0 * 4.0 * 2.0);
    // Two global loads a warp and phase, each two rows of 64 bytes: 4 sectors.
    assert_eq!(c.global_ld_requests, 128.0 * 4.0 * 2.0);
    assert_eq!(c.global_ld_sectors, 128.0 * 4.0 * 2.0 * 4.0);
    assert_eq!(memory(c), memory(&written.counters));
    assert_eq!(c.inst_executed, written.counters.inst_executed);
}
