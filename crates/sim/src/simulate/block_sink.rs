//! Where one block's records go: `BlockSink`, the `RecordSink` the interpreter hands a counted
//! block's records to, through load reuse, the profiler, the fuser and the counting.
//!
//! A record a full run makes passes through everything (`BlockSink::pass`). The records of a
//! warp shown alike and of a loop iteration a warp skipped come as copies of a leader's or of
//! the iteration run's records; the sink takes them from what those made (`warp_classes`,
//! `repeats`) wherever the premises of `RecordSink` hold: the copy is exactly what a full run
//! makes, the compiler effects treat it as they treated its origin (`effects_move_alike`,
//! `reuse_over_iterations`), and its measure holds under its move (`OutputMove::holds`).
//! Where one fails, the copy is made whole and passes through everything, as the trait's
//! default does.

use super::counting::Counting;
use super::profile_copies::ShapeCopies;
use super::repeats::{
    add_compiler_effects, gather_site_moves, may_reuse, reuse_over_iterations, IterationLog,
    LoggedRecord,
};
use super::warp_classes::{effects_move_alike, Inert, MovedClass, MovedWarps, Tally};
use crate::compile_effects::{
    add_tally_difference, LoadFuser, LoadReuse, ReusedLoads, TallyChanges,
};
use crate::counters::AccessMeasure;
use crate::kernel::{
    IterationFences, IterationsRepeated, MemRecord, MovedRecord, RecordSink, RepeatNeed, Repeated,
    RepeatsNeeded, WarpsAlike,
};
use crate::profile::{BlockProfiler, CopyKind, RecordShape};
use std::cell::RefCell;
use std::rc::Rc;

/// Counts the records of one block, after the compiler-effects pass.
pub(super) struct BlockSink<'a> {
    pub(super) counting: Counting<'a>,
    /// Drops the loads the compiled code does not issue again, before anything sees them.
    pub(super) reuse: Option<&'a mut LoadReuse>,
    pub(super) fuser: Option<&'a mut LoadFuser>,
    /// Sees the records that are issued (the fuser only changes shared loads).
    pub(super) profiler: &'a mut BlockProfiler,
    /// The block's warps shown alike, if they are, and what the first warp of each class made
    /// of its records.
    pub(super) moved: Option<MovedWarps>,
    /// The classes of earlier blocks, whose vectors the next block's fill again instead of
    /// allocating (a matmul's leader counts thousands of records of 560 bytes).
    pub(super) spare_classes: &'a mut Vec<MovedClass>,
    /// Per warp in a loop whose iterations it skips: what the compiler effects and the counting
    /// made of the iteration it ran.
    pub(super) iterations: Vec<IterationLog>,
    /// The fuser's tally before and after a logged record, kept between records so that none
    /// allocates.
    pub(super) tallies: (Tally, Tally),
    /// The shapes measured of copies at other alignments (`profile_copy`).
    pub(super) shapes: ShapeCopies,
    /// Where the iteration of a loop inside another began, which a warp captures while it
    /// captures the enclosing loop's (`RecordSink::nested_iteration_begins`).
    pub(super) nested: Option<NestedStart>,
}

/// The start of an inner loop's iteration in the log of the enclosing loop's iteration
/// (`BlockSink::nested`).
#[derive(Clone, Copy, Debug)]
pub(super) struct NestedStart {
    pub(super) warp: u32,
    /// How many records the enclosing iteration's log held when it began.
    pub(super) records: usize,
    /// The compiler effects held nothing its records could use when it began: no read waiting to
    /// be fused, and (once its first record came, `reuse_checked`) no kept value it could reuse.
    pub(super) clean: bool,
    pub(super) reuse_checked: bool,
}

impl BlockSink<'_> {
    /// Passes `record` through load reuse, the profiler, the fuser and the counting; with `log`,
    /// also keeps what the counting received and what each added, and with `shape` what the
    /// profiler measured of the record that holds wherever it lies. Whether the record was
    /// issued (not reused).
    pub(super) fn pass(
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
    pub(super) fn effects_so_far(&self, tally: &mut Tally) -> ReusedLoads {
        if let Some(fuser) = self.fuser.as_deref() {
            fuser.tally_into(tally);
        }
        self.reuse
            .as_deref()
            .map_or_else(ReusedLoads::default, LoadReuse::reused_so_far)
    }

    /// Whether `warp` of `block` is the one the trace asks for, whose records must pass through
    /// everything in order.
    pub(super) fn traced(&self, block: [u32; 3], warp: u32) -> bool {
        self.counting.trace.as_deref().is_some_and(|trace| {
            let request = trace.request();
            request.warp == warp && request.block == block
        })
    }
}

impl BlockSink<'_> {
    /// The index of `record`'s warp among the leaders, if it leads a class that others reuse.
    pub(super) fn leader_of(&self, record: &MemRecord) -> Option<usize> {
        self.leader_of_warp(record.warp)
    }

    /// The index of `warp` among the leaders, if it leads a class that others reuse.
    pub(super) fn leader_of_warp(&self, warp: u32) -> Option<usize> {
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
