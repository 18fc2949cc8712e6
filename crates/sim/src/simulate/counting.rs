//! Counting a record once the compiler effects have decided that it is executed: the block's
//! counters, its access site's per-line counts and, for the traced warp, the trace.
//!
//! A record's measure (`AccessMeasure::of`: wavefronts and bank conflicts for shared memory,
//! requests and sectors for global memory) is a function of the access and the device alone,
//! so a shared access met again is looked up rather than measured (`SharedMeasures`). The
//! premise the reuse paths rely on is `AccessMeasure::move_unit`: an access moved by a multiple
//! of its unit measures the same, so a copy's measure is its origin's where `OutputMove::holds`.

use crate::access::{Space, WarpAccess};
use crate::counters::{AccessMeasure, Counters};
use crate::device::Device;
use crate::kernel::MemRecord;
use crate::profile::IntegerHashMap;
use crate::trace::{LineTally, TraceRecorder};

/// Where a record goes once the compiler-effects pass has decided what is executed: the block's
/// counters, its access site's line and, for the traced warp, the trace.
pub(super) struct Counting<'a> {
    pub(super) device: &'a Device,
    pub(super) counters: Counters,
    pub(super) lines: &'a mut LineTally,
    pub(super) trace: Option<&'a mut TraceRecorder>,
    pub(super) shared_measures: &'a mut SharedMeasures,
}

/// Per site, warp and first lane's address, the shared access last measured there and its
/// measure (`AccessMeasure::of`, a function of the access and the device alone). A block's
/// shared memory lies at the same places as every other block's, and a warp's shared accesses
/// repeat from one iteration it runs to the next (a matmul's tile is read at the same words in
/// every phase), so most of the launch's shared accesses are found here rather than measured
/// again. The map holds only the place of each access in `entries`: an access and its measure
/// are some 580 bytes, and a table of them was too large for the cache, so that each look-up
/// missed it (a twentieth of the guarded matmul's time at tile 30).
#[derive(Default)]
pub(super) struct SharedMeasures {
    places: IntegerHashMap<(u32, u32, u64), usize>,
    entries: Vec<(WarpAccess, AccessMeasure)>,
}

impl SharedMeasures {
    /// The measure of `record`'s shared access, `None` for one with no active lane.
    pub(super) fn of(&mut self, record: &MemRecord, device: &Device) -> Option<AccessMeasure> {
        let first = record.access.lanes.iter().flatten().next()?;
        let key = (record.span.start, record.warp, *first);
        let place = self.places.get(&key).copied();
        if let Some(place) = place {
            let (access, measure) = &self.entries[place];
            if *access == record.access {
                return Some(*measure);
            }
        }
        let measure = AccessMeasure::of(&record.access, device)?;
        match place {
            Some(place) => self.entries[place] = (record.access, measure),
            None => {
                // A kernel whose warps read shared memory all over keeps few alike: the map
                // starts afresh rather than grow past some 2 MB.
                if self.entries.len() >= SHARED_MEASURES_KEPT {
                    self.places.clear();
                    self.entries.clear();
                }
                self.places.insert(key, self.entries.len());
                self.entries.push((record.access, measure));
            }
        }
        Some(measure)
    }
}

/// The most shared accesses `SharedMeasures` keeps: a tiled matmul's at tile 32 are some 2,100
/// (its two tiles read at 32 places by each of 32 warps, and written at one).
const SHARED_MEASURES_KEPT: usize = 4096;

impl Counting<'_> {
    /// Counts `record`, and says what it added (`None` for a record with no active lane).
    pub(super) fn count(&mut self, record: &MemRecord) -> Option<AccessMeasure> {
        let measure = match record.access.space {
            Space::Shared => self.shared_measures.of(record, self.device)?,
            _ => AccessMeasure::of(&record.access, self.device)?,
        };
        self.count_untraced(record, &measure);
        if let Some(trace) = self.trace.as_deref_mut() {
            trace.record(record);
        }
        Some(measure)
    }

    /// Counts what `record` adds to the counters and the per-line counts, which its place does
    /// not change: for a record of a warp other than the traced one (only its space, kind,
    /// width and site are read).
    pub(super) fn count_untraced(&mut self, record: &MemRecord, measure: &AccessMeasure) {
        self.count_untraced_times(record, measure, 1);
    }

    /// Counts `times` records like `record` (the iterations of a loop skipped alike).
    pub(super) fn count_untraced_times(
        &mut self,
        record: &MemRecord,
        measure: &AccessMeasure,
        times: u64,
    ) {
        self.counters
            .add_measure_times(&record.access, measure, times);
        self.lines.add_times(record, &measure.cost, times);
    }
}

/// How a record counted for a leader moves to the warps it stands for, looked up once, so that
/// a warp whose records all keep their measure need not read the records themselves.
#[derive(Clone, Copy, Debug)]
pub(super) struct OutputMove {
    /// Its site's move per step of the class...
    pub(super) per_step: i64,
    /// ... how far the leader's record lies from the one kept, and for an output of a record
    /// of an iteration run, how far it moves per iteration (`FirstRecord::iteration`) ...
    pub(super) lies: i64,
    pub(super) per_iteration: i64,
    /// ... and the moves under which its measure holds, the multiples of `unit` bytes
    /// (`AccessMeasure::move_unit`); 0 where it has no measure...
    pub(super) unit: i64,
    /// ... which are all those of whole steps: a warp shown alike counts the output as the
    /// leader's without a division.
    pub(super) every_step: bool,
}

impl OutputMove {
    /// The move of `output` by `per_step` bytes a step, lying where it is.
    pub(super) fn new(
        output: &MemRecord,
        measured: bool,
        per_step: i64,
        device: &Device,
    ) -> OutputMove {
        let unit = if measured {
            AccessMeasure::move_unit(&output.access, device)
        } else {
            0
        };
        OutputMove {
            per_step,
            lies: 0,
            per_iteration: 0,
            unit,
            every_step: unit != 0 && per_step % unit == 0,
        }
    }

    /// Whether the measure holds `steps` steps of the class from the leader.
    pub(super) fn holds(&self, steps: i64) -> bool {
        self.every_step || (self.unit != 0 && self.per_step.wrapping_mul(steps) % self.unit == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::SharedMeasures;
    use crate::access::{AccessKind, AccessWidth, Space, WarpAccess};
    use crate::counters::AccessMeasure;
    use crate::device::h100;
    use crate::kernel::{LoadOrder, MemRecord, Span};

    /// A shared load of warp 0 at a site, lane `l` at `address(l)`.
    fn shared_load(address: impl FnMut(u32) -> Option<u64>) -> MemRecord {
        MemRecord {
            access: WarpAccess::from_fn(
                Space::Shared,
                AccessKind::Load,
                AccessWidth::new(4).expect("4 bytes is a width"),
                address,
            ),
            span: Span {
                line: 3,
                col: 5,
                start: 40,
                end: 52,
            },
            block: [0, 0, 0],
            warp: 0,
            order: LoadOrder::default(),
            fences_passed: 0,
        }
    }

    #[test]
    fn a_shared_access_found_again_keeps_its_measure_and_one_that_differs_is_measured_anew() {
        let device = h100();
        let mut measures = SharedMeasures::default();
        let mut check = |record: &MemRecord, wavefronts: u32| {
            let measure = measures.of(record, &device).expect("lanes are active");
            assert_eq!(Some(measure), AccessMeasure::of(&record.access, &device));
            assert_eq!(measure.cost.wavefronts, wavefronts);
        };
        // A row of a 32 x 32 float tile, then its column (32-way), then the row again, and a
        // column that starts at the row's first word: the same site, warp and first address.
        let row = shared_load(|lane| Some(4 * u64::from(lane)));
        let column = shared_load(|lane| Some(128 * u64::from(lane)));
        check(&row, 1);
        check(&column, 32);
        check(&row, 1);
        check(&column, 32);
        // The two share one place in the map, each replacing the other; no lane active:
        // nothing to measure, nothing kept.
        assert_eq!(measures.of(&shared_load(|_| None), &device), None);
        assert_eq!((measures.places.len(), measures.entries.len()), (1, 1));
    }
}
