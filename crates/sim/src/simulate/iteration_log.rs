//! What the compiler effects and the counting made of the loop iteration a warp ran
//! (`IterationLog`, a `LoggedRecord` per record), which the records of the iterations it skips
//! (`kernel::interp`'s `loops`), the same moved, take instead of passing through them again
//! (`repeats`).
//!
//! Besides the log, this holds what is read from it alone: the checks of the premises that the
//! reuse of an iteration rests on (the compiler effects hold nothing the iteration's first record
//! could use, `may_reuse`; every place moves by one amount per iteration, `gather_site_moves`;
//! load reuse reuses in the skipped iterations just what it reused in the one run, and the last
//! `tail` iterations pass through everything so that it ends as after a full run,
//! `reuse_over_iterations`), what a repeat adds to the compiler effects' tallies
//! (`add_compiler_effects`), and how a repeat's outputs are counted: as their own measure where
//! their move keeps it (`OutputMove::holds`), else as their measure moved, made once per
//! remainder of the move's unit (`IterationLog::moved_measure`). It imports nothing of the block
//! sink that keeps the logs, which sits above it.

use super::counting::{Counting, OutputMove};
use crate::access::{AccessKind, Space};
use crate::compile_effects::{LoadFuser, LoadReuse, ReusedLoads, TallyChanges, KEPT_LOADS};
use crate::counters::AccessMeasure;
use crate::device::Device;
use crate::kernel::interp::gcd;
use crate::kernel::{self, IterationFences, MemRecord, SiteMove, SkipWindow, Span};
use crate::profile::{CopyKind, RecordShape};
use std::cell::RefCell;
use std::rc::Rc;

/// What the compiler effects and the counting made of the records of a loop iteration a warp
/// ran (`RecordSink::iteration_begins`), so that the records of the iterations it skips, the
/// same moved, need not pass through them again.
pub(super) struct IterationLog {
    pub(super) warp: u32,
    /// Still receiving the iteration's records.
    pub(super) logging: bool,
    /// The warp's compiler effects held nothing the iteration's records could use when it
    /// began: no read waiting to be fused, no kept value its first record could reuse.
    pub(super) clean_start: bool,
    pub(super) records: Vec<LoggedRecord>,
    /// The records counted while the iteration's went through the compiler effects, with what
    /// each added.
    pub(super) outputs: Vec<(MemRecord, Option<AccessMeasure>)>,
    /// Whether the skipped iterations may reuse it (`RecordSink::repeats_begin`)...
    pub(super) reusable: bool,
    /// ... but for how many at their end, which pass through everything so that the compiler
    /// effects end as in a full run: none where a fence follows the iteration's last record.
    pub(super) tail: u64,
    /// Whether the quiet records' compiler effects for every skipped iteration they are quiet
    /// in were added (`BlockSink::add_quiet_effects`).
    pub(super) quiet_effects_added: bool,
    /// How far each place moves per iteration.
    pub(super) site_moves: Vec<SiteMove>,
    /// Per output: how it moves per iteration (`IterationLog::output_moves`), looked up once.
    pub(super) output_moves: Vec<OutputMove>,
    /// Per output whose measure a move changes: its measure moved by each remainder of its
    /// unit met so far (`IterationLog::moved_measure`): a cache, filled while the log is read.
    pub(super) moved_measures: RefCell<Vec<MeasuresByRemainder>>,
}

/// An output's measures moved by remainders of its move unit, each with its remainder.
pub(super) type MeasuresByRemainder = Vec<(i64, Option<AccessMeasure>)>;

impl IterationLog {
    /// The window of `iterations` skipped iterations with this log's tail (`SkipWindow`): which
    /// of them take what its records made.
    pub(super) fn window(&self, iterations: u64) -> SkipWindow {
        SkipWindow {
            iterations,
            tail: self.tail,
        }
    }

    /// Where the outputs (`IterationLog::outputs`) of logged record `k` lie.
    pub(super) fn outputs_of(&self, k: usize) -> std::ops::Range<usize> {
        let start = k.checked_sub(1).map_or(0, |j| self.records[j].outputs_end);
        start..self.records[k].outputs_end
    }

    /// Decides what the repeats of logged record `k` are, as the first of them comes (or before
    /// it, `RecordSink::repeats_needed`), over `times` iterations batched: counted at once with
    /// the first where every output keeps its measure moved (`LoggedRecord::batched`), and not
    /// handed at all where besides every output is measured, the profile needs no placement,
    /// the warp is not `traced`, and a warp that `leads` a class has it as an input of the class
    /// (`LoggedRecord::quiet`). Call `output_moves` first.
    pub(super) fn decide_repeats(&mut self, k: usize, times: u64, traced: bool, leads: bool) {
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
    pub(super) fn output_moves(&mut self, device: &Device) -> &[OutputMove] {
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
    pub(super) fn count_output(
        &self,
        k: usize,
        iteration: u64,
        times: u64,
        counting: &mut Counting<'_>,
    ) {
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
    pub(super) fn count_batched(&self, k: usize, times: u64, counting: &mut Counting<'_>) {
        for output in self.outputs_of(k) {
            self.count_output(output, 1, times, counting);
        }
    }

    /// Counts output `k` once for each skipped iteration `first..=last`. Its measure moved
    /// depends only on the move's remainder in its unit, which repeats every `period`
    /// iterations, so iterations a period apart are counted together: the naive matmul's
    /// `a[row * n + k]`, 4 bytes an iteration in sectors of 32, is counted 8 times for a
    /// thousand iterations. The counters are sums of whole numbers, whatever their order.
    pub(super) fn count_output_over(
        &self,
        k: usize,
        first: u64,
        last: u64,
        counting: &mut Counting<'_>,
    ) {
        let output_move = &self.output_moves[k];
        let unit = output_move.unit;
        let period = if output_move.every_step {
            1
        } else if unit > 0 {
            let step = output_move.per_step.rem_euclid(unit);
            // Both are positive here: `step` is in [0, unit).
            unit as u64 / gcd(step as u64, unit as u64)
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
    pub(super) fn moved_measure(
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
pub(super) fn may_reuse(reuse: Option<&LoadReuse>, record: &MemRecord) -> bool {
    reuse.is_some_and(|reuse| reuse.may_reuse(record))
}

/// Adds to `sites` the place of each of `records`, with how far it moves an iteration (`moves`,
/// one per record), and says whether each place moves by one amount: records of one place that
/// move differently cannot be taken from each other.
pub(super) fn gather_site_moves(
    records: &[LoggedRecord],
    moves: &[i64],
    sites: &mut Vec<SiteMove>,
) -> bool {
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
pub(super) fn reuse_over_iterations(
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
pub(super) fn add_compiler_effects(
    effects: (Option<&mut LoadReuse>, Option<&mut LoadFuser>),
    logged: &LoggedRecord,
) {
    add_compiler_effects_times(effects, logged, 1);
}

/// What `times` records like `logged` add to the compiler effects' tallies: the loads reused
/// and the fuser's loads and instructions `times` over, and its widest load once, which is a
/// maximum.
pub(super) fn add_compiler_effects_times(
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
pub(super) struct LoggedRecord {
    pub(super) issued: bool,
    pub(super) outputs_end: usize,
    pub(super) shape: Option<Rc<RecordShape>>,
    /// What the compiler effects counted for it: loads reused, and the fuser's tally per site
    /// that changed.
    pub(super) reused: ReusedLoads,
    pub(super) tally: TallyChanges,
    /// Whether the records that repeat it in the iterations skipped are counted at once, when
    /// the first of them comes: every record it counted keeps its measure moved by an
    /// iteration, and so by any number of them.
    pub(super) batched: bool,
    pub(super) copy: CopyKind,
    /// Where the warp leads a class: which of the class's inputs it is.
    pub(super) class_input: Option<usize>,
    /// Whether the records that repeat it after the first skipped iteration are taken at once
    /// (`RecordSink::records_repeated_from`): they are counted with the first (`batched`), each
    /// output keeps its measure at every iteration, the profile sees only that the warp ran,
    /// and the warp is not traced.
    pub(super) quiet: bool,
    /// Its place, kind, fences and first active lane with that lane's address, for
    /// `repeats_begin`'s checks.
    pub(super) span: Span,
    pub(super) space: Space,
    pub(super) kind: AccessKind,
    pub(super) fences_passed: u32,
    pub(super) first_lane: Option<(usize, u64)>,
}

impl LoggedRecord {
    /// Whether this load and `other`, of one address class, both moving `by` bytes an iteration,
    /// read different addresses in any two iterations, and so never reuse each other's values:
    /// their first active lane is the same lane, and the two addresses there are not a whole
    /// number of moves apart (the `k` and `k + 1` reads of `sa[ty][k]`, in a loop captured two
    /// iterations at a time, 4 bytes apart and moving 8).
    pub(super) fn never_meets(&self, other: &LoggedRecord, by: i64) -> bool {
        match (self.first_lane, other.first_lane) {
            (Some((lane, a)), Some((other_lane, b))) if lane == other_lane && by != 0 => {
                (i128::from(b) - i128::from(a)).rem_euclid(i128::from(by)) != 0
            }
            _ => false,
        }
    }
}
