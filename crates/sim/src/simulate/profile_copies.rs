//! Placing in the memory profile the copies of a record that the reuse paths do not make whole:
//! a skipped loop iteration's record (`place_repeat`) and a warp shown alike's (`profile_copy`).
//!
//! The profiler keeps absolute addresses, so every copy must reach it where it lies. The premise
//! is `BlockProfiler::place_copy`: a copy moved so that its shape (`RecordShape`) holds is placed
//! from its origin's measured shape; else from the shape of a copy at the same alignment; else
//! it is made whole and measured, as a full run would.

use super::iteration_log::LoggedRecord;
use crate::kernel::{MemRecord, Repeated};
use crate::profile::{BlockProfiler, CopyKind, IntegerHashMap, Issue, RecordShape};
use std::rc::Rc;

/// Per shape a copy was made of (by its place in memory, the `Rc` kept alive here) and the
/// copy's alignment (its move modulo `BlockProfiler::shape_move_bytes`): the shape measured of a
/// copy so aligned, and that copy's move. The profiler's own `LikeShapes` would find these too,
/// by content, but a look-up by identity costs far less: without this map the naive matmul took
/// twice as long (6.2 -> 12.1 ms at tile 17, criterion).
pub(super) type ShapeCopies = IntegerHashMap<(usize, i64), (Rc<RecordShape>, Rc<RecordShape>, i64)>;

/// Places in the profile `record`'s repeat that `repeated` says, where the compiler effects
/// issued it (`logged`): `record` itself, or where `from_ran` the record of the iteration run
/// that it repeats, moved.
pub(super) fn place_repeat(
    profiler: &mut BlockProfiler,
    shapes: &mut ShapeCopies,
    record: &MemRecord,
    logged: &LoggedRecord,
    repeated: &Repeated,
    from_ran: bool,
) {
    if !logged.issued {
        return;
    }
    let mut issue = Issue::of(record);
    if from_ran {
        issue.order = repeated.order(record.order);
    }
    let whole = || {
        let mut whole = *record;
        if from_ran {
            repeated.apply(&mut whole);
        }
        whole
    };
    let copy = (issue, record.warp, logged.copy);
    profile_copy(
        profiler,
        shapes,
        copy,
        logged.shape.as_ref(),
        repeated.by,
        whole,
    );
}

/// Adds to the profiler the access of `warp` that copies the access `origin` was measured of,
/// moved by `by` bytes (`record` gives its kind and order; `whole` makes it): placed where the
/// move keeps the shape (`BlockProfiler::place_copy`), else placed as a copy of the same
/// alignment was (the tiled matmul's warps move by 8,000 bytes, so every fourth lines up with
/// the first, and every iteration of its loop moves by whole lines), else measured and kept.
pub(super) fn profile_copy(
    profiler: &mut BlockProfiler,
    shapes: &mut ShapeCopies,
    (issue, warp, kind): (Issue, u32, CopyKind),
    origin: Option<&Rc<RecordShape>>,
    by: i64,
    whole: impl FnOnce() -> MemRecord,
) {
    if profiler.place_copy((issue, warp, kind), origin.map(|shape| (&**shape, by))) {
        return;
    }
    let Some(origin) = origin else {
        profiler.record(&whole());
        return;
    };
    let key = (
        Rc::as_ptr(origin) as usize,
        by.rem_euclid(profiler.shape_move_bytes()),
    );
    if let Some((_, shape, at)) = shapes.get(&key) {
        if profiler.place_copy((issue, warp, kind), Some((shape, by - at))) {
            return;
        }
    }
    if let Some(shape) = profiler.record_shape(&whole()) {
        shapes.insert(key, (origin.clone(), Rc::new(shape), by));
    }
}
