//! Global-memory coalescing: how one warp-level access becomes requests, sectors and transactions.
//!
//! Seed 001 ("Review: Memory Coalescing") states the idea: 32 threads x 4 B = 128 B is one memory
//! request with coalescing and 32 without. How the hardware decides differs per generation, and
//! the preset's `global_coalescing` says which rule applies:
//!
//! - **`Sectors`** (cc >= 2.0; CUDA C++ Best Practices Guide, "Coalesced Access to Global
//!   Memory"; Nsight Compute's `l1tex__t_requests` and `l1tex__t_sectors`): a warp instruction
//!   is one request, and it moves every 32-byte sector that any active lane's bytes
//!   `[address, address + width)` touch. One transaction is listed per sector, in ascending
//!   address order. The H100 counters in `tests/reference/h100.json` agree: contiguous floats
//!   take 4 sectors per request, a one-float offset 5, strides of 2, 4 and 32 floats 8, 16 and 32.
//! - **`SegmentHalfWarp`** (cc 1.2/1.3, GT200; CUDA C Programming Guide 3.2, G.3.2.2): each
//!   half-warp with an active lane is a request of its own. Until all its active lanes are served:
//!   find the segment holding the address of the lowest-numbered remaining lane (32 bytes for
//!   1-byte words, 64 for 2-byte words, 128 for 4-, 8- and 16-byte words), take every remaining
//!   lane whose address lies in it, shrink a 128-byte transaction to 64 bytes if only its lower or
//!   upper half is used, and a 64-byte one to 32 bytes likewise, then issue it.
//! - **`StrictHalfWarp`** (cc 1.0/1.1, G80; Programming Guide 3.2, G.3.2.1): a half-warp is
//!   coalesced only if its words are 4, 8 or 16 bytes wide and every active lane k (counted within
//!   the half-warp; inactive lanes are allowed) reads `base + k * width`, with `base` aligned to
//!   16 words. Then it is one 64-byte transaction (4-byte words), one 128-byte transaction (8-byte
//!   words) or two 128-byte transactions (16-byte words). Otherwise every active lane gets a
//!   32-byte transaction of its own, the smallest the memory moves; 1- and 2-byte words never
//!   coalesce on these devices, since the guide lists only 4-, 8- and 16-byte words. A lane's
//!   16-byte word fits in its 32-byte transaction because CUDA aligns every access to its size.
//!   One departure from the guide's words: lanes that read the very word an earlier lane of the
//!   half-warp reads share that lane's transaction. The guide says "a separate transaction for
//!   each thread", but seed 003 measured the naive matmul on G80 at about 15 GFLOPS, three times
//!   what 16 transactions for its common `Md[Row*Width+k]` would allow on an 86.4 GB/s bus (4.8
//!   GFLOPS). Distinct words in one segment still take a transaction each, as the guide says:
//!   a one-float offset costs G80 eight times the bytes.
//!
//! On cc 1.x, sectors are counted as the moved bytes over 32, so they compare with the sector
//! counts of newer devices. Lines are the distinct 128-byte lines the transactions lie in.
//! Addresses are assumed naturally aligned, as CUDA requires; should a lane's bytes still cross a
//! segment, it counts in the segment of its first byte.

use crate::access::{WarpAccess, WARP_LANES};
use crate::device::{Device, GlobalCoalescing};
use serde::Serialize;

/// Bytes in a sector, the unit the memory moves on cc >= 2.0 and the smallest cc 1.x transaction.
pub const SECTOR_BYTES: u64 = 32;

/// Bytes in a cache line (and the largest cc 1.x transaction).
pub const LINE_BYTES: u64 = 128;

/// The moves that keep a global access's shape on every device: whole multiples of the widest
/// alignment any coalescing rule looks at (cc 1.0 wants a half-warp of 16-byte words at a multiple
/// of 256 bytes; lines, halves of lines, sectors and cc 1.x segments are all smaller).
pub const SHAPE_MOVE_BYTES: i64 = 256;

/// One memory transaction: an aligned segment of 32, 64 or 128 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Transaction {
    pub address: u64,
    pub bytes: u32,
}

/// The result of analysing one warp-level global access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoalescingReport {
    /// Requests the load/store unit issues (Nsight Compute's `l1tex__t_requests`).
    pub requests: u32,
    /// Distinct 32-byte sectors touched (Nsight Compute's `l1tex__t_sectors`).
    pub sectors: u32,
    /// Distinct 128-byte lines touched.
    pub lines: u32,
    /// The memory transactions, in the order the hardware issues them.
    pub transactions: Vec<Transaction>,
    /// Bytes the active lanes asked for.
    pub bytes_requested: u64,
    /// Bytes the transactions move.
    pub bytes_moved: u64,
}

impl CoalescingReport {
    /// Useful bytes over moved bytes, 0..=1 (1 when nothing moves). Lanes that read the same
    /// bytes each count in `bytes_requested`, so the ratio is capped at 1.
    pub fn efficiency(&self) -> f64 {
        if self.bytes_moved == 0 {
            1.0
        } else {
            (self.bytes_requested as f64 / self.bytes_moved as f64).min(1.0)
        }
    }
}

/// Turns one warp-level global access on `device` into requests and transactions.
///
/// Inactive lanes are ignored; an access with no active lane makes no request.
pub fn analyze(access: &WarpAccess, device: &Device) -> CoalescingReport {
    let mut transactions = Vec::new();
    let n_active = access.n_active();
    let requests = for_each_transaction(access, device, n_active, |t| transactions.push(t));
    let bytes_moved: u64 = transactions.iter().map(|t| u64::from(t.bytes)).sum();
    let mut lines: Vec<u64> = transactions
        .iter()
        .flat_map(|t| {
            let last = t.address.saturating_add(u64::from(t.bytes).max(1) - 1);
            (t.address / LINE_BYTES)..=(last / LINE_BYTES)
        })
        .collect();
    lines.sort_unstable();
    lines.dedup();
    CoalescingReport {
        requests,
        sectors: sectors(device, transactions.len() as u32, bytes_moved),
        lines: lines.len() as u32,
        transactions,
        bytes_requested: bytes_requested(access, n_active),
        bytes_moved,
    }
}

/// The totals of one warp-level global access: what `analyze` reports in `requests`, `sectors`,
/// `bytes_requested` and `bytes_moved`, without the transaction list and the lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CoalescingCount {
    pub requests: u32,
    pub sectors: u32,
    pub bytes_requested: u64,
    pub bytes_moved: u64,
}

/// Counts the requests, sectors and bytes of one warp-level global access on `device`, exactly as
/// `analyze` does, without allocating. `Counters::record` calls this for every global and local
/// access of a simulation; the transaction list of `analyze` is for the page.
pub fn count(access: &WarpAccess, device: &Device) -> CoalescingCount {
    let (mut n_transactions, mut bytes_moved) = (0u32, 0u64);
    let n_active = access.n_active();
    let requests = for_each_transaction(access, device, n_active, |t| {
        n_transactions += 1;
        bytes_moved += u64::from(t.bytes);
    });
    CoalescingCount {
        requests,
        sectors: sectors(device, n_transactions, bytes_moved),
        bytes_requested: bytes_requested(access, n_active),
        bytes_moved,
    }
}

/// Hands each transaction of one warp-level global access on `device` to `emit`, in issue order,
/// and returns the requests: the transactions `analyze` lists, without allocating. For callers
/// that need the transactions themselves at every access of a simulation.
pub fn each_transaction(
    access: &WarpAccess,
    device: &Device,
    emit: impl FnMut(Transaction),
) -> u32 {
    for_each_transaction(access, device, access.n_active(), emit)
}

fn bytes_requested(access: &WarpAccess, n_active: u32) -> u64 {
    u64::from(n_active) * u64::from(access.width.bytes())
}

/// Sectors of an access with `n_transactions` transactions moving `bytes_moved` bytes, as
/// `analyze` counts them: for callers that walk `each_transaction` themselves.
pub fn sectors_of(device: &Device, n_transactions: u64, bytes_moved: u64) -> u32 {
    sectors(
        device,
        u32::try_from(n_transactions).unwrap_or(u32::MAX),
        bytes_moved,
    )
}

/// Sectors of an access from its transactions: on cc >= 2.0 every transaction is one distinct
/// sector; on cc 1.x they are the moved bytes over 32.
fn sectors(device: &Device, n_transactions: u32, bytes_moved: u64) -> u32 {
    match device.global_coalescing {
        GlobalCoalescing::Sectors => n_transactions,
        GlobalCoalescing::SegmentHalfWarp | GlobalCoalescing::StrictHalfWarp => {
            (bytes_moved / SECTOR_BYTES) as u32
        }
    }
}

/// Hands each transaction of `access` (which has `n_active` active lanes) to `emit`, in issue
/// order, and returns the requests. Both `analyze` and `count` are built on it, so they cannot
/// disagree; it allocates nothing.
fn for_each_transaction(
    access: &WarpAccess,
    device: &Device,
    n_active: u32,
    mut emit: impl FnMut(Transaction),
) -> u32 {
    match device.global_coalescing {
        GlobalCoalescing::Sectors => {
            sector_transactions(access, &mut emit);
            u32::from(n_active > 0)
        }
        GlobalCoalescing::SegmentHalfWarp => {
            per_half_warp(access, device, &mut emit, segment_transactions)
        }
        GlobalCoalescing::StrictHalfWarp => {
            per_half_warp(access, device, &mut emit, strict_transactions)
        }
    }
}

/// The first and last byte an access of `width` bytes at `address` touches.
fn byte_range(address: u64, width: u64) -> (u64, u64) {
    (address, address.saturating_add(width.max(1) - 1))
}

/// Most sectors one warp-level access can touch: a lane's bytes (at most 16) lie in at most two.
const MAX_LANE_SECTORS: usize = 2 * WARP_LANES;

/// cc >= 2.0: one 32-byte transaction per distinct sector, ascending.
fn sector_transactions(access: &WarpAccess, emit: &mut impl FnMut(Transaction)) {
    let width = u64::from(access.width.bytes());
    // The distinct sectors of the active lanes, kept sorted by insertion. Lanes mostly come in
    // ascending address order, or share sectors with the lane before, so most sectors are found
    // at or appended after the end: linear in the lanes.
    let mut sectors = [0u64; MAX_LANE_SECTORS];
    let mut n = 0;
    // Plain loops: this runs for every global access of a simulation, and the page's
    // size-optimised build leaves iterator adapters and closures as calls.
    for slot in &access.lanes {
        let Some(address) = *slot else {
            continue;
        };
        let (first, last) = byte_range(address, width);
        // At most 16 bytes: the first sector and perhaps the next.
        let (first, last) = (first / SECTOR_BYTES, last / SECTOR_BYTES);
        for sector in first..=last {
            if n > 0 && sectors[n - 1] == sector {
                continue;
            }
            let mut at = n;
            while at > 0 && sectors[at - 1] > sector {
                at -= 1;
            }
            if (at > 0 && sectors[at - 1] == sector) || n == MAX_LANE_SECTORS {
                continue;
            }
            sectors.copy_within(at..n, at + 1);
            sectors[at] = sector;
            n += 1;
        }
    }
    for &sector in &sectors[..n] {
        emit(Transaction {
            address: sector * SECTOR_BYTES,
            bytes: SECTOR_BYTES as u32,
        });
    }
}

/// A cc 1.x coalescing rule: emits the transactions of one half-warp, given its active lanes as
/// (lane index within the half-warp, address) and the access width in bytes.
type HalfWarpRule<E> = fn(&[(u64, u64)], u64, &mut E);

/// Runs `rule` on each half-warp that has an active lane, in order: cc 1.x issues one request per
/// such half-warp. `rule` gets the active lanes as (lane index within the half-warp, address).
fn per_half_warp<E: FnMut(Transaction)>(
    access: &WarpAccess,
    device: &Device,
    emit: &mut E,
    rule: HalfWarpRule<E>,
) -> u32 {
    let half_warp = ((device.warp_size / 2).max(1) as usize).min(access.lanes.len());
    let width = u64::from(access.width.bytes());
    let mut requests = 0;
    for half in access.lanes.chunks(half_warp) {
        let mut active = [(0u64, 0u64); WARP_LANES];
        let mut n = 0;
        for (k, slot) in half.iter().enumerate() {
            if let Some(address) = slot {
                active[n] = (k as u64, *address);
                n += 1;
            }
        }
        if n == 0 {
            continue;
        }
        requests += 1;
        rule(&active[..n], width, emit);
    }
    requests
}

/// cc 1.2/1.3, Programming Guide G.3.2.2, for one half-warp.
fn segment_transactions<E: FnMut(Transaction)>(active: &[(u64, u64)], width: u64, emit: &mut E) {
    let segment = match width {
        1 => 32,
        2 => 64,
        _ => 128,
    };
    // The lanes not yet served, as bits of `active` (a half-warp has at most 32 lanes).
    let mut remaining = u64::MAX.checked_shr(64 - active.len() as u32).unwrap_or(0);
    while remaining != 0 {
        let lowest_lane_address = active[remaining.trailing_zeros() as usize].1;
        let base = lowest_lane_address / segment * segment;
        let segment_last = base.saturating_add(segment - 1);
        // The bytes used within the segment, by the remaining lanes whose address lies in it.
        let (mut used_first, mut used_last) = (u64::MAX, 0);
        let mut lanes = remaining;
        while lanes != 0 {
            let index = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let address = active[index].1;
            if address / segment == base / segment {
                remaining &= !(1 << index);
                used_first = used_first.min(address);
                used_last = used_last.max(byte_range(address, width).1.min(segment_last));
            }
        }
        let (mut address, mut bytes) = (base, segment);
        while bytes > SECTOR_BYTES {
            let half = bytes / 2;
            if used_last < address + half {
                bytes = half;
            } else if used_first >= address + half {
                address += half;
                bytes = half;
            } else {
                break;
            }
        }
        emit(Transaction {
            address,
            bytes: bytes as u32,
        });
    }
}

/// cc 1.0/1.1, Programming Guide G.3.2.1, for one half-warp.
fn strict_transactions<E: FnMut(Transaction)>(active: &[(u64, u64)], width: u64, emit: &mut E) {
    let whole: &[u32] = match width {
        4 => &[64],
        8 => &[128],
        16 => &[128, 128],
        _ => &[],
    };
    let aligned_to = 16 * width;
    let base = active
        .first()
        .and_then(|&(k, address)| address.checked_sub(k * width));
    let coalesced = !whole.is_empty()
        && base.is_some_and(|base| {
            base % aligned_to == 0
                && active
                    .iter()
                    .all(|&(k, address)| Some(address) == base.checked_add(k * width))
        });
    match base {
        Some(base) if coalesced => {
            let mut address = base;
            for &bytes in whole {
                emit(Transaction { address, bytes });
                address = address.saturating_add(u64::from(bytes));
            }
        }
        _ => {
            for (i, &(_, address)) in active.iter().enumerate() {
                // Lanes that read the word an earlier lane reads share its transaction.
                if active[..i].iter().any(|&(_, earlier)| earlier == address) {
                    continue;
                }
                emit(Transaction {
                    address: address / SECTOR_BYTES * SECTOR_BYTES,
                    bytes: SECTOR_BYTES as u32,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{AccessKind, AccessWidth, Space};
    use crate::device::{g80, gt200, h100};

    /// The numbers a test expects of a report.
    #[derive(Debug, PartialEq, Eq)]
    struct Expected {
        requests: u32,
        sectors: u32,
        lines: u32,
        bytes_moved: u64,
    }

    fn expect(requests: u32, sectors: u32, lines: u32, bytes_moved: u64) -> Expected {
        Expected {
            requests,
            sectors,
            lines,
            bytes_moved,
        }
    }

    /// Analyses `access` on `device`, compares it with `expected`, checks the report's own
    /// invariants, and returns the report for tests that look at the transactions.
    fn check(access: &WarpAccess, device: &Device, expected: Expected) -> CoalescingReport {
        let report = analyze(access, device);
        let got = expect(
            report.requests,
            report.sectors,
            report.lines,
            report.bytes_moved,
        );
        assert_eq!(got, expected, "on {}", device.name);
        assert_eq!(
            report.bytes_moved,
            report
                .transactions
                .iter()
                .map(|t| u64::from(t.bytes))
                .sum::<u64>()
        );
        assert_eq!(
            report.bytes_requested,
            u64::from(access.n_active()) * u64::from(access.width.bytes())
        );
        for t in &report.transactions {
            assert!([32, 64, 128].contains(&t.bytes), "{t:?}");
            assert_eq!(t.address % u64::from(t.bytes), 0, "{t:?} is aligned");
        }
        report
    }

    /// A load of `width` bytes where lane l reads byte `address(l)`.
    fn load(width: AccessWidth, address: impl Fn(u64) -> u64) -> WarpAccess {
        WarpAccess::from_fn(Space::Global, AccessKind::Load, width, |lane| {
            Some(address(u64::from(lane)))
        })
    }

    /// A float load where lane l reads float `index(l)` of a 256-byte aligned buffer at `base`.
    fn floats(base: u64, index: impl Fn(u64) -> u64) -> WarpAccess {
        load(AccessWidth::FOUR, |lane| base + 4 * index(lane))
    }

    fn sizes(report: &CoalescingReport) -> Vec<(u64, u32)> {
        report
            .transactions
            .iter()
            .map(|t| (t.address, t.bytes))
            .collect()
    }

    // Seed 001: "32 threads x 4B = 128B, with coalescing: 1 memory request". On H100 the request
    // moves the 4 sectors of one line.
    #[test]
    fn thirty_two_contiguous_floats_are_one_request_of_four_sectors_on_h100() {
        let report = check(&floats(0, |l| l), &h100(), expect(1, 4, 1, 128));
        assert_eq!(sizes(&report), vec![(0, 32), (32, 32), (64, 32), (96, 32)]);
        assert_eq!(report.efficiency(), 1.0);
    }

    // Seed 002's adjacent difference reads input[i-1]: the warp's 128 bytes start one float
    // before a sector, so they touch 5 sectors in 2 lines.
    #[test]
    fn floats_misaligned_by_one_touch_five_sectors_on_h100() {
        // The buffer starts at byte 256, so input[i - 1] for i = lane starts at byte 252.
        let report = check(&floats(252, |l| l), &h100(), expect(1, 5, 2, 160));
        assert_eq!(report.transactions[0].address, 224);
        assert_eq!(report.efficiency(), 128.0 / 160.0);
    }

    #[test]
    fn strided_floats_touch_one_sector_per_stride_step_on_h100() {
        check(&floats(0, |l| 2 * l), &h100(), expect(1, 8, 2, 256));
        check(&floats(0, |l| 4 * l), &h100(), expect(1, 16, 4, 512));
        // Seed 001's "without coalescing: 32 memory requests": every lane in its own sector.
        let report = check(&floats(0, |l| 32 * l), &h100(), expect(1, 32, 32, 1024));
        assert_eq!(report.efficiency(), 128.0 / 1024.0);
    }

    #[test]
    fn contiguous_eight_byte_loads_touch_eight_sectors_on_h100() {
        check(
            &load(AccessWidth::EIGHT, |l| 8 * l),
            &h100(),
            expect(1, 8, 2, 256),
        );
    }

    #[test]
    fn lanes_reading_one_address_count_each_requested_byte() {
        let report = check(&floats(0, |_| 5), &h100(), expect(1, 1, 1, 32));
        assert_eq!(report.bytes_requested, 128);
        assert_eq!(report.efficiency(), 1.0);
    }

    // G80, G.3.2.1: lane k reads word k of a 64-byte segment: one 64-byte transaction per
    // half-warp, and each half-warp is a request.
    #[test]
    fn contiguous_floats_are_one_transaction_per_half_warp_on_g80() {
        let report = check(&floats(0, |l| l), &g80(), expect(2, 4, 1, 128));
        assert_eq!(sizes(&report), vec![(0, 64), (64, 64)]);
    }

    // Seed 001's "without coalescing: 32 memory requests" shape on G80: stride 32 floats breaks
    // the k-th lane, k-th word rule, so every lane is a 32-byte transaction.
    #[test]
    fn stride_thirty_two_floats_are_thirty_two_transactions_on_g80() {
        let report = check(&floats(0, |l| 32 * l), &g80(), expect(2, 32, 32, 1024));
        assert_eq!(report.transactions.len(), 32);
    }

    // G80, offset by one float (offset_copy with offset 1 reads in[i + 1]): the half-warp's
    // words start 4 bytes into a segment, so each half-warp is 16 separate transactions.
    #[test]
    fn floats_offset_by_one_are_sixteen_transactions_per_half_warp_on_g80() {
        let report = check(&floats(0, |l| l + 1), &g80(), expect(2, 32, 2, 1024));
        assert_eq!(report.transactions.len(), 32);
    }

    // Seed 003's naive matmul on G80: the half-warp's lanes all read Md[Row*Width+k], one word.
    // It breaks the k-th lane, k-th word rule, yet the lanes share one 32-byte transaction (see
    // the module doc); lanes reading two words get two.
    #[test]
    fn a_half_warp_reading_one_word_is_one_transaction_on_g80() {
        let report = check(&floats(0, |_| 5), &g80(), expect(2, 2, 1, 64));
        assert_eq!(sizes(&report), vec![(0, 32), (0, 32)]);
        let pairs = check(&floats(0, |l| l / 8), &g80(), expect(2, 4, 1, 128));
        assert_eq!(sizes(&pairs), vec![(0, 32), (0, 32), (0, 32), (0, 32)]);
    }

    #[test]
    fn inactive_lanes_do_not_break_coalescing_on_g80() {
        let mut access = floats(0, |l| l);
        access.lanes[3] = None;
        access.lanes[16] = None;
        let report = check(&access, &g80(), expect(2, 4, 1, 128));
        assert_eq!(sizes(&report), vec![(0, 64), (64, 64)]);
    }

    // A permutation within the segment is coalesced on GT200 (G.3.2.2) but not on G80.
    #[test]
    fn swapped_lanes_are_coalesced_on_gt200_but_not_on_g80() {
        let swapped = floats(0, |l| l ^ 1);
        check(&swapped, &g80(), expect(2, 32, 1, 1024));
        let report = check(&swapped, &gt200(), expect(2, 4, 1, 128));
        assert_eq!(sizes(&report), vec![(0, 64), (64, 64)]);
    }

    // G80, G.3.2.1: 16-byte words give two 128-byte transactions per half-warp.
    #[test]
    fn contiguous_float4_loads_are_two_transactions_per_half_warp_on_g80() {
        let report = check(
            &load(AccessWidth::SIXTEEN, |l| 16 * l),
            &g80(),
            expect(2, 16, 4, 512),
        );
        assert_eq!(
            sizes(&report),
            vec![(0, 128), (128, 128), (256, 128), (384, 128)]
        );
    }

    #[test]
    fn byte_loads_never_coalesce_on_g80() {
        let bytes = load(AccessWidth::new(1).unwrap(), |l| l);
        let report = check(&bytes, &g80(), expect(2, 32, 1, 1024));
        assert!(report.transactions.iter().all(|t| t.address == 0));
        // GT200 uses 32-byte segments for bytes: one per half-warp.
        check(&bytes, &gt200(), expect(2, 2, 1, 64));
    }

    // GT200, G.3.2.2: stride 2 floats spreads a half-warp over 128 bytes: one 128-byte
    // transaction per half-warp, half of it wasted.
    #[test]
    fn stride_two_floats_are_one_128_byte_transaction_per_half_warp_on_gt200() {
        let report = check(&floats(0, |l| 2 * l), &gt200(), expect(2, 8, 2, 256));
        assert_eq!(sizes(&report), vec![(0, 128), (128, 128)]);
        assert_eq!(report.efficiency(), 0.5);
    }

    // GT200, G.3.2.2: contiguous floats use the lower and upper halves of a 128-byte segment, so
    // each half-warp's transaction shrinks to 64 bytes.
    #[test]
    fn contiguous_floats_are_one_64_byte_transaction_per_half_warp_on_gt200() {
        let report = check(&floats(0, |l| l), &gt200(), expect(2, 4, 1, 128));
        assert_eq!(sizes(&report), vec![(0, 64), (64, 64)]);
    }

    // GT200, in[i + 1] from an aligned buffer. Half-warp 0 (lanes 0..15) reads bytes 4..67 of the
    // segment 0..127: both halves are used, so one 128-byte transaction. Half-warp 1 (lanes
    // 16..31) reads bytes 68..131: lane 16's segment 0..127 holds lanes 16..30 (bytes 68..127),
    // only its upper half is used, so 64 bytes at 64 (bytes 68..95 and 96..127 keep both of its
    // 32-byte halves). Lane 31 (bytes 128..131) is left: segment 128..255, lower half, then lower
    // quarter: 32 bytes at 128. In all 128 + 64 + 32 = 224 bytes for 128 requested.
    #[test]
    fn floats_offset_by_one_on_gt200_are_128_then_64_plus_32_bytes() {
        let report = check(&floats(0, |l| l + 1), &gt200(), expect(2, 7, 2, 224));
        assert_eq!(sizes(&report), vec![(0, 128), (64, 64), (128, 32)]);
    }

    #[test]
    fn stride_thirty_two_floats_shrink_to_32_byte_transactions_on_gt200() {
        let report = check(&floats(0, |l| 32 * l), &gt200(), expect(2, 32, 32, 1024));
        assert!(report.transactions.iter().all(|t| t.bytes == 32));
    }

    #[test]
    fn all_inactive_access_makes_no_request() {
        let idle =
            WarpAccess::from_fn(Space::Global, AccessKind::Load, AccessWidth::FOUR, |_| None);
        for device in [h100(), gt200(), g80()] {
            let report = check(&idle, &device, expect(0, 0, 0, 0));
            assert!(report.transactions.is_empty());
            assert_eq!(report.efficiency(), 1.0);
        }
    }

    #[test]
    fn addresses_at_the_top_of_memory_do_not_overflow() {
        let top = load(AccessWidth::SIXTEEN, |_| u64::MAX - 3);
        for device in [h100(), gt200(), g80()] {
            let report = analyze(&top, &device);
            assert!(report.requests >= 1, "on {}", device.name);
            assert!(!report.transactions.is_empty());
        }
    }

    // ---- The allocation-free rules against the allocating originals. ------------------------

    /// The transaction rules as they were first written, with sets and vectors: the oracle for
    /// the allocation-free rules that `analyze` and `count` now share.
    mod original {
        use super::super::{byte_range, SECTOR_BYTES};
        use crate::access::WarpAccess;
        use crate::coalescing::Transaction;
        use crate::device::{Device, GlobalCoalescing};
        use std::collections::BTreeSet;

        /// (requests, transactions) of one access, by the original rules.
        pub(super) fn transactions(
            access: &WarpAccess,
            device: &Device,
        ) -> (u32, Vec<Transaction>) {
            match device.global_coalescing {
                GlobalCoalescing::Sectors => (
                    u32::from(access.n_active() > 0),
                    sector_transactions(access),
                ),
                GlobalCoalescing::SegmentHalfWarp => {
                    per_half_warp(access, device, segment_transactions)
                }
                GlobalCoalescing::StrictHalfWarp => {
                    per_half_warp(access, device, strict_transactions)
                }
            }
        }

        /// cc >= 2.0: one 32-byte transaction per distinct sector, ascending.
        fn sector_transactions(access: &WarpAccess) -> Vec<Transaction> {
            let width = u64::from(access.width.bytes());
            let sectors: BTreeSet<u64> = access
                .active_lanes()
                .flat_map(|(_, address)| {
                    let (first, last) = byte_range(address, width);
                    (first / SECTOR_BYTES)..=(last / SECTOR_BYTES)
                })
                .collect();
            sectors
                .into_iter()
                .map(|sector| Transaction {
                    address: sector * SECTOR_BYTES,
                    bytes: SECTOR_BYTES as u32,
                })
                .collect()
        }

        /// A cc 1.x coalescing rule: the transactions of one half-warp, given its active lanes as (lane
        /// index within the half-warp, address) and the access width in bytes.
        type HalfWarpRule = fn(&[(u64, u64)], u64) -> Vec<Transaction>;

        /// Runs `rule` on each half-warp that has an active lane, in order: cc 1.x issues one request per
        /// such half-warp. `rule` gets the active lanes as (lane index within the half-warp, address).
        fn per_half_warp(
            access: &WarpAccess,
            device: &Device,
            rule: HalfWarpRule,
        ) -> (u32, Vec<Transaction>) {
            let half_warp = ((device.warp_size / 2).max(1) as usize).min(access.lanes.len());
            let width = u64::from(access.width.bytes());
            let mut requests = 0;
            let mut transactions = Vec::new();
            for half in access.lanes.chunks(half_warp) {
                let active: Vec<(u64, u64)> = half
                    .iter()
                    .enumerate()
                    .filter_map(|(k, slot)| slot.map(|address| (k as u64, address)))
                    .collect();
                if active.is_empty() {
                    continue;
                }
                requests += 1;
                transactions.extend(rule(&active, width));
            }
            (requests, transactions)
        }

        /// cc 1.2/1.3, Programming Guide G.3.2.2, for one half-warp.
        fn segment_transactions(active: &[(u64, u64)], width: u64) -> Vec<Transaction> {
            let segment = match width {
                1 => 32,
                2 => 64,
                _ => 128,
            };
            let mut remaining: Vec<u64> = active.iter().map(|&(_, address)| address).collect();
            let mut transactions = Vec::new();
            while let Some(&lowest_lane_address) = remaining.first() {
                let base = lowest_lane_address / segment * segment;
                let segment_last = base.saturating_add(segment - 1);
                let (inside, outside): (Vec<u64>, Vec<u64>) = remaining
                    .iter()
                    .partition(|&&address| address / segment == base / segment);
                remaining = outside;
                // The bytes used within the segment.
                let used_first = inside.iter().copied().min().unwrap_or(base);
                let used_last = inside
                    .iter()
                    .map(|&address| byte_range(address, width).1.min(segment_last))
                    .max()
                    .unwrap_or(base);
                let (mut address, mut bytes) = (base, segment);
                while bytes > SECTOR_BYTES {
                    let half = bytes / 2;
                    if used_last < address + half {
                        bytes = half;
                    } else if used_first >= address + half {
                        address += half;
                        bytes = half;
                    } else {
                        break;
                    }
                }
                transactions.push(Transaction {
                    address,
                    bytes: bytes as u32,
                });
            }
            transactions
        }

        /// cc 1.0/1.1, Programming Guide G.3.2.1, for one half-warp.
        fn strict_transactions(active: &[(u64, u64)], width: u64) -> Vec<Transaction> {
            let whole: &[u32] = match width {
                4 => &[64],
                8 => &[128],
                16 => &[128, 128],
                _ => &[],
            };
            let aligned_to = 16 * width;
            let base = active
                .first()
                .and_then(|&(k, address)| address.checked_sub(k * width));
            let coalesced = !whole.is_empty()
                && base.is_some_and(|base| {
                    base % aligned_to == 0
                        && active
                            .iter()
                            .all(|&(k, address)| Some(address) == base.checked_add(k * width))
                });
            match base {
                Some(base) if coalesced => {
                    let mut address = base;
                    whole
                        .iter()
                        .map(|&bytes| {
                            let transaction = Transaction { address, bytes };
                            address = address.saturating_add(u64::from(bytes));
                            transaction
                        })
                        .collect()
                }
                _ => {
                    // One transaction per distinct word, in the order of the lanes.
                    let mut words: Vec<u64> = Vec::new();
                    for &(_, address) in active {
                        if !words.contains(&address) {
                            words.push(address);
                        }
                    }
                    words
                        .into_iter()
                        .map(|address| Transaction {
                            address: address / SECTOR_BYTES * SECTOR_BYTES,
                            bytes: SECTOR_BYTES as u32,
                        })
                        .collect()
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        #[test]
        fn allocation_free_rules_list_the_original_transactions(
            access in crate::access::strategies::warp_access(Space::Global),
            device in crate::access::strategies::device(),
        ) {
            let mut listed = Vec::new();
            let requests = each_transaction(&access, &device, |t| listed.push(t));
            proptest::prop_assert_eq!((requests, listed), original::transactions(&access, &device));
        }
    }

    // ---- The fast count against the full analysis. ------------------------------------------

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        #[test]
        fn fast_coalescing_count_equals_the_full_analysis(
            access in crate::access::strategies::warp_access(Space::Global),
            device in crate::access::strategies::device(),
        ) {
            let report = analyze(&access, &device);
            let expected = CoalescingCount {
                requests: report.requests,
                sectors: report.sectors,
                bytes_requested: report.bytes_requested,
                bytes_moved: report.bytes_moved,
            };
            proptest::prop_assert_eq!(count(&access, &device), expected);
        }
    }

    // ---- Comparison with the H100 measurements (h100.json, `ncu` records). ---------------------

    fn measured_sectors_per_request(launch: &str) -> f64 {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/reference/h100.json"
        ))
        .expect("the H100 reference measurements are readable");
        let json: serde_json::Value = serde_json::from_str(&text).expect("h100.json is JSON");
        let record = json["ncu"]
            .as_array()
            .and_then(|records| records.iter().find(|r| r["launch"] == launch))
            .unwrap_or_else(|| panic!("h100.json has no ncu record {launch}"));
        let counter = |name: &str| {
            record[name]
                .as_f64()
                .unwrap_or_else(|| panic!("{launch} has no counter {name}"))
        };
        counter("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
            / counter("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    }

    /// Sector counts are exact in Nsight Compute; 1 % leaves room for a partial last warp.
    fn assert_matches_measurement(access: &WarpAccess, launch: &str) {
        let model = f64::from(analyze(access, &h100()).sectors);
        let measured = measured_sectors_per_request(launch);
        assert!(
            (model - measured).abs() <= 0.01 * measured,
            "{launch}: model {model} sectors per request, measured {measured}"
        );
    }

    // kernels/coalescing.cu: strided_copy reads in[i * stride], offset_copy reads in[i + offset];
    // every buffer starts 256-byte aligned.
    #[test]
    fn sectors_per_request_match_h100_measurements() {
        for stride in [1, 2, 4, 32] {
            assert_matches_measurement(
                &floats(0, |i| i * stride),
                &format!("strided_copy stride={stride} n_out=1048576 block=256"),
            );
        }
        for offset in [0, 1, 16] {
            assert_matches_measurement(
                &floats(0, |i| i + offset),
                &format!("offset_copy offset={offset} n=1048576 block=256"),
            );
        }
    }
}
