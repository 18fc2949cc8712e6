//! A kernel ready to run (`Simulation`): the launch laid out in memory (each object's addresses,
//! the contents of global memory, the parameters' register values), and the block loop that runs
//! a block warp by warp, every warp to its next barrier or its end in turn, handing each record to
//! a sink (`Simulation::run_warps`).
//!
//! What `warps` and `loops` reuse of a block's work is set up from here and kept between blocks:
//! the guards `Simulation::shifted_buffers` starts afresh, the warp classes and loop plans, and the
//! loop watches a block leaves for the next. `warps` and `loops` add the methods that fill them.

use super::block_vote::BlockVotes;
use super::launch::{
    check_launch_names, fill_scalar, launch_error, parameter_leaves, scalar_argument,
    splitmix_stream, BlockRun, BlockSelection, BlockStats, Dependence, Launch, LoadOrder,
    MemRecord, RtObject, RunConfig, Storage, BUFFER_ALIGN, GLOBAL_BASE, MAX_BUFFER_BYTES,
    MAX_GLOBAL_END, MAX_LOCAL_BYTES, MAX_SHARED_BYTES,
};
use super::machine::{Flow, Machine, Stop, WarpState};
use super::registers::Registers;
use super::reuse::{LoopPlan, LoopWatch, ReuseBookkeeping, WarpClasses, WarpLog};
use super::sink::RecordSink;
use crate::access::{AccessKind, AccessWidth, Space, WarpAccess, WARP_LANES};
use crate::kernel::ast::Type;
use crate::kernel::block_shift::{
    self, Guard, GuardRange, GuardSite, LaunchConstants, ShiftedBuffer,
};
use crate::kernel::ir::{
    ObjectInit, ObjectSpace, PredicatedBody, Reg, REG_BLOCK_DIM, REG_BLOCK_IDX, REG_THREAD_IDX,
};
use crate::kernel::memory::{pointer, pointer_object, Fill, PagedBuffer};
use crate::kernel::sema::Program;
use crate::kernel::span::{Diagnostic, MemoryObject, Span};
use crate::printf_output::{PrintfCollector, PrintfOutput};
use crate::sanitizer::{Sanitizer, SanitizerConfig, SanitizerReport};

/// A pointer parameter's buffer as `Simulation::new` lays it out: the buffer's name, first
/// address and bytes, where in it the parameter points, and its index in global memory.
struct ParamBuffer<'a> {
    parameter: &'a str,
    buffer: &'a str,
    base: u64,
    bytes: u64,
    offset_bytes: u64,
    memory: usize,
}

/// A kernel ready to run: its launch, memory objects and the contents of global memory.
#[derive(Debug)]
pub struct Simulation<'p> {
    pub(super) program: &'p Program,
    pub(super) kernel: usize,
    pub(super) launch: Launch,
    pub(super) objects: Vec<RtObject>,
    pub(super) memory: Vec<PagedBuffer>,
    /// The kernel parameters' registers and their values (scalar bits or pointer), a struct or
    /// vector parameter's one per scalar it holds; whether the register holds a pointer.
    pub(super) param_values: Vec<(Reg, u64, bool)>,
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
    /// The sanitizer, where the launch asks for it (`Simulation::sanitize`).
    pub(super) sanitizer: Option<Box<Sanitizer>>,
    /// The lines printed so far, where the launch collects them (`collect_printf`).
    pub(super) printf: Option<Box<PrintfCollector>>,
}

impl<'p> Simulation<'p> {
    /// The index of `site` among the guards whose ranges each block run keeps, added if new.
    pub(super) fn guard_index(&mut self, site: GuardSite) -> usize {
        match self.guard_sites.iter().position(|&s| s == site) {
            Some(index) => index,
            None => {
                self.guard_sites.push(site);
                self.guard_sites.len() - 1
            }
        }
    }

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
        crate::pointer_argument::check(func, launch)?;
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
                // The buffer the parameter points into, named after it unless a pointer
                // argument says otherwise; `pointer_argument::check` has bounded the offset.
                let (buffer, offset) = crate::pointer_argument::target(&launch.pointers, &p.name);
                let Some(&(_, bytes)) = launch.buffers.iter().find(|(n, _)| n == buffer) else {
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
                    .with_launch_fill(crate::fill::fill_of(&launch.fills, buffer));
                memory.push(PagedBuffer::new(bytes, fill, stream.next()));
                param_buffers.push(ParamBuffer {
                    parameter: &p.name,
                    buffer,
                    base: next_global,
                    bytes,
                    offset_bytes: offset * crate::pointer_argument::element_bytes(&p.ty),
                    memory: memory.len() - 1,
                });
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
                    // A file-scope one is allocated where the kernel or a function it calls
                    // names it (`FunctionIr::names_object`).
                    let id = objects.len();
                    let reached = match obj.function {
                        Some(_) => reached,
                        None => reachable
                            .iter()
                            .any(|&f| program.functions[f].names_object(id)),
                    };
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
            if !matches!(p.ty, Type::Pointer { .. } | Type::Scalar(_)) {
                let leaves = parameter_leaves(&p.name, &p.ty).map_err(|why| {
                    launch_error(
                        p.span,
                        format!(
                            "the parameter '{}' ({}) cannot be given by the launch: {why}",
                            p.name, p.ty
                        ),
                    )
                })?;
                for (k, (leaf, scalar)) in leaves.iter().enumerate() {
                    let Some((_, v)) = launch.args.iter().find(|(n, _)| n == leaf) else {
                        return Err(launch_error(
                            p.span,
                            format!(
                                "the launch gives no value for '{leaf}', a member of the parameter '{}' ({})",
                                p.name, p.ty
                            ),
                        ));
                    };
                    let mut member = p.clone();
                    member.name = leaf.clone();
                    let bits = scalar_argument(*v, *scalar, &member)?;
                    param_values.push((p.reg + k as Reg, bits, false));
                }
                continue;
            }
            let value = match &p.ty {
                Type::Pointer { .. } => {
                    let Some(b) = param_buffers.iter().find(|b| b.parameter == p.name) else {
                        return Err(launch_error(p.span, format!("no buffer for '{}'", p.name)));
                    };
                    objects.push(RtObject {
                        name: b.buffer.to_string(),
                        what: MemoryObject::Buffer,
                        space: Space::Global,
                        base: b.base,
                        size: b.bytes,
                        storage: Storage::Global(b.memory),
                        records: true,
                    });
                    pointer(objects.len() - 1, b.base + b.offset_bytes)
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
            param_values.push((p.reg, value, matches!(p.ty, Type::Pointer { .. })));
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
            sanitizer: None,
            printf: None,
        })
    }

    /// Collects what the blocks run from now on print (`crate::printf_output`).
    pub fn collect_printf(&mut self) {
        self.printf = Some(Box::default());
    }

    /// What the blocks printed since `collect_printf`, and no more collecting.
    pub fn take_printf(&mut self) -> Option<PrintfOutput> {
        self.printf.take().map(|collector| collector.finish())
    }

    /// Turns the sanitizer's `config` on for the blocks run from now on (`crate::sanitizer`).
    /// Its findings are only those of warps and iterations that run: a launch with the
    /// sanitizer runs every one (`simulate`'s reuse plan).
    pub fn sanitize(&mut self, config: SanitizerConfig) {
        self.sanitizer = config.any().then(|| Box::new(Sanitizer::new(config)));
    }

    /// What the sanitizer found so far, if it is on.
    pub fn sanitizer_report(&self) -> Option<&SanitizerReport> {
        self.sanitizer.as_deref().map(Sanitizer::report)
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
        let mut constants = LaunchConstants::default();
        for &(reg, v, is_pointer) in &self.param_values {
            match pointer_object(v) {
                Some(object) if is_pointer => {
                    constants.pointers.insert(reg, object);
                }
                _ => {
                    constants.values.insert(reg, v as i64);
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
        crate::sorting::sort_by_key(&mut objects, |&(_, base, _)| base);
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
            sfu: 0,
            alu: 0,
            warp_unit: 0,
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
            reuse: ReuseBookkeeping::new(
                &self.guard_sites,
                &self.loop_plans,
                std::mem::take(&mut self.spare_watches),
            ),
            sanitizer: self.sanitizer.as_deref_mut(),
            printf: self.printf.as_deref_mut(),
            votes: BlockVotes::default(),
        };
        if let Some(printf) = machine.printf.as_deref_mut() {
            printf.begin_block(
                u64::from(block[0])
                    + u64::from(g.x) * (u64::from(block[1]) + u64::from(g.y) * u64::from(block[2])),
            );
        }
        if let Some(sanitizer) = machine.sanitizer.as_deref_mut() {
            sanitizer.begin_block(block, self.shared_bytes as usize);
        }
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
                for &(reg, v, _) in &self.param_values {
                    regs.fill(reg as usize, v);
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
                let work = machine.work();
                let before = log
                    .as_deref_mut()
                    .map(|log| log.begin(w, &mut machine.reuse, work));
                let result = machine.run_flow(self.kernel, &mut warp.flow, warp.valid);
                if let (Some(log), Some(before)) = (log.as_deref_mut(), before) {
                    let work = machine.work();
                    log.end(w, before, &mut machine.reuse, work);
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
            if let Some(sanitizer) = machine.sanitizer.as_deref_mut() {
                sanitizer.barrier_released();
            }
            machine.votes.release();
            if !any_waiting {
                break;
            }
        }
        if let Some(printf) = machine.printf.as_deref_mut() {
            printf.end_block();
        }
        self.guard_ranges = machine.reuse.take_guard_ranges();
        self.spare_watches = std::mem::take(&mut machine.reuse.spare_watches);
        Ok(BlockStats {
            block,
            flops: machine.flops,
            warp_instructions: machine.instructions,
            fp32_issued_flops: machine.fp32_issued_flops,
            sfu_instructions: machine.sfu,
            alu_instructions: machine.alu,
            warp_unit_passes: machine.warp_unit,
            barrier_warp_instructions: machine.barriers,
            issued_instructions: machine.issued,
            predicated_off: machine.predicated_off,
            thread_issued_instructions: machine.thread_issued,
            predicated_off_threads: machine.predicated_off_threads,
            steps: machine.steps,
            warps_shown_alike: 0,
            iterations_skipped: machine.reuse.iterations_skipped(),
        })
    }
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
