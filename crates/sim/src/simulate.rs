//! Simulating a launch: a kernel's source and launch in, the counters Nsight Compute would show out.
//!
//! This ties the simulator together for one `kernel<<<grid, block, dyn_smem>>>(args...)` launch:
//!
//! 1. the source is preprocessed with the `-D` defines, parsed and checked (`kernel`);
//! 2. the launch's occupancy comes from `occupancy::calculate` with the kernel's static plus dynamic
//!    shared memory and the registers per thread nvcc chose (the CUDA occupancy API's calculation);
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
//!    that `runs_alike` admits (shifts of whole 128-byte lines, shifted addresses in bounds,
//!    guards alike): the totals are those of running every class
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

use crate::access::{AccessKind, Space, WarpAccess};
use crate::coalescing::{LINE_BYTES, SECTOR_BYTES};
use crate::compile_effects::{
    add_tally_changes, add_tally_difference, fusible_loads, CompileEffects, FusibleLoad,
    FusionSite, LoadFuser, LoadReuse, ReusedLoads, TallyChanges, KEPT_LOADS,
};
use crate::counters::{AccessMeasure, Counters};
use crate::device::{Device, GlobalCoalescing, LaunchError};
use crate::fill::Fill;
use crate::kernel::block_shift::{Guard, GuardRange, ShiftedBuffer};
use crate::kernel::{
    self, span::one_line, Diagnostic, Dim3, IterationFences, IterationsRepeated, Launch, MemRecord,
    MovedRecord, RecordSink, RepeatNeed, Repeated, RepeatsNeeded, Simulation, SiteMove, Span,
    Value, WarpsAlike,
};
use crate::occupancy::{self, BlockResources, OccupancyError, OccupancyReport};
use crate::profile::{
    BlockProfiler, CopyKind, IntegerHashMap, Issue, MemoryProfile, ProfileBuilder, RecordShape,
    TouchedRange, TouchedSectors,
};
use crate::sampling::{self, BlockClass, EdgePosition};
use crate::trace::{LineCounters, LineTally, TraceRecorder, TraceRequest, WarpTrace};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

/// The default step budget, for the whole simulation, the same in the page and the CLI (a step
/// is a statement or expression node of one warp, and one per active lane of a memory access).
/// The largest launches the page makes, the matmuls with 32x32 tiles at n = 1024, take 26.9
/// million steps (`mm_naive`; `mm_tiled` 26.2); the n = 2048 reference launches take up to 54
/// million and pass a larger budget (`--budget`). A step costs 8 to 65 ns natively, depending on
/// the kernel, so at this budget an endless loop stops within 0.5 s (arithmetic) to 2.5 s (the
/// slowest kernel the fuzz target found: chains of conversions, shared atomics and cc 1.x
/// coalescing on the GT200).
pub const DEFAULT_STEP_BUDGET: u64 = 40_000_000;

/// Which blocks of the grid are run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSampling {
    /// One block per edge class, scaled to the grid (`sampling::classes`); the classes whose
    /// blocks `kernel::block_shift` shows to do another run block's work at shifted addresses
    /// reuse that run instead of running their own.
    #[default]
    EdgeClasses,
    /// One block per edge class, each run, even where a run could be reused: what
    /// `EdgeClasses` must equal to the last digit.
    EdgeClassesEachRun,
    /// Every block; exact for any kernel, slow for large grids.
    All,
}

/// One launch to simulate. Plain data: every field is what a user types on the page or what the
/// `launch_spec` of a reference measurement says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulationInput {
    /// The CUDA C source, with one or more kernels.
    pub source: String,
    /// The name of the `__global__` function to launch.
    pub kernel: String,
    /// `-D NAME=VALUE` overrides of the source's `#define`s.
    pub defines: Vec<(String, String)>,
    pub grid: Dim3,
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes (the third launch parameter).
    pub dyn_smem: u32,
    /// Registers per thread (what nvcc chose; 0 when unknown, which does not limit occupancy).
    pub regs: u32,
    /// Values of the scalar parameters, by name.
    pub args: Vec<(String, Value)>,
    /// Bytes of the buffer behind each pointer parameter, by name.
    pub buffers: Vec<(String, u64)>,
    /// What each named buffer holds before the kernel runs (`fill`); a buffer not named here
    /// holds `Fill::Small`. Launch files written before the field existed read as empty.
    #[serde(default)]
    pub fills: Vec<(String, Fill)>,
    pub device: Device,
    pub compile: CompileEffects,
    pub sampling: BlockSampling,
    /// Steps (statements and expression nodes evaluated) the whole simulation may take, summed
    /// over every warp of every block run; beyond it the simulation stops with an error.
    pub step_budget: u64,
    /// Seed of the buffers' pseudo-random contents (`Fill::Small` and `Fill::Random`).
    pub seed: u64,
    /// One warp whose shared and global accesses the report keeps (`trace`); `None` keeps none.
    /// Launch files written before the field existed read as `None`.
    #[serde(default)]
    pub trace: Option<TraceRequest>,
}

impl SimulationInput {
    /// A launch of `kernel` in `source` on `device` with the defaults: no defines, arguments or
    /// buffers, one block of one thread, as compiled, edge-class sampling, the default budget.
    pub fn new(source: &str, kernel: &str, device: Device) -> SimulationInput {
        SimulationInput {
            source: source.to_string(),
            kernel: kernel.to_string(),
            defines: Vec::new(),
            grid: Dim3::new(1, 1, 1),
            block: Dim3::new(1, 1, 1),
            dyn_smem: 0,
            regs: 0,
            args: Vec::new(),
            buffers: Vec::new(),
            fills: Vec::new(),
            device,
            compile: CompileEffects::default(),
            sampling: BlockSampling::default(),
            step_budget: DEFAULT_STEP_BUDGET,
            seed: 1,
            trace: None,
        }
    }
}

/// One simulated block and what it stands for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampledBlock {
    pub block: [u32; 3],
    /// Where it lies along x, y and z: its edge class.
    pub position: [EdgePosition; 3],
    /// The blocks of the grid it stands for: its counters are multiplied by this.
    pub scale: u64,
    /// The representatives of the other edge classes whose blocks were shown to do this block's
    /// work at shifted addresses (`kernel::block_shift`), so that this run counts for them too.
    pub reused_for: Vec<[u32; 3]>,
    /// The counters of this one block.
    pub counters: Counters,
    pub steps: u64,
    /// How many of the block's warps did not run: each was shown to do the work of a warp of its
    /// class at moved addresses, and its records are that warp's, moved (`kernel::interp`'s
    /// `warps`). Reports written before this existed read as 0.
    #[serde(default)]
    pub warps_shown_alike: u32,
    /// How many loop iterations the warps that ran skipped: each was shown to do the work of
    /// an iteration the warp ran at moved addresses, and its records are that iteration's,
    /// moved (`kernel::interp`'s `loops`). Reports written before this existed read as 0.
    #[serde(default)]
    pub iterations_skipped: u64,
}

/// What a launch does, extrapolated to the whole grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulationReport {
    pub kernel: String,
    /// Totals over the grid, serialized under Nsight Compute's metric names.
    pub counters: Counters,
    pub occupancy: OccupancyReport,
    pub sampled_blocks: Vec<SampledBlock>,
    pub grid_blocks: u64,
    /// Warp-level instructions over the grid (the same as `counters.warp_instructions`).
    pub warp_instructions: f64,
    /// Static plus dynamic shared memory of one block, in bytes, as laid out by the interpreter.
    pub shared_bytes_per_block: u64,
    /// The reads whose loads the compiler-effects pass fused, with the counts before and after.
    pub fused_loads: Vec<FusionSite>,
    pub compile: CompileEffects,
    /// Interpreter steps taken over all sampled blocks.
    pub steps: u64,
    /// Footprints, lines, round trips and atomics: what the timing model needs (`timing`).
    pub memory: MemoryProfile,
    /// The counters of every shared and global access in the source, in source order, over the
    /// grid: they add up to `counters` (`trace`).
    pub lines: Vec<LineCounters>,
    /// The accesses of the warp `SimulationInput::trace` asks for.
    pub trace: Option<WarpTrace>,
    /// The device the launch was simulated on: `timing::predict` times the report on it, so a
    /// report cannot be timed on a device it was not counted for.
    pub device: Device,
}

/// Why a launch could not be simulated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SimulationError {
    /// The kernel does not compile, the launch does not match it, or a run failed (an index out
    /// of bounds, a barrier reached by part of a warp, the step budget): at a line and column.
    Kernel(Diagnostic),
    /// The launch asks more of one SM than the device has: the kernel would not launch.
    DoesNotLaunch(OccupancyError),
    /// The grid or block is empty or beyond the device's launch limits: the launch fails before
    /// any block runs.
    BadLaunch(LaunchError),
    /// The blocks run so far took `steps`, more than the `budget` of `SimulationInput`; `span` is
    /// the statement the last block had reached (the interpreter stops a block as soon as it
    /// uses up what is left), or the kernel's.
    StepBudget { steps: u64, budget: u64, span: Span },
    /// The kernel uses a feature the device's compute capability lacks (`capability`): nvcc would
    /// not compile it for the device, so it does not launch.
    Unsupported(crate::capability::Unsupported),
}

impl SimulationError {
    /// Where in the source the error is, if it is about a place in it.
    pub fn span(&self) -> Option<Span> {
        match self {
            SimulationError::Kernel(diagnostic) if diagnostic.span.line > 0 => {
                Some(diagnostic.span)
            }
            SimulationError::StepBudget { span, .. } if span.line > 0 => Some(*span),
            SimulationError::Unsupported(unsupported) if unsupported.used.span.line > 0 => {
                Some(unsupported.used.span)
            }
            _ => None,
        }
    }

    /// The message without the place: one printable line (`one_line`).
    pub fn message(&self) -> String {
        let message = match self {
            SimulationError::Kernel(diagnostic) => diagnostic.message.clone(),
            SimulationError::DoesNotLaunch(error) => error.to_string(),
            SimulationError::BadLaunch(error) => error.to_string(),
            SimulationError::StepBudget { budget, .. } => {
                format!("the simulation used up its step budget of {budget} steps")
            }
            SimulationError::Unsupported(unsupported) => unsupported.to_string(),
        };
        one_line(&message)
    }
}

impl fmt::Display for SimulationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.span() {
            Some(span) => write!(f, "{span}: {}", self.message()),
            None => f.write_str(&self.message()),
        }
    }
}

impl std::error::Error for SimulationError {}

impl From<Diagnostic> for SimulationError {
    fn from(diagnostic: Diagnostic) -> SimulationError {
        SimulationError::Kernel(diagnostic)
    }
}

/// Where a record goes once the compiler-effects pass has decided what is executed: the block's
/// counters, its access site's line and, for the traced warp, the trace.
struct Counting<'a> {
    device: &'a Device,
    counters: Counters,
    lines: &'a mut LineTally,
    trace: Option<&'a mut TraceRecorder>,
    shared_measures: &'a mut SharedMeasures,
}

/// Per site, warp and first lane's address, the shared access last measured there and its
/// measure (`AccessMeasure::of`, a function of the access and the device alone). A block's
/// shared memory lies at the same places as every other block's, and a warp's shared accesses
/// repeat from one iteration it runs to the next (a matmul's tile is read at the same words in
/// every phase), so most of the launch's shared accesses are found here rather than measured
/// again. The map holds only the place of each access in `entries`: an access and its measure
/// are some 580 bytes, and a table of them was too large for the cache, so that each look-up
/// missed it (a twentieth of the guarded matmul's time at tile 30).
#[derive(Default)]
struct SharedMeasures {
    places: IntegerHashMap<(u32, u32, u64), usize>,
    entries: Vec<(WarpAccess, AccessMeasure)>,
}

impl SharedMeasures {
    /// The measure of `record`'s shared access, `None` for one with no active lane.
    fn of(&mut self, record: &MemRecord, device: &Device) -> Option<AccessMeasure> {
        let first = record.access.lanes.iter().flatten().next()?;
        let key = (record.span.start, record.warp, *first);
        let place = self.places.get(&key).copied();
        if let Some(place) = place {
            let (access, measure) = &self.entries[place];
            if *access == record.access {
                return Some(*measure);
            }
        }
        let measure = AccessMeasure::of(&record.access, device)?;
        match place {
            Some(place) => self.entries[place] = (record.access, measure),
            None => {
                // A kernel whose warps read shared memory all over keeps few alike: the map
                // starts afresh rather than grow past some 2 MB.
                if self.entries.len() >= SHARED_MEASURES_KEPT {
                    self.places.clear();
                    self.entries.clear();
                }
                self.places.insert(key, self.entries.len());
                self.entries.push((record.access, measure));
            }
        }
        Some(measure)
    }
}

/// The most shared accesses `SharedMeasures` keeps: a tiled matmul's at tile 32 are some 2,100
/// (its two tiles read at 32 places by each of 32 warps, and written at one).
const SHARED_MEASURES_KEPT: usize = 4096;

impl Counting<'_> {
    /// Counts `record`, and says what it added (`None` for a record with no active lane).
    fn count(&mut self, record: &MemRecord) -> Option<AccessMeasure> {
        let measure = match record.access.space {
            Space::Shared => self.shared_measures.of(record, self.device)?,
            _ => AccessMeasure::of(&record.access, self.device)?,
        };
        self.count_untraced(record, &measure);
        if let Some(trace) = self.trace.as_deref_mut() {
            trace.record(record);
        }
        Some(measure)
    }

    /// Counts what `record` adds to the counters and the per-line counts, which its place does
    /// not change: for a record of a warp other than the traced one (only its space, kind,
    /// width and site are read).
    fn count_untraced(&mut self, record: &MemRecord, measure: &AccessMeasure) {
        self.count_untraced_times(record, measure, 1);
    }

    /// Counts `times` records like `record` (the iterations of a loop skipped alike).
    fn count_untraced_times(&mut self, record: &MemRecord, measure: &AccessMeasure, times: u64) {
        self.counters
            .add_measure_times(&record.access, measure, times);
        self.lines.add_times(record, &measure.cost, times);
    }
}

/// Counts the records of one block, after the compiler-effects pass.
struct BlockSink<'a> {
    counting: Counting<'a>,
    /// Drops the loads the compiled code does not issue again, before anything sees them.
    reuse: Option<&'a mut LoadReuse>,
    fuser: Option<&'a mut LoadFuser>,
    /// Sees the records that are issued (the fuser only changes shared loads).
    profiler: &'a mut BlockProfiler,
    /// The block's warps shown alike, if they are, and what the first warp of each class made
    /// of its records.
    moved: Option<MovedWarps>,
    /// The classes of earlier blocks, whose vectors the next block's fill again instead of
    /// allocating (a matmul's leader counts thousands of records of 560 bytes).
    spare_classes: &'a mut Vec<MovedClass>,
    /// Per warp in a loop whose iterations it skips: what the compiler effects and the counting
    /// made of the iteration it ran.
    iterations: Vec<IterationLog>,
    /// The fuser's tally before and after a logged record, kept between records so that none
    /// allocates.
    tallies: (Tally, Tally),
    /// The shapes measured of copies at other alignments (`profile_copy`).
    shapes: ShapeCopies,
    /// Where the iteration of a loop inside another began, which a warp captures while it
    /// captures the enclosing loop's (`RecordSink::nested_iteration_begins`).
    nested: Option<NestedStart>,
}

/// The start of an inner loop's iteration in the log of the enclosing loop's iteration
/// (`BlockSink::nested`).
#[derive(Clone, Copy, Debug)]
struct NestedStart {
    warp: u32,
    /// How many records the enclosing iteration's log held when it began.
    records: usize,
    /// The compiler effects held nothing its records could use when it began: no read waiting to
    /// be fused, and (once its first record came, `reuse_checked`) no kept value it could reuse.
    clean: bool,
    reuse_checked: bool,
}

/// Per shape a copy was made of (by its place in memory, the `Rc` kept alive here) and the
/// copy's alignment (its move modulo `BlockProfiler::shape_move_bytes`): the shape measured of a
/// copy so aligned, and that copy's move. The profiler's own `LikeShapes` would find these too,
/// by content, but a look-up by identity costs far less: without this map the naive matmul took
/// twice as long (6.2 -> 12.1 ms at tile 17, criterion).
type ShapeCopies = IntegerHashMap<(usize, i64), (Rc<RecordShape>, Rc<RecordShape>, i64)>;

/// Whether the compiler effects treat every copy of a warp's records, each place moved by its
/// `sites` move (to another warp, or another iteration), as they treated the records: the loads
/// load reuse compares with each other (one class of address forms) move alike, so the same ones
/// coincide, and every fusible read moves by a multiple of its widest fused load, so the same
/// runs are fused from the same alignment.
fn effects_move_alike(
    reuse: Option<&LoadReuse>,
    fuser: Option<&LoadFuser>,
    sites: &[SiteMove],
) -> bool {
    let loads = || sites.iter().filter(|site| site.kind == AccessKind::Load);
    let reuse_alike = reuse.is_none_or(|reuse| {
        loads().all(|a| {
            loads().all(|b| {
                a.space != b.space
                    || a.bytes_per_step == b.bytes_per_step
                    || reuse.class_of_site(a.span) != reuse.class_of_site(b.span)
            })
        })
    });
    let fusion_alike = fuser.is_none_or(|fuser| {
        sites.iter().all(|site| {
            fuser
                .max_width_at(site.span)
                .is_none_or(|width| site.bytes_per_step % i64::from(width.max(1)) == 0)
        })
    });
    reuse_alike && fusion_alike
}

/// Places in the profile `record`'s repeat that `repeated` says, where the compiler effects
/// issued it (`logged`): `record` itself, or where `from_ran` the record of the iteration run
/// that it repeats, moved.
fn place_repeat(
    profiler: &mut BlockProfiler,
    shapes: &mut ShapeCopies,
    record: &MemRecord,
    logged: &LoggedRecord,
    repeated: &Repeated,
    from_ran: bool,
) {
    if !logged.issued {
        return;
    }
    let mut issue = Issue::of(record);
    if from_ran {
        issue.order = repeated.order(record.order);
    }
    let whole = || {
        let mut whole = *record;
        if from_ran {
            repeated.apply(&mut whole);
        }
        whole
    };
    let copy = (issue, record.warp, logged.copy);
    profile_copy(
        profiler,
        shapes,
        copy,
        logged.shape.as_ref(),
        repeated.by,
        whole,
    );
}

/// Adds to the profiler the access of `warp` that copies the access `origin` was measured of,
/// moved by `by` bytes (`record` gives its kind and order; `whole` makes it): placed where the
/// move keeps the shape (`BlockProfiler::place_copy`), else placed as a copy of the same
/// alignment was (the tiled matmul's warps move by 8,000 bytes, so every fourth lines up with
/// the first, and every iteration of its loop moves by whole lines), else measured and kept.
fn profile_copy(
    profiler: &mut BlockProfiler,
    shapes: &mut ShapeCopies,
    (issue, warp, kind): (Issue, u32, CopyKind),
    origin: Option<&Rc<RecordShape>>,
    by: i64,
    whole: impl FnOnce() -> MemRecord,
) {
    if profiler.place_copy((issue, warp, kind), origin.map(|shape| (&**shape, by))) {
        return;
    }
    let Some(origin) = origin else {
        profiler.record(&whole());
        return;
    };
    let key = (
        Rc::as_ptr(origin) as usize,
        by.rem_euclid(profiler.shape_move_bytes()),
    );
    if let Some((_, shape, at)) = shapes.get(&key) {
        if profiler.place_copy((issue, warp, kind), Some((shape, by - at))) {
            return;
        }
    }
    if let Some(shape) = profiler.record_shape(&whole()) {
        shapes.insert(key, (origin.clone(), Rc::new(shape), by));
    }
}

/// What the compiler effects and the counting made of the records of a loop iteration a warp
/// ran (`RecordSink::iteration_begins`), so that the records of the iterations it skips, the
/// same moved, need not pass through them again.
struct IterationLog {
    warp: u32,
    /// Still receiving the iteration's records.
    logging: bool,
    /// The warp's compiler effects held nothing the iteration's records could use when it
    /// began: no read waiting to be fused, no kept value its first record could reuse.
    clean_start: bool,
    records: Vec<LoggedRecord>,
    /// The records counted while the iteration's went through the compiler effects, with what
    /// each added.
    outputs: Vec<(MemRecord, Option<AccessMeasure>)>,
    /// Whether the skipped iterations may reuse it (`RecordSink::repeats_begin`)...
    reusable: bool,
    /// ... but for how many at their end, which pass through everything so that the compiler
    /// effects end as in a full run: none where a fence follows the iteration's last record.
    tail: u64,
    /// Whether the quiet records' compiler effects for every skipped iteration they are quiet
    /// in were added (`BlockSink::add_quiet_effects`).
    quiet_effects_added: bool,
    /// How far each place moves per iteration.
    site_moves: Vec<SiteMove>,
    /// Per output: how it moves per iteration (`IterationLog::output_moves`), looked up once.
    output_moves: Vec<OutputMove>,
    /// Per output whose measure a move changes: its measure moved by each remainder of its
    /// unit met so far (`IterationLog::moved_measure`): a cache, filled while the log is read.
    moved_measures: RefCell<Vec<MeasuresByRemainder>>,
}

/// An output's measures moved by remainders of its move unit, each with its remainder.
type MeasuresByRemainder = Vec<(i64, Option<AccessMeasure>)>;

impl IterationLog {
    /// Where the outputs (`IterationLog::outputs`) of logged record `k` lie.
    fn outputs_of(&self, k: usize) -> std::ops::Range<usize> {
        let start = k.checked_sub(1).map_or(0, |j| self.records[j].outputs_end);
        start..self.records[k].outputs_end
    }

    /// Decides what the repeats of logged record `k` are, as the first of them comes (or before
    /// it, `RecordSink::repeats_needed`), over `times` iterations batched: counted at once with
    /// the first where every output keeps its measure moved (`LoggedRecord::batched`), and not
    /// handed at all where besides every output is measured, the profile needs no placement,
    /// the warp is not `traced`, and a warp that `leads` a class has it as an input of the class
    /// (`LoggedRecord::quiet`). Call `output_moves` first.
    fn decide_repeats(&mut self, k: usize, times: u64, traced: bool, leads: bool) {
        let output_moves = &self.output_moves[self.outputs_of(k)];
        let all_kept = output_moves
            .iter()
            .all(|output| output.unit == 0 || output.every_step);
        let all_measured = output_moves.iter().all(|output| output.unit != 0);
        let logged = &mut self.records[k];
        logged.batched = all_kept && times > 1;
        logged.quiet = logged.batched
            && all_measured
            && !traced
            && (!logged.issued || logged.copy != CopyKind::Placed)
            && (!leads || logged.class_input.is_some());
    }

    /// How each output moves per iteration, as `OutputMove`s (`per_step` for iterations), once
    /// the iteration is logged.
    fn output_moves(&mut self, device: &Device) -> &[OutputMove] {
        if self.output_moves.len() != self.outputs.len() {
            self.output_moves = self
                .outputs
                .iter()
                .map(|(output, measure)| {
                    let per_iteration = self
                        .site_moves
                        .iter()
                        .find(|site| site.holds(output))
                        .map_or(0, |site| site.bytes_per_step);
                    OutputMove::new(output, measure.is_some(), per_iteration, device)
                })
                .collect();
        }
        &self.output_moves
    }

    /// Counts output `k` as its repeat in skipped `iteration` counts, `times` over: as the
    /// output's own measure where its move keeps it, else as its measure moved.
    fn count_output(&self, k: usize, iteration: u64, times: u64, counting: &mut Counting<'_>) {
        let (output, measure) = &self.outputs[k];
        let output_move = &self.output_moves[k];
        let measure = match measure.filter(|_| output_move.holds(iteration as i64)) {
            Some(measure) => Some(measure),
            None => {
                let by = output_move.per_step.wrapping_mul(iteration as i64);
                self.moved_measure(k, by, counting)
            }
        };
        if let Some(measure) = measure {
            counting.count_untraced_times(output, &measure, times);
        }
    }

    /// Counts the repeats of logged record `k` in all `times` iterations batched
    /// (`LoggedRecord::batched`), as its repeat in the first skipped iteration counts them.
    fn count_batched(&self, k: usize, times: u64, counting: &mut Counting<'_>) {
        for output in self.outputs_of(k) {
            self.count_output(output, 1, times, counting);
        }
    }

    /// Counts output `k` once for each skipped iteration `first..=last`. Its measure moved
    /// depends only on the move's remainder in its unit, which repeats every `period`
    /// iterations, so iterations a period apart are counted together: the naive matmul's
    /// `a[row * n + k]`, 4 bytes an iteration in sectors of 32, is counted 8 times for a
    /// thousand iterations. The counters are sums of whole numbers, whatever their order.
    fn count_output_over(&self, k: usize, first: u64, last: u64, counting: &mut Counting<'_>) {
        let output_move = &self.output_moves[k];
        let unit = output_move.unit;
        let period = if output_move.every_step {
            1
        } else if unit > 0 {
            let step = output_move.per_step.rem_euclid(unit);
            (unit / gcd(step, unit)) as u64
        } else {
            u64::MAX
        };
        let iterations = last - first + 1;
        if period >= iterations {
            for iteration in first..=last {
                self.count_output(k, iteration, 1, counting);
            }
            return;
        }
        for iteration in first..first + period {
            let times = (last - iteration) / period + 1;
            self.count_output(k, iteration, times, counting);
        }
    }

    /// The measure of output `k` moved by `by` bytes. A move by a multiple of the output's unit
    /// keeps its measure (`AccessMeasure::move_unit`), so the move by `by` measures as the move
    /// by its remainder: an output that moves 4 bytes an iteration, such as the naive matmul's
    /// `a[row * n + k]`, has 8 measures in sectors of 32 bytes, however many iterations its warp
    /// skips. Each is made once, when first met; a shared access is looked up where it lies
    /// (`SharedMeasures`), since a warp reads its tiles at the same words in every phase of a
    /// matmul and in every block, and its measure was most likely made before.
    fn moved_measure(
        &self,
        k: usize,
        by: i64,
        counting: &mut Counting<'_>,
    ) -> Option<AccessMeasure> {
        let (output, measure) = &self.outputs[k];
        measure.as_ref()?;
        let mut measure_moved_by = |moved_by: i64| {
            let mut moved = *output;
            if output.access.space == Space::Shared {
                kernel::move_lanes(&mut moved.access, by);
                return counting.shared_measures.of(&moved, counting.device);
            }
            kernel::move_lanes(&mut moved.access, moved_by);
            AccessMeasure::of(&moved.access, counting.device)
        };
        let unit = self.output_moves[k].unit;
        if unit <= 0 {
            return measure_moved_by(by);
        }
        let remainder = by.rem_euclid(unit);
        let mut cache = self.moved_measures.borrow_mut();
        if cache.len() != self.outputs.len() {
            *cache = vec![Vec::new(); self.outputs.len()];
        }
        if let Some(&(_, measure)) = cache[k].iter().find(|(met, _)| *met == remainder) {
            return measure;
        }
        let measure = measure_moved_by(remainder);
        cache[k].push((remainder, measure));
        measure
    }
}

/// Whether `record` could reuse a value its warp loaded before (`LoadReuse::may_reuse`); never
/// where the compiled code reuses no loaded value.
fn may_reuse(reuse: Option<&LoadReuse>, record: &MemRecord) -> bool {
    reuse.is_some_and(|reuse| reuse.may_reuse(record))
}

/// Adds to `sites` the place of each of `records`, with how far it moves an iteration (`moves`,
/// one per record), and says whether each place moves by one amount: records of one place that
/// move differently cannot be taken from each other.
fn gather_site_moves(records: &[LoggedRecord], moves: &[i64], sites: &mut Vec<SiteMove>) -> bool {
    let mut alike = true;
    for (record, &by) in records.iter().zip(moves) {
        let site = sites.iter().find(|site| {
            site.span == record.span && site.space == record.space && site.kind == record.kind
        });
        match site {
            Some(site) => alike &= site.bytes_per_step == by,
            None => sites.push(SiteMove {
                span: record.span,
                space: record.space,
                kind: record.kind,
                bytes_per_step: by,
            }),
        }
    }
    alike
}

/// How load reuse treats the iterations after one a warp ran, logged as `records`, each moving
/// `moves` an iteration and passing `fences`: whether it reuses in the skipped ones just what it
/// reused in the one run, so that they may be taken from it, and how many at the end must pass
/// through everything so that it ends as after a full run (`IterationLog::tail`).
fn reuse_over_iterations(
    reuse: Option<&LoadReuse>,
    records: &[LoggedRecord],
    moves: &[i64],
    fences: IterationFences,
) -> (bool, u64) {
    // Load reuse keeps nothing from one iteration into the next: the iteration's first or
    // last record is not a load (a store clears what it keeps), or a fence lies between them.
    let cleared = match (records.first(), records.last()) {
        (Some(first), Some(last)) => {
            first.kind != AccessKind::Load
                || last.kind != AccessKind::Load
                || first.fences_passed.wrapping_add(fences.per_iteration) != last.fences_passed
        }
        _ => true,
    };
    // Or what it keeps can never be reused in another iteration: each load of the
    // iteration moves every iteration, and is of an address class of its own (the naive
    // matmul's `a[row * n + k]` and `b[k * n + col]`) or never meets the others of its class
    // (`LoggedRecord::never_meets`), and the warp kept nothing it could reuse when the
    // iteration began. Then the last iterations whose loads fill what it keeps pass through
    // everything.
    let loads: Vec<(&LoggedRecord, i64)> = records
        .iter()
        .zip(moves)
        .filter(|(record, _)| record.kind == AccessKind::Load)
        .map(|(record, &by)| (record, by))
        .collect();
    let never_reused = reuse.is_some_and(|reuse| {
        loads.iter().all(|&(a, by)| {
            by != 0
                && loads.iter().all(|&(b, b_by)| {
                    std::ptr::eq(a, b)
                        || a.space != b.space
                        || reuse.class_of_site(a.span) != reuse.class_of_site(b.span)
                        || (by == b_by && a.never_meets(b, by))
                })
        })
    });
    // A fence after the iteration's last record leaves nothing that load reuse keeps for
    // the records after the last skipped iteration (they come after the fence): then no
    // iteration need pass through everything.
    let tail = if fences.after_last_record > 0 {
        0
    } else if cleared {
        1
    } else {
        (KEPT_LOADS.div_ceil(loads.len().max(1)) as u64).max(1)
    };
    (cleared || never_reused, tail)
}

/// Adds to load reuse and the fuser what they counted for `logged`, for a record of a skipped
/// iteration that repeats it.
fn add_compiler_effects(
    effects: (Option<&mut LoadReuse>, Option<&mut LoadFuser>),
    logged: &LoggedRecord,
) {
    add_compiler_effects_times(effects, logged, 1);
}

/// What `times` records like `logged` add to the compiler effects' tallies: the loads reused
/// and the fuser's loads and instructions `times` over, and its widest load once, which is a
/// maximum.
fn add_compiler_effects_times(
    (reuse, fuser): (Option<&mut LoadReuse>, Option<&mut LoadFuser>),
    logged: &LoggedRecord,
    times: u64,
) {
    if let Some(reuse) = reuse {
        reuse.add_reused(ReusedLoads {
            instructions: logged.reused.instructions * times,
            lanes: logged.reused.lanes * times,
        });
    }
    if let Some(fuser) = fuser {
        fuser.add_tally_at_times(&logged.tally, times);
    }
}

/// What became of one record of an iteration a warp ran.
#[derive(Clone)]
struct LoggedRecord {
    issued: bool,
    outputs_end: usize,
    shape: Option<Rc<RecordShape>>,
    /// What the compiler effects counted for it: loads reused, and the fuser's tally per site
    /// that changed.
    reused: ReusedLoads,
    tally: TallyChanges,
    /// Whether the records that repeat it in the iterations skipped are counted at once, when
    /// the first of them comes: every record it counted keeps its measure moved by an
    /// iteration, and so by any number of them.
    batched: bool,
    copy: CopyKind,
    /// Where the warp leads a class: which of the class's inputs it is.
    class_input: Option<usize>,
    /// Whether the records that repeat it after the first skipped iteration are taken at once
    /// (`RecordSink::records_repeated_from`): they are counted with the first (`batched`), each
    /// output keeps its measure at every iteration, the profile sees only that the warp ran,
    /// and the warp is not traced.
    quiet: bool,
    /// Its place, kind, fences and first active lane with that lane's address, for
    /// `repeats_begin`'s checks.
    span: Span,
    space: Space,
    kind: AccessKind,
    fences_passed: u32,
    first_lane: Option<(usize, u64)>,
}

impl LoggedRecord {
    /// Whether this load and `other`, of one address class, both moving `by` bytes an iteration,
    /// read different addresses in any two iterations, and so never reuse each other's values:
    /// their first active lane is the same lane, and the two addresses there are not a whole
    /// number of moves apart (the `k` and `k + 1` reads of `sa[ty][k]`, in a loop captured two
    /// iterations at a time, 4 bytes apart and moving 8).
    fn never_meets(&self, other: &LoggedRecord, by: i64) -> bool {
        match (self.first_lane, other.first_lane) {
            (Some((lane, a)), Some((other_lane, b))) if lane == other_lane && by != 0 => {
                (i128::from(b) - i128::from(a)).rem_euclid(i128::from(by)) != 0
            }
            _ => false,
        }
    }
}

/// A block's warps shown alike (`RecordSink::warps_alike`) and what the compiler effects and
/// the counting made of the records of each leader, so that the records of the warps it stands
/// for, the same moved, need not pass through them again. The profiler, which keeps absolute
/// addresses, still sees every record.
struct MovedWarps {
    block: [u32; 3],
    leaders: Vec<u32>,
    /// Per warp of the block: its leader (an index into `leaders`) and the steps from it.
    lead: Vec<(usize, u32)>,
    /// Per leader.
    classes: Vec<MovedClass>,
}

/// The fuser's tally per site: loads in, instructions out, widest bytes (`LoadFuser::tally_into`).
type Tally = Vec<(u64, u64, u32)>;

#[derive(Default)]
struct MovedClass {
    /// Whether the warps the leader stands for may reuse its work: every site moves by one
    /// amount, the loads that load reuse compares with each other move alike (so the same loads
    /// are reused), and every fusible read moves by a multiple of its widest fused load (so the
    /// same runs are fused, from the same alignment).
    reusable: bool,
    site_moves: Vec<SiteMove>,
    inputs: Vec<FirstRecord>,
    /// The records counted while the leader's went through the fuser, as where each is in
    /// `kept`, with what it added, and how each moves (`moves`). An output of a record of a
    /// loop iteration skipped is the output of the iteration run's record that it repeats,
    /// where its measure holds for the move: a matmul's leader skips thousands of records, and
    /// where all of a record's outputs are such, the record has no outputs of its own
    /// (`FirstRecord::iteration`).
    outputs: Vec<usize>,
    kept: Vec<(MemRecord, Option<AccessMeasure>)>,
    moves: Vec<OutputMove>,
    /// What the fuser emitted for the leader at the end of the block.
    finished: Vec<MemRecord>,
    reused: ReusedLoads,
    /// What the leader added to the fuser's tally, per site.
    tally: Tally,
}

/// How a record counted for a leader moves to the warps it stands for, looked up once, so that
/// a warp whose records all keep their measure need not read the records themselves.
#[derive(Clone, Copy, Debug)]
struct OutputMove {
    /// Its site's move per step of the class...
    per_step: i64,
    /// ... how far the leader's record lies from the one kept, and for an output of a record
    /// of an iteration run, how far it moves per iteration (`FirstRecord::iteration`) ...
    lies: i64,
    per_iteration: i64,
    /// ... and the moves under which its measure holds, the multiples of `unit` bytes
    /// (`AccessMeasure::move_unit`); 0 where it has no measure...
    unit: i64,
    /// ... which are all those of whole steps: a warp shown alike counts the output as the
    /// leader's without a division.
    every_step: bool,
}

impl OutputMove {
    /// The move of `output` by `per_step` bytes a step, lying where it is.
    fn new(output: &MemRecord, measured: bool, per_step: i64, device: &Device) -> OutputMove {
        let unit = if measured {
            AccessMeasure::move_unit(&output.access, device)
        } else {
            0
        };
        OutputMove {
            per_step,
            lies: 0,
            per_iteration: 0,
            unit,
            every_step: unit != 0 && per_step % unit == 0,
        }
    }

    /// Whether the measure holds `steps` steps of the class from the leader.
    fn holds(&self, steps: i64) -> bool {
        self.every_step || (self.unit != 0 && self.per_step.wrapping_mul(steps) % self.unit == 0)
    }
}

/// What became of one record of a leader.
struct FirstRecord {
    /// Whether it was issued (not reused).
    issued: bool,
    /// Where its outputs are in `MovedClass::outputs`...
    outputs: (usize, usize),
    /// ... as the outputs of the record of the iteration run that it repeats, `iteration`
    /// iterations on (each lies its move per iteration, `OutputMove::per_iteration`, that many
    /// times further); 0 for a record whose outputs are its own.
    iteration: i64,
    /// What the profiler measured of it that holds wherever it lies (`RecordShape`), with how far
    /// the record lies from the access it was measured of (a record of a loop iteration its
    /// warp skipped reuses the iteration's).
    shape: Option<(Rc<RecordShape>, i64)>,
    /// For a record of a loop iteration skipped whose records are counted at once
    /// (`LoggedRecord::batched`): how many iterations the warps it stands for count with it, 0
    /// where an earlier iteration's counted them.
    counted: Option<u64>,
    copy: CopyKind,
    /// Whether every output's measure holds at every warp of the class
    /// (`OutputMove::every_step`).
    every_step: bool,
}

/// What a warp shown alike's copy of a leader's record does (`FirstRecord::inert`): a copy that
/// adds nothing a warp shown alike need count (`FirstRecord::counts_nothing_more`) and that the
/// profile sees only as its warp's is not asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inert {
    No,
    Quiet,
    /// ... but notes that the warp ran.
    NotesWarp,
}

impl FirstRecord {
    /// Whether a warp shown alike counts nothing more for it: its outputs were counted at once
    /// for the whole batch of skipped iterations, and each measure holds at every warp.
    fn counts_nothing_more(&self) -> bool {
        self.every_step && self.counted == Some(0)
    }

    fn inert(&self) -> Inert {
        let inert = self.counts_nothing_more() && (!self.issued || self.copy != CopyKind::Placed);
        match (inert, self.issued && self.copy == CopyKind::WarpOnly) {
            (false, _) => Inert::No,
            (true, false) => Inert::Quiet,
            (true, true) => Inert::NotesWarp,
        }
    }
}

impl MovedClass {
    /// Empties the class, keeping its vectors' room.
    fn clear(&mut self) {
        self.reusable = false;
        self.site_moves.clear();
        self.inputs.clear();
        self.outputs.clear();
        self.kept.clear();
        self.moves.clear();
        self.finished.clear();
        self.reused = ReusedLoads::default();
        self.tally.clear();
    }

    /// How far `record`'s site moves per step of the class.
    fn move_of(&self, record: &MemRecord) -> i64 {
        self.site_moves
            .iter()
            .find(|site| site.holds(record))
            .map_or(0, |site| site.bytes_per_step)
    }

    /// Counts `output` with its `measure` for the leader, lying `lies` bytes from where it is.
    fn push_output(
        &mut self,
        (output, measure): (MemRecord, Option<AccessMeasure>),
        lies: i64,
        device: &Device,
    ) {
        self.outputs.push(self.kept.len());
        self.push_move(&output, measure.is_some(), lies, device);
        self.kept.push((output, measure));
    }

    fn push_move(&mut self, output: &MemRecord, measured: bool, lies: i64, device: &Device) {
        let output_move = OutputMove::new(output, measured, self.move_of(output), device);
        self.moves.push(OutputMove {
            lies,
            ..output_move
        });
    }

    /// Adds what the compiler effects counted for a record of a skipped iteration: what they
    /// counted for the record of the iteration run that it repeats.
    fn add_effects_of(&mut self, logged: &LoggedRecord) {
        self.reused.instructions += logged.reused.instructions;
        self.reused.lanes += logged.reused.lanes;
        add_tally_changes(&mut self.tally, &logged.tally);
    }

    /// Adds a record of a skipped iteration as the record `run` of the iteration run that it
    /// repeats, `iteration` iterations on (`FirstRecord::iteration`), with its own shape's place
    /// and count.
    fn push_repeat(
        &mut self,
        run: usize,
        iteration: i64,
        shape: Option<(Rc<RecordShape>, i64)>,
        counted: Option<u64>,
    ) {
        let ran = &self.inputs[run];
        let input = FirstRecord {
            issued: ran.issued,
            outputs: ran.outputs,
            iteration,
            shape,
            counted,
            copy: ran.copy,
            every_step: ran.every_step,
        };
        self.inputs.push(input);
    }

    /// Adds what became of a record of the leader whose outputs were pushed from `start` on:
    /// whether it was issued, its shape, what it counts and its copy kind.
    fn push_input(
        &mut self,
        start: usize,
        issued: bool,
        shape: Option<(Rc<RecordShape>, i64)>,
        (counted, copy): (Option<u64>, CopyKind),
    ) {
        let end = self.outputs.len();
        let every_step = self.moves[start..end]
            .iter()
            .all(|output| output.every_step);
        let input = FirstRecord {
            issued,
            outputs: (start, end),
            iteration: 0,
            shape,
            counted,
            copy,
            every_step,
        };
        self.inputs.push(input);
    }
}

impl BlockSink<'_> {
    /// Passes `record` through load reuse, the profiler, the fuser and the counting; with `log`,
    /// also keeps what the counting received and what each added, and with `shape` what the
    /// profiler measured of the record that holds wherever it lies. Whether the record was
    /// issued (not reused).
    fn pass(
        &mut self,
        record: &MemRecord,
        mut log: Option<&mut Vec<(MemRecord, Option<AccessMeasure>)>>,
        mut shape: Option<&mut Option<RecordShape>>,
    ) -> bool {
        let BlockSink {
            counting,
            reuse,
            fuser,
            profiler,
            ..
        } = self;
        let mut issued = false;
        let mut count = |r: &MemRecord| {
            let measure = counting.count(r);
            if let Some(log) = log.as_deref_mut() {
                log.push((*r, measure));
            }
        };
        let mut issue = |record: &MemRecord| {
            issued = true;
            match shape.as_deref_mut() {
                Some(slot) => *slot = profiler.record_shape(record),
                None => profiler.record(record),
            }
            match fuser {
                Some(fuser) => fuser.push(record, &mut count),
                None => count(record),
            }
        };
        match reuse {
            Some(reuse) => reuse.push(record, &mut issue),
            None => issue(record),
        }
        issued
    }

    /// What the compiler effects have counted so far: the loads reused, returned, and the
    /// fuser's tally, into `tally`.
    fn effects_so_far(&self, tally: &mut Tally) -> ReusedLoads {
        if let Some(fuser) = self.fuser.as_deref() {
            fuser.tally_into(tally);
        }
        self.reuse
            .as_deref()
            .map_or_else(ReusedLoads::default, LoadReuse::reused_so_far)
    }

    /// Whether `warp` of `block` is the one the trace asks for, whose records must pass through
    /// everything in order.
    fn traced(&self, block: [u32; 3], warp: u32) -> bool {
        self.counting.trace.as_deref().is_some_and(|trace| {
            let request = trace.request();
            request.warp == warp && request.block == block
        })
    }

    /// At the end of the block: the leaders' pending fused loads, and for every warp that
    /// reused a leader's work, what that warp's end of block and reused loads and tally
    /// were, moved.
    fn finish_moved_warps(&mut self) {
        let Some(mut moved) = self.moved.take() else {
            return;
        };
        let (mut before, mut after) = std::mem::take(&mut self.tallies);
        for (k, &leader) in moved.leaders.iter().enumerate() {
            let class = &mut moved.classes[k];
            if !class.reusable {
                continue;
            }
            if let Some(fuser) = self.fuser.as_deref_mut() {
                fuser.tally_into(&mut before);
                let counting = &mut self.counting;
                let finished = &mut class.finished;
                fuser.flush_warp(leader, &mut |r| {
                    counting.count(r);
                    finished.push(*r);
                });
                fuser.tally_into(&mut after);
                add_tally_difference(&mut class.tally, &before, &after);
            }
            // The warps that did not run and reused this leader's work; the traced one went
            // through everything.
            let class = &moved.classes[k];
            for (w, &(its_leader, q)) in moved.lead.iter().enumerate() {
                let w = w as u32;
                if its_leader != k || q == 0 || self.traced(moved.block, w) {
                    continue;
                }
                let q = i64::from(q);
                for record in &class.finished {
                    let mut record = *record;
                    record.warp = w;
                    let by = class.move_of(&record) * q;
                    kernel::move_lanes(&mut record.access, by);
                    self.counting.count(&record);
                }
                if let Some(reuse) = self.reuse.as_deref_mut() {
                    reuse.add_reused(class.reused);
                }
                if let Some(fuser) = self.fuser.as_deref_mut() {
                    fuser.add_tally(&class.tally);
                }
            }
        }
        self.tallies = (before, after);
        self.spare_classes.append(&mut moved.classes);
    }

    /// A record of a loop iteration skipped (`RecordSink::record_repeated`): `record` itself, or
    /// where `from_ran`, the record of the iteration run that it repeats, which is made into it
    /// only where needed.
    fn repeat(&mut self, record: &MemRecord, repeated: &Repeated, from_ran: bool) {
        let log = self.reusable_log(record.warp);
        self.repeat_logged(record, repeated, from_ran, log);
    }

    /// The log of `warp`'s iteration run, where the sink may reuse it (`repeats_begin`).
    fn reusable_log(&self, warp: u32) -> Option<usize> {
        self.iterations
            .iter()
            .position(|log| log.reusable && log.warp == warp)
    }

    /// `repeat`, given the warp's `reusable_log`, which a caller with a run of the warp's
    /// records looks up once for all of them.
    fn repeat_logged(
        &mut self,
        record: &MemRecord,
        repeated: &Repeated,
        from_ran: bool,
        log: Option<usize>,
    ) {
        let whole = || {
            let mut whole = *record;
            if from_ran {
                repeated.apply(&mut whole);
            }
            whole
        };
        // The last skipped iterations pass through everything, so that the compiler effects
        // leave the warp as a full run does (`IterationLog::tail`).
        let found = log.filter(|&i| {
            let log = &self.iterations[i];
            repeated.index < log.records.len()
                && repeated.iteration + log.tail <= repeated.iterations
        });
        let Some(i) = found else {
            self.record(&whole());
            return;
        };
        let leader = self.leader_of(record);
        // The traced warp's counted records also go to the trace, each where it lies.
        let traced = self.traced(record.block, record.warp);
        let BlockSink {
            counting,
            reuse,
            fuser,
            profiler,
            moved,
            iterations,
            shapes,
            ..
        } = self;
        // The iterations this path takes are 1 to `iterations - tail`: at the first, a record
        // whose counted records all keep their measure counts for all of them.
        let first_of_batch = repeated.iteration == 1;
        let log = &mut iterations[i];
        let times = repeated.iterations - log.tail;
        let std::ops::Range { start, end } = log.outputs_of(repeated.index);
        log.output_moves(counting.device);
        if first_of_batch {
            log.decide_repeats(repeated.index, times, traced, leader.is_some());
        }
        let log = &iterations[i];
        let logged = &log.records[repeated.index];
        let iteration = repeated.iteration as i64;
        let mut class = leader.and_then(|j| moved.as_mut().map(|moved| &mut moved.classes[j]));
        // The class has the record of the iteration run that this one repeats: where every
        // output keeps its measure moved, the class takes this record as that one's,
        // `iteration` iterations on, and need not keep its outputs.
        let run = match (class.as_deref(), logged.class_input) {
            (Some(class), Some(run)) => Some((run, class.inputs[run].outputs)),
            _ => None,
        };
        let as_run = run.is_some()
            && log.outputs[start..end]
                .iter()
                .zip(&log.output_moves[start..end])
                .all(|((_, measure), output_move)| {
                    measure.is_some() && output_move.holds(iteration)
                });
        let class_start = class.as_deref().map_or(0, |class| class.outputs.len());
        let batched = logged.batched;
        // How many times this warp counts a record here: once, all the batch's, or none.
        let count_times = match (batched, first_of_batch) {
            (false, _) => 1,
            (true, true) => times,
            (true, false) => 0,
        };
        place_repeat(profiler, shapes, record, logged, repeated, from_ran);
        add_compiler_effects((reuse.as_deref_mut(), fuser.as_deref_mut()), logged);
        for (k, (output, measure)) in log.outputs.iter().enumerate().take(end).skip(start) {
            let output_move = &log.output_moves[k];
            let class = class.as_deref_mut().filter(|_| !as_run);
            let by = output_move.per_step.wrapping_mul(iteration);
            let kept = measure.filter(|_| output_move.holds(iteration));
            match (kept, class) {
                // Moved so that every rule sees it alike, the access counts as the one it
                // repeats; where it lies is needed by no one, and the warps shown alike to this
                // one find it from the record repeated.
                (Some(measure), class) => {
                    if count_times > 0 {
                        counting.count_untraced_times(output, &measure, count_times);
                    }
                    if let (true, Some(trace)) = (traced, counting.trace.as_deref_mut()) {
                        let mut moved_output = *output;
                        kernel::move_lanes(&mut moved_output.access, by);
                        trace.record(&moved_output);
                    }
                    match (class, run) {
                        // The output of the record of the iteration run, moved.
                        (Some(class), Some((_, (run_start, _)))) => {
                            let j = run_start + (k - start);
                            class.outputs.push(class.outputs[j]);
                            class.moves.push(OutputMove {
                                lies: by,
                                ..class.moves[j]
                            });
                        }
                        (Some(class), None) => {
                            class.push_output((*output, Some(measure)), by, counting.device);
                        }
                        (None, _) => {}
                    }
                }
                // Counted as what it measures moved (its site and kind are the output's); the
                // moved record itself is made only for the trace and the warps shown alike.
                (None, class) => {
                    let measure = log.moved_measure(k, by, counting);
                    if let (Some(measure), true) = (&measure, count_times > 0) {
                        counting.count_untraced_times(output, measure, count_times);
                    }
                    let trace = counting.trace.as_deref_mut().filter(|_| traced);
                    if trace.is_some() || class.is_some() {
                        let mut moved_output = *output;
                        kernel::move_lanes(&mut moved_output.access, by);
                        if let Some(trace) = trace {
                            trace.record(&moved_output);
                        }
                        if let Some(class) = class {
                            class.push_output((moved_output, measure), 0, counting.device);
                        }
                    }
                }
            }
        }
        if let Some(class) = class {
            let shape = logged.shape.clone().map(|shape| (shape, repeated.by));
            let counted = batched.then_some(count_times);
            match run.filter(|_| as_run) {
                Some((run, (run_start, run_end))) => {
                    for (j, k) in (run_start..run_end).zip(start..end) {
                        class.moves[j].per_iteration = log.output_moves[k].per_step;
                    }
                    class.push_repeat(run, iteration, shape, counted);
                }
                None => class.push_input(class_start, logged.issued, shape, (counted, logged.copy)),
            }
            class.add_effects_of(logged);
        }
    }

    /// Takes the iterations of `batch` that `repeat_logged` would take from the warp's log
    /// (before its tail), of a warp that neither leads a class nor is traced, as that takes them
    /// one record at a time, but for the lookups made once: the profile places each record in
    /// order, the counting counts each as `repeat_logged` does, and the compiler effects, sums
    /// and a maximum that nothing reads before the block ends (`add_quiet_effects`), are added
    /// for all the iterations at once. The first iteration not taken.
    fn repeat_iterations(&mut self, batch: &IterationsRepeated<'_>) -> u64 {
        let (first, warp) = (batch.first, batch.warp);
        let Some(record) = batch.records.first() else {
            return first;
        };
        let Some(i) = self.reusable_log(warp) else {
            return first;
        };
        if self.leader_of_warp(warp).is_some() || self.traced(record.block, warp) {
            return first;
        }
        let per_iteration = batch.per_iteration();
        let logged_count = self.iterations[i].records.len();
        if (0..per_iteration).any(|k| batch.index(k) >= logged_count) {
            return first;
        }
        let iterations = (batch.repeated)(0, first).iterations;
        let tail = self.iterations[i].tail;
        let last = batch.last.min(iterations.saturating_sub(tail));
        if last < first {
            return first;
        }
        let times = iterations - tail;
        let BlockSink {
            counting,
            reuse,
            fuser,
            profiler,
            iterations: logs,
            shapes,
            ..
        } = self;
        let log = &mut logs[i];
        log.output_moves(counting.device);
        if first == 1 {
            for k in 0..per_iteration {
                log.decide_repeats(batch.index(k), times, false, false);
            }
        }
        let log = &logs[i];
        for k in 0..per_iteration {
            add_compiler_effects_times(
                (reuse.as_deref_mut(), fuser.as_deref_mut()),
                &log.records[batch.index(k)],
                last - first + 1,
            );
        }
        for k in 0..per_iteration {
            let at = batch.index(k);
            // A batched record counts all the batch's at the first iteration, and no more.
            if log.records[at].batched {
                if first == 1 {
                    log.count_batched(at, times, counting);
                }
            } else {
                for output in log.outputs_of(at) {
                    log.count_output_over(output, first, last, counting);
                }
            }
        }
        for iteration in first..=last {
            if batch.warp_ran {
                profiler.warp_runs(warp);
            }
            for k in 0..per_iteration {
                let at = batch.index(k);
                let repeated = (batch.repeated)(at, iteration);
                let (record, logged) = (&batch.records[at], &log.records[at]);
                place_repeat(profiler, shapes, record, logged, &repeated, true);
            }
        }
        last + 1
    }

    /// Takes the skipped iterations of `batch`, of a loop inside another whose iteration the warp
    /// is capturing (`RecordSink::nested_iterations_repeated`), from what the compiler effects and
    /// the counting made of the inner iteration the warp ran, the last records of the enclosing
    /// iteration's log: each record's repeat adds what it added to the compiler effects, is
    /// placed in the profile, and its outputs, moved, are counted as the shared accesses they are
    /// and logged with it, as a full run logs them. That holds where the warp neither leads a
    /// class nor is traced, every record is a shared access (whose place in the profile needs no
    /// shape, which the log could not keep for a copy), the compiler effects held nothing at
    /// either end of the inner iteration, its places move alike, and load reuse treats every
    /// skipped iteration alike (`reuse_over_iterations`); the last iterations whose loads fill
    /// what it keeps pass through it. The first iteration not taken.
    fn log_nested_repeats(&mut self, batch: &IterationsRepeated<'_>) -> u64 {
        let (first, warp) = (batch.first, batch.warp);
        let Some(start) = self.nested.take().filter(|start| start.warp == warp) else {
            return first;
        };
        let Some(record) = batch.records.first() else {
            return first;
        };
        if batch.handed.is_some()
            || !(start.clean && start.reuse_checked)
            || self.leader_of_warp(warp).is_some()
            || self.traced(record.block, warp)
            || self
                .fuser
                .as_deref()
                .is_some_and(|fuser| fuser.has_pending(warp))
        {
            return first;
        }
        let Some(i) = self
            .iterations
            .iter()
            .position(|log| log.logging && log.warp == warp)
        else {
            return first;
        };
        let per_iteration = batch.records.len();
        let logged =
            &self.iterations[i].records[start.records.min(self.iterations[i].records.len())..];
        if logged.len() != per_iteration
            || logged
                .iter()
                .any(|logged| logged.space != Space::Shared || logged.shape.is_some())
        {
            return first;
        }
        // How far each record, and each place, moves an iteration.
        let moves: Vec<i64> = (0..per_iteration)
            .map(|k| (batch.repeated)(k, 1).by)
            .collect();
        let mut sites: Vec<SiteMove> = Vec::new();
        if !gather_site_moves(logged, &moves, &mut sites) {
            return first;
        }
        let fences = IterationFences {
            per_iteration: (batch.repeated)(0, 1).fences,
            after_last_record: 0,
        };
        let (reuse_alike, tail) =
            reuse_over_iterations(self.reuse.as_deref(), logged, &moves, fences);
        if !reuse_alike || !effects_move_alike(self.reuse.as_deref(), self.fuser.as_deref(), &sites)
        {
            return first;
        }
        let log = &self.iterations[i];
        let outputs_start = start
            .records
            .checked_sub(1)
            .map_or(0, |j| log.records[j].outputs_end);
        // Every output comes from a place of the inner iteration, and moves as it does.
        let mut output_moves = Vec::with_capacity(log.outputs.len() - outputs_start);
        for (output, _) in &log.outputs[outputs_start..] {
            let Some(site) = sites.iter().find(|site| site.holds(output)) else {
                return first;
            };
            output_moves.push(site.bytes_per_step);
        }
        // The last `tail` iterations refill what load reuse keeps as a full run leaves it: their
        // records pass through it (a store clears it, a load is kept, and none is reused, as
        // above), and what reuse it counted is its own.
        let refilled = batch.last.saturating_sub(tail);
        let BlockSink {
            counting,
            reuse,
            fuser,
            profiler,
            iterations,
            shapes,
            ..
        } = self;
        let log = &mut iterations[i];
        let whole = usize::try_from(batch.last - first + 1).unwrap_or(0);
        log.records.reserve(whole.saturating_mul(per_iteration));
        log.outputs
            .reserve(whole.saturating_mul(log.outputs.len() - outputs_start));
        for iteration in first..=batch.last {
            for k in 0..per_iteration {
                let at = start.records + k;
                let repeated = (batch.repeated)(k, iteration);
                let mut entry = log.records[at].clone();
                if iteration <= refilled {
                    add_compiler_effects((reuse.as_deref_mut(), fuser.as_deref_mut()), &entry);
                } else {
                    add_compiler_effects((None, fuser.as_deref_mut()), &entry);
                    if let Some(reuse) = reuse.as_deref_mut() {
                        let mut record = batch.records[k];
                        repeated.apply(&mut record);
                        reuse.push(&record, &mut |_| {});
                    }
                }
                place_repeat(profiler, shapes, &batch.records[k], &entry, &repeated, true);
                let outputs_from = at.checked_sub(1).map_or(0, |j| log.records[j].outputs_end);
                for o in outputs_from..log.records[at].outputs_end {
                    // The output repeats as its record does, moved as its own place moves.
                    let moved = Repeated {
                        by: output_moves[o - outputs_start].wrapping_mul(iteration as i64),
                        ..repeated
                    };
                    log.outputs.extend_from_within(o..o + 1);
                    let Some((output, measure)) = log.outputs.last_mut() else {
                        continue;
                    };
                    moved.apply(output);
                    *measure = counting.shared_measures.of(output, counting.device);
                    if let Some(measure) = &measure {
                        counting.count_untraced(output, measure);
                    }
                }
                entry.outputs_end = log.outputs.len();
                entry.fences_passed = entry.fences_passed.wrapping_add(repeated.fences);
                entry.first_lane = entry
                    .first_lane
                    .map(|(lane, address)| (lane, address.wrapping_add_signed(repeated.by)));
                log.records.push(entry);
            }
        }
        batch.last + 1
    }

    /// Adds to the compiler effects' tallies what the quiet records of log `i`
    /// (`LoggedRecord::quiet`) add in every skipped iteration they are quiet in, the 2nd to the
    /// `iterations - tail`-th, once per log. The tallies are sums and a maximum, which nothing
    /// reads before the block ends, so they may be added all at once, before the iterations
    /// come (`repeats_needed`) or as the first of them does (`records_repeated_from`).
    fn add_quiet_effects(&mut self, i: usize, iterations: u64) {
        let log = &mut self.iterations[i];
        if log.quiet_effects_added {
            return;
        }
        log.quiet_effects_added = true;
        let quiet_iterations = iterations.saturating_sub(log.tail + 1);
        for logged in log.records.iter().filter(|logged| logged.quiet) {
            add_compiler_effects_times(
                (self.reuse.as_deref_mut(), self.fuser.as_deref_mut()),
                logged,
                quiet_iterations,
            );
        }
    }

    /// The index of `record`'s warp among the leaders, if it leads a class that others reuse.
    fn leader_of(&self, record: &MemRecord) -> Option<usize> {
        self.leader_of_warp(record.warp)
    }

    /// The index of `warp` among the leaders, if it leads a class that others reuse.
    fn leader_of_warp(&self, warp: u32) -> Option<usize> {
        let moved = self.moved.as_ref()?;
        let (k, q) = *moved.lead.get(warp as usize)?;
        (q == 0 && moved.classes.get(k)?.reusable).then_some(k)
    }
}

impl RecordSink for BlockSink<'_> {
    fn record(&mut self, record: &MemRecord) {
        let leader = self.leader_of(record);
        let logging = self
            .iterations
            .iter()
            .position(|log| log.logging && log.warp == record.warp);
        if leader.is_none() && logging.is_none() {
            self.pass(record, None, None);
            return;
        }
        if let Some(nested) = self
            .nested
            .as_mut()
            .filter(|nested| nested.warp == record.warp && !nested.reuse_checked)
        {
            // The inner iteration's first record: it must not reuse what the warp loaded before.
            nested.reuse_checked = true;
            nested.clean &= !may_reuse(self.reuse.as_deref(), record);
        }
        if let Some(i) = logging {
            if self.iterations[i].records.is_empty() {
                // The iteration's first record: it must not reuse what the warp loaded before.
                self.iterations[i].clean_start &= !may_reuse(self.reuse.as_deref(), record);
            }
        }
        let (mut before, mut after) = std::mem::take(&mut self.tallies);
        // The outputs go to the class's list if the warp leads one, else to the iteration's.
        let mut outputs = match (leader, logging) {
            (Some(j), _) => self
                .moved
                .as_mut()
                .map(|moved| std::mem::take(&mut moved.classes[j].kept))
                .unwrap_or_default(),
            (None, Some(i)) => std::mem::take(&mut self.iterations[i].outputs),
            (None, None) => Vec::new(),
        };
        let outputs_start = outputs.len();
        let reused_before = self.effects_so_far(&mut before);
        let mut shape = None;
        let issued = self.pass(record, Some(&mut outputs), Some(&mut shape));
        let reused_after = self.effects_so_far(&mut after);
        let shape = shape.map(Rc::new);
        let reused = ReusedLoads {
            instructions: reused_after.instructions - reused_before.instructions,
            lanes: reused_after.lanes - reused_before.lanes,
        };
        if let Some(i) = logging {
            let class_input = leader.and_then(|j| {
                self.moved
                    .as_ref()
                    .map(|moved| moved.classes[j].inputs.len())
            });
            let log = &mut self.iterations[i];
            if leader.is_some() {
                log.outputs.extend_from_slice(&outputs[outputs_start..]);
            } else {
                log.outputs = std::mem::take(&mut outputs);
            }
            log.records.push(LoggedRecord {
                issued,
                outputs_end: log.outputs.len(),
                shape: shape.clone(),
                reused,
                tally: TallyChanges::between(&before, &after),
                batched: false,
                copy: CopyKind::of(record),
                class_input,
                quiet: false,
                span: record.span,
                space: record.access.space,
                kind: record.access.kind,
                fences_passed: record.fences_passed,
                first_lane: record
                    .access
                    .lanes
                    .iter()
                    .enumerate()
                    .find_map(|(lane, address)| address.map(|address| (lane, address))),
            });
        }
        if let (Some(j), Some(moved)) = (leader, self.moved.as_mut()) {
            let class = &mut moved.classes[j];
            let start = class.outputs.len();
            for (k, (output, measure)) in outputs.iter().enumerate().skip(outputs_start) {
                class.push_move(output, measure.is_some(), 0, self.counting.device);
                class.outputs.push(k);
            }
            class.kept = outputs;
            let shape = shape.map(|shape| (shape, 0));
            class.push_input(start, issued, shape, (None, CopyKind::of(record)));
            class.reused.instructions += reused.instructions;
            class.reused.lanes += reused.lanes;
            add_tally_difference(&mut class.tally, &before, &after);
        }
        self.tallies = (before, after);
    }

    fn iteration_begins(&mut self, warp: u32) {
        let fuser_clean = self
            .fuser
            .as_deref()
            .is_none_or(|fuser| !fuser.has_pending(warp));
        let i = match self.iterations.iter().position(|log| log.warp == warp) {
            Some(i) => i,
            None => {
                self.iterations.push(IterationLog {
                    warp,
                    logging: false,
                    clean_start: false,
                    records: Vec::new(),
                    outputs: Vec::new(),
                    reusable: false,
                    tail: 1,
                    quiet_effects_added: false,
                    site_moves: Vec::new(),
                    output_moves: Vec::new(),
                    moved_measures: RefCell::new(Vec::new()),
                });
                self.iterations.len() - 1
            }
        };
        let log = &mut self.iterations[i];
        log.logging = true;
        log.clean_start = fuser_clean;
        log.records.clear();
        log.outputs.clear();
        log.reusable = false;
        log.quiet_effects_added = false;
        log.site_moves.clear();
        log.output_moves.clear();
        log.moved_measures.get_mut().clear();
    }

    fn iterations_end(&mut self, warp: u32) {
        // A warp that gave up skipping logs no more of its records.
        for log in self.iterations.iter_mut().filter(|log| log.warp == warp) {
            log.logging = false;
        }
    }

    fn repeats_begin(&mut self, warp: u32, moves: &[i64], iteration_fences: IterationFences) {
        let Some(i) = self
            .iterations
            .iter()
            .position(|log| log.logging && log.warp == warp)
        else {
            return;
        };
        let fuser_clean = self
            .fuser
            .as_deref()
            .is_none_or(|fuser| !fuser.has_pending(warp));
        let log = &mut self.iterations[i];
        log.logging = false;
        // The compiler effects must hold nothing at either end of the iteration, as below.
        let mut reusable = log.clean_start && fuser_clean && moves.len() == log.records.len();
        reusable &= gather_site_moves(&log.records, moves, &mut log.site_moves);
        let (alike, tail) =
            reuse_over_iterations(self.reuse.as_deref(), &log.records, moves, iteration_fences);
        log.tail = tail;
        reusable &= alike;
        // Every record counted comes from one of the iteration's own.
        reusable &= log
            .outputs
            .iter()
            .all(|(output, _)| log.site_moves.iter().any(|site| site.holds(output)));
        reusable &= effects_move_alike(
            self.reuse.as_deref(),
            self.fuser.as_deref(),
            &log.site_moves,
        );
        log.reusable = reusable;
    }

    fn record_repeated(&mut self, record: &MemRecord, repeated: &Repeated) {
        self.repeat(record, repeated, false);
    }

    /// A quiet record's repeats (`LoggedRecord::quiet`) need not be handed: they are counted
    /// here, for all the iterations batched at once, as the first of them would be; their
    /// compiler effects are added here for every iteration they are quiet in; and the profile
    /// needs to know only that the warp ran. A leader's class takes every record, iterations
    /// on, so a leader needs them all, and so does the traced warp.
    fn repeats_needed(&mut self, warp: u32, iterations: u64) -> Option<RepeatsNeeded> {
        if self.leader_of_warp(warp).is_some() {
            return None;
        }
        let traced_warp = self
            .counting
            .trace
            .as_deref()
            .is_some_and(|trace| trace.request().warp == warp);
        if traced_warp {
            return None;
        }
        let i = self.reusable_log(warp)?;
        let device = self.counting.device;
        let log = &mut self.iterations[i];
        // The batched iterations are the 1st to the `iterations - tail`-th, as `repeat` takes
        // them; a log with no quiet record needs every record of them.
        if iterations < log.tail + 2 {
            return None;
        }
        let times = iterations - log.tail;
        log.output_moves(device);
        // As `repeat` decides at the first skipped iteration (the warp neither traced nor
        // leading, as above).
        for k in 0..log.records.len() {
            log.decide_repeats(k, times, false, false);
        }
        if !log.records.iter().any(|logged| logged.quiet) {
            return None;
        }
        // What the first skipped iteration's repeat of each quiet record counts, for all the
        // iterations batched, and adds to the compiler effects.
        let log = &self.iterations[i];
        for (k, logged) in log.records.iter().enumerate() {
            if !logged.quiet {
                continue;
            }
            log.count_batched(k, times, &mut self.counting);
            add_compiler_effects(
                (self.reuse.as_deref_mut(), self.fuser.as_deref_mut()),
                logged,
            );
        }
        let needs = log
            .records
            .iter()
            .map(|logged| match (logged.quiet, logged.issued, logged.copy) {
                (false, _, _) => RepeatNeed::Record,
                (true, true, CopyKind::WarpOnly) => RepeatNeed::WarpRan,
                (true, _, _) => RepeatNeed::Nothing,
            })
            .collect();
        let tail = log.tail;
        self.add_quiet_effects(i, iterations);
        Some(RepeatsNeeded { tail, needs })
    }

    fn repeats_ran(&mut self, warp: u32) {
        self.profiler.warp_runs(warp);
    }

    fn record_repeated_from(&mut self, ran: &MemRecord, repeated: &Repeated) {
        self.repeat(ran, repeated, true);
    }

    fn warps_alike(&mut self, warps: &WarpsAlike<'_>) {
        let mut spare = std::mem::take(self.spare_classes);
        let classes = warps
            .site_moves
            .iter()
            .map(|sites| {
                let mut class = spare.pop().unwrap_or_default();
                class.clear();
                let Some(sites) = sites else {
                    return class;
                };
                class.reusable =
                    effects_move_alike(self.reuse.as_deref(), self.fuser.as_deref(), sites);
                class.site_moves.extend_from_slice(sites);
                class
            })
            .collect();
        *self.spare_classes = spare;
        self.moved = Some(MovedWarps {
            block: warps.block,
            leaders: warps.leaders.to_vec(),
            lead: warps.lead.to_vec(),
            classes,
        });
    }

    fn records_repeated_from<'r>(
        &mut self,
        count: usize,
        repeated: &dyn Fn(usize) -> (&'r MemRecord, Repeated),
    ) {
        let Some((ran, _)) = (count > 0).then(|| repeated(0)) else {
            return;
        };
        let warp = ran.warp;
        let log = self.reusable_log(warp);
        let leader = self.leader_of(ran);
        let mut noted = false;
        for i in 0..count {
            let (ran, repeated) = repeated(i);
            // After the first skipped iteration, a quiet record (`LoggedRecord::quiet`) only
            // notes that the warp ran and adds what its iteration run added to the compiler
            // effects' tallies, and its class takes it as that record, iterations on.
            let quiet = log.filter(|&i| {
                let log = &self.iterations[i];
                repeated.iteration > 1
                    && repeated.iteration + log.tail <= repeated.iterations
                    && log
                        .records
                        .get(repeated.index)
                        .is_some_and(|logged| logged.quiet)
            });
            let Some(log) = quiet else {
                self.repeat_logged(ran, &repeated, true, log);
                continue;
            };
            self.add_quiet_effects(log, repeated.iterations);
            let logged = &self.iterations[log].records[repeated.index];
            if logged.issued && logged.copy == CopyKind::WarpOnly && !noted {
                self.profiler.warp_runs(warp);
                noted = true;
            }
            let class = leader.and_then(|j| self.moved.as_mut().map(|moved| &mut moved.classes[j]));
            if let (Some(class), Some(run)) = (class, logged.class_input) {
                let shape = logged.shape.clone().map(|shape| (shape, repeated.by));
                class.push_repeat(run, repeated.iteration as i64, shape, Some(0));
                class.add_effects_of(logged);
            }
        }
    }

    fn iterations_repeated_from(&mut self, batch: &IterationsRepeated<'_>) {
        let from = self.repeat_iterations(batch);
        if from <= batch.last {
            batch.each_from(self, from);
        }
    }

    fn nested_iteration_begins(&mut self, warp: u32) {
        let fuser_clean = self
            .fuser
            .as_deref()
            .is_none_or(|fuser| !fuser.has_pending(warp));
        self.nested = self
            .iterations
            .iter()
            .find(|log| log.logging && log.warp == warp)
            .map(|log| NestedStart {
                warp,
                records: log.records.len(),
                clean: fuser_clean,
                reuse_checked: false,
            });
    }

    fn nested_iterations_repeated(&mut self, batch: &IterationsRepeated<'_>) {
        let from = self.log_nested_repeats(batch);
        if from <= batch.last {
            batch.each_record_from(self, from);
        }
    }

    fn records_moved<'r>(
        &mut self,
        count: usize,
        moved: &dyn Fn(usize) -> (&'r MemRecord, MovedRecord),
    ) {
        let Some((record, first)) = (count > 0).then(|| moved(0)) else {
            return;
        };
        let (warp, from, index) = (first.warp, first.from as usize, first.index);
        let reusable = self.moved.as_ref().is_some_and(|moved| {
            moved.classes.get(from).is_some_and(|class| {
                class.reusable && index.saturating_add(count) <= class.inputs.len()
            })
        });
        let inert = |sink: &BlockSink<'_>, i: usize| {
            sink.moved.as_ref().map_or(Inert::No, |moved| {
                moved.classes[from].inputs[index + i].inert()
            })
        };
        if !reusable || self.traced(record.block, warp) {
            for i in 0..count {
                let (record, moved_record) = moved(i);
                self.pass(&moved_record.of(record), None, None);
            }
            return;
        }
        let mut noted = false;
        for i in 0..count {
            // A copy that only notes that its warp ran is not asked for: the warp's copies
            // until its next barrier note it once.
            match inert(self, i) {
                Inert::No => {}
                Inert::Quiet => continue,
                Inert::NotesWarp => {
                    if !noted {
                        self.profiler.warp_runs(warp);
                        noted = true;
                    }
                    continue;
                }
            }
            let (record, moved_record) = moved(i);
            self.copy_moved(record, &moved_record);
        }
    }

    /// A run of one: the same checks and the same copy as `records_moved`'s.
    fn record_moved(&mut self, record: &MemRecord, moved_record: &MovedRecord) {
        self.records_moved(1, &|_| (record, *moved_record));
    }
}

impl BlockSink<'_> {
    /// A record of a warp shown alike to a leader whose class it may reuse, the warp not the
    /// traced one (`RecordSink::records_moved`): the profile sees the copy, and the counting what
    /// the leader's record counted, moved.
    fn copy_moved(&mut self, record: &MemRecord, moved_record: &MovedRecord) {
        let MovedRecord {
            warp, from, index, ..
        } = *moved_record;
        let BlockSink {
            counting,
            profiler,
            moved,
            shapes,
            ..
        } = self;
        let Some(moved) = moved.as_ref() else {
            return;
        };
        let class = &moved.classes[from as usize];
        let q = i64::from(moved_record.steps);
        let first = &class.inputs[index];
        let (start, end) = first.outputs;
        if first.issued {
            let (origin, from) = first
                .shape
                .as_ref()
                .map_or((None, 0), |(shape, from)| (Some(shape), *from));
            profile_copy(
                profiler,
                shapes,
                (
                    Issue {
                        order: moved_record.order(record),
                        ..Issue::of(record)
                    },
                    warp,
                    first.copy,
                ),
                origin,
                from.wrapping_add(moved_record.by),
                || moved_record.of(record),
            );
        }
        if first.counts_nothing_more() {
            return;
        }
        for (&k, output_move) in class.outputs[start..end]
            .iter()
            .zip(&class.moves[start..end])
        {
            let by = output_move.per_step * q;
            // Moved so that every rule sees it alike, the access counts as the leader's, and as
            // this warp is not the traced one, where it lies is not needed.
            let holds = output_move.holds(q);
            if holds && first.counted == Some(0) {
                continue;
            }
            match (&class.kept[k], holds) {
                ((output, Some(measure)), true) => match first.counted {
                    Some(times) => counting.count_untraced_times(output, measure, times),
                    None => counting.count_untraced(output, measure),
                },
                ((output, _), _) => {
                    let mut output = *output;
                    output.warp = warp;
                    let lies = output_move
                        .lies
                        .wrapping_add(output_move.per_iteration.wrapping_mul(first.iteration));
                    kernel::move_lanes(&mut output.access, by.wrapping_add(lies));
                    counting.count(&output);
                }
            }
        }
    }
}

/// Traces a block that is not counted: the requested warp's block when the sampling does not
/// run it. Its records pass through a fuser of their own, so they are what a counted block's
/// would be.
struct TraceSink<'a> {
    reuse: Option<LoadReuse>,
    fuser: Option<LoadFuser>,
    trace: &'a mut TraceRecorder,
}

impl RecordSink for TraceSink<'_> {
    fn record(&mut self, record: &MemRecord) {
        let TraceSink {
            reuse,
            fuser,
            trace,
        } = self;
        let mut issued = |record: &MemRecord| match fuser {
            Some(fuser) => fuser.push(record, &mut |r| trace.record(r)),
            None => trace.record(record),
        };
        match reuse {
            Some(reuse) => reuse.push(record, &mut issued),
            None => issued(record),
        }
    }
}

/// Whether block `other` does block `run`'s work with every buffer's addresses moved by whole
/// 128-byte lines (or half a line more, where the run's requests allow it), given that the
/// kernel shifts them and depends on `guards` (from `kernel::block_shift`), the sectors `run`
/// touched in each buffer of the profiler's layout (`ranges`) and the differences its guards
/// compared (`guard_ranges`): the moved sectors must stay in their buffer, as the interpreter
/// would otherwise have stopped `other` at an out-of-bounds access, and every guard must come
/// out alike.
fn runs_alike(
    (buffers, guards): (&[ShiftedBuffer], &[Guard]),
    ranges: &[TouchedRange],
    guard_ranges: &[GuardRange],
    run: [u32; 3],
    other: [u32; 3],
) -> bool {
    let shift_of = |per_block: [i64; 3]| -> i128 {
        (0..3)
            .map(|d| i128::from(per_block[d]) * (i128::from(other[d]) - i128::from(run[d])))
            .sum()
    };
    let guards_alike = guards
        .iter()
        .zip(guard_ranges)
        .all(|(guard, &range)| guard.holds_alike(range, shift_of(guard.shift)));
    guards_alike
        && buffers.iter().all(|buffer| {
            let shift = shift_of(buffer.bytes_per_block);
            if shift == 0 {
                return true;
            }
            let Some(range) = ranges.iter().find(|r| r.base == buffer.base) else {
                return false;
            };
            // Whole lines, or half a line more where no request nor the block fills a line's
            // two halves or the halves about a line's end (`TouchedRange::half_line_shift_safe`).
            let line = i128::from(LINE_BYTES);
            let aligned = shift % line == 0
                || (shift.rem_euclid(line) == line / 2 && range.half_line_shift_safe);
            if !aligned {
                return false;
            }
            // A buffer the run block never touched is touched by no block: they branch alike.
            let Some((first, last)) = range.sectors else {
                return true;
            };
            let start = i128::from(first) * i128::from(SECTOR_BYTES) + shift;
            let end = (i128::from(last) + 1) * i128::from(SECTOR_BYTES) + shift;
            start >= i128::from(buffer.base)
                && end <= i128::from(buffer.base) + i128::from(buffer.size)
        })
}

/// Whether `class`'s block, which issued `issued` instructions, issued another number than both
/// ends of its row along a dimension it is interior in (`issued_by_block`: the blocks run or
/// shown alike so far): its work changes across the grid, and its class is split into strata.
fn varies_along_a_row(
    class: &BlockClass,
    issued: u64,
    issued_by_block: &[([u32; 3], u64)],
    grid: [u32; 3],
) -> bool {
    let differs_from = |d: usize, index: u32| {
        let mut end = class.representative;
        end[d] = index;
        issued_by_block
            .iter()
            .any(|&(block, other)| block == end && other != issued)
    };
    (0..3).any(|d| {
        class.position[d] == EdgePosition::Interior
            && differs_from(d, 0)
            && differs_from(d, grid[d].max(1) - 1)
    })
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

/// Where block index `index` lies along a grid dimension of `extent` blocks.
fn position_of(index: u32, extent: u32) -> EdgePosition {
    match extent {
        0 | 1 => EdgePosition::Only,
        _ if index == 0 => EdgePosition::First,
        _ if index + 1 == extent => EdgePosition::Last,
        _ => EdgePosition::Interior,
    }
}

/// Simulates one launch: see the module documentation.
pub fn simulate(input: &SimulationInput) -> Result<SimulationReport, SimulationError> {
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
    let unit = kernel::parse(&input.source, &input.defines)?;
    let program = kernel::sema::check(&unit)?;
    if let Some(kernel) = program.kernel_index(&input.kernel) {
        let uses = crate::capability::features_used(&program, kernel);
        if let Some(unsupported) = crate::capability::first_unsupported(
            &uses,
            input.device.id,
            input.device.compute_capability,
        ) {
            return Err(SimulationError::Unsupported(unsupported));
        }
    }
    let launch = Launch {
        grid: input.grid,
        block: input.block,
        dyn_smem: input.dyn_smem,
        args: input.args.clone(),
        buffers: input.buffers.clone(),
        fills: input.fills.clone(),
    };
    let mut sim = Simulation::new(&program, &input.kernel, &launch, input.seed)?;
    let shared_bytes_per_block = sim.shared_bytes_per_block();
    let layout = sim.global_objects();
    let mut profiler = BlockProfiler::new(&input.device, layout.clone());
    if let Some(kernel) = program.kernel_index(&input.kernel) {
        profiler.set_uniform_atomic_sites(kernel::uniformity::uniform_atomic_sites(
            &program.functions[kernel],
        ));
    }
    let mut profile = ProfileBuilder::new(&input.device, &layout);
    let occupancy = occupancy::calculate(
        &input.device,
        BlockResources {
            threads_per_block,
            regs_per_thread: input.regs,
            smem_per_block: u32::try_from(shared_bytes_per_block).unwrap_or(u32::MAX),
        },
    )
    .map_err(SimulationError::DoesNotLaunch)?;

    // Blocks that provably do the same work at addresses shifted by whole lines (sectors,
    // lines, banks and DRAM atoms then fall alike) make the same counters and profile: such a
    // class reuses another block's run. Not on cc 1.x, whose DRAM rows and partitions see
    // absolute addresses.
    let shifted = (input.sampling == BlockSampling::EdgeClasses
        && input.device.global_coalescing == GlobalCoalescing::Sectors
        && input.device.timing.dram_rows.is_none())
    .then(|| sim.shifted_buffers())
    .flatten();
    if shifted.is_some() {
        profiler.watch_half_lines();
    }
    // Warps that provably do the same work at moved addresses: the first of each class runs and
    // the others' records are its own, moved (`kernel::interp` `warps`). The records are those a
    // full run makes, so this holds on every device.
    // Loops whose iterations provably do the same work at moved addresses: a warp runs an
    // iteration and the records of the ones after it are its own, moved (`kernel::interp`
    // `loops`). These too are the records a full run makes.
    let fusible = fusible_loads(&unit, &program);
    if input.sampling == BlockSampling::EdgeClasses {
        sim.show_warps_alike();
        // A fused read moves by whole fused loads from one skipped iteration to the next, so
        // that its reads pair up alike (`effects_move_alike`).
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
    // Every block is its own class under `All`; they are made one at a time, as the budget
    // allows, never all at once.
    let mut classes: Box<dyn Iterator<Item = BlockClass>> = match input.sampling {
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
    };
    let mut fuser = input
        .compile
        .fuse_shared_loads
        .then(|| LoadFuser::new(fusible.clone()));
    let load_classes = kernel::issue::load_classes(&program.functions);
    let mut reuse = input
        .compile
        .reuse_loaded_values
        .then(|| LoadReuse::new(load_classes.clone()));
    let mut fused: Vec<FusionSite> = Vec::new();

    let mut totals = Counters::default();
    let mut lines = LineTally::default();
    let mut shared_measures = SharedMeasures::default();
    let mut spare_classes = Vec::new();
    // The warps' iteration logs of the block before, whose vectors the next block fills again
    // instead of growing anew (a matmul's warp logs some 70 records of 600 bytes).
    let mut spare_logs: Vec<IterationLog> = Vec::new();
    let mut trace = input.trace.map(TraceRecorder::new);
    let mut traced_block_ran = false;
    let mut sampled_blocks = Vec::new();
    let mut steps = 0u64;
    // The strata of a class whose blocks do not work alike (`sampling::strata`), run after it.
    let mut strata: Vec<BlockClass> = Vec::new();
    let mut issued_by_block: Vec<([u32; 3], u64)> = Vec::new();
    // The first block run and the global sectors it touched: the launch's repetition is checked
    // against them (`repeat_moves_on`).
    let mut first_block: Option<([u32; 3], TouchedSectors)> = None;
    // With runs reused, the classes run out of their own order: whether a class with an
    // interior position works like the ends of its rows (the strata check below) is known only
    // once every class has run or been shown alike. Each such class, with what it issued.
    let mut deferred_checks: Vec<(BlockClass, u64)> = Vec::new();
    while let Some((class, from_strata)) = strata
        .pop()
        .map(|stratum| (stratum, true))
        .or_else(|| classes.next().map(|class| (class, false)))
    {
        traced_block_ran |= input
            .trace
            .is_some_and(|request| request.block == class.representative);
        let mut sink = BlockSink {
            counting: Counting {
                device: &input.device,
                counters: Counters::default(),
                lines: &mut lines,
                trace: trace.as_mut(),
                shared_measures: &mut shared_measures,
            },
            reuse: reuse.as_mut(),
            fuser: fuser.as_mut(),
            profiler: &mut profiler,
            moved: None,
            spare_classes: &mut spare_classes,
            iterations: std::mem::take(&mut spare_logs),
            tallies: (Vec::new(), Vec::new()),
            shapes: ShapeCopies::default(),
            nested: None,
        };
        // The interpreter stops a block that runs past what is left of the budget, and the
        // blocks' sum is checked after each block, so the whole run is bounded by the budget. A
        // block counts at least one step, so that even empty blocks cannot run without end.
        let remaining = input.step_budget.saturating_sub(steps);
        let stats = match sim.run_block_into(class.representative, remaining, &mut sink) {
            Ok(stats) => stats,
            // The interpreter only knows what was left of the budget; the user set the whole of
            // it, so the error names that, with the place the block had reached.
            Err(diagnostic)
                if diagnostic.message == kernel::interp::step_budget_message(remaining) =>
            {
                return Err(SimulationError::StepBudget {
                    steps: input.step_budget,
                    budget: input.step_budget,
                    span: diagnostic.span,
                });
            }
            // The blocks ran in another order to reuse runs: the error must be the one of the
            // first failing block in the classes' own order, so they run again so.
            Err(_) if shifted.is_some() => return simulate_each_class_run(input),
            Err(diagnostic) => return Err(SimulationError::Kernel(diagnostic)),
        };
        sink.finish_moved_warps();
        // An interior block that issues other instructions than both the first and the last
        // block of its row (along a dimension it is interior in) shows work that changes across
        // the grid: it speaks only for the blocks near it, its class is split into strata, and
        // it counts for its own. Both ends have run already (`sampling::classes` lists them
        // first); a kernel whose ends alone differ (a bounds check, `i > 0`) is left as it is.
        let mut weight = class.n_blocks;
        issued_by_block.push((class.representative, stats.issued_instructions));
        if shifted.is_some() {
            if class.n_blocks > 0 {
                deferred_checks.push((class.clone(), stats.issued_instructions));
            }
        } else if !from_strata
            && matches!(
                input.sampling,
                BlockSampling::EdgeClasses | BlockSampling::EdgeClassesEachRun
            )
            && varies_along_a_row(&class, stats.issued_instructions, &issued_by_block, grid)
        {
            for stratum in sampling::strata(&class, grid) {
                if stratum.representative == class.representative {
                    weight = stratum.n_blocks;
                } else {
                    strata.push(stratum);
                }
            }
        }
        // A block run may stand for the classes not yet run (the interior one, run first, for
        // most): where it touched each buffer decides which. A class whose shift from it is not a
        // whole number of lines (nor half a line more, where the block's requests allow it) may
        // be from a later one.
        let ranges =
            (shifted.is_some() && !from_strata).then(|| sink.profiler.touched_sector_ranges());
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
        spare_logs = iterations;
        // The classes whose blocks do this one's work at shifted addresses count with it.
        let mut reused_for = Vec::new();
        // The class the run is listed as: its own, or for the trace's block (a class of no blocks
        // of its own), the class of that block if shown alike, else the first shown alike.
        let mut listed_as = class.position;
        if let (Some((buffers, guards)), Some(ranges)) = (&shifted, ranges) {
            let (alike, differ): (Vec<BlockClass>, Vec<BlockClass>) = classes.partition(|other| {
                runs_alike(
                    (buffers, guards),
                    &ranges,
                    sim.guard_ranges(),
                    class.representative,
                    other.representative,
                )
            });
            classes = Box::new(differ.into_iter());
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
                issued_by_block.push((other.representative, stats.issued_instructions));
                deferred_checks.push((other, stats.issued_instructions));
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
            let scale = weight as f64;
            // A run that stands for no block (the trace's, shown alike to no class) adds no
            // fused site, so that the sites keep the order the first counted run finds them in.
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
        }
        let mut counters = counting.counters;
        // Only a launch whose first block's addresses followed loaded data is run again: the
        // sectors are kept for it alone, as a large block touches millions.
        if sampled_blocks.is_empty() && profiler.data_steered() {
            first_block = Some((class.representative, profiler.touched_sectors()));
        }
        profile.add_block(&mut profiler, weight as f64);
        lines.finish_block(weight as f64);
        counters.fp32_flops = stats.flops as f64;
        counters.warp_instructions = stats.warp_instructions.saturating_sub(removed) as f64;
        counters.fp32_issued_flops = stats.fp32_issued_flops as f64;
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
        totals.add_scaled(&counters, weight as f64);
        steps = steps.saturating_add(stats.steps.max(1));
        if steps > input.step_budget {
            let span = program
                .kernel(&input.kernel)
                .map(|function| function.span)
                .unwrap_or_default();
            return Err(SimulationError::StepBudget {
                steps,
                budget: input.step_budget,
                span,
            });
        }
        if weight > 0 {
            sampled_blocks.push(SampledBlock {
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
    }

    // Had a class's block issued other instructions than both ends of its row, the classes' own
    // order would have split it into strata: run them so.
    if deferred_checks
        .iter()
        .any(|(class, issued)| varies_along_a_row(class, *issued, &issued_by_block, grid))
    {
        return simulate_each_class_run(input);
    }

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
    })
}

/// Feeds a block's records to a profiler alone, to see which sectors it touches.
struct ProfileOnly<'a> {
    profiler: &'a mut BlockProfiler,
}

impl RecordSink for ProfileOnly<'_> {
    fn record(&mut self, record: &MemRecord) {
        self.profiler.record(record);
    }
}

/// The share of the sectors that a repetition of the launch touches and the first run did not,
/// seen from `block`: it runs again on the memory the launch left, as the next timed launch
/// would find it. The hardware's L2 still holds what the previous launch touched (`timing`), so a
/// kernel that walks the same lines every time finds them there; one whose addresses follow data
/// it wrote (probe group C's `p_mlp*`, which keeps each warp's position in `state`) moves on to
/// lines the L2 does not hold. Only launches whose load addresses follow loaded data can move
/// on, and only they pay for the extra block. A block the budget cannot run again is taken to
/// stay where it was.
fn repeat_moves_on(
    sim: &mut Simulation<'_>,
    input: &SimulationInput,
    layout: &[(String, u64, u64)],
    block: [u32; 3],
    first_sectors: &TouchedSectors,
    steps: &mut u64,
) -> f64 {
    let mut profiler = BlockProfiler::new(&input.device, layout.to_vec());
    let remaining = input.step_budget.saturating_sub(*steps);
    let Ok(stats) = sim.run_block_into(
        block,
        remaining,
        &mut ProfileOnly {
            profiler: &mut profiler,
        },
    ) else {
        return 0.0;
    };
    *steps = steps.saturating_add(stats.steps.max(1));
    let again = profiler.touched_sectors();
    if again.is_empty() {
        return 0.0;
    }
    let new = again.iter().filter(|s| !first_sectors.contains(s)).count();
    new as f64 / again.len() as f64
}

/// Why `request` names no warp of the launch, if it does not.
fn outside_the_launch(request: TraceRequest, input: &SimulationInput) -> Option<String> {
    let TraceRequest { block, warp } = request;
    let [x, y, z] = block;
    let grid = input.grid;
    if x >= grid.x || y >= grid.y || z >= grid.z {
        return Some(format!(
            "block ({x}, {y}, {z}) is outside the grid of {}x{}x{} blocks",
            grid.x, grid.y, grid.z
        ));
    }
    let warps = checked_product([input.block.x, input.block.y, input.block.z]).div_ceil(32);
    (u64::from(warp) >= warps).then(|| format!("warp {warp} is beyond the block's {warps} warps"))
}

/// Runs the traced warp's block, which the sampling did not run, for its trace alone: with what
/// is left of the step budget, after every counted block, so nothing it does reaches a counter.
/// Returns why the trace stops short, if it does.
fn trace_uncounted_block(
    sim: &mut Simulation<'_>,
    input: &SimulationInput,
    remaining: u64,
    recorder: &mut TraceRecorder,
    load_classes: &HashMap<(u32, u32), u32>,
    fusible: &[FusibleLoad],
) -> Option<String> {
    let block = recorder.request().block;
    let [x, y, z] = block;
    let mut sink = TraceSink {
        reuse: input
            .compile
            .reuse_loaded_values
            .then(|| LoadReuse::new(load_classes.clone())),
        fuser: input
            .compile
            .fuse_shared_loads
            .then(|| LoadFuser::new(fusible.to_vec())),
        trace: recorder,
    };
    let result = sim.run_block_into(block, remaining, &mut sink);
    let TraceSink { fuser, trace, .. } = sink;
    if let Some(mut fuser) = fuser {
        fuser.finish(&mut |r| trace.record(r));
    }
    result.err().map(|diagnostic| {
        // The interpreter names only what was left of the budget, which is not a number the
        // student set.
        let why = if diagnostic.message == kernel::interp::step_budget_message(remaining) {
            "what was left of the step budget ran out".to_string()
        } else {
            diagnostic.message
        };
        one_line(&format!(
            "block ({x}, {y}, {z}) stopped at {}: {why}",
            diagnostic.span
        ))
    })
}

/// The product of three extents, saturating at `u64::MAX` rather than wrapping.
fn checked_product(extents: [u32; 3]) -> u64 {
    extents
        .iter()
        .try_fold(1u64, |product, &extent| {
            product.checked_mul(u64::from(extent))
        })
        .unwrap_or(u64::MAX)
}

/// Every block of the grid as a class of its own, x fastest, made as they are asked for.
fn every_block(grid: [u32; 3]) -> impl Iterator<Item = BlockClass> {
    let position = |index: u32, extent: u32| match (index, extent) {
        (_, 0 | 1) => EdgePosition::Only,
        (0, _) => EdgePosition::First,
        (i, n) if i + 1 == n => EdgePosition::Last,
        _ => EdgePosition::Interior,
    };
    let [gx, gy, gz] = grid.map(|extent| extent.max(1));
    (0..gz).flat_map(move |z| {
        (0..gy).flat_map(move |y| {
            (0..gx).map(move |x| BlockClass {
                position: [
                    position(x, grid[0]),
                    position(y, grid[1]),
                    position(z, grid[2]),
                ],
                representative: [x, y, z],
                n_blocks: 1,
            })
        })
    })
}

/// The greatest common divisor of two numbers, not both 0.
fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{g80, h100};

    use crate::lesson_kernels::{ADJ_DIFF, BANKS, MATMUL};

    /// A shared load of warp 0 at a site, lane `l` at `address(l)`.
    fn shared_load(address: impl FnMut(u32) -> Option<u64>) -> MemRecord {
        MemRecord {
            access: WarpAccess::from_fn(
                Space::Shared,
                AccessKind::Load,
                crate::access::AccessWidth::new(4).expect("4 bytes is a width"),
                address,
            ),
            span: Span {
                line: 3,
                col: 5,
                start: 40,
                end: 52,
            },
            block: [0, 0, 0],
            warp: 0,
            order: kernel::LoadOrder::default(),
            fences_passed: 0,
        }
    }

    #[test]
    fn a_shared_access_found_again_keeps_its_measure_and_one_that_differs_is_measured_anew() {
        let device = h100();
        let mut measures = SharedMeasures::default();
        let mut check = |record: &MemRecord, wavefronts: u32| {
            let measure = measures.of(record, &device).expect("lanes are active");
            assert_eq!(Some(measure), AccessMeasure::of(&record.access, &device));
            assert_eq!(measure.cost.wavefronts, wavefronts);
        };
        // A row of a 32 x 32 float tile, then its column (32-way), then the row again, and a
        // column that starts at the row's first word: the same site, warp and first address.
        let row = shared_load(|lane| Some(4 * u64::from(lane)));
        let column = shared_load(|lane| Some(128 * u64::from(lane)));
        check(&row, 1);
        check(&column, 32);
        check(&row, 1);
        check(&column, 32);
        // The two share one place in the map, each replacing the other; no lane active:
        // nothing to measure, nothing kept.
        assert_eq!(measures.of(&shared_load(|_| None), &device), None);
        assert_eq!((measures.places.len(), measures.entries.len()), (1, 1));
    }

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

    /// A warp that keeps its position in `state`: each lane reads `buf` at its position and
    /// moves it on by `step` rows of 32 words.
    fn walk(step: u32) -> SimulationInput {
        let source = format!(
            "__global__ void walk(const int* buf, int* state) {{\n\
             int t = threadIdx.x;\n\
             int j = state[t];\n\
             int v = buf[j * 32 + t];\n\
             state[t] = j + {step} + (v & 0);\n}}\n"
        );
        let mut input = SimulationInput::new(&source, "walk", h100());
        input.grid = Dim3::new(1, 1, 1);
        input.block = Dim3::new(32, 1, 1);
        input.buffers = vec![("buf".to_string(), 4096 * 4), ("state".to_string(), 128)];
        input.fills = vec![("state".to_string(), Fill::Zeros)];
        input
    }

    #[test]
    fn a_kernel_that_moves_its_own_position_finds_new_lines_in_the_next_launch() {
        // Probe group C: the repetition reads four sectors of `buf` the first run did not, and the
        // four sectors of `state` again.
        let moved = simulate(&walk(8)).expect("the launch simulates");
        assert_eq!(moved.memory.repeat_moves_on, 0.5);
        let stays = simulate(&walk(0)).expect("the launch simulates");
        assert_eq!(stays.memory.repeat_moves_on, 0.0);
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
                device: crate::device::DeviceId::G80,
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
        crate::kernel::limits::MAX_MESSAGE_CHARS - 1
    }

    #[test]
    fn a_spent_budget_names_the_budget_in_words_any_front_end_can_show() {
        let error = SimulationError::StepBudget {
            steps: 2_000_417,
            budget: 2_000_000,
            span: Span {
                line: 9,
                col: 1,
                start: 200,
                end: 300,
            },
        };
        assert_eq!(
            error.to_string(),
            "9:1: the simulation used up its step budget of 2000000 steps"
        );
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
                what: crate::device::LaunchPart::Grid,
                axis: crate::device::Axis::Y,
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
}
