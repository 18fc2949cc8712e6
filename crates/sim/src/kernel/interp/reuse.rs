//! What a block's run keeps so that its work can be reused: by the warps of its classes shown
//! alike (`warps`), by the iterations of its loops shown alike (`loops`), and by the other blocks
//! of the launch (`Simulation::shifted_buffers`, whose reuse `simulate` decides from the guard
//! ranges a run leaves).
//!
//! The interpreter's control flow and expressions (`machine`) only note into it; the parts that
//! decide what is reused read it. Gathered in one struct, the machine's own state is what a plain
//! run of a warp needs, and this is what reuse adds to it.

use super::*;
use crate::kernel::block_shift::{GuardRange, GuardSite};

/// The reuse bookkeeping of one block's run (`Machine::reuse`). Each part says what it records,
/// who writes it and who reads it.
pub(super) struct ReuseBookkeeping<'s> {
    /// How many records the block has handed to the sink, those of skipped iterations included.
    /// Counted by `access` as each record is made and by `loops` as a skipped iteration's are
    /// handed; read by `warps` (`WarpLog`), which cuts each leader's runs out of the records by it.
    pub(super) emitted: usize,
    /// The comparisons `block_shift` found the blocks', warps' or loops' branches to depend on
    /// (`Simulation::guard_sites`; empty for other kernels), which `Machine::note_guard` looks up
    /// at every comparison...
    pub(super) guards: &'s [GuardSite],
    /// ... and per guard, the least and greatest `lhs - rhs` the block's lanes compared, apart
    /// where it came out true and false. Widened by `Machine::note_guard` and, for the
    /// iterations a warp skips, by `loops` (`skip_ahead`); read by `warps` (each leader's own,
    /// swapped in while it runs, `WarpLog`) and, once the block ends, by
    /// `Simulation::guard_ranges`, from which `simulate` decides which blocks the run stands for.
    pub(super) guard_ranges: Vec<GuardRange>,
    /// The kernel's loops whose iterations are shown alike (`Simulation::summarise_loops`), read
    /// by `loops` at each `LoopBegin`, head and `LoopEnd`.
    pub(super) loops: &'s [LoopPlan],
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
    pub(super) iterations_skipped: u64,
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

    /// Sets `capturing` again after a watch changed.
    pub(super) fn refresh_capturing(&mut self) {
        self.capturing = self.any_capturing();
    }
}
