//! Softmaxes and a scan written with warp shuffles and cooperative groups, as courses teach them
//! (CUDA C++ Programming Guide, "Warp Shuffle Functions" and "Cooperative Groups"): a row
//! softmax with one warp a row, its maximum and sum by `__shfl_xor_sync` butterflies; the same
//! with `cg::tiled_partition<32>` and `cg::reduce`; a block softmax with one block a row, whose
//! warps reduce by shuffles and meet in a shared array of warp partials; and an inclusive warp
//! scan by `__shfl_up_sync`. Each runs with every view: its values against a computation on the
//! CPU, the report's counters against counts worked out by hand, the per-line profile and the
//! trace of one warp; the prediction is a time, and the sanitizer finds nothing.

use memplay_sim::device::h100;
use memplay_sim::kernel::{compile, Dim3, Launch, Simulation, Value};
use memplay_sim::sanitizer::SanitizerConfig;
use memplay_sim::simulate::{simulate, SimulationInput, SimulationReport};
use memplay_sim::timing::predict;
use memplay_sim::trace::TraceRequest;
use memplay_sim::{AccessKind, Fill, Space};

const SOURCE: &str = "#include <cfloat>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#define FULL 0xffffffffu

__global__ void softmax_warp(const float* in, float* out, int rows, int cols) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* x = in + row * cols;
  float m = -FLT_MAX;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, x[c]);
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(FULL, m, o));
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += expf(x[c] - m);
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(FULL, s, o);
  for (int c = lane; c < cols; c += 32) out[row * cols + c] = expf(x[c] - m) / s;
}

__global__ void softmax_cg(const float* in, float* out, int rows, int cols) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (row >= rows) return;
  const float* x = in + row * cols;
  float m = -FLT_MAX;
  for (int c = warp.thread_rank(); c < cols; c += warp.size()) m = fmaxf(m, x[c]);
  m = cg::reduce(warp, m, cg::greater<float>());
  float s = 0.0f;
  for (int c = warp.thread_rank(); c < cols; c += warp.size()) s += expf(x[c] - m);
  s = cg::reduce(warp, s, cg::plus<float>());
  for (int c = warp.thread_rank(); c < cols; c += warp.size())
    out[row * cols + c] = expf(x[c] - m) / s;
}

__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
  return v;
}

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
  return v;
}

__global__ void softmax_block(const float* in, float* out, int cols) {
  __shared__ float partial[32];
  int lane = threadIdx.x % 32;
  int warp = threadIdx.x / 32;
  int warps = blockDim.x / 32;
  const float* x = in + blockIdx.x * cols;
  float m = -FLT_MAX;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[c]);
  m = warp_max(m);
  if (lane == 0) partial[warp] = m;
  __syncthreads();
  m = -FLT_MAX;
  if (lane < warps) m = partial[lane];
  m = warp_max(m);
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(x[c] - m);
  s = warp_sum(s);
  if (lane == 0) partial[warp] = s;
  __syncthreads();
  s = 0.0f;
  if (lane < warps) s = partial[lane];
  s = warp_sum(s);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[blockIdx.x * cols + c] = expf(x[c] - m) / s;
}

__global__ void warp_scan(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32;
  int v = i < n ? in[i] : 0;
  for (int d = 1; d < 32; d *= 2) {
    int t = __shfl_up_sync(FULL, v, d);
    if (lane >= d) v += t;
  }
  if (i < n) out[i] = v;
}
";

/// The row softmaxes' launch: 64 rows of 256 floats, four rows (warps) to a block of 128.
const ROWS: u32 = 64;
const COLS: u32 = 256;
const ROW_THREADS: u32 = 128;

/// The block softmax's launch: 32 rows of 1024 floats, one row to a block of 256 threads.
const BLOCK_ROWS: u32 = 32;
const BLOCK_COLS: u32 = 1024;
const BLOCK_THREADS: u32 = 256;

/// A softmax value may be off the CPU's by this share of itself: `expf` and the division round
/// once each, and the butterfly adds the 256 or 1024 terms in another order than the CPU's loop;
/// each rounding is within 2^-24 of the result, and some dozens of them stay below 1e-5.
const RELATIVE_TOLERANCE: f32 = 1e-5;

/// A launch of `kernel` on the H100 over `in` (random floats, or small integers for the scan)
/// and `out`, each `bytes` long.
fn launch(
    kernel: &str,
    grid: u32,
    block: u32,
    bytes: u64,
    args: &[(&str, i64)],
) -> SimulationInput {
    let mut input = SimulationInput::new(SOURCE, kernel, h100());
    input.grid = Dim3::new(grid, 1, 1);
    input.block = Dim3::new(block, 1, 1);
    input.buffers = vec![("in".to_string(), bytes), ("out".to_string(), bytes)];
    // The scan adds small integers; `out` starts zero, so that what no thread stores reads 0.
    let fill = if kernel == "warp_scan" {
        Fill::Small
    } else {
        Fill::Random
    };
    input.fills = vec![("in".to_string(), fill), ("out".to_string(), Fill::Zeros)];
    input.args = args
        .iter()
        .map(|&(name, v)| (name.to_string(), Value::Int(v)))
        .collect();
    input
}

/// Runs every block of `input` in the interpreter and returns what `in` and `out` hold then, as
/// 32-bit words.
fn run_every_block(input: &SimulationInput) -> (Vec<u32>, Vec<u32>) {
    let program = compile(&input.source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: input.grid,
        block: input.block,
        dyn_smem: 0,
        args: input.args.clone(),
        buffers: input.buffers.clone(),
        fills: input.fills.clone(),
        pointers: Vec::new(),
    };
    let mut sim = Simulation::new(&program, &input.kernel, &launch, input.seed)
        .unwrap_or_else(|d| panic!("{d}"));
    for block in 0..input.grid.x {
        sim.run_block([block, 0, 0], 100_000_000)
            .unwrap_or_else(|d| panic!("{d}"));
    }
    let mut words = |name: &str| -> Vec<u32> {
        sim.read_buffer(name)
            .unwrap_or_default()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    (words("in"), words("out"))
}

/// Checks that `out` holds the softmax of each row of `cols` values of `input`, as the CPU
/// computes it in double precision.
fn assert_softmax(input: &[u32], out: &[u32], cols: usize, label: &str) {
    assert_eq!(input.len(), out.len(), "{label}");
    for (row, (x, y)) in input.chunks(cols).zip(out.chunks(cols)).enumerate() {
        let x: Vec<f64> = x.iter().map(|&b| f64::from(f32::from_bits(b))).collect();
        let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = x.iter().map(|v| (v - max).exp()).sum();
        for (c, (&v, &got)) in x.iter().zip(y).enumerate() {
            let want = ((v - max).exp() / sum) as f32;
            let got = f32::from_bits(got);
            assert!(
                (got - want).abs() <= RELATIVE_TOLERANCE * want,
                "{label}: row {row} column {c}: {got} against the CPU's {want}"
            );
        }
    }
}

/// The report of `input`, whose prediction must be a time and in which the sanitizer, run on
/// its own, finds nothing.
fn simulated(input: &SimulationInput) -> SimulationReport {
    let report = simulate(input).unwrap_or_else(|e| panic!("{}: {e}", input.kernel));
    let time = predict(&report).time_ms;
    assert!(
        time.is_finite() && time > 0.0,
        "{}: {time} ms",
        input.kernel
    );
    let mut sanitized = input.clone();
    sanitized.sanitizer = SanitizerConfig::ALL;
    let findings = simulate(&sanitized)
        .unwrap_or_else(|e| panic!("{}: {e}", input.kernel))
        .sanitizer
        .expect("the sanitizer ran");
    assert!(
        findings.findings.is_empty() && findings.more == 0,
        "{}: {:?}",
        input.kernel,
        findings.findings
    );
    report
}

fn counter(report: &SimulationReport, name: &str) -> f64 {
    report
        .counters
        .get(name)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// Shared load and store instructions, wavefronts and bank conflicts, then global load and store
/// requests and sectors.
fn memory_counts(report: &SimulationReport) -> [f64; 10] {
    [
        "smsp__inst_executed_op_shared_ld.sum",
        "smsp__inst_executed_op_shared_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ]
    .map(|name| counter(report, name))
}

/// The per-line profile's global rows, each as (line, load or store, instructions, requests,
/// sectors), in source order.
fn global_lines(report: &SimulationReport) -> Vec<(u32, AccessKind, f64, f64, f64)> {
    let mut rows: Vec<_> = report
        .lines
        .iter()
        .filter(|l| l.site.space == Space::Global)
        .map(|l| {
            (
                l.site.span.line,
                l.site.kind,
                l.instructions,
                l.requests,
                l.sectors,
            )
        })
        .collect();
    rows.sort_by_key(|r| (r.0, r.1 == AccessKind::Store));
    rows
}

/// The line of `SOURCE` that holds `text` (the first, from 1).
fn line_of(text: &str) -> u32 {
    line_after(0, text)
}

/// The first line of `SOURCE` after line `after` that holds `text`.
fn line_after(after: u32, text: &str) -> u32 {
    SOURCE
        .lines()
        .enumerate()
        .skip(after as usize)
        .find(|(_, l)| l.contains(text))
        .map(|(k, _)| k as u32 + 1)
        .unwrap_or_else(|| panic!("no line after {after} holds {text}"))
}

#[test]
fn a_row_softmax_with_one_warp_a_row_and_its_cooperative_groups_twin_match_the_cpu_and_access_memory_alike(
) {
    let bytes = u64::from(ROWS * COLS) * 4;
    let args = [("rows", i64::from(ROWS)), ("cols", i64::from(COLS))];
    for kernel in ["softmax_warp", "softmax_cg"] {
        let mut input = launch(kernel, ROWS / 4, ROW_THREADS, bytes, &args);
        let (x, out) = run_every_block(&input);
        assert_softmax(&x, &out, COLS as usize, kernel);

        // Block 3's warp 2 has row 14: its first access is the first loop's read of the
        // row's first 32 floats, lane l at byte 4 l of the row.
        input.trace = Some(TraceRequest {
            block: [3, 0, 0],
            warp: 2,
        });
        let report = simulated(&input);
        // Each of the 64 warps reads its row three times, 8 times 32 consecutive floats, each
        // read 128 bytes in one request of 4 sectors, and stores it once the same way: 24
        // loads and 8 stores a warp. No shared memory: a shuffle moves registers.
        assert_eq!(
            memory_counts(&report),
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1536.0, 6144.0, 512.0, 2048.0],
            "{kernel}"
        );
        let trace = report.trace.as_ref().expect("a trace");
        assert_eq!(trace.problem, None, "{kernel}");
        assert_eq!(trace.accesses, 32, "{kernel}");
        let base = trace
            .buffers
            .iter()
            .find(|b| b.name == "in")
            .map(|b| b.base)
            .expect("the buffer in");
        let first = &trace.records[0];
        assert_eq!(first.kind, AccessKind::Load, "{kernel}");
        assert_eq!(first.active_mask, u32::MAX, "{kernel}");
        let row_start = base + 14 * u64::from(COLS) * 4;
        let expected: Vec<u64> = (0..32).map(|l| row_start + 4 * l).collect();
        assert_eq!(first.addresses, expected, "{kernel}");
        // The last access is the store of the row's last 32 floats, from the 8th iteration.
        let last = trace.records.last().expect("records");
        assert_eq!(
            (last.kind, last.occurrence),
            (AccessKind::Store, 7),
            "{kernel}"
        );

        // The per-line profile: each of the three reads of `x[c]` 512 times over the launch
        // (64 warps, 8 iterations), and the store 512 times.
        let start = line_of(&format!("void {kernel}("));
        let read_lines = [
            line_after(start, "m = fmaxf(m, x[c]);"),
            line_after(start, "s += expf(x[c] - m);"),
            line_after(start, "out[row * cols + c] = expf(x[c] - m) / s;"),
        ];
        let expected: Vec<_> = read_lines
            .iter()
            .map(|&line| (line, AccessKind::Load, 512.0, 512.0, 2048.0))
            .chain([(read_lines[2], AccessKind::Store, 512.0, 512.0, 2048.0)])
            .collect();
        assert_eq!(global_lines(&report), expected, "{kernel}");
    }
}

#[test]
fn a_block_softmax_meets_in_a_shared_array_of_warp_partials_without_bank_conflicts() {
    let bytes = u64::from(BLOCK_ROWS * BLOCK_COLS) * 4;
    let mut input = launch(
        "softmax_block",
        BLOCK_ROWS,
        BLOCK_THREADS,
        bytes,
        &[("cols", i64::from(BLOCK_COLS))],
    );
    let (x, out) = run_every_block(&input);
    assert_softmax(&x, &out, BLOCK_COLS as usize, "softmax_block");

    input.trace = Some(TraceRequest {
        block: [5, 0, 0],
        warp: 3,
    });
    let report = simulated(&input);
    // Per block of 8 warps: each warp's lane 0 stores its partial twice (1 wavefront each), and
    // each warp reads the 8 partials twice, lane l word l (1 wavefront, no conflict): 16 shared
    // stores and 16 loads a block. Each warp reads 32 consecutive floats 4 times in each of the
    // three loops (1 request, 4 sectors each) and stores 4 times: 96 load requests and 32 store
    // requests a block, over 32 blocks.
    assert_eq!(
        memory_counts(&report),
        [512.0, 512.0, 512.0, 512.0, 0.0, 0.0, 3072.0, 12288.0, 1024.0, 4096.0]
    );
    let shared: Vec<_> = report
        .lines
        .iter()
        .filter(|l| l.site.space == Space::Shared)
        .map(|l| {
            (
                l.site.span.line,
                l.site.kind,
                l.instructions,
                l.bank_conflicts,
            )
        })
        .collect();
    let stores = [
        line_of("if (lane == 0) partial[warp] = m;"),
        line_of("if (lane == 0) partial[warp] = s;"),
    ];
    let loads = [
        line_of("if (lane < warps) m = partial[lane];"),
        line_of("if (lane < warps) s = partial[lane];"),
    ];
    let mut expected: Vec<_> = stores
        .iter()
        .map(|&line| (line, AccessKind::Store, 256.0, 0.0))
        .chain(
            loads
                .iter()
                .map(|&line| (line, AccessKind::Load, 256.0, 0.0)),
        )
        .collect();
    expected.sort_by_key(|r| r.0);
    let mut shared = shared;
    shared.sort_by_key(|r| r.0);
    assert_eq!(shared, expected);

    // Warp 3 of block 5 reads row 5 at floats 96 to 127 first; its shared accesses are lane 0's
    // store of partial[3] and the reads of partial[0..8] by lanes 0 to 7.
    let trace = report.trace.as_ref().expect("a trace");
    assert_eq!(trace.problem, None);
    let base = trace
        .buffers
        .iter()
        .find(|b| b.name == "in")
        .map(|b| b.base)
        .expect("the buffer in");
    let row_start = base + 5 * u64::from(BLOCK_COLS) * 4 + 96 * 4;
    assert_eq!(
        trace.records[0].addresses,
        (0..32).map(|l| row_start + 4 * l).collect::<Vec<u64>>()
    );
    let shared: Vec<(AccessKind, u32)> = trace
        .records
        .iter()
        .filter(|r| r.space == Space::Shared)
        .map(|r| (r.kind, r.active_mask))
        .collect();
    assert_eq!(
        shared,
        [
            (AccessKind::Store, 1),
            (AccessKind::Load, 0xff),
            (AccessKind::Store, 1),
            (AccessKind::Load, 0xff)
        ]
    );
    // 12 reads and 4 stores of global memory, 4 of shared.
    assert_eq!(trace.accesses, 20);
}

#[test]
fn an_inclusive_warp_scan_by_shuffles_up_gives_each_lane_the_sum_of_the_lanes_up_to_it() {
    // 200 integers in blocks of 128: the last warp of block 1 holds 8 of them, and its other
    // lanes scan zeros.
    let n = 200u32;
    let mut input = launch("warp_scan", 2, 128, 256 * 4, &[("n", i64::from(n))]);
    let (x, out) = run_every_block(&input);
    for i in 0..n as usize {
        let warp_start = i - i % 32;
        let want: u32 = x[warp_start..=i].iter().sum();
        assert_eq!(out[i], want, "element {i}");
    }
    assert!(out[n as usize..].iter().all(|&v| v == 0));

    input.trace = Some(TraceRequest {
        block: [1, 0, 0],
        warp: 2,
    });
    let report = simulated(&input);
    // Warps 0 to 5 (elements 0 to 191) read and store 32 ints each (1 request, 4 sectors);
    // warp 6 (192 to 223) 8 of them (1 sector); warp 7 none.
    assert_eq!(
        memory_counts(&report),
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 25.0, 7.0, 25.0]
    );
    let read = line_of("int v = i < n ? in[i] : 0;");
    let store = line_of("if (i < n) out[i] = v;");
    assert_eq!(
        global_lines(&report),
        [
            (read, AccessKind::Load, 7.0, 7.0, 25.0),
            (store, AccessKind::Store, 7.0, 7.0, 25.0)
        ]
    );
    // Warp 2 of block 1 is elements 192 to 223: lanes 0 to 7 read and store.
    let trace = report.trace.as_ref().expect("a trace");
    let masks: Vec<(AccessKind, u32)> = trace
        .records
        .iter()
        .map(|r| (r.kind, r.active_mask))
        .collect();
    assert_eq!(masks, [(AccessKind::Load, 0xff), (AccessKind::Store, 0xff)]);
}
