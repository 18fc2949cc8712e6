//! How long `simulate` takes on the lessons' launches.
//!
//! The page simulates a launch whenever a slider moves, so each lesson kernel at the size a lesson
//! shows it should simulate in a few milliseconds (the goal is under 4 ms in wasm). The n = 1024
//! matmul launches of the H100 reference measurements are the heaviest the golden test runs, and
//! are here too. Run with `cargo bench -p memplay-sim`; BENCHMARKS.md keeps the figures.
//!
//! The samples are few and short (the benchmark runs on a 2-core machine shared with builds):
//! enough to see a factor, not a few percent.

use criterion::{criterion_group, criterion_main, Criterion};
use memplay_sim::device::h100;
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::lesson_kernels::{
    matmul_launch, ADJ_DIFF, ATOMICS, BANKS, BOUNDARY, COALESCING, DIVERGENCE, MATMUL, TRANSPOSE,
};
use memplay_sim::simulate::{simulate, BlockSampling, SimulationInput};
use memplay_sim::trace::TraceRequest;
use std::hint::black_box;
use std::time::Duration;

/// One launch on H100, as the page or the reference measurements describe it.
struct Launch {
    source: &'static str,
    kernel: &'static str,
    defines: &'static [(&'static str, u32)],
    grid: [u32; 3],
    block: [u32; 3],
    dyn_smem: u32,
    args: &'static [(&'static str, i64)],
    buffers: Vec<(&'static str, u64)>,
}

impl Launch {
    fn input(&self) -> SimulationInput {
        let mut input = SimulationInput::new(self.source, self.kernel, h100());
        input.defines = self
            .defines
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        input.grid = Dim3::new(self.grid[0], self.grid[1], self.grid[2]);
        input.block = Dim3::new(self.block[0], self.block[1], self.block[2]);
        input.dyn_smem = self.dyn_smem;
        input.regs = 32;
        input.args = self
            .args
            .iter()
            .map(|(name, value)| (name.to_string(), Value::Int(*value)))
            .collect();
        input.buffers = self
            .buffers
            .iter()
            .map(|(name, bytes)| (name.to_string(), *bytes))
            .collect();
        input
    }
}

/// `mm_naive` or `mm_tiled` on n x n matrices with `tile` x `tile` blocks.
fn matmul(kernel: &str, n: u32, tile: u32) -> SimulationInput {
    matmul_in(MATMUL, kernel, n, tile)
}

/// A matmul `kernel` of `source` on n x n matrices with `tile` x `tile` blocks, as many as cover
/// the matrix (`matmul_launch`), with 32 registers as every launch here.
fn matmul_in(source: &str, kernel: &str, n: u32, tile: u32) -> SimulationInput {
    let mut input = matmul_launch(source, kernel, n, tile, h100());
    input.regs = 32;
    input
}

/// The lesson-sized launches, named as the benchmark reports them.
fn lesson_launches() -> Vec<(String, SimulationInput)> {
    let mut launches = Vec::new();
    for tile in [8, 16, 32] {
        for kernel in ["mm_naive", "mm_tiled"] {
            launches.push((
                format!("{kernel} n=256 T={tile}"),
                matmul(kernel, 256, tile),
            ));
        }
    }
    let n = 65_536u64;
    for (kernel, dyn_smem) in [("adj_diff_naive", 0), ("adj_diff_shared", 1024)] {
        launches.push((
            format!("{kernel} n=65536 block=256"),
            Launch {
                source: ADJ_DIFF,
                kernel,
                defines: &[],
                grid: [256, 1, 1],
                block: [256, 1, 1],
                dyn_smem,
                args: &[("n", 65_536)],
                buffers: vec![("result", 4 * n), ("input", 4 * n)],
            }
            .input(),
        ));
    }
    for (name, kernel, defines) in [
        ("tr_copy", "tr_copy", &[][..]),
        ("tr_naive", "tr_naive", &[][..]),
        ("tr_shared PAD=0", "tr_shared", &[("PAD", 0)][..]),
        ("tr_shared PAD=1", "tr_shared", &[("PAD", 1)][..]),
    ] {
        launches.push((
            format!("{name} n=256 block=32x8"),
            Launch {
                source: TRANSPOSE,
                kernel,
                defines,
                grid: [8, 8, 1],
                block: [32, 8, 1],
                dyn_smem: 0,
                args: &[("n", 256)],
                buffers: vec![("out", 256 * 256 * 4), ("in", 256 * 256 * 4)],
            }
            .input(),
        ));
    }
    for (stride, args) in [
        (1u64, &[("stride", 1), ("n_out", 65_536)][..]),
        (32, &[("stride", 32), ("n_out", 65_536)][..]),
    ] {
        launches.push((
            format!("strided_copy stride={stride} n_out=65536"),
            Launch {
                source: COALESCING,
                kernel: "strided_copy",
                defines: &[],
                grid: [256, 1, 1],
                block: [256, 1, 1],
                dyn_smem: 0,
                args,
                buffers: vec![("out", 4 * n), ("in", 4 * n * stride)],
            }
            .input(),
        ));
    }
    for (stride, args) in [
        (1, &[("stride", 1), ("iters", 64)][..]),
        (32, &[("stride", 32), ("iters", 64)][..]),
    ] {
        launches.push((
            format!("smem_stride stride={stride} grid=4 block=256 iters=64"),
            Launch {
                source: BANKS,
                kernel: "smem_stride",
                defines: &[],
                grid: [4, 1, 1],
                block: [256, 1, 1],
                dyn_smem: 0,
                args,
                buffers: vec![("out", 4 * 4 * 256)],
            }
            .input(),
        ));
    }
    for (pad, defines) in [(0, &[("PAD", 0)][..]), (1, &[("PAD", 1)][..])] {
        launches.push((
            format!("row_per_thread PAD={pad} grid=4 block=32"),
            Launch {
                source: BANKS,
                kernel: "row_per_thread",
                defines,
                grid: [4, 1, 1],
                block: [32, 1, 1],
                dyn_smem: 0,
                args: &[],
                buffers: vec![("out", 4 * 4 * 32), ("in", 4 * 4 * 1024)],
            }
            .input(),
        ));
    }
    for kernel in ["sum_global_atomic", "sum_hier_atomic"] {
        launches.push((
            format!("{kernel} n=65536 block=256"),
            Launch {
                source: ATOMICS,
                kernel,
                defines: &[],
                grid: [256, 1, 1],
                block: [256, 1, 1],
                dyn_smem: 0,
                args: &[("n", 65_536)],
                buffers: vec![("in", 4 * n), ("result", 4)],
            }
            .input(),
        ));
    }
    launches
}

/// The n = 1024 matmul launches of the H100 reference measurements.
fn reference_launches() -> Vec<(String, SimulationInput)> {
    vec![
        (
            "mm_naive n=1024 T=16".to_string(),
            matmul("mm_naive", 1024, 16),
        ),
        (
            "mm_naive n=1024 T=32".to_string(),
            matmul("mm_naive", 1024, 32),
        ),
        (
            "mm_tiled n=1024 T=16".to_string(),
            matmul("mm_tiled", 1024, 16),
        ),
        (
            "mm_tiled n=1024 T=32".to_string(),
            matmul("mm_tiled", 1024, 32),
        ),
    ]
}

/// The launches of the page's heaviest lessons as the page sends them: with the trace of warp 0
/// of block (0, 0) for the per-line view, a block the sampling does not run.
fn page_launches() -> Vec<(String, SimulationInput)> {
    let mut launches = reference_launches();
    launches.push((
        "branch split=1 grid=1056 block=256 iters=4096".to_string(),
        Launch {
            source: DIVERGENCE,
            kernel: "branch",
            defines: &[],
            grid: [1056, 1, 1],
            block: [256, 1, 1],
            dyn_smem: 0,
            args: &[("iters", 4096), ("split", 1)],
            buffers: vec![("out", 4 * 1056 * 256)],
        }
        .input(),
    ));
    // The boundary-checks lesson's second variant and the host-transfers lesson's matmul: n is
    // no multiple of the tile, so the grid's last row and column of blocks hold partial tiles.
    launches.push((
        "mm_tiled_guarded n=1000 T=16".to_string(),
        matmul_in(BOUNDARY, "mm_tiled_guarded", 1000, 16),
    ));
    // The first step up from the default tile: 17 x 17 threads make warps that straddle rows,
    // which are not shown alike, so each of them runs (its loop iterations are still skipped).
    launches.push((
        "mm_naive n=1024 T=17".to_string(),
        matmul("mm_naive", 1024, 17),
    ));
    launches.push((
        "mm_tiled_guarded n=1000 T=17".to_string(),
        matmul_in(BOUNDARY, "mm_tiled_guarded", 1000, 17),
    ));
    // The slowest tile of the slider (1 to 32) natively: 30 x 30 threads, 29 warps that straddle
    // rows, each running the phases that are not skipped in full; their work grows as the cube
    // of the tile.
    launches.push((
        "mm_tiled_guarded n=1000 T=30".to_string(),
        matmul_in(BOUNDARY, "mm_tiled_guarded", 1000, 30),
    ));
    // The naive matmul's slowest tile natively: 27 x 27 threads, 23 warps that straddle rows,
    // each skipping 1,023 iterations of its loop whose two loads the profile places one by one.
    launches.push((
        "mm_naive n=1024 T=27".to_string(),
        matmul("mm_naive", 1024, 27),
    ));
    launches
}

/// The launches the interpreter's speed shows on: every class's block run in full, every warp
/// and every loop iteration (`BlockSampling::EdgeClassesEachRun`), as a kernel runs whose blocks,
/// warps and iterations cannot be shown alike.
fn full_launches() -> Vec<(String, SimulationInput)> {
    vec![
        (
            "mm_tiled n=1024 T=16 each class run".to_string(),
            matmul("mm_tiled", 1024, 16),
        ),
        (
            "mm_naive n=1024 T=16 each class run".to_string(),
            matmul("mm_naive", 1024, 16),
        ),
        (
            "mm_tiled_guarded n=1000 T=16 each class run".to_string(),
            matmul_in(BOUNDARY, "mm_tiled_guarded", 1000, 16),
        ),
    ]
}

fn bench(c: &mut Criterion, group_name: &str, launches: Vec<(String, SimulationInput)>) {
    let mut group = c.benchmark_group(group_name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (name, mut input) in launches {
        if group_name == "full" {
            input.sampling = BlockSampling::EdgeClassesEachRun;
        }
        if group_name == "page" {
            input.trace = Some(TraceRequest {
                block: [0, 0, 0],
                warp: 0,
            });
        }
        // A launch that fails to simulate would measure the error path: refuse to.
        if let Err(error) = simulate(&input) {
            panic!("{name} does not simulate: {error}");
        }
        group.bench_function(name, |b| b.iter(|| simulate(black_box(&input))));
    }
    group.finish();
}

fn lessons(c: &mut Criterion) {
    bench(c, "lesson", lesson_launches());
}

fn reference(c: &mut Criterion) {
    bench(c, "reference", reference_launches());
}

fn page(c: &mut Criterion) {
    bench(c, "page", page_launches());
}

fn full(c: &mut Criterion) {
    bench(c, "full", full_launches());
}

criterion_group!(benches, lessons, reference, page, full);
criterion_main!(benches);
