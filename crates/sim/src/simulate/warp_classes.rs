//! The warps of a block shown alike (`kernel::interp`'s `warps`): what the compiler effects and
//! the counting made of each leader's records, so that the records of the warps it stands for,
//! the same moved, need not pass through them again.
//!
//! The premises a class's reuse rests on (`MovedClass::reusable`): every site moves by one amount
//! from a warp of the class to the next; the loads load reuse compares with each other move
//! alike, so the same ones are reused; every fusible read moves by a multiple of its widest
//! fused load, so the same runs are fused from the same alignment (`effects_move_alike`); and a
//! counted record's measure holds under the move (`OutputMove::holds`), else it is measured
//! moved. The profiler, which keeps absolute addresses, still sees every copy.

use super::block_sink::BlockSink;
use super::counting::OutputMove;
use super::profile_copies::profile_copy;
use super::repeats::LoggedRecord;
use crate::access::AccessKind;
use crate::compile_effects::{
    add_tally_changes, add_tally_difference, LoadFuser, LoadReuse, ReusedLoads,
};
use crate::counters::AccessMeasure;
use crate::device::Device;
use crate::kernel::{self, MemRecord, MovedRecord, SiteMove};
use crate::profile::{CopyKind, Issue, RecordShape};
use std::rc::Rc;

/// Whether the compiler effects treat every copy of a warp's records, each place moved by its
/// `sites` move (to another warp, or another iteration), as they treated the records: the loads
/// load reuse compares with each other (one class of address forms) move alike, so the same ones
/// coincide, and every fusible read moves by a multiple of its widest fused load, so the same
/// runs are fused from the same alignment.
pub(super) fn effects_move_alike(
    reuse: Option<&LoadReuse>,
    fuser: Option<&LoadFuser>,
    sites: &[SiteMove],
) -> bool {
    let loads = || sites.iter().filter(|site| site.kind == AccessKind::Load);
    let reuse_alike = reuse.is_none_or(|reuse| {
        loads().all(|a| {
            loads().all(|b| {
                a.space != b.space
                    || a.bytes_per_step == b.bytes_per_step
                    || reuse.class_of_site(a.span) != reuse.class_of_site(b.span)
            })
        })
    });
    let fusion_alike = fuser.is_none_or(|fuser| {
        sites.iter().all(|site| {
            fuser
                .max_width_at(site.span)
                .is_none_or(|width| site.bytes_per_step % i64::from(width.max(1)) == 0)
        })
    });
    reuse_alike && fusion_alike
}

/// A block's warps shown alike (`RecordSink::warps_alike`) and what the compiler effects and
/// the counting made of the records of each leader, so that the records of the warps it stands
/// for, the same moved, need not pass through them again. The profiler, which keeps absolute
/// addresses, still sees every record.
pub(super) struct MovedWarps {
    pub(super) block: [u32; 3],
    pub(super) leaders: Vec<u32>,
    /// Per warp of the block: its leader (an index into `leaders`) and the steps from it.
    pub(super) lead: Vec<(usize, u32)>,
    /// Per leader.
    pub(super) classes: Vec<MovedClass>,
}

/// The fuser's tally per site: loads in, instructions out, widest bytes (`LoadFuser::tally_into`).
pub(super) type Tally = Vec<(u64, u64, u32)>;

#[derive(Default)]
pub(super) struct MovedClass {
    /// Whether the warps the leader stands for may reuse its work: every site moves by one
    /// amount, the loads that load reuse compares with each other move alike (so the same loads
    /// are reused), and every fusible read moves by a multiple of its widest fused load (so the
    /// same runs are fused, from the same alignment).
    pub(super) reusable: bool,
    pub(super) site_moves: Vec<SiteMove>,
    pub(super) inputs: Vec<FirstRecord>,
    /// The records counted while the leader's went through the fuser, as where each is in
    /// `kept`, with what it added, and how each moves (`moves`). An output of a record of a
    /// loop iteration skipped is the output of the iteration run's record that it repeats,
    /// where its measure holds for the move: a matmul's leader skips thousands of records, and
    /// where all of a record's outputs are such, the record has no outputs of its own
    /// (`FirstRecord::iteration`).
    pub(super) outputs: Vec<usize>,
    pub(super) kept: Vec<(MemRecord, Option<AccessMeasure>)>,
    pub(super) moves: Vec<OutputMove>,
    /// What the fuser emitted for the leader at the end of the block.
    pub(super) finished: Vec<MemRecord>,
    pub(super) reused: ReusedLoads,
    /// What the leader added to the fuser's tally, per site.
    pub(super) tally: Tally,
}

/// What became of one record of a leader.
pub(super) struct FirstRecord {
    /// Whether it was issued (not reused).
    pub(super) issued: bool,
    /// Where its outputs are in `MovedClass::outputs`...
    pub(super) outputs: (usize, usize),
    /// ... as the outputs of the record of the iteration run that it repeats, `iteration`
    /// iterations on (each lies its move per iteration, `OutputMove::per_iteration`, that many
    /// times further); 0 for a record whose outputs are its own.
    pub(super) iteration: i64,
    /// What the profiler measured of it that holds wherever it lies (`RecordShape`), with how far
    /// the record lies from the access it was measured of (a record of a loop iteration its
    /// warp skipped reuses the iteration's).
    pub(super) shape: Option<(Rc<RecordShape>, i64)>,
    /// For a record of a loop iteration skipped whose records are counted at once
    /// (`LoggedRecord::batched`): how many iterations the warps it stands for count with it, 0
    /// where an earlier iteration's counted them.
    pub(super) counted: Option<u64>,
    pub(super) copy: CopyKind,
    /// Whether every output's measure holds at every warp of the class
    /// (`OutputMove::every_step`).
    pub(super) every_step: bool,
}

/// What a warp shown alike's copy of a leader's record does (`FirstRecord::inert`): a copy that
/// adds nothing a warp shown alike need count (`FirstRecord::counts_nothing_more`) and that the
/// profile sees only as its warp's is not asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Inert {
    No,
    Quiet,
    /// ... but notes that the warp ran.
    NotesWarp,
}

impl FirstRecord {
    /// Whether a warp shown alike counts nothing more for it: its outputs were counted at once
    /// for the whole batch of skipped iterations, and each measure holds at every warp.
    pub(super) fn counts_nothing_more(&self) -> bool {
        self.every_step && self.counted == Some(0)
    }

    pub(super) fn inert(&self) -> Inert {
        let inert = self.counts_nothing_more() && (!self.issued || self.copy != CopyKind::Placed);
        match (inert, self.issued && self.copy == CopyKind::WarpOnly) {
            (false, _) => Inert::No,
            (true, false) => Inert::Quiet,
            (true, true) => Inert::NotesWarp,
        }
    }
}

impl MovedClass {
    /// Empties the class, keeping its vectors' room.
    pub(super) fn clear(&mut self) {
        self.reusable = false;
        self.site_moves.clear();
        self.inputs.clear();
        self.outputs.clear();
        self.kept.clear();
        self.moves.clear();
        self.finished.clear();
        self.reused = ReusedLoads::default();
        self.tally.clear();
    }

    /// How far `record`'s site moves per step of the class.
    pub(super) fn move_of(&self, record: &MemRecord) -> i64 {
        self.site_moves
            .iter()
            .find(|site| site.holds(record))
            .map_or(0, |site| site.bytes_per_step)
    }

    /// Counts `output` with its `measure` for the leader, lying `lies` bytes from where it is.
    pub(super) fn push_output(
        &mut self,
        (output, measure): (MemRecord, Option<AccessMeasure>),
        lies: i64,
        device: &Device,
    ) {
        self.outputs.push(self.kept.len());
        self.push_move(&output, measure.is_some(), lies, device);
        self.kept.push((output, measure));
    }

    pub(super) fn push_move(
        &mut self,
        output: &MemRecord,
        measured: bool,
        lies: i64,
        device: &Device,
    ) {
        let output_move = OutputMove::new(output, measured, self.move_of(output), device);
        self.moves.push(OutputMove {
            lies,
            ..output_move
        });
    }

    /// Adds what the compiler effects counted for a record of a skipped iteration: what they
    /// counted for the record of the iteration run that it repeats.
    pub(super) fn add_effects_of(&mut self, logged: &LoggedRecord) {
        self.reused.instructions += logged.reused.instructions;
        self.reused.lanes += logged.reused.lanes;
        add_tally_changes(&mut self.tally, &logged.tally);
    }

    /// Adds a record of a skipped iteration as the record `run` of the iteration run that it
    /// repeats, `iteration` iterations on (`FirstRecord::iteration`), with its own shape's place
    /// and count.
    pub(super) fn push_repeat(
        &mut self,
        run: usize,
        iteration: i64,
        shape: Option<(Rc<RecordShape>, i64)>,
        counted: Option<u64>,
    ) {
        let ran = &self.inputs[run];
        let input = FirstRecord {
            issued: ran.issued,
            outputs: ran.outputs,
            iteration,
            shape,
            counted,
            copy: ran.copy,
            every_step: ran.every_step,
        };
        self.inputs.push(input);
    }

    /// Adds what became of a record of the leader whose outputs were pushed from `start` on:
    /// whether it was issued, its shape, what it counts and its copy kind.
    pub(super) fn push_input(
        &mut self,
        start: usize,
        issued: bool,
        shape: Option<(Rc<RecordShape>, i64)>,
        (counted, copy): (Option<u64>, CopyKind),
    ) {
        let end = self.outputs.len();
        let every_step = self.moves[start..end]
            .iter()
            .all(|output| output.every_step);
        let input = FirstRecord {
            issued,
            outputs: (start, end),
            iteration: 0,
            shape,
            counted,
            copy,
            every_step,
        };
        self.inputs.push(input);
    }
}

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
