//! What a block's run keeps so that its work can be reused: by the warps of its classes shown
//! alike (`warps`), by the iterations of its loops shown alike (`loops`), and by the other blocks
//! of the launch (`Simulation::shifted_buffers`, whose reuse `simulate` decides from the guard
//! ranges a run leaves).
//!
//! This is the data of reuse, below the machine that carries it: the machine's bookkeeping
//! (`ReuseBookkeeping`), the loops' plans and each warp's watch over one (`LoopPlan`,
//! `LoopWatch`), the warp classes of a launch and what the leaders of a block did (`WarpClasses`,
//! `WarpLog`). The interpreter's control flow and expressions (`machine`, `access`) only note into
//! it; `loops` and `warps`, which decide what is reused, read it. The premises that make the reuse
//! exact are stated once, in `loops`.

use super::lanes::Lanes;
use super::launch::{Dependence, MemRecord, Repeated, RepeatsNeeded, WarpWork};
use super::leader_records::LeaderRecords;
use crate::kernel::block_shift::{Guard, GuardRange, GuardSite, Induction, SiteShift};

/// The reuse bookkeeping of one block's run (`Machine::reuse`). Each part says what it records,
/// who writes it and who reads it.
pub(super) struct ReuseBookkeeping<'s> {
    /// How many records the block has handed to the sink, those of skipped iterations included.
    /// Counted by `access` as each record is made and by `loops` as a skipped iteration's are
    /// handed; read by `warps` (`WarpLog`), which cuts each leader's runs out of the records by it.
    emitted: usize,
    /// The comparisons `block_shift` found the blocks', warps' or loops' branches to depend on
    /// (`Simulation::guard_sites`; empty for other kernels), which `Machine::note_guard` looks up
    /// at every comparison...
    guards: &'s [GuardSite],
    /// ... and per guard, the least and greatest `lhs - rhs` the block's lanes compared, apart
    /// where it came out true and false. Widened by `Machine::note_guard` and, for the
    /// iterations a warp skips, by `loops` (`skip_ahead`); read by `warps` (each leader's own,
    /// swapped in while it runs, `WarpLog`) and, once the block ends, by
    /// `Simulation::guard_ranges`, from which `simulate` decides which blocks the run stands for.
    guard_ranges: Vec<GuardRange>,
    /// The kernel's loops whose iterations are shown alike (`Simulation::summarise_loops`), read
    /// by `loops` at each `LoopBegin`, head and `LoopEnd`.
    loops: &'s [LoopPlan],
    /// The current warp's watch over the loop it is in (that no other watched loop encloses),
    /// kept in `WarpState::watch` while the warp waits at a barrier...
    pub(super) watch: Option<Box<LoopWatch>>,
    /// ... the watch over a loop inside that one (`LoopPlan::nested`), which never outlives a
    /// run of the warp...
    pub(super) nested_watch: Option<Box<LoopWatch>>,
    /// ... the watches that ended, for the next to reuse (`Simulation::spare_watches` between
    /// blocks) ...
    pub(super) spare_watches: Vec<LoopWatch>,
    /// ... the head of the innermost loop watched (`usize::MAX` when none), which
    /// `Machine::run_flow` compares with every op's place...
    pub(super) watch_head: usize,
    /// ... and whether the warp is capturing an iteration of a loop watched, so that `access`
    /// and `Machine::note_guard` keep what the iteration made: always `any_capturing()`, set
    /// again by `loops` wherever a watch changes.
    pub(super) capturing: bool,
    /// The block's steps and work when the current warp resumed with a watch: `loops` takes the
    /// warp's own progress in its loop from them (the machine's counts are the block's).
    pub(super) resumed: (u64, WarpWork),
    /// The loop iterations the block's warps skipped, counted by `loops`; read into
    /// `BlockStats::iterations_skipped`.
    iterations_skipped: u64,
}

impl<'s> ReuseBookkeeping<'s> {
    /// The bookkeeping of a block about to run: no guard compared, no loop watched, nothing
    /// handed yet. `spare_watches` are the watches earlier blocks left for reuse.
    pub(super) fn new(
        guards: &'s [GuardSite],
        loops: &'s [LoopPlan],
        spare_watches: Vec<LoopWatch>,
    ) -> ReuseBookkeeping<'s> {
        ReuseBookkeeping {
            emitted: 0,
            guards,
            guard_ranges: vec![GuardRange::default(); guards.len()],
            loops,
            watch: None,
            nested_watch: None,
            spare_watches,
            watch_head: usize::MAX,
            capturing: false,
            resumed: (0, WarpWork::default()),
            iterations_skipped: 0,
        }
    }

    /// Whether the warp's records and guards go to an iteration captured, of the loop it is in
    /// or of the nested loop it is in (what `capturing` keeps).
    pub(super) fn any_capturing(&self) -> bool {
        let capturing =
            |watch: &Option<Box<LoopWatch>>| watch.as_ref().is_some_and(|watch| watch.capturing());
        capturing(&self.watch) || capturing(&self.nested_watch)
    }

    /// Counts `records` more records handed to the sink (`emitted`).
    #[inline]
    pub(super) fn note_handed(&mut self, records: usize) {
        self.emitted = self.emitted.saturating_add(records);
    }

    /// Whether the kernel has guards whose ranges the block keeps.
    #[inline]
    pub(super) fn keeps_guards(&self) -> bool {
        !self.guards.is_empty()
    }

    /// How many guards the block keeps ranges of.
    pub(super) fn guard_count(&self) -> usize {
        self.guards.len()
    }

    /// The index of the guard at `site`, if it is one.
    pub(super) fn guard_index(&self, site: GuardSite) -> Option<usize> {
        self.guards.iter().position(|&guard| guard == site)
    }

    /// Widens guard `index`'s range to hold `lanes` too.
    pub(super) fn widen_guard_range(&mut self, index: usize, lanes: GuardRange) {
        self.guard_ranges[index] = self.guard_ranges[index].join(lanes);
    }

    /// The guards' ranges, once the block has run.
    pub(super) fn take_guard_ranges(&mut self) -> Vec<GuardRange> {
        std::mem::take(&mut self.guard_ranges)
    }

    /// Whether the kernel has loops whose iterations are shown alike.
    pub(super) fn has_loop_plans(&self) -> bool {
        !self.loops.is_empty()
    }

    /// The plan of the loop whose head is `head`, by its index, if it has one.
    pub(super) fn plan_at(&self, head: usize) -> Option<usize> {
        self.loops.iter().position(|plan| plan.head == head)
    }

    /// Loop plan `index`.
    pub(super) fn plan(&self, index: usize) -> &'s LoopPlan {
        let loops: &'s [LoopPlan] = self.loops;
        &loops[index]
    }

    /// Counts `iterations` more loop iterations skipped, saturating.
    pub(super) fn note_iterations_skipped(&mut self, iterations: u64) {
        self.iterations_skipped = self.iterations_skipped.saturating_add(iterations);
    }

    /// The loop iterations the block's warps skipped.
    pub(super) fn iterations_skipped(&self) -> u64 {
        self.iterations_skipped
    }

    /// Sets `capturing` again after a watch changed.
    pub(super) fn refresh_capturing(&mut self) {
        self.capturing = self.any_capturing();
    }
}

/// The most records an iteration a warp captures may make: more than a matmul's phase makes at
/// tile 32 (some 70), and few enough that a warp keeps at most a few megabytes.
pub(super) const MAX_CAPTURED_RECORDS: usize = 4096;

/// A loop of the kernel whose iterations are shown alike (`Simulation::summarise_loops`).
#[derive(Clone, Debug)]
pub(super) struct LoopPlan {
    /// The loop's `LoopCond`, where each iteration starts.
    pub(super) head: usize,
    /// Its `LoopEnd`.
    pub(super) end: usize,
    /// Another loop encloses it: a warp skips its iterations by making their records at once
    /// (`Machine::skip_nested`), since the enclosing loop's watch may be capturing them.
    pub(super) nested: bool,
    pub(super) induction: Vec<Induction>,
    /// The guards, each with its index among `Simulation::guard_sites`; a guard's shift per
    /// iteration is the first component of its `shift`.
    pub(super) guards: Vec<(usize, Guard)>,
    pub(super) site_shifts: Vec<SiteShift>,
    /// How many of the loop's iterations a warp captures as one (`Simulation::summarise_loops`):
    /// the steps, shifts and moves above are those of this many iterations.
    pub(super) unroll: u32,
}

impl LoopPlan {
    /// The plan for capturing `unroll` iterations as one: the induction steps, the guards' shifts
    /// and the sites' moves of that many; `None` where one overflows.
    pub(super) fn unrolled(&self, unroll: u32) -> Option<LoopPlan> {
        let times = i64::from(unroll);
        let mut plan = self.clone();
        plan.unroll = unroll;
        for induction in &mut plan.induction {
            // Registers wrap: the step of `unroll` iterations is the step times `unroll`, wrapped.
            induction.per_iteration = induction.per_iteration.wrapping_mul(times);
        }
        for (_, guard) in &mut plan.guards {
            guard.shift[0] = guard.shift[0].checked_mul(times)?;
        }
        for site in &mut plan.site_shifts {
            site.bytes_per_step = site.bytes_per_step.checked_mul(times)?;
        }
        Some(plan)
    }
}

/// What a warp in a loop of a `LoopPlan` is doing about it: capturing an iteration, or handing
/// the sink the records of the iterations it skips.
#[derive(Debug)]
pub(super) struct LoopWatch {
    pub(super) plan: usize,
    /// How many times the warp reached the loop's head...
    pub(super) heads: u32,
    /// ... and at which of those heads the iteration being captured started.
    pub(super) capture_head: u32,
    /// A nested loop whose enclosing loop's iteration is not being captured: its records go to
    /// the sink's log of an iteration of its own (`RecordSink::iteration_begins`), and its skipped
    /// iterations are handed as a loop that no other encloses hands them.
    pub(super) own_log: bool,
    /// Where the iteration being captured started.
    pub(super) start: Option<IterationStart>,
    /// The captured iteration's records, in order.
    pub(super) records: Vec<MemRecord>,
    /// After how many of `records` the warp passed each barrier of the iteration.
    pub(super) barriers: Vec<usize>,
    /// The differences each guard site compared in the captured iteration.
    pub(super) ranges: Vec<GuardRange>,
    pub(super) skipping: Option<Skipping>,
    /// Nothing more to do in this loop.
    pub(super) done: bool,
    /// The warp's own steps and work since it entered the loop, up to its latest resumption (the
    /// machine's counts are the block's, which the other warps add to between the rounds).
    pub(super) steps: u64,
    pub(super) work: WarpWork,
}

impl LoopWatch {
    /// Whether the warp's records and guards go to the captured iteration.
    pub(super) fn capturing(&self) -> bool {
        self.start.is_some() && self.skipping.is_none() && !self.done
    }

    /// Keeps `record` for the captured iteration; false, and the watch is over, where the
    /// iteration grows past `MAX_CAPTURED_RECORDS` (an inner loop that never ends would
    /// otherwise fill memory with it until the budget ran out).
    pub(super) fn capture(&mut self, record: &MemRecord) -> bool {
        if self.records.len() >= MAX_CAPTURED_RECORDS {
            self.done = true;
            return false;
        }
        self.records.push(*record);
        true
    }

    pub(super) fn capture_barrier(&mut self) {
        self.barriers.push(self.records.len());
    }

    pub(super) fn note_guard(&mut self, site: usize, lanes: GuardRange) {
        if let Some(range) = self.ranges.get_mut(site) {
            *range = range.join(lanes);
        }
    }
}

/// The warp at the head where the captured iteration started.
#[derive(Debug)]
pub(super) struct IterationStart {
    pub(super) work: WarpWork,
    pub(super) steps: u64,
    /// Each induction register, in the order of `LoopPlan::induction`.
    pub(super) induction: Vec<Lanes>,
    pub(super) mask: u32,
    pub(super) depth: usize,
    pub(super) dependence: Dependence,
}

/// The iterations a warp skips, and how far it has handed their records to the sink.
#[derive(Debug)]
pub(super) struct Skipping {
    /// Iterations 1 to `alike.iterations` after the captured one are skipped; `iteration` is
    /// the one being handed.
    pub(super) alike: AlikeIterations,
    pub(super) iteration: u64,
    /// The next record of the captured iteration to hand, and the next barrier to pass.
    pub(super) record: usize,
    pub(super) barrier: usize,
    /// What the sink still needs of the iterations skipped (`RecordSink::repeats_needed`),
    /// asked before the first is handed...
    pub(super) needed: Option<RepeatsNeeded>,
    /// ... the records of the iteration that it needs, where it takes them at once...
    pub(super) handed: Vec<usize>,
    /// ... and per run of an iteration to a barrier (by its first record), the records of it
    /// that it needs and whether it asks for the warp's run: the same in every iteration.
    pub(super) runs: Vec<(usize, bool, Vec<usize>)>,
}

/// What `alike_after` finds of the iterations after a captured one.
#[derive(Debug)]
pub(super) struct AlikeIterations {
    /// How many come out alike.
    pub(super) iterations: u64,
    /// Per record of the captured iteration: how far its site moves per iteration.
    pub(super) moves: Vec<i64>,
    /// The loads, fences and steps of one iteration.
    pub(super) loads: u32,
    pub(super) fences: u32,
    pub(super) iteration_steps: u64,
}

impl AlikeIterations {
    /// Record `index` of the captured iteration as it repeats in skipped iteration
    /// `iteration`.
    pub(super) fn repeated(&self, index: usize, iteration: u64) -> Repeated {
        // Load sequences and fence counts fit in 32 bits for any run within the budget.
        Repeated {
            index,
            by: self.moves[index].wrapping_mul(iteration as i64),
            loads: (u64::from(self.loads) * iteration) as u32,
            fences: (u64::from(self.fences) * iteration) as u32,
            iteration,
            iterations: self.iterations,
        }
    }
}

/// How the warps of every block of a launch are shown alike: warps `w` and `w + step` run the
/// same instructions with the same lanes, and each of their accesses is the other's moved by a
/// fixed number of bytes.
#[derive(Clone, Debug)]
pub(super) struct WarpClasses {
    pub(super) step: u32,
    pub(super) n_warps: u32,
    /// The guards, each with its index among `Simulation::guard_sites`; a guard's shift per step
    /// is the first component of its `shift`.
    pub(super) guards: Vec<(usize, Guard)>,
    /// How far each access site moves per step, where the proof says it of every site
    /// (`BlockShift::site_shifts`): then only the first warp of each class runs, and the later
    /// warps whose guards come out otherwise than their leader's.
    pub(super) site_shifts: Option<Vec<SiteShift>>,
    /// The leaders the last block replayed needed, for the next block to start from: the blocks
    /// of a launch mostly split their warps alike (the guarded matmul's last tile of `b`, half
    /// inside the matrix, sets warps 4 to 7 of every block apart).
    pub(super) leaders: Vec<u32>,
    /// The leaders' records, kept between blocks so that each block's do not allocate anew
    /// (thousands of records of 560 bytes each for a matmul's block).
    pub(super) records: LeaderRecords,
}

/// What the warps that run (the leaders of the classes) did (`Simulation::run_warps`), per warp
/// of the block.
#[derive(Debug)]
pub(super) struct WarpLog {
    pub(super) runs: Vec<bool>,
    /// Per warp: each of its runs (until a barrier or its end) as a range of the records the
    /// sink received.
    pub(super) pieces: Vec<Vec<(usize, usize)>>,
    pub(super) work: Vec<WarpWork>,
    pub(super) guard_ranges: Vec<Vec<GuardRange>>,
}

impl WarpLog {
    /// Whether warp `w` runs: it leads its class or a part of it.
    pub(super) fn runs(&self, w: usize) -> bool {
        self.runs.get(w).copied().unwrap_or(false)
    }

    /// Before warp `w` runs, the block's work being `work`: its own guard ranges go to the
    /// block's bookkeeping; returns where its run starts, for `end`.
    pub(super) fn begin(
        &mut self,
        w: usize,
        reuse: &mut ReuseBookkeeping<'_>,
        work: WarpWork,
    ) -> (WarpWork, usize) {
        std::mem::swap(&mut reuse.guard_ranges, &mut self.guard_ranges[w]);
        (work, reuse.emitted)
    }

    /// After warp `w` ran, the block's work being `work`: what it did since `begin`.
    pub(super) fn end(
        &mut self,
        w: usize,
        (before, first_record): (WarpWork, usize),
        reuse: &mut ReuseBookkeeping<'_>,
        work: WarpWork,
    ) {
        std::mem::swap(&mut reuse.guard_ranges, &mut self.guard_ranges[w]);
        self.pieces[w].push((first_record, reuse.emitted));
        self.work[w].add_difference(&work, &before);
    }
}
