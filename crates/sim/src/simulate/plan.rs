//! What a launch may reuse, decided once before any block runs: the reuse plan.
//!
//! The simulator runs less than the whole launch where a proof shows the part it skips to do
//! the work of a part it ran at moved addresses (the module documentation of `simulate`, steps
//! 5 to 7). Three kinds of reuse stand on three proofs, and each is allowed or not here, once
//! per launch, from the input alone:
//!
//! - **Blocks** (`ReusePlan::blocks_share_runs`): a run of one edge class's block stands for the
//!   classes that `kernel::block_shift::analyze` shows to do its work at addresses shifted by
//!   whole lines. Decided here from the sampling, the reuse setting and the device (never on
//!   cc 1.x, whose DRAM rows and partitions see absolute addresses); read by `shifted_blocks`,
//!   which then asks the kernel for the proof, and through it by the block runs (`BlockRuns`),
//!   which check each pair's guards and shifts as the runs come (`block_classes::runs_alike`).
//! - **Warps** (`ReusePlan::warps_shown_alike`): within a block run, one warp of each class that
//!   `kernel::block_shift::analyze_warps` proves alike runs, and the others' records are its
//!   records moved (`kernel::interp`'s `warps`).
//! - **Loop iterations** (`ReusePlan::iterations_skipped`): within a warp's run, the iterations
//!   after one it ran whose guards come out alike are skipped, their records its records moved
//!   (`kernel::interp`'s `loops`).
//!
//! The warps' and iterations' premises, and what the interpreter checks as it goes, are stated
//! once in the module documentation of `kernel::interp::loops` (the exactness contract): every
//! reuse gives the records of a full run, so no counter, profile, per-line counter or trace
//! depends on the plan. Where a premise fails as a block runs, the reuse it stands on falls back
//! to running: a warp whose guards come out otherwise runs on its own, an iteration whose guards
//! differ runs; a block run that cannot stand for a class leaves that class to run; and where
//! reused block runs cannot settle an error or a strata check the way the classes' own order
//! would, the whole launch runs again with each class's block run and nothing reused
//! (`BlockSampling::EdgeClassesEachRun`).
//!
//! The plan says what a launch *may* reuse. What each run *does* reuse depends on the records
//! as they come, so the sink decides it then, per iteration log, record or warp class, each
//! decision once, where its premise is checked, and read from a field afterwards:
//!
//! - `IterationLog::clean_start`, decided at `iteration_begins` and the iteration's first
//!   record (`record_sink_impl`): the compiler effects hold nothing that record could fuse or
//!   reuse. Read by `repeats_begin`.
//! - `IterationLog::reusable`, decided at `repeats_begin`: every site moves by one amount, load
//!   reuse and fusion move alike (`effects_move_alike`), and every output comes from one of
//!   the iteration's own sites. Read through `BlockSink::reusable_log` (`repeats`,
//!   `record_sink_impl`).
//! - `IterationLog::tail`, decided at `repeats_begin` (`reuse_over_iterations`): how many of
//!   the last skipped iterations must pass through everything to leave load reuse as a full
//!   run does. Read only through `SkipWindow` (`IterationLog::window`, and in the interpreter
//!   `RepeatsNeeded::window`), which computes the window of batched iterations once.
//! - `LoggedRecord::batched` and `LoggedRecord::quiet`, decided at the first skipped iteration
//!   (`IterationLog::decide_repeats`): every output keeps its measure moved by any number of
//!   iterations; and, for quiet, besides every output measured, no placement in the profile,
//!   the warp not traced, a leader's record an input of its class. Read by `repeats` and by
//!   `record_sink_impl` (`repeats_needed`, `records_repeated_from`).
//! - `MovedClass::reusable`, decided at `warps_alike` (`record_sink_impl`): the premises of
//!   `warp_classes`. Read by `block_sink` and `record_sink_impl`.
//! - `FirstRecord::inert`, a method over a class's measures: a copy counts nothing more and
//!   needs no placement. Read by `record_sink_impl` (`records_moved`).
//! - `as_run`, decided per repeat in `repeat_logged`: every output of the repeated record keeps
//!   its measure at that iteration, so its class takes it as the iteration run's record.
//!
//! Where any of these comes out false, the record, iteration or warp goes through the sink
//! whole, as in a full run: a failed premise costs time, never a digit.
//!
//! `Reuse::None` (in `input`, with the launch it belongs to) turns every reuse off, for a
//! launch whose every warp and iteration must run: output that a skipped warp or iteration
//! would not make (`printf`, `clock()`, a sanitizer's findings) needs it. It changes no
//! counter: what it costs is time. A launch with the sanitizer on (`SimulationInput::sanitizer`)
//! reuses nothing either, for the same reason.

use super::input::{BlockSampling, Reuse, SimulationInput};
use crate::capability::{Feature, FeatureUse};
use crate::device::{Device, GlobalCoalescing};

/// What a launch's kernel (with the functions it calls) says outside its memory, decided once
/// from the features it uses (`capability::features_used`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelOutput {
    /// It calls `printf`: the launch collects the lines its blocks print.
    pub printf: bool,
    /// It prints, reads the clock or asserts: every warp and iteration must run (`ReusePlan`).
    pub needs_every_run: bool,
}

impl KernelOutput {
    pub const NONE: KernelOutput = KernelOutput {
        printf: false,
        needs_every_run: false,
    };

    pub fn of(uses: &[FeatureUse]) -> KernelOutput {
        KernelOutput {
            printf: uses.iter().any(|each| each.feature == Feature::Printf),
            needs_every_run: uses.iter().any(|each| each.feature.makes_output()),
        }
    }
}

/// What one launch may reuse, decided once from its input (`ReusePlan::of`) and read wherever
/// the reuse happens; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReusePlan {
    /// Whether a block run may stand for other edge classes whose blocks are shown to do its
    /// work at shifted addresses.
    pub blocks_share_runs: bool,
    /// Whether the warps of a block run that are shown alike may take their leader's records
    /// instead of running.
    pub warps_shown_alike: bool,
    /// Whether a warp may skip the iterations of a loop shown alike.
    pub iterations_skipped: bool,
}

impl ReusePlan {
    /// The plan that reuses nothing: every warp and iteration of each block runs.
    pub const NOTHING: ReusePlan = ReusePlan {
        blocks_share_runs: false,
        warps_shown_alike: false,
        iterations_skipped: false,
    };

    /// The plan of a launch. Only edge-class sampling reuses anything: `EdgeClassesEachRun` is
    /// what it must equal, and under `All` every block is its own class. Warps and iterations
    /// shown alike give the records of a full run on every device; block runs stand for other
    /// classes only where sectors are counted and no DRAM rows are modelled, since a shift of
    /// whole lines keeps sectors, lines and banks alike but not absolute rows or partitions.
    pub fn of(input: &SimulationInput, output: KernelOutput) -> ReusePlan {
        if input.reuse == Reuse::None
            || output.needs_every_run
            || input.sanitizer.any()
            || input.sampling != BlockSampling::EdgeClasses
        {
            return ReusePlan::NOTHING;
        }
        ReusePlan {
            blocks_share_runs: shifts_keep_counts(&input.device),
            warps_shown_alike: true,
            iterations_skipped: true,
        }
    }

    /// Whether the plan reuses no run at all.
    pub fn reuses_nothing(&self) -> bool {
        *self == ReusePlan::NOTHING
    }
}

/// Whether a device counts a block's accesses alike when they are shifted by whole lines.
fn shifts_keep_counts(device: &Device) -> bool {
    device.global_coalescing == GlobalCoalescing::Sectors && device.timing.dram_rows.is_none()
}

#[cfg(test)]
mod tests {
    use super::{KernelOutput, Reuse, ReusePlan};
    use crate::compile_effects::CompileEffects;
    use crate::device::{g80, h100};
    use crate::kernel::{Dim3, Value};
    use crate::lesson_kernels::{ADJ_DIFF, BANKS, MATMUL, TRANSPOSE};
    use crate::simulate::{simulate, BlockSampling, SimulationInput, SimulationReport};
    use crate::trace::TraceRequest;

    /// A launch of a lecture kernel on H100 with the given grid, block, arguments and buffers.
    fn lecture_launch(
        source: &str,
        kernel: &str,
        (grid, block): (Dim3, Dim3),
        args: &[(&str, i64)],
        buffers: &[(&str, u64)],
    ) -> SimulationInput {
        let mut input = SimulationInput::new(source, kernel, h100());
        input.grid = grid;
        input.block = block;
        input.regs = 32;
        input.args = args
            .iter()
            .map(|&(name, value)| (name.to_string(), Value::Int(value)))
            .collect();
        input.buffers = buffers
            .iter()
            .map(|&(name, bytes)| (name.to_string(), bytes))
            .collect();
        input
    }

    /// A handful of lecture launches whose default runs reuse blocks, warps and iterations.
    fn lecture_launches() -> Vec<SimulationInput> {
        let matrix = 64 * 64 * 4;
        let mut tiled = lecture_launch(
            MATMUL,
            "mm_tiled",
            (Dim3::new(4, 4, 1), Dim3::new(16, 16, 1)),
            &[("n", 64)],
            &[("a", matrix), ("b", matrix), ("c", matrix)],
        );
        tiled.defines = vec![("TILE_WIDTH".to_string(), "16".to_string())];
        tiled.compile = CompileEffects::AS_COMPILED;
        let mut naive = tiled.clone();
        naive.kernel = "mm_naive".to_string();
        let transpose = lecture_launch(
            TRANSPOSE,
            "tr_shared",
            (Dim3::new(2, 2, 1), Dim3::new(32, 8, 1)),
            &[("n", 64)],
            &[("out", matrix), ("in", matrix)],
        );
        let adjacent = lecture_launch(
            ADJ_DIFF,
            "adj_diff_naive",
            (Dim3::new(4, 1, 1), Dim3::new(256, 1, 1)),
            &[("n", 1024)],
            &[("result", 4096), ("input", 4096)],
        );
        let strided = lecture_launch(
            BANKS,
            "smem_stride",
            (Dim3::new(2, 1, 1), Dim3::new(256, 1, 1)),
            &[("stride", 4), ("iters", 8)],
            &[("out", 2048)],
        );
        vec![tiled, naive, transpose, adjacent, strided]
    }

    /// How many runs the report's blocks reused: classes stood for, warps shown alike and
    /// iterations skipped.
    fn reused_runs(report: &SimulationReport) -> u64 {
        report
            .sampled_blocks
            .iter()
            .map(|block| {
                block.reused_for.len() as u64
                    + u64::from(block.warps_shown_alike)
                    + block.iterations_skipped
            })
            .sum()
    }

    #[test]
    fn a_launch_that_reuses_nothing_runs_every_warp_and_iteration_and_counts_the_same() {
        let mut reused_by_default = 0;
        for input in lecture_launches() {
            let exact = simulate(&input).expect("the launch simulates");
            let every_run = simulate(&SimulationInput {
                reuse: Reuse::None,
                ..input.clone()
            })
            .expect("the launch simulates");
            assert_eq!(reused_runs(&every_run), 0, "{}", input.kernel);
            assert_eq!(every_run.counters, exact.counters, "{}", input.kernel);
            assert_eq!(every_run.memory, exact.memory, "{}", input.kernel);
            assert_eq!(every_run.lines, exact.lines, "{}", input.kernel);
            assert!(every_run.steps >= exact.steps, "{}", input.kernel);
            reused_by_default += reused_runs(&exact);
        }
        // Otherwise the comparison above would hold of two runs that reuse nothing alike.
        assert!(reused_by_default > 0);
    }

    #[test]
    fn a_launch_that_reuses_nothing_traces_the_same_accesses() {
        for input in lecture_launches() {
            // The last block of the grid and its second warp: a block that a default run may
            // not run itself, and a warp that may be shown alike to the first.
            let traced = SimulationInput {
                trace: Some(TraceRequest {
                    block: [input.grid.x - 1, input.grid.y - 1, 0],
                    warp: 1,
                }),
                ..input
            };
            let exact = simulate(&traced).expect("the launch simulates");
            let every_run = simulate(&SimulationInput {
                reuse: Reuse::None,
                ..traced.clone()
            })
            .expect("the launch simulates");
            assert!(exact.trace.is_some(), "{}", traced.kernel);
            assert_eq!(every_run.trace, exact.trace, "{}", traced.kernel);
            assert_eq!(every_run.counters, exact.counters, "{}", traced.kernel);
            assert_eq!(every_run.lines, exact.lines, "{}", traced.kernel);
        }
    }

    #[test]
    fn a_launch_that_reuses_nothing_over_every_block_runs_each_block() {
        let mut input = lecture_launches().swap_remove(2);
        input.reuse = Reuse::None;
        input.sampling = BlockSampling::All;
        let report = simulate(&input).expect("the launch simulates");
        assert_eq!(report.sampled_blocks.len(), 4);
        assert_eq!(reused_runs(&report), 0);
        assert!(report.sampled_blocks.iter().all(|block| block.scale == 1));
    }

    #[test]
    fn only_edge_class_sampling_with_exact_reuse_plans_any_reuse() {
        let input = SimulationInput::new(MATMUL, "mm_tiled", h100());
        let everything = ReusePlan {
            blocks_share_runs: true,
            warps_shown_alike: true,
            iterations_skipped: true,
        };
        assert_eq!(ReusePlan::of(&input, KernelOutput::NONE), everything);
        for (sampling, reuse) in [
            (BlockSampling::EdgeClasses, Reuse::None),
            (BlockSampling::EdgeClassesEachRun, Reuse::Exact),
            (BlockSampling::All, Reuse::Exact),
        ] {
            let plan = ReusePlan::of(
                &SimulationInput {
                    sampling,
                    reuse,
                    ..input.clone()
                },
                KernelOutput::NONE,
            );
            assert!(plan.reuses_nothing(), "{sampling:?} {reuse:?}");
        }
    }

    #[test]
    fn block_runs_are_not_shared_where_dram_rows_see_absolute_addresses() {
        let input = SimulationInput::new(MATMUL, "mm_tiled", g80());
        let plan = ReusePlan::of(&input, KernelOutput::NONE);
        assert!(!plan.blocks_share_runs);
        assert!(plan.warps_shown_alike && plan.iterations_skipped);
    }

    #[test]
    fn a_launch_with_the_sanitizer_on_reuses_nothing() {
        let mut input = SimulationInput::new(MATMUL, "mm_tiled", h100());
        input.sanitizer = crate::sanitizer::SanitizerConfig::ALL;
        assert!(ReusePlan::of(&input, KernelOutput::NONE).reuses_nothing());
    }

    #[test]
    fn a_kernel_that_prints_reads_the_clock_or_asserts_reuses_nothing() {
        let input = SimulationInput::new(MATMUL, "mm_tiled", h100());
        let output = KernelOutput {
            printf: false,
            needs_every_run: true,
        };
        assert!(ReusePlan::of(&input, output).reuses_nothing());
    }

    #[test]
    fn a_launch_file_without_the_setting_reads_as_exact_reuse() {
        let input = SimulationInput::new(MATMUL, "mm_tiled", h100());
        let mut json = serde_json::to_value(&input).expect("the input serializes");
        json.as_object_mut()
            .expect("an object")
            .remove("reuse")
            .expect("the field is written");
        let read: SimulationInput = serde_json::from_value(json).expect("the input reads");
        assert_eq!(read.reuse, Reuse::Exact);
        assert_eq!(read, input);
    }
}
