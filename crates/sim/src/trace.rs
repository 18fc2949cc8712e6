//! The per-line view of a launch: the counters of every shared and global access in the source,
//! and the trace of one warp's accesses, access by access.
//!
//! Nsight Compute attributes its memory metrics to source lines on its Source page (Nsight
//! Compute documentation, "Source Page" and the "Source Counters" section of the Kernel Profiling
//! Guide), so that a student can see *which* access of a kernel conflicts or scatters. This module
//! does the same for the simulator, in two parts:
//!
//! - **Per-line counters** (`LineCounters`): every record that `counters` counts for shared or
//!   global memory is also added to its *access site*, the span of the access expression in the
//!   source with its space and its kind (`tile[threadIdx.x][threadIdx.y + j]`, a shared load).
//!   The numbers come from the very analysis `Counters::record_cost` made for the launch's
//!   counters (`banks` for wavefronts and conflicts, `coalescing` for requests and sectors), and
//!   they are scaled to the grid as the block's counters are, so the sites of a launch add up to
//!   its counters. A line with two accesses (`out[..] = tile[..]`) has two sites.
//! - **The trace of one warp** (`WarpTrace`): for the block and warp a `TraceRequest` names,
//!   every shared and global access as it was counted (after nvcc's load fusion, when that is
//!   on): its site, the byte address of each active lane (the active mask is the lanes with an
//!   address), its width, and which execution of its site by that warp it is. These are the
//!   accesses the lectures draw one at a time, the bank map of seed 001 and the coalescing
//!   pictures of seed 002, for the kernel's real addresses. The trace keeps at most
//!   `MAX_TRACE_RECORDS` accesses, so a long loop costs bounded memory; it says how many the warp
//!   made in all.
//!
//! Neither changes what is counted: the trace only reads the records, and a traced block that
//! the sampling does not run is run after the counted blocks, through a sink that counts nothing.

use crate::access::{AccessKind, AccessWidth, Space, WarpAccess, WARP_LANES};
use crate::counters::AccessCost;
use crate::kernel::{MemRecord, Span};
use serde::{Deserialize, Serialize};

/// The most accesses a trace keeps. A warp of the lessons makes at most about 1,500 shared and
/// global accesses (the tiled matmul's warp at n = 1024 with 16-wide tiles: 64 tiles of 20
/// loads and stores each); 4,096 records of 32 lane addresses are about 1.3 MB, which a browser
/// passes between its worker and its page without a pause.
pub const MAX_TRACE_RECORDS: usize = 4096;

/// Which warp to trace: a block of the grid by its index, and a warp of that block (warp w holds
/// the threads of linear index 32w to 32w + 31).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceRequest {
    pub block: [u32; 3],
    pub warp: u32,
}

/// Where an access is in the source and what it does: one row of the per-line view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AccessSite {
    /// The access expression (`in[(size_t)i * stride]`); its line is the row's line.
    pub span: Span,
    pub space: Space,
    pub kind: AccessKind,
}

/// The counters of one access site over the whole launch, extrapolated to the grid like
/// `Counters`. Shared sites have instructions, wavefronts and conflicts; global sites have
/// instructions, requests and sectors.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineCounters {
    pub site: AccessSite,
    /// Warp-level instructions that made an access here (with at least one active lane).
    pub instructions: f64,
    /// Shared-memory wavefronts, as `l1tex__data_pipe_lsu_wavefronts_mem_shared` counts them.
    pub wavefronts: f64,
    /// Wavefronts beyond the conflict-free ideal, Nsight Compute's bank conflicts.
    pub bank_conflicts: f64,
    /// Global requests and 32-byte sectors, as `l1tex__t_requests` and `l1tex__t_sectors`.
    pub requests: f64,
    pub sectors: f64,
}

impl LineCounters {
    fn new(site: AccessSite) -> LineCounters {
        LineCounters {
            site,
            instructions: 0.0,
            wavefronts: 0.0,
            bank_conflicts: 0.0,
            requests: 0.0,
            sectors: 0.0,
        }
    }

    /// The lectures' n of an "n-way bank conflict" over the whole launch: the wavefronts over
    /// the wavefronts the same accesses would take without conflicts (1 without conflicts; 0 for
    /// a site with no wavefronts, such as a shared atomic or a global access).
    pub fn conflict_degree(&self) -> f64 {
        let ideal = self.wavefronts - self.bank_conflicts;
        if ideal > 0.0 {
            self.wavefronts / ideal
        } else {
            0.0
        }
    }

    /// Sectors per request over the whole launch (4 for a warp reading 32 consecutive floats);
    /// 0 for a site with no requests.
    pub fn sectors_per_request(&self) -> f64 {
        if self.requests > 0.0 {
            self.sectors / self.requests
        } else {
            0.0
        }
    }
}

/// One access of the traced warp, as it was counted. The addresses are kept for the active lanes
/// only, with the mask that says which lanes those are: a record is as small as the access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// The access expression in the source.
    pub span: Span,
    /// Which execution of this site by the warp it is, from 0: the iteration of the loop
    /// around it, for an access in a loop.
    pub occurrence: u32,
    pub space: Space,
    pub kind: AccessKind,
    /// Bytes each lane moves.
    pub width: AccessWidth,
    /// Bit i set when lane i is active (`WarpAccess::active_mask`).
    pub active_mask: u32,
    /// The byte address of each active lane, lowest lane first.
    #[serde(with = "lane_addresses")]
    pub addresses: Vec<u64>,
}

/// A record's addresses as they are serialized: runs of lanes whose addresses step by one
/// stride (a row of floats, a column, one address for all), each written as its first address,
/// its step and its length, rather than lane by lane. A 16 x 16 tile's row of a warp is two runs.
/// The page's worker sends the traced warp with every answer, some 1,500 accesses for a tiled
/// matmul: 454 KB of its 467 KB lane by lane, which the page's thread decoded at every step.
mod lane_addresses {
    use crate::access::WARP_LANES;
    use serde::de::{Error, SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};
    use std::fmt;

    /// One run: its first address, the step from lane to lane, and how many lanes.
    type Run = (u64, i64, u8);

    pub fn serialize<S: Serializer>(addresses: &[u64], serializer: S) -> Result<S::Ok, S::Error> {
        let mut runs = [(0u64, 0i64, 0u8); WARP_LANES];
        let mut n_runs = 0;
        let mut rest = addresses;
        while let Some((&first, after)) = rest.split_first() {
            let step = after
                .first()
                .map_or(0, |&next| next.wrapping_sub(first) as i64);
            let mut count = 1;
            let mut last = first;
            for &next in after {
                if next.wrapping_sub(last) as i64 != step || count == u8::MAX {
                    break;
                }
                count += 1;
                last = next;
            }
            // A record of more addresses than a warp has lanes (none is made) is written one
            // run a lane, which `Runs` refuses to read.
            if n_runs == runs.len() {
                return serializer.collect_seq(addresses.iter().map(|&a| (a, 0i64, 1u8)));
            }
            runs[n_runs] = (first, step, count);
            n_runs += 1;
            rest = &rest[usize::from(count)..];
        }
        serializer.collect_seq(&runs[..n_runs])
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u64>, D::Error> {
        deserializer.deserialize_seq(Runs)
    }

    /// Reads the runs straight into the addresses, no more than a warp has lanes: a message
    /// cannot make the page allocate more.
    struct Runs;

    impl<'de> Visitor<'de> for Runs {
        type Value = Vec<u64>;

        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            formatter.write_str("runs of lane addresses, (first, step, count) each")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u64>, A::Error> {
            let mut addresses = Vec::with_capacity(WARP_LANES);
            while let Some((first, step, count)) = seq.next_element::<Run>()? {
                if addresses.len() + usize::from(count) > WARP_LANES {
                    return Err(A::Error::custom(format!(
                        "more than {WARP_LANES} addresses for the lanes of a warp"
                    )));
                }
                addresses.extend(
                    (0..u64::from(count))
                        .map(|lane| first.wrapping_add((step as u64).wrapping_mul(lane))),
                );
            }
            Ok(addresses)
        }
    }
}

impl TraceRecord {
    /// Keeps `access` as the `occurrence`-th execution of the access at `span`.
    pub fn new(span: Span, occurrence: u32, access: &WarpAccess) -> TraceRecord {
        TraceRecord {
            span,
            occurrence,
            space: access.space,
            kind: access.kind,
            width: access.width,
            active_mask: access.active_mask(),
            addresses: access.active_lanes().map(|(_, address)| address).collect(),
        }
    }

    pub fn site(&self) -> AccessSite {
        AccessSite {
            span: self.span,
            space: self.space,
            kind: self.kind,
        }
    }

    /// The access as the analyses take it. A mask with more lanes than addresses leaves the
    /// lanes past the last address inactive, so a record from a message cannot panic here.
    pub fn access(&self) -> WarpAccess {
        let mut addresses = self.addresses.iter();
        let mut lanes = [None; WARP_LANES];
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if self.active_mask & (1 << lane) != 0 {
                *slot = addresses.next().copied();
            }
        }
        WarpAccess {
            space: self.space,
            kind: self.kind,
            width: self.width,
            lanes,
        }
    }
}

/// A global buffer of the launch, so that an address can be read as "byte k of `in`".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceBuffer {
    pub name: String,
    /// The buffer's first byte address.
    pub base: u64,
    pub size: u64,
}

/// The shared and global accesses of one warp, in the order they were counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarpTrace {
    pub request: TraceRequest,
    /// At most `MAX_TRACE_RECORDS` accesses: the warp's first ones.
    pub records: Vec<TraceRecord>,
    /// Every shared and global access the warp made, kept or not.
    pub accesses: u64,
    /// The launch's global buffers, in address order.
    pub buffers: Vec<TraceBuffer>,
    /// Why the trace is empty or stops early: the request names no warp of the launch, or its
    /// block stopped (a block the sampling does not run can still fail, or use up the budget).
    pub problem: Option<String>,
}

impl WarpTrace {
    /// Whether the warp made more accesses than the trace keeps.
    pub fn is_cut(&self) -> bool {
        self.accesses > self.records.len() as u64
    }
}

/// Whether the per-line view and the trace follow accesses to this space: the lectures' banks
/// are shared memory and their coalescing global memory. Local and constant accesses are counted
/// by `counters` as always, without a site.
fn has_sites(space: Space) -> bool {
    matches!(space, Space::Shared | Space::Global)
}

/// What one block added to one site, before it is scaled to the block's class.
#[derive(Clone, Copy, Debug, Default)]
struct BlockCounts {
    instructions: u64,
    wavefronts: u64,
    bank_conflicts: u64,
    requests: u64,
    sectors: u64,
}

/// Sums the records of a launch per access site, block by block.
#[derive(Debug, Default)]
pub(crate) struct LineTally {
    /// The sites seen so far, sorted, with the index of each in `lines`.
    index: Vec<(AccessSite, usize)>,
    lines: Vec<LineCounters>,
    block: Vec<BlockCounts>,
    /// The site of the previous record: a warp's records come in runs of one site (a loop's
    /// body), so most lookups end here without a search.
    last: Option<usize>,
}

impl LineTally {
    /// Adds `times` counted records like `record` of the current block (1, or the iterations of
    /// a loop skipped alike), with what each cost.
    pub(crate) fn add_times(&mut self, record: &MemRecord, cost: &AccessCost, times: u64) {
        if !has_sites(record.access.space) {
            return;
        }
        let site = AccessSite {
            span: record.span,
            space: record.access.space,
            kind: record.access.kind,
        };
        let index = match self.last {
            Some(last) if self.lines[last].site == site => last,
            _ => match self.index.binary_search_by(|(s, _)| s.cmp(&site)) {
                Ok(found) => self.index[found].1,
                Err(place) => {
                    let next = self.lines.len();
                    self.index.insert(place, (site, next));
                    self.lines.push(LineCounters::new(site));
                    self.block.push(BlockCounts::default());
                    next
                }
            },
        };
        self.last = Some(index);
        let counts = &mut self.block[index];
        counts.instructions += times;
        counts.wavefronts += u64::from(cost.wavefronts) * times;
        counts.bank_conflicts += u64::from(cost.bank_conflicts) * times;
        counts.requests += u64::from(cost.requests) * times;
        counts.sectors += u64::from(cost.sectors) * times;
    }

    /// Adds the current block's sums `scale` times (the blocks of its class) and starts the next.
    pub(crate) fn finish_block(&mut self, scale: f64) {
        for (line, counts) in self.lines.iter_mut().zip(&mut self.block) {
            line.instructions += counts.instructions as f64 * scale;
            line.wavefronts += counts.wavefronts as f64 * scale;
            line.bank_conflicts += counts.bank_conflicts as f64 * scale;
            line.requests += counts.requests as f64 * scale;
            line.sectors += counts.sectors as f64 * scale;
            *counts = BlockCounts::default();
        }
    }

    /// The sites in source order.
    pub(crate) fn into_lines(self) -> Vec<LineCounters> {
        let LineTally { index, lines, .. } = self;
        index.into_iter().map(|(_, i)| lines[i]).collect()
    }
}

/// Keeps the accesses of the requested warp as they are counted.
#[derive(Debug)]
pub(crate) struct TraceRecorder {
    request: TraceRequest,
    records: Vec<TraceRecord>,
    accesses: u64,
    /// Executions so far per site, for the records kept.
    occurrences: Vec<(AccessSite, u32)>,
}

impl TraceRecorder {
    pub(crate) fn new(request: TraceRequest) -> TraceRecorder {
        TraceRecorder {
            request,
            records: Vec::new(),
            accesses: 0,
            occurrences: Vec::new(),
        }
    }

    pub(crate) fn request(&self) -> TraceRequest {
        self.request
    }

    /// Takes one record as it is counted; anything but a shared or global access of the traced
    /// warp with an active lane is passed over.
    pub(crate) fn record(&mut self, record: &MemRecord) {
        if record.block != self.request.block
            || record.warp != self.request.warp
            || !has_sites(record.access.space)
            || record.access.n_active() == 0
        {
            return;
        }
        self.accesses += 1;
        if self.records.len() >= MAX_TRACE_RECORDS {
            return;
        }
        let site = AccessSite {
            span: record.span,
            space: record.access.space,
            kind: record.access.kind,
        };
        // A warp has few sites, and the search stops at the cap with the records.
        let occurrence = match self.occurrences.iter_mut().find(|(s, _)| *s == site) {
            Some((_, seen)) => {
                *seen += 1;
                *seen - 1
            }
            None => {
                self.occurrences.push((site, 1));
                0
            }
        };
        self.records
            .push(TraceRecord::new(record.span, occurrence, &record.access));
    }

    pub(crate) fn finish(
        self,
        buffers: Vec<(String, u64, u64)>,
        problem: Option<String>,
    ) -> WarpTrace {
        WarpTrace {
            request: self.request,
            records: self.records,
            accesses: self.accesses,
            buffers: buffers
                .into_iter()
                .map(|(name, base, size)| TraceBuffer { name, base, size })
                .collect(),
            problem,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::AccessWidth;
    use crate::counters::Counters;
    use crate::device::h100;

    /// A record of warp `warp` of block 0 at line `line`, lane i at `address(i)`.
    fn record(
        line: u32,
        space: Space,
        warp: u32,
        address: impl FnMut(u32) -> Option<u64>,
    ) -> MemRecord {
        MemRecord {
            order: Default::default(),
            fences_passed: 0,
            access: WarpAccess::from_fn(space, AccessKind::Load, AccessWidth::FOUR, address),
            span: Span {
                line,
                col: 1,
                start: line * 10,
                end: line * 10 + 5,
            },
            block: [0, 0, 0],
            warp,
        }
    }

    /// Counts `records` as one block standing for `scale` blocks, and compares each site's
    /// (line, instructions, wavefronts, conflicts, requests, sectors) with `expected`.
    fn check(records: &[MemRecord], scale: f64, expected: &[(u32, [f64; 5])]) {
        let device = h100();
        let mut counters = Counters::default();
        let mut tally = LineTally::default();
        for record in records {
            if let Some(cost) = counters.record_cost(&record.access, &device) {
                tally.add_times(record, &cost, 1);
            }
        }
        tally.finish_block(scale);
        let found: Vec<(u32, [f64; 5])> = tally
            .into_lines()
            .iter()
            .map(|l| {
                let values = [
                    l.instructions,
                    l.wavefronts,
                    l.bank_conflicts,
                    l.requests,
                    l.sectors,
                ];
                (l.site.span.line, values)
            })
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn stride_two_is_two_way_conflict_on_its_line() {
        // Seed 001, "Bank Addressing Examples": shared[BaseIndex + 2*tid] is a 2-way conflict.
        let stride_two = record(3, Space::Shared, 0, |lane| Some(8 * u64::from(lane)));
        check(&[stride_two], 10.0, &[(3, [10.0, 20.0, 10.0, 0.0, 0.0])]);
    }

    #[test]
    fn a_coalesced_line_and_a_strided_line_are_counted_apart_in_source_order() {
        // Seed 002, "Global Memory: Coalescing": 32 floats in a row are 4 sectors; a stride of
        // 32 floats puts every lane in a sector of its own.
        let strided = record(7, Space::Global, 0, |lane| Some(128 * u64::from(lane)));
        let coalesced = record(5, Space::Global, 1, |lane| Some(4 * u64::from(lane)));
        check(
            &[strided, coalesced, strided],
            1.0,
            &[
                (5, [1.0, 0.0, 0.0, 1.0, 4.0]),
                (7, [2.0, 0.0, 0.0, 2.0, 64.0]),
            ],
        );
    }

    #[test]
    fn a_record_keeps_the_active_lanes_and_gives_back_the_access() {
        let half = WarpAccess::from_fn(
            Space::Global,
            AccessKind::Store,
            AccessWidth::EIGHT,
            |lane| (lane % 2 == 1).then(|| 8 * u64::from(lane)),
        );
        let record = TraceRecord::new(Span::default(), 0, &half);
        assert_eq!(record.active_mask, 0xaaaa_aaaa);
        assert_eq!(record.addresses.len(), 16);
        assert_eq!(record.access(), half);
        // A mask that claims more lanes than there are addresses leaves the rest inactive.
        let short = TraceRecord {
            active_mask: u32::MAX,
            addresses: vec![64],
            ..record
        };
        assert_eq!(short.access().n_active(), 1);
    }

    /// A record with these addresses, written as JSON and read back: the JSON, and the record.
    fn written_and_read(addresses: Vec<u64>) -> (String, TraceRecord) {
        let record = TraceRecord {
            span: Span::default(),
            occurrence: 0,
            space: Space::Global,
            kind: AccessKind::Load,
            width: AccessWidth::FOUR,
            active_mask: u32::MAX,
            addresses,
        };
        let json = serde_json::to_string(&record).expect("a record serializes");
        let read: TraceRecord = serde_json::from_str(&json).expect("it reads back");
        assert_eq!(read, record, "{json}");
        (json, read)
    }

    #[test]
    fn a_row_of_floats_a_broadcast_and_a_step_down_are_written_as_first_step_count() {
        let row: Vec<u64> = (0..32).map(|lane| 4096 + 4 * lane).collect();
        let (json, _) = written_and_read(row);
        assert!(json.contains(r#""addresses":[[4096,4,32]]"#), "{json}");
        let (json, _) = written_and_read(vec![256; 32]);
        assert!(json.contains(r#""addresses":[[256,0,32]]"#), "{json}");
        let down: Vec<u64> = (0..8).map(|lane| 1024 - 128 * lane).collect();
        let (json, _) = written_and_read(down);
        assert!(json.contains(r#""addresses":[[1024,-128,8]]"#), "{json}");
        let (json, _) = written_and_read(vec![64]);
        assert!(json.contains(r#""addresses":[[64,0,1]]"#), "{json}");
        let (json, _) = written_and_read(Vec::new());
        assert!(json.contains(r#""addresses":[]"#), "{json}");
    }

    #[test]
    fn a_warp_over_two_rows_of_a_tile_is_two_runs_and_no_step_one_run_a_lane() {
        // Lanes 0-15 read a 16-float row, lanes 16-31 the same row again (`sb[k][tx]`).
        let tile_row: Vec<u64> = (0..32).map(|lane| 512 + 4 * (lane % 16)).collect();
        let (json, _) = written_and_read(tile_row);
        assert!(
            json.contains(r#""addresses":[[512,4,16],[512,4,16]]"#),
            "{json}"
        );
        let (json, _) = written_and_read(vec![0, 4, 12, 100]);
        assert!(
            json.contains(r#""addresses":[[0,4,2],[12,88,2]]"#),
            "{json}"
        );
    }

    #[test]
    fn more_addresses_than_a_warp_has_lanes_do_not_read() {
        let (json, _) = written_and_read((0..32).map(|lane| 4 * lane).collect());
        let json = json.replace("[[0,4,32]]", "[[0,4,32],[0,4,1]]");
        let error = serde_json::from_str::<TraceRecord>(&json).expect_err("33 lanes");
        assert!(
            error
                .to_string()
                .contains("more than 32 addresses for the lanes of a warp"),
            "{error}"
        );
    }

    #[test]
    fn a_warp_with_no_active_lane_counts_nothing() {
        check(&[record(2, Space::Shared, 0, |_| None)], 1.0, &[]);
    }

    #[test]
    fn the_trace_keeps_one_warp_numbers_each_sites_executions_and_stops_at_the_cap() {
        let mut recorder = TraceRecorder::new(TraceRequest {
            block: [0, 0, 0],
            warp: 1,
        });
        for _ in 0..3 {
            recorder.record(&record(4, Space::Global, 1, |lane| {
                Some(u64::from(lane) * 4)
            }));
            recorder.record(&record(4, Space::Global, 0, |lane| {
                Some(u64::from(lane) * 4)
            }));
            recorder.record(&record(6, Space::Shared, 1, |lane| {
                Some(u64::from(lane) * 4)
            }));
        }
        let trace = recorder.finish(Vec::new(), None);
        let order: Vec<(u32, u32)> = trace
            .records
            .iter()
            .map(|r| (r.span.line, r.occurrence))
            .collect();
        assert_eq!(order, [(4, 0), (6, 0), (4, 1), (6, 1), (4, 2), (6, 2)]);
        assert!(!trace.is_cut());

        let mut long = TraceRecorder::new(TraceRequest {
            block: [0, 0, 0],
            warp: 0,
        });
        for _ in 0..MAX_TRACE_RECORDS + 5 {
            long.record(&record(4, Space::Global, 0, |lane| {
                Some(u64::from(lane) * 4)
            }));
        }
        let trace = long.finish(Vec::new(), None);
        assert_eq!(trace.records.len(), MAX_TRACE_RECORDS);
        assert_eq!(trace.accesses, MAX_TRACE_RECORDS as u64 + 5);
        assert!(trace.is_cut());
    }

    // ---------------------------------------------------------------------------------------
    // Whole launches of the lecture kernels

    use crate::coalescing;
    use crate::compile_effects::CompileEffects;
    use crate::kernel::{Dim3, Value};
    use crate::lesson_kernels::{matmul_launch, COALESCING, MATMUL, TRANSPOSE};
    use crate::sampling::EdgePosition;
    use crate::simulate::{simulate, BlockSampling, SimulationInput, SimulationReport};

    /// The strided copy of seeds 001/002 over 4,096 floats in blocks of 256, tracing `trace`.
    fn strided_copy(stride: u32, trace: Option<TraceRequest>) -> SimulationInput {
        let mut input = SimulationInput::new(COALESCING, "strided_copy", h100());
        let n_out = 4096u32;
        input.grid = Dim3::new(n_out / 256, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.args = vec![
            ("stride".to_string(), Value::Int(i64::from(stride))),
            ("n_out".to_string(), Value::Int(i64::from(n_out))),
        ];
        input.buffers = vec![
            ("out".to_string(), u64::from(n_out) * 4),
            ("in".to_string(), u64::from(n_out) * u64::from(stride) * 4),
        ];
        input.trace = trace;
        input
    }

    /// The shared-tile transpose of a 256 x 256 matrix with the given padding.
    fn transpose_shared(pad: u32) -> SimulationInput {
        let mut input = SimulationInput::new(TRANSPOSE, "tr_shared", h100());
        input.defines = vec![("PAD".to_string(), pad.to_string())];
        input.grid = Dim3::new(8, 8, 1);
        input.block = Dim3::new(32, 8, 1);
        input.args = vec![("n".to_string(), Value::Int(256))];
        input.buffers = vec![
            ("out".to_string(), 256 * 256 * 4),
            ("in".to_string(), 256 * 256 * 4),
        ];
        input.trace = Some(TraceRequest {
            block: [0, 0, 0],
            warp: 0,
        });
        input
    }

    fn warp_trace(report: &SimulationReport) -> &WarpTrace {
        report.trace.as_ref().expect("the launch asked for a trace")
    }

    /// The site of `report` at `line` with this space and kind.
    fn line(report: &SimulationReport, line: u32, space: Space, kind: AccessKind) -> LineCounters {
        *report
            .lines
            .iter()
            .find(|l| l.site.span.line == line && l.site.space == space && l.site.kind == kind)
            .unwrap_or_else(|| panic!("no {space:?} {kind:?} on line {line}: {:?}", report.lines))
    }

    #[test]
    fn strided_copy_warp_reads_a_sector_per_lane_at_stride_32_and_4_sectors_at_stride_1() {
        // Block 1, warp 2: threads i = 256 + 64 + lane read in[i * stride].
        let request = TraceRequest {
            block: [1, 0, 0],
            warp: 2,
        };
        for (stride, sectors) in [(32u32, 32u32), (1, 4)] {
            let report = simulate(&strided_copy(stride, Some(request))).expect("it simulates");
            let trace = warp_trace(&report);
            assert_eq!(trace.problem, None);
            let base = |name: &str| {
                trace
                    .buffers
                    .iter()
                    .find(|b| b.name == name)
                    .map(|b| b.base)
                    .expect("the buffer is listed")
            };
            let load = trace
                .records
                .iter()
                .find(|r| r.kind == AccessKind::Load)
                .expect("the warp loads");
            assert_eq!((load.span.line, load.occurrence), (4, 0));
            assert_eq!(load.active_mask, u32::MAX);
            let expected: Vec<u64> = (0..32u64)
                .map(|lane| base("in") + (320 + lane) * u64::from(stride) * 4)
                .collect();
            assert_eq!(load.addresses, expected);
            assert_eq!(
                coalescing::analyze(&load.access(), &h100()).sectors,
                sectors,
                "stride {stride}"
            );
            let whole_launch = line(&report, 4, Space::Global, AccessKind::Load);
            assert_eq!(whole_launch.instructions, 4096.0 / 32.0);
            assert_eq!(whole_launch.sectors_per_request(), f64::from(sectors));
            let store = line(&report, 4, Space::Global, AccessKind::Store);
            assert_eq!(store.sectors_per_request(), 4.0);
            assert_eq!(trace.records.len(), 2);
            assert_eq!(trace.accesses, 2);
        }
    }

    #[test]
    fn the_column_read_of_tr_shared_is_32_way_without_padding_and_conflict_free_with_it() {
        for (pad, degree) in [(0, 32.0), (1, 1.0)] {
            let report = simulate(&transpose_shared(pad)).expect("it simulates");
            let column_read = line(&report, 23, Space::Shared, AccessKind::Load);
            assert_eq!(column_read.conflict_degree(), degree, "PAD={pad}");
            // 64 blocks of 8 warps, 4 reads each.
            assert_eq!(column_read.instructions, 64.0 * 8.0 * 4.0);
            let row_write = line(&report, 19, Space::Shared, AccessKind::Store);
            assert_eq!(row_write.conflict_degree(), 1.0, "PAD={pad}");
            // The warp reads the column once per iteration of its loop.
            let reads: Vec<u32> = warp_trace(&report)
                .records
                .iter()
                .filter(|r| r.site() == column_read.site)
                .map(|r| r.occurrence)
                .collect();
            assert_eq!(reads, [0, 1, 2, 3]);
        }
    }

    #[test]
    fn the_lines_add_up_to_the_launchs_counters_and_tracing_changes_no_counter() {
        let mut matmul = matmul_launch(MATMUL, "mm_tiled", 64, 16, h100());
        matmul.defines.push(("PAD".to_string(), "0".to_string()));
        matmul.compile = CompileEffects::AS_COMPILED;
        for input in [matmul, transpose_shared(0), strided_copy(8, None)] {
            let traced = simulate(&SimulationInput {
                trace: Some(TraceRequest {
                    block: [1, 0, 0],
                    warp: 1,
                }),
                ..input.clone()
            })
            .expect("it simulates");
            let untraced = simulate(&SimulationInput {
                trace: None,
                ..input.clone()
            })
            .expect("it simulates");
            // Which blocks ran may change: a traced block shown alike to classes
            // (`kernel::block_shift`) runs for them.
            assert_eq!(
                SimulationReport {
                    trace: None,
                    sampled_blocks: untraced.sampled_blocks.clone(),
                    steps: untraced.steps,
                    ..traced.clone()
                },
                untraced,
                "{}",
                input.kernel
            );
            let sum = |space: Space, kind: AccessKind, value: fn(&LineCounters) -> f64| -> f64 {
                traced
                    .lines
                    .iter()
                    .filter(|l| l.site.space == space && l.site.kind == kind)
                    .map(value)
                    .sum()
            };
            let c = &traced.counters;
            let (shared, global) = (Space::Shared, Space::Global);
            let (load, store) = (AccessKind::Load, AccessKind::Store);
            assert_eq!(
                [
                    sum(shared, load, |l| l.instructions),
                    sum(shared, load, |l| l.wavefronts),
                    sum(shared, load, |l| l.bank_conflicts),
                    sum(shared, store, |l| l.instructions),
                    sum(shared, store, |l| l.wavefronts),
                    sum(shared, store, |l| l.bank_conflicts),
                    sum(global, load, |l| l.requests),
                    sum(global, load, |l| l.sectors),
                    sum(global, store, |l| l.requests),
                    sum(global, store, |l| l.sectors),
                ],
                [
                    c.shared_ld_instructions,
                    c.shared_ld_wavefronts,
                    c.shared_ld_bank_conflicts,
                    c.shared_st_instructions,
                    c.shared_st_wavefronts,
                    c.shared_st_bank_conflicts,
                    c.global_ld_requests,
                    c.global_ld_sectors,
                    c.global_st_requests,
                    c.global_st_sectors,
                ],
                "{}",
                input.kernel
            );
            assert!(traced.lines.windows(2).all(|w| w[0].site < w[1].site));
        }
    }

    #[test]
    fn the_tiled_matmul_traces_its_row_reads_as_the_fused_128_bit_loads_it_counts() {
        // As compiled, a warp's 16 reads of sa[ty][k] per tile are 4 LDS.128 (seed 003 tiles,
        // fused as the H100 measurements show); the trace has the 4, each 16 bytes wide.
        let mut input = matmul_launch(MATMUL, "mm_tiled", 64, 16, h100());
        input.defines.push(("PAD".to_string(), "0".to_string()));
        input.trace = Some(TraceRequest {
            block: [0, 0, 0],
            warp: 0,
        });
        let report = simulate(&input).expect("it simulates");
        let fused = &report.fused_loads[0];
        let row_reads: Vec<&TraceRecord> = warp_trace(&report)
            .records
            .iter()
            .filter(|r| r.span == fused.span)
            .collect();
        // Four tiles along n = 64.
        assert_eq!(row_reads.len(), 4 * 4);
        assert!(row_reads.iter().all(|r| r.width.bytes() == 16));
        assert_eq!(
            row_reads.iter().map(|r| r.occurrence).max(),
            Some(4 * 4 - 1)
        );
    }

    #[test]
    fn a_block_the_sampling_skips_is_traced_without_counting_it() {
        // 16 blocks sample as first, interior (block 8) and last, each run (the blocks are shown
        // alike, `kernel::block_shift`, but this sampling runs every class all the same); block
        // 3 is run for the trace.
        let request = TraceRequest {
            block: [3, 0, 0],
            warp: 0,
        };
        let report = simulate(&SimulationInput {
            sampling: BlockSampling::EdgeClassesEachRun,
            ..strided_copy(2, Some(request))
        })
        .expect("it simulates");
        assert_eq!(report.sampled_blocks.len(), 3);
        let trace = warp_trace(&report);
        let load = &trace.records[0];
        let in_base = trace
            .buffers
            .iter()
            .find(|b| b.name == "in")
            .map(|b| b.base);
        assert_eq!(
            load.addresses.first().copied(),
            in_base.map(|base| base + 3 * 256 * 2 * 4)
        );
        let all = simulate(&SimulationInput {
            sampling: BlockSampling::All,
            ..strided_copy(2, Some(request))
        })
        .expect("it simulates");
        assert_eq!(warp_trace(&all).records, trace.records);
    }

    #[test]
    fn a_trace_of_a_warp_outside_the_launch_says_so_and_the_launch_runs() {
        let outside = |block: [u32; 3], warp: u32| {
            let report = simulate(&strided_copy(1, Some(TraceRequest { block, warp })))
                .expect("the launch runs all the same");
            let trace = warp_trace(&report).clone();
            assert!(trace.records.is_empty());
            trace.problem.unwrap_or_default()
        };
        assert_eq!(
            outside([16, 0, 0], 0),
            "block (16, 0, 0) is outside the grid of 16x1x1 blocks"
        );
        assert_eq!(
            outside([0, 0, 0], 8),
            "warp 8 is beyond the block's 8 warps"
        );
    }

    #[test]
    fn a_traced_block_shown_alike_to_the_classes_runs_for_them() {
        // The strided copy's blocks are alike up to shifts: block 3, asked for by the trace,
        // runs first and stands for all three classes, so no other block runs.
        let request = TraceRequest {
            block: [3, 0, 0],
            warp: 0,
        };
        let report = simulate(&strided_copy(2, Some(request))).expect("it simulates");
        assert_eq!(report.sampled_blocks.len(), 1);
        let run = &report.sampled_blocks[0];
        assert_eq!(run.block, [3, 0, 0]);
        assert_eq!(run.scale, 16);
        // Listed as its own class, the interior one, with the two ends shown alike.
        assert_eq!(run.position[0], EdgePosition::Interior);
        assert_eq!(run.reused_for, [[0, 0, 0], [15, 0, 0]]);
        let each = simulate(&SimulationInput {
            sampling: BlockSampling::EdgeClassesEachRun,
            ..strided_copy(2, Some(request))
        })
        .expect("it simulates");
        assert_eq!(report.counters, each.counters);
        assert_eq!(report.trace, each.trace);
    }

    #[test]
    fn a_traced_block_that_runs_out_of_budget_says_so_and_the_launch_keeps_its_counters() {
        let request = TraceRequest {
            block: [3, 0, 0],
            warp: 0,
        };
        // Every class runs, so the trace's block comes on top of them.
        let each_run = |trace| SimulationInput {
            sampling: BlockSampling::EdgeClassesEachRun,
            ..strided_copy(2, trace)
        };
        let untraced = simulate(&each_run(None)).expect("it simulates");
        let report = simulate(&SimulationInput {
            step_budget: untraced.steps + 10,
            ..each_run(Some(request))
        })
        .expect("the counted blocks fit the budget");
        assert_eq!(report.counters, untraced.counters);
        let trace = warp_trace(&report);
        assert!(trace.records.is_empty());
        assert_eq!(
            trace.problem.as_deref(),
            Some("block (3, 0, 0) stopped at 4:7: what was left of the step budget ran out")
        );
    }

    #[test]
    fn a_launch_written_before_traces_existed_reads_as_untraced() {
        let input = strided_copy(1, None);
        let mut json = serde_json::to_value(&input).expect("the input serializes");
        json.as_object_mut()
            .expect("an object")
            .remove("trace")
            .expect("the field is written");
        let back: SimulationInput = serde_json::from_value(json).expect("it reads");
        assert_eq!(back, input);
        assert!(serde_json::from_str::<AccessWidth>("3").is_err());
        assert_eq!(
            serde_json::from_str::<AccessWidth>("16").ok(),
            Some(AccessWidth::SIXTEEN)
        );
    }
}
