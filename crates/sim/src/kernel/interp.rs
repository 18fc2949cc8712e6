//! The interpreter: runs a kernel block by block, warp by warp, lanes in lockstep.
//!
//! The execution model follows the CUDA C++ Programming Guide, "SIMT Architecture" and "Hardware
//! Multithreading": a block's threads are split into warps of 32 consecutive linear thread ids
//! (`tid = x + y*bx + z*bx*by`); a warp executes one instruction at a time for all of its active
//! lanes, and lanes that take a different branch are masked off until the paths rejoin. Each warp
//! runs until it reaches `__syncthreads()` or finishes, then the next warp runs; the barrier
//! releases when every warp that has not exited is waiting at it.
//!
//! `__syncthreads()` reached by only some lanes of a warp is an error (the Programming Guide calls
//! it undefined: "allowed in conditional code but only if the conditional evaluates identically
//! across the entire thread block", seed 002 "Shared Memory: Synchronization"). A warp whose threads
//! have all returned is not waited for: real hardware counts exited warps as arrived, and lesson
//! code such as `if (i >= n) return;` before a barrier in the last block relies on it.
//!
//! Every warp-level load, store or atomic to global, shared, local or constant memory becomes one
//! `MemRecord` with the byte address of each active lane; registers make no records. Per-thread
//! arrays that live in local memory use the hardware's interleaved layout, "organized such that
//! consecutive 32-bit words are accessed by consecutive thread IDs" (CUDA C++ Programming Guide,
//! "Device Memory Accesses", Local Memory): 32-bit word `w` of thread `t` of a block of `T`
//! threads is at byte `(w * T + t) * 4` of the block's local memory.

use super::ast::{Scalar, Type};
use super::ir::*;
use super::limits::MAX_CALL_DEPTH;
use super::memory::{
    address_add, decode, encode, pointer, pointer_add, pointer_address, pointer_object, Fill,
    PagedBuffer, ADDRESS_MASK,
};
use super::sema::Program;
use super::span::{Diagnostic, Span};
use crate::access::{AccessKind, AccessWidth, Space, WarpAccess, WARP_LANES};
use serde::{Deserialize, Serialize};
use std::fmt;

type Lanes = [u64; WARP_LANES];
const FULL: u32 = u32::MAX;

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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

/// Receives the records of a block as they happen (so that counters need not keep them all).
pub trait RecordSink {
    fn record(&mut self, record: &MemRecord);
}

impl RecordSink for Vec<MemRecord> {
    fn record(&mut self, record: &MemRecord) {
        self.push(record.clone());
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
    /// Statements and expression nodes evaluated, summed over warps (at most the budget the
    /// block was given).
    pub steps: u64,
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
enum Storage {
    /// `memory[i]` of the simulation, persistent across blocks.
    Global(usize),
    Shared,
    Local,
}

/// A memory object of one launch: its name, space, address range and storage.
#[derive(Clone, Debug)]
struct RtObject {
    name: String,
    /// How an error names it ("buffer", "shared array", ...).
    what: &'static str,
    space: Space,
    base: u64,
    size: u64,
    storage: Storage,
    /// Accesses make records (false for per-thread arrays kept in registers).
    records: bool,
}

/// A kernel ready to run: its launch, memory objects and the contents of global memory.
#[derive(Debug)]
pub struct Simulation<'p> {
    program: &'p Program,
    kernel: usize,
    launch: Launch,
    objects: Vec<RtObject>,
    memory: Vec<PagedBuffer>,
    /// For each kernel parameter: its register value (scalar bits or pointer).
    param_values: Vec<u64>,
    shared_bytes: u64,
    local_frame_bytes: u64,
}

/// The first global address of the first buffer (buffers follow, each 256-byte aligned).
pub const GLOBAL_BASE: u64 = 0x1000_0000;
const BUFFER_ALIGN: u64 = 256;
const MAX_BUFFER_BYTES: u64 = 1 << 32;
/// Where global memory ends at the latest, far below the largest pointer address (2^47).
const MAX_GLOBAL_END: u64 = 1 << 46;
/// The most shared memory a block can have on any preset (H100's opt-in maximum, 227 KB).
pub const MAX_SHARED_BYTES: u64 = 232_448;
/// The most local memory a thread can have (CUDA C++ Programming Guide, "Technical Specifications
/// per Compute Capability": 512 KB of local memory per thread).
pub const MAX_LOCAL_BYTES: u64 = 512 * 1024;

fn launch_error(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(span, message)
}

fn fill_scalar(ty: &Type) -> Fill {
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
                        (Space::Global, "__device__ variable", base)
                    } else {
                        let align = obj.align.max(4);
                        let base = constant_next.div_ceil(align) * align;
                        constant_next = base + obj.size;
                        (Space::Constant, "__constant__ variable", base)
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
                        what: "shared array",
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
                        what: "dynamic shared array",
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
                        what: "local array",
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
                        what: "buffer",
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
        })
    }

    /// Shared memory per block: the static arrays plus the dynamic part.
    pub fn shared_bytes_per_block(&self) -> u64 {
        self.shared_bytes
    }

    /// Bytes of per-thread arrays (in local memory or registers) per thread.
    pub fn local_bytes_per_thread(&self) -> u64 {
        self.local_frame_bytes
    }

    /// The objects in global memory (parameter buffers and `__device__` variables) as
    /// (name, first byte address, size in bytes), in ascending address order. Global records carry
    /// these addresses, so a record's address tells which buffer it touches.
    pub fn global_objects(&self) -> Vec<(String, u64, u64)> {
        let mut objects: Vec<(String, u64, u64)> = self
            .objects
            .iter()
            .filter(|o| o.space == Space::Global && matches!(o.storage, Storage::Global(_)))
            .map(|o| (o.name.clone(), o.base, o.size))
            .collect();
        objects.sort_by_key(|&(_, base, _)| base);
        objects
    }

    fn buffer_index(&self, name: &str) -> Option<usize> {
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
    pub fn run_block_into(
        &mut self,
        block: [u32; 3],
        step_budget: u64,
        sink: &mut dyn RecordSink,
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
            budget: step_budget,
            regs: Vec::new(),
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
        };
        let n_regs = self.program.n_regs as usize;
        let mut warps: Vec<WarpState> = (0..n_warps)
            .map(|w| {
                let mut regs = vec![[0u64; WARP_LANES]; n_regs];
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
                    regs[REG_BLOCK_IDX as usize + k] = [u64::from(v); WARP_LANES];
                }
                for (p, &v) in func.params.iter().zip(&self.param_values) {
                    regs[p.reg as usize] = [v; WARP_LANES];
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
                }
            })
            .collect();

        // One step counter for the whole block (`machine.steps`), checked as it counts: the
        // warps share the budget, however many there are.
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
                machine.tbase = func.temp_base;
                let result = machine.run_flow(self.kernel, &mut warp.flow, warp.valid);
                warp.regs = std::mem::take(&mut machine.regs);
                warp.tags = std::mem::take(&mut machine.tags);
                warp.dependence = machine.dependence;
                match result? {
                    Stop::Done => warp.done = true,
                    Stop::Barrier => any_waiting = true,
                }
            }
            if !any_waiting {
                break;
            }
        }
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
        })
    }
}

/// Every value and buffer of the launch names a parameter that takes it, once: a value for a
/// number, a buffer for a pointer. (Parameters without one are reported as they are laid out.)
fn check_launch_names(func: &FunctionIr, launch: &Launch) -> Result<(), Diagnostic> {
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
fn scalar_argument(v: Value, s: Scalar, p: &ParamInfo) -> Result<u64, Diagnostic> {
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

struct SeedStream(u64);

impl SeedStream {
    fn next(&mut self) -> u64 {
        self.0 = super::memory::splitmix64(self.0);
        self.0
    }
}

fn splitmix_stream(seed: u64) -> SeedStream {
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

// ----- execution -----

#[derive(Clone, Copy, Debug)]
enum Frame {
    If { saved: u32, taken: u32 },
    Loop { entry: u32, brk: u32, cont: u32 },
}

#[derive(Debug)]
struct Flow {
    pc: usize,
    mask: u32,
    /// Lanes that have returned from this function.
    returned: u32,
    stack: Vec<Frame>,
}

impl Flow {
    /// Lanes that may be re-activated when a branch or loop ends: not returned, not waiting at
    /// the innermost loop's continue point or exit.
    fn alive(&self) -> u32 {
        let mut m = !self.returned;
        if let Some(Frame::Loop { brk, cont, .. }) = self
            .stack
            .iter()
            .rev()
            .find(|f| matches!(f, Frame::Loop { .. }))
        {
            m &= !(brk | cont);
        }
        m
    }

    fn innermost_loop(&mut self) -> Option<&mut Frame> {
        self.stack
            .iter_mut()
            .rev()
            .find(|f| matches!(f, Frame::Loop { .. }))
    }
}

struct WarpState {
    regs: Vec<Lanes>,
    /// Per register: the latest global or local load its value was computed from (`LoadOrder`).
    tags: Vec<u32>,
    dependence: Dependence,
    flow: Flow,
    valid: u32,
    done: bool,
}

/// The order a record carries: a global or local load is the warp's next one, with what it
/// waits for and the loads in flight its op allows; any other record has none.
fn stamp(
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

/// A warp's loads so far and what its control flow waited for (`LoadOrder`).
#[derive(Clone, Copy, Default)]
struct Dependence {
    loads: u32,
    control: u32,
    fences: u32,
}

enum Stop {
    Done,
    Barrier,
}

struct Machine<'s, 'p> {
    program: &'p Program,
    objects: &'s [RtObject],
    memory: &'s mut [PagedBuffer],
    shared: Vec<u8>,
    /// The block's local memory, in the hardware's interleaved layout; created as it is touched.
    local: PagedBuffer,
    threads: u32,
    block: [u32; 3],
    sink: &'s mut dyn RecordSink,
    /// The steps the block may take, all warps together, and the steps taken so far.
    budget: u64,
    regs: Vec<Lanes>,
    /// The current warp's register tags and loads (`WarpState`).
    tags: Vec<u32>,
    dependence: Dependence,
    /// The latest load the expression being evaluated was computed from so far.
    depends_on: u32,
    /// The unrolling's loads in flight at the op being run (`FunctionIr::loads_in_flight`).
    in_flight: u32,
    /// What the global or local load being made waits for (`LoadOrder::waits_for`).
    load_waits_for: u32,
    warp: u32,
    lane_tid: [u32; WARP_LANES],
    steps: u64,
    instructions: u64,
    flops: u64,
    fp32_issued_flops: u64,
    barriers: u64,
    /// SASS instructions issued (`BlockStats::issued_instructions`).
    issued: u64,
    /// `issued` once per active lane (`BlockStats::thread_issued_instructions`).
    thread_issued: u64,
    predicated_off: PredicatedBody,
    predicated_off_threads: u64,
    tbase: Reg,
    /// How many `__device__` calls are open.
    call_depth: u32,
    /// The record `emit_uniform` fills and hands to the sink.
    record: MemRecord,
    /// Vectors of finished `__device__` calls, for the next calls to reuse.
    spare_args: Vec<Vec<usize>>,
    spare_stacks: Vec<Vec<Frame>>,
}

/// Registers `a` and `b` to read and `dst` to write, when `dst` is neither of them.
fn regs3(
    regs: &mut [Lanes],
    a: usize,
    b: usize,
    dst: usize,
) -> Option<(&Lanes, &Lanes, &mut Lanes)> {
    if a == dst || b == dst {
        return None;
    }
    let (below, rest) = regs.split_at_mut(dst);
    let (out, above) = rest.split_first_mut()?;
    let (below, above): (&[Lanes], &[Lanes]) = (below, above);
    let pick = |i: usize| {
        if i < dst {
            below.get(i)
        } else {
            above.get(i - dst - 1)
        }
    };
    Some((pick(a)?, pick(b)?, out))
}

/// Register `a` to read and register `dst` to write, when they differ (and both exist).
fn pair(regs: &mut [Lanes], a: usize, dst: usize) -> Option<(&Lanes, &mut Lanes)> {
    if a < dst {
        let (below, above) = regs.split_at_mut(dst);
        Some((below.get(a)?, above.first_mut()?))
    } else if a > dst {
        let (below, above) = regs.split_at_mut(a);
        Some((above.first()?, below.get_mut(dst)?))
    } else {
        None
    }
}

/// `to[l] = from[l]` for the lanes in `mask`.
fn copy_lanes_masked(from: &Lanes, to: &mut Lanes, mask: u32) {
    if mask == FULL {
        *to = *from;
        return;
    }
    for l in 0..WARP_LANES {
        if mask >> l & 1 != 0 {
            to[l] = from[l];
        }
    }
}

/// The step of `++`/`--` on a value: `delta` elements for a pointer, `delta` for a number.
#[derive(Clone, Copy)]
struct Step {
    delta: i64,
    is_pointer: bool,
    scalar: Scalar,
}

impl Step {
    /// (A pointer that cannot move, `inc_dec` has reported before any lane is stepped.)
    fn one(self, v: u64) -> u64 {
        if self.is_pointer {
            return pointer_add(v, self.delta).unwrap_or(v);
        }
        match self.scalar {
            Scalar::F32 => bits_f32(f32_of(v) + self.delta as f32),
            Scalar::F64 => (f64::from_bits(v) + self.delta as f64).to_bits(),
            s => canon(v.wrapping_add(self.delta as u64), s),
        }
    }

    /// `out[l] = step(from[l])` for every lane. The 32-bit integer, the loop counters' type, has
    /// its own loop, so that the per-lane work is one add.
    fn apply(self, from: &Lanes, out: &mut Lanes) {
        if !self.is_pointer && self.scalar == Scalar::I32 {
            let delta = self.delta as i32;
            for l in 0..WARP_LANES {
                out[l] = (from[l] as i32).wrapping_add(delta) as i64 as u64;
            }
        } else {
            for l in 0..WARP_LANES {
                out[l] = self.one(from[l]);
            }
        }
    }

    /// `out[l] = step(from[l])` for the lanes in `mask`.
    fn apply_masked(self, from: &Lanes, out: &mut Lanes, mask: u32) {
        for l in 0..WARP_LANES {
            if mask >> l & 1 != 0 {
                out[l] = self.one(from[l]);
            }
        }
    }
}

/// Byte offsets of the 32 lanes, summed exactly: in `by` while they fit an `i64`; the lanes in
/// `overflow`, whose sum did not, in `wide` (made only then: an overflow is an error).
struct Offsets {
    by: [i64; WARP_LANES],
    overflow: u32,
    wide: Option<Box<[i128; WARP_LANES]>>,
}

impl Offsets {
    fn new() -> Offsets {
        Offsets {
            by: [0; WARP_LANES],
            overflow: 0,
            wide: None,
        }
    }

    /// Adds `index * stride` to every lane (`index` read as a 64-bit integer).
    #[inline]
    fn add(&mut self, index: &Lanes, stride: i64) {
        if self.overflow == 0 {
            // The common case, without a branch per lane: nothing has overflowed, nor does now.
            let mut next = [0i64; WARP_LANES];
            let mut flagged = 0u32;
            for l in 0..WARP_LANES {
                let (d, o1) = (index[l] as i64).overflowing_mul(stride);
                let (sum, o2) = self.by[l].overflowing_add(d);
                next[l] = sum;
                flagged |= u32::from(o1 | o2) << l;
            }
            if flagged == 0 {
                self.by = next;
                return;
            }
        }
        self.add_wide(index, stride);
    }

    #[cold]
    fn add_wide(&mut self, index: &Lanes, stride: i64) {
        let wide = self.wide.get_or_insert_with(|| Box::new([0; WARP_LANES]));
        for l in 0..WARP_LANES {
            let term = i128::from(index[l] as i64) * i128::from(stride);
            if self.overflow >> l & 1 != 0 {
                wide[l] = wide[l].saturating_add(term);
                continue;
            }
            match i64::try_from(i128::from(self.by[l]) + term) {
                Ok(sum) => self.by[l] = sum,
                Err(_) => {
                    self.overflow |= 1 << l;
                    wide[l] = i128::from(self.by[l]) + term;
                }
            }
        }
    }

    /// Lane `l`'s offset, exactly.
    fn exact(&self, l: usize) -> i128 {
        match &self.wide {
            Some(wide) if self.overflow >> l & 1 != 0 => wide[l],
            _ => i128::from(self.by[l]),
        }
    }
}

/// A little-endian value of 1, 2, 4 or 8 bytes.
#[inline]
fn read_le(bytes: &[u8]) -> u64 {
    match bytes.len() {
        4 => u64::from(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
        8 => u64::from_le_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        ]),
        2 => u64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
        1 => u64::from(bytes[0]),
        _ => 0,
    }
}

/// Writes the low `bytes.len()` (1, 2, 4 or 8) bytes of `v`, little-endian.
#[inline]
fn write_le(bytes: &mut [u8], v: u64) {
    match bytes.len() {
        4 => bytes.copy_from_slice(&(v as u32).to_le_bytes()),
        8 => bytes.copy_from_slice(&v.to_le_bytes()),
        2 => bytes.copy_from_slice(&(v as u16).to_le_bytes()),
        1 => bytes[0] = v as u8,
        _ => {}
    }
}

fn lane_mask(lanes: &Lanes) -> u32 {
    let mut m = 0u32;
    for (l, v) in lanes.iter().enumerate() {
        m |= u32::from(*v != 0) << l;
    }
    m
}

/// Canonical bits of an integer result of type `ty`.
#[inline(always)]
fn canon(v: u64, ty: Scalar) -> u64 {
    match ty {
        Scalar::Bool => u64::from(v != 0),
        Scalar::I8 => v as i8 as i64 as u64,
        Scalar::U8 => v as u8 as u64,
        Scalar::I16 => v as i16 as i64 as u64,
        Scalar::U16 => v as u16 as u64,
        Scalar::I32 => v as i32 as i64 as u64,
        Scalar::U32 => v as u32 as u64,
        _ => v,
    }
}

fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

fn bits_f32(f: f32) -> u64 {
    u64::from(f.to_bits())
}

/// Converts one value between scalar types (C's conversions; float to integer saturates, which is
/// also what the GPU's conversion instructions do).
fn convert_value(v: u64, from: Scalar, to: Scalar) -> u64 {
    if to == Scalar::Bool {
        return match from {
            Scalar::F32 => u64::from(f32_of(v) != 0.0),
            Scalar::F64 => u64::from(f64::from_bits(v) != 0.0),
            _ => u64::from(v != 0),
        };
    }
    match (from.is_float(), to.is_float()) {
        (false, false) => canon(v, to),
        (false, true) => {
            let x = if from.is_signed() {
                v as i64 as f64
            } else {
                v as f64
            };
            if to == Scalar::F32 {
                let f = if from.is_signed() {
                    v as i64 as f32
                } else {
                    v as f32
                };
                bits_f32(f)
            } else {
                x.to_bits()
            }
        }
        (true, _) => {
            let x = if from == Scalar::F32 {
                f64::from(f32_of(v))
            } else {
                f64::from_bits(v)
            };
            match to {
                Scalar::F32 => bits_f32(x as f32),
                Scalar::F64 => x.to_bits(),
                Scalar::I8 => x as i8 as i64 as u64,
                Scalar::U8 => x as u8 as u64,
                Scalar::I16 => x as i16 as i64 as u64,
                Scalar::U16 => x as u16 as u64,
                Scalar::I32 => x as i32 as i64 as u64,
                Scalar::U32 => x as u32 as u64,
                Scalar::I64 => x as i64 as u64,
                _ => x as u64,
            }
        }
    }
}

macro_rules! lanes2 {
    ($out:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {{
        let (aa, bb, oo): (&Lanes, &Lanes, &mut Lanes) = ($a, $b, $out);
        for l in 0..WARP_LANES {
            let $x = aa[l];
            let $y = bb[l];
            oo[l] = $body;
        }
    }};
}

/// A binary operation over all 32 lanes. Division by zero must have been excluded for active
/// lanes; inactive lanes divide by one instead.
fn binary_lanes(op: BinOp, ty: Scalar, a: &Lanes, b: &Lanes, out: &mut Lanes) {
    use BinOp::*;
    match ty {
        Scalar::F32 => {
            let f = |x: u64| f32_of(x);
            match op {
                Add => lanes2!(out, a, b, |x, y| bits_f32(f(x) + f(y))),
                Sub => lanes2!(out, a, b, |x, y| bits_f32(f(x) - f(y))),
                Mul => lanes2!(out, a, b, |x, y| bits_f32(f(x) * f(y))),
                Div => lanes2!(out, a, b, |x, y| bits_f32(f(x) / f(y))),
                Rem => lanes2!(out, a, b, |x, y| bits_f32(f(x) % f(y))),
                Lt => lanes2!(out, a, b, |x, y| u64::from(f(x) < f(y))),
                Le => lanes2!(out, a, b, |x, y| u64::from(f(x) <= f(y))),
                Gt => lanes2!(out, a, b, |x, y| u64::from(f(x) > f(y))),
                Ge => lanes2!(out, a, b, |x, y| u64::from(f(x) >= f(y))),
                Eq => lanes2!(out, a, b, |x, y| u64::from(f(x) == f(y))),
                Ne => lanes2!(out, a, b, |x, y| u64::from(f(x) != f(y))),
                Min => lanes2!(out, a, b, |x, y| bits_f32(f(x).min(f(y)))),
                Max => lanes2!(out, a, b, |x, y| bits_f32(f(x).max(f(y)))),
                _ => *out = *a,
            }
        }
        Scalar::F64 => {
            let f = f64::from_bits;
            match op {
                Add => lanes2!(out, a, b, |x, y| (f(x) + f(y)).to_bits()),
                Sub => lanes2!(out, a, b, |x, y| (f(x) - f(y)).to_bits()),
                Mul => lanes2!(out, a, b, |x, y| (f(x) * f(y)).to_bits()),
                Div => lanes2!(out, a, b, |x, y| (f(x) / f(y)).to_bits()),
                Rem => lanes2!(out, a, b, |x, y| (f(x) % f(y)).to_bits()),
                Lt => lanes2!(out, a, b, |x, y| u64::from(f(x) < f(y))),
                Le => lanes2!(out, a, b, |x, y| u64::from(f(x) <= f(y))),
                Gt => lanes2!(out, a, b, |x, y| u64::from(f(x) > f(y))),
                Ge => lanes2!(out, a, b, |x, y| u64::from(f(x) >= f(y))),
                Eq => lanes2!(out, a, b, |x, y| u64::from(f(x) == f(y))),
                Ne => lanes2!(out, a, b, |x, y| u64::from(f(x) != f(y))),
                Min => lanes2!(out, a, b, |x, y| f(x).min(f(y)).to_bits()),
                Max => lanes2!(out, a, b, |x, y| f(x).max(f(y)).to_bits()),
                _ => *out = *a,
            }
        }
        Scalar::I32 => match op {
            // The hot path of index arithmetic: 32-bit signed.
            Add => lanes2!(out, a, b, |x, y| (x as i32).wrapping_add(y as i32) as i64
                as u64),
            Sub => lanes2!(out, a, b, |x, y| (x as i32).wrapping_sub(y as i32) as i64
                as u64),
            Mul => lanes2!(out, a, b, |x, y| (x as i32).wrapping_mul(y as i32) as i64
                as u64),
            Lt => lanes2!(out, a, b, |x, y| u64::from((x as i64) < (y as i64))),
            _ => integer_lanes(op, ty, a, b, out),
        },
        _ => integer_lanes(op, ty, a, b, out),
    }
}

fn integer_lanes(op: BinOp, ty: Scalar, a: &Lanes, b: &Lanes, out: &mut Lanes) {
    use BinOp::*;
    let bits = ty.size().max(4) * 8;
    let sh = |y: u64| (y as u32) & (bits - 1);
    if ty.is_signed() {
        let s = |x: u64| x as i64;
        match op {
            Add => lanes2!(out, a, b, |x, y| canon(x.wrapping_add(y), ty)),
            Sub => lanes2!(out, a, b, |x, y| canon(x.wrapping_sub(y), ty)),
            Mul => lanes2!(out, a, b, |x, y| canon(x.wrapping_mul(y), ty)),
            Div => lanes2!(out, a, b, |x, y| canon(
                s(x).wrapping_div(if y == 0 { 1 } else { s(y) }) as u64,
                ty
            )),
            Rem => lanes2!(out, a, b, |x, y| canon(
                s(x).wrapping_rem(if y == 0 { 1 } else { s(y) }) as u64,
                ty
            )),
            Shl => lanes2!(out, a, b, |x, y| canon(x.wrapping_shl(sh(y)), ty)),
            Shr => lanes2!(out, a, b, |x, y| canon(s(x).wrapping_shr(sh(y)) as u64, ty)),
            BitAnd => lanes2!(out, a, b, |x, y| x & y),
            BitOr => lanes2!(out, a, b, |x, y| x | y),
            BitXor => lanes2!(out, a, b, |x, y| canon(x ^ y, ty)),
            Lt => lanes2!(out, a, b, |x, y| u64::from(s(x) < s(y))),
            Le => lanes2!(out, a, b, |x, y| u64::from(s(x) <= s(y))),
            Gt => lanes2!(out, a, b, |x, y| u64::from(s(x) > s(y))),
            Ge => lanes2!(out, a, b, |x, y| u64::from(s(x) >= s(y))),
            Eq => lanes2!(out, a, b, |x, y| u64::from(x == y)),
            Ne => lanes2!(out, a, b, |x, y| u64::from(x != y)),
            Min => lanes2!(out, a, b, |x, y| if s(x) <= s(y) { x } else { y }),
            Max => lanes2!(out, a, b, |x, y| if s(x) >= s(y) { x } else { y }),
        }
    } else {
        match op {
            Add => lanes2!(out, a, b, |x, y| canon(x.wrapping_add(y), ty)),
            Sub => lanes2!(out, a, b, |x, y| canon(x.wrapping_sub(y), ty)),
            Mul => lanes2!(out, a, b, |x, y| canon(x.wrapping_mul(y), ty)),
            Div => lanes2!(out, a, b, |x, y| canon(x / if y == 0 { 1 } else { y }, ty)),
            Rem => lanes2!(out, a, b, |x, y| canon(x % if y == 0 { 1 } else { y }, ty)),
            Shl => lanes2!(out, a, b, |x, y| canon(x.wrapping_shl(sh(y)), ty)),
            Shr => lanes2!(out, a, b, |x, y| canon(x.wrapping_shr(sh(y)), ty)),
            BitAnd => lanes2!(out, a, b, |x, y| x & y),
            BitOr => lanes2!(out, a, b, |x, y| x | y),
            BitXor => lanes2!(out, a, b, |x, y| canon(x ^ y, ty)),
            Lt => lanes2!(out, a, b, |x, y| u64::from(x < y)),
            Le => lanes2!(out, a, b, |x, y| u64::from(x <= y)),
            Gt => lanes2!(out, a, b, |x, y| u64::from(x > y)),
            Ge => lanes2!(out, a, b, |x, y| u64::from(x >= y)),
            Eq => lanes2!(out, a, b, |x, y| u64::from(x == y)),
            Ne => lanes2!(out, a, b, |x, y| u64::from(x != y)),
            Min => lanes2!(out, a, b, |x, y| x.min(y)),
            Max => lanes2!(out, a, b, |x, y| x.max(y)),
        }
    }
}

fn math_value(f: MathFn, ty: Scalar, x: u64, y: u64) -> u64 {
    if f == MathFn::Abs {
        return match ty {
            Scalar::F32 => bits_f32(f32_of(x).abs()),
            Scalar::F64 => f64::from_bits(x).abs().to_bits(),
            _ => canon((x as i64).wrapping_abs() as u64, ty),
        };
    }
    let (a, b) = if ty == Scalar::F32 {
        (f64::from(f32_of(x)), f64::from(f32_of(y)))
    } else {
        (f64::from_bits(x), f64::from_bits(y))
    };
    let r = match f {
        MathFn::Sqrt => a.sqrt(),
        MathFn::Rsqrt => 1.0 / a.sqrt(),
        MathFn::Exp => a.exp(),
        MathFn::Log => a.ln(),
        MathFn::Sin => a.sin(),
        MathFn::Cos => a.cos(),
        MathFn::Tan => a.tan(),
        MathFn::Fabs | MathFn::Abs => a.abs(),
        MathFn::Floor => a.floor(),
        MathFn::Ceil => a.ceil(),
        MathFn::Round => a.round(),
        MathFn::Trunc => a.trunc(),
        MathFn::Pow => a.powf(b),
        MathFn::Fmin => a.min(b),
        MathFn::Fmax => a.max(b),
    };
    if ty == Scalar::F32 {
        bits_f32(r as f32)
    } else {
        r.to_bits()
    }
}

fn atomic_value(op: AtomicOp, ty: Scalar, old: u64, v: u64, v2: u64) -> u64 {
    match op {
        AtomicOp::Add => match ty {
            Scalar::F32 => bits_f32(f32_of(old) + f32_of(v)),
            Scalar::F64 => (f64::from_bits(old) + f64::from_bits(v)).to_bits(),
            _ => canon(old.wrapping_add(v), ty),
        },
        AtomicOp::Sub => canon(old.wrapping_sub(v), ty),
        AtomicOp::Exch => v,
        AtomicOp::Min => {
            if ty.is_signed() {
                if (v as i64) < (old as i64) {
                    v
                } else {
                    old
                }
            } else {
                old.min(v)
            }
        }
        AtomicOp::Max => {
            if ty.is_signed() {
                if (v as i64) > (old as i64) {
                    v
                } else {
                    old
                }
            } else {
                old.max(v)
            }
        }
        AtomicOp::And => old & v,
        AtomicOp::Or => old | v,
        AtomicOp::Xor => canon(old ^ v, ty),
        AtomicOp::Cas => {
            if old == v {
                v2
            } else {
                old
            }
        }
    }
}

/// The addresses of a memory instruction, per lane.
enum Target {
    /// Tagged pointers (see `memory`).
    Pointers(Lanes),
    /// Addresses in the space of one object that every lane's access was computed from, and
    /// what `Machine::fast_object` needs to know of their offsets in it.
    Object(usize, Lanes, OffsetSummary),
}

/// The offsets from an object's base of the lanes in `mask`, summed up while they are computed:
/// the largest, and all of them or-ed (whose low bits tell the alignment). The bounds and
/// alignment check of an access then needs no pass over the lanes of its own.
#[derive(Clone, Copy)]
struct OffsetSummary {
    mask: u32,
    highest: u64,
    bits: u64,
}

impl Target {
    /// A placeholder for `Machine::resolve` to fill.
    const EMPTY: Target = Target::Pointers([0; WARP_LANES]);

    fn pointers(&self) -> Lanes {
        match self {
            Target::Pointers(p) => *p,
            Target::Object(id, addresses, _) => {
                let mut out = [0u64; WARP_LANES];
                for (slot, &a) in out.iter_mut().zip(addresses) {
                    *slot = pointer(*id, a);
                }
                out
            }
        }
    }
}

/// Where one lane's access goes.
#[derive(Clone, Copy)]
struct Location {
    object: usize,
    /// The address in the object's space (shared, local and constant addresses start at 0).
    address: u64,
}

impl Machine<'_, '_> {
    #[cold]
    fn budget_error(&self, span: Span) -> Diagnostic {
        Diagnostic::new(span, step_budget_message(self.budget))
    }

    /// Counts one step of the block, and stops it when the budget is used up.
    #[inline(always)]
    fn step(&mut self, span: Span) -> Result<(), Diagnostic> {
        self.steps += 1;
        if self.steps > self.budget {
            return Err(self.budget_error(span));
        }
        Ok(())
    }

    /// Counts a warp's memory access as one step per active lane, on top of the steps of its
    /// expression. Arithmetic works on all 32 lanes at once, but an access checks, reads or
    /// writes and records each lane's address one by one, and every record is then analysed
    /// (banks or sectors, the timing profile). Counted as one step, a loop of global
    /// read-modify-writes ran at some 11 million steps a second natively against 80 million for
    /// a loop of arithmetic, so the budget bounded the one's time seven times more loosely than
    /// the other's.
    #[inline(always)]
    fn step_access(&mut self, mask: u32, span: Span) -> Result<(), Diagnostic> {
        self.steps += u64::from(mask.count_ones());
        if self.steps > self.budget {
            return Err(self.budget_error(span));
        }
        Ok(())
    }

    fn run_flow(
        &mut self,
        function: usize,
        flow: &mut Flow,
        valid: u32,
    ) -> Result<Stop, Diagnostic> {
        let program = self.program;
        let func = &program.functions[function];
        let code = &func.code;
        loop {
            let pc = flow.pc;
            let Some(op) = code.get(pc) else {
                return Ok(Stop::Done);
            };
            self.step(func.spans[pc])?;
            let mask = flow.mask;
            self.depends_on = 0;
            self.in_flight = func.loads_in_flight.get(pc).copied().unwrap_or(0);
            if mask != 0 {
                let issue = u64::from(func.issue.get(pc).copied().unwrap_or(0));
                self.issued += issue;
                self.thread_issued += issue * u64::from(mask.count_ones());
            }
            flow.pc = pc + 1;
            match op {
                Op::Eval(e) => {
                    if mask != 0 {
                        self.eval(e, mask)?;
                    }
                }
                Op::If {
                    cond,
                    else_at,
                    predicated,
                } => {
                    let taken = if mask != 0 {
                        let r = self.eval(cond, mask)?;
                        self.instructions += 1;
                        // The warp cannot branch before the data its condition reads is back.
                        self.dependence.control = self.dependence.control.max(self.depends_on);
                        lane_mask(&self.regs[r]) & mask
                    } else {
                        0
                    };
                    // Lanes that do not take an if-converted body still run its instructions,
                    // predicated off, and Nsight Compute counts them as thread instructions.
                    // A warp none of whose lanes take the body issues it as `issue` estimates
                    // it whole; one that runs it for some lanes issues its instructions as
                    // they come.
                    if let Some(body) = predicated {
                        let per_warp = if taken == 0 {
                            u64::from(body.issue)
                        } else {
                            func.issue
                                .get(pc + 1..*else_at)
                                .map_or(0, |costs| costs.iter().map(|&c| u64::from(c)).sum())
                        };
                        self.predicated_off_threads +=
                            per_warp * u64::from((mask & !taken).count_ones());
                    }
                    flow.stack.push(Frame::If { saved: mask, taken });
                    flow.mask = taken;
                    if taken == 0 {
                        // An if-converted body is issued by every warp that reaches it, its lanes
                        // predicated off; one none of whose lanes takes it skips nothing.
                        if let (true, Some(body)) = (mask != 0, predicated) {
                            self.predicated_off.add(body);
                        }
                        flow.pc = *else_at;
                    }
                }
                Op::Else { end_at } => {
                    if let Some(&Frame::If { saved, taken }) = flow.stack.last() {
                        flow.mask = saved & !taken & flow.alive();
                    }
                    if flow.mask == 0 {
                        flow.pc = *end_at;
                    }
                }
                Op::EndIf => {
                    if let Some(Frame::If { saved, .. }) = flow.stack.pop() {
                        flow.mask = saved & flow.alive();
                    }
                }
                Op::LoopBegin { end_at, .. } => {
                    flow.stack.push(Frame::Loop {
                        entry: mask,
                        brk: 0,
                        cont: 0,
                    });
                    if mask == 0 {
                        flow.pc = *end_at;
                    }
                }
                Op::LoopCond { cond, end_at } => {
                    if mask != 0 {
                        let r = self.eval(cond, mask)?;
                        self.instructions += 1;
                        self.dependence.control = self.dependence.control.max(self.depends_on);
                        flow.mask = lane_mask(&self.regs[r]) & mask;
                    }
                    if flow.mask == 0 {
                        flow.pc = *end_at;
                    }
                }
                Op::ContinuePoint => {
                    let mut rejoined = mask;
                    if let Some(Frame::Loop { cont, .. }) = flow.innermost_loop() {
                        rejoined |= *cont;
                        *cont = 0;
                    }
                    flow.mask = rejoined;
                }
                Op::Jump(target) => flow.pc = *target,
                Op::LoopEnd => {
                    if let Some(Frame::Loop { entry, .. }) = flow.stack.pop() {
                        flow.mask = entry & flow.alive();
                    }
                }
                Op::Break | Op::Continue => {
                    let is_break = matches!(op, Op::Break);
                    if let Some(Frame::Loop { brk, cont, .. }) = flow.innermost_loop() {
                        if is_break {
                            *brk |= mask;
                        } else {
                            *cont |= mask;
                        }
                    }
                    flow.mask = 0;
                }
                Op::Return(value) => {
                    if mask != 0 {
                        if let Some(v) = value {
                            self.eval(v, mask)?;
                        }
                    }
                    flow.returned |= mask;
                    flow.mask = 0;
                }
                Op::SyncThreads => {
                    if mask != 0 {
                        self.instructions += 1;
                        self.barriers += 1;
                        self.dependence.fences += 1;
                        let expected = valid & !flow.returned;
                        if mask != expected {
                            return Err(Diagnostic::new(
                                func.spans[pc],
                                format!(
                                    "__syncthreads() is reached by only some threads of the block (in warp {}, {} of {} lanes)",
                                    self.warp,
                                    mask.count_ones(),
                                    expected.count_ones()
                                ),
                            ));
                        }
                        return Ok(Stop::Barrier);
                    }
                }
                Op::SyncWarp => {
                    if mask != 0 {
                        self.instructions += 1;
                        self.dependence.fences += 1;
                    }
                }
            }
        }
    }

    /// Copies the lanes in `mask` of register `from` to register `to`.
    fn copy_masked(&mut self, from: usize, to: usize, mask: u32) {
        if let Some((from, to)) = pair(&mut self.regs, from, to) {
            copy_lanes_masked(from, to, mask);
        }
    }

    fn write_masked(&mut self, reg: usize, values: &Lanes, mask: u32) {
        if mask == FULL {
            self.regs[reg] = *values;
            return;
        }
        let target = &mut self.regs[reg];
        for l in 0..WARP_LANES {
            if mask >> l & 1 != 0 {
                target[l] = values[l];
            }
        }
    }

    /// Evaluates an expression for the active lanes in `mask` and returns the register holding
    /// its value. Each kind of node has its own method, marked `#[inline(never)]`, which keeps
    /// this recursive dispatcher's stack frame small: the deepest expressions at the bottom of the
    /// deepest `__device__` calls run on a 1 MB stack, a browser's.
    fn eval(&mut self, e: &Ex, mask: u32) -> Result<usize, Diagnostic> {
        self.step(e.span)?;
        let dst = (self.tbase + e.tmp) as usize;
        match &e.kind {
            ExKind::Const(bits) => Ok(self.splat(*bits, dst)),
            ExKind::Reg(r) => {
                let r = *r as usize;
                self.depends_on = self.depends_on.max(self.tags.get(r).copied().unwrap_or(0));
                Ok(r)
            }
            ExKind::Component(v, c) => Ok(self.eval(v, mask)? + usize::from(*c)),
            ExKind::AddrOf(id) => Ok(self.splat(pointer(*id, self.objects[*id].base), dst)),
            ExKind::Convert { from, to, value } => {
                let r = self.eval(value, mask)?;
                self.convert(*from, *to, r, dst);
                Ok(dst)
            }
            ExKind::Unary { op, ty, value } => {
                let r = self.eval(value, mask)?;
                self.unary(*op, *ty, r, dst);
                Ok(dst)
            }
            ExKind::Binary { op, ty, lhs, rhs } => {
                let a = self.eval(lhs, mask)?;
                let b = self.eval(rhs, mask)?;
                self.arith(*op, *ty, a, b, dst, mask, e.span)?;
                Ok(dst)
            }
            ExKind::Logical { and, lhs, rhs } => self.logical(*and, lhs, rhs, mask, dst),
            ExKind::Select { cond, a, b, n } => self.select(cond, a, b, *n, mask, dst),
            ExKind::Fma { ty, a, b, c } => {
                let ra = self.eval(a, mask)?;
                let rb = self.eval(b, mask)?;
                let rc = self.eval(c, mask)?;
                self.fma(*ty, [ra, rb, rc], mask, dst);
                Ok(dst)
            }
            ExKind::Math { f, ty, args } => {
                let mut rs = [0usize; 2];
                for (k, a) in args.iter().enumerate().take(2) {
                    rs[k] = self.eval(a, mask)?;
                }
                self.math(*f, *ty, rs, args.len(), dst);
                Ok(dst)
            }
            ExKind::MakeVector { parts, .. } => self.make_vector(parts, mask, dst),
            ExKind::Offset {
                base,
                terms,
                elem_size,
            } => self.offset(base, terms, *elem_size, mask, dst, e.span),
            ExKind::PtrDiff {
                lhs,
                rhs,
                elem_size,
            } => {
                let a = self.eval(lhs, mask)?;
                let b = self.eval(rhs, mask)?;
                self.pointer_difference(a, b, *elem_size, dst);
                Ok(dst)
            }
            ExKind::Load { addr, elem } => self.eval_load(addr, *elem, mask, dst, e.span),
            ExKind::Assign { place, value } => self.assign(place, value, mask, e.span),
            ExKind::Compound {
                place,
                op,
                ty,
                value,
            } => self.compound(place, *op, *ty, value, mask, dst, e.span),
            ExKind::IncDec {
                place,
                delta,
                post,
                pointer,
            } => self.inc_dec(place, *delta, *post, *pointer, mask, dst, e.span),
            ExKind::Atomic {
                op,
                ty,
                addr,
                value,
                value2,
            } => self.eval_atomic(*op, *ty, addr, value, value2.as_deref(), mask, dst, e.span),
            ExKind::Call { function, args } => self.call(*function, args, mask, dst),
            ExKind::Comma(a, b) => {
                self.eval(a, mask)?;
                self.eval(b, mask)
            }
            ExKind::Fence => {
                // No register: a fence has no value (and its node no temporary).
                if mask != 0 {
                    self.instructions += 1;
                    self.dependence.fences += 1;
                }
                Ok(dst)
            }
        }
    }

    /// The same bits in every lane of `dst`.
    #[inline(never)]
    fn splat(&mut self, bits: u64, dst: usize) -> usize {
        self.regs[dst] = [bits; WARP_LANES];
        dst
    }

    #[inline(never)]
    fn make_vector(&mut self, parts: &[Ex], mask: u32, dst: usize) -> Result<usize, Diagnostic> {
        for (k, p) in parts.iter().enumerate() {
            let r = self.eval(p, mask)?;
            self.copy_masked(r, dst + k, FULL);
        }
        self.instructions += 1;
        Ok(dst)
    }

    #[inline(never)]
    fn convert(&mut self, from: Scalar, to: Scalar, r: usize, dst: usize) {
        self.instructions += 1;
        let src = self.regs[r];
        let out = &mut self.regs[dst];
        if from == Scalar::I32 && to == Scalar::I64 {
            *out = src;
        } else if from == Scalar::I32 && to == Scalar::F32 {
            for l in 0..WARP_LANES {
                out[l] = bits_f32(src[l] as i64 as f32);
            }
        } else {
            for l in 0..WARP_LANES {
                out[l] = convert_value(src[l], from, to);
            }
        }
    }

    #[inline(never)]
    fn unary(&mut self, op: UnOp, ty: Scalar, r: usize, dst: usize) {
        self.instructions += 1;
        let src = self.regs[r];
        let out = &mut self.regs[dst];
        for l in 0..WARP_LANES {
            out[l] = match (op, ty) {
                (UnOp::Neg, Scalar::F32) => bits_f32(-f32_of(src[l])),
                (UnOp::Neg, Scalar::F64) => (-f64::from_bits(src[l])).to_bits(),
                (UnOp::Neg, t) => canon((src[l] as i64).wrapping_neg() as u64, t),
                (UnOp::BitNot, t) => canon(!src[l], t),
            };
        }
    }

    #[inline(never)]
    fn logical(
        &mut self,
        and: bool,
        lhs: &Ex,
        rhs: &Ex,
        mask: u32,
        dst: usize,
    ) -> Result<usize, Diagnostic> {
        let a = self.eval(lhs, mask)?;
        self.instructions += 1;
        let left = lane_mask(&self.regs[a]) & mask;
        let need = if and { left } else { mask & !left };
        let right = if need != 0 {
            let b = self.eval(rhs, need)?;
            lane_mask(&self.regs[b]) & need
        } else {
            0
        };
        let result = if and { left & right } else { left | right };
        for (l, slot) in self.regs[dst].iter_mut().enumerate() {
            *slot = u64::from(result >> l & 1);
        }
        Ok(dst)
    }

    #[inline(never)]
    fn select(
        &mut self,
        cond: &Ex,
        a: &Ex,
        b: &Ex,
        n: u8,
        mask: u32,
        dst: usize,
    ) -> Result<usize, Diagnostic> {
        let c = self.eval(cond, mask)?;
        self.instructions += 1;
        let yes = lane_mask(&self.regs[c]) & mask;
        let no = mask & !yes;
        let ra = if yes != 0 {
            Some(self.eval(a, yes)?)
        } else {
            None
        };
        let rb = if no != 0 {
            Some(self.eval(b, no)?)
        } else {
            None
        };
        for k in 0..usize::from(n) {
            for l in 0..WARP_LANES {
                let from = if yes >> l & 1 != 0 { ra } else { rb };
                if let Some(r) = from {
                    self.regs[dst + k][l] = self.regs[r + k][l];
                }
            }
        }
        Ok(dst)
    }

    #[inline(never)]
    fn fma(&mut self, ty: Scalar, r: [usize; 3], mask: u32, dst: usize) {
        self.instructions += 1;
        for l in 0..WARP_LANES {
            let (x, y, z) = (self.regs[r[0]][l], self.regs[r[1]][l], self.regs[r[2]][l]);
            self.regs[dst][l] = if ty == Scalar::F32 {
                bits_f32(f32_of(x).mul_add(f32_of(y), f32_of(z)))
            } else {
                f64::from_bits(x)
                    .mul_add(f64::from_bits(y), f64::from_bits(z))
                    .to_bits()
            };
        }
        if ty == Scalar::F32 {
            self.flops += 2 * u64::from(mask.count_ones());
            self.fp32_issued_flops += 2 * WARP_LANES as u64;
        }
    }

    #[inline(never)]
    fn math(&mut self, f: MathFn, ty: Scalar, r: [usize; 2], n_args: usize, dst: usize) {
        self.instructions += 1;
        for l in 0..WARP_LANES {
            let x = self.regs[r[0]][l];
            let y = if n_args > 1 { self.regs[r[1]][l] } else { 0 };
            self.regs[dst][l] = math_value(f, ty, x, y);
        }
    }

    /// A pointer moved by byte offsets, computed exactly: an active lane whose pointer would
    /// leave the address range is out of bounds of its object (`elem_size` is the unit of the
    /// index the error names).
    #[inline(never)]
    fn offset(
        &mut self,
        base: &Ex,
        terms: &[Term],
        elem_size: u32,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let b = self.eval(base, mask)?;
        // The base is copied before the terms are evaluated (its register may be a variable).
        let start = self.regs[b];
        let mut offsets = Offsets::new();
        for t in terms {
            let r = self.eval(&t.index, mask)?;
            self.instructions += 1;
            offsets.add(&self.regs[r], t.stride);
        }
        let mut bad = offsets.overflow;
        let out = &mut self.regs[dst];
        for l in 0..WARP_LANES {
            match pointer_add(start[l], offsets.by[l]) {
                Some(p) => out[l] = p,
                None => {
                    out[l] = start[l];
                    bad |= 1 << l;
                }
            }
        }
        bad &= mask;
        if bad != 0 {
            let l = bad.trailing_zeros() as usize;
            return Err(self.out_of_bounds(start[l], offsets.exact(l), elem_size, span));
        }
        Ok(dst)
    }

    /// The error of a lane whose pointer `p`, moved by `moved_by` bytes, is outside its object
    /// (or is no pointer into memory): the index it names counts elements of `unit` bytes from
    /// the object's start.
    #[cold]
    fn out_of_bounds(&self, p: u64, moved_by: i128, unit: u32, span: Span) -> Diagnostic {
        let Some(object) = pointer_object(p) else {
            return Diagnostic::new(span, "the pointer is null");
        };
        let Some(obj) = self.objects.get(object) else {
            return Diagnostic::new(span, "the pointer does not point into any memory");
        };
        let offset = i128::from(pointer_address(p)) - i128::from(obj.base) + moved_by;
        let index = offset.div_euclid(i128::from(unit.max(1)));
        Diagnostic::new(
            span,
            format!(
                "index {index} is outside {} '{}' ({} bytes)",
                obj.what, obj.name, obj.size
            ),
        )
    }

    #[inline(never)]
    fn pointer_difference(&mut self, a: usize, b: usize, elem_size: u32, dst: usize) {
        self.instructions += 1;
        for l in 0..WARP_LANES {
            // Both addresses lie within +-2^47, so their difference fits.
            let d = pointer_address(self.regs[a][l]) - pointer_address(self.regs[b][l]);
            self.regs[dst][l] = (d / i64::from(elem_size.max(1))) as u64;
        }
    }

    #[inline(never)]
    fn eval_load(
        &mut self,
        addr: &Ex,
        elem: Elem,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let outer = std::mem::take(&mut self.depends_on);
        let mut target = Target::EMPTY;
        self.resolve(addr, mask, &mut target)?;
        self.instructions += 1;
        // The load waits for what its address was computed from and for what the warp's
        // branches so far waited for; its value depends on the load itself if it went to global
        // or local memory (a round trip), otherwise on what its address did.
        let waits_for = self.depends_on.max(self.dependence.control);
        self.load_waits_for = waits_for;
        let loads_before = self.dependence.loads;
        let loaded = self.load(&target, mask, elem, dst, addr.span, span);
        self.load_waits_for = 0;
        loaded?;
        let value = if self.dependence.loads > loads_before {
            self.dependence.loads
        } else {
            waits_for
        };
        self.depends_on = outer.max(value);
        Ok(dst)
    }

    #[inline(never)]
    fn assign(
        &mut self,
        place: &Place,
        value: &Ex,
        mask: u32,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        match place {
            Place::Reg { reg, elem } => {
                let outer = std::mem::take(&mut self.depends_on);
                let v = self.eval(value, mask)?;
                self.instructions += 1;
                let value_depends_on = self.depends_on;
                for k in 0..usize::from(elem.n) {
                    let vals = self.regs[v + k];
                    self.write_masked(*reg as usize + k, &vals, mask);
                    if let Some(tag) = self.tags.get_mut(*reg as usize + k) {
                        // Lanes left out keep their value, and what it depended on.
                        *tag = if mask == FULL {
                            value_depends_on
                        } else {
                            (*tag).max(value_depends_on)
                        };
                    }
                }
                self.depends_on = outer.max(value_depends_on);
                Ok(*reg as usize)
            }
            Place::Mem { addr, elem } => {
                let mut target = Target::EMPTY;
                self.resolve(addr, mask, &mut target)?;
                let v = self.eval(value, mask)?;
                self.instructions += 1;
                self.store(&target, mask, *elem, v, addr.span, span)?;
                Ok(v)
            }
        }
    }

    /// Reads a place for a read-modify-write: its value goes to `dst` (memory) or stays in its
    /// register; returns that register and, for memory, the span of the address whose lanes
    /// `target` now holds, to write back to. The target is only made for memory: a register
    /// place (`r += ...`, `++k`), the common case, needs none.
    fn read_place(
        &mut self,
        place: &Place,
        mask: u32,
        dst: usize,
        span: Span,
        target: &mut Option<Target>,
    ) -> Result<(usize, Option<Span>), Diagnostic> {
        match place {
            Place::Reg { reg, .. } => Ok((*reg as usize, None)),
            Place::Mem { addr, elem } => {
                let target = target.insert(Target::EMPTY);
                self.resolve(addr, mask, target)?;
                self.instructions += 1;
                self.load(target, mask, *elem, dst, addr.span, span)?;
                Ok((dst, Some(addr.span)))
            }
        }
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn compound(
        &mut self,
        place: &Place,
        op: BinOp,
        ty: Scalar,
        value: &Ex,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let mut target = None;
        let (current, addr_span) = self.read_place(place, mask, dst, span, &mut target)?;
        let v = self.eval(value, mask)?;
        if let Place::Reg { reg, .. } = place {
            if let Some(tag) = self.tags.get_mut(*reg as usize) {
                *tag = (*tag).max(self.depends_on);
                self.depends_on = *tag;
            }
        }
        let pscalar = place.elem().scalar;
        if pscalar == ty && current != dst && v != dst {
            // The common `r += x` on a register of the operation's type: combine straight into
            // `dst` and copy the active lanes back, without staging the operand in `dst`.
            self.arith(op, ty, current, v, dst, mask, span)?;
            if let Place::Reg { reg, .. } = place {
                self.copy_masked(dst, *reg as usize, mask);
                return Ok(dst);
            }
        } else {
            self.combine_in_dst(current, op, ty, pscalar, v, mask, dst, span)?;
        }
        match (place, addr_span, &target) {
            (Place::Reg { reg, .. }, ..) => self.copy_masked(dst, *reg as usize, mask),
            (Place::Mem { elem, .. }, Some(addr_span), Some(target)) => {
                self.instructions += 1;
                self.store(target, mask, *elem, dst, addr_span, span)?;
            }
            _ => {}
        }
        Ok(dst)
    }

    /// `compound`'s general case: the place's value converted to the operation type in `dst`,
    /// combined with `v`, converted back.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn combine_in_dst(
        &mut self,
        current: usize,
        op: BinOp,
        ty: Scalar,
        pscalar: Scalar,
        v: usize,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let mut cur = self.regs[current];
        if pscalar != ty {
            for x in cur.iter_mut() {
                *x = convert_value(*x, pscalar, ty);
            }
        }
        self.regs[dst] = cur;
        self.arith(op, ty, dst, v, dst, mask, span)?;
        if pscalar != ty {
            for x in self.regs[dst].iter_mut() {
                *x = convert_value(*x, ty, pscalar);
            }
        }
        Ok(())
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn inc_dec(
        &mut self,
        place: &Place,
        delta: i64,
        post: bool,
        is_pointer: bool,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let mut target = None;
        let (current, addr_span) = self.read_place(place, mask, dst, span, &mut target)?;
        self.instructions += 1;
        if is_pointer {
            let mut m = mask;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let p = self.regs[current][l];
                if pointer_add(p, delta).is_none() {
                    let unit = delta.unsigned_abs() as u32;
                    return Err(self.out_of_bounds(p, i128::from(delta), unit, span));
                }
            }
        }
        let step = Step {
            delta,
            is_pointer,
            scalar: place.elem().scalar,
        };
        if let Place::Reg { reg, .. } = place {
            // A register variable (`++k`): step it in place, without staging copies. `dst` gets
            // the old or the new value of every lane, as below.
            let reg = *reg as usize;
            if let Some((from, to)) = pair(&mut self.regs, reg, dst) {
                if post {
                    *to = *from;
                } else {
                    step.apply(from, to);
                }
                if let Some((from, to)) = pair(&mut self.regs, dst, reg) {
                    if post {
                        step.apply_masked(from, to, mask);
                    } else {
                        copy_lanes_masked(from, to, mask);
                    }
                }
                return Ok(dst);
            }
        }
        let old = self.regs[current];
        let mut new = [0u64; WARP_LANES];
        step.apply(&old, &mut new);
        match (place, addr_span, &target) {
            (Place::Reg { reg, .. }, ..) => self.write_masked(*reg as usize, &new, mask),
            (Place::Mem { elem, .. }, Some(addr_span), Some(target)) => {
                self.regs[dst] = new;
                self.store(target, mask, *elem, dst, addr_span, span)?;
            }
            _ => {}
        }
        self.regs[dst] = if post { old } else { new };
        Ok(dst)
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn eval_atomic(
        &mut self,
        op: AtomicOp,
        ty: Scalar,
        addr: &Ex,
        value: &Ex,
        value2: Option<&Ex>,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let mut target = Target::EMPTY;
        self.resolve(addr, mask, &mut target)?;
        let v = self.eval(value, mask)?;
        let v2 = match value2 {
            Some(x) => Some(self.eval(x, mask)?),
            None => None,
        };
        self.instructions += 1;
        self.atomic(
            &target.pointers(),
            mask,
            op,
            ty,
            v,
            v2,
            dst,
            addr.span,
            span,
        )?;
        Ok(dst)
    }

    #[inline(never)]
    fn call(
        &mut self,
        function: usize,
        args: &[Ex],
        mask: u32,
        dst: usize,
    ) -> Result<usize, Diagnostic> {
        let program = self.program;
        let callee = &program.functions[function];
        // The argument registers and the callee's frame stack come from the machine's spares,
        // so that a call in a loop does not allocate each time. (All arguments are evaluated
        // before any is copied: an argument may itself call the function.)
        let mut arg_regs = self.spare_args.pop().unwrap_or_default();
        arg_regs.clear();
        for a in args {
            arg_regs.push(self.eval(a, mask)?);
        }
        self.instructions += 1;
        // The parameters depend on what the arguments together were computed from; the callee's
        // statements start their own accounting, so the caller's is kept aside.
        let args_depend_on = self.depends_on;
        let in_flight = self.in_flight;
        for (p, &r) in callee.params.iter().zip(&arg_regs) {
            for k in 0..usize::from(super::sema::width_of(&p.ty)) {
                self.regs[p.reg as usize + k] = self.regs[r + k];
                if let Some(tag) = self.tags.get_mut(p.reg as usize + k) {
                    *tag = args_depend_on;
                }
            }
        }
        self.spare_args.push(arg_regs);
        if self.call_depth >= MAX_CALL_DEPTH {
            return Err(Diagnostic::new(
                callee.span,
                format!("__device__ functions nest more than {MAX_CALL_DEPTH} calls deep"),
            ));
        }
        let saved = self.tbase;
        self.tbase = callee.temp_base;
        self.call_depth += 1;
        let mut stack = self.spare_stacks.pop().unwrap_or_default();
        stack.clear();
        let mut flow = Flow {
            pc: 0,
            mask,
            returned: 0,
            stack,
        };
        let result = self.run_flow(function, &mut flow, mask);
        self.spare_stacks.push(flow.stack);
        self.call_depth -= 1;
        self.tbase = saved;
        self.in_flight = in_flight;
        self.depends_on = args_depend_on;
        result?;
        if let Some((elem, reg)) = callee.ret {
            let returned = self.tags.get(reg as usize).copied().unwrap_or(0);
            self.depends_on = self.depends_on.max(returned);
            for k in 0..usize::from(elem.n) {
                self.regs[dst + k] = self.regs[reg as usize + k];
            }
        }
        Ok(dst)
    }

    /// Evaluates an address. The common form, an offset from a named object (`tile[ty][k]`,
    /// `partial`, a `__constant__` array), is computed directly as addresses in that object,
    /// without the object's address and the sum going through registers.
    ///
    /// The lanes are written into the caller's `target` rather than returned: a `Target` is 264
    /// bytes, and moving it out through a `Result` cost two copies per memory access.
    fn resolve(&mut self, addr: &Ex, mask: u32, target: &mut Target) -> Result<(), Diagnostic> {
        let (id, terms, elem_size): (usize, &[Term], u32) = match &addr.kind {
            ExKind::AddrOf(id) => (*id, &[], 1),
            ExKind::Offset {
                base,
                terms,
                elem_size,
            } => match base.kind {
                ExKind::AddrOf(id) => (id, terms, *elem_size),
                _ => {
                    let r = self.eval(addr, mask)?;
                    *target = Target::Pointers(self.regs[r]);
                    return Ok(());
                }
            },
            _ => {
                let r = self.eval(addr, mask)?;
                *target = Target::Pointers(self.regs[r]);
                return Ok(());
            }
        };
        self.step(addr.span)?;
        let base = self.objects[id].base;
        let mut summary = OffsetSummary {
            mask,
            highest: 0,
            bits: 0,
        };
        if terms.is_empty() {
            *target = Target::Object(id, [base; WARP_LANES], summary);
            return Ok(());
        }
        // The offsets are summed exactly; the addresses are the base plus them, summarised on
        // the way. An active lane whose address does not exist is out of bounds.
        let mut offsets = Offsets::new();
        for t in terms {
            let r = self.eval(&t.index, mask)?;
            self.instructions += 1;
            offsets.add(&self.regs[r], t.stride);
        }
        let mut bad = offsets.overflow;
        let mut out = [0u64; WARP_LANES];
        for (l, (slot, &by)) in out.iter_mut().zip(&offsets.by).enumerate() {
            match address_add(base as i64, by) {
                Some(a) => *slot = a as u64,
                None => bad |= 1 << l,
            }
            let on = 0u64.wrapping_sub(u64::from(mask >> l & 1));
            let offset = (by as u64) & on;
            summary.highest = summary.highest.max(offset);
            summary.bits |= offset;
        }
        bad &= mask;
        if bad != 0 {
            let l = bad.trailing_zeros() as usize;
            let p = pointer(id, base);
            return Err(self.out_of_bounds(p, offsets.exact(l), elem_size, addr.span));
        }
        *target = Target::Object(id, out, summary);
        Ok(())
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn arith(
        &mut self,
        op: BinOp,
        ty: Scalar,
        a: usize,
        b: usize,
        dst: usize,
        mask: u32,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.instructions += 1;
        if ty == Scalar::F32 && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
            self.flops += u64::from(mask.count_ones());
            self.fp32_issued_flops += WARP_LANES as u64;
        }
        if ty.is_integer() && matches!(op, BinOp::Div | BinOp::Rem) {
            let divisors = &self.regs[b];
            for (l, divisor) in divisors.iter().enumerate() {
                if mask >> l & 1 != 0 && *divisor == 0 {
                    return Err(Diagnostic::new(
                        span,
                        format!(
                            "integer division by zero (in lane {l} of warp {})",
                            self.warp
                        ),
                    ));
                }
            }
        }
        if let Some((x, y, out)) = regs3(&mut self.regs, a, b, dst) {
            binary_lanes(op, ty, x, y, out);
        } else if a == dst && b != dst {
            // `x op= y` into the left operand's register: only that operand needs a copy.
            let x = self.regs[a];
            if let Some((y, out)) = pair(&mut self.regs, b, dst) {
                binary_lanes(op, ty, &x, y, out);
            }
        } else {
            let (x, y) = (self.regs[a], self.regs[b]);
            binary_lanes(op, ty, &x, &y, &mut self.regs[dst]);
        }
        Ok(())
    }

    /// Finds the object and address of one lane's access, or the error that explains why not.
    fn locate(&self, p: u64, width: u32, span: Span) -> Result<Location, Diagnostic> {
        let Some(object) = pointer_object(p) else {
            return Err(Diagnostic::new(span, "the pointer is null"));
        };
        let Some(obj) = self.objects.get(object) else {
            return Err(Diagnostic::new(
                span,
                "the pointer does not point into any memory",
            ));
        };
        // Addresses are exact (pointer arithmetic is checked), so the offset is the true one.
        let offset = i128::from(pointer_address(p)) - i128::from(obj.base);
        if offset < 0 || offset + i128::from(width) > i128::from(obj.size) {
            return Err(self.out_of_bounds(p, 0, width, span));
        }
        let address = obj.base + offset as u64;
        let align = u64::from(width.min(16));
        if align > 1 && !address.is_multiple_of(align) {
            return Err(Diagnostic::new(
                span,
                format!(
                    "the {width}-byte access at byte {} of '{}' is misaligned",
                    address - obj.base,
                    obj.name
                ),
            ));
        }
        Ok(Location { object, address })
    }

    /// The physical byte of local memory for byte `logical` of thread `tid`'s frame.
    fn local_physical(&self, logical: u64, tid: u32) -> u64 {
        ((logical / 4) * u64::from(self.threads) + u64::from(tid)) * 4 + logical % 4
    }

    /// The address a record shows for a location.
    fn record_address(&self, loc: Location, lane: usize) -> u64 {
        match self.objects[loc.object].storage {
            Storage::Local => self.local_physical(loc.address, self.lane_tid[lane]),
            _ => loc.address,
        }
    }

    fn read_bytes(&mut self, loc: Location, lane: usize, out: &mut [u8]) {
        let obj = &self.objects[loc.object];
        match obj.storage {
            Storage::Global(m) => {
                let offset = loc.address - obj.base;
                self.memory[m].read(offset, out);
            }
            Storage::Shared => {
                let at = loc.address as usize;
                if let Some(src) = self.shared.get(at..at + out.len()) {
                    out.copy_from_slice(src);
                }
            }
            Storage::Local => {
                let tid = self.lane_tid[lane];
                for (k, byte) in out.iter_mut().enumerate() {
                    let phys = self.local_physical(loc.address + k as u64, tid);
                    let mut one = [0u8; 1];
                    self.local.read(phys, &mut one);
                    *byte = one[0];
                }
            }
        }
    }

    fn write_bytes(&mut self, loc: Location, lane: usize, data: &[u8]) {
        let obj = &self.objects[loc.object];
        match obj.storage {
            Storage::Global(m) => {
                let offset = loc.address - obj.base;
                self.memory[m].write(offset, data);
            }
            Storage::Shared => {
                let at = loc.address as usize;
                if let Some(dst) = self.shared.get_mut(at..at + data.len()) {
                    dst.copy_from_slice(data);
                }
            }
            Storage::Local => {
                let tid = self.lane_tid[lane];
                for (k, byte) in data.iter().enumerate() {
                    let phys = self.local_physical(loc.address + k as u64, tid);
                    self.local.write(phys, &[*byte]);
                }
            }
        }
    }

    /// Emits the records of one instruction: one per memory space its lanes touched.
    /// The object every active lane accesses, when they agree, are in bounds and aligned, and the
    /// object is global or shared memory: the common case, which `load_uniform` and
    /// `store_uniform` serve without per-lane lookups. Anything else takes the general path,
    /// which also finds the lane to blame for an error.
    fn uniform_object(&self, ptrs: &Lanes, mask: u32, width: u32) -> Option<usize> {
        if mask == 0 {
            return None;
        }
        let first = ptrs[mask.trailing_zeros() as usize];
        let id = pointer_object(first)?;
        let obj = self.objects.get(id)?;
        if !matches!(obj.storage, Storage::Global(_) | Storage::Shared) {
            return None;
        }
        let tag = first >> 48;
        // Branch-free over all lanes: any lane with another object, outside the object or
        // misaligned sends the access to the general path.
        let limit = obj.size.checked_sub(u64::from(width))?;
        let align = u64::from(width.min(16)) - 1;
        let mut bad = 0u64;
        for (l, &p) in ptrs.iter().enumerate() {
            let on = u64::from(mask >> l & 1);
            let offset = (p & ADDRESS_MASK).wrapping_sub(obj.base);
            let wrong = ((p >> 48) ^ tag) | u64::from(offset > limit) | (offset & align);
            bad |= wrong * on;
        }
        (bad == 0).then_some(id)
    }

    /// The object and addresses of an access that the fast paths can serve: one object for all
    /// active lanes, in bounds, aligned, in global or shared memory.
    fn fast_object<'t>(
        &self,
        target: &'t Target,
        mask: u32,
        width: u32,
    ) -> Option<(usize, &'t Lanes)> {
        match target {
            Target::Pointers(ptrs) => self.uniform_object(ptrs, mask, width).map(|id| (id, ptrs)),
            Target::Object(id, addresses, summary) => {
                let obj = self.objects.get(*id)?;
                if mask == 0 || !matches!(obj.storage, Storage::Global(_) | Storage::Shared) {
                    return None;
                }
                let limit = obj.size.checked_sub(u64::from(width))?;
                let align = u64::from(width.min(16)) - 1;
                let mut bad = 0u64;
                if summary.mask == mask {
                    // Every active offset is at most the highest, and has no bit the or lacks.
                    bad = u64::from(summary.highest > limit) | (summary.bits & align);
                } else {
                    for (l, &a) in addresses.iter().enumerate() {
                        let on = u64::from(mask >> l & 1);
                        let offset = a.wrapping_sub(obj.base);
                        bad |= (u64::from(offset > limit) | (offset & align)) * on;
                    }
                }
                (bad == 0).then_some((*id, addresses))
            }
        }
    }

    fn load_uniform(
        &mut self,
        id: usize,
        ptrs: &Lanes,
        mask: u32,
        scalar: Scalar,
        dst: usize,
        span: Span,
    ) {
        let obj = &self.objects[id];
        let (storage, base, size) = (obj.storage, obj.base, scalar.size() as usize);
        let out = &mut self.regs[dst];
        let mut m = mask;
        match storage {
            Storage::Shared if size == 4 => {
                // 32-bit words, the lessons' common case: no per-lane dispatch on the type.
                let signed = scalar == Scalar::I32;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = (ptrs[l] & ADDRESS_MASK) as usize;
                    if let Some(b) = self.shared.get(a..a + 4) {
                        let raw = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        out[l] = if signed {
                            raw as i32 as i64 as u64
                        } else {
                            u64::from(raw)
                        };
                    }
                }
            }
            Storage::Shared => {
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = (ptrs[l] & ADDRESS_MASK) as usize;
                    let raw = self.shared.get(a..a + size).map(read_le).unwrap_or(0);
                    out[l] = canon(raw, scalar);
                }
            }
            Storage::Global(index) => {
                let buffer = &mut self.memory[index];
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let raw = buffer.read_le((ptrs[l] & ADDRESS_MASK) - base, size);
                    out[l] = canon(raw, scalar);
                }
            }
            Storage::Local => {}
        }
        self.emit_uniform(id, ptrs, mask, AccessKind::Load, scalar.size(), span);
    }

    fn store_uniform(
        &mut self,
        id: usize,
        ptrs: &Lanes,
        mask: u32,
        scalar: Scalar,
        src: usize,
        span: Span,
    ) {
        let obj = &self.objects[id];
        let (storage, base, size) = (obj.storage, obj.base, scalar.size() as usize);
        let values = self.regs[src];
        let mut m = mask;
        match storage {
            Storage::Shared => {
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = (ptrs[l] & ADDRESS_MASK) as usize;
                    if let Some(slot) = self.shared.get_mut(a..a + size) {
                        write_le(slot, values[l]);
                    }
                }
            }
            Storage::Global(index) => {
                let buffer = &mut self.memory[index];
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    buffer.write(
                        (ptrs[l] & ADDRESS_MASK) - base,
                        &values[l].to_le_bytes()[..size],
                    );
                }
            }
            Storage::Local => {}
        }
        self.emit_uniform(id, ptrs, mask, AccessKind::Store, scalar.size(), span);
    }

    fn emit_uniform(
        &mut self,
        id: usize,
        ptrs: &Lanes,
        mask: u32,
        kind: AccessKind,
        width: u32,
        span: Span,
    ) {
        let obj = &self.objects[id];
        if !obj.records {
            return;
        }
        let Ok(width) = AccessWidth::new(width) else {
            return;
        };
        // The machine's one record is overwritten in place: building a fresh 560-byte record
        // per access and moving it cost a copy each time.
        let record = &mut self.record;
        record.access.space = obj.space;
        record.access.kind = kind;
        record.access.width = width;
        record.span = span;
        record.block = self.block;
        record.warp = self.warp;
        record.order = stamp(
            &mut self.dependence,
            self.load_waits_for,
            self.in_flight,
            obj.space,
            kind,
        );
        record.fences_passed = self.dependence.fences;
        for (l, slot) in record.access.lanes.iter_mut().enumerate() {
            *slot = (mask >> l & 1 != 0).then_some(ptrs[l] & ADDRESS_MASK);
        }
        self.sink.record(&self.record);
    }

    fn emit_records(
        &mut self,
        locations: &[Option<Location>; WARP_LANES],
        kind: AccessKind,
        width: u32,
        span: Span,
    ) {
        let Ok(width) = AccessWidth::new(width) else {
            return;
        };
        let mut done_spaces: [Option<Space>; 4] = [None; 4];
        for first in locations.iter().flatten() {
            let obj = &self.objects[first.object];
            if !obj.records {
                continue;
            }
            let space = obj.space;
            if done_spaces.contains(&Some(space)) {
                continue;
            }
            if let Some(slot) = done_spaces.iter_mut().find(|s| s.is_none()) {
                *slot = Some(space);
            }
            let mut lanes = [None; WARP_LANES];
            for (l, loc) in locations.iter().enumerate() {
                if let Some(loc) = loc {
                    let o = &self.objects[loc.object];
                    if o.space == space && o.records {
                        lanes[l] = Some(self.record_address(*loc, l));
                    }
                }
            }
            let record = MemRecord {
                access: WarpAccess {
                    space,
                    kind,
                    width,
                    lanes,
                },
                span,
                block: self.block,
                warp: self.warp,
                order: stamp(
                    &mut self.dependence,
                    self.load_waits_for,
                    self.in_flight,
                    space,
                    kind,
                ),
                fences_passed: self.dependence.fences,
            };
            self.sink.record(&record);
        }
    }

    fn locate_all(
        &self,
        ptrs: &Lanes,
        mask: u32,
        width: u32,
        span: Span,
    ) -> Result<[Option<Location>; WARP_LANES], Diagnostic> {
        let mut locations = [None; WARP_LANES];
        for l in 0..WARP_LANES {
            if mask >> l & 1 != 0 {
                locations[l] = Some(self.locate(ptrs[l], width, span)?);
            }
        }
        Ok(locations)
    }

    fn load(
        &mut self,
        target: &Target,
        mask: u32,
        elem: Elem,
        dst: usize,
        addr_span: Span,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.step_access(mask, span)?;
        let width = elem.bytes();
        if elem.n == 1 {
            if let Some((id, addresses)) = self.fast_object(target, mask, width) {
                self.load_uniform(id, addresses, mask, elem.scalar, dst, span);
                return Ok(());
            }
        }
        let ptrs = &target.pointers();
        let locations = self.locate_all(ptrs, mask, width, addr_span)?;
        let size = elem.scalar.size() as usize;
        let mut buf = [0u8; 32];
        for (l, loc) in locations.iter().enumerate() {
            let Some(loc) = loc else { continue };
            let bytes = &mut buf[..width as usize];
            self.read_bytes(*loc, l, bytes);
            for k in 0..usize::from(elem.n) {
                self.regs[dst + k][l] = decode(&buf[k * size..(k + 1) * size], elem.scalar);
            }
        }
        self.emit_records(&locations, AccessKind::Load, width, span);
        Ok(())
    }

    fn store(
        &mut self,
        target: &Target,
        mask: u32,
        elem: Elem,
        src: usize,
        addr_span: Span,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.step_access(mask, span)?;
        let width = elem.bytes();
        if elem.n == 1 {
            if let Some((id, addresses)) = self.fast_object(target, mask, width) {
                self.store_uniform(id, addresses, mask, elem.scalar, src, span);
                return Ok(());
            }
        }
        let ptrs = &target.pointers();
        let locations = self.locate_all(ptrs, mask, width, addr_span)?;
        let size = elem.scalar.size() as usize;
        let mut buf = [0u8; 32];
        for (l, loc) in locations.iter().enumerate() {
            let Some(loc) = loc else { continue };
            for k in 0..usize::from(elem.n) {
                encode(
                    self.regs[src + k][l],
                    elem.scalar,
                    &mut buf[k * size..(k + 1) * size],
                );
            }
            self.write_bytes(*loc, l, &buf[..width as usize]);
        }
        self.emit_records(&locations, AccessKind::Store, width, span);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        ptrs: &Lanes,
        mask: u32,
        op: AtomicOp,
        ty: Scalar,
        v: usize,
        v2: Option<usize>,
        dst: usize,
        addr_span: Span,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.step_access(mask, span)?;
        let width = ty.size();
        let locations = self.locate_all(ptrs, mask, width, addr_span)?;
        let mut buf = [0u8; 8];
        // The hardware serialises conflicting atomics in some order; lane order is one of them.
        for (l, loc) in locations.iter().enumerate() {
            let Some(loc) = loc else { continue };
            let bytes = &mut buf[..width as usize];
            self.read_bytes(*loc, l, bytes);
            let old = decode(bytes, ty);
            let second = v2.map(|r| self.regs[r][l]).unwrap_or(0);
            let new = atomic_value(op, ty, old, self.regs[v][l], second);
            encode(new, ty, bytes);
            self.write_bytes(*loc, l, &buf[..width as usize]);
            self.regs[dst][l] = old;
        }
        self.emit_records(&locations, AccessKind::Atomic, width, span);
        Ok(())
    }
}
