//! The warps of a block shown alike (`kernel::interp`'s `warps`): what the compiler effects and
//! the counting made of each leader's records (`MovedWarps`, a `MovedClass` per leader), so that
//! the records of the warps it stands for, the same moved, need not pass through them again
//! (`warp_copies` takes them from here).
//!
//! The premises a class's reuse rests on (`MovedClass::reusable`): every site moves by one amount
//! from a warp of the class to the next; the loads load reuse compares with each other move
//! alike, so the same ones are reused; every fusible read moves by a multiple of its widest
//! fused load, so the same runs are fused from the same alignment (`effects_move_alike`, which
//! the skipped loop iterations check as well); and a counted record's measure holds under the
//! move (`OutputMove::holds`), else it is measured moved. The profiler, which keeps absolute
//! addresses, still sees every copy. A leader's records of a loop iteration it skipped join its
//! class as the iteration run's records that they repeat (`LoggedRecord`, `FirstRecord::iteration`).

use super::counting::OutputMove;
use super::iteration_log::LoggedRecord;
use crate::access::AccessKind;
use crate::compile_effects::{add_tally_changes, LoadFuser, LoadReuse, ReusedLoads};
use crate::counters::AccessMeasure;
use crate::device::Device;
use crate::kernel::{MemRecord, SiteMove};
use crate::profile::{CopyKind, RecordShape};
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
