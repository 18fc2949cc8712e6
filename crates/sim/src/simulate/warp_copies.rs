//! How the block sink takes the records of a block's warps shown alike (`kernel::interp`'s
//! `warps`) from what their leader's records made (`warp_classes`), so that they, the same
//! moved, need not pass through the compiler effects and the counting again.
//!
//! Each copy of a leader's record reaches the profile where it lies (`profile_copy`), and the
//! counting takes what the leader's record counted, moved (`BlockSink::copy_moved`); at the end
//! of the block, each leader's pending fused loads are flushed, and every other warp of its
//! class counts them moved and adds the loads the leader reused and its fuser's tally
//! (`BlockSink::finish_moved_warps`). Both rest on the
//! premises of `MovedClass::reusable`, checked when the warps are shown alike
//! (`RecordSink::warps_alike`); a class that fails them, and the traced warp, pass through
//! everything instead (`RecordSink::records_moved`).

use super::block_sink::BlockSink;
use super::profile_copies::profile_copy;
use crate::compile_effects::add_tally_difference;
use crate::kernel::{self, MemRecord, MovedRecord};
use crate::profile::Issue;

impl BlockSink<'_> {
    /// At the end of the block: the leaders' pending fused loads, and for every warp that
    /// reused a leader's work, what that warp's end of block and reused loads and tally
    /// were, moved.
    pub(super) fn finish_moved_warps(&mut self) {
        let Some(mut moved) = self.moved.take() else {
            return;
        };
        let (mut before, mut after) = std::mem::take(&mut self.tallies);
        for (k, &leader) in moved.leaders.iter().enumerate() {
            let class = &mut moved.classes[k];
            if !class.reusable {
                continue;
            }
            if let Some(fuser) = self.fuser.as_deref_mut() {
                fuser.tally_into(&mut before);
                let counting = &mut self.counting;
                let finished = &mut class.finished;
                fuser.flush_warp(leader, &mut |r| {
                    counting.count(r);
                    finished.push(*r);
                });
                fuser.tally_into(&mut after);
                add_tally_difference(&mut class.tally, &before, &after);
            }
            // The warps that did not run and reused this leader's work; the traced one went
            // through everything.
            let class = &moved.classes[k];
            for (w, &(its_leader, q)) in moved.lead.iter().enumerate() {
                let w = w as u32;
                if its_leader != k || q == 0 || self.traced(moved.block, w) {
                    continue;
                }
                let q = i64::from(q);
                for record in &class.finished {
                    let mut record = *record;
                    record.warp = w;
                    let by = class.move_of(&record) * q;
                    kernel::move_lanes(&mut record.access, by);
                    self.counting.count(&record);
                }
                if let Some(reuse) = self.reuse.as_deref_mut() {
                    reuse.add_reused(class.reused);
                }
                if let Some(fuser) = self.fuser.as_deref_mut() {
                    fuser.add_tally(&class.tally);
                }
            }
        }
        self.tallies = (before, after);
        self.spare_classes.append(&mut moved.classes);
    }
}

impl BlockSink<'_> {
    /// A record of a warp shown alike to a leader whose class it may reuse, the warp not the
    /// traced one (`RecordSink::records_moved`): the profile sees the copy, and the counting what
    /// the leader's record counted, moved.
    pub(super) fn copy_moved(&mut self, record: &MemRecord, moved_record: &MovedRecord) {
        let MovedRecord {
            warp, from, index, ..
        } = *moved_record;
        let BlockSink {
            counting,
            profiler,
            moved,
            shapes,
            ..
        } = self;
        let Some(moved) = moved.as_ref() else {
            return;
        };
        let class = &moved.classes[from as usize];
        let q = i64::from(moved_record.steps);
        let first = &class.inputs[index];
        let (start, end) = first.outputs;
        if first.issued {
            let (origin, from) = first
                .shape
                .as_ref()
                .map_or((None, 0), |(shape, from)| (Some(shape), *from));
            profile_copy(
                profiler,
                shapes,
                (
                    Issue {
                        order: moved_record.order(record),
                        ..Issue::of(record)
                    },
                    warp,
                    first.copy,
                ),
                origin,
                from.wrapping_add(moved_record.by),
                || moved_record.of(record),
            );
        }
        if first.counts_nothing_more() {
            return;
        }
        for (&k, output_move) in class.outputs[start..end]
            .iter()
            .zip(&class.moves[start..end])
        {
            let by = output_move.per_step * q;
            // Moved so that every rule sees it alike, the access counts as the leader's, and as
            // this warp is not the traced one, where it lies is not needed.
            let holds = output_move.holds(q);
            if holds && first.counted == Some(0) {
                continue;
            }
            match (&class.kept[k], holds) {
                ((output, Some(measure)), true) => match first.counted {
                    Some(times) => counting.count_untraced_times(output, measure, times),
                    None => counting.count_untraced(output, measure),
                },
                ((output, _), _) => {
                    let mut output = *output;
                    output.warp = warp;
                    let lies = output_move
                        .lies
                        .wrapping_add(output_move.per_iteration.wrapping_mul(first.iteration));
                    kernel::move_lanes(&mut output.access, by.wrapping_add(lies));
                    counting.count(&output);
                }
            }
        }
    }
}
