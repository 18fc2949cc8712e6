//! How the block sink takes the records of the loop iterations a warp skips (`kernel::interp`'s
//! `loops`) from what the compiler effects and the counting made of the iteration it ran
//! (`iteration_log`), so that they, the same moved, need not pass through them again.
//!
//! `BlockSink::repeat_logged` takes one repeated record at a time and is the rule the faster
//! paths must agree with: `BlockSink::repeat_iterations` (whole iterations at once),
//! `RecordSink::repeats_needed` and `records_repeated_from` (the quiet records, counted at once
//! with the first skipped iteration), and `BlockSink::log_nested_repeats` (an inner loop's
//! iterations inside the enclosing loop's log). The premises (`repeats_begin`): the compiler
//! effects hold nothing at either end of the iteration run; every place moves by one amount per
//! iteration; load reuse reuses in the skipped iterations just what it reused in the one run
//! (`reuse_over_iterations`); every fusible read moves by whole fused loads
//! (`effects_move_alike`). The last `tail` iterations pass through everything, so that the
//! compiler effects end as after a full run.
//!
//! A warp that leads a class of warps shown alike also hands its repeats to its class
//! (`MovedClass`), which the warps it stands for take them from (`warp_copies`).

use super::block_sink::BlockSink;
use super::counting::OutputMove;
use super::iteration_log::{
    add_compiler_effects, add_compiler_effects_times, gather_site_moves, reuse_over_iterations,
};
use super::profile_copies::place_repeat;
use super::warp_classes::effects_move_alike;
use crate::access::Space;
use crate::kernel::{
    self, IterationFences, IterationsRepeated, MemRecord, RecordSink, Repeated, SiteMove,
};

impl BlockSink<'_> {
    /// A record of a loop iteration skipped (`RecordSink::record_repeated`): `record` itself, or
    /// where `from_ran`, the record of the iteration run that it repeats, which is made into it
    /// only where needed.
    pub(super) fn repeat(&mut self, record: &MemRecord, repeated: &Repeated, from_ran: bool) {
        let log = self.reusable_log(record.warp);
        self.repeat_logged(record, repeated, from_ran, log);
    }

    /// The log of `warp`'s iteration run, where the sink may reuse it (`repeats_begin`).
    pub(super) fn reusable_log(&self, warp: u32) -> Option<usize> {
        self.iterations
            .iter()
            .position(|log| log.reusable && log.warp == warp)
    }

    /// `repeat`, given the warp's `reusable_log`, which a caller with a run of the warp's
    /// records looks up once for all of them.
    pub(super) fn repeat_logged(
        &mut self,
        record: &MemRecord,
        repeated: &Repeated,
        from_ran: bool,
        log: Option<usize>,
    ) {
        let whole = || {
            let mut whole = *record;
            if from_ran {
                repeated.apply(&mut whole);
            }
            whole
        };
        // The last skipped iterations pass through everything, so that the compiler effects
        // leave the warp as a full run does (`IterationLog::tail`).
        let found = log.filter(|&i| {
            let log = &self.iterations[i];
            repeated.index < log.records.len()
                && log.window(repeated.iterations).batches(repeated.iteration)
        });
        let Some(i) = found else {
            self.record(&whole());
            return;
        };
        let leader = self.leader_of(record);
        // The traced warp's counted records also go to the trace, each where it lies.
        let traced = self.traced(record.block, record.warp);
        let BlockSink {
            counting,
            reuse,
            fuser,
            profiler,
            moved,
            iterations,
            shapes,
            ..
        } = self;
        // The iterations this path takes are 1 to `iterations - tail`: at the first, a record
        // whose counted records all keep their measure counts for all of them.
        let first_of_batch = repeated.iteration == 1;
        let log = &mut iterations[i];
        let times = log.window(repeated.iterations).batched();
        let std::ops::Range { start, end } = log.outputs_of(repeated.index);
        log.output_moves(counting.device);
        if first_of_batch {
            log.decide_repeats(repeated.index, times, traced, leader.is_some());
        }
        let log = &iterations[i];
        let logged = &log.records[repeated.index];
        let iteration = repeated.iteration as i64;
        let mut class = leader.and_then(|j| moved.as_mut().map(|moved| &mut moved.classes[j]));
        // The class has the record of the iteration run that this one repeats: where every
        // output keeps its measure moved, the class takes this record as that one's,
        // `iteration` iterations on, and need not keep its outputs.
        let run = match (class.as_deref(), logged.class_input) {
            (Some(class), Some(run)) => Some((run, class.inputs[run].outputs)),
            _ => None,
        };
        let as_run = run.is_some()
            && log.outputs[start..end]
                .iter()
                .zip(&log.output_moves[start..end])
                .all(|((_, measure), output_move)| {
                    measure.is_some() && output_move.holds(iteration)
                });
        let class_start = class.as_deref().map_or(0, |class| class.outputs.len());
        let batched = logged.batched;
        // How many times this warp counts a record here: once, all the batch's, or none.
        let count_times = match (batched, first_of_batch) {
            (false, _) => 1,
            (true, true) => times,
            (true, false) => 0,
        };
        place_repeat(profiler, shapes, record, logged, repeated, from_ran);
        add_compiler_effects((reuse.as_deref_mut(), fuser.as_deref_mut()), logged);
        for (k, (output, measure)) in log.outputs.iter().enumerate().take(end).skip(start) {
            let output_move = &log.output_moves[k];
            let class = class.as_deref_mut().filter(|_| !as_run);
            let by = output_move.per_step.wrapping_mul(iteration);
            let kept = measure.filter(|_| output_move.holds(iteration));
            match (kept, class) {
                // Moved so that every rule sees it alike, the access counts as the one it
                // repeats; where it lies is needed by no one, and the warps shown alike to this
                // one find it from the record repeated.
                (Some(measure), class) => {
                    if count_times > 0 {
                        counting.count_untraced_times(output, &measure, count_times);
                    }
                    if let (true, Some(trace)) = (traced, counting.trace.as_deref_mut()) {
                        let mut moved_output = *output;
                        kernel::move_lanes(&mut moved_output.access, by);
                        trace.record(&moved_output);
                    }
                    match (class, run) {
                        // The output of the record of the iteration run, moved.
                        (Some(class), Some((_, (run_start, _)))) => {
                            let j = run_start + (k - start);
                            class.outputs.push(class.outputs[j]);
                            class.moves.push(OutputMove {
                                lies: by,
                                ..class.moves[j]
                            });
                        }
                        (Some(class), None) => {
                            class.push_output((*output, Some(measure)), by, counting.device);
                        }
                        (None, _) => {}
                    }
                }
                // Counted as what it measures moved (its site and kind are the output's); the
                // moved record itself is made only for the trace and the warps shown alike.
                (None, class) => {
                    let measure = log.moved_measure(k, by, counting);
                    if let (Some(measure), true) = (&measure, count_times > 0) {
                        counting.count_untraced_times(output, measure, count_times);
                    }
                    let trace = counting.trace.as_deref_mut().filter(|_| traced);
                    if trace.is_some() || class.is_some() {
                        let mut moved_output = *output;
                        kernel::move_lanes(&mut moved_output.access, by);
                        if let Some(trace) = trace {
                            trace.record(&moved_output);
                        }
                        if let Some(class) = class {
                            class.push_output((moved_output, measure), 0, counting.device);
                        }
                    }
                }
            }
        }
        if let Some(class) = class {
            let shape = logged.shape.clone().map(|shape| (shape, repeated.by));
            let counted = batched.then_some(count_times);
            match run.filter(|_| as_run) {
                Some((run, (run_start, run_end))) => {
                    for (j, k) in (run_start..run_end).zip(start..end) {
                        class.moves[j].per_iteration = log.output_moves[k].per_step;
                    }
                    class.push_repeat(run, iteration, shape, counted);
                }
                None => class.push_input(class_start, logged.issued, shape, (counted, logged.copy)),
            }
            class.add_effects_of(logged);
        }
    }

    /// Takes the iterations of `batch` that `repeat_logged` would take from the warp's log
    /// (before its tail), of a warp that neither leads a class nor is traced, as that takes them
    /// one record at a time, but for the lookups made once: the profile places each record in
    /// order, the counting counts each as `repeat_logged` does, and the compiler effects, sums
    /// and a maximum that nothing reads before the block ends (`add_quiet_effects`), are added
    /// for all the iterations at once. The first iteration not taken.
    pub(super) fn repeat_iterations(&mut self, batch: &IterationsRepeated<'_>) -> u64 {
        let (first, warp) = (batch.first, batch.warp);
        let Some(record) = batch.records.first() else {
            return first;
        };
        let Some(i) = self.reusable_log(warp) else {
            return first;
        };
        if self.leader_of_warp(warp).is_some() || self.traced(record.block, warp) {
            return first;
        }
        let per_iteration = batch.per_iteration();
        let logged_count = self.iterations[i].records.len();
        if (0..per_iteration).any(|k| batch.index(k) >= logged_count) {
            return first;
        }
        let iterations = (batch.repeated)(0, first).iterations;
        let times = self.iterations[i].window(iterations).batched();
        let last = batch.last.min(times);
        if last < first {
            return first;
        }
        let BlockSink {
            counting,
            reuse,
            fuser,
            profiler,
            iterations: logs,
            shapes,
            ..
        } = self;
        let log = &mut logs[i];
        log.output_moves(counting.device);
        if first == 1 {
            for k in 0..per_iteration {
                log.decide_repeats(batch.index(k), times, false, false);
            }
        }
        let log = &logs[i];
        for k in 0..per_iteration {
            add_compiler_effects_times(
                (reuse.as_deref_mut(), fuser.as_deref_mut()),
                &log.records[batch.index(k)],
                last - first + 1,
            );
        }
        for k in 0..per_iteration {
            let at = batch.index(k);
            // A batched record counts all the batch's at the first iteration, and no more.
            if log.records[at].batched {
                if first == 1 {
                    log.count_batched(at, times, counting);
                }
            } else {
                for output in log.outputs_of(at) {
                    log.count_output_over(output, first, last, counting);
                }
            }
        }
        for iteration in first..=last {
            if batch.warp_ran {
                profiler.warp_runs(warp);
            }
            for k in 0..per_iteration {
                let at = batch.index(k);
                let repeated = (batch.repeated)(at, iteration);
                let (record, logged) = (&batch.records[at], &log.records[at]);
                place_repeat(profiler, shapes, record, logged, &repeated, true);
            }
        }
        last + 1
    }

    /// Takes the skipped iterations of `batch`, of a loop inside another whose iteration the warp
    /// is capturing (`RecordSink::nested_iterations_repeated`), from what the compiler effects and
    /// the counting made of the inner iteration the warp ran, the last records of the enclosing
    /// iteration's log: each record's repeat adds what it added to the compiler effects, is
    /// placed in the profile, and its outputs, moved, are counted as the shared accesses they are
    /// and logged with it, as a full run logs them. That holds where the warp neither leads a
    /// class nor is traced, every record is a shared access (whose place in the profile needs no
    /// shape, which the log could not keep for a copy), the compiler effects held nothing at
    /// either end of the inner iteration, its places move alike, and load reuse treats every
    /// skipped iteration alike (`reuse_over_iterations`); the last iterations whose loads fill
    /// what it keeps pass through it. The first iteration not taken.
    pub(super) fn log_nested_repeats(&mut self, batch: &IterationsRepeated<'_>) -> u64 {
        let (first, warp) = (batch.first, batch.warp);
        let Some(start) = self.nested.take().filter(|start| start.warp == warp) else {
            return first;
        };
        let Some(record) = batch.records.first() else {
            return first;
        };
        if batch.handed.is_some()
            || !(start.clean && start.reuse_checked)
            || self.leader_of_warp(warp).is_some()
            || self.traced(record.block, warp)
            || self
                .fuser
                .as_deref()
                .is_some_and(|fuser| fuser.has_pending(warp))
        {
            return first;
        }
        let Some(i) = self
            .iterations
            .iter()
            .position(|log| log.logging && log.warp == warp)
        else {
            return first;
        };
        let per_iteration = batch.records.len();
        let logged =
            &self.iterations[i].records[start.records.min(self.iterations[i].records.len())..];
        if logged.len() != per_iteration
            || logged
                .iter()
                .any(|logged| logged.space != Space::Shared || logged.shape.is_some())
        {
            return first;
        }
        // How far each record, and each place, moves an iteration.
        let moves: Vec<i64> = (0..per_iteration)
            .map(|k| (batch.repeated)(k, 1).by)
            .collect();
        let mut sites: Vec<SiteMove> = Vec::new();
        if !gather_site_moves(logged, &moves, &mut sites) {
            return first;
        }
        let fences = IterationFences {
            per_iteration: (batch.repeated)(0, 1).fences,
            after_last_record: 0,
        };
        let (reuse_alike, tail) =
            reuse_over_iterations(self.reuse.as_deref(), logged, &moves, fences);
        if !reuse_alike || !effects_move_alike(self.reuse.as_deref(), self.fuser.as_deref(), &sites)
        {
            return first;
        }
        let log = &self.iterations[i];
        let outputs_start = start
            .records
            .checked_sub(1)
            .map_or(0, |j| log.records[j].outputs_end);
        // Every output comes from a place of the inner iteration, and moves as it does.
        let mut output_moves = Vec::with_capacity(log.outputs.len() - outputs_start);
        for (output, _) in &log.outputs[outputs_start..] {
            let Some(site) = sites.iter().find(|site| site.holds(output)) else {
                return first;
            };
            output_moves.push(site.bytes_per_step);
        }
        // The last `tail` iterations refill what load reuse keeps as a full run leaves it: their
        // records pass through it (a store clears it, a load is kept, and none is reused, as
        // above), and what reuse it counted is its own.
        let refilled = batch.last.saturating_sub(tail);
        let BlockSink {
            counting,
            reuse,
            fuser,
            profiler,
            iterations,
            shapes,
            ..
        } = self;
        let log = &mut iterations[i];
        let whole = usize::try_from(batch.last - first + 1).unwrap_or(0);
        log.records.reserve(whole.saturating_mul(per_iteration));
        log.outputs
            .reserve(whole.saturating_mul(log.outputs.len() - outputs_start));
        for iteration in first..=batch.last {
            for k in 0..per_iteration {
                let at = start.records + k;
                let repeated = (batch.repeated)(k, iteration);
                let mut entry = log.records[at].clone();
                if iteration <= refilled {
                    add_compiler_effects((reuse.as_deref_mut(), fuser.as_deref_mut()), &entry);
                } else {
                    add_compiler_effects((None, fuser.as_deref_mut()), &entry);
                    if let Some(reuse) = reuse.as_deref_mut() {
                        let mut record = batch.records[k];
                        repeated.apply(&mut record);
                        reuse.push(&record, &mut |_| {});
                    }
                }
                place_repeat(profiler, shapes, &batch.records[k], &entry, &repeated, true);
                let outputs_from = at.checked_sub(1).map_or(0, |j| log.records[j].outputs_end);
                for o in outputs_from..log.records[at].outputs_end {
                    // The output repeats as its record does, moved as its own place moves.
                    let moved = Repeated {
                        by: output_moves[o - outputs_start].wrapping_mul(iteration as i64),
                        ..repeated
                    };
                    log.outputs.extend_from_within(o..o + 1);
                    let Some((output, measure)) = log.outputs.last_mut() else {
                        continue;
                    };
                    moved.apply(output);
                    *measure = counting.shared_measures.of(output, counting.device);
                    if let Some(measure) = &measure {
                        counting.count_untraced(output, measure);
                    }
                }
                entry.outputs_end = log.outputs.len();
                entry.fences_passed = entry.fences_passed.wrapping_add(repeated.fences);
                entry.first_lane = entry
                    .first_lane
                    .map(|(lane, address)| (lane, address.wrapping_add_signed(repeated.by)));
                log.records.push(entry);
            }
        }
        batch.last + 1
    }

    /// Adds to the compiler effects' tallies what the quiet records of log `i`
    /// (`LoggedRecord::quiet`) add in every skipped iteration they are quiet in, the 2nd to the
    /// `iterations - tail`-th, once per log. The tallies are sums and a maximum, which nothing
    /// reads before the block ends, so they may be added all at once, before the iterations
    /// come (`repeats_needed`) or as the first of them does (`records_repeated_from`).
    pub(super) fn add_quiet_effects(&mut self, i: usize, iterations: u64) {
        let log = &mut self.iterations[i];
        if log.quiet_effects_added {
            return;
        }
        log.quiet_effects_added = true;
        let quiet_iterations = log.window(iterations).after_the_first();
        for logged in log.records.iter().filter(|logged| logged.quiet) {
            add_compiler_effects_times(
                (self.reuse.as_deref_mut(), self.fuser.as_deref_mut()),
                logged,
                quiet_iterations,
            );
        }
    }
}
