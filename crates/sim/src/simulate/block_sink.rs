//! The block sink: what one block's records pass through (`BlockSink`: load reuse, the profiler,
//! the fuser and the counting, with the logs of the warps shown alike and of the loop iterations
//! skipped, and the shapes measured of copies), and a record's full pass through them
//! (`BlockSink::pass`).
//!
//! This module holds the sink's data and the plain questions asked of it (is a warp traced, does
//! it lead a class); the logs' types live with what they mean (`iteration_log`, `warp_classes`,
//! `profile_copies`). How the sink takes copies from the logs is above it (`repeats`,
//! `warp_copies`), and how it takes each of the interpreter's hand-offs above those
//! (`record_sink_impl`).

use super::counting::Counting;
use super::iteration_log::IterationLog;
use super::profile_copies::ShapeCopies;
use super::warp_classes::{MovedClass, MovedWarps, Tally};
use crate::compile_effects::{LoadFuser, LoadReuse, ReusedLoads};
use crate::counters::AccessMeasure;
use crate::kernel::MemRecord;
use crate::profile::{BlockProfiler, RecordShape};

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
