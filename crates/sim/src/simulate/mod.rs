//! Simulating a launch: a kernel's source and launch in, the counters Nsight Compute would show out.
//!
//! This ties the simulator together for one `kernel<<<grid, block, dyn_smem>>>(args...)` launch:
//!
//! 1. the source is preprocessed with the `-D` defines, parsed and checked (`kernel`);
//! 2. the launch's occupancy comes from `occupancy::calculate` with the kernel's static plus dynamic
//!    shared memory and the registers per thread nvcc chose (the CUDA occupancy API's calculation),
//!    capped by the kernel's `__launch_bounds__` (`occupancy::launch_bounds_registers`, which also
//!    refuses a block larger than they allow);
//! 3. one representative block per edge class of the grid is run warp by warp (`sampling`: the
//!    first, interior and last block along each dimension), its warp-level accesses pass through
//!    the compiler-effects pass (`compile_effects`: nvcc's fusion of consecutive aligned shared loads
//!    into 128-bit loads, as the H100 measurements show) and are counted (`counters`: bank analysis
//!    for shared memory, sectors for global memory);
//! 4. each class's counters are multiplied by the number of blocks in the class. Where the blocks
//!    of a class make the same accesses up to an address offset, as in every lecture kernel, the
//!    totals are exact; a kernel that branches on `blockIdx` in the interior of the grid is only
//!    approximated (choose `BlockSampling::All` to run every block);
//! 5. where `kernel::block_shift` proves the blocks alike up to address shifts, the traced block
//!    (if any) and the interior class run first, and a run stands for every class not yet run
//!    that `runs_alike` admits (shifts of whole 128-byte lines, or half a line more where the
//!    run's requests allow it, `TouchedRange::half_line_shift_safe`; shifted addresses in
//!    bounds; guards alike): the totals are those of running every class
//!    (`BlockSampling::EdgeClassesEachRun`) to the last digit, with fewer runs;
//! 6. within each block run, where `kernel::block_shift::analyze_warps` proves the warps alike up
//!    to moved addresses, one warp of each class runs (two where the proof leaves a move open;
//!    one more from each warp whose guards come out otherwise, `kernel::interp`'s `warps`) and
//!    the others' records are its records moved
//!    (`SampledBlock::warps_shown_alike`), on every device: the records are those of running
//!    every warp, so everything after the interpreter sees the same stream;
//! 7. within each warp run, where `kernel::block_shift::analyze_loop` proves a loop's iterations
//!    alike up to moved addresses, the warp runs an iteration and skips the ones after it whose
//!    guards come out alike, their records its records moved (`kernel::interp`'s `loops`,
//!    `SampledBlock::iterations_skipped`): again the records of a full run.
//!
//! The counters are named as Nsight Compute names them (Nsight Compute Kernel Profiling Guide,
//! "Metrics Reference"), so that `tests/reference.rs` can compare them with the H100 measurements in
//! `tests/reference/h100.json` key by key. Each record also feeds the timing model's memory
//! profile (`profile`: footprints per buffer, round trips, DRAM rows on cc 1.x), from which
//! `timing::predict` derives caches, DRAM bytes and time. No compiler effect other than load fusion
//! is modelled.
//!
//! Before anything runs, the grid and block are checked against the device's launch limits
//! (`Device::check_launch`), so every count derived from them fits in 64 bits; the block count is
//! computed with checked arithmetic all the same. Every simulation is bounded by a step budget
//! over all its blocks (each block costs at least one step), and every failure is a
//! `SimulationError`: a `Diagnostic` with line and column for the kernel, the launch limit or
//! occupancy limit the launch breaks, or the spent budget. Its messages are one printable line
//! (`kernel::span::one_line`) and neutral about the front end: the page and the command line
//! each say in their own words how to change a launch.
//!
//! Steps 5 to 7 run only where the launch's reuse plan allows them (`plan`: decided once from
//! the input; `Reuse::None` turns them all off, for a launch whose every warp and iteration
//! must run), and where they run, each gives the records of a full run.
//!
//! The work is split by responsibility: `input` and `report` hold the plain data in and out;
//! `plan` says what the launch may reuse; this module runs the steps above in order
//! (`simulate`); `block_classes` says which blocks stand for which (edge classes, strata, runs
//! shown alike); `counting` counts a record once the compiler effects have decided what is
//! executed; `extra_runs` holds the runs that count nothing (the traced block the sampling did
//! not run, the launch's repetition). Where one block's records go is layered, each module
//! importing only those below it: `iteration_log` and `warp_classes` hold what the iteration a
//! warp ran and each leader of warps shown alike made of their records; `profile_copies`
//! places the copies taken from them in the memory profile; `block_sink` holds the sink
//! (`BlockSink`) and a record's full pass through it;
//! `repeats` and `warp_copies` let the records of a skipped loop iteration and of a warp shown
//! alike take what the iteration run's or their leader's records made; and `record_sink_impl`
//! ties these together as the `RecordSink` the interpreter hands a block's records to.

mod block_classes;
mod block_sink;
mod counting;
mod extra_runs;
mod input;
mod iteration_log;
mod plan;
mod profile_copies;
mod record_sink_impl;
mod repeats;
mod report;
mod warp_classes;
mod warp_copies;

pub use input::{BlockSampling, Reuse, SimulationInput, DEFAULT_STEP_BUDGET};
pub use plan::{KernelOutput, ReusePlan};
pub use report::{SampledBlock, SimulationError, SimulationReport};

use crate::compile_effects::{
    fusible_loads, FusibleLoad, FusionSite, LoadFuser, LoadReuse, ReusedLoads,
};
use crate::counters::Counters;
use crate::kernel::block_shift::{Guard, ShiftedBuffer};
use crate::kernel::{self, Diagnostic, DiagnosticKind, Launch, Simulation, Span};
use crate::occupancy::{self, BlockResources, OccupancyReport};
use crate::profile::{BlockProfiler, ProfileBuilder, TouchedSectors};
use crate::sampling::{self, BlockClass};
use crate::trace::{LineTally, TraceRecorder};
use block_classes::{checked_product, every_block, position_of, runs_alike, varies_along_a_row};
use block_sink::BlockSink;
use counting::{Counting, SharedMeasures};
use extra_runs::{outside_the_launch, repeat_moves_on, trace_uncounted_block};
use iteration_log::IterationLog;
use profile_copies::ShapeCopies;
use warp_classes::MovedClass;

/// Simulates one launch: see the module documentation.
pub fn simulate(input: &SimulationInput) -> Result<SimulationReport, SimulationError> {
    match simulate_in_order(input) {
        Ok(report) => Ok(report),
        Err(Stop::Failed(error)) => Err(error),
        Err(Stop::RunEachClass) => simulate_each_class_run(input),
    }
}

/// Why the simulation stopped before its report: an error, or a launch whose reused runs cannot
/// settle an error or a strata check the way the classes' own order would.
enum Stop {
    Failed(SimulationError),
    RunEachClass,
}

impl From<SimulationError> for Stop {
    fn from(error: SimulationError) -> Stop {
        Stop::Failed(error)
    }
}

impl From<Diagnostic> for Stop {
    fn from(diagnostic: Diagnostic) -> Stop {
        Stop::Failed(SimulationError::Kernel(diagnostic))
    }
}

/// The launch simulated with every class's block run in the classes' own order
/// (`BlockSampling::EdgeClassesEachRun`): what a launch whose reused runs cannot settle an error
/// or a strata check the same way falls back to.
fn simulate_each_class_run(input: &SimulationInput) -> Result<SimulationReport, SimulationError> {
    simulate(&SimulationInput {
        sampling: BlockSampling::EdgeClassesEachRun,
        ..input.clone()
    })
}

/// The steps of the module documentation, in order.
fn simulate_in_order(input: &SimulationInput) -> Result<SimulationReport, Stop> {
    let grid = [input.grid.x, input.grid.y, input.grid.z];
    let block = [input.block.x, input.block.y, input.block.z];
    input
        .device
        .check_launch(grid, block)
        .map_err(SimulationError::BadLaunch)?;
    // Within the limits a grid has fewer than 2^63 blocks (2^31 x 2^16 x 2^16), and a block at
    // most 1024 threads; the products are checked all the same and would saturate, not wrap.
    let grid_blocks = checked_product(grid);
    let threads_per_block = u32::try_from(checked_product(block)).unwrap_or(u32::MAX);
    // The file is read as nvcc's device pass reads it for the preset.
    let defines = input
        .device
        .compute_capability
        .device_pass_defines(&input.defines);
    let mut unit = kernel::parse(&input.source, &defines)?;
    // A kernel template runs instantiated, under its canonical name, however it was written.
    let kernel_name = kernel::templates::instantiate(&mut unit, &input.kernel)?;
    if kernel_name != input.kernel {
        return simulate_in_order(&SimulationInput {
            kernel: kernel_name,
            ..input.clone()
        });
    }
    let program = kernel::sema::check(&unit)?;
    let output = check_capability(input, &program)?;
    let mut sim = Simulation::new(&program, &input.kernel, &launch_of(input), input.seed)?;
    sim.sanitize(input.sanitizer);
    let shared_bytes_per_block = sim.shared_bytes_per_block();
    let layout = sim.global_objects();
    let mut profiler = BlockProfiler::new(&input.device, layout.clone());
    if let Some(kernel) = program.kernel_index(&input.kernel) {
        profiler.set_uniform_atomic_sites(kernel::uniformity::uniform_atomic_sites(
            &program.functions[kernel],
        ));
    }
    let profile = ProfileBuilder::new(&input.device, &layout);
    let regs_per_thread = launch_registers(input, &program, threads_per_block)?;
    let occupancy = occupancy_of(
        input,
        threads_per_block,
        shared_bytes_per_block,
        regs_per_thread,
    )?;
    let plan = ReusePlan::of(input, output);
    let shifted = shifted_blocks(plan, &mut sim, &mut profiler);
    let fusible = fusible_loads(&unit, &program);
    show_warps_and_iterations_alike(plan, input, &mut sim, &fusible);
    let load_classes = kernel::issue::load_classes(&program.functions);
    let mut runs = BlockRuns {
        input,
        grid,
        shifted,
        profiler,
        profile,
        fuser: input
            .compile
            .fuse_shared_loads
            .then(|| LoadFuser::new(fusible.clone())),
        reuse: input
            .compile
            .reuse_loaded_values
            .then(|| LoadReuse::new(load_classes.clone())),
        fused: Vec::new(),
        totals: Counters::default(),
        lines: LineTally::default(),
        shared_measures: SharedMeasures::default(),
        spare_classes: Vec::new(),
        spare_logs: Vec::new(),
        trace: input.trace.map(TraceRecorder::new),
        traced_block_ran: false,
        sampled_blocks: Vec::new(),
        steps: 0,
        strata: Vec::new(),
        issued_by_block: Vec::new(),
        first_block: None,
        deferred_checks: Vec::new(),
    };
    if output.printf {
        sim.collect_printf();
    }
    let mut classes = class_order(input, grid, runs.shifted.as_ref());
    while let Some((class, from_strata)) = runs
        .strata
        .pop()
        .map(|stratum| (stratum, true))
        .or_else(|| classes.next().map(|class| (class, false)))
    {
        runs.run_class(&mut sim, &program, class, from_strata, &mut classes)?;
    }
    // Had a class's block issued other instructions than both ends of its row, the classes' own
    // order would have split it into strata: run them so.
    if runs
        .deferred_checks
        .iter()
        .any(|(class, issued)| varies_along_a_row(class, *issued, &runs.issued_by_block, grid))
    {
        return Err(Stop::RunEachClass);
    }
    // Only the counted runs print: the runs for a trace or a repeat below do not.
    let printf = sim.take_printf();
    let BlockRuns {
        totals,
        lines,
        trace,
        traced_block_ran,
        sampled_blocks,
        mut steps,
        first_block,
        fused,
        profile,
        ..
    } = runs;
    let trace = trace.map(|mut recorder| {
        let problem = outside_the_launch(recorder.request(), input).or_else(|| {
            let remaining = input.step_budget.saturating_sub(steps);
            (!traced_block_ran)
                .then(|| {
                    trace_uncounted_block(
                        &mut sim,
                        input,
                        remaining,
                        &mut recorder,
                        &load_classes,
                        &fusible,
                    )
                })
                .flatten()
        });
        recorder.finish(layout.clone(), problem)
    });
    let mut memory = profile.finish();
    if let Some((block, first_sectors)) = first_block {
        memory.repeat_moves_on =
            repeat_moves_on(&mut sim, input, &layout, block, &first_sectors, &mut steps);
    }
    Ok(SimulationReport {
        kernel: input.kernel.clone(),
        counters: totals,
        occupancy,
        sampled_blocks,
        grid_blocks,
        warp_instructions: totals.warp_instructions,
        shared_bytes_per_block,
        fused_loads: fused,
        compile: input.compile,
        steps,
        memory,
        lines: lines.into_lines(),
        trace,
        device: input.device.clone(),
        launch_bounds_regs: (regs_per_thread != input.regs).then_some(regs_per_thread),
        sanitizer: sim.sanitizer_report().cloned(),
        printf,
    })
}

/// The registers per thread the launch is counted with: `SimulationInput::regs`, capped by the
/// kernel's `__launch_bounds__` (`occupancy::launch_bounds_registers`), or why the bounds refuse
/// the launch.
fn launch_registers(
    input: &SimulationInput,
    program: &kernel::Program,
    threads_per_block: u32,
) -> Result<u32, SimulationError> {
    let bounds = program
        .kernel_index(&input.kernel)
        .and_then(|index| program.functions[index].launch_bounds);
    match bounds {
        Some(bounds) => {
            occupancy::launch_bounds_registers(&input.device, bounds, threads_per_block, input.regs)
                .map_err(SimulationError::DoesNotLaunch)
        }
        None => Ok(input.regs),
    }
}

/// Refuses a kernel that uses a feature the device's compute capability lacks (`capability`).
fn check_capability(
    input: &SimulationInput,
    program: &kernel::Program,
) -> Result<KernelOutput, SimulationError> {
    let Some(kernel) = program.kernel_index(&input.kernel) else {
        return Ok(KernelOutput::NONE);
    };
    let uses = crate::capability::features_used(program, kernel);
    match crate::capability::first_unsupported(
        &uses,
        input.device.id,
        input.device.compute_capability,
    ) {
        Some(unsupported) => Err(SimulationError::Unsupported(unsupported)),
        None => Ok(KernelOutput::of(&uses)),
    }
}

/// The interpreter's launch: the input's grid, block, arguments and buffers.
fn launch_of(input: &SimulationInput) -> Launch {
    Launch {
        grid: input.grid,
        block: input.block,
        dyn_smem: input.dyn_smem,
        args: input.args.clone(),
        buffers: input.buffers.clone(),
        fills: input.fills.clone(),
        pointers: input.pointers.clone(),
    }
}

/// The launch's occupancy (`occupancy::calculate`), or why it does not launch.
fn occupancy_of(
    input: &SimulationInput,
    threads_per_block: u32,
    shared_bytes_per_block: u64,
    regs_per_thread: u32,
) -> Result<OccupancyReport, SimulationError> {
    occupancy::calculate(
        &input.device,
        BlockResources {
            threads_per_block,
            regs_per_thread,
            smem_per_block: u32::try_from(shared_bytes_per_block).unwrap_or(u32::MAX),
        },
    )
    .map_err(SimulationError::DoesNotLaunch)
}

/// Blocks that provably do the same work at addresses shifted by whole lines (sectors, lines,
/// banks and DRAM atoms then fall alike) make the same counters and profile: such a class reuses
/// another block's run. The buffers' shifts per block and the guards, where the plan lets block
/// runs be shared (`ReusePlan::blocks_share_runs`) and the proof holds.
fn shifted_blocks(
    plan: ReusePlan,
    sim: &mut Simulation<'_>,
    profiler: &mut BlockProfiler,
) -> Option<(Vec<ShiftedBuffer>, Vec<Guard>)> {
    let shifted = plan
        .blocks_share_runs
        .then(|| sim.shifted_buffers())
        .flatten();
    if shifted.is_some() {
        profiler.watch_half_lines();
    }
    shifted
}

/// Warps that provably do the same work at moved addresses: the first of each class runs and the
/// others' records are its own, moved (`kernel::interp` `warps`). The records are those a full
/// run makes, so this holds on every device. Loops whose iterations provably do the same work at
/// moved addresses: a warp runs an iteration and the records of the ones after it are its own,
/// moved (`kernel::interp` `loops`). These too are the records a full run makes. Each only
/// where the plan allows it (`ReusePlan::warps_shown_alike`, `ReusePlan::iterations_skipped`).
fn show_warps_and_iterations_alike(
    plan: ReusePlan,
    input: &SimulationInput,
    sim: &mut Simulation<'_>,
    fusible: &[FusibleLoad],
) {
    if plan.warps_shown_alike {
        sim.show_warps_alike();
    }
    if !plan.iterations_skipped {
        return;
    }
    // A fused read moves by whole fused loads from one skipped iteration to the next, so that
    // its reads pair up alike (`effects_move_alike`).
    let move_units: Vec<(Span, u32)> = if input.compile.fuse_shared_loads {
        fusible
            .iter()
            .map(|site| (site.span, site.max_width))
            .collect()
    } else {
        Vec::new()
    };
    sim.summarise_loops(&move_units);
}

/// The classes of blocks to run, in the order they run. Every block is its own class under
/// `All`; they are made one at a time, as the budget allows, never all at once.
fn class_order(
    input: &SimulationInput,
    grid: [u32; 3],
    shifted: Option<&(Vec<ShiftedBuffer>, Vec<Guard>)>,
) -> Box<dyn Iterator<Item = BlockClass>> {
    match input.sampling {
        BlockSampling::EdgeClasses | BlockSampling::EdgeClassesEachRun => {
            let mut list = sampling::classes(grid);
            if shifted.is_some() {
                // The interior class (the last) runs first, so that the others can reuse its
                // run; before it, the block the trace asks for (the page's per-line view), which
                // must run anyway and may stand for classes too: a class of no blocks of its
                // own, which the trace's block alone represents.
                list.rotate_right(1);
                if let Some(block) = input
                    .trace
                    .map(|request| request.block)
                    .filter(|block| (0..3).all(|d| block[d] < grid[d].max(1)))
                {
                    list.insert(
                        0,
                        BlockClass {
                            position: [0, 1, 2].map(|d| position_of(block[d], grid[d])),
                            representative: block,
                            n_blocks: 0,
                        },
                    );
                }
            }
            Box::new(list.into_iter())
        }
        BlockSampling::All => Box::new(every_block(grid)),
    }
}

/// What the block runs of one launch add up to, as they come, with what each run needs.
struct BlockRuns<'a> {
    input: &'a SimulationInput,
    grid: [u32; 3],
    /// The buffers' shifts per block and the guards, where blocks may reuse each other's runs
    /// (`shifted_blocks`).
    shifted: Option<(Vec<ShiftedBuffer>, Vec<Guard>)>,
    profiler: BlockProfiler,
    profile: ProfileBuilder,
    fuser: Option<LoadFuser>,
    reuse: Option<LoadReuse>,
    fused: Vec<FusionSite>,
    totals: Counters,
    lines: LineTally,
    shared_measures: SharedMeasures,
    spare_classes: Vec<MovedClass>,
    /// The warps' iteration logs of the block before, whose vectors the next block fills again
    /// instead of growing anew (a matmul's warp logs some 70 records of 600 bytes).
    spare_logs: Vec<IterationLog>,
    trace: Option<TraceRecorder>,
    traced_block_ran: bool,
    sampled_blocks: Vec<SampledBlock>,
    steps: u64,
    /// The strata of a class whose blocks do not work alike (`sampling::strata`), run after it.
    strata: Vec<BlockClass>,
    issued_by_block: Vec<([u32; 3], u64)>,
    /// The first block run and the global sectors it touched: the launch's repetition is checked
    /// against them (`repeat_moves_on`).
    first_block: Option<([u32; 3], TouchedSectors)>,
    /// With runs reused, the classes run out of their own order: whether a class with an
    /// interior position works like the ends of its rows (the strata check) is known only once
    /// every class has run or been shown alike. Each such class, with what it issued.
    deferred_checks: Vec<(BlockClass, u64)>,
}

impl BlockRuns<'_> {
    /// Runs `class`'s block and adds what it counts, scaled to the blocks it stands for: its
    /// own class's (or stratum's) and those of the classes still to run (`classes`) that it is
    /// shown to do the work of.
    fn run_class(
        &mut self,
        sim: &mut Simulation<'_>,
        program: &kernel::Program,
        class: BlockClass,
        from_strata: bool,
        classes: &mut Box<dyn Iterator<Item = BlockClass>>,
    ) -> Result<(), Stop> {
        let input = self.input;
        self.traced_block_ran |= input
            .trace
            .is_some_and(|request| request.block == class.representative);
        let mut sink = BlockSink {
            counting: Counting {
                device: &input.device,
                counters: Counters::default(),
                lines: &mut self.lines,
                trace: self.trace.as_mut(),
                shared_measures: &mut self.shared_measures,
            },
            reuse: self.reuse.as_mut(),
            fuser: self.fuser.as_mut(),
            profiler: &mut self.profiler,
            moved: None,
            spare_classes: &mut self.spare_classes,
            iterations: std::mem::take(&mut self.spare_logs),
            tallies: (Vec::new(), Vec::new()),
            shapes: ShapeCopies::default(),
            nested: None,
        };
        // The interpreter stops a block that runs past what is left of the budget, and the
        // blocks' sum is checked after each block, so the whole run is bounded by the budget. A
        // block counts at least one step, so that even empty blocks cannot run without end.
        let remaining = input.step_budget.saturating_sub(self.steps);
        let stats = match sim.run_block_into(class.representative, remaining, &mut sink) {
            Ok(stats) => stats,
            // The interpreter only knows what was left of the budget; the user set the whole of
            // it, so the error names that, with the place the block had reached.
            Err(diagnostic) if diagnostic.kind == DiagnosticKind::StepBudget => {
                return Err(Stop::Failed(SimulationError::StepBudget {
                    steps: input.step_budget,
                    budget: input.step_budget,
                    span: diagnostic.span,
                }));
            }
            // The blocks ran in another order to reuse runs: the error must be the one of the
            // first failing block in the classes' own order, so they run again so.
            Err(_) if self.shifted.is_some() => return Err(Stop::RunEachClass),
            Err(diagnostic) => return Err(Stop::Failed(SimulationError::Kernel(diagnostic))),
        };
        sink.finish_moved_warps();
        let mut weight = class.n_blocks;
        self.issued_by_block
            .push((class.representative, stats.issued_instructions));
        if self.shifted.is_some() {
            if class.n_blocks > 0 {
                self.deferred_checks
                    .push((class.clone(), stats.issued_instructions));
            }
        } else if !from_strata && input.sampling != BlockSampling::All {
            weight = split_into_strata(
                &class,
                stats.issued_instructions,
                (&self.issued_by_block, self.grid),
                &mut self.strata,
            );
        }
        // A block run may stand for the classes not yet run (the interior one, run first, for
        // most): where it touched each buffer decides which. A class whose shift from it is not a
        // whole number of lines (nor half a line more, where the block's requests allow it) may
        // be from a later one.
        let ranges =
            (self.shifted.is_some() && !from_strata).then(|| sink.profiler.touched_sector_ranges());
        let BlockSink {
            mut counting,
            fuser: block_fuser,
            reuse: block_reuse,
            mut iterations,
            ..
        } = sink;
        // The next block's warps begin their iterations afresh (`iteration_begins`).
        for log in &mut iterations {
            log.logging = false;
            log.reusable = false;
        }
        self.spare_logs = iterations;
        // The classes whose blocks do this one's work at shifted addresses count with it.
        let mut reused_for = Vec::new();
        // The class the run is listed as: its own, or for the trace's block (a class of no blocks
        // of its own), the class of that block if shown alike, else the first shown alike.
        let mut listed_as = class.position;
        if let (Some((buffers, guards)), Some(ranges)) = (&self.shifted, ranges) {
            let (alike, differ): (Vec<BlockClass>, Vec<BlockClass>) = classes.partition(|other| {
                runs_alike(
                    (buffers, guards),
                    &ranges,
                    sim.guard_ranges(),
                    class.representative,
                    other.representative,
                )
            });
            *classes = Box::new(differ.into_iter());
            let own = if class.n_blocks > 0 {
                None
            } else {
                alike
                    .iter()
                    .position(|other| other.position == class.position)
                    .or((!alike.is_empty()).then_some(0))
            };
            for (k, other) in alike.into_iter().enumerate() {
                weight += other.n_blocks;
                if Some(k) == own {
                    listed_as = other.position;
                } else {
                    reused_for.push(other.representative);
                }
                // Alike, so it issues as many instructions: the strata checks find it as if it
                // had run.
                self.issued_by_block
                    .push((other.representative, stats.issued_instructions));
                self.deferred_checks
                    .push((other, stats.issued_instructions));
            }
        }
        // The instructions the fused loads replaced, and the loads not issued again, are no
        // longer executed.
        let reused = block_reuse.map_or_else(ReusedLoads::default, LoadReuse::take_reused);
        let mut removed = reused.instructions;
        if let Some(block_fuser) = block_fuser {
            block_fuser.finish(&mut |r| {
                counting.count(r);
            });
            removed += add_fused_sites(block_fuser, weight, &mut self.fused);
        }
        let mut counters = counting.counters;
        // Only a launch whose first block's addresses followed loaded data is run again: the
        // sectors are kept for it alone, as a large block touches millions.
        if self.sampled_blocks.is_empty() && self.profiler.data_steered() {
            self.first_block = Some((class.representative, self.profiler.touched_sectors()));
        }
        self.profile.add_block(&mut self.profiler, weight as f64);
        self.lines.finish_block(weight as f64);
        add_instruction_counts(&mut counters, &stats, reused, removed, input);
        self.totals.add_scaled(&counters, weight as f64);
        self.steps = self.steps.saturating_add(stats.steps.max(1));
        if self.steps > input.step_budget {
            let span = program
                .kernel(&input.kernel)
                .map(|function| function.span)
                .unwrap_or_default();
            return Err(Stop::Failed(SimulationError::StepBudget {
                steps: self.steps,
                budget: input.step_budget,
                span,
            }));
        }
        if weight > 0 {
            self.sampled_blocks.push(SampledBlock {
                block: class.representative,
                position: listed_as,
                scale: weight,
                reused_for,
                counters,
                steps: stats.steps,
                warps_shown_alike: stats.warps_shown_alike,
                iterations_skipped: stats.iterations_skipped,
            });
        }
        Ok(())
    }
}

/// An interior block that issues other instructions than both the first and the last block of
/// its row (along a dimension it is interior in) shows work that changes across the grid: it
/// speaks only for the blocks near it, its class is split into strata (pushed onto `strata`),
/// and it counts for its own, whose number is returned (the class's where it is not split). Both
/// ends have run already (`sampling::classes` lists them first); a kernel whose ends alone differ
/// (a bounds check, `i > 0`) is left as it is.
fn split_into_strata(
    class: &BlockClass,
    issued: u64,
    (issued_by_block, grid): (&[([u32; 3], u64)], [u32; 3]),
    strata: &mut Vec<BlockClass>,
) -> u64 {
    let mut weight = class.n_blocks;
    if varies_along_a_row(class, issued, issued_by_block, grid) {
        for stratum in sampling::strata(class, grid) {
            if stratum.representative == class.representative {
                weight = stratum.n_blocks;
            } else {
                strata.push(stratum);
            }
        }
    }
    weight
}

/// Adds the block's fused reads (`LoadFuser::tally`), scaled by the `weight` of blocks it stands
/// for, to the launch's `fused` sites, and says how many loads the fused ones replaced. A run
/// that stands for no block (the trace's, shown alike to no class) adds no fused site, so that
/// the sites keep the order the first counted run finds them in.
fn add_fused_sites(block_fuser: &mut LoadFuser, weight: u64, fused: &mut Vec<FusionSite>) -> u64 {
    let mut removed = 0;
    let scale = weight as f64;
    for (site, loads, instructions, widest) in block_fuser.tally().filter(|_| weight > 0) {
        removed += loads.saturating_sub(instructions);
        if loads == 0 {
            continue;
        }
        match fused.iter_mut().find(|f| f.span == site.span) {
            Some(entry) => {
                entry.loads_as_written += loads as f64 * scale;
                entry.loads_as_compiled += instructions as f64 * scale;
                entry.widest_bytes = entry.widest_bytes.max(widest);
            }
            None => fused.push(FusionSite {
                span: site.span,
                array: site.array.clone(),
                loads_as_written: loads as f64 * scale,
                loads_as_compiled: instructions as f64 * scale,
                widest_bytes: widest,
            }),
        }
    }
    block_fuser.reset_tally();
    removed
}

/// Sets the block's instruction counters from what the interpreter issued (`stats`), less the
/// loads the compiled code reuses (`reused`) and the instructions fusion and reuse `removed`,
/// plus the predicated-off instructions of if-conversion where the compile effects model it.
fn add_instruction_counts(
    counters: &mut Counters,
    stats: &kernel::BlockStats,
    reused: ReusedLoads,
    removed: u64,
    input: &SimulationInput,
) {
    counters.fp32_flops = stats.flops as f64;
    counters.warp_instructions = stats.warp_instructions.saturating_sub(removed) as f64;
    counters.fp32_issued_flops = stats.fp32_issued_flops as f64;
    counters.sfu_instructions = stats.sfu_instructions as f64;
    counters.alu_instructions =
        stats.alu_instructions as f64 / f64::from(kernel::issue::ISSUE_SCALE);
    counters.warp_unit_passes = stats.warp_unit_passes as f64;
    counters.barrier_warp_instructions = stats.barrier_warp_instructions as f64;
    let scale = f64::from(kernel::issue::ISSUE_SCALE);
    counters.inst_executed =
        (stats.issued_instructions as f64 / scale - reused.instructions as f64).max(0.0);
    counters.thread_inst_executed =
        (stats.thread_issued_instructions as f64 / scale - reused.lanes as f64).max(0.0);
    if input.compile.if_conversion {
        let off = stats.predicated_off;
        let issued = f64::from(off.issue) / scale;
        counters.inst_executed += issued;
        counters.predicated_off_warp_instructions = issued;
        counters.thread_inst_executed += stats.predicated_off_threads as f64 / scale;
        counters.shared_ld_instructions += f64::from(off.shared_loads);
        counters.shared_st_instructions += f64::from(off.shared_stores);
    }
}

#[cfg(test)]
mod tests {
    use super::{simulate, BlockSampling, SimulationError, SimulationInput, SimulationReport};
    use crate::compile_effects::CompileEffects;
    use crate::device::{g80, h100, Axis, DeviceId, LaunchError, LaunchPart};
    use crate::kernel::limits::MAX_MESSAGE_CHARS;
    use crate::kernel::{Diagnostic, DiagnosticKind, Dim3, MemoryObject, Span, Value};
    use crate::lesson_kernels::{ADJ_DIFF, BANKS, MATMUL};
    use crate::occupancy::OccupancyError;
    use crate::sampling::{self, EdgePosition};

    /// A tiled matmul of `n` x `n` with tiles of `tile` and the given padding, on H100.
    fn matmul(
        kernel: &str,
        n: u32,
        tile: u32,
        pad: u32,
        compile: CompileEffects,
    ) -> SimulationInput {
        let mut input = SimulationInput::new(MATMUL, kernel, h100());
        input.defines = vec![
            ("TILE_WIDTH".to_string(), tile.to_string()),
            ("PAD".to_string(), pad.to_string()),
        ];
        input.grid = Dim3::new(n / tile, n / tile, 1);
        input.block = Dim3::new(tile, tile, 1);
        input.regs = 32;
        input.args = vec![("n".to_string(), Value::Int(i64::from(n)))];
        let bytes = u64::from(n) * u64::from(n) * 4;
        input.buffers = ["a", "b", "c"]
            .iter()
            .map(|b| (b.to_string(), bytes))
            .collect();
        input.compile = compile;
        input
    }

    /// Simulates `input` and compares the named counters with `expected`.
    fn check(input: &SimulationInput, expected: &[(&str, f64)]) -> SimulationReport {
        let report = simulate(input).expect("the launch simulates");
        for (name, value) in expected {
            assert_eq!(report.counters.get(name), Some(*value), "{name}");
        }
        report
    }

    #[test]
    fn tiled_matmul_fuses_row_reads_into_128_bit_loads() {
        // n = 64, TILE 16: 16 blocks of 8 warps, 4 tiles each; per tile a warp reads sa[ty][k] 16
        // times (4 LDS.128 as compiled) and sb[k][tx] 16 times.
        let warp_tiles = 16.0 * 8.0 * 4.0;
        let compiled = check(
            &matmul("mm_tiled", 64, 16, 0, CompileEffects::AS_COMPILED),
            &[
                ("smsp__inst_executed_op_shared_ld.sum", warp_tiles * 20.0),
                // Each LDS.128 reads two rows' 16 bytes in two half-warp wavefronts; sb is one.
                (
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                    warp_tiles * 24.0,
                ),
                (
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                    0.0,
                ),
            ],
        );
        assert_eq!(compiled.fused_loads.len(), 1);
        assert_eq!(compiled.fused_loads[0].widest_bytes, 16);
        assert_eq!(compiled.fused_loads[0].loads_as_written, warp_tiles * 16.0);
        assert_eq!(compiled.fused_loads[0].loads_as_compiled, warp_tiles * 4.0);
        let written = check(
            &matmul("mm_tiled", 64, 16, 0, CompileEffects::AS_WRITTEN),
            &[("smsp__inst_executed_op_shared_ld.sum", warp_tiles * 32.0)],
        );
        assert!(written.fused_loads.is_empty());
        assert_eq!(
            written.warp_instructions - compiled.warp_instructions,
            warp_tiles * 12.0
        );
    }

    #[test]
    fn padding_the_tiles_breaks_the_fusion() {
        let warp_tiles = 16.0 * 8.0 * 4.0;
        check(
            &matmul("mm_tiled", 64, 16, 1, CompileEffects::AS_COMPILED),
            &[("smsp__inst_executed_op_shared_ld.sum", warp_tiles * 32.0)],
        );
        // TILE 32 with PAD 1: a warp is one row, and every fourth row happens to start 16-byte
        // aligned; nvcc cannot know that, so no warp fuses.
        check(
            &matmul("mm_tiled", 64, 32, 1, CompileEffects::AS_COMPILED),
            &[(
                "smsp__inst_executed_op_shared_ld.sum",
                4.0 * 32.0 * 2.0 * 64.0,
            )],
        );
    }

    #[test]
    fn sampled_totals_equal_the_full_grid_where_blocks_are_alike() {
        let mut input = SimulationInput::new(ADJ_DIFF, "adj_diff_shared", h100());
        input.grid = Dim3::new(9, 1, 1);
        input.block = Dim3::new(64, 1, 1);
        input.dyn_smem = 256;
        // n cuts the last block short, so all three classes differ.
        input.args = vec![("n".to_string(), Value::Int(9 * 64 - 20))];
        input.buffers = vec![
            ("result".to_string(), 4 * 576),
            ("input".to_string(), 4 * 576),
        ];
        let sampled = simulate(&input).expect("the launch simulates");
        input.sampling = BlockSampling::All;
        let full = simulate(&input).expect("the launch simulates");
        // Both ends issue other instructions than the interior (lane 0 of the first block skips
        // its load, the last block is short), so the sampling cannot tell the interior alike:
        // it splits it into strata, here one block each, and the totals stay the full grid's.
        assert_eq!(sampled.sampled_blocks.len(), 9);
        assert_eq!(full.sampled_blocks.len(), 9);
        assert_eq!(sampled.counters, full.counters);
        // With a whole last block only the first differs, and three classes speak for nine
        // blocks; the last is shown alike to the interior (`kernel::block_shift`: its `i < n`
        // holds in every lane 3 blocks on), so two blocks run.
        input.sampling = BlockSampling::EdgeClasses;
        input.args = vec![("n".to_string(), Value::Int(9 * 64))];
        let sampled = simulate(&input).expect("the launch simulates");
        input.sampling = BlockSampling::All;
        let full = simulate(&input).expect("the launch simulates");
        assert_eq!(sampled.sampled_blocks.len(), 2);
        assert_eq!(sampled.sampled_blocks[0].reused_for, [[8, 0, 0]]);
        assert_eq!(sampled.counters, full.counters);

        let matmul_sampled = simulate(&matmul("mm_tiled", 96, 16, 0, CompileEffects::AS_COMPILED))
            .expect("the launch simulates");
        let mut all = matmul("mm_tiled", 96, 16, 0, CompileEffects::AS_COMPILED);
        all.sampling = BlockSampling::All;
        let matmul_full = simulate(&all).expect("the launch simulates");
        // The tiled matmul's blocks are alike at shifted addresses (`kernel::block_shift`): on a
        // 6 x 6 grid, `b` and `c` of the first column lie 3 x 64 bytes from the interior block's,
        // whole lines and half a line, and each of its requests fills half-lines apart, so the
        // interior block's run stands for all nine classes.
        let classes_run = |report: &SimulationReport| {
            report
                .sampled_blocks
                .iter()
                .map(|b| (b.position, 1 + b.reused_for.len()))
                .collect::<Vec<_>>()
        };
        use EdgePosition::{Interior, Only};
        assert_eq!(
            classes_run(&matmul_sampled),
            [([Interior, Interior, Only], 9)]
        );
        let mut each = matmul("mm_tiled", 96, 16, 0, CompileEffects::AS_COMPILED);
        each.sampling = BlockSampling::EdgeClassesEachRun;
        let matmul_each = simulate(&each).expect("the launch simulates");
        assert_eq!(matmul_each.sampled_blocks.len(), 9);
        assert_eq!(matmul_sampled.counters, matmul_each.counters);
        assert_eq!(matmul_sampled.memory, matmul_each.memory);
        assert_eq!(matmul_sampled.counters, matmul_full.counters);
        assert_eq!(matmul_sampled.fused_loads, matmul_full.fused_loads);
    }

    #[test]
    fn work_that_grows_with_the_block_index_is_sampled_in_strata_close_to_the_full_grid() {
        // A triangular loop: block b runs b iterations, so the middle block speaks for none of
        // the others; the strata's 16 runs of blocks follow the growth (within 1%).
        const TRIANGLE: &str = "__global__ void tri(float* out) {\n\
            float a = 0.0f;\n\
            for (int k = 0; k < blockIdx.x; ++k) a = a * 0.5f + 1.0f;\n\
            out[blockIdx.x * blockDim.x + threadIdx.x] = a;\n}\n";
        let mut input = SimulationInput::new(TRIANGLE, "tri", h100());
        input.grid = Dim3::new(1000, 1, 1);
        input.block = Dim3::new(64, 1, 1);
        input.buffers = vec![("out".to_string(), 4 * 64_000)];
        let sampled = simulate(&input).expect("the launch simulates");
        input.sampling = BlockSampling::All;
        let full = simulate(&input).expect("the launch simulates");
        assert_eq!(
            sampled.sampled_blocks.len(),
            2 + sampling::MAX_STRATA as usize
        );
        let flops = |report: &SimulationReport| report.counters.fp32_flops;
        let off = flops(&sampled) / flops(&full) - 1.0;
        assert!(off.abs() < 0.01, "{off}");
    }

    #[test]
    fn adjacent_difference_reads_one_extra_sector_per_warp_except_at_the_start() {
        // Seed 000: input[i] and input[i - 1]; lane 0 of the first block reads nothing.
        let mut input = SimulationInput::new(ADJ_DIFF, "adj_diff_naive", h100());
        input.grid = Dim3::new(4, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.args = vec![("n".to_string(), Value::Int(1024))];
        input.buffers = vec![("result".to_string(), 4096), ("input".to_string(), 4096)];
        check(
            &input,
            &[
                ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 64.0),
                (
                    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                    32.0 * 9.0 - 1.0,
                ),
                ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 32.0 * 4.0),
            ],
        );
    }

    #[test]
    fn a_stride_of_four_is_not_fused_because_its_trip_count_is_a_parameter() {
        let mut input = SimulationInput::new(BANKS, "smem_stride", h100());
        input.grid = Dim3::new(2, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.args = vec![
            ("stride".to_string(), Value::Int(4)),
            ("iters".to_string(), Value::Int(8)),
        ];
        input.buffers = vec![("out".to_string(), 2048)];
        check(
            &input,
            &[
                ("smsp__inst_executed_op_shared_ld.sum", 2.0 * 8.0 * 8.0),
                (
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                    2.0 * 8.0 * 8.0 * 4.0,
                ),
                (
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                    2.0 * 8.0 * 8.0 * 3.0,
                ),
            ],
        );
    }

    #[test]
    fn the_report_serializes_with_nsight_names_and_block_classes() {
        let report = simulate(&matmul("mm_tiled", 64, 16, 0, CompileEffects::AS_COMPILED))
            .expect("the launch simulates");
        let json = serde_json::to_value(&report).expect("the report serializes");
        assert!(json["counters"]["smsp__inst_executed_op_shared_ld.sum"].is_number());
        // The interior block runs first and stands for the classes shown alike with it.
        assert_eq!(json["sampled_blocks"][0]["position"][0], "interior");
        assert!(json["sampled_blocks"][0]["reused_for"].is_array());
        assert_eq!(json["occupancy"]["limit_warps"], 8);
    }

    /// The error `simulate` gives for `input`, as a front end shows it.
    fn check_error(input: &SimulationInput, expected: &str) {
        let error = simulate(input).expect_err("the launch fails");
        assert_eq!(error.to_string(), expected);
    }

    #[test]
    fn tile_32_does_not_launch_on_g80() {
        let mut input = matmul("mm_tiled", 64, 32, 0, CompileEffects::AS_COMPILED);
        input.device = g80();
        input.regs = 10;
        assert_eq!(
            simulate(&input),
            Err(SimulationError::BadLaunch(LaunchError::TooManyThreads {
                block: [32, 32, 1],
                threads: 1024,
                max: 512,
                device: DeviceId::G80,
            }))
        );
        check_error(
            &input,
            "a block of 32x32x1 is 1024 threads; the G80 allows at most 512 per block",
        );
    }

    #[test]
    fn a_launch_beyond_the_device_limits_is_refused_before_anything_runs() {
        let mut input = matmul("mm_tiled", 64, 16, 0, CompileEffects::AS_COMPILED);
        input.grid = Dim3::new(4, 70_000, 1);
        check_error(&input, "grid y is 70000; the H100 allows at most 65535");
        input.grid = Dim3::new(u32::MAX, u32::MAX, u32::MAX);
        check_error(
            &input,
            "grid x is 4294967295; the H100 allows at most 2147483647",
        );
        input.grid = Dim3::new(4, 4, 1);
        input.block = Dim3::new(16, 16, 0);
        check_error(
            &input,
            "block z is 0; every grid and block extent must be at least 1",
        );
        // Checked before the source is read: a kernel that does not compile is not reached.
        input.source = "__global__ void mm_tiled( {".to_string();
        input.block = Dim3::new(16, 16, 65);
        check_error(&input, "block z is 65; the H100 allows at most 64");
    }

    #[test]
    fn the_largest_h100_grid_counts_its_blocks_without_wrapping() {
        let mut input =
            SimulationInput::new("__global__ void f(int* a) { a[0] = 1; }", "f", h100());
        input.grid = Dim3::new(2_147_483_647, 65_535, 65_535);
        input.buffers = vec![("a".to_string(), 4)];
        let report = simulate(&input).expect("the largest grid launches");
        let blocks: u64 = 2_147_483_647 * 65_535 * 65_535;
        assert_eq!(report.grid_blocks, blocks);
        // Every block stores to the same word: one run stands for all 27 classes.
        assert_eq!(report.sampled_blocks.len(), 1);
        assert_eq!(report.sampled_blocks[0].reused_for.len(), 26);
        // One store request per block, summed in floating point over the whole grid.
        assert_eq!(
            report
                .counters
                .get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
            Some(blocks as f64)
        );
    }

    #[test]
    fn running_every_block_of_a_huge_grid_stops_at_the_budget_without_listing_them_first() {
        let mut input =
            SimulationInput::new("__global__ void f(int* a) { a[0] = 1; }", "f", h100());
        input.grid = Dim3::new(2_147_483_647, 65_535, 65_535);
        input.buffers = vec![("a".to_string(), 4)];
        input.sampling = BlockSampling::All;
        input.step_budget = 1000;
        let error = simulate(&input).expect_err("the budget runs out");
        assert!(error.message().contains("step budget"), "{error}");
    }

    #[test]
    fn an_error_message_is_one_printable_line() {
        let mut input =
            SimulationInput::new("__global__ void f(int* a) { a[0] = 1; }", "f", h100());
        input.kernel = format!("g\n\u{1b}[31m{}", "x".repeat(1 << 20));
        let message = simulate(&input)
            .expect_err("there is no such kernel")
            .to_string();
        assert_eq!(
            message,
            format!(
                "there is no kernel named 'g\\n\\u{{1b}}[31m{}…",
                "x".repeat(limits_cut() - "there is no kernel named 'g\\n\\u{1b}[31m".len())
            )
        );
    }

    /// Characters a message keeps before its ellipsis.
    fn limits_cut() -> usize {
        MAX_MESSAGE_CHARS - 1
    }

    #[test]
    fn errors_carry_the_line_and_column() {
        let mut input = SimulationInput::new(
            "__global__ void f(int* a) {\n  a[threadIdx.x] = b;\n}",
            "f",
            h100(),
        );
        input.buffers = vec![("a".to_string(), 4)];
        let error = simulate(&input).expect_err("b is undeclared");
        let span = error.span().expect("the error has a place");
        assert_eq!((span.line, span.col), (2, 20));

        // An index past the buffer is found while running, at the access.
        input.source = "__global__ void f(int* a) {\n  a[threadIdx.x + 1] = 0;\n}".to_string();
        let error = simulate(&input).expect_err("a[1] is outside a 4-byte buffer");
        assert_eq!(error.span().map(|s| s.line), Some(2));

        input.kernel = "g".to_string();
        let error = simulate(&input).expect_err("there is no kernel g");
        assert!(error.to_string().contains("no kernel named 'g'"), "{error}");
    }

    #[test]
    fn an_endless_loop_whose_iterations_are_skipped_still_stops_at_the_budget() {
        // Every iteration stores to the same place, so a warp skips as many as the budget
        // holds, counting the steps they would take: one more, and the run stops as a full
        // run does, at the loop.
        let mut input = SimulationInput::new(
            "__global__ void spin(float* out) {\n  for (int j = 0; ; ++j) out[threadIdx.x] = 1.0f;\n}",
            "spin",
            h100(),
        );
        input.buffers = vec![("out".to_string(), 128)];
        input.step_budget = 10_000;
        for sampling in [
            BlockSampling::EdgeClasses,
            BlockSampling::EdgeClassesEachRun,
        ] {
            let error = simulate(&SimulationInput {
                sampling,
                ..input.clone()
            })
            .expect_err("the loop never ends");
            assert!(
                matches!(error, SimulationError::StepBudget { .. }),
                "{error}"
            );
            assert!(error.to_string().starts_with("2:"), "{error}");
        }
    }

    #[test]
    fn a_runaway_loop_stops_at_the_step_budget() {
        let mut input = SimulationInput::new(
            "__global__ void spin(int* a) { while (a[0] >= 0) { } }",
            "spin",
            h100(),
        );
        input.buffers = vec![("a".to_string(), 4)];
        input.step_budget = 10_000;
        let error = simulate(&input).expect_err("the loop never ends");
        assert_eq!(
            error.to_string(),
            "1:32: the simulation used up its step budget of 10000 steps"
        );
        assert!(matches!(error, SimulationError::StepBudget { .. }));
    }

    #[test]
    fn the_budget_bounds_the_sum_over_all_blocks() {
        // Every block is short, but running all 4096 of them is not.
        let mut input = matmul("mm_naive", 256, 16, 0, CompileEffects::AS_COMPILED);
        input.sampling = BlockSampling::All;
        input.step_budget = 2_000_000;
        let error = simulate(&input).expect_err("4096 blocks exceed the budget");
        // The budget runs out between blocks (simulate's `StepBudget`) or within one (the
        // interpreter's diagnostic at the statement it reached): either way, within the kernel.
        assert!(error.message().contains("step budget"), "{error}");
        assert!(error.span().is_some_and(|s| s.line >= 9), "{error}");
        input.sampling = BlockSampling::EdgeClasses;
        assert!(simulate(&input).is_ok());
    }

    #[test]
    fn a_launch_and_its_errors_read_back_from_json_are_the_same() {
        let input = matmul("mm_tiled", 64, 16, 1, CompileEffects::AS_WRITTEN);
        let json = serde_json::to_string(&input).expect("the input serializes");
        let back: SimulationInput = serde_json::from_str(&json).expect("the input deserializes");
        assert_eq!(back, input);

        for error in [
            SimulationError::Kernel(Diagnostic::new(Span::default(), "'m' is not declared")),
            SimulationError::DoesNotLaunch(OccupancyError::EmptyBlock),
            SimulationError::BadLaunch(LaunchError::ZeroExtent {
                what: LaunchPart::Grid,
                axis: Axis::Y,
            }),
            SimulationError::StepBudget {
                steps: 11,
                budget: 10,
                span: Span::default(),
            },
        ] {
            let json = serde_json::to_string(&error).expect("the error serializes");
            let back: SimulationError = serde_json::from_str(&json).expect("it deserializes");
            assert_eq!(back, error);
        }
    }

    /// The diagnostic `simulate` stops `input` at.
    fn diagnostic_of(input: &SimulationInput) -> Diagnostic {
        match simulate(input) {
            Err(SimulationError::Kernel(diagnostic)) => diagnostic,
            other => panic!("not a kernel's error: {other:?}"),
        }
    }

    #[test]
    fn an_index_outside_its_object_is_told_by_its_kind_and_worded_as_before() {
        let mut input = SimulationInput::new(
            "__global__ void f(float* a) {\n  __shared__ float s[32];\n  \
             s[threadIdx.x + INDEX] = 1.0f;\n  a[threadIdx.x + INDEX] = s[0];\n}",
            "f",
            h100(),
        );
        input.block = Dim3::new(32, 1, 1);
        input.buffers = vec![("a".to_string(), 4 * 64)];
        // One past the shared array: its store stops first.
        input.defines = vec![("INDEX".to_string(), "1".to_string())];
        let diagnostic = diagnostic_of(&input);
        assert_eq!(
            diagnostic.kind,
            DiagnosticKind::OutOfBounds(MemoryObject::SharedArray)
        );
        assert_eq!(
            diagnostic.to_string(),
            "3:3: index 32 is outside shared array 's' (128 bytes)"
        );
        // Within the shared array but past the buffer's 64 floats.
        input.source = input
            .source
            .replace("s[threadIdx.x + INDEX]", "s[threadIdx.x]");
        input.defines = vec![("INDEX".to_string(), "40".to_string())];
        let diagnostic = diagnostic_of(&input);
        assert_eq!(
            diagnostic.kind,
            DiagnosticKind::OutOfBounds(MemoryObject::Buffer)
        );
        assert_eq!(
            diagnostic.to_string(),
            "4:3: index 64 is outside buffer 'a' (256 bytes)"
        );
    }

    /// A kernel that stores once per thread when compiled for cc 8.0 or later and twice before,
    /// with host code nvcc's device pass does not see.
    const ARCH_GUARDED: &str = "#ifndef __CUDACC__\nthis is no C at all\n#endif\n\
        __global__ void k(float* a) {\n\
        #if __CUDA_ARCH__ >= 800\n  a[threadIdx.x] = 1.0f;\n\
        #else\n  a[threadIdx.x] = 1.0f;\n  a[threadIdx.x + 32] = 2.0f;\n#endif\n}\n\
        int main() { k<<<1, 32>>>(nullptr); return 0; }\n";

    /// The bytes one block of 32 threads of `ARCH_GUARDED` asks to store on `device`.
    fn guarded_bytes(source: &str, device: crate::device::Device) -> f64 {
        let mut input = SimulationInput::new(source, "k", device);
        input.block = Dim3::new(32, 1, 1);
        input.buffers = vec![("a".to_string(), 4 * 64)];
        let report = simulate(&input).unwrap_or_else(|e| panic!("{e:?}"));
        report.counters.global_bytes_requested
    }

    #[test]
    fn a_file_is_read_as_nvcc_s_device_pass_for_the_preset_s_compute_capability() {
        // 32 floats are 128 bytes on the H100 (cc 9.0, __CUDA_ARCH__ 900) and the A100 (800);
        // twice that on the V100 (700) and G80 (100), which take the #else branch.
        assert_eq!(guarded_bytes(ARCH_GUARDED, h100()), 128.0);
        assert_eq!(guarded_bytes(ARCH_GUARDED, DeviceId::A100.device()), 128.0);
        assert_eq!(guarded_bytes(ARCH_GUARDED, DeviceId::V100.device()), 256.0);
        assert_eq!(guarded_bytes(ARCH_GUARDED, g80()), 256.0);
        // The file's own definition wins, as it does in nvcc after the predefined one.
        let own = format!("#undef __CUDA_ARCH__\n#define __CUDA_ARCH__ 700\n{ARCH_GUARDED}");
        assert_eq!(guarded_bytes(&own, h100()), 256.0);
    }

    #[test]
    fn a_size_that_is_not_constant_is_told_by_its_kind() {
        let mut input = SimulationInput::new(
            "__global__ void f(float* a, int n) {\n  __shared__ float s[n];\n  a[0] = s[0];\n}",
            "f",
            h100(),
        );
        input.args = vec![("n".to_string(), Value::Int(4))];
        input.buffers = vec![("a".to_string(), 4)];
        let diagnostic = diagnostic_of(&input);
        assert_eq!(diagnostic.kind, DiagnosticKind::NotConstant);
        assert!(
            diagnostic.message.contains("must be a constant"),
            "{diagnostic}"
        );
        // Other errors are of no kind anyone acts on.
        input.source = "__global__ void f(float* a, int n) { a[0] = m; }".to_string();
        assert_eq!(diagnostic_of(&input).kind, DiagnosticKind::Other);
    }

    #[test]
    fn a_budget_spent_within_a_block_is_told_by_its_kind_whatever_was_left_of_it() {
        // The second block runs out of what the first left: the interpreter's diagnostic names
        // that remainder, and `simulate` still knows it for the spent budget by its kind.
        let mut input = SimulationInput::new(
            "__global__ void spin(int* a) {\n  for (int j = 0; j < 1000 * blockIdx.x + 10; ++j) a[0] = j;\n}",
            "spin",
            h100(),
        );
        input.grid = Dim3::new(3, 1, 1);
        input.buffers = vec![("a".to_string(), 4)];
        input.sampling = BlockSampling::All;
        input.step_budget = 3_000;
        let error = simulate(&input).expect_err("the budget runs out");
        assert!(
            matches!(error, SimulationError::StepBudget { budget: 3_000, .. }),
            "{error:?}"
        );
        assert_eq!(error.span().map(|span| span.line), Some(2));
    }
}
