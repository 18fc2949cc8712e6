//! A warp's control flow (branches, loops, barriers, calls) and the evaluation of its expressions.

use super::block_vote::BlockVotes;
use super::lanes::{
    binary_lanes, bits_f32, canon, convert_value, copy_lanes_masked, f32_of, fma_f32, lane_mask,
    math_value, Lanes, Offsets, Step, FULL,
};
use super::launch::{step_budget_message, Dependence, MemRecord, RtObject, WarpWork};
use super::registers::Registers;
use super::reuse::{LoopWatch, ReuseBookkeeping};
use super::sink::RecordSink;
use crate::access::WARP_LANES;
use crate::kernel::ast::Scalar;
use crate::kernel::block_shift::{Guard, GuardRange};
use crate::kernel::ir::{
    BinOp, Ex, ExKind, MathFn, Op, Place, PredicatedBody, Reg, Term, UnOp, WarpOp,
};
use crate::kernel::issue::sfu_passes;
use crate::kernel::limits::MAX_CALL_DEPTH;
use crate::kernel::memory::{pointer, pointer_add, pointer_address, pointer_object, PagedBuffer};
use crate::kernel::sema::Program;
use crate::kernel::span::{Diagnostic, DiagnosticKind, Span};
use crate::printf_output::PrintfCollector;
use crate::sanitizer::Sanitizer;

#[derive(Clone, Copy, Debug)]
pub(super) enum Frame {
    If { saved: u32, taken: u32 },
    Loop { entry: u32, brk: u32, cont: u32 },
}

#[derive(Debug)]
pub(super) struct Flow {
    pub(super) pc: usize,
    pub(super) mask: u32,
    /// Lanes that have returned from this function.
    pub(super) returned: u32,
    pub(super) stack: Vec<Frame>,
}

impl Flow {
    /// Lanes that may be re-activated when a branch or loop ends: not returned, not waiting at
    /// the innermost loop's continue point or exit.
    pub(super) fn alive(&self) -> u32 {
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

    pub(super) fn innermost_loop(&mut self) -> Option<&mut Frame> {
        self.stack
            .iter_mut()
            .rev()
            .find(|f| matches!(f, Frame::Loop { .. }))
    }
}

pub(super) struct WarpState {
    pub(super) regs: Registers,
    /// Per register: the latest global or local load its value was computed from (`LoadOrder`).
    pub(super) tags: Vec<u32>,
    pub(super) dependence: Dependence,
    pub(super) flow: Flow,
    pub(super) valid: u32,
    pub(super) done: bool,
    /// The loop the warp is in, if its iterations are shown alike (`loops`).
    pub(super) watch: Option<Box<LoopWatch>>,
}

pub(super) enum Stop {
    Done,
    Barrier,
}

/// What a warp at a loop's head does next.
pub(super) enum AtHead {
    /// Runs the loop's test.
    Run,
    /// Stops at a barrier of a skipped iteration.
    Barrier,
}

pub(super) struct Machine<'s, 'p> {
    pub(super) program: &'p Program,
    pub(super) objects: &'s [RtObject],
    pub(super) memory: &'s mut [PagedBuffer],
    pub(super) shared: Vec<u8>,
    /// The block's local memory, in the hardware's interleaved layout; created as it is touched.
    pub(super) local: PagedBuffer,
    pub(super) threads: u32,
    pub(super) block: [u32; 3],
    pub(super) sink: &'s mut dyn RecordSink,
    /// The steps the block may take, all warps together, and the steps taken so far.
    pub(super) budget: u64,
    pub(super) regs: Registers,
    /// The current warp's register tags and loads (`WarpState`).
    pub(super) tags: Vec<u32>,
    pub(super) dependence: Dependence,
    /// The latest load the expression being evaluated was computed from so far.
    pub(super) depends_on: u32,
    /// The unrolling's loads in flight at the op being run (`FunctionIr::loads_in_flight`).
    pub(super) in_flight: u32,
    /// What the global or local load being made waits for (`LoadOrder::waits_for`).
    pub(super) load_waits_for: u32,
    pub(super) warp: u32,
    pub(super) lane_tid: [u32; WARP_LANES],
    pub(super) steps: u64,
    pub(super) instructions: u64,
    pub(super) flops: u64,
    pub(super) fp32_issued_flops: u64,
    /// Special function unit instructions issued (`issue::sfu_passes`).
    pub(super) sfu: u64,
    /// ALU pipe instructions issued, in `ISSUE_SCALE`-ths (`FunctionIr::alu`).
    pub(super) alu: u64,
    /// Passes through the warp-wide unit (`MATCH` two, `REDUX` one).
    pub(super) warp_unit: u64,
    pub(super) barriers: u64,
    /// SASS instructions issued (`BlockStats::issued_instructions`).
    pub(super) issued: u64,
    /// `issued` once per active lane (`BlockStats::thread_issued_instructions`).
    pub(super) thread_issued: u64,
    pub(super) predicated_off: PredicatedBody,
    pub(super) predicated_off_threads: u64,
    pub(super) tbase: Reg,
    /// How many `__device__` calls are open.
    pub(super) call_depth: u32,
    /// The record `emit_uniform` fills and hands to the sink.
    pub(super) record: MemRecord,
    /// Vectors of finished `__device__` calls, for the next calls to reuse.
    pub(super) spare_args: Vec<Vec<usize>>,
    pub(super) spare_stacks: Vec<Vec<Frame>>,
    /// What the block's run keeps for the reuse of its work: guard ranges, loop watches, the
    /// records handed so far (`ReuseBookkeeping`).
    pub(super) reuse: ReuseBookkeeping<'s>,
    /// The sanitizer, where the launch asks for it (`Simulation::sanitize`).
    pub(super) sanitizer: Option<&'s mut Sanitizer>,
    /// Where `printf`'s lines go, if the launch collects them.
    pub(super) printf: Option<&'s mut PrintfCollector>,
    /// The vote of the barrier that votes, open and last released (`block_vote`).
    pub(super) votes: BlockVotes,
}

impl Machine<'_, '_> {
    /// The block's work so far, as `WarpWork` counts it (a warp's own is the difference of two).
    pub(super) fn work(&self) -> WarpWork {
        WarpWork {
            instructions: self.instructions,
            flops: self.flops,
            fp32_issued_flops: self.fp32_issued_flops,
            sfu: self.sfu,
            alu: self.alu,
            warp_unit: self.warp_unit,
            barriers: self.barriers,
            issued: self.issued,
            thread_issued: self.thread_issued,
            predicated_off: self.predicated_off,
            predicated_off_threads: self.predicated_off_threads,
        }
    }

    /// Adds `times` times `work` (the work of one iteration of a loop) to the block's counts,
    /// saturating: only a budget near 2^64 steps lets a skip come near the limit.
    pub(super) fn add_work_times(&mut self, work: &WarpWork, times: u64) {
        let add =
            |count: &mut u64, per: u64| *count = count.saturating_add(per.saturating_mul(times));
        add(&mut self.instructions, work.instructions);
        add(&mut self.flops, work.flops);
        add(&mut self.fp32_issued_flops, work.fp32_issued_flops);
        add(&mut self.sfu, work.sfu);
        add(&mut self.alu, work.alu);
        add(&mut self.warp_unit, work.warp_unit);
        add(&mut self.barriers, work.barriers);
        add(&mut self.issued, work.issued);
        add(&mut self.thread_issued, work.thread_issued);
        add(
            &mut self.predicated_off_threads,
            work.predicated_off_threads,
        );
        self.predicated_off.add(&work.predicated_off.times(times));
    }

    /// Widens the range of `lhs - rhs` (registers `a` and `b`, canonical integers) over the
    /// active lanes, if `e` is one of the guards. Kept out of `eval`, whose frame every level of
    /// an expression's recursion pays.
    #[inline(never)]
    fn note_guard(&mut self, e: &Ex, a: usize, b: usize, mask: u32) {
        let site = (e.span.line, e.span.col, e.tmp);
        let Some(index) = self.reuse.guard_index(site) else {
            return;
        };
        let ExKind::Binary { op, .. } = e.kind else {
            return;
        };
        // The lanes' least and greatest differences on each side, noted once: a range is no more.
        let (mut true_low, mut true_high) = (i128::MAX, i128::MIN);
        let (mut false_low, mut false_high) = (i128::MAX, i128::MIN);
        for lane in 0..WARP_LANES {
            if mask >> lane & 1 == 0 {
                continue;
            }
            let d = i128::from(self.regs[a][lane] as i64) - i128::from(self.regs[b][lane] as i64);
            if Guard::outcome(op, d) {
                (true_low, true_high) = (true_low.min(d), true_high.max(d));
            } else {
                (false_low, false_high) = (false_low.min(d), false_high.max(d));
            }
        }
        let lanes = GuardRange {
            when_true: (true_low <= true_high).then_some((true_low, true_high)),
            when_false: (false_low <= false_high).then_some((false_low, false_high)),
        };
        self.reuse.widen_guard_range(index, lanes);
        if self.reuse.capturing {
            self.capture_guard(index, lanes);
        }
    }

    #[cold]
    pub(super) fn budget_error(&self, span: Span) -> Diagnostic {
        Diagnostic::of_kind(
            DiagnosticKind::StepBudget,
            span,
            step_budget_message(self.budget),
        )
    }

    /// Counts one step of the block, and stops it when the budget is used up.
    #[inline(always)]
    pub(super) fn step(&mut self, span: Span) -> Result<(), Diagnostic> {
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
    pub(super) fn step_access(&mut self, mask: u32, span: Span) -> Result<(), Diagnostic> {
        self.steps += u64::from(mask.count_ones());
        if self.steps > self.budget {
            return Err(self.budget_error(span));
        }
        Ok(())
    }

    pub(super) fn run_flow(
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
            if pc == self.reuse.watch_head && self.call_depth == 0 {
                if let AtHead::Barrier = self.at_loop_head(flow, func.spans[pc])? {
                    return Ok(Stop::Barrier);
                }
            }
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
                self.alu += u64::from(func.alu.get(pc).copied().unwrap_or(0));
            }
            flow.pc = pc + 1;
            match op {
                Op::Eval(e) => {
                    if mask != 0 {
                        let r = self.eval(e, mask)?;
                        // The argument of `__syncwarp(mask)` is evaluated just before it.
                        if let Some(sanitizer) = self.sanitizer.as_deref_mut() {
                            if matches!(code.get(pc + 1), Some(Op::SyncWarp)) {
                                let lane = mask.trailing_zeros() as usize;
                                sanitizer.pending_mask = Some(self.regs[r][lane] as u32);
                            }
                        }
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
                        self.true_lanes(r) & mask
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
                    } else if self.reuse.has_loop_plans() {
                        self.enter_loop(pc);
                    }
                }
                Op::LoopCond { cond, end_at } => {
                    if mask != 0 {
                        let r = self.eval(cond, mask)?;
                        self.instructions += 1;
                        self.dependence.control = self.dependence.control.max(self.depends_on);
                        flow.mask = self.true_lanes(r) & mask;
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
                    if self.reuse.watch.is_some() || self.reuse.nested_watch.is_some() {
                        self.leave_loop(pc);
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
                        let reported = self.sanitizer.as_deref_mut().is_some_and(|sanitizer| {
                            sanitizer.barrier(self.warp, func.spans[pc], mask, expected)
                        });
                        if mask != expected && !reported {
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
                        if self.reuse.capturing {
                            self.capture_barrier();
                        }
                        return Ok(Stop::Barrier);
                    }
                }
                Op::SyncWarp => {
                    if mask != 0 {
                        self.instructions += 1;
                        self.dependence.fences += 1;
                        if let Some(sanitizer) = self.sanitizer.as_deref_mut() {
                            // `__syncwarp()` names every lane.
                            let named = sanitizer.pending_mask.take().unwrap_or(u32::MAX);
                            let active = mask & !flow.returned;
                            sanitizer.warp_mask(self.warp, func.spans[pc], named, active, valid);
                        }
                    }
                }
            }
        }
    }

    /// The lanes whose register `r` is not zero (a condition's outcome).
    #[inline(always)]
    pub(super) fn true_lanes(&self, r: usize) -> u32 {
        if self.regs.is_uniform(r) {
            if self.regs[r][0] != 0 {
                FULL
            } else {
                0
            }
        } else {
            lane_mask(&self.regs[r])
        }
    }

    /// Copies the lanes in `mask` of register `from` to register `to`.
    pub(super) fn copy_masked(&mut self, from: usize, to: usize, mask: u32) {
        // A copy to every lane carries what the source is; a copy of a uniform value over the
        // same uniform value changes nothing.
        if mask == FULL && from != to {
            self.regs.copy(from, to);
            return;
        }
        if self.regs.is_uniform(from)
            && self.regs.is_uniform(to)
            && self.regs[from][0] == self.regs[to][0]
        {
            return;
        }
        if let Some((from, to)) = self.regs.pair(from, to) {
            copy_lanes_masked(from, to, mask);
        }
    }

    pub(super) fn write_masked(&mut self, reg: usize, values: &Lanes, mask: u32) {
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
    pub(super) fn eval(&mut self, e: &Ex, mask: u32) -> Result<usize, Diagnostic> {
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
                if self.reuse.keeps_guards() && op.is_comparison() {
                    self.note_guard(e, a, b, mask);
                }
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
            ExKind::Math {
                f: MathFn::XorwowPower,
                args,
                ..
            } => self.xorwow_power(args, mask, dst),
            ExKind::Math { f, ty, args } => {
                let mut rs = [0usize; 3];
                for (k, a) in args.iter().enumerate().take(3) {
                    rs[k] = self.eval(a, mask)?;
                }
                self.math(*f, *ty, rs, args.len(), dst);
                Ok(dst)
            }
            ExKind::MakeVector { parts, .. } => self.make_vector(parts, mask, dst),
            ExKind::Warp { op, ty, args } => self.warp_primitive(*op, *ty, args, mask, dst, e.span),
            ExKind::Output { kind, args } => self.output(kind, args, mask, dst, e.span),
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
                let r = self.eval(b, mask)?;
                // A value left in the second operand's own temporaries, which the comma's later
                // siblings reuse, moves to the comma's temporary; a variable's register stays.
                if r > dst {
                    for k in 0..usize::from(e.width) {
                        self.copy_masked(r + k, dst + k, mask);
                    }
                    return Ok(dst);
                }
                Ok(r)
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
    pub(super) fn splat(&mut self, bits: u64, dst: usize) -> usize {
        self.regs.fill(dst, bits);
        dst
    }

    #[inline(never)]
    pub(super) fn make_vector(
        &mut self,
        parts: &[Ex],
        mask: u32,
        dst: usize,
    ) -> Result<usize, Diagnostic> {
        for (k, p) in parts.iter().enumerate() {
            let r = self.eval(p, mask)?;
            self.copy_masked(r, dst + k, FULL);
        }
        self.instructions += 1;
        Ok(dst)
    }

    #[inline(never)]
    pub(super) fn convert(&mut self, from: Scalar, to: Scalar, r: usize, dst: usize) {
        self.instructions += 1;
        if self.regs.is_uniform(r) {
            let value = convert_value(self.regs[r][0], from, to);
            self.regs.fill(dst, value);
            return;
        }
        let src = self.regs[r];
        let out = &mut self.regs[dst];
        // The lanes' loops of the common conversions, which `convert_value` computes the same.
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
    pub(super) fn unary(&mut self, op: UnOp, ty: Scalar, r: usize, dst: usize) {
        self.instructions += 1;
        if matches!(op, UnOp::Popc | UnOp::Clz | UnOp::Ffs | UnOp::Brev) {
            // `POPC`, `FLO` and `BREV` run on the same unit as `MUFU` (probe `w_ballot`: one
            // `smsp__inst_executed_pipe_xu` a `__popc`).
            self.sfu += 1;
        }
        let value = |x: u64| match (op, ty) {
            (UnOp::Neg, Scalar::F32) => bits_f32(-f32_of(x)),
            (UnOp::Neg, Scalar::F64) => (-f64::from_bits(x)).to_bits(),
            // A 16-bit float's sign is its top bit.
            (UnOp::Neg, t) if t.is_half() => x ^ 0x8000,
            (UnOp::Neg, t) => canon((x as i64).wrapping_neg() as u64, t),
            (UnOp::BitNot, t) => canon(!x, t),
            // The bit counts of a 32- or 64-bit operand (CUDA Math API, "Integer Intrinsics").
            (UnOp::Popc, t) => u64::from(bits_of(x, t).count_ones()),
            (UnOp::Clz, t) => u64::from(bits_of(x, t).leading_zeros() - (64 - 8 * t.size())),
            (UnOp::Ffs, t) => match bits_of(x, t) {
                0 => 0,
                v => u64::from(v.trailing_zeros() + 1),
            },
            (UnOp::Brev, t) => bits_of(x, t).reverse_bits() >> (64 - 8 * t.size()),
        };
        if self.regs.is_uniform(r) {
            let one = value(self.regs[r][0]);
            self.regs.fill(dst, one);
            return;
        }
        let src = self.regs[r];
        let out = &mut self.regs[dst];
        for l in 0..WARP_LANES {
            out[l] = value(src[l]);
        }
    }

    #[inline(never)]
    pub(super) fn logical(
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
    pub(super) fn select(
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

    /// A warp-level primitive over the lanes in `mask` (those running the call): each lane's
    /// result from the operands of every lane, as the CUDA C++ Programming Guide defines it. A
    /// lane the call's mask names that is not running it is reported to the sanitizer, and is
    /// left out (its value, which the hardware leaves undefined, is never read).
    #[inline(never)]
    fn warp_primitive(
        &mut self,
        op: WarpOp,
        ty: Scalar,
        args: &[Ex],
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let mut rs = [0usize; 4];
        for (k, a) in args.iter().enumerate().take(4) {
            rs[k] = self.eval(a, mask)?;
        }
        self.instructions += 1;
        // A barrier's vote names no lanes: the block's threads vote, the block's barrier waits.
        match op {
            WarpOp::BlockVote => {
                self.votes.vote(mask, &self.regs[rs[0]]);
                self.write_masked(dst, &[0; WARP_LANES], mask);
                return Ok(dst);
            }
            WarpOp::BlockVoteResult(reduce) => {
                let result = self.votes.result(reduce);
                self.write_masked(dst, &[result; WARP_LANES], mask);
                return Ok(dst);
            }
            _ => {}
        }
        let first = mask.trailing_zeros() as usize % WARP_LANES;
        let named = if op == WarpOp::ActiveMask {
            mask
        } else {
            self.regs[rs[0]][first] as u32
        };
        if op != WarpOp::ActiveMask {
            let base = self.warp.saturating_mul(WARP_LANES as u32);
            let exist = self.threads.saturating_sub(base).min(WARP_LANES as u32);
            let valid = if exist >= 32 {
                FULL
            } else {
                (1u32 << exist) - 1
            };
            if let Some(sanitizer) = self.sanitizer.as_deref_mut() {
                sanitizer.warp_mask(self.warp, span, named, mask, valid);
            }
        }
        let taking = named & mask;
        let value = if args.len() > 1 {
            self.regs[rs[1]]
        } else {
            [0; WARP_LANES]
        };
        let mut out = [0u64; WARP_LANES];
        match op {
            WarpOp::Shfl | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => {
                let select = self.regs[rs[2]];
                // A width that is no power of two up to 32 is undefined; 32 is taken.
                let width = self.regs[rs[3]][first] as u32;
                let width = if width.is_power_of_two() && width <= 32 {
                    width
                } else {
                    32
                } as usize;
                for (lane, slot) in out.iter_mut().enumerate() {
                    let start = lane & !(width - 1);
                    let within = lane - start;
                    // PTX's `shfl.sync` reads the lane or offset from its operand's low five
                    // bits (`bval[4:0] = b[4:0]`): a delta of 33 moves by 1, as on the GPU.
                    let s = (select[lane] as u32 & 31) as usize;
                    let source = match op {
                        WarpOp::Shfl => Some(start + s % width),
                        WarpOp::ShflUp => within.checked_sub(s).map(|k| start + k),
                        WarpOp::ShflDown => {
                            Some(within + s).filter(|&k| k < width).map(|k| start + k)
                        }
                        _ => Some(lane ^ (s & 31)).filter(|&k| k < start + width),
                    };
                    *slot = value[source.unwrap_or(lane)];
                }
            }
            WarpOp::Ballot | WarpOp::Any | WarpOp::All => {
                let bits = (0..WARP_LANES)
                    .filter(|&l| taking >> l & 1 != 0 && value[l] != 0)
                    .fold(0u32, |bits, l| bits | 1 << l);
                let result = match op {
                    WarpOp::Ballot => u64::from(bits),
                    WarpOp::Any => u64::from(bits != 0),
                    _ => u64::from(bits == taking),
                };
                out = [result; WARP_LANES];
            }
            WarpOp::ActiveMask => out = [u64::from(mask); WARP_LANES],
            WarpOp::MatchAny => {
                self.warp_unit += 2;
                for (lane, slot) in out.iter_mut().enumerate() {
                    let same = (0..WARP_LANES)
                        .filter(|&l| taking >> l & 1 != 0 && value[l] == value[lane])
                        .fold(0u32, |bits, l| bits | 1 << l);
                    *slot = u64::from(same);
                }
            }
            WarpOp::Reduce(reduce) => {
                self.warp_unit += 1;
                let lanes = (0..WARP_LANES).filter(|&l| taking >> l & 1 != 0);
                let combine = |a: u64, b: u64| match (reduce, ty) {
                    (BinOp::Add, _) => canon(a.wrapping_add(b), ty),
                    (BinOp::Min, Scalar::I32) => (a as i64).min(b as i64) as u64,
                    (BinOp::Max, Scalar::I32) => (a as i64).max(b as i64) as u64,
                    (BinOp::Min, _) => a.min(b),
                    (BinOp::Max, _) => a.max(b),
                    (BinOp::BitAnd, _) => a & b,
                    (BinOp::BitOr, _) => a | b,
                    _ => a ^ b,
                };
                let result = lanes.map(|l| value[l]).reduce(combine).unwrap_or(0);
                out = [result; WARP_LANES];
            }
            // Answered before the lanes' mask is read, above.
            WarpOp::BlockVote | WarpOp::BlockVoteResult(_) => {}
        }
        self.write_masked(dst, &out, mask);
        Ok(dst)
    }

    #[inline(never)]
    pub(super) fn fma(&mut self, ty: Scalar, r: [usize; 3], mask: u32, dst: usize) {
        self.instructions += 1;
        let (a, b, c) = (self.regs[r[0]], self.regs[r[1]], self.regs[r[2]]);
        let out = &mut self.regs[dst];
        if ty == Scalar::F32 {
            // The active lanes only where some are off: each emulated FMA is a dozen operations,
            // and a divergent branch runs both of its paths with half the lanes. The others keep
            // what they held, which nothing reads.
            if mask == FULL {
                for l in 0..WARP_LANES {
                    out[l] = bits_f32(fma_f32(f32_of(a[l]), f32_of(b[l]), f32_of(c[l])));
                }
            } else {
                for l in 0..WARP_LANES {
                    if mask >> l & 1 != 0 {
                        out[l] = bits_f32(fma_f32(f32_of(a[l]), f32_of(b[l]), f32_of(c[l])));
                    }
                }
            }
        } else {
            for l in 0..WARP_LANES {
                out[l] = f64::from_bits(a[l])
                    .mul_add(f64::from_bits(b[l]), f64::from_bits(c[l]))
                    .to_bits();
            }
        }
        if ty == Scalar::F32 {
            self.flops += 2 * u64::from(mask.count_ones());
            self.fp32_issued_flops += 2 * WARP_LANES as u64;
        }
    }

    #[inline(never)]
    pub(super) fn math(&mut self, f: MathFn, ty: Scalar, r: [usize; 3], n_args: usize, dst: usize) {
        if ty == Scalar::F32 || ty.is_half() {
            self.sfu += u64::from(sfu_passes(f));
        }
        self.instructions += 1;
        let n = n_args.min(3);
        let operands = |regs: &Registers, l: usize| {
            let mut v = [0u64; 3];
            for k in 0..n {
                v[k] = regs[r[k]][l];
            }
            v
        };
        if (0..n).all(|k| self.regs.is_uniform(r[k])) {
            let value = math_value(f, ty, operands(&self.regs, 0));
            self.regs.fill(dst, value);
            return;
        }
        for l in 0..WARP_LANES {
            self.regs[dst][l] = math_value(f, ty, operands(&self.regs, l));
        }
    }

    /// Evaluates each term's index and adds it, times the term's stride, to `offsets`: an
    /// instruction a term, and one product for an index every lane shares. The caller's
    /// `offsets` is filled in place (it is some 280 bytes, copied if returned).
    #[inline(always)]
    pub(super) fn add_terms(
        &mut self,
        terms: &[Term],
        mask: u32,
        offsets: &mut Offsets,
    ) -> Result<(), Diagnostic> {
        for t in terms {
            let r = self.eval(&t.index, mask)?;
            self.instructions += 1;
            if self.regs.is_uniform(r) {
                offsets.add_same(&self.regs[r], t.stride);
            } else {
                offsets.add(&self.regs[r], t.stride);
            }
        }
        Ok(())
    }

    /// A pointer moved by byte offsets, computed exactly: an active lane whose pointer would
    /// leave the address range is out of bounds of its object (`elem_size` is the unit of the
    /// index the error names).
    #[inline(never)]
    pub(super) fn offset(
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
        self.add_terms(terms, mask, &mut offsets)?;
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
    pub(super) fn out_of_bounds(
        &self,
        p: u64,
        moved_by: i128,
        unit: u32,
        span: Span,
    ) -> Diagnostic {
        let Some(object) = pointer_object(p) else {
            return Diagnostic::new(span, "the pointer is null");
        };
        let Some(obj) = self.objects.get(object) else {
            return Diagnostic::new(span, "the pointer does not point into any memory");
        };
        let offset = i128::from(pointer_address(p)) - i128::from(obj.base) + moved_by;
        let index = offset.div_euclid(i128::from(unit.max(1)));
        Diagnostic::of_kind(
            DiagnosticKind::OutOfBounds(obj.what),
            span,
            format!(
                "index {index} is outside {} '{}' ({} bytes)",
                obj.what, obj.name, obj.size
            ),
        )
    }

    #[inline(never)]
    pub(super) fn pointer_difference(&mut self, a: usize, b: usize, elem_size: u32, dst: usize) {
        self.instructions += 1;
        for l in 0..WARP_LANES {
            // Both addresses lie within +-2^47, so their difference fits.
            let d = pointer_address(self.regs[a][l]) - pointer_address(self.regs[b][l]);
            self.regs[dst][l] = (d / i64::from(elem_size.max(1))) as u64;
        }
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn compound(
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
    pub(super) fn combine_in_dst(
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
    pub(super) fn inc_dec(
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
            if mask == FULL && reg != dst && self.regs.is_uniform(reg) {
                let old = self.regs[reg][0];
                let new = step.one(old);
                self.regs.fill(reg, new);
                self.regs.fill(dst, if post { old } else { new });
                return Ok(dst);
            }
            if let Some((from, to)) = self.regs.pair(reg, dst) {
                if post {
                    *to = *from;
                } else {
                    step.apply(from, to);
                }
                if let Some((from, to)) = self.regs.pair(dst, reg) {
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
    pub(super) fn call(
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
            for k in 0..usize::from(crate::kernel::sema::width_of(&p.ty)) {
                self.regs.copy(r + k, p.reg as usize + k);
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
                self.regs.copy(reg as usize + k, dst + k);
            }
        }
        Ok(dst)
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn arith(
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
        if ty == Scalar::F32 && op == BinOp::Div {
            // The reciprocal of an IEEE division (`MUFU.RCP`).
            self.sfu += 1;
        }
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
        if self.regs.is_uniform(a) && self.regs.is_uniform(b) {
            // One lane computes what every lane would (a division by zero has been reported).
            let mut value = [0];
            binary_lanes(op, ty, &[self.regs[a][0]], &[self.regs[b][0]], &mut value);
            self.regs.fill(dst, value[0]);
        } else if let Some((x, y, out)) = self.regs.regs3(a, b, dst) {
            binary_lanes(op, ty, x, y, out);
        } else if a == dst && b != dst {
            // `x op= y` into the left operand's register: only that operand needs a copy.
            let x = self.regs[a];
            if let Some((y, out)) = self.regs.pair(b, dst) {
                binary_lanes(op, ty, &x, y, out);
            }
        } else {
            let (x, y) = (self.regs[a], self.regs[b]);
            binary_lanes(op, ty, &x, &y, &mut self.regs[dst]);
        }
        Ok(())
    }
}

/// The operand's own bits: its size's worth, without the sign extension registers hold.
fn bits_of(x: u64, ty: Scalar) -> u64 {
    match ty.size() {
        8 => x,
        size => x & ((1u64 << (8 * size)) - 1),
    }
}
