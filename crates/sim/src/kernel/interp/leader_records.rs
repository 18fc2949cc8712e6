//! The records the leaders of a block's warp classes made (`LeaderRecords`), kept as the
//! interpreter handed them, with what it said of their loops, so that `warps` can hand them on to
//! the sink with the moved copies of the warps each leader stands for. A record of a skipped loop
//! iteration is kept as the record it repeats and how it moves, not whole.

use super::launch::{IterationFences, MemRecord, MovedRecord, Repeated};
use super::sink::RecordSink;
use std::borrow::Cow;

/// The records the leaders made, as the interpreter handed them, with what it said of the loop
/// iterations they ran and skipped (`loops`), for `replay_with` to hand on to the sink. A record
/// of a skipped iteration is kept as the record of the iteration run it repeats and how it moves
/// (`Handed::Repeats`): a matmul's leaders skip thousands of records a block, and copies of
/// them, 560 bytes each, would not stay in the processor's caches.
#[derive(Clone, Debug, Default)]
pub(super) struct LeaderRecords {
    /// The records the warps ran, and those of the iterations whose records the skipped ones
    /// repeat.
    kept: Vec<MemRecord>,
    /// Per record handed, in order: where it is kept.
    handed: Vec<Handed>,
    /// Per warp: where the records of the iteration that its skipped ones repeat are kept.
    repeating: Vec<Vec<usize>>,
    /// What the warps said of their loops, in order: the number of records made before, the
    /// warp, and what.
    notes: Vec<(usize, u32, LoopNote)>,
}

/// Where a record handed to `LeaderRecords` is kept.
#[derive(Clone, Copy, Debug)]
enum Handed {
    /// As it was handed, in `kept`, with what it repeats where it is one of a skipped iteration.
    Kept(usize, Option<Repeated>),
    /// As the record in `kept` that it repeats, moved (`Repeated::apply`).
    Repeats(usize, Repeated),
}

#[derive(Clone, Debug)]
enum LoopNote {
    IterationBegins,
    RepeatsBegin {
        moves: Vec<i64>,
        fences: IterationFences,
    },
    IterationsEnd,
}

impl LeaderRecords {
    /// How many records are kept (fewer than handed, where some repeat others).
    pub(super) fn kept_len(&self) -> usize {
        self.kept.len()
    }

    /// The record kept at `i` (`kept_index`).
    pub(super) fn kept_at(&self, i: usize) -> &MemRecord {
        &self.kept[i]
    }

    /// After how many records handed the note `next` was made, if there is one.
    pub(super) fn note_at(&self, next: usize) -> Option<usize> {
        self.notes.get(next).map(|&(at, _, _)| at)
    }

    /// Hands `sink` the notes from `*next` on that `warp` made after `made` records, and
    /// moves `*next` past them.
    pub(super) fn hand_notes(
        &self,
        next: &mut usize,
        made: usize,
        warp: u32,
        sink: &mut dyn RecordSink,
    ) {
        while let Some((at, by, note)) = self.notes.get(*next) {
            if *at != made || *by != warp {
                break;
            }
            match note {
                LoopNote::IterationBegins => sink.iteration_begins(warp),
                LoopNote::RepeatsBegin { moves, fences } => {
                    sink.repeats_begin(warp, moves, *fences)
                }
                LoopNote::IterationsEnd => sink.iterations_end(warp),
            }
            *next += 1;
        }
    }

    pub(super) fn clear(&mut self) {
        self.kept.clear();
        self.handed.clear();
        self.repeating.iter_mut().for_each(Vec::clear);
        self.notes.clear();
    }

    /// How many records were handed.
    pub(super) fn len(&self) -> usize {
        self.handed.len()
    }

    /// The record kept for record `at`: itself, or the one it repeats. Its warp, block, site
    /// and access kind, space and width are the record's.
    pub(super) fn kept(&self, at: usize) -> &MemRecord {
        &self.kept[self.kept_index(at)]
    }

    pub(super) fn kept_index(&self, at: usize) -> usize {
        match self.handed[at] {
            Handed::Kept(i, _) | Handed::Repeats(i, _) => i,
        }
    }

    /// Whether record `at` is kept as the record it repeats: one of a record kept whole is
    /// handed before it.
    pub(super) fn repeats(&self, at: usize) -> bool {
        matches!(self.handed[at], Handed::Repeats(..))
    }

    /// Which record of an iteration run record `at` repeats, if it is one of a skipped iteration.
    pub(super) fn repeated(&self, at: usize) -> Option<&Repeated> {
        match &self.handed[at] {
            Handed::Kept(_, repeated) => repeated.as_ref(),
            Handed::Repeats(_, repeated) => Some(repeated),
        }
    }

    /// Record `at`, as it was handed: made only for one kept as the record it repeats.
    pub(super) fn record(&self, at: usize) -> Cow<'_, MemRecord> {
        match &self.handed[at] {
            Handed::Kept(i, _) => Cow::Borrowed(&self.kept[*i]),
            Handed::Repeats(i, repeated) => {
                let mut record = self.kept[*i];
                repeated.apply(&mut record);
                Cow::Owned(record)
            }
        }
    }

    /// Hands record `at` to `sink` as the interpreter handed it.
    pub(super) fn hand(&self, at: usize, sink: &mut dyn RecordSink) {
        match &self.handed[at] {
            Handed::Kept(i, None) => sink.record(&self.kept[*i]),
            Handed::Kept(i, Some(repeated)) => sink.record_repeated(&self.kept[*i], repeated),
            Handed::Repeats(i, repeated) => sink.record_repeated_from(&self.kept[*i], repeated),
        }
    }

    /// Record `at` as `record_repeated_from` takes it: the record it repeats and how, for one
    /// kept as that (`repeats`). A record kept whole comes as its own repeat, moved by nothing
    /// and of iteration 0, which no sink takes as one of a skipped iteration (`hand` hands
    /// those).
    pub(super) fn repeats_at(&self, at: usize) -> (&MemRecord, Repeated) {
        match self.handed[at] {
            Handed::Repeats(i, repeated) => (&self.kept[i], repeated),
            Handed::Kept(i, _) => {
                let itself = Repeated {
                    index: 0,
                    by: 0,
                    loads: 0,
                    fences: 0,
                    iteration: 0,
                    iterations: 0,
                };
                (&self.kept[i], itself)
            }
        }
    }

    /// Record `at` as `RecordSink::record_moved` takes it for the warp `moved` says.
    pub(super) fn moved(&self, at: usize, moved: MovedRecord) -> (&MemRecord, MovedRecord) {
        let (i, repeated) = match self.handed[at] {
            Handed::Kept(i, _) => (i, None),
            Handed::Repeats(i, repeated) => (i, Some(repeated)),
        };
        (&self.kept[i], MovedRecord { repeated, ..moved })
    }

    fn keep(&mut self, record: &MemRecord, repeated: Option<Repeated>) {
        self.handed.push(Handed::Kept(self.kept.len(), repeated));
        self.kept.push(*record);
    }
}

impl RecordSink for LeaderRecords {
    fn record(&mut self, record: &MemRecord) {
        self.keep(record, None);
    }

    fn iteration_begins(&mut self, warp: u32) {
        self.notes
            .push((self.handed.len(), warp, LoopNote::IterationBegins));
    }

    fn iterations_end(&mut self, warp: u32) {
        self.notes
            .push((self.handed.len(), warp, LoopNote::IterationsEnd));
    }

    fn repeats_begin(&mut self, warp: u32, moves: &[i64], fences: IterationFences) {
        let note = LoopNote::RepeatsBegin {
            moves: moves.to_vec(),
            fences,
        };
        self.notes.push((self.handed.len(), warp, note));
        let warp = warp as usize;
        if self.repeating.len() <= warp {
            self.repeating.resize_with(warp + 1, Vec::new);
        }
        self.repeating[warp].clear();
    }

    fn record_repeated(&mut self, record: &MemRecord, repeated: &Repeated) {
        self.keep(record, Some(*repeated));
    }

    fn record_repeated_from(&mut self, ran: &MemRecord, repeated: &Repeated) {
        // The first skipped iteration hands the records of the iteration run in order: each is
        // kept once, and the later iterations' repeat it.
        let warp = ran.warp as usize;
        let template = match self.repeating.get(warp) {
            Some(kept) if repeated.index < kept.len() => {
                debug_assert_eq!(self.kept[kept[repeated.index]], *ran);
                Some(kept[repeated.index])
            }
            Some(kept) if repeated.index == kept.len() => {
                self.kept.push(*ran);
                self.repeating[warp].push(self.kept.len() - 1);
                Some(self.kept.len() - 1)
            }
            _ => None,
        };
        match template {
            Some(i) => self.handed.push(Handed::Repeats(i, *repeated)),
            // Only a warp that began repeating hands repeated records; a sink takes any other
            // way as it comes, whole.
            None => {
                let mut record = *ran;
                repeated.apply(&mut record);
                self.keep(&record, Some(*repeated));
            }
        }
    }
}
