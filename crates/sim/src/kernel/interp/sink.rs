//! Where the interpreter hands a block's records: `RecordSink`, and the batch of skipped loop
//! iterations it may hand at once (`IterationsRepeated`).
//!
//! The interpreter runs a block warp by warp, and where `kernel::block_shift` shows warps or
//! loop iterations alike it runs only some of them and hands the others' records as copies of
//! those it ran (`MovedRecord`, `Repeated`), sometimes a whole run of them in one call. The
//! trait's default bodies define what such a copy means: each makes the records a full run makes,
//! by `MovedRecord::of` and `Repeated::apply`, and passes them to `record` one at a time, in the
//! order the interpreter hands them. A sink that implements only `record` (`Vec<MemRecord>`, which
//! keeps them) therefore sees exactly the records a full run makes.
//!
//! The contract: **every override is equal to its default**. A sink may override a method only
//! as a faster way to the same effect: its state after the call (counters, per-line counts,
//! profile, trace, compiler effects) must be what the default's calls of `record` would have
//! left. What each default computes:
//!
//! - `record_moved(record, moved)`: `record(moved.of(record))`.
//! - `records_moved(count, moved)`: `record_moved` of each of the `count`, in order.
//! - `record_repeated(record, repeated)`: `record(record)`; the record is already whole.
//! - `record_repeated_from(ran, repeated)`: `record_repeated` of `ran` made whole by
//!   `repeated.apply`.
//! - `records_repeated_from(count, repeated)`: `record_repeated_from` of each, in order.
//! - `iterations_repeated_from(batch)`: `IterationsRepeated::each`, one `records_repeated_from`
//!   per iteration (after `repeats_ran` where the batch says the warp ran).
//! - `nested_iterations_repeated(batch)`: `IterationsRepeated::each_record`, every record of
//!   every iteration made whole and passed to `record`.
//! - `repeats_needed(warp, iterations)`: `None`, every repeat is handed. A sink that answers
//!   otherwise must itself have taken, at once, what the repeats it is not handed would make;
//!   `repeats_ran` then stands for those marked `RepeatNeed::WarpRan`.
//! - `warps_alike`, `iteration_begins`, `repeats_begin`, `iterations_end`,
//!   `nested_iteration_begins` and `repeats_ran`: nothing. They carry no record; a sink may use
//!   them to prepare what makes its overrides faster, never to change what it counts.
//!
//! The block sink (`simulate`'s `BlockSink`) overrides all of them; its module says which
//! premises let it take a copy from what the original made, and it falls back to the default
//! wherever one fails. A test there checks the contract: on lecture and generated kernels it
//! ends with the counters, per-line counts, profile and trace that the records a `Vec<MemRecord>`
//! kept give when passed to it one by one.

use super::launch::{IterationFences, MemRecord, MovedRecord, Repeated, RepeatsNeeded, WarpsAlike};

/// Receives the records of a block as they happen (so that counters need not keep them all).
///
/// The contract, which the module documentation explains: every override is equal to its
/// default. `record` is the one method without a default; every other either hands on records
/// (its default makes each record a full run makes and passes it to `record`, in the order the
/// interpreter hands them) or is a hint that carries no record (its default does nothing).
pub(crate) trait RecordSink {
    /// A record as a full run makes it: the one thing a sink must take.
    fn record(&mut self, record: &MemRecord);

    /// Before the records of a block whose warps were shown alike (`Simulation::show_warps_alike`):
    /// which warps ran and how each record of the first warp of a class moves from one warp of
    /// the class to the next. A sink that does nothing with it loses nothing.
    fn warps_alike(&mut self, _warps: &WarpsAlike<'_>) {}

    /// A record of a warp that did not run: `moved` says which record of which leader `record`
    /// is, and how it moves to the warp's (`MovedRecord::of` makes the record a full run makes).
    /// A sink may reuse what it made of the leader's (`warps_alike` says when it may), or take it
    /// as any other record.
    fn record_moved(&mut self, record: &MemRecord, moved: &MovedRecord) {
        self.record(&moved.of(record));
    }

    /// `count` records in a row of a warp that did not run, one run of it to its next barrier
    /// or its end, as `record_moved` takes them: `moved(i)` gives the `i`-th, and their
    /// `MovedRecord::index`es follow each other. A sink that knows what some of them make
    /// need not ask for those.
    fn records_moved<'r>(
        &mut self,
        count: usize,
        moved: &dyn Fn(usize) -> (&'r MemRecord, MovedRecord),
    ) {
        for i in 0..count {
            let (record, moved_record) = moved(i);
            self.record_moved(record, &moved_record);
        }
    }

    /// Before the records of a loop iteration that `warp` runs and may skip the iterations after
    /// (`Simulation::summarise_loops`): a sink may keep what it makes of the warp's records from
    /// here, until the warp's next `iteration_begins`, for `record_repeated`.
    fn iteration_begins(&mut self, _warp: u32) {}

    /// Before the records of the iterations `warp` skips, after the iteration it ran since its
    /// last `iteration_begins`: how far each record of that iteration moves per iteration, and
    /// the fences the warp passes in one.
    fn repeats_begin(&mut self, _warp: u32, _moves: &[i64], _fences: IterationFences) {}

    /// A record of an iteration a warp skipped: `record` is what a full run makes, and
    /// `repeated` says which record of the iteration the warp ran it is, moved. A sink may reuse
    /// what it made of that record, or take it as any other.
    fn record_repeated(&mut self, record: &MemRecord, _repeated: &Repeated) {
        self.record(record);
    }

    /// After the records of the iterations `warp` skipped, or where it gives up skipping: the
    /// warp skips no more iterations of the loop it began one of (`iteration_begins`).
    fn iterations_end(&mut self, _warp: u32) {}

    /// `record_repeated` given the record of the iteration run, `repeated`: a sink that keeps
    /// records may make the repeating one where it keeps it (`Repeated::apply`).
    fn record_repeated_from(&mut self, ran: &MemRecord, repeated: &Repeated) {
        let mut record = *ran;
        repeated.apply(&mut record);
        self.record_repeated(&record, repeated);
    }

    /// Asked once `warp` has begun to skip `iterations` (`repeats_begin`), before it hands any
    /// of their records: what the sink still needs of the repeats of each record of the
    /// iteration it ran, from the first skipped iteration to the one `tail` before the last.
    /// `None` needs every record.
    fn repeats_needed(&mut self, _warp: u32, _iterations: u64) -> Option<RepeatsNeeded> {
        None
    }

    /// In place of the repeats marked `RepeatNeed::WarpRan` of one run of `warp` to its next
    /// barrier: that the warp ran.
    fn repeats_ran(&mut self, _warp: u32) {}

    /// `count` records in a row of the loop iterations a warp skipped, within one run of it to
    /// its next barrier, as `record_repeated_from` takes them: `repeated(i)` gives the `i`-th.
    /// A sink that knows what some of them make may take those at once.
    fn records_repeated_from<'r>(
        &mut self,
        count: usize,
        repeated: &dyn Fn(usize) -> (&'r MemRecord, Repeated),
    ) {
        for i in 0..count {
            let (ran, repeated) = repeated(i);
            self.record_repeated_from(ran, &repeated);
        }
    }

    /// The records of a run of whole skipped iterations of a loop with no barrier in it
    /// (`IterationsRepeated`), all at once: a sink that knows what they make need not be called
    /// once per record. Taking them iteration by iteration as `records_repeated_from` does
    /// (`IterationsRepeated::each`) is what a sink that does not know better does.
    fn iterations_repeated_from(&mut self, iterations: &IterationsRepeated<'_>) {
        iterations.each(self);
    }

    /// A warp begins to capture an iteration of a loop inside another whose iteration it is
    /// capturing (`kernel::interp`'s `loops`): the records it makes until the skipped iterations
    /// of the inner loop are handed (`nested_iterations_repeated`) are that iteration's.
    fn nested_iteration_begins(&mut self, _warp: u32) {}

    /// The skipped iterations of a loop inside another whose iteration the warp is capturing,
    /// all at once (`IterationsRepeated`, every record of each): a sink that logs the enclosing
    /// iteration must still see each record as a full run makes it (`IterationsRepeated::
    /// each_record`), unless it can log them from what the inner iteration run made.
    fn nested_iterations_repeated(&mut self, iterations: &IterationsRepeated<'_>) {
        iterations.each_record(self);
    }
}

/// Skipped iterations `first..=last` of a loop with no barrier in it, handed at once
/// (`RecordSink::iterations_repeated_from`): in each, `warp` repeats the records of the iteration
/// it ran at `handed` (all of them where `None`), moved as `repeated(index, iteration)` says,
/// after noting that it ran (`RecordSink::repeats_ran`) where `warp_ran`.
pub struct IterationsRepeated<'r> {
    pub warp: u32,
    pub records: &'r [MemRecord],
    pub handed: Option<&'r [usize]>,
    pub warp_ran: bool,
    pub first: u64,
    pub last: u64,
    pub repeated: &'r dyn Fn(usize, u64) -> Repeated,
}

impl std::fmt::Debug for IterationsRepeated<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IterationsRepeated")
            .field("warp", &self.warp)
            .field("records", &self.records.len())
            .field("handed", &self.handed)
            .field("warp_ran", &self.warp_ran)
            .field("first", &self.first)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl IterationsRepeated<'_> {
    /// How many records each iteration hands.
    pub fn per_iteration(&self) -> usize {
        self.handed.map_or(self.records.len(), <[usize]>::len)
    }

    /// Which record of the iteration run the `i`-th handed one repeats.
    pub fn index(&self, i: usize) -> usize {
        self.handed.map_or(i, |handed| handed[i])
    }

    /// Hands `sink` iterations `from..=self.last`, one `records_repeated_from` each, as the
    /// interpreter would one iteration at a time.
    pub(crate) fn each_from<S: RecordSink + ?Sized>(&self, sink: &mut S, from: u64) {
        for iteration in from..=self.last {
            if self.warp_ran {
                sink.repeats_ran(self.warp);
            }
            let count = self.per_iteration();
            if count > 0 {
                let repeated = |i: usize| {
                    let at = self.index(i);
                    (&self.records[at], (self.repeated)(at, iteration))
                };
                sink.records_repeated_from(count, &repeated);
            }
        }
    }

    /// `each_from` the first iteration.
    pub(crate) fn each<S: RecordSink + ?Sized>(&self, sink: &mut S) {
        self.each_from(sink, self.first);
    }

    /// Hands `sink` every record of iterations `from..=self.last` as the record a full run
    /// makes (`RecordSink::record`), in the order it makes them.
    pub(crate) fn each_record_from<S: RecordSink + ?Sized>(&self, sink: &mut S, from: u64) {
        for iteration in from..=self.last {
            for i in 0..self.per_iteration() {
                let at = self.index(i);
                let mut record = self.records[at];
                (self.repeated)(at, iteration).apply(&mut record);
                sink.record(&record);
            }
        }
    }

    /// `each_record_from` the first iteration.
    pub(crate) fn each_record<S: RecordSink + ?Sized>(&self, sink: &mut S) {
        self.each_record_from(sink, self.first);
    }
}

impl RecordSink for Vec<MemRecord> {
    fn record(&mut self, record: &MemRecord) {
        self.push(*record);
    }
}
