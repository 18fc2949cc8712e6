//! Which blocks stand for which: the grid's edge classes as `sampling` lists them, every block
//! under `BlockSampling::All`, the strata a class whose work changes across the grid is split
//! into, and the classes a block run is shown to do the work of at shifted addresses.
//!
//! The premises: `kernel::block_shift` proves the blocks alike up to shifts, and `runs_alike`
//! admits a shift only where the sectors, lines, banks and DRAM atoms fall alike (whole lines,
//! or half a line more where the run's requests allow it), the moved sectors stay in their
//! buffers, and every guard comes out alike.

use crate::coalescing::{LINE_BYTES, SECTOR_BYTES};
use crate::kernel::block_shift::{Guard, GuardRange, ShiftedBuffer};
use crate::profile::TouchedRange;
use crate::sampling::{BlockClass, EdgePosition};

/// Whether block `other` does block `run`'s work with every buffer's addresses moved by whole
/// 128-byte lines (or half a line more, where the run's requests allow it), given that the
/// kernel shifts them and depends on `guards` (from `kernel::block_shift`), the sectors `run`
/// touched in each buffer of the profiler's layout (`ranges`) and the differences its guards
/// compared (`guard_ranges`): the moved sectors must stay in their buffer, as the interpreter
/// would otherwise have stopped `other` at an out-of-bounds access, and every guard must come
/// out alike.
pub(super) fn runs_alike(
    (buffers, guards): (&[ShiftedBuffer], &[Guard]),
    ranges: &[TouchedRange],
    guard_ranges: &[GuardRange],
    run: [u32; 3],
    other: [u32; 3],
) -> bool {
    let shift_of = |per_block: [i64; 3]| -> i128 {
        (0..3)
            .map(|d| i128::from(per_block[d]) * (i128::from(other[d]) - i128::from(run[d])))
            .sum()
    };
    let guards_alike = guards
        .iter()
        .zip(guard_ranges)
        .all(|(guard, &range)| guard.holds_alike(range, shift_of(guard.shift)));
    guards_alike
        && buffers.iter().all(|buffer| {
            let shift = shift_of(buffer.bytes_per_block);
            if shift == 0 {
                return true;
            }
            let Some(range) = ranges.iter().find(|r| r.base == buffer.base) else {
                return false;
            };
            // Whole lines, or half a line more where no request nor the block fills a line's
            // two halves or the halves about a line's end (`TouchedRange::half_line_shift_safe`).
            let line = i128::from(LINE_BYTES);
            let aligned = shift % line == 0
                || (shift.rem_euclid(line) == line / 2 && range.half_line_shift_safe);
            if !aligned {
                return false;
            }
            // A buffer the run block never touched is touched by no block: they branch alike.
            let Some((first, last)) = range.sectors else {
                return true;
            };
            let start = i128::from(first) * i128::from(SECTOR_BYTES) + shift;
            let end = (i128::from(last) + 1) * i128::from(SECTOR_BYTES) + shift;
            start >= i128::from(buffer.base)
                && end <= i128::from(buffer.base) + i128::from(buffer.size)
        })
}

/// Whether `class`'s block, which issued `issued` instructions, issued another number than both
/// ends of its row along a dimension it is interior in (`issued_by_block`: the blocks run or
/// shown alike so far): its work changes across the grid, and its class is split into strata.
pub(super) fn varies_along_a_row(
    class: &BlockClass,
    issued: u64,
    issued_by_block: &[([u32; 3], u64)],
    grid: [u32; 3],
) -> bool {
    let differs_from = |d: usize, index: u32| {
        let mut end = class.representative;
        end[d] = index;
        issued_by_block
            .iter()
            .any(|&(block, other)| block == end && other != issued)
    };
    (0..3).any(|d| {
        class.position[d] == EdgePosition::Interior
            && differs_from(d, 0)
            && differs_from(d, grid[d].max(1) - 1)
    })
}

/// Where block index `index` lies along a grid dimension of `extent` blocks.
pub(super) fn position_of(index: u32, extent: u32) -> EdgePosition {
    match extent {
        0 | 1 => EdgePosition::Only,
        _ if index == 0 => EdgePosition::First,
        _ if index + 1 == extent => EdgePosition::Last,
        _ => EdgePosition::Interior,
    }
}

/// The product of three extents, saturating at `u64::MAX` rather than wrapping.
pub(super) fn checked_product(extents: [u32; 3]) -> u64 {
    extents
        .iter()
        .try_fold(1u64, |product, &extent| {
            product.checked_mul(u64::from(extent))
        })
        .unwrap_or(u64::MAX)
}

/// Every block of the grid as a class of its own, x fastest, made as they are asked for.
pub(super) fn every_block(grid: [u32; 3]) -> impl Iterator<Item = BlockClass> {
    let position = |index: u32, extent: u32| match (index, extent) {
        (_, 0 | 1) => EdgePosition::Only,
        (0, _) => EdgePosition::First,
        (i, n) if i + 1 == n => EdgePosition::Last,
        _ => EdgePosition::Interior,
    };
    let [gx, gy, gz] = grid.map(|extent| extent.max(1));
    (0..gz).flat_map(move |z| {
        (0..gy).flat_map(move |y| {
            (0..gx).map(move |x| BlockClass {
                position: [
                    position(x, grid[0]),
                    position(y, grid[1]),
                    position(z, grid[2]),
                ],
                representative: [x, y, z],
                n_blocks: 1,
            })
        })
    })
}
