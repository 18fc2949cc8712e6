//! Loops whose iterations provably do the same work at moved addresses, and the exactness
//! contract of all the interpreter's reuse: which premises make a skipped iteration or a warp that
//! did not run exact, where each is checked, and what runs instead when one fails.
//!
//! # The exactness contract
//!
//! The records of the loop iterations a warp skips (here) and of the warps of a block that do not
//! run (`warps`) reach the sink as a full run makes them, in the order it makes them, and the
//! block's counts (work, steps, guard ranges, load order, fences) are what the full run makes.
//! Only data are made up: a skipped iteration or warp stores nothing, so memory afterwards may
//! differ, and nothing that decides a record reads it. The premises, each with where it is
//! checked:
//!
//! 1. *No branch or address depends on loaded data, and each access site moves by a fixed number
//!    of bytes per iteration (per warp of a class)*, with the rest of what `block_shift`'s module
//!    doc lists. Proved from the kernel's code, with
//!    the launch's values as constants: `block_shift::analyze_loop`, called by
//!    `Simulation::summarise_loops` (here), and `block_shift::analyze_warps`, called by
//!    `Simulation::show_warps_alike` (`warps`), which first checks with `warps::thread_shift`
//!    that `threadIdx` moves alike in every lane. A nested loop with a barrier gets no plan.
//!    Every record of the iteration run must come from a site the proof gives a move
//!    (`Machine::alike_after`).
//! 2. *The iteration run is one that the proof speaks of*: at the next head the same lanes are
//!    in the loop at the same depth, with the same control dependence, every induction register
//!    moved by its step in those lanes, and no record waited for data loaded in the iteration.
//!    Checked by `Machine::alike_after` (here).
//! 3. *Every guard keeps each lane's outcome* in every iteration skipped (the loop's own test
//!    among them) and in every warp a leader stands for: `alike_iterations` with
//!    `Guard::holds_alike_over` (here, from `Machine::alike_after`), and `Guard::holds_alike` in
//!    `Simulation::replay_with` (`warps`).
//! 4. *Every moved access stays inside its object, aligned*, as the interpreter requires of
//!    every access: `Machine::room` (here) and `Simulation::moves_inside` (`warps`), both on
//!    `launch::holding_object`.
//! 5. *Where the proof leaves a site's move open* (warps only), the class's first two warps ran
//!    and every record of the second is the first's, moved alike in every lane, with the same
//!    site, width, load order and fences, and the two did the same work:
//!    `Simulation::record_moves` with `warps::record_move`.
//! 6. *The step budget*: skipped iterations count the steps they would take, and a skip past the
//!    budget stops the block at the loop's test as a full run would stop it
//!    (`Machine::alike_after`, `Machine::skip_ahead`).
//!
//! What falls back when a premise fails: a loop whose iteration does not bear out premise 2, 3 or
//! 4 is captured again at its next head, up to `CAPTURES` times (times its `unroll`), and then runs
//! in full; its iterations after the ones that come out alike (the guarded matmul's last phase)
//! run; an iteration that makes more than `MAX_CAPTURED_RECORDS` records ends the watch and the
//! loop runs in full. Where the proof gives every site's move, a block whose warps do not bear
//! out premise 3 runs again with the first warp that differs as a leader too (`Attempt::Lead`), as
//! long as the attempts together run no more warps than the block has; any other failure, or an
//! error in an attempt, hands the sink nothing and the block runs every warp
//! (`Simulation::run_block_into`, `Simulation::run_warps`).
//!
//! What a sink may do with the records is its own contract (`RecordSink`: every override is
//! equal to its default). A sink that counts a repeated or moved record as the record it repeats
//! rests on one lemma, tested below: an access moved by a whole number of
//! `counters::AccessMeasure::move_unit` bytes makes the same measure (`AccessMeasure::of`). The
//! unit is a row of banks for shared memory (128 bytes on the H100); for global and local memory
//! it is a 32-byte sector on the devices that count sectors, so that a move by half a 128-byte
//! line keeps the counters too, and `coalescing::SHAPE_MOVE_BYTES` (256 bytes) on cc 1.x. The
//! profile's shape of an access (its lines per request) holds under moves of
//! `profile::shape_move_bytes` (whole lines where sectors are counted); a block's shift by half a
//! line more keeps its profile only where its requests fill no line's two halves
//! (`profile::TouchedRange::half_line_shift_safe`, which `simulate`'s `runs_alike` reads before a
//! block's run stands for another's). A read that the compiled
//! code fuses with the next must move by whole fused loads, or its pairs would fall otherwise:
//! `Simulation::summarise_loops` captures as many iterations at once as that takes
//! (`unroll_for`); where that would take more than `MOST_UNROLLED` iterations, the sink finds
//! the fused reads moving unevenly (`simulate`'s `effects_move_alike`) and passes the skipped
//! iterations' records through the fuser one by one.
//!
//! # How a loop is skipped
//!
//! Loops whose iterations provably do the same work at moved addresses: a warp runs one
//! iteration, and the records of the iterations after it are that iteration's moved, without
//! running them (issue 13, "run less": "a loop whose iterations are provably alike up to an
//! address offset runs a few iterations and the rest is counted exactly from them").
//!
//! The guarded tiled matmul's loop over the phases, `for (int p = 0; p < 63; ++p)`, loads a tile
//! of `a` 64 bytes further on each phase and a tile of `b` 16 rows further down, and stores and
//! reads the shared tiles at the same places; its bounds checks (`p * TILE_WIDTH + tx < n`) come
//! out alike in every phase but the last. `block_shift::analyze_loop` proves from the kernel's
//! code that each access of an iteration is the same access of the iteration before moved by a
//! fixed number of bytes (`LoopShift::site_shifts`), that the loop's branches depend only on
//! its guards (`p < 63`, the bounds checks) and on values the same in every iteration, and
//! which registers step by a constant each iteration (`p`).
//!
//! A warp that enters such a loop captures one iteration, from the loop's head (its test) to the
//! head again: the records it made, where it passed barriers, its work, the difference each
//! guard compared. At the next head it checks what the proof leaves to the run: the same lanes
//! are in the loop, each induction register moved by its step in every lane, no record waited
//! for data loaded in the iteration. Then it works out how many iterations more come out alike:
//! every guard keeps each lane's outcome (the loop's own test too, which ends the count at the
//! loop's last iteration), and every moved access stays in its object, aligned. It skips those
//! iterations: the induction registers jump ahead, the work and the steps are the captured
//! iteration's times as many, the guards' ranges spread over the iterations skipped; and the
//! records of every skipped iteration go to the sink, the captured ones moved, in the order a
//! full run makes them. At each barrier of a skipped iteration the warp stops as it would, so
//! that the block's other warps run their part of the round: the records of the block reach the
//! sink warp by warp, round by round, exactly as in a full run; only those the sink says it
//! still needs (`RecordSink::repeats_needed`: a sink that takes a record's repeats at once, from
//! the iteration run, need not see them). A loop with no barrier has no round to keep: its
//! skipped iterations, up to the sink's tail, go to the sink in one call
//! (`RecordSink::iterations_repeated_from`). Then the warp runs
//! on from the head: the iterations that no longer come out alike (the guarded matmul's last
//! phase) run.
//!
//! A loop inside another (the matmul's `for (int k = 0; k < TILE_WIDTH; ++k)`, in each phase
//! that a warp runs) is watched beside the enclosing loop's watch, the same way, with two
//! differences: it may hold no barrier, so a warp never stops inside it, and the records of its
//! skipped iterations go to the sink in one call (`Machine::skip_nested`,
//! `RecordSink::nested_iterations_repeated`), which a sink that knows no better takes one by one
//! as a full run makes them. The enclosing loop's watch may be capturing the phase, and captures
//! them, moved; the guard ranges of the skipped iterations widen its capture's too. A
//! loop inside a nested loop watched runs in full. Where the enclosing loop's iteration is not
//! being captured (the guarded matmul's last phase, or an enclosing loop shown alike nowhere),
//! the nested loop is watched as a loop that no other encloses: the sink logs its iteration, and
//! its skipped iterations go to the sink in one call (`LoopWatch::own_log`).
//!
//! A loop whose reads the compiled code fuses (`sa[ty][k]` and `sa[ty][k + 1]` into one 8-byte
//! load) is captured as many iterations at a time as a fused load holds (`LoopPlan::unroll`):
//! then every read skipped moves by whole fused loads, and the skipped iterations' reads pair up
//! as the captured ones did, which the sink requires to take them from the captured ones.
//!
//! Only records are made up, not data: a skipped iteration stores nothing, and the registers the
//! loop assigns (the matmul's `r`) hold what the last iteration run left. No branch and no address
//! depends on either (the proof requires it, in the loop and after it), so the records, the
//! counters and the profile are those of a full run to the last digit; the stored values are not,
//! and nothing reads them but data. The step budget counts the steps a full run takes.

use super::lanes::canon;
use super::launch::{
    holding_object, IterationFences, MemRecord, RepeatNeed, RepeatsNeeded, WarpWork,
};
use super::machine::{AtHead, Flow, Machine};
use super::reuse::{AlikeIterations, IterationStart, LoopPlan, LoopWatch, Skipping};
use super::simulation::Simulation;
use super::sink::IterationsRepeated;
use crate::access::WARP_LANES;
use crate::kernel::block_shift::{self, Guard, GuardRange, SiteShift};
use crate::kernel::ir::Op;
use crate::kernel::span::{Diagnostic, Span};

/// The most heads at which a warp starts to capture an iteration: a loop whose lanes settle only
/// after a few iterations (a strided loop whose lanes leave it one by one) is given as many
/// tries.
const CAPTURES: u32 = 3;

/// The most watches kept for reuse, one per warp of a block of 1,024 threads, and the most
/// records each keeps room for (a matmul's phase makes some 70 at tile 32): some 4 MB at most.
const SPARE_WATCHES: usize = 32;
const SPARE_RECORDS: usize = 256;

impl Simulation<'_> {
    /// Finds the loops of the kernel whose iterations are shown alike (`block_shift::
    /// analyze_loop`); from then on a warp in one of them runs an iteration and skips the ones
    /// after it that come out alike. Call it after `shifted_buffers`, which starts the guards
    /// afresh. `move_units` gives, per access site, the bytes its moves must be a multiple of for
    /// the sink to take a skipped iteration as the one run (a read the compiled code fuses into
    /// 8-byte loads must move by whole 8 bytes, or its pairs would fall differently): a loop whose
    /// site moves by less per iteration is captured as that many iterations at once (at most
    /// `MOST_UNROLLED`). The number of such loops.
    pub fn summarise_loops(&mut self, move_units: &[(Span, u32)]) -> usize {
        self.loop_plans.clear();
        let func = &self.program.functions[self.kernel];
        let constants = self.launch_constants();
        let proofs: Vec<block_shift::LoopShift> = (0..func.code.len())
            .filter(|&begin| matches!(func.code[begin], Op::LoopBegin { .. }))
            .filter_map(|begin| block_shift::analyze_loop(func, &constants, begin))
            .collect();
        for proof in proofs {
            // A nested loop's skipped iterations are made at once, with no stop at a barrier.
            let stops = func.code[proof.head..proof.end]
                .iter()
                .any(|op| matches!(op, Op::SyncThreads));
            if proof.nested && stops {
                continue;
            }
            let guards = proof
                .guards
                .iter()
                .map(|guard| (self.guard_index(guard.site), *guard))
                .collect();
            let plan = LoopPlan {
                head: proof.head,
                end: proof.end,
                nested: proof.nested,
                induction: proof.induction,
                guards,
                site_shifts: proof.site_shifts,
                unroll: 1,
            };
            let unroll = unroll_for(&plan.site_shifts, move_units);
            let plan = match plan.unrolled(unroll) {
                Some(unrolled) => unrolled,
                None => plan,
            };
            self.loop_plans.push(plan);
        }
        self.loop_plans.len()
    }
}

/// The most iterations a warp captures as one (`LoopPlan::unroll`): 16-byte loads fused of
/// 2-byte reads that move one element an iteration need 8.
const MOST_UNROLLED: u32 = 8;

/// How many iterations of a loop whose sites move `site_shifts` an iteration make every move a
/// multiple of its site's unit in `move_units`: the least common multiple of each site's unit
/// over its greatest common divisor with the move; 1 where that is more than `MOST_UNROLLED`.
fn unroll_for(site_shifts: &[SiteShift], move_units: &[(Span, u32)]) -> u32 {
    let mut unroll = 1u64;
    for site in site_shifts {
        let moves = site.bytes_per_step.unsigned_abs();
        for &(_, unit) in move_units.iter().filter(|(span, _)| *span == site.span) {
            let unit = u64::from(unit);
            if moves == 0 || unit == 0 {
                continue;
            }
            let needed = unit / gcd(unit, moves);
            unroll = unroll / gcd(unroll, needed) * needed;
            if unroll > u64::from(MOST_UNROLLED) {
                return 1;
            }
        }
    }
    unroll as u32
}

/// The greatest common divisor of two numbers, not both 0: how many of a loop's moves make a whole
/// number of units, here and in the sink's counting of iterations by remainder
/// (`simulate::iteration_log`).
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Machine<'_, '_> {
    /// At a `LoopBegin` of the kernel (`pc`): starts watching the loop if it has a plan.
    pub(super) fn enter_loop(&mut self, pc: usize) {
        if self.call_depth != 0 {
            return;
        }
        let Some(plan) = self.reuse.plan_at(pc + 1) else {
            return;
        };
        let nested = self.reuse.plan(plan).nested;
        // One nested loop at a time: one inside a nested loop watched runs in full.
        if nested && self.reuse.nested_watch.is_some() {
            return;
        }
        let watch = match self.reuse.spare_watches.pop() {
            Some(mut watch) => {
                watch.plan = plan;
                watch.heads = 0;
                watch.capture_head = 0;
                watch.own_log = false;
                watch.start = None;
                watch.records.clear();
                watch.barriers.clear();
                watch.ranges.clear();
                watch.skipping = None;
                watch.done = false;
                watch.steps = 0;
                watch.work = WarpWork::default();
                Box::new(watch)
            }
            None => Box::new(LoopWatch {
                plan,
                heads: 0,
                capture_head: 0,
                own_log: false,
                start: None,
                records: Vec::new(),
                barriers: Vec::new(),
                ranges: Vec::new(),
                skipping: None,
                done: false,
                steps: 0,
                work: WarpWork::default(),
            }),
        };
        if nested {
            self.reuse.nested_watch = Some(watch);
        } else {
            self.reuse.watch = Some(watch);
            self.reuse.resumed = (self.steps, self.work());
        }
        self.reuse.watch_head = pc + 1;
        self.reuse.refresh_capturing();
    }

    /// At a `LoopEnd` (`pc`): stops watching the loop it ends.
    pub(super) fn leave_loop(&mut self, pc: usize) {
        if self.call_depth != 0 {
            return;
        }
        let ends = |watch: &Option<Box<LoopWatch>>| {
            watch
                .as_ref()
                .is_some_and(|watch| self.reuse.plan(watch.plan).end == pc)
        };
        if ends(&self.reuse.nested_watch) {
            self.stop_watching_nested();
        } else if ends(&self.reuse.watch) {
            self.stop_watching();
        }
    }

    /// Keeps `record` for the iterations the warp captures; an iteration too long to capture ends
    /// the watch, and for the loop that no other encloses the sink's log of it.
    pub(super) fn capture(&mut self, record: &MemRecord) {
        if let Some(nested) = self.reuse.nested_watch.as_mut().filter(|w| w.capturing()) {
            if !nested.capture(record) && nested.own_log {
                self.sink.iterations_end(self.warp);
            }
        }
        if let Some(watch) = self.reuse.watch.as_mut().filter(|w| w.capturing()) {
            if !watch.capture(record) {
                self.sink.iterations_end(self.warp);
            }
        }
        self.reuse.refresh_capturing();
    }

    /// Notes the differences and outcomes a guard's lanes compared in each iteration being
    /// captured.
    pub(super) fn capture_guard(&mut self, site: usize, lanes: GuardRange) {
        for watch in [&mut self.reuse.watch, &mut self.reuse.nested_watch] {
            if let Some(watch) = watch.as_mut().filter(|w| w.capturing()) {
                watch.note_guard(site, lanes);
            }
        }
    }

    /// Notes a barrier in the iteration being captured of the loop that no other encloses (a
    /// nested loop with a barrier has no plan).
    pub(super) fn capture_barrier(&mut self) {
        if let Some(watch) = self.reuse.watch.as_mut().filter(|w| w.capturing()) {
            watch.capture_barrier();
        }
    }

    /// Keeps a watch that ended for the next loop a warp enters.
    fn retire(&mut self, watch: Option<Box<LoopWatch>>) {
        if let Some(mut watch) = watch {
            if watch.records.capacity() > SPARE_RECORDS {
                watch.records = Vec::new();
            }
            if self.reuse.spare_watches.len() < SPARE_WATCHES {
                self.reuse.spare_watches.push(*watch);
            }
        }
    }

    /// Ends the watch over the nested loop; the head watched is the enclosing loop's again.
    fn stop_watching_nested(&mut self) {
        let watch = self.reuse.nested_watch.take();
        if watch.as_ref().is_some_and(|watch| watch.own_log) {
            self.sink.iterations_end(self.warp);
        }
        self.retire(watch);
        self.reuse.watch_head = self
            .reuse
            .watch
            .as_ref()
            .map_or(usize::MAX, |watch| self.reuse.plan(watch.plan).head);
        self.reuse.refresh_capturing();
    }

    /// Takes up the warp's watch (`WarpState::watch`) when it runs.
    pub(super) fn resume_watch(&mut self, watch: Option<Box<LoopWatch>>) {
        self.reuse.watch_head = watch
            .as_ref()
            .map_or(usize::MAX, |watch| self.reuse.plan(watch.plan).head);
        self.reuse.capturing = watch.as_ref().is_some_and(|watch| watch.capturing());
        if watch.is_some() {
            self.reuse.resumed = (self.steps, self.work());
        }
        self.reuse.watch = watch;
    }

    /// Puts the warp's watch away when it stops, with the steps and work it did.
    pub(super) fn suspend_watch(&mut self) -> Option<Box<LoopWatch>> {
        // A nested loop watched has no barrier, so a warp never stops inside it but at an error.
        let nested = self.reuse.nested_watch.take();
        if nested.as_ref().is_some_and(|watch| watch.own_log) {
            self.sink.iterations_end(self.warp);
        }
        self.retire(nested);
        let mut watch = self.reuse.watch.take()?;
        (watch.steps, watch.work) = self.own_progress(&watch);
        Some(watch)
    }

    /// The warp's own steps and work since it entered the watched loop.
    fn own_progress(&self, watch: &LoopWatch) -> (u64, WarpWork) {
        let mut work = watch.work;
        work.add_difference(&self.work(), &self.reuse.resumed.1);
        (watch.steps + (self.steps - self.reuse.resumed.0), work)
    }

    /// Ends the watch over the loop, telling the sink that the warp skips no more of it.
    fn stop_watching(&mut self) {
        let watch = self.reuse.watch.take();
        self.retire(watch);
        self.reuse.watch_head = usize::MAX;
        self.reuse.refresh_capturing();
        self.sink.iterations_end(self.warp);
    }

    /// At the head of the watched loop (`flow.pc`): hands the next records of the iterations
    /// being skipped, or captures an iteration, or decides to skip the iterations after the one
    /// captured.
    pub(super) fn at_loop_head(&mut self, flow: &Flow, span: Span) -> Result<AtHead, Diagnostic> {
        if self.reuse.nested_watch.is_some() {
            self.at_nested_head(flow, span)?;
            return Ok(AtHead::Run);
        }
        let Some(mut watch) = self.reuse.watch.take() else {
            self.stop_watching();
            return Ok(AtHead::Run);
        };
        let result = self.loop_head(&mut watch, flow, span);
        if watch.done || result.is_err() {
            self.stop_watching();
            self.retire(Some(watch));
        } else {
            self.reuse.capturing = watch.capturing();
            self.reuse.watch = Some(watch);
        }
        result
    }

    fn loop_head(
        &mut self,
        watch: &mut LoopWatch,
        flow: &Flow,
        span: Span,
    ) -> Result<AtHead, Diagnostic> {
        if watch.done {
            return Ok(AtHead::Run);
        }
        if watch.skipping.is_some() {
            return Ok(self.hand_skipped(watch));
        }
        watch.heads += 1;
        if self.capture_goes_on(watch) {
            return Ok(AtHead::Run);
        }
        if let Some(start) = watch.start.take() {
            let progress = self.own_progress(watch);
            if let Some(skipping) = self.skip(watch, &start, (flow, progress), span)? {
                watch.skipping = Some(skipping);
                return Ok(self.hand_skipped(watch));
            }
        }
        if watch.heads > CAPTURES * self.reuse.plan(watch.plan).unroll {
            watch.done = true;
            return Ok(AtHead::Run);
        }
        let progress = self.own_progress(watch);
        self.begin_capture(watch, flow, progress);
        self.sink.iteration_begins(self.warp);
        Ok(AtHead::Run)
    }

    /// Whether the iteration being captured goes on at this head: it spans the plan's `unroll`
    /// iterations of the loop.
    fn capture_goes_on(&self, watch: &LoopWatch) -> bool {
        watch.start.is_some()
            && watch.heads - watch.capture_head < self.reuse.plan(watch.plan).unroll
    }

    /// Starts capturing an iteration at the head (`flow`), the warp having done `progress` (its
    /// own steps and work) so far.
    fn begin_capture(&self, watch: &mut LoopWatch, flow: &Flow, progress: (u64, WarpWork)) {
        let plan = self.reuse.plan(watch.plan);
        let (steps, work) = progress;
        watch.capture_head = watch.heads;
        watch.start = Some(IterationStart {
            work,
            steps,
            induction: plan
                .induction
                .iter()
                .map(|induction| self.regs[induction.reg as usize])
                .collect(),
            mask: flow.mask,
            depth: flow.stack.len(),
            dependence: self.dependence,
        });
        watch.records.clear();
        watch.barriers.clear();
        watch.ranges.clear();
        watch
            .ranges
            .resize(self.reuse.guard_count(), GuardRange::default());
    }

    /// At the head of the nested loop watched: captures an iteration, or skips the iterations
    /// after the one captured that come out alike, making their records at once
    /// (`skip_nested`). The warp never stops inside a nested loop watched: the block's machine
    /// counts are its own there.
    fn at_nested_head(&mut self, flow: &Flow, span: Span) -> Result<(), Diagnostic> {
        let Some(mut watch) = self.reuse.nested_watch.take() else {
            return Ok(());
        };
        let result = self.nested_head(&mut watch, flow, span);
        self.reuse.nested_watch = Some(watch);
        self.reuse.refresh_capturing();
        result
    }

    fn nested_head(
        &mut self,
        watch: &mut LoopWatch,
        flow: &Flow,
        span: Span,
    ) -> Result<(), Diagnostic> {
        if watch.done {
            return Ok(());
        }
        watch.heads += 1;
        if self.capture_goes_on(watch) {
            return Ok(());
        }
        let progress = (self.steps, self.work());
        if let Some(start) = watch.start.take() {
            if watch.own_log {
                if let Some(skipping) = self.skip(watch, &start, (flow, progress), span)? {
                    watch.skipping = Some(skipping);
                    // A nested loop watched has no barrier: every skipped iteration is handed
                    // at once.
                    while let AtHead::Barrier = self.hand_skipped(watch) {}
                    watch.done = true;
                    self.sink.iterations_end(self.warp);
                    return Ok(());
                }
            } else if let Some(alike) = self.alike_after(watch, &start, flow, &progress) {
                self.skip_ahead(watch, &start, &alike, &progress.1, span)?;
                self.skip_nested(watch, &alike);
                watch.done = true;
                return Ok(());
            }
        }
        if watch.heads > CAPTURES * self.reuse.plan(watch.plan).unroll {
            watch.done = true;
            if watch.own_log {
                self.sink.iterations_end(self.warp);
            }
            return Ok(());
        }
        self.begin_capture(watch, flow, progress);
        // The enclosing loop's iteration is not being captured (or no loop watched encloses this
        // one): the sink may log this loop's iteration as its own.
        watch.own_log = !self
            .reuse
            .watch
            .as_ref()
            .is_some_and(|outer| outer.capturing());
        if watch.own_log {
            self.sink.iteration_begins(self.warp);
        } else {
            self.sink.nested_iteration_begins(self.warp);
        }
        Ok(())
    }

    /// Hands the sink the records of the nested loop's iterations skipped (`alike`), the
    /// captured ones moved, in one call (`RecordSink::nested_iterations_repeated`), and captures
    /// them for the enclosing loop's iteration, in the order a full run makes them, while that
    /// capture goes on: the sink's log of that iteration keeps them too.
    fn skip_nested(&mut self, watch: &LoopWatch, alike: &AlikeIterations) {
        let repeated = |at: usize, iteration: u64| alike.repeated(at, iteration);
        let batch = IterationsRepeated {
            warp: self.warp,
            records: &watch.records,
            handed: None,
            warp_ran: false,
            first: 1,
            last: alike.iterations,
            repeated: &repeated,
        };
        self.sink.nested_iterations_repeated(&batch);
        let whole = usize::try_from(alike.iterations).unwrap_or(usize::MAX);
        self.reuse
            .note_handed(whole.saturating_mul(watch.records.len()));
        // A capture that grows too long ends (`capture`), and no record is kept after it.
        for iteration in 1..=alike.iterations {
            for (index, ran) in watch.records.iter().enumerate() {
                if !self.reuse.capturing {
                    return;
                }
                let mut record = *ran;
                alike.repeated(index, iteration).apply(&mut record);
                self.capture(&record);
            }
        }
    }

    /// After the captured iteration (`start` to now, at the head `flow`, the warp having done
    /// `progress`): how many iterations after it come out alike, and if any, skips them (the
    /// registers, work, steps and guard ranges they make), leaving their records to
    /// `hand_skipped`. A run out of budget stops at the loop's test (`span`).
    fn skip(
        &mut self,
        watch: &LoopWatch,
        start: &IterationStart,
        (flow, progress): (&Flow, (u64, WarpWork)),
        span: Span,
    ) -> Result<Option<Skipping>, Diagnostic> {
        let Some(alike) = self.alike_after(watch, start, flow, &progress) else {
            return Ok(None);
        };
        // The fences the warp passed since the iteration's last record, up to this head.
        let after_last_record = watch.records.last().map_or(alike.fences, |last| {
            self.dependence.fences.wrapping_sub(last.fences_passed)
        });
        self.sink.repeats_begin(
            self.warp,
            &alike.moves,
            IterationFences {
                per_iteration: alike.fences,
                after_last_record,
            },
        );
        self.skip_ahead(watch, start, &alike, &progress.1, span)?;
        let needed = self.sink.repeats_needed(self.warp, alike.iterations);
        Ok(Some(Skipping {
            alike,
            iteration: 1,
            record: 0,
            barrier: 0,
            needed,
            handed: Vec::new(),
            runs: Vec::new(),
        }))
    }

    /// After the captured iteration (`start` to now, the warp's own `progress` now): how many
    /// iterations after it come out alike, with how far each of its records moves per
    /// iteration; `None` where none does or the proof's premises do not hold.
    fn alike_after(
        &self,
        watch: &LoopWatch,
        start: &IterationStart,
        flow: &Flow,
        progress: &(u64, WarpWork),
    ) -> Option<AlikeIterations> {
        let plan = self.reuse.plan(watch.plan);
        let mask = flow.mask;
        if mask != start.mask
            || flow.stack.len() != start.depth
            || self.dependence.control != start.dependence.control
        {
            return None;
        }
        // Each induction register moved by its step in the loop's lanes, and not elsewhere.
        for (induction, before) in plan.induction.iter().zip(&start.induction) {
            let now = &self.regs[induction.reg as usize];
            let step = canon(induction.per_iteration as u64, induction.scalar);
            for lane in 0..WARP_LANES {
                let moved = canon(now[lane].wrapping_sub(before[lane]), induction.scalar);
                let expected = if mask >> lane & 1 != 0 { step } else { 0 };
                if moved != expected {
                    return None;
                }
            }
        }
        let loads = self.dependence.loads - start.dependence.loads;
        let fences = self.dependence.fences - start.dependence.fences;
        let iteration_steps = progress.0 - start.steps;

        // As many iterations as every moved access stays in its object, aligned...
        let mut iterations = u64::MAX;
        let mut moves = Vec::with_capacity(watch.records.len());
        for record in &watch.records {
            if record.order.waits_for > start.dependence.loads {
                return None;
            }
            let key = (record.span, record.access.kind);
            let site = plan
                .site_shifts
                .binary_search_by_key(&key, |site| (site.span, site.kind))
                .ok()?;
            let per_iteration = plan.site_shifts[site].bytes_per_step;
            iterations = iterations.min(self.room(record, per_iteration));
            moves.push(per_iteration);
        }
        // ... as the budget allows (the skipped iterations count the steps they would take, and
        // one more than the budget holds stops the block where a full run would stop) ...
        let left = self.budget.saturating_sub(self.steps);
        iterations = iterations.min((left / iteration_steps.max(1)).saturating_add(1));
        // ... and as every guard keeps each lane's outcome in (the loop's own test among them).
        for &(site, guard) in &plan.guards {
            let range = watch.ranges[site];
            iterations = alike_iterations(&guard, range, iterations);
        }
        (iterations != 0).then_some(AlikeIterations {
            iterations,
            moves,
            loads,
            fences,
            iteration_steps,
        })
    }

    /// Skips the iterations `alike` after the captured one (`start` to now, the warp's own work
    /// now `work_now`): the induction registers jump ahead, the work and steps are the captured
    /// iteration's times as many, and the guards' ranges spread over the iterations skipped. A
    /// run out of budget stops at the loop's test (`span`).
    fn skip_ahead(
        &mut self,
        watch: &LoopWatch,
        start: &IterationStart,
        alike: &AlikeIterations,
        work_now: &WarpWork,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let plan = self.reuse.plan(watch.plan);
        let times = alike.iterations;
        // Counted in the loop's own iterations, whatever a warp captures as one.
        self.reuse
            .note_iterations_skipped(times.saturating_mul(u64::from(plan.unroll)));
        for (induction, before) in plan.induction.iter().zip(&start.induction) {
            let reg = &mut self.regs[induction.reg as usize];
            for lane in 0..WARP_LANES {
                let step = reg[lane].wrapping_sub(before[lane]);
                reg[lane] = canon(
                    reg[lane].wrapping_add(step.wrapping_mul(times)),
                    induction.scalar,
                );
            }
        }
        let mut work = WarpWork::default();
        work.add_difference(work_now, &start.work);
        self.add_work_times(&work, times);
        self.steps = self
            .steps
            .saturating_add(alike.iteration_steps.saturating_mul(times));
        if self.steps > self.budget {
            return Err(self.budget_error(span));
        }
        // Load sequences and fence counts fit in 32 bits for any run within the budget.
        let loads_skipped = u64::from(alike.loads) * times;
        let fences_skipped = u64::from(alike.fences) * times;
        let first_load = start.dependence.loads;
        self.dependence.loads = self.dependence.loads.wrapping_add(loads_skipped as u32);
        self.dependence.fences = self.dependence.fences.wrapping_add(fences_skipped as u32);
        for tag in &mut self.tags {
            if *tag > first_load {
                *tag = tag.wrapping_add(loads_skipped as u32);
            }
        }
        for &(site, guard) in &plan.guards {
            let per_iteration = i128::from(guard.shift[0]);
            let far = per_iteration * i128::from(times);
            let spread = watch.ranges[site].spread(per_iteration.min(far), per_iteration.max(far));
            self.reuse.widen_guard_range(site, spread);
            // A nested loop's skipped iterations belong to the enclosing loop's iteration being
            // captured, whose guards must hold what they compared.
            if plan.nested {
                if let Some(outer) = self.reuse.watch.as_mut().filter(|w| w.capturing()) {
                    if let Some(range) = outer.ranges.get_mut(site) {
                        *range = range.join(spread);
                    }
                }
            }
        }
        Ok(())
    }

    /// How many iterations `record`, moved by `per_iteration` bytes each, stays inside the object
    /// it accesses and aligned, as the interpreter requires of every access.
    fn room(&self, record: &MemRecord, per_iteration: i64) -> u64 {
        if per_iteration == 0 || record.access.lanes.iter().all(Option::is_none) {
            return u64::MAX;
        }
        let align = i64::from(record.access.width.bytes().min(16));
        if per_iteration % align != 0 {
            return 0;
        }
        let Some((object, least, end)) = holding_object(self.objects, record) else {
            return 0;
        };
        let room = if per_iteration > 0 {
            object.base + object.size - end
        } else {
            least - object.base
        };
        room / per_iteration.unsigned_abs()
    }

    /// Hands the sink the records of the skipped iterations up to the next barrier, or to the
    /// end of the last one.
    fn hand_skipped(&mut self, watch: &mut LoopWatch) -> AtHead {
        let Some(skipping) = watch.skipping.as_mut() else {
            return AtHead::Run;
        };
        // An iteration that made no record and passed no barrier leaves nothing to hand.
        if watch.records.is_empty() && watch.barriers.is_empty() {
            watch.done = true;
            return AtHead::Run;
        }
        loop {
            if watch.barriers.get(skipping.barrier) == Some(&skipping.record) {
                skipping.barrier += 1;
                return AtHead::Barrier;
            }
            if skipping.record == watch.records.len() {
                skipping.iteration += 1;
                skipping.record = 0;
                skipping.barrier = 0;
                if skipping.iteration > skipping.alike.iterations {
                    watch.done = true;
                    return AtHead::Run;
                }
                continue;
            }
            // With no barrier in the loop, whole iterations at once: up to the sink's tail where
            // it said what it needs, else to the last.
            if watch.barriers.is_empty() && skipping.record == 0 {
                let iteration = skipping.iteration;
                let iterations = skipping.alike.iterations;
                let last = match skipping.needed.as_ref() {
                    None => Some(iterations),
                    Some(needed) => {
                        let window = needed.window(iterations);
                        window.batches(iteration).then(|| window.batched())
                    }
                };
                if let Some(last) = last {
                    let warp_ran = skipping.needed.as_ref().is_some_and(|needed| {
                        pick_handed(needed, 0..watch.records.len(), &mut skipping.handed)
                    });
                    let skipping_now = &*skipping;
                    let repeated =
                        |at: usize, iteration: u64| skipping_now.alike.repeated(at, iteration);
                    let batch = IterationsRepeated {
                        warp: self.warp,
                        records: &watch.records,
                        handed: skipping_now
                            .needed
                            .as_ref()
                            .map(|_| skipping_now.handed.as_slice()),
                        warp_ran,
                        first: iteration,
                        last,
                        repeated: &repeated,
                    };
                    self.sink.iterations_repeated_from(&batch);
                    let whole = (last - iteration + 1) as usize;
                    self.reuse
                        .note_handed(whole.saturating_mul(watch.records.len()));
                    skipping.iteration = last;
                    skipping.record = watch.records.len();
                    continue;
                }
            }
            // The iteration's records up to its next barrier or its end, at once.
            let from = skipping.record;
            let to = watch
                .barriers
                .get(skipping.barrier)
                .map_or(watch.records.len(), |&barrier| {
                    barrier.min(watch.records.len())
                })
                .max(from + 1);
            let iteration = skipping.iteration;
            self.reuse.note_handed(to - from);
            // Before the sink's tail, only the records it still needs, and once that the warp
            // ran if it asks for that.
            let needed = skipping
                .needed
                .as_ref()
                .filter(|needed| needed.window(skipping.alike.iterations).batches(iteration));
            let run = needed.map(|needed| {
                match skipping
                    .runs
                    .iter()
                    .position(|(first, _, _)| *first == from)
                {
                    Some(run) => run,
                    None => {
                        let mut picked = Vec::new();
                        let warp_ran = pick_handed(needed, from..to, &mut picked);
                        skipping.runs.push((from, warp_ran, picked));
                        skipping.runs.len() - 1
                    }
                }
            });
            if run.is_some_and(|run| skipping.runs[run].1) {
                self.sink.repeats_ran(self.warp);
            }
            let (records, skipping_now) = (&watch.records, &*skipping);
            let handed: &[usize] = run.map_or(&[], |run| &skipping_now.runs[run].2);
            let picked = run.is_some();
            let repeated = |i: usize| {
                let at = if picked { handed[i] } else { from + i };
                (&records[at], skipping_now.alike.repeated(at, iteration))
            };
            let count = if picked { handed.len() } else { to - from };
            if count > 0 {
                self.sink.records_repeated_from(count, &repeated);
            }
            skipping.record = to;
        }
    }
}

/// Puts into `handed` the records at `range` that the sink `needed`, and says whether it asked
/// for the warp's run instead of any of them (`RepeatNeed::WarpRan`).
fn pick_handed(
    needed: &RepeatsNeeded,
    range: std::ops::Range<usize>,
    handed: &mut Vec<usize>,
) -> bool {
    handed.clear();
    let mut warp_ran = false;
    for at in range {
        match needed.needs.get(at).copied().unwrap_or(RepeatNeed::Record) {
            RepeatNeed::Record => handed.push(at),
            RepeatNeed::WarpRan => warp_ran = true,
            RepeatNeed::Nothing => {}
        }
    }
    warp_ran
}

/// How many of the iterations after the one that compared `range` at `guard`, up to `most`,
/// keep each lane's outcome there: the largest `k` for which every difference, moved by one to
/// `k` iterations' shift, stays on its side (`Guard::holds_alike_over`, which only narrows as
/// `k` grows).
fn alike_iterations(guard: &Guard, range: GuardRange, most: u64) -> u64 {
    let per_iteration = i128::from(guard.shift[0]);
    let holds = |k: u64| {
        let far = per_iteration * i128::from(k);
        guard.holds_alike_over(range, per_iteration.min(far), per_iteration.max(far))
    };
    if most == 0 || !holds(1) {
        return 0;
    }
    // Doubling to a bound that fails, then halving: `holds(low)` and not `holds(high)`.
    let mut low = 1u64;
    let mut high = 2u64;
    while high <= most && holds(high) {
        low = high;
        high = high.saturating_mul(2);
    }
    if high > most {
        if holds(most) {
            return most;
        }
        high = most;
    }
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if holds(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::{alike_iterations, unroll_for};
    use crate::access::{AccessKind, AccessWidth, Space, WarpAccess};
    use crate::counters::AccessMeasure;
    use crate::device::{gt200, h100, Device};
    use crate::kernel::block_shift::{Guard, GuardRange, SiteShift};
    use crate::kernel::ir::BinOp;
    use crate::kernel::move_lanes;
    use crate::kernel::span::Span;

    /// A warp's access of `width`-byte words, lane `i` at `first + i * stride`.
    fn access(space: Space, width: u32, first: u64, stride: u64) -> WarpAccess {
        let width = AccessWidth::new(width).expect("a valid width");
        WarpAccess::from_fn(space, AccessKind::Load, width, |lane| {
            Some(first + u64::from(lane) * stride)
        })
    }

    /// `access` moved by `by` bytes.
    fn moved(access: &WarpAccess, by: i64) -> WarpAccess {
        let mut moved = *access;
        move_lanes(&mut moved, by);
        moved
    }

    /// Whether `access` measures on `device` as it does moved by `by` bytes.
    fn keeps_measure(access: &WarpAccess, by: i64, device: &Device) -> bool {
        AccessMeasure::of(access, device) == AccessMeasure::of(&moved(access, by), device)
    }

    /// The lemma the reuse of a record's measure rests on: an access moved by a whole number of
    /// its `AccessMeasure::move_unit` makes the same measure (requests, sectors, bytes,
    /// wavefronts, conflicts), so a skipped iteration's or a warp shown alike's record may be
    /// counted as the record it repeats.
    #[test]
    fn an_access_moved_by_whole_move_units_keeps_its_measure() {
        let line_base = 0x1000_0000;
        let cases = [
            // A warp's 32 consecutive floats, at the start of a line and a quarter line on.
            (h100(), access(Space::Global, 4, line_base, 4)),
            (h100(), access(Space::Global, 4, line_base + 32, 4)),
            // A strided read of 8-byte words, a line apart, and of 16-byte words.
            (h100(), access(Space::Global, 8, line_base + 8, 128)),
            (h100(), access(Space::Global, 16, line_base, 16)),
            // A shared read of a tile's column, two-way conflicted.
            (h100(), access(Space::Shared, 4, 0, 8)),
            // On cc 1.3, whose unit is 256 bytes.
            (gt200(), access(Space::Global, 16, line_base, 16)),
            (gt200(), access(Space::Global, 4, line_base + 4, 4)),
        ];
        for (device, access) in cases {
            let unit = AccessMeasure::move_unit(&access, &device);
            for times in [-3i64, -1, 1, 2, 7] {
                assert!(
                    keeps_measure(&access, times * unit, &device),
                    "{access:?} moved by {times} units of {unit} bytes on {}",
                    device.name
                );
            }
        }
    }

    /// Half a 128-byte line is two sectors: on a device that counts sectors, a global access
    /// moved by half lines keeps its measure, which is why reuse takes half-line moves as well as
    /// whole lines (the profile's lines per request are another matter: `simulate` takes a
    /// block's half-line shift only where `TouchedRange::half_line_shift_safe`).
    #[test]
    fn a_move_by_half_a_line_keeps_a_global_measure_where_sectors_are_counted() {
        let device = h100();
        let floats = access(Space::Global, 4, 0x1000_0000, 4);
        assert_eq!(AccessMeasure::move_unit(&floats, &device), 32);
        for by in [64, -64, 128 + 64, 3 * 128] {
            assert!(keeps_measure(&floats, by, &device), "moved by {by}");
        }
        let before = AccessMeasure::of(&floats, &device).expect("active lanes");
        assert_eq!((before.cost.requests, before.cost.sectors), (1, 4));
    }

    /// A move that is no whole number of units may change the measure, and the reuse does not
    /// take it: 32 floats moved by half a sector straddle five sectors instead of four; and a
    /// move by one sector, which keeps them on the H100, makes the first half-warp of cc 1.3 fill
    /// a whole 128-byte segment instead of half of one.
    #[test]
    fn a_move_by_less_than_the_unit_can_change_the_measure() {
        let device = h100();
        let floats = access(Space::Global, 4, 0x1000_0000, 4);
        assert_ne!(16 % AccessMeasure::move_unit(&floats, &device), 0);
        assert!(!keeps_measure(&floats, 16, &device));
        let after = AccessMeasure::of(&moved(&floats, 16), &device).expect("active lanes");
        assert_eq!(after.cost.sectors, 5);

        assert!(keeps_measure(&floats, 32, &device));
        let old = gt200();
        assert_ne!(32 % AccessMeasure::move_unit(&floats, &old), 0);
        assert!(!keeps_measure(&floats, 32, &old));
    }

    /// A guard `i < n` whose lanes compared -64 to -33 (true) moves by 32 an iteration: one
    /// iteration more keeps every lane true, the second turns some false.
    #[test]
    fn a_guard_keeps_its_outcome_for_as_many_iterations_as_its_range_allows() {
        let guard = Guard {
            site: (1, 1, 0),
            op: BinOp::Lt,
            shift: [32, 0, 0],
        };
        let range = GuardRange {
            when_true: Some((-64, -33)),
            when_false: None,
        };
        assert_eq!(alike_iterations(&guard, range, u64::MAX), 1);
        assert_eq!(alike_iterations(&guard, range, 0), 0);
    }

    /// A fused 8-byte read of 4-byte words that moves 4 bytes an iteration is captured two
    /// iterations at a time, so that every skipped read moves by whole fused loads.
    #[test]
    fn a_fused_read_moving_half_its_width_is_captured_two_iterations_at_a_time() {
        let span = Span {
            line: 3,
            col: 5,
            ..Span::default()
        };
        let site = SiteShift {
            span,
            kind: AccessKind::Load,
            bytes_per_step: 4,
        };
        assert_eq!(unroll_for(&[site], &[(span, 8)]), 2);
        assert_eq!(unroll_for(&[site], &[(span, 4)]), 1);
        // Sixteen-byte loads fused of 1-byte reads would need 16 iterations: not captured so.
        let byte = SiteShift {
            bytes_per_step: 1,
            ..site
        };
        assert_eq!(unroll_for(&[byte], &[(span, 16)]), 1);
    }
}
