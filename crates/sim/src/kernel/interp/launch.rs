//! A launch: its grid and arguments, the memory layout of its objects, and the block loop that runs each block warp by warp.

use super::*;
use crate::kernel::block_shift::{
    self, Guard, GuardRange, GuardSite, LaunchConstants, ShiftedBuffer,
};
use crate::kernel::span::MemoryObject;

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
/// as `fills` says (`crate::fill`; a buffer it does not name holds small random values).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Launch {
    pub grid: Dim3,
    pub block: Dim3,
    pub dyn_smem: u32,
    pub args: Vec<(String, Value)>,
    pub buffers: Vec<(String, u64)>,
    pub fills: Vec<(String, crate::fill::Fill)>,
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
        super::warps::move_lanes(&mut record.access, self.by);
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
        super::warps::move_lanes(&mut moved.access, self.by);
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

/// The last of `leaders` (in order) at or before `warp` in its class of every `step`-th warp, as
/// its index, and the steps from it to `warp`.
pub(super) fn leader_of(leaders: &[u32], step: u32, warp: u32) -> Option<(usize, u32)> {
    let step = step.max(1);
    leaders
        .iter()
        .enumerate()
        .rev()
        .find(|&(_, &leader)| leader <= warp && (warp - leader).is_multiple_of(step))
        .map(|(index, &leader)| (index, (warp - leader) / step))
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

/// A kernel ready to run: its launch, memory objects and the contents of global memory.
#[derive(Debug)]
pub struct Simulation<'p> {
    pub(super) program: &'p Program,
    pub(super) kernel: usize,
    pub(super) launch: Launch,
    pub(super) objects: Vec<RtObject>,
    pub(super) memory: Vec<PagedBuffer>,
    /// For each kernel parameter: its register value (scalar bits or pointer).
    pub(super) param_values: Vec<u64>,
    pub(super) shared_bytes: u64,
    pub(super) local_frame_bytes: u64,
    /// The comparisons whose range each block run keeps (`shifted_buffers` sets them), and
    /// their ranges in the last block run.
    pub(super) guard_sites: Vec<GuardSite>,
    pub(super) guard_ranges: Vec<GuardRange>,
    /// The warps of a block shown alike (`show_warps_alike`), if they are.
    pub(super) warp_classes: Option<WarpClasses>,
    /// The loops whose iterations are shown alike (`summarise_loops`).
    pub(super) loop_plans: Vec<LoopPlan>,
    /// Watches over loops that ended, for the next warps' to reuse: a matmul's warp captures
    /// some 60 records of 560 bytes a phase, and a fresh vector grows to them anew.
    pub(super) spare_watches: Vec<LoopWatch>,
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
        _ => Fill::Random(Scalar::U8),
    }
}

impl<'p> Simulation<'p> {
    /// Prepares a launch of `kernel`: checks the kernel (its body and the functions it calls
    /// must have checked, see `Program::kernel`) and the arguments, and lays out every memory
    /// object.
    pub fn new(
        program: &'p Program,
        kernel: &str,
        launch: &Launch,
        seed: u64,
    ) -> Result<Simulation<'p>, Diagnostic> {
        let func = program.kernel(kernel)?;
        let kernel_index = program.kernel_index(kernel).unwrap_or_default();
        let (g, b) = (launch.grid, launch.block);
        if g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0 {
            return Err(launch_error(
                func.span,
                "grid and block extents must be at least 1",
            ));
        }
        if b.count() > 1024 {
            return Err(launch_error(
                func.span,
                format!("a block has at most 1024 threads, not {}", b.count()),
            ));
        }
        check_launch_names(func, launch)?;
        crate::fill::check_fills(&launch.fills, &launch.buffers)
            .map_err(|error| launch_error(func.span, error.to_string()))?;

        let reachable = program.reachable(kernel_index);
        let mut objects = Vec::with_capacity(program.objects.len() + func.params.len());
        let mut memory = Vec::new();
        let mut stream = splitmix_stream(seed);

        // Parameter buffers first, so that they start at GLOBAL_BASE in parameter order.
        let mut next_global = GLOBAL_BASE;
        let mut param_buffers = Vec::new();
        for p in &func.params {
            if let Type::Pointer { pointee, .. } = &p.ty {
                let Some(&(_, bytes)) = launch.buffers.iter().find(|(n, _)| n == &p.name) else {
                    return Err(launch_error(
                        p.span,
                        format!(
                            "the launch gives no buffer for the pointer parameter '{}'",
                            p.name
                        ),
                    ));
                };
                if bytes > MAX_BUFFER_BYTES {
                    return Err(launch_error(
                        p.span,
                        format!("the buffer for '{}' is too large ({bytes} bytes)", p.name),
                    ));
                }
                // Every buffer takes its seed from the stream, whatever its fill, so that
                // filling one buffer leaves the others' contents as they were.
                let fill = fill_scalar(pointee)
                    .with_launch_fill(crate::fill::fill_of(&launch.fills, &p.name));
                memory.push(PagedBuffer::new(bytes, fill, stream.next()));
                param_buffers.push((p.name.clone(), next_global, bytes, memory.len() - 1));
                next_global = (next_global + bytes).div_ceil(BUFFER_ALIGN) * BUFFER_ALIGN;
            }
        }

        // Program objects keep their ids; unreachable shared and local objects get no space.
        let mut shared_next = 0u64;
        let mut frame_base = vec![0u64; program.functions.len()];
        let mut frame_next = 0u64;
        for &f in &reachable {
            frame_base[f] = frame_next;
            let frame = program
                .objects
                .iter()
                .filter(|o| o.space == ObjectSpace::Local && o.function == Some(f))
                .map(|o| o.local_offset + o.size)
                .max()
                .unwrap_or(0);
            frame_next = (frame_next + frame).div_ceil(16) * 16;
        }
        let mut constant_next = 0u64;
        let mut dynamic_ids = Vec::new();
        for obj in &program.objects {
            let reached = obj.function.is_none_or(|f| reachable.contains(&f));
            let rt = match obj.space {
                ObjectSpace::Global | ObjectSpace::Constant => {
                    let fill = match &obj.init {
                        ObjectInit::Zero => Fill::Zero,
                        ObjectInit::Random => fill_scalar(&obj.ty),
                        ObjectInit::Bytes(b) => Fill::Bytes(b.clone()),
                    };
                    memory.push(PagedBuffer::new(obj.size, fill, stream.next()));
                    let (space, what, base) = if obj.space == ObjectSpace::Global {
                        let base = next_global;
                        next_global =
                            (next_global + obj.size).div_ceil(BUFFER_ALIGN) * BUFFER_ALIGN;
                        (Space::Global, MemoryObject::DeviceVariable, base)
                    } else {
                        let align = obj.align.max(4);
                        let base = constant_next.div_ceil(align) * align;
                        constant_next = base + obj.size;
                        (Space::Constant, MemoryObject::ConstantVariable, base)
                    };
                    RtObject {
                        name: obj.name.clone(),
                        what,
                        space,
                        base,
                        size: obj.size,
                        storage: Storage::Global(memory.len() - 1),
                        records: true,
                    }
                }
                ObjectSpace::Shared => {
                    let (base, size) = if reached {
                        let align = obj.align.max(1);
                        let base = shared_next.div_ceil(align) * align;
                        shared_next = base + obj.size;
                        (base, obj.size)
                    } else {
                        (0, 0)
                    };
                    RtObject {
                        name: obj.name.clone(),
                        what: MemoryObject::SharedArray,
                        space: Space::Shared,
                        base,
                        size,
                        storage: Storage::Shared,
                        records: true,
                    }
                }
                ObjectSpace::DynamicShared => {
                    dynamic_ids.push(objects.len());
                    RtObject {
                        name: obj.name.clone(),
                        what: MemoryObject::DynamicSharedArray,
                        space: Space::Shared,
                        base: 0,
                        size: 0,
                        storage: Storage::Shared,
                        records: true,
                    }
                }
                ObjectSpace::Local => {
                    let base = obj.function.map(|f| frame_base[f]).unwrap_or(0) + obj.local_offset;
                    let size = if reached { obj.size } else { 0 };
                    RtObject {
                        name: obj.name.clone(),
                        what: MemoryObject::LocalArray,
                        space: Space::Local,
                        base,
                        size,
                        storage: Storage::Local,
                        records: !obj.in_registers,
                    }
                }
            };
            objects.push(rt);
        }
        // Every address must stay a positive 48-bit pointer address (see `memory`).
        if next_global > MAX_GLOBAL_END {
            return Err(launch_error(
                func.span,
                format!(
                    "the buffers and __device__ variables of '{}' take more than {} bytes together",
                    func.name,
                    MAX_GLOBAL_END - GLOBAL_BASE
                ),
            ));
        }
        // Dynamic shared memory follows the static arrays, 16-byte aligned.
        let dynamic_base = shared_next.div_ceil(16) * 16;
        for id in dynamic_ids {
            objects[id].base = dynamic_base;
            objects[id].size = u64::from(launch.dyn_smem);
        }
        let local_frame_bytes = frame_next.div_ceil(4) * 4;
        if local_frame_bytes > MAX_LOCAL_BYTES {
            return Err(launch_error(
                func.span,
                format!("the per-thread arrays of '{}' take {local_frame_bytes} bytes; a thread has at most {MAX_LOCAL_BYTES} bytes of local memory", func.name),
            ));
        }
        let shared_bytes = if launch.dyn_smem > 0 {
            dynamic_base + u64::from(launch.dyn_smem)
        } else {
            shared_next
        };
        if shared_bytes > MAX_SHARED_BYTES {
            return Err(launch_error(
                func.span,
                format!("a block of '{}' uses {shared_bytes} bytes of shared memory; no GPU gives a block more than {MAX_SHARED_BYTES}", func.name),
            ));
        }

        let mut param_values = Vec::with_capacity(func.params.len());
        for p in &func.params {
            let value = match &p.ty {
                Type::Pointer { .. } => {
                    let Some((_, base, bytes, mem)) =
                        param_buffers.iter().find(|(n, ..)| n == &p.name)
                    else {
                        return Err(launch_error(p.span, format!("no buffer for '{}'", p.name)));
                    };
                    objects.push(RtObject {
                        name: p.name.clone(),
                        what: MemoryObject::Buffer,
                        space: Space::Global,
                        base: *base,
                        size: *bytes,
                        storage: Storage::Global(*mem),
                        records: true,
                    });
                    pointer(objects.len() - 1, *base)
                }
                Type::Scalar(s) => {
                    let Some((_, v)) = launch.args.iter().find(|(n, _)| n == &p.name) else {
                        return Err(launch_error(
                            p.span,
                            format!("the launch gives no value for the parameter '{}'", p.name),
                        ));
                    };
                    scalar_argument(*v, *s, p)?
                }
                other => {
                    return Err(launch_error(
                        p.span,
                        format!(
                            "a kernel parameter of type '{other}' cannot be given by the launch"
                        ),
                    ));
                }
            };
            param_values.push(value);
        }
        if objects.len() >= (1 << 16) - 1 {
            return Err(launch_error(func.span, "too many memory objects"));
        }
        Ok(Simulation {
            program,
            kernel: kernel_index,
            launch: launch.clone(),
            objects,
            memory,
            param_values,
            shared_bytes,
            local_frame_bytes,
            guard_sites: Vec::new(),
            guard_ranges: Vec::new(),
            warp_classes: None,
            loop_plans: Vec::new(),
            spare_watches: Vec::new(),
        })
    }

    /// Per guard of `shifted_buffers`, the least and the greatest `lhs - rhs` the last block run
    /// compared.
    pub fn guard_ranges(&self) -> &[GuardRange] {
        &self.guard_ranges
    }

    /// Shared memory per block: the static arrays plus the dynamic part.
    pub fn shared_bytes_per_block(&self) -> u64 {
        self.shared_bytes
    }

    /// Bytes of per-thread arrays (in local memory or registers) per thread.
    pub fn local_bytes_per_thread(&self) -> u64 {
        self.local_frame_bytes
    }

    /// The launch's global buffers and how each block's accesses of them shift, and the guards
    /// to check per pair of blocks, when `block_shift` proves that every block runs the same
    /// instructions at shifted addresses (its guards alike); `None` otherwise. From then on each
    /// block run keeps the range of its guards (`Simulation::guard_ranges`).
    pub fn shifted_buffers(&mut self) -> Option<(Vec<ShiftedBuffer>, Vec<Guard>)> {
        // The guards start afresh; warps and loops shown alike before would index them wrongly.
        self.warp_classes = None;
        self.loop_plans.clear();
        self.guard_sites.clear();
        let func = &self.program.functions[self.kernel];
        let constants = self.launch_constants();
        let shift = block_shift::analyze(func, &constants)?;
        self.guard_sites = shift.guards.iter().map(|g| g.site).collect();
        let buffers = shift
            .bytes_per_block
            .iter()
            .filter(|(object, _)| constants.global_objects.contains(object))
            .map(|&(object, bytes_per_block)| ShiftedBuffer {
                base: self.objects[object].base,
                size: self.objects[object].size,
                bytes_per_block,
            })
            .collect();
        Some((buffers, shift.guards))
    }

    /// What `block_shift` knows of the launch: its arguments and dimensions, the objects its
    /// pointer parameters point to, and which objects lie in which memory.
    pub(super) fn launch_constants(&self) -> LaunchConstants {
        let func = &self.program.functions[self.kernel];
        let mut constants = LaunchConstants::default();
        for (p, &v) in func.params.iter().zip(&self.param_values) {
            match pointer_object(v) {
                Some(object) if matches!(p.ty, Type::Pointer { .. }) => {
                    constants.pointers.insert(p.reg, object);
                }
                _ => {
                    constants.values.insert(p.reg, v as i64);
                }
            }
        }
        let (b, g) = (self.launch.block, self.launch.grid);
        for (k, v) in [b.x, b.y, b.z, g.x, g.y, g.z].into_iter().enumerate() {
            constants
                .values
                .insert(REG_BLOCK_DIM + k as Reg, i64::from(v));
        }
        let objects = |keep: &dyn Fn(&RtObject) -> bool| -> Vec<usize> {
            (0..self.objects.len())
                .filter(|&i| keep(&self.objects[i]))
                .collect()
        };
        constants.global_objects = objects(&|o| o.in_global_memory());
        constants.shared_objects = objects(&|o| o.space == Space::Shared);
        constants.local_objects = objects(&|o| o.space == Space::Local && o.records);
        constants
    }

    /// The objects in global memory (parameter buffers and `__device__` variables) as
    /// (name, first byte address, size in bytes), in ascending address order. Global records carry
    /// these addresses, so a record's address tells which buffer it touches.
    pub fn global_objects(&self) -> Vec<(String, u64, u64)> {
        let mut objects: Vec<(String, u64, u64)> = self
            .objects
            .iter()
            .filter(|o| o.in_global_memory())
            .map(|o| (o.name.clone(), o.base, o.size))
            .collect();
        objects.sort_by_key(|&(_, base, _)| base);
        objects
    }

    pub(super) fn buffer_index(&self, name: &str) -> Option<usize> {
        // Parameter buffers come after the program objects and shadow same-named globals.
        self.objects
            .iter()
            .rposition(|o| o.name == name && matches!(o.storage, Storage::Global(_)))
            .and_then(|i| match self.objects[i].storage {
                Storage::Global(m) => Some(m),
                _ => None,
            })
    }

    /// The current contents of a buffer or `__device__`/`__constant__` variable.
    pub fn read_buffer(&mut self, name: &str) -> Option<Vec<u8>> {
        let m = self.buffer_index(name)?;
        Some(self.memory[m].to_vec())
    }

    pub fn read_f32s(&mut self, name: &str) -> Option<Vec<f32>> {
        let bytes = self.read_buffer(name)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    pub fn read_i32s(&mut self, name: &str) -> Option<Vec<i32>> {
        let bytes = self.read_buffer(name)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    /// Overwrites the start of a buffer; `false` if there is no such buffer.
    pub fn write_buffer(&mut self, name: &str, bytes: &[u8]) -> bool {
        let Some(m) = self.buffer_index(name) else {
            return false;
        };
        let n = (bytes.len() as u64).min(self.memory[m].size()) as usize;
        self.memory[m].write(0, &bytes[..n]);
        true
    }

    /// Runs one block, keeping its records.
    pub fn run_block(&mut self, block: [u32; 3], step_budget: u64) -> Result<BlockRun, Diagnostic> {
        let mut records = Vec::new();
        let stats = self.run_block_into(block, step_budget, &mut records)?;
        Ok(BlockRun {
            block,
            records,
            flops: stats.flops,
            warp_instructions: stats.warp_instructions,
            steps: stats.steps,
        })
    }

    /// Runs one block, handing each record to `sink` as it happens. All its warps together take
    /// at most `step_budget` steps; a block that needs more stops with the step budget's error.
    ///
    /// Where `show_warps_alike` proved the block's warps alike, only the first warp of each class
    /// runs and the others' records are its own moved (`warps`); if the run does not bear the
    /// proof out, the block runs again warp by warp. Either way `sink` sees the same records.
    pub(crate) fn run_block_into(
        &mut self,
        block: [u32; 3],
        step_budget: u64,
        sink: &mut dyn RecordSink,
    ) -> Result<BlockStats, Diagnostic> {
        if let Some(mut classes) = self.warp_classes.take() {
            let replayed = self.run_block_replayed(block, step_budget, sink, &mut classes);
            self.warp_classes = Some(classes);
            if let Some(stats) = replayed {
                return Ok(stats);
            }
        }
        self.run_warps(block, step_budget, sink, None)
    }

    /// Runs the block's warps, every one, or with `log` only those it runs (`WarpLog::runs`: the
    /// leaders of the classes), whose records, work and guard ranges `log` then keeps per warp.
    pub(super) fn run_warps(
        &mut self,
        block: [u32; 3],
        step_budget: u64,
        sink: &mut dyn RecordSink,
        mut log: Option<&mut WarpLog>,
    ) -> Result<BlockStats, Diagnostic> {
        let g = self.launch.grid;
        let func = &self.program.functions[self.kernel];
        if block[0] >= g.x || block[1] >= g.y || block[2] >= g.z {
            return Err(launch_error(
                func.span,
                format!(
                    "block ({}, {}, {}) is outside the grid ({}, {}, {})",
                    block[0], block[1], block[2], g.x, g.y, g.z
                ),
            ));
        }
        let bd = self.launch.block;
        let threads = bd.count() as u32;
        let n_warps = threads.div_ceil(32);
        let local_len = self.local_frame_bytes * u64::from(threads);
        let mut machine = Machine {
            program: self.program,
            objects: &self.objects,
            memory: &mut self.memory,
            shared: vec![0u8; self.shared_bytes as usize],
            local: PagedBuffer::new(local_len, Fill::Zero, 0),
            threads,
            block,
            sink,
            emitted: 0,
            budget: step_budget,
            regs: Registers::default(),
            tags: Vec::new(),
            dependence: Dependence::default(),
            depends_on: 0,
            in_flight: 0,
            load_waits_for: 0,
            warp: 0,
            lane_tid: [0; 32],
            steps: 0,
            instructions: 0,
            flops: 0,
            fp32_issued_flops: 0,
            barriers: 0,
            issued: 0,
            thread_issued: 0,
            predicated_off: PredicatedBody::default(),
            predicated_off_threads: 0,
            tbase: 0,
            call_depth: 0,
            record: MemRecord {
                access: WarpAccess {
                    space: Space::Global,
                    kind: AccessKind::Load,
                    width: AccessWidth::FOUR,
                    lanes: [None; WARP_LANES],
                },
                span: Span::default(),
                block,
                warp: 0,
                order: LoadOrder::default(),
                fences_passed: 0,
            },
            spare_args: Vec::new(),
            spare_stacks: Vec::new(),
            guards: &self.guard_sites,
            guard_ranges: vec![GuardRange::default(); self.guard_sites.len()],
            loops: &self.loop_plans,
            watch: None,
            nested_watch: None,
            spare_watches: std::mem::take(&mut self.spare_watches),
            watch_head: usize::MAX,
            capturing: false,
            resumed: (0, WarpWork::default()),
            iterations_skipped: 0,
        };
        let n_regs = self.program.n_regs as usize;
        let mut warps: Vec<WarpState> = (0..n_warps)
            .map(|w| {
                let mut regs = Registers::zeroed(n_regs);
                let mut valid = 0u32;
                for lane in 0..32u32 {
                    let tid = w * 32 + lane;
                    if tid < threads {
                        valid |= 1 << lane;
                    }
                    let l = lane as usize;
                    regs[REG_THREAD_IDX as usize][l] = u64::from(tid % bd.x);
                    regs[REG_THREAD_IDX as usize + 1][l] = u64::from((tid / bd.x) % bd.y);
                    regs[REG_THREAD_IDX as usize + 2][l] = u64::from(tid / (bd.x * bd.y));
                }
                for (k, v) in [
                    block[0], block[1], block[2], bd.x, bd.y, bd.z, g.x, g.y, g.z,
                ]
                .into_iter()
                .enumerate()
                {
                    regs.fill(REG_BLOCK_IDX as usize + k, u64::from(v));
                }
                for (p, &v) in func.params.iter().zip(&self.param_values) {
                    regs.fill(p.reg as usize, v);
                }
                WarpState {
                    regs,
                    tags: vec![0; n_regs],
                    dependence: Dependence::default(),
                    flow: Flow {
                        pc: 0,
                        mask: valid,
                        returned: 0,
                        stack: Vec::new(),
                    },
                    valid,
                    done: false,
                    watch: None,
                }
            })
            .collect();

        // One step counter for the whole block (`machine.steps`), checked as it counts: the
        // warps share the budget, however many there are.
        if let Some(log) = log.as_deref() {
            // Only the leaders of the classes run.
            for (w, warp) in warps.iter_mut().enumerate() {
                warp.done = !log.runs(w);
            }
        }
        loop {
            let mut any_waiting = false;
            for (w, warp) in warps.iter_mut().enumerate() {
                if warp.done {
                    continue;
                }
                machine.warp = w as u32;
                for lane in 0..32 {
                    machine.lane_tid[lane] = w as u32 * 32 + lane as u32;
                }
                machine.regs = std::mem::take(&mut warp.regs);
                machine.tags = std::mem::take(&mut warp.tags);
                machine.dependence = warp.dependence;
                machine.resume_watch(warp.watch.take());
                machine.tbase = func.temp_base;
                let before = log.as_deref_mut().map(|log| log.begin(w, &mut machine));
                let result = machine.run_flow(self.kernel, &mut warp.flow, warp.valid);
                if let (Some(log), Some(before)) = (log.as_deref_mut(), before) {
                    log.end(w, before, &mut machine);
                }
                warp.regs = std::mem::take(&mut machine.regs);
                warp.tags = std::mem::take(&mut machine.tags);
                warp.dependence = machine.dependence;
                warp.watch = machine.suspend_watch();
                match result? {
                    Stop::Done => warp.done = true,
                    Stop::Barrier => any_waiting = true,
                }
            }
            if !any_waiting {
                break;
            }
        }
        self.guard_ranges = std::mem::take(&mut machine.guard_ranges);
        self.spare_watches = std::mem::take(&mut machine.spare_watches);
        Ok(BlockStats {
            block,
            flops: machine.flops,
            warp_instructions: machine.instructions,
            fp32_issued_flops: machine.fp32_issued_flops,
            barrier_warp_instructions: machine.barriers,
            issued_instructions: machine.issued,
            predicated_off: machine.predicated_off,
            thread_issued_instructions: machine.thread_issued,
            predicated_off_threads: machine.predicated_off_threads,
            steps: machine.steps,
            warps_shown_alike: 0,
            iterations_skipped: machine.iterations_skipped,
        })
    }
}

/// Every value and buffer of the launch names a parameter that takes it, once: a value for a
/// number, a buffer for a pointer. (Parameters without one are reported as they are laid out.)
pub(super) fn check_launch_names(func: &FunctionIr, launch: &Launch) -> Result<(), Diagnostic> {
    let given = launch
        .args
        .iter()
        .map(|(name, _)| (name, true))
        .chain(launch.buffers.iter().map(|(name, _)| (name, false)));
    let mut seen: Vec<&str> = Vec::new();
    for (name, is_value) in given {
        let Some(p) = func.params.iter().find(|p| &p.name == name) else {
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
        // (A vector parameter cannot be given at all; the layout says so.)
        if !is_value && matches!(p.ty, Type::Scalar(_)) {
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
        (Value::Float(_), _) => return Err(doesnt_fit()),
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

/// Runs every selected block of a launch and returns their runs, in order.
pub fn run(
    program: &Program,
    kernel: &str,
    launch: &Launch,
    config: &RunConfig,
) -> Result<Vec<BlockRun>, Diagnostic> {
    let mut sim = Simulation::new(program, kernel, launch, config.seed)?;
    let blocks: Vec<[u32; 3]> = match &config.blocks {
        BlockSelection::List(list) => list.clone(),
        BlockSelection::All => {
            let g = launch.grid;
            let mut all = Vec::new();
            for z in 0..g.z {
                for y in 0..g.y {
                    for x in 0..g.x {
                        all.push([x, y, z]);
                    }
                }
            }
            all
        }
    };
    // The budget is for the whole run: each block gets what the blocks before it left.
    let mut runs = Vec::with_capacity(blocks.len());
    let mut steps = 0u64;
    for b in blocks {
        let run = sim.run_block(b, config.step_budget.saturating_sub(steps))?;
        steps = steps.saturating_add(run.steps);
        runs.push(run);
    }
    Ok(runs)
}

/// The error of a run that used up its step budget (`budget` steps). Its wording gives no
/// advice that only one front end could follow.
pub fn step_budget_message(budget: u64) -> String {
    format!(
        "the simulation used up its step budget of {budget} steps (a smaller launch or fewer \
         loop iterations fit)"
    )
}
