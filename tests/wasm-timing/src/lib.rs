//! The simulator's speed in WebAssembly, in Chromium: `cargo xtask wasm-timing` builds this crate
//! for `wasm32-unknown-unknown` with the page's Cargo profile (`web`), and a Web Worker
//! (`www/worker.js`) calls `run` on each launch and times it with `performance.now()`.
//!
//! The launches are the page's heaviest, as the page sends them (the per-line view's trace of
//! warp 0 of block (0, 0)), and the coalescing lesson's strided copy at every stride from 1 to 32,
//! one after another (issue 13's sweep), and two matmuls with every class's block run in full (the
//! interpreter's own speed). Only the simulation is timed: no page, no message
//! passing, no drawing, so the figures are the simulator's alone. The module exports plain
//! functions over numbers and needs no imports, so the crate depends on no wasm crate. It is a
//! package of its own because an example of memplay-sim would bring the simulator's
//! dev-dependencies (proptest's random number source) into the wasm build.

use memplay_sim::device::h100;
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::lesson_kernels::{matmul_launch, BOUNDARY, COALESCING, DIVERGENCE, MATMUL};
use memplay_sim::simulate::{simulate, BlockSampling, SimulationInput};
use memplay_sim::trace::TraceRequest;

/// The launches, by the names the timing table prints.
const LAUNCHES: [&str; 15] = [
    "naive matmul n=1024, tile 16",
    "naive matmul n=1024, tile 32",
    "tiled matmul n=1024, tile 16",
    "tiled matmul n=1024, tile 32",
    "guarded tiled matmul n=1000, tile 16",
    "divergence, split lanes (1,056 blocks of 256)",
    "strided copy n_out=2^20, strides 1 to 32",
    "strided copy n_out=2^20, stride 1",
    "tiled matmul n=1024, tile 16, every class's block run in full",
    "guarded tiled matmul n=1000, tile 16, every class's block run in full",
    "naive matmul n=1024, tile 17",
    "guarded tiled matmul n=1000, tile 17",
    "guarded tiled matmul n=1000, tile 30",
    "guarded tiled matmul n=1000, tile 31",
    "naive matmul n=1024, tile 27",
];

/// A launch of `kernel` in `source` on the H100 with 32 registers, traced as the page traces.
fn launch(source: &str, kernel: &str, grid: [u32; 2], block: [u32; 2]) -> SimulationInput {
    let mut input = SimulationInput::new(source, kernel, h100());
    input.grid = Dim3::new(grid[0], grid[1], 1);
    input.block = Dim3::new(block[0], block[1], 1);
    input.regs = 32;
    input.trace = Some(page_trace());
    input
}

/// The trace the page asks for: warp 0 of block (0, 0), for the per-line view.
fn page_trace() -> TraceRequest {
    TraceRequest {
        block: [0, 0, 0],
        warp: 0,
    }
}

/// A square matmul of `n` with `tile` x `tile` blocks (`matmul_launch`), with 32 registers,
/// traced as the page traces.
fn matmul(source: &str, kernel: &str, n: u32, tile: u32) -> SimulationInput {
    let mut input = matmul_launch(source, kernel, n, tile, h100());
    input.regs = 32;
    input.trace = Some(page_trace());
    input
}

/// The coalescing lesson's strided copy of 2^20 floats at `stride`.
fn strided_copy(stride: u64) -> SimulationInput {
    let n_out: u64 = 1 << 20;
    let mut input = launch(COALESCING, "strided_copy", [4096, 1], [256, 1]);
    input.trace = None;
    input.args = vec![
        ("stride".to_string(), Value::Int(stride as i64)),
        ("n_out".to_string(), Value::Int(n_out as i64)),
    ];
    input.buffers = vec![
        ("out".to_string(), 4 * n_out),
        ("in".to_string(), 4 * n_out * stride),
    ];
    input
}

/// The launches of entry `index` of `LAUNCHES`.
fn inputs(index: u32) -> Vec<SimulationInput> {
    match index {
        0 => vec![matmul(MATMUL, "mm_naive", 1024, 16)],
        1 => vec![matmul(MATMUL, "mm_naive", 1024, 32)],
        2 => vec![matmul(MATMUL, "mm_tiled", 1024, 16)],
        3 => vec![matmul(MATMUL, "mm_tiled", 1024, 32)],
        4 => vec![matmul(BOUNDARY, "mm_tiled_guarded", 1000, 16)],
        5 => {
            let mut input = launch(DIVERGENCE, "branch", [1056, 1], [256, 1]);
            input.args = vec![
                ("iters".to_string(), Value::Int(4096)),
                ("split".to_string(), Value::Int(1)),
            ];
            input.buffers = vec![("out".to_string(), 4 * 1056 * 256)];
            vec![input]
        }
        6 => (1..=32).map(strided_copy).collect(),
        7 => vec![strided_copy(1)],
        // The interpreter's own speed: every warp and every loop iteration of each class's
        // block runs, as in a kernel whose blocks, warps and iterations cannot be shown alike.
        8 | 9 => {
            let mut input = if index == 8 {
                matmul(MATMUL, "mm_tiled", 1024, 16)
            } else {
                matmul(BOUNDARY, "mm_tiled_guarded", 1000, 16)
            };
            input.sampling = BlockSampling::EdgeClassesEachRun;
            vec![input]
        }
        // The first step up from the default tile, whose warps straddle rows.
        10 => vec![matmul(MATMUL, "mm_naive", 1024, 17)],
        11 => vec![matmul(BOUNDARY, "mm_tiled_guarded", 1000, 17)],
        // The slider's slowest tile natively: the warps' work grows as the cube of the tile.
        12 => vec![matmul(BOUNDARY, "mm_tiled_guarded", 1000, 30)],
        // The slider's largest odd tile, and the naive matmul's slowest tile natively.
        13 => vec![matmul(BOUNDARY, "mm_tiled_guarded", 1000, 31)],
        14 => vec![matmul(MATMUL, "mm_naive", 1024, 27)],
        _ => Vec::new(),
    }
}

/// How many launches there are.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn launch_count() -> u32 {
    LAUNCHES.len() as u32
}

/// Where the name of launch `index` lies in the module's memory, and how long it is.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn name_pointer(index: u32) -> *const u8 {
    LAUNCHES
        .get(index as usize)
        .map_or(std::ptr::null(), |name| name.as_ptr())
}

#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn name_length(index: u32) -> u32 {
    LAUNCHES
        .get(index as usize)
        .map_or(0, |name| name.len() as u32)
}

/// Simulates launch `index` (with its prediction, as the page's worker does); the interpreter
/// steps it took, 0 if any launch of it failed, so that the timing reports a broken launch
/// rather than a fast one.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn run(index: u32) -> u64 {
    let mut steps = 0;
    for input in inputs(index) {
        match simulate(&input) {
            Ok(report) => {
                let _ = memplay_sim::timing::predict(&report);
                steps += report.steps;
            }
            Err(_) => return 0,
        }
    }
    steps
}
