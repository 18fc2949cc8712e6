//! DRAM row activations on devices without an L2 (cc 1.x, whose presets carry `DramRows`): each
//! half-warp's transactions at an instruction continue that half-warp's stream there, and a
//! transaction to a row its stream does not hold open activates one. The blocks of a sweep share
//! the rows they pass. The model and its source are in the profile's module documentation,
//! "DRAM rows".

use crate::coalescing;
use crate::device::{Device, DramRows};
use crate::hashing::IntegerHashMap;
use crate::kernel::MemRecord;

/// No row is open in a partition.
const NO_ROW: u64 = u64::MAX;

/// What the streams of a block do at one source location.
#[derive(Clone, Debug, Default)]
struct SiteRows {
    /// The row each partition has open for the block's accesses here.
    open: Vec<u64>,
    /// Rows that half-warps' first executions here opened...
    first_opened: u64,
    /// ... and the address ranges of their transactions.
    first_spans: Vec<(u64, u64)>,
}

impl SiteRows {
    /// The activations of the first executions. If they cover one range of addresses, the block
    /// is a piece of a sweep that its neighbours in the grid continue (adjacent difference's 1 KB
    /// of a 64 MB stream), and blocks running at the same time share the rows the sweep passes:
    /// it opens one row per `row_bytes` of addresses. Otherwise each row it opened counts.
    fn first_activations(&self, row_bytes: u64) -> f64 {
        let mut spans = self.first_spans.clone();
        crate::sorting::sort_by(&mut spans, Ord::cmp);
        let mut covered = 0u64;
        let mut end: Option<u64> = None;
        for (start, stop) in spans {
            match end {
                Some(e) if start > e => return self.first_opened as f64,
                Some(e) => {
                    covered += stop.saturating_sub(e.max(start));
                    end = Some(e.max(stop));
                }
                None => {
                    covered = stop - start;
                    end = Some(stop);
                }
            }
        }
        (covered as f64 / row_bytes.max(1) as f64).min(self.first_opened as f64)
    }
}

/// The DRAM rows one block's access streams hold open, and the rows they activate.
#[derive(Clone, Debug, Default)]
pub(super) struct RowStreams {
    /// The open DRAM row of each partition, per access stream (warp, half-warp, source line and
    /// column).
    stream_rows: IntegerHashMap<(u32, u32, u32, u32), Vec<u64>>,
    /// The rows the block's streams opened, per source location.
    site_rows: IntegerHashMap<(u32, u32), SiteRows>,
    /// Row activations of later executions of an instruction by a half-warp.
    activations: u64,
}

impl RowStreams {
    /// Counts the transactions of `record` that open a DRAM row: each half-warp's transactions
    /// continue that half-warp's stream at this instruction (see the module documentation).
    pub(super) fn record(&mut self, record: &MemRecord, rows: DramRows, device: &Device) {
        let access = &record.access;
        let half = ((device.warp_size / 2).max(1) as usize).min(access.lanes.len());
        let partitions = u64::from(rows.partitions.max(1));
        let interleave = u64::from(rows.interleave_bytes.max(1));
        let chunks_per_row = (u64::from(rows.row_bytes) / interleave).max(1);
        let site = (record.span.line, record.span.col);
        for index in 0..access.lanes.len().div_ceil(half) {
            let range = index * half..((index + 1) * half).min(access.lanes.len());
            if access.lanes[range.clone()].iter().all(Option::is_none) {
                continue;
            }
            // The half-warp on its own: the cc 1.x rules coalesce each half-warp separately, so
            // its transactions are those the whole access makes for it.
            let mut alone = *access;
            for (lane, slot) in alone.lanes.iter_mut().enumerate() {
                if !range.contains(&lane) {
                    *slot = None;
                }
            }
            let site_rows = self.site_rows.entry(site).or_insert_with(|| SiteRows {
                open: vec![NO_ROW; partitions as usize],
                ..SiteRows::default()
            });
            let key = (record.warp, index as u32, site.0, site.1);
            let first = !self.stream_rows.contains_key(&key);
            let stream = self
                .stream_rows
                .entry(key)
                .or_insert_with(|| site_rows.open.clone());
            for transaction in coalescing::analyze(&alone, device).transactions {
                let chunk = transaction.address / interleave;
                let partition = (chunk % partitions) as usize;
                let row = chunk / partitions / chunks_per_row;
                if stream[partition] != row {
                    if first {
                        site_rows.first_opened += 1;
                    } else {
                        self.activations += 1;
                    }
                    stream[partition] = row;
                }
                site_rows.open[partition] = row;
                if first {
                    let end = transaction
                        .address
                        .saturating_add(u64::from(transaction.bytes));
                    site_rows.first_spans.push((transaction.address, end));
                }
            }
        }
    }

    /// The rows the block activated, with rows of `row_bytes` bytes: those of the later
    /// executions of its instructions, and those of the first executions (`SiteRows`).
    pub(super) fn activations(&self, row_bytes: u64) -> f64 {
        let first: f64 = self
            .site_rows
            .values()
            .map(|site| site.first_activations(row_bytes))
            .sum();
        self.activations as f64 + first
    }

    /// Forgets the block's streams.
    pub(super) fn clear(&mut self) {
        self.stream_rows.clear();
        self.site_rows.clear();
        self.activations = 0;
    }
}
