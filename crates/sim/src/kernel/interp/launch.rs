//! A launch and what its blocks give out: the grid, block and arguments a kernel is launched with
//! (`Launch`), the memory objects it is laid out into (`RtObject`), the records a block's warps
//! make (`MemRecord`, with its place among the warp's loads, and the forms a record of a warp or
//! iteration that did not run takes: `MovedRecord`, `Repeated`), the sink that takes them
//! (`RecordSink`), and what a block did besides (`BlockStats`, summed from each warp's
//! `WarpWork`).
//!
//! It is plain data that the rest of the interpreter builds on, and names no other module of it:
//! the block loop that fills it is `simulation`'s.

use crate::access::{AccessKind, Space, WarpAccess};
use crate::kernel::ast::{Scalar, Type};
use crate::kernel::ir::{FunctionIr, ParamInfo, PredicatedBody};
use crate::kernel::memory::Fill;
use crate::kernel::span::MemoryObject;
use crate::kernel::span::{Diagnostic, Span};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Three extents or indices, as CUDA's `dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    pub fn count(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }
}

/// A scalar argument of a launch; it is converted to the parameter's type.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// As the value would be written in the source: `64`, `64.5`, `64.0`, `true`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            // Debug keeps the point of a whole number (`64.0`) and writes 1e300 as `1e300`.
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// One kernel launch: `kernel<<<grid, block, dyn_smem>>>(args...)`. Scalar parameters take their
/// value from `args`, pointer parameters get a buffer of the given number of bytes each, filled
/// as `fills` says (`crate::fill`; a buffer it does not name holds small random values). A
/// pointer parameter points at the start of the buffer named after it, unless `pointers` names
/// another buffer or an offset for it (`crate::pointer_argument`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Launch {
    pub grid: Dim3,
    pub block: Dim3,
    pub dyn_smem: u32,
    pub args: Vec<(String, Value)>,
    pub buffers: Vec<(String, u64)>,
    pub fills: Vec<(String, crate::fill::Fill)>,
    pub pointers: Vec<crate::pointer_argument::PointerArgument>,
}

/// Which blocks of the grid to run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum BlockSelection {
    All,
    List(Vec<[u32; 3]>),
}

/// How to run: the step budget (over all the blocks of the run), the blocks, and the seed of the
/// buffers' contents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunConfig {
    pub step_budget: u64,
    pub blocks: BlockSelection,
    pub seed: u64,
}

/// One warp-level memory instruction as it executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemRecord {
    pub access: WarpAccess,
    pub span: Span,
    pub block: [u32; 3],
    pub warp: u32,
    /// For a global or local load: where it stands among the warp's loads (`timing`'s round trips).
    pub order: LoadOrder,
    /// The barriers and fences (`__syncthreads`, `__syncwarp`, `__threadfence`) the warp has
    /// passed: the compiler keeps no loaded value across one (`compile_effects::LoadReuse`).
    pub fences_passed: u32,
}

/// A global or local load's place among its warp's loads, for the round trips of the timing
/// model: a warp issues loads until one needs the data of a load still in flight (its address,
/// or a branch before it, depends on that data) or until nvcc's unrolling has no more copies of
/// the load to hoist (probe groups C and D).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LoadOrder {
    /// 1 for the warp's first global or local load, 2 for its second, ...; 0 for other records.
    pub sequence: u32,
    /// The latest of the warp's loads whose data this load's address, or a branch the warp took
    /// before it, was computed from (0: none).
    pub waits_for: u32,
    /// How many executions of this load nvcc's unrolling lets the warp have in flight together
    /// (`issue`); 0 where no interpreter stamped the record.
    pub in_flight: u32,
}

/// A warp's loads so far and what its control flow waited for (`LoadOrder`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Dependence {
    pub(super) loads: u32,
    pub(super) control: u32,
    pub(super) fences: u32,
}

/// The order a record carries: a global or local load is the warp's next one, with what it
/// waits for and the loads in flight its op allows; any other record has none.
pub(super) fn stamp(
    dependence: &mut Dependence,
    waits_for: u32,
    in_flight: u32,
    space: Space,
    kind: AccessKind,
) -> LoadOrder {
    if kind != AccessKind::Load || !matches!(space, Space::Global | Space::Local) {
        return LoadOrder::default();
    }
    dependence.loads += 1;
    LoadOrder {
        sequence: dependence.loads,
        waits_for,
        in_flight,
    }
}

/// The fences (`__syncthreads`, `__syncwarp`, `__threadfence`) a warp passes in one iteration
/// of a loop whose iterations it skips (`RecordSink::repeats_begin`)...
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IterationFences {
    pub per_iteration: u32,
    /// ... and how many of them come after the iteration's last record: where there is one, no
    /// record after the iteration can reuse a value it loaded (`compile_effects::LoadReuse`).
    pub after_last_record: u32,
}

/// What a sink still needs of the records that repeat those of the iteration a warp ran
/// (`RecordSink::repeats_needed`), where it took what they make at once: the skipped iterations
/// before the last `tail` need hand only the records marked `RepeatNeed::Record`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepeatsNeeded {
    pub tail: u64,
    /// Per record of the iteration run; a record past the end is needed.
    pub needs: Vec<RepeatNeed>,
}

impl RepeatsNeeded {
    /// The window of `iterations` skipped iterations with this tail (`SkipWindow`).
    pub fn window(&self, iterations: u64) -> SkipWindow {
        SkipWindow {
            iterations,
            tail: self.tail,
        }
    }
}

/// Which of a loop's skipped iterations a sink takes in a batch, computed in this one place for
/// the interpreter (`loops`) and the sink (`simulate`) alike. The skipped iterations are
/// numbered from 1, the one after the iteration the warp ran, to `iterations`; the 1st to the
/// `iterations - tail`-th are batched (each takes what the iteration run's records made), and
/// the last `tail` pass through everything, so that the compiler effects end as in a full run
/// (the exactness contract in the module documentation of `loops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkipWindow {
    /// How many iterations the warp skips.
    pub iterations: u64,
    /// How many of them, at their end, pass through everything.
    pub tail: u64,
}

impl SkipWindow {
    /// The last iteration batched, which is also how many are: `iterations - tail`, or 0 where
    /// the tail covers every iteration.
    pub fn batched(self) -> u64 {
        self.iterations.saturating_sub(self.tail)
    }

    /// Whether skipped iteration `iteration` (from 1) lies in the batch, before the tail.
    pub fn batches(self, iteration: u64) -> bool {
        iteration.saturating_add(self.tail) <= self.iterations
    }

    /// How many of the batched iterations come after the first, the 2nd to the
    /// `iterations - tail`-th: those in which a record of the iteration run is quiet
    /// (`simulate`'s `LoggedRecord::quiet`), 0 where fewer than two are batched.
    pub fn after_the_first(self) -> u64 {
        self.iterations.saturating_sub(self.tail.saturating_add(1))
    }
}

/// What a sink needs of the repeats of one record (`RepeatsNeeded`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepeatNeed {
    /// Every repeat, handed as a record.
    Record,
    /// Only that the warp ran, once per run to its next barrier (`RecordSink::repeats_ran`).
    WarpRan,
    /// Nothing.
    Nothing,
}

/// A record of a loop iteration a warp skipped, as a record of the iteration it ran
/// (`RecordSink::record_repeated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeated {
    /// Which record of the iteration the warp ran.
    pub index: usize,
    /// How far every lane lies from that record, in bytes...
    pub by: i64,
    /// ... and how many more loads and fences the warp has made before it.
    pub loads: u32,
    pub fences: u32,
    /// The skipped iteration: 1 for the one after the iteration run, up to `iterations`.
    pub iteration: u64,
    pub iterations: u64,
}

impl Repeated {
    /// Makes the record of the iteration run into this one.
    pub fn apply(&self, record: &mut MemRecord) {
        move_lanes(&mut record.access, self.by);
        record.order = self.order(record.order);
        record.fences_passed = record.fences_passed.wrapping_add(self.fences);
    }

    /// This record's place among its warp's loads, given that of the record it repeats: as many
    /// loads later as the warp made in between.
    pub fn order(&self, ran: LoadOrder) -> LoadOrder {
        let mut order = ran;
        if order.sequence != 0 {
            order.sequence = order.sequence.wrapping_add(self.loads);
        }
        order
    }
}

/// Moves every active lane's address by `by` bytes. A plain loop over the lanes, not `flatten`,
/// which the size-optimised build does not inline: it runs for every lane of every moved record.
pub fn move_lanes(access: &mut crate::access::WarpAccess, by: i64) {
    for lane in &mut access.lanes {
        *lane = lane.map(|address| address.wrapping_add_signed(by));
    }
}

/// A record of a warp that did not run, as its leader's (`RecordSink::record_moved`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MovedRecord {
    /// The warp whose record it is.
    pub warp: u32,
    /// The steps of its class from its leader to it.
    pub steps: u32,
    /// How far every lane lies from the leader's record, in bytes.
    pub by: i64,
    /// Its leader, an index into `WarpsAlike::leaders`...
    pub from: u32,
    /// ... and which of the leader's records it is, counted from the start of the block.
    pub index: usize,
    /// Where the leader's record is one of a loop iteration it skipped: the record handed is the
    /// record of the iteration run that it repeats, and this says how (`Repeated::apply`). The
    /// leaders' records of skipped iterations are not kept whole, as a matmul's block has
    /// thousands of them.
    pub repeated: Option<Repeated>,
}

impl MovedRecord {
    /// The record of `warp`: its leader's, from `record`, moved.
    pub fn of(&self, record: &MemRecord) -> MemRecord {
        let mut moved = *record;
        if let Some(repeated) = &self.repeated {
            repeated.apply(&mut moved);
        }
        moved.warp = self.warp;
        move_lanes(&mut moved.access, self.by);
        moved
    }

    /// The place among its warp's loads of the record `of` makes from `record`.
    pub fn order(&self, record: &MemRecord) -> LoadOrder {
        self.repeated
            .map_or(record.order, |repeated| repeated.order(record.order))
    }
}

/// A block's warps shown alike, as a sink sees them (`RecordSink::warps_alike`): warps `w` and
/// `w + step` of a class do the same work at moved addresses. The `leaders` ran; each stands for
/// the warps of its class after it up to the class's next leader (`lead`), and the sink receives
/// their records through `RecordSink::record_moved`.
#[derive(Debug)]
pub struct WarpsAlike<'a> {
    pub block: [u32; 3],
    /// The warps that ran, in order: the first warp of each class (`j < step`), and any later
    /// warp whose guards came out otherwise than its class's earlier leader's.
    pub leaders: &'a [u32],
    /// Per warp of the block: the leader that stands for it (an index into `leaders`), and the
    /// steps of its class from that leader to it (0 for a leader).
    pub lead: &'a [(usize, u32)],
    /// Per leader, how far each of its access sites moves from a warp of the class to the next;
    /// `None` where one site moves by different amounts at different executions.
    pub site_moves: &'a [Option<Vec<SiteMove>>],
}

/// How far an access site's addresses move from a warp of a class to the next
/// (`WarpsAlike::site_moves`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteMove {
    pub span: Span,
    pub space: Space,
    pub kind: AccessKind,
    pub bytes_per_step: i64,
}

impl SiteMove {
    /// Whether `record` was made at this site.
    pub fn holds(&self, record: &MemRecord) -> bool {
        self.span == record.span
            && self.space == record.access.space
            && self.kind == record.access.kind
    }
}

/// What a block did, besides its records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BlockStats {
    pub block: [u32; 3],
    /// FP32 operations: an add, subtract or multiply is 1 per active lane, an FMA 2.
    pub flops: u64,
    /// Warp-level instructions, approximately one per operation and branch executed.
    pub warp_instructions: u64,
    /// FP32 operations as the pipe performs them, for whole warps: 64 per warp-level FMA and 32
    /// per add or multiply, however few lanes are active (a divergent branch pays both paths).
    pub fp32_issued_flops: u64,
    /// Special function unit instructions (`MUFU`), once per warp (`issue::sfu_passes`).
    pub sfu_instructions: u64,
    /// Of `issued_instructions`, those that only the ALU pipe executes (`issue::Annotation::alu`),
    /// in `issue::ISSUE_SCALE`-ths.
    pub alu_instructions: u64,
    /// Passes through the warp-wide unit that `MATCH` (two) and `REDUX` (one) take.
    pub warp_unit_passes: u64,
    /// `__syncthreads()` executed, once per warp that reaches it.
    pub barrier_warp_instructions: u64,
    /// SASS instructions issued, as nvcc's code would (`issue`), in `issue::ISSUE_SCALE`-ths.
    pub issued_instructions: u64,
    /// The if-converted bodies warps issued with every lane predicated off (not in the above).
    pub predicated_off: PredicatedBody,
    /// `issued_instructions` counted once per active lane, in `issue::ISSUE_SCALE`-ths.
    pub thread_issued_instructions: u64,
    /// The lanes of if-converted bodies that were active but predicated off, times the bodies'
    /// instructions, in `issue::ISSUE_SCALE`-ths (not in the above).
    pub predicated_off_threads: u64,
    /// Statements and expression nodes evaluated, summed over the warps that ran (at most the
    /// budget the block was given).
    pub steps: u64,
    /// The warps that did not run, shown alike to a warp of their class that did (`warps`):
    /// their records are its records, moved.
    pub warps_shown_alike: u32,
    /// The loop iterations the warps that ran skipped, shown alike to an iteration they ran
    /// (`loops`): their records are its records, moved.
    pub iterations_skipped: u64,
}

/// The counts of a warp's work that `BlockStats` sums over warps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct WarpWork {
    pub(super) instructions: u64,
    pub(super) flops: u64,
    pub(super) fp32_issued_flops: u64,
    pub(super) sfu: u64,
    pub(super) alu: u64,
    pub(super) warp_unit: u64,
    pub(super) barriers: u64,
    pub(super) issued: u64,
    pub(super) thread_issued: u64,
    pub(super) predicated_off: PredicatedBody,
    pub(super) predicated_off_threads: u64,
}

impl WarpWork {
    /// Adds `after - before`, the work of one run of a warp.
    pub(super) fn add_difference(&mut self, after: &WarpWork, before: &WarpWork) {
        self.instructions += after.instructions - before.instructions;
        self.flops += after.flops - before.flops;
        self.fp32_issued_flops += after.fp32_issued_flops - before.fp32_issued_flops;
        self.sfu += after.sfu - before.sfu;
        self.alu += after.alu - before.alu;
        self.warp_unit += after.warp_unit - before.warp_unit;
        self.barriers += after.barriers - before.barriers;
        self.issued += after.issued - before.issued;
        self.thread_issued += after.thread_issued - before.thread_issued;
        self.predicated_off_threads += after.predicated_off_threads - before.predicated_off_threads;
        let (a, b) = (&after.predicated_off, &before.predicated_off);
        self.predicated_off.add(&PredicatedBody {
            issue: a.issue - b.issue,
            shared_loads: a.shared_loads - b.shared_loads,
            shared_stores: a.shared_stores - b.shared_stores,
            global_loads: a.global_loads - b.global_loads,
            global_stores: a.global_stores - b.global_stores,
        });
    }

    /// Adds `times` warps' worth of `work`.
    pub(super) fn add_times(&mut self, work: &WarpWork, times: u64) {
        self.instructions += work.instructions * times;
        self.flops += work.flops * times;
        self.fp32_issued_flops += work.fp32_issued_flops * times;
        self.sfu += work.sfu * times;
        self.alu += work.alu * times;
        self.warp_unit += work.warp_unit * times;
        self.barriers += work.barriers * times;
        self.issued += work.issued * times;
        self.thread_issued += work.thread_issued * times;
        self.predicated_off_threads += work.predicated_off_threads * times;
        self.predicated_off.add(&work.predicated_off.times(times));
    }
}

/// One block's run with its records.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockRun {
    pub block: [u32; 3],
    pub records: Vec<MemRecord>,
    pub flops: u64,
    pub warp_instructions: u64,
    pub steps: u64,
}

/// Where a runtime object's bytes are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Storage {
    /// `memory[i]` of the simulation, persistent across blocks.
    Global(usize),
    Shared,
    Local,
}

/// A memory object of one launch: its name, space, address range and storage.
#[derive(Clone, Debug)]
pub(super) struct RtObject {
    pub(super) name: String,
    /// What kind of object it is, as an error names it ("buffer", "shared array", ...).
    pub(super) what: MemoryObject,
    pub(super) space: Space,
    pub(super) base: u64,
    pub(super) size: u64,
    pub(super) storage: Storage,
    /// Accesses make records (false for per-thread arrays kept in registers).
    pub(super) records: bool,
}

impl RtObject {
    /// Whether it lies in global memory: a parameter buffer or a `__device__` variable.
    pub(super) fn in_global_memory(&self) -> bool {
        self.space == Space::Global && matches!(self.storage, Storage::Global(_))
    }
}

/// The object that holds every active lane of `record`, with the least address they touch and
/// the end of the greatest one's access; `None` where no object does, or no lane is active.
pub(super) fn holding_object<'o>(
    objects: &'o [RtObject],
    record: &MemRecord,
) -> Option<(&'o RtObject, u64, u64)> {
    let mut lanes = record.access.lanes.iter().flatten();
    let &first = lanes.next()?;
    let (least, greatest) = lanes.fold((first, first), |(lo, hi), &a| (lo.min(a), hi.max(a)));
    let end = greatest + u64::from(record.access.width.bytes());
    let object = objects.iter().find(|o| {
        o.records && o.space == record.access.space && o.base <= least && end <= o.base + o.size
    })?;
    Some((object, least, end))
}

/// The first global address of the first buffer (buffers follow, each 256-byte aligned).
pub const GLOBAL_BASE: u64 = 0x1000_0000;
pub(super) const BUFFER_ALIGN: u64 = 256;
pub(super) const MAX_BUFFER_BYTES: u64 = 1 << 32;
/// Where global memory ends at the latest, far below the largest pointer address (2^47).
pub(super) const MAX_GLOBAL_END: u64 = 1 << 46;
/// The most shared memory a block can have on any preset (H100's opt-in maximum, 227 KB).
pub const MAX_SHARED_BYTES: u64 = 232_448;
/// The most local memory a thread can have (CUDA C++ Programming Guide, "Technical Specifications
/// per Compute Capability": 512 KB of local memory per thread).
pub const MAX_LOCAL_BYTES: u64 = 512 * 1024;

pub(super) fn launch_error(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(span, message)
}

pub(super) fn fill_scalar(ty: &Type) -> Fill {
    match ty.innermost() {
        Type::Scalar(s) => Fill::Random(*s),
        Type::Vector(s, _) => Fill::Random(*s),
        Type::Pointer { .. } => Fill::Zero,
        // A struct of one scalar type is filled as an array of it; another, byte by byte.
        Type::Struct(record) => match record.leaves.as_deref() {
            Some([first, rest @ ..]) if rest.iter().all(|l| l.scalar == first.scalar) => {
                Fill::Random(first.scalar)
            }
            _ => Fill::Random(Scalar::U8),
        },
        _ => Fill::Random(Scalar::U8),
    }
}

/// The values a parameter passed by value takes from the launch, one per scalar it holds, in
/// the order of its registers: a number is one value under its own name; a vector one per
/// component (`c.x`, `c.y`, `c.z`); a struct one per member, nested members and array elements
/// by their paths (`p.n`, `p.box.lo.x`, `p.weights[2]`), as C++ names them. `Err` says why the
/// launch cannot give it: a pointer member (it would need a buffer of its own), a struct too
/// large to hold in registers.
pub fn parameter_leaves(name: &str, ty: &Type) -> Result<Vec<(String, Scalar)>, String> {
    fn walk(
        ty: &Type,
        path: String,
        depth: usize,
        out: &mut Vec<(String, Scalar)>,
    ) -> Result<(), String> {
        match ty {
            Type::Scalar(s) => out.push((path, *s)),
            Type::Vector(s, n) => {
                for component in ["x", "y", "z", "w"].into_iter().take(usize::from(*n)) {
                    out.push((format!("{path}.{component}"), *s));
                }
            }
            Type::Array(elem, Some(n)) if depth < 8 => {
                for k in 0..*n {
                    walk(elem, format!("{path}[{k}]"), depth + 1, out)?;
                }
            }
            Type::Struct(record) if depth < 8 && record.leaves.is_some() => {
                for field in &record.fields {
                    walk(&field.ty, format!("{path}.{}", field.name), depth + 1, out)?;
                }
            }
            Type::Pointer { .. } => {
                return Err(format!(
                    "its member '{path}' is a pointer, which the launch cannot give a buffer"
                ))
            }
            _ => return Err(format!("'{path}' is too large to pass in registers")),
        }
        Ok(())
    }
    let mut leaves = Vec::new();
    walk(ty, name.to_string(), 0, &mut leaves)?;
    Ok(leaves)
}

/// The parameter a value's name gives: `p` of `p`, `p.n` and `p.weights[2]`.
fn parameter_of_value(name: &str) -> &str {
    name.split(['.', '[']).next().unwrap_or(name)
}

/// Every value and buffer of the launch names a parameter that takes it, once: a value for a
/// number, a buffer for a pointer. (Parameters without one are reported as they are laid out.)
/// A buffer that a pointer argument names is checked with the pointer arguments
/// (`pointer_argument::check`).
pub(super) fn check_launch_names(func: &FunctionIr, launch: &Launch) -> Result<(), Diagnostic> {
    let pointed_into = |name: &String| launch.pointers.iter().any(|p| &p.buffer == name);
    let given = launch.args.iter().map(|(name, _)| (name, true)).chain(
        launch
            .buffers
            .iter()
            .filter(|(name, _)| !pointed_into(name))
            .map(|(name, _)| (name, false)),
    );
    let mut seen: Vec<&str> = Vec::new();
    for (name, is_value) in given {
        let parameter = if is_value {
            parameter_of_value(name)
        } else {
            name.as_str()
        };
        let Some(p) = func.params.iter().find(|p| p.name == parameter) else {
            return Err(launch_error(
                func.span,
                format!("'{}' has no parameter named '{name}'", func.name),
            ));
        };
        let is_pointer = matches!(p.ty, Type::Pointer { .. });
        if is_value && is_pointer {
            return Err(launch_error(
                p.span,
                format!(
                    "'{name}' is a pointer parameter ({}): give it a buffer size, not a value",
                    p.ty
                ),
            ));
        }
        if is_value && parameter != name {
            let leaves = parameter_leaves(&p.name, &p.ty).unwrap_or_default();
            if !leaves.iter().any(|(leaf, _)| leaf == name) {
                return Err(launch_error(
                    p.span,
                    format!(
                        "'{name}' names no member of the parameter '{parameter}' ({})",
                        p.ty
                    ),
                ));
            }
        }
        if !is_value && !matches!(p.ty, Type::Pointer { .. }) {
            return Err(launch_error(
                p.span,
                format!(
                    "'{name}' is a scalar parameter ({}): give it a value, not a buffer size",
                    p.ty
                ),
            ));
        }
        if seen.contains(&name.as_str()) {
            return Err(launch_error(
                p.span,
                format!("the launch gives the parameter '{name}' twice"),
            ));
        }
        seen.push(name);
    }
    Ok(())
}

/// Converts a launch argument to a parameter's register bits.
pub(super) fn scalar_argument(v: Value, s: Scalar, p: &ParamInfo) -> Result<u64, Diagnostic> {
    let doesnt_fit = || {
        launch_error(
            p.span,
            format!(
                "the value {v} does not fit the parameter '{}' ({})",
                p.name,
                s.name()
            ),
        )
    };
    Ok(match (v, s) {
        (Value::Float(f), Scalar::F32) => u64::from((f as f32).to_bits()),
        (Value::Float(f), Scalar::F64) => f.to_bits(),
        (Value::Float(f), s) if s.is_half() => s.float_bits(f),
        (Value::Float(_), _) => return Err(doesnt_fit()),
        (Value::Int(i), s) if s.is_half() => s.float_bits(i as f64),
        (Value::Int(i), Scalar::F32) => u64::from((i as f32).to_bits()),
        (Value::Int(i), Scalar::F64) => (i as f64).to_bits(),
        (Value::Bool(b), s) => scalar_argument(Value::Int(i64::from(b)), s, p)?,
        (Value::Int(i), s) => {
            let (lo, hi): (i128, i128) = match s {
                Scalar::Bool => (0, 1),
                Scalar::I8 => (i8::MIN.into(), i8::MAX.into()),
                Scalar::U8 => (0, u8::MAX.into()),
                Scalar::I16 => (i16::MIN.into(), i16::MAX.into()),
                Scalar::U16 => (0, u16::MAX.into()),
                Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
                Scalar::U32 => (0, u32::MAX.into()),
                Scalar::I64 => (i64::MIN.into(), i64::MAX.into()),
                _ => (0, u64::MAX.into()),
            };
            if i128::from(i) < lo || i128::from(i) > hi {
                return Err(doesnt_fit());
            }
            i as u64
        }
    })
}

pub(super) struct SeedStream(pub(super) u64);

impl SeedStream {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = crate::kernel::memory::splitmix64(self.0);
        self.0
    }
}

pub(super) fn splitmix_stream(seed: u64) -> SeedStream {
    SeedStream(seed ^ 0x6D65_6D70_6C61_7900)
}

/// The error of a run that used up its step budget (`budget` steps). Its wording gives no
/// advice that only one front end could follow.
pub fn step_budget_message(budget: u64) -> String {
    format!(
        "the simulation used up its step budget of {budget} steps (a smaller launch or fewer \
         loop iterations fit)"
    )
}

#[cfg(test)]
mod tests {
    use super::{RepeatsNeeded, SkipWindow};

    #[test]
    fn a_window_batches_the_iterations_before_its_tail() {
        let window = RepeatsNeeded {
            tail: 2,
            needs: Vec::new(),
        }
        .window(10);
        assert_eq!(
            window,
            SkipWindow {
                iterations: 10,
                tail: 2
            }
        );
        assert_eq!(window.batched(), 8);
        assert_eq!(window.after_the_first(), 7);
        let batched: Vec<u64> = (1..=10).filter(|&i| window.batches(i)).collect();
        assert_eq!(batched, (1..=8).collect::<Vec<u64>>());
    }

    #[test]
    fn a_tail_as_long_as_the_iterations_batches_none() {
        for iterations in [0, 1, 3] {
            let window = SkipWindow {
                iterations,
                tail: 3,
            };
            assert_eq!(window.batched(), 0);
            assert_eq!(window.after_the_first(), 0);
            assert!(!window.batches(1));
        }
    }

    #[test]
    fn a_window_of_one_batched_iteration_has_none_after_the_first() {
        let window = SkipWindow {
            iterations: 4,
            tail: 3,
        };
        assert_eq!(window.batched(), 1);
        assert!(window.batches(1) && !window.batches(2));
        assert_eq!(window.after_the_first(), 0);
    }
}
