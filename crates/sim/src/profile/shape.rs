//! What of a global load or store holds wherever it lies: its shape (`RecordShape`: its
//! transactions, lines, passes through the L1 when it hits, and the sectors it touches with their
//! bytes), which a move by a whole number of `shape_move_bytes` keeps, so that a copy of the
//! access (a warp shown alike, a loop iteration skipped) is placed rather than measured again
//! (`BlockProfiler::place_copy`). An access like one measured before, at another place, finds
//! that shape again (`LikeShapes`). Here too are the passes a load that hits takes through the
//! L1 (`load_wavefronts`, measured with Nsight Compute on the H100) and the test of whether a
//! move by half a line keeps a request's lines (`halves_clash`).

use crate::access::{AccessKind, Space, WarpAccess};
use crate::coalescing::{LINE_BYTES, SECTOR_BYTES, SHAPE_MOVE_BYTES};
use crate::device::{Device, GlobalCoalescing};
use crate::hashing::{IntegerHashMap, IntegerHasher};
use crate::kernel::{LoadOrder, MemRecord};
use std::hash::Hasher;

/// Shapes of global accesses measured in the launch (`BlockProfiler::record_shape`), by site,
/// kind, width, alignment to `shape_move_bytes` and the lanes' places relative to the first
/// lane's. An access found here with every lane inside the one buffer the measured access lay
/// in has its shape, moved: the same premise as `BlockProfiler::place_copy`'s. The warps of a
/// block at one site, and a warp of one block and the same warp of the next along a row or
/// column, repeat their accesses at other places: a guarded matmul at tile 17 measures one
/// access in six anew.
#[derive(Debug, Default)]
pub(super) struct LikeShapes(IntegerHashMap<(u32, u64), Box<LikeShape>>);

#[derive(Debug)]
struct LikeShape {
    access: WarpAccess,
    /// The first active lane's address, and the buffer every lane lies in.
    first: u64,
    buffer: usize,
    shape: RecordShape,
}

/// The most shapes `LikeShapes` keeps (each some 700 bytes) before it starts afresh: a kernel
/// whose every access has a layout of its own would otherwise keep one per access.
const LIKE_SHAPES_KEPT: usize = 4096;

impl LikeShapes {
    /// The key of `access` at `site`: its kind, width, alignment and lanes relative to the first
    /// active one, hashed; `None` for an access with no active lane.
    pub(super) fn key(
        site: u32,
        access: &WarpAccess,
        move_bytes: u64,
    ) -> Option<((u32, u64), u64)> {
        let first = *access.lanes.iter().flatten().next()?;
        let mut hasher = IntegerHasher::default();
        hasher.write_u64(access.kind as u64);
        hasher.write_u32(access.width.bytes());
        hasher.write_u64(first % move_bytes);
        for lane in &access.lanes {
            hasher.write_u64(lane.map_or(u64::MAX, |address| address.wrapping_sub(first)));
        }
        Some(((site, hasher.finish()), first))
    }

    /// The shape of an access like `access` (whose first active lane is at `first`), with the
    /// sectors it moves by, if one was measured a whole number of `move_bytes` away within the
    /// buffer `layout[buffer]` that holds every lane of `access`. Everything the key hashes is
    /// checked again, so that two accesses whose keys collide are never taken for each other.
    pub(super) fn find(
        &self,
        key: (u32, u64),
        (access, first): (&WarpAccess, u64),
        move_bytes: u64,
        layout: &[(String, u64, u64)],
    ) -> Option<(&RecordShape, i64)> {
        let like = self.0.get(&key)?;
        let alike = like.access.space == access.space
            && like.access.kind == access.kind
            && like.access.width == access.width
            && like
                .access
                .lanes
                .iter()
                .zip(&access.lanes)
                .all(|pair| match pair {
                    (Some(a), Some(b)) => a.wrapping_sub(like.first) == b.wrapping_sub(first),
                    (None, None) => true,
                    _ => false,
                });
        let (_, base, size) = layout.get(like.buffer)?;
        let width = u64::from(access.width.bytes()).max(1);
        let inside = access.lanes.iter().flatten().all(|&address| {
            address >= *base && address.saturating_add(width) <= base.saturating_add(*size)
        });
        let by = first.wrapping_sub(like.first) as i64;
        let aligned = move_bytes != 0 && by % move_bytes as i64 == 0;
        (alike && inside && aligned).then_some((&like.shape, by / SECTOR_BYTES as i64))
    }

    /// Keeps `shape`, measured of `access`, if every lane lay in one buffer.
    pub(super) fn keep(
        &mut self,
        key: (u32, u64),
        access: &WarpAccess,
        first: u64,
        shape: &RecordShape,
    ) {
        let Some(&(buffer, _, _)) = shape.touched.first() else {
            return;
        };
        if shape.outside_buffers != 0 || shape.touched.iter().any(|t| t.0 != buffer) {
            return;
        }
        if self.0.len() >= LIKE_SHAPES_KEPT {
            self.0.clear();
        }
        // Boxed, so that the table stays small and its growth moves pointers.
        let like = LikeShape {
            access: *access,
            first,
            buffer,
            shape: shape.clone(),
        };
        match self.0.get_mut(&key) {
            Some(kept) => **kept = like,
            None => {
                self.0.insert(key, Box::new(like));
            }
        }
    }
}

/// What of a global load or store holds wherever it lies, as long as it moves by a whole number
/// of `shape_move_bytes` (`BlockProfiler::record_shape`).
#[derive(Clone, Debug, Default)]
pub struct RecordShape {
    pub(super) transactions: u64,
    pub(super) bytes_moved: u64,
    /// Distinct 128-byte lines of its transactions.
    pub(super) lines: u64,
    /// Passes through the L1's data pipe when every line hits.
    pub(super) hit_wavefronts: u64,
    /// Lines of a store that it writes part of a sector of.
    pub(super) partial_store_lines: u64,
    /// Lanes outside every buffer, counted as local memory.
    pub(super) outside_buffers: u64,
    /// The sectors it touches, per buffer, with the bytes touched in each (bit `k` for byte `k`).
    pub(super) touched: Vec<(usize, u64, u32)>,
}

/// What the round trips of a warp see of one of its accesses (`BlockProfiler::place_copy`):
/// its kind, its site, and its place among the warp's loads. A copy of a record shares the first
/// two with it; a record of a skipped loop iteration comes later among the loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issue {
    pub kind: AccessKind,
    /// The line and column of the access in the kernel's source.
    pub site: (u32, u32),
    pub order: LoadOrder,
}

impl Issue {
    pub fn of(record: &MemRecord) -> Issue {
        Issue {
            kind: record.access.kind,
            site: (record.span.line, record.span.col),
            order: record.order,
        }
    }
}

/// What the profile must see of the copies of a record (`BlockProfiler::place_copy`), decided
/// once from the record: nothing of one with no active lane; only that its warp ran for a shared
/// or constant access other than an atomic, since the profile does not look at where it lies;
/// else the copy, placed or made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    Nothing,
    WarpOnly,
    Placed,
}

impl CopyKind {
    pub fn of(record: &MemRecord) -> CopyKind {
        let access = &record.access;
        if access.n_active() == 0 {
            CopyKind::Nothing
        } else if matches!(access.space, Space::Shared | Space::Constant)
            && access.kind != AccessKind::Atomic
        {
            CopyKind::WarpOnly
        } else {
            CopyKind::Placed
        }
    }
}

/// The moves that keep a global access's shape on `device` (`RecordShape`): on the devices of
/// sectors (cc 2.0 on) nothing the shape holds looks past a 128-byte line (its sectors, their
/// bytes, its lines and the passes through the L1 per line, half lines, DRAM atoms of 64 bytes),
/// so a move by whole lines keeps it; cc 1.x needs `SHAPE_MOVE_BYTES`. A loop that moves an
/// access 68 bytes an iteration (a 17-wide tile of floats) so finds its shape again every 32
/// iterations, not every 64.
pub(crate) fn shape_move_bytes(device: &Device) -> i64 {
    match device.global_coalescing {
        GlobalCoalescing::Sectors => LINE_BYTES as i64,
        GlobalCoalescing::SegmentHalfWarp | GlobalCoalescing::StrictHalfWarp => SHAPE_MOVE_BYTES,
    }
}

/// Whether `sectors` touch both halves of a 128-byte line, or the upper half of one line and the
/// lower half of the next: a move by half a line would then merge or split lines. A request's
/// sectors (at most 64) are sorted in place on the stack, as this runs for every global access
/// of a launch whose blocks may be reused; more go to the heap.
pub(super) fn halves_clash(sectors: impl Iterator<Item = u64>) -> bool {
    let per_line = (LINE_BYTES / SECTOR_BYTES).max(2);
    // Each half-line as `2 x line + upper`: the halves that clash are consecutive numbers
    // `2L, 2L + 1` (both halves of L) or `2L + 1, 2L + 2` (the upper half of L, the lower of
    // L + 1), that is, any two consecutive numbers.
    let half = |sector: u64| 2 * (sector / per_line) + u64::from(sector % per_line >= per_line / 2);
    let mut inline = [0u64; 64];
    let mut heap: Vec<u64> = Vec::new();
    let mut n = 0;
    for sector in sectors {
        if n < inline.len() {
            inline[n] = half(sector);
        } else {
            if heap.is_empty() {
                heap.extend_from_slice(&inline);
            }
            heap.push(half(sector));
        }
        n += 1;
    }
    let halves: &mut [u64] = if heap.is_empty() {
        &mut inline[..n]
    } else {
        &mut heap
    };
    halves.sort_unstable();
    halves.windows(2).any(|pair| pair[1] == pair[0] + 1)
}

/// The distinct 128-byte lines of one warp request, kept in place (a request of 16-byte lanes
/// touches at most 64): this runs for every global access.
#[derive(Debug)]
pub(super) struct LineSet {
    lines: [u64; 64],
    len: usize,
}

impl Default for LineSet {
    fn default() -> LineSet {
        LineSet {
            lines: [0; 64],
            len: 0,
        }
    }
}

impl LineSet {
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    /// Adds `line`; false only if it is new and there is no room left for it.
    pub(super) fn insert(&mut self, line: u64) -> bool {
        if self.as_slice().contains(&line) {
            return true;
        }
        if self.len == self.lines.len() {
            return false;
        }
        self.lines[self.len] = line;
        self.len += 1;
        true
    }

    pub(super) fn as_slice(&self) -> &[u64] {
        &self.lines[..self.len]
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }
}

/// The passes a global load request that hits takes through the L1: the larger of its tag
/// stage's, four lines a pass, and its data stage's, where the L1 holds a line across the 32
/// banks of the data array as shared memory holds a row of words, so that words of different
/// lines in one bank take a pass each, as a bank conflict does. Measured on the H100 with Nsight
/// Compute (`l1tex__data_pipe_lsu_wavefronts` and `l1tex__t_output_wavefronts`, loads that hit):
/// 32 one-word lines 4 KB apart (one bank) take 32 passes, 2,080 bytes apart (four banks) 8,
/// 132 bytes apart (32 banks) 8 for the tags and 1 for the data; two lines whose words share a
/// bank take 2 (`mm_naive`'s rows of `a`), two that do not 1. Each pass is a clock.
pub(super) fn load_wavefronts(access: &WarpAccess, lines: &[u64]) -> u64 {
    if lines.len() <= 1 {
        return lines.len() as u64;
    }
    let tag_passes = lines.len().div_ceil(4) as u64;
    // Per line, the banks its words of the request fall in.
    let mut banks = [0u32; 64];
    let width = u64::from(access.width.bytes()).max(1);
    for slot in &access.lanes {
        let Some(address) = *slot else {
            continue;
        };
        let mut index = None;
        for word in (address / 4)..=(address.saturating_add(width - 1) / 4) {
            let line = word * 4 / LINE_BYTES;
            let found = match index {
                Some(i) if lines[i] == line => Some(i),
                _ => lines.iter().position(|&l| l == line),
            };
            if let Some(i) = found {
                banks[i] |= 1 << (word % 32);
                index = Some(i);
            }
        }
    }
    let used = &banks[..lines.len()];
    // The most lines that need one bank (plain loops, as in the lane loop above).
    let mut data_passes = 0;
    for bank in 0..32 {
        let mut lines_on_bank = 0;
        for mask in used {
            lines_on_bank += u64::from(mask >> bank & 1);
        }
        data_passes = data_passes.max(lines_on_bank);
    }
    tag_passes.max(data_passes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::AccessWidth;

    /// The L1 passes of a 4-byte load that hits, lane l reading the byte address `address(l)`.
    fn passes(address: impl Fn(u64) -> u64) -> u64 {
        let width = AccessWidth::new(4).expect("4 bytes is a width");
        let access = WarpAccess::from_fn(Space::Global, AccessKind::Load, width, |lane| {
            Some(address(u64::from(lane)))
        });
        let mut lines: Vec<u64> = access.active_lanes().map(|(_, a)| a / LINE_BYTES).collect();
        lines.sort_unstable();
        lines.dedup();
        load_wavefronts(&access, &lines)
    }

    #[test]
    fn lines_whose_words_share_a_bank_take_a_pass_each_and_the_tags_four_lines_a_pass() {
        // The H100's Nsight Compute counts, all hits (`load_wavefronts`).
        assert_eq!(passes(|lane| 4 * lane), 1, "a coalesced row");
        assert_eq!(passes(|lane| (lane / 16) * 4096), 2, "mm_naive's rows of a");
        assert_eq!(
            passes(|lane| (lane / 16) * 160),
            1,
            "two lines, other banks"
        );
        assert_eq!(passes(|lane| 8 * lane), 2, "a stride of two words");
        assert_eq!(passes(|lane| 4096 * lane), 32, "a column, one bank");
        assert_eq!(passes(|lane| 2080 * lane), 8, "p_lane_rows, four banks");
        assert_eq!(passes(|lane| 132 * lane), 8, "32 banks: the tags' 8 passes");
    }

    #[test]
    fn every_request_shape_measured_on_the_h100_takes_its_passes() {
        // `tests/reference/l1_shapes`: 18 shapes of a load that hits, lane l at
        // (l / lanes_per_line) * line_stride + (l % lanes_per_line) * word_step bytes. The larger
        // of Nsight Compute's data-pipe and tag-stage wavefronts per request, to the nearest
        // whole pass, is what `load_wavefronts` must give; the clocks per request follow it.
        let shapes = include_str!("../../../../tests/reference/l1_shapes/shapes.jsonl");
        let mut checked = 0;
        for line in shapes.lines() {
            let shape: serde_json::Value = serde_json::from_str(line).expect("a shape");
            let number = |key: &str| shape[key].as_f64().expect(key);
            let group = number("lanes_per_line") as u64;
            let line_stride = number("line_stride_bytes") as u64;
            let word_step = number("word_step_bytes") as u64;
            let measured = number("data_pipe_wavefronts_per_request")
                .max(number("tag_output_wavefronts_per_request"))
                .round() as u64;
            let modelled = passes(|lane| (lane / group) * line_stride + (lane % group) * word_step);
            assert_eq!(modelled, measured, "{}", shape["shape"]);
            checked += 1;
        }
        assert_eq!(checked, 18);
    }

    #[test]
    fn half_lines_clash_when_a_move_by_half_a_line_would_merge_or_split_lines() {
        // Sectors 0..3 are line 0 (lower half 0, 1; upper half 2, 3), 4..7 line 1.
        let check = |sectors: &[u64], expected: bool| {
            assert_eq!(
                halves_clash(sectors.iter().copied()),
                expected,
                "{sectors:?}"
            );
        };
        check(&[0, 1], false);
        check(&[2, 3, 6], false);
        check(&[0, 1, 4, 5, 8], false);
        check(&[1, 2], true);
        check(&[3, 4], true);
        check(&[2, 5], true);
        check(&[2, 8], false);
    }
}
