//! What the per-line view shows, derived from a simulation report by pure calls into
//! `memplay-sim`.
//!
//! The rows are the report's access sites (`memplay_sim::trace`): every shared and global access
//! of the kernel with its counters over the whole launch, the way Nsight Compute's Source page
//! puts its memory metrics next to the source lines. For the picked row, the traced warp's
//! executions of that access are what the stepper walks; each one is drawn as the lectures draw a
//! single warp's access: a shared access as seed 001's bank map (`banks::analyze`, the analysis
//! behind the launch's counters), a global access as its sectors and 128-byte lines (seed 002,
//! "Global Memory: Coalescing"; the transactions of `coalescing::each_transaction`, from which the
//! counters' requests and sectors come). Nothing here touches the DOM, so the tests run on the
//! host.

use crate::model::{format_number, lane_list};
use memplay_sim::access::{AccessKind, Space, WarpAccess};
use memplay_sim::banks::{self, BankReport};
use memplay_sim::coalescing::{self, LINE_BYTES, SECTOR_BYTES};
use memplay_sim::simulate::{SimulationInput, SimulationReport};
use memplay_sim::trace::{AccessSite, LineCounters, TraceBuffer, TraceRecord, TraceRequest};
use memplay_sim::Device;

/// Characters of an access expression a row shows; longer ones end in an ellipsis.
const MAX_ACCESS_CHARS: usize = 48;

/// One row of the per-line table: an access of the kernel and its counters over the launch.
#[derive(Clone, Debug, PartialEq)]
pub struct LineRow {
    pub site: AccessSite,
    /// The access expression as written, on one line (`tile[threadIdx.x][threadIdx.y + j]`).
    pub access: String,
    /// "shared load", "global store", ...
    pub what: String,
    /// "131,072 instructions" (shared) or "131,072 requests" (global).
    pub count: String,
    /// "4,194,304 wavefronts" (shared) or "524,288 sectors" (global).
    pub cost: String,
    /// "32-way conflict", "no conflict" (shared) or "4 sectors per request" (global).
    pub verdict: String,
    /// Whether the verdict is the bad case: a bank conflict, or more than the 4 sectors a warp of
    /// consecutive floats needs.
    pub bad: bool,
    /// How far the access is from its best case: the conflict degree of a shared access, the
    /// sectors per request over the four of consecutive floats for a global one, 0 for an
    /// atomic. The view opens on the costliest load (`picked`).
    pub cost_ratio: f64,
}

/// A memory space as the lectures name it: "shared", "global".
pub fn space_name(space: Space) -> &'static str {
    match space {
        Space::Shared => "shared",
        Space::Global => "global",
        Space::Local => "local",
        Space::Constant => "constant",
    }
}

/// "load", "store" or "atomic".
pub fn kind_name(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Load => "load",
        AccessKind::Store => "store",
        AccessKind::Atomic => "atomic",
    }
}

/// The source text of `site`, whitespace runs as one space, cut to `MAX_ACCESS_CHARS`.
fn access_text(source: &str, site: &AccessSite) -> String {
    let text = source
        .get(site.span.start as usize..site.span.end as usize)
        .unwrap_or("");
    let words: Vec<&str> = text.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() > MAX_ACCESS_CHARS {
        let cut: String = line.chars().take(MAX_ACCESS_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// A launch-wide conflict degree as the lectures say it: "no conflict", "32-way", and one decimal
/// where the launch averages accesses of different degrees ("2.5-way on average").
pub fn degree_text(degree: f64) -> String {
    if degree <= 1.0 + 1e-9 {
        "no conflict".to_string()
    } else if (degree - degree.round()).abs() < 1e-9 {
        format!("{}-way conflict", degree.round())
    } else {
        format!("{degree:.1}-way conflict on average")
    }
}

/// Sectors per request as a number: whole where it is whole, one decimal otherwise.
pub fn per_request_text(sectors_per_request: f64) -> String {
    if (sectors_per_request - sectors_per_request.round()).abs() < 1e-9 {
        format!("{}", sectors_per_request.round())
    } else {
        format!("{sectors_per_request:.1}")
    }
}

fn plural(value: f64, one: &str, many: &str) -> String {
    let word = if value == 1.0 { one } else { many };
    format!("{} {word}", format_number(value))
}

fn row(source: &str, line: &LineCounters) -> LineRow {
    let site = line.site;
    let (count, cost, verdict, bad, cost_ratio) = match (site.space, site.kind) {
        (Space::Shared, AccessKind::Atomic) => (
            plural(line.instructions, "instruction", "instructions"),
            String::new(),
            String::new(),
            false,
            0.0,
        ),
        (Space::Shared, _) => {
            let degree = line.conflict_degree();
            (
                plural(line.instructions, "instruction", "instructions"),
                plural(line.wavefronts, "wavefront", "wavefronts"),
                degree_text(degree),
                degree > 1.0 + 1e-9,
                degree,
            )
        }
        _ => {
            let per_request = line.sectors_per_request();
            (
                plural(line.requests, "request", "requests"),
                plural(line.sectors, "sector", "sectors"),
                format!("{} sectors per request", per_request_text(per_request)),
                per_request > 4.0 + 1e-9,
                per_request / 4.0,
            )
        }
    };
    LineRow {
        site,
        access: access_text(source, &site),
        what: format!("{} {}", space_name(site.space), kind_name(site.kind)),
        count,
        cost,
        verdict,
        bad,
        cost_ratio,
    }
}

/// The table's rows, in source order: the report's shared and global access sites.
pub fn rows(report: &SimulationReport, source: &str) -> Vec<LineRow> {
    report.lines.iter().map(|line| row(source, line)).collect()
}

/// Which row is picked: the one the student picked, while it is in the table, or else the
/// access a lesson is about: the load furthest from its best case (the strided copy's
/// `in[i * stride]`, the transpose's column read of its tile), the first of equals, and a
/// store only where the kernel loads nothing. The lesson's controls move that access's
/// sectors or wavefronts; a store of consecutive floats would show "4 sectors per request"
/// whatever the stride.
pub fn picked(rows: &[LineRow], site: Option<AccessSite>) -> Option<usize> {
    site.and_then(|site| rows.iter().position(|row| row.site == site))
        .or_else(|| {
            let load = |row: &LineRow| row.site.kind == AccessKind::Load;
            let mut best: Option<usize> = None;
            for (index, row) in rows.iter().enumerate() {
                let better = match best {
                    None => true,
                    Some(current) => {
                        let current = &rows[current];
                        (load(row), row.cost_ratio) > (load(current), current.cost_ratio)
                    }
                };
                if better {
                    best = Some(index);
                }
            }
            best
        })
}

/// The traced warp's executions of `site`, in the order it made them.
pub fn executions(records: &[TraceRecord], site: AccessSite) -> Vec<&TraceRecord> {
    // The trace numbers a site's executions as it keeps them, so they are in order already.
    records.iter().filter(|r| r.site() == site).collect()
}

/// The stepper's words: "execution 2 of 4", or that the warp never made the access.
pub fn step_text(step: usize, steps: usize) -> String {
    if steps == 0 {
        "this warp does not make this access".to_string()
    } else {
        format!("execution {} of {steps}", step.min(steps - 1) + 1)
    }
}

/// The trace the page asks the worker for: the picked block and warp, brought inside the
/// launch's grid and block so that every request names a warp that runs.
pub fn trace_request(block: [u32; 2], warp: u32, input: &SimulationInput) -> TraceRequest {
    TraceRequest {
        block: [
            block[0].min(input.grid.x.saturating_sub(1)),
            block[1].min(input.grid.y.saturating_sub(1)),
            0,
        ],
        warp: warp.min(warps_per_block(input).saturating_sub(1)),
    }
}

/// Warps in one block of the launch.
pub fn warps_per_block(input: &SimulationInput) -> u32 {
    input
        .block
        .x
        .saturating_mul(input.block.y)
        .saturating_mul(input.block.z)
        .div_ceil(32)
}

/// Everything the per-line view draws for one run.
#[derive(Clone, Debug, PartialEq)]
pub struct LineView {
    pub rows: Vec<LineRow>,
    pub picked: Option<usize>,
    /// The execution shown, from 0, and how many the traced warp made.
    pub step: usize,
    pub steps: usize,
    /// The map of the execution shown, if the warp made one.
    pub map: Option<AccessMap>,
    /// The traced warp, and the launch's grid (x, y) and warps per block, for the picker.
    pub block: [u32; 2],
    pub warp: u32,
    pub grid: [u32; 2],
    pub warps: u32,
    /// What the trace leaves out, in a sentence.
    pub note: Option<String>,
}

/// The per-line view of the launch `input`, which ran into `report`, with the student's picked
/// access and execution.
pub fn line_view(
    input: &SimulationInput,
    report: &SimulationReport,
    site: Option<AccessSite>,
    step: usize,
) -> LineView {
    let rows = rows(report, &input.source);
    let picked = picked(&rows, site);
    let trace = report.trace.as_ref();
    let records = trace.map_or(&[][..], |trace| &trace.records[..]);
    let executions = picked.map_or_else(Vec::new, |i| executions(records, rows[i].site));
    let steps = executions.len();
    let step = step.min(steps.saturating_sub(1));
    let map = executions.get(step).map(|record| {
        access_map(
            record,
            &input.device,
            trace.map_or(&[][..], |t| &t.buffers[..]),
        )
    });
    let request = input.trace.unwrap_or(TraceRequest {
        block: [0, 0, 0],
        warp: 0,
    });
    let note = trace.and_then(|trace| {
        trace.problem.clone().or_else(|| {
            trace.is_cut().then(|| {
                format!(
                    "The warp made {} shared and global accesses; the trace keeps the first {}, \
                     so later executions are not shown.",
                    format_number(trace.accesses as f64),
                    format_number(trace.records.len() as f64)
                )
            })
        })
    });
    LineView {
        rows,
        picked,
        step,
        steps,
        map,
        block: [request.block[0], request.block[1]],
        warp: request.warp,
        grid: [input.grid.x, input.grid.y],
        warps: warps_per_block(input),
        note,
    }
}

// ---------------------------------------------------------------------------------------------
// One access, drawn

/// What the view draws for one execution of the picked access.
#[derive(Clone, Debug, PartialEq)]
pub enum AccessMap {
    /// A shared load or store: its bank map.
    Banks(BankReport),
    /// A global access: its sectors and lines.
    Sectors(CoalescingMap),
}

/// The map of one traced access on `device`.
pub fn access_map(record: &TraceRecord, device: &Device, buffers: &[TraceBuffer]) -> AccessMap {
    let access = record.access();
    match access.space {
        Space::Shared => AccessMap::Banks(banks::analyze(&access, device)),
        _ => AccessMap::Sectors(coalescing_map(&access, device, buffers)),
    }
}

/// One 32-byte sector of a 128-byte line: the lanes whose bytes fall in it, and whether the
/// access moves it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SectorCell {
    pub lanes: Vec<u32>,
    pub moved: bool,
}

/// One 128-byte line that the access touches, as four sectors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineOfSectors {
    /// Where the line is: "in + 1,280 B".
    pub place: String,
    pub sectors: Vec<SectorCell>,
}

/// One active lane: where its bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneBytes {
    pub lane: u32,
    /// "in + 1,280 B".
    pub address: String,
    /// The sectors and lines it touches, counted from its buffer's start: "sector 40", "line 10".
    pub sectors: String,
    pub line: String,
}

/// Seed 002's picture of one global access: the lines and sectors the warp's lanes touch.
#[derive(Clone, Debug, PartialEq)]
pub struct CoalescingMap {
    pub lines: Vec<LineOfSectors>,
    pub lanes: Vec<LaneBytes>,
    pub requests: u32,
    pub sectors: u32,
    pub sectors_per_request: f64,
    /// Useful bytes over moved bytes, 0 to 1.
    pub efficiency: f64,
}

/// The buffer `address` lies in, and the offset in it; `None` outside every buffer.
fn in_buffer(address: u64, buffers: &[TraceBuffer]) -> Option<(&TraceBuffer, u64)> {
    buffers
        .iter()
        .find(|b| address >= b.base && address - b.base < b.size.max(1))
        .map(|b| (b, address - b.base))
}

/// An address as "in + 1,280 B", or in hexadecimal where it is in no buffer.
fn place(address: u64, buffers: &[TraceBuffer]) -> String {
    match in_buffer(address, buffers) {
        Some((buffer, offset)) => {
            format!("{} + {} B", buffer.name, format_number(offset as f64))
        }
        None => format!("{address:#x}"),
    }
}

/// Sector and line numbers count from the start of the address's buffer (buffers start on a
/// 256-byte boundary, so the numbering does not shift the boundaries).
fn origin(address: u64, buffers: &[TraceBuffer]) -> u64 {
    in_buffer(address, buffers).map_or(0, |(buffer, _)| buffer.base)
}

const SECTORS_PER_LINE: u64 = LINE_BYTES / SECTOR_BYTES;

/// The cell of `sector` among `lines` (128-byte lines by number, in order), its line added if
/// it is not there yet.
fn sector_cell(lines: &mut Vec<(u64, [SectorCell; 4])>, sector: u64) -> &mut SectorCell {
    let line = sector / SECTORS_PER_LINE;
    let place = match lines.binary_search_by_key(&line, |(l, _)| *l) {
        Ok(place) => place,
        Err(place) => {
            lines.insert(place, (line, Default::default()));
            place
        }
    };
    &mut lines[place].1[(sector % SECTORS_PER_LINE) as usize]
}

/// Lays one global access out as its lines and sectors.
pub fn coalescing_map(
    access: &WarpAccess,
    device: &Device,
    buffers: &[TraceBuffer],
) -> CoalescingMap {
    let width = u64::from(access.width.bytes()).max(1);
    // The lines touched, in address order, with the lanes in each of their sectors.
    let mut lines: Vec<(u64, [SectorCell; 4])> = Vec::new();
    let mut lanes = Vec::new();
    for (lane, address) in access.active_lanes() {
        let last = address.saturating_add(width - 1);
        for sector in address / SECTOR_BYTES..=last / SECTOR_BYTES {
            sector_cell(&mut lines, sector).lanes.push(lane);
        }
        let base = origin(address, buffers);
        let sector_of = |a: u64| (a - base.min(a)) / SECTOR_BYTES;
        let sectors = if sector_of(address) == sector_of(last) {
            format!("sector {}", sector_of(address))
        } else {
            format!("sectors {}–{}", sector_of(address), sector_of(last))
        };
        lanes.push(LaneBytes {
            lane,
            address: place(address, buffers),
            sectors,
            line: format!("line {}", (address - base.min(address)) / LINE_BYTES),
        });
    }
    // The transactions of the analysis the counters use: the sectors they cover are moved.
    let (mut transactions, mut bytes_moved) = (0u64, 0u64);
    let requests = coalescing::each_transaction(access, device, |transaction| {
        transactions += 1;
        bytes_moved += u64::from(transaction.bytes);
        let end = transaction
            .address
            .saturating_add(u64::from(transaction.bytes).max(1));
        let mut sector = transaction.address / SECTOR_BYTES;
        while sector * SECTOR_BYTES < end {
            sector_cell(&mut lines, sector).moved = true;
            sector += 1;
        }
    });
    let sectors = coalescing::sectors_of(device, transactions, bytes_moved);
    let bytes_requested = u64::from(access.n_active()) * width;
    CoalescingMap {
        lines: lines
            .into_iter()
            .map(|(line, sectors)| LineOfSectors {
                place: place(line * LINE_BYTES, buffers),
                sectors: sectors.into(),
            })
            .collect(),
        lanes,
        requests,
        sectors,
        sectors_per_request: if requests > 0 {
            f64::from(sectors) / f64::from(requests)
        } else {
            0.0
        },
        efficiency: if bytes_moved == 0 {
            1.0
        } else {
            (bytes_requested as f64 / bytes_moved as f64).min(1.0)
        },
    }
}

/// The text of one sector cell: its lanes, their count where the list is long, or nothing.
pub fn sector_text(cell: &SectorCell) -> String {
    let list = lane_list(&cell.lanes);
    if list.split(", ").count() > 2 {
        format!("{} lanes", cell.lanes.len())
    } else {
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplay_sim::access::AccessWidth;
    use memplay_sim::device::{gt200, h100};
    use memplay_sim::kernel::{Dim3, Span, Value};
    use memplay_sim::lesson_kernels::{COALESCING, TRANSPOSE};
    use memplay_sim::simulate::simulate;

    /// What the view shows for the launch `input` when the row on `line` of this space and kind
    /// is picked, at its first execution: the row's words (access, what, count, cost, verdict),
    /// the stepper's words, and the map's headline (the bank map's degree, or the sectors per
    /// request and the lines' places).
    fn check(
        input: &SimulationInput,
        line: u32,
        space: Space,
        kind: AccessKind,
        expected_row: [&str; 5],
        expected_step: &str,
        expected_map: &str,
    ) {
        let report = simulate(input).expect("the launch simulates");
        let site = line_view(input, &report, None, 0)
            .rows
            .iter()
            .map(|row| row.site)
            .find(|s| s.span.line == line && s.space == space && s.kind == kind)
            .unwrap_or_else(|| panic!("no row for line {line}: {:?}", report.lines));
        let view = line_view(input, &report, Some(site), 0);
        let row = &view.rows[view.picked.expect("a row is picked")];
        assert_eq!(
            [
                row.access.as_str(),
                &row.what,
                &row.count,
                &row.cost,
                &row.verdict
            ],
            expected_row
        );
        assert_eq!(step_text(view.step, view.steps), expected_step);
        let map = match view.map.expect("the warp makes the access") {
            AccessMap::Banks(report) => report.degree_label(),
            AccessMap::Sectors(map) => format!(
                "{} sectors per request in {}",
                per_request_text(map.sectors_per_request),
                map.lines
                    .iter()
                    .map(|l| l.place.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        assert_eq!(map, expected_map);
    }

    /// The strided copy of seeds 001/002, 2,048 floats in blocks of 256, warp 0 of block 0.
    fn strided_copy(stride: u32) -> SimulationInput {
        let mut input = SimulationInput::new(COALESCING, "strided_copy", h100());
        input.grid = Dim3::new(8, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.args = vec![
            ("stride".to_string(), Value::Int(i64::from(stride))),
            ("n_out".to_string(), Value::Int(2048)),
        ];
        input.buffers = vec![
            ("out".to_string(), 2048 * 4),
            ("in".to_string(), 2048 * 4 * u64::from(stride)),
        ];
        input.trace = Some(trace_request([0, 0], 0, &input));
        input
    }

    /// The shared-tile transpose of a 128 x 128 matrix, warp 0 of block 0.
    fn transpose_shared(pad: u32) -> SimulationInput {
        let mut input = SimulationInput::new(TRANSPOSE, "tr_shared", h100());
        input.defines = vec![("PAD".to_string(), pad.to_string())];
        input.grid = Dim3::new(4, 4, 1);
        input.block = Dim3::new(32, 8, 1);
        input.args = vec![("n".to_string(), Value::Int(128))];
        input.buffers = vec![
            ("out".to_string(), 128 * 128 * 4),
            ("in".to_string(), 128 * 128 * 4),
        ];
        input.trace = Some(trace_request([0, 0], 0, &input));
        input
    }

    #[test]
    fn stride_one_copy_reads_one_line_in_4_sectors() {
        check(
            &strided_copy(1),
            4,
            Space::Global,
            AccessKind::Load,
            [
                "in[(size_t)i * stride]",
                "global load",
                "64 requests",
                "256 sectors",
                "4 sectors per request",
            ],
            "execution 1 of 1",
            "4 sectors per request in in + 0 B",
        );
    }

    #[test]
    fn stride_32_copy_reads_a_line_per_lane_in_32_sectors() {
        let lines: Vec<String> = (0..32)
            .map(|lane| format!("in + {} B", format_number(f64::from(lane * 128))))
            .collect();
        check(
            &strided_copy(32),
            4,
            Space::Global,
            AccessKind::Load,
            [
                "in[(size_t)i * stride]",
                "global load",
                "64 requests",
                "2,048 sectors",
                "32 sectors per request",
            ],
            "execution 1 of 1",
            &format!("32 sectors per request in {}", lines.join(", ")),
        );
    }

    #[test]
    fn column_read_of_an_unpadded_tile_is_32_way_conflict() {
        check(
            &transpose_shared(0),
            23,
            Space::Shared,
            AccessKind::Load,
            [
                "tile[threadIdx.x][threadIdx.y + j]",
                "shared load",
                "512 instructions",
                "16,384 wavefronts",
                "32-way conflict",
            ],
            "execution 1 of 4",
            "32-way",
        );
    }

    #[test]
    fn one_word_of_padding_removes_the_column_reads_conflict() {
        check(
            &transpose_shared(1),
            23,
            Space::Shared,
            AccessKind::Load,
            [
                "tile[threadIdx.x][threadIdx.y + j]",
                "shared load",
                "512 instructions",
                "512 wavefronts",
                "no conflict",
            ],
            "execution 1 of 4",
            "no conflict",
        );
    }

    #[test]
    fn stride_two_is_two_way_conflict_and_mixed_degrees_average() {
        assert_eq!(degree_text(2.0), "2-way conflict");
        assert_eq!(degree_text(1.0), "no conflict");
        assert_eq!(degree_text(2.5), "2.5-way conflict on average");
        assert_eq!(per_request_text(4.0), "4");
        assert_eq!(per_request_text(5.25), "5.2");
    }

    #[test]
    fn a_warp_from_the_middle_of_a_line_on_gt200_moves_two_64_byte_segments() {
        // cc 1.3's segment rule (seed 002, "CC 1.x: more restrictive"): 32 floats from byte 64
        // of `in` are one request per half-warp, each half a 128-byte line: two 64-byte segments.
        let buffers = [TraceBuffer {
            name: "in".to_string(),
            base: 256,
            size: 1024,
        }];
        let access =
            WarpAccess::from_fn(Space::Global, AccessKind::Load, AccessWidth::FOUR, |lane| {
                Some(256 + 64 + 4 * u64::from(lane))
            });
        let map = coalescing_map(&access, &gt200(), &buffers);
        assert_eq!((map.requests, map.sectors), (2, 4));
        let counted = coalescing::analyze(&access, &gt200());
        assert_eq!((counted.requests, counted.sectors), (2, 4));
        assert_eq!(map.lines.len(), 2);
        let moved: Vec<bool> = map.lines[0].sectors.iter().map(|s| s.moved).collect();
        assert_eq!(moved, [false, false, true, true]);
        assert_eq!(sector_text(&map.lines[0].sectors[2]), "0–7");
        assert_eq!(
            map.lanes[31],
            LaneBytes {
                lane: 31,
                address: "in + 188 B".to_string(),
                sectors: "sector 5".to_string(),
                line: "line 1".to_string(),
            }
        );
    }

    #[test]
    fn the_costliest_load_is_picked_until_the_student_picks_one_still_in_the_table() {
        let report = simulate(&transpose_shared(0)).expect("it simulates");
        let rows = rows(&report, TRANSPOSE);
        // The column read of the unpadded tile, every lane in one bank.
        let column = picked(&rows, None).expect("a row");
        assert_eq!(rows[column].what, "shared load");
        assert_eq!(rows[column].verdict, "32-way conflict");
        let other = (column + 1) % rows.len();
        assert_eq!(picked(&rows, Some(rows[other].site)), Some(other));
        let gone = AccessSite {
            span: Span::default(),
            ..rows[3].site
        };
        assert_eq!(picked(&rows, Some(gone)), Some(column));
        assert_eq!(picked(&[], Some(gone)), None);
        assert_eq!(step_text(1, 4), "execution 2 of 4");
        assert_eq!(step_text(9, 4), "execution 4 of 4");
        assert_eq!(step_text(0, 0), "this warp does not make this access");
    }

    #[test]
    fn the_strided_copy_opens_on_its_load_whose_sectors_the_stride_moves() {
        // The map opened on the store, "4 sectors per request" at every stride.
        let verdict = |stride: u32| {
            let report = simulate(&strided_copy(stride)).expect("it simulates");
            let rows = rows(&report, COALESCING);
            let row = &rows[picked(&rows, None).expect("a row")];
            assert_eq!(row.what, "global load");
            row.verdict.clone()
        };
        assert_eq!(verdict(1), "4 sectors per request");
        assert_eq!(verdict(32), "32 sectors per request");
    }

    #[test]
    fn a_picked_warp_beyond_the_launch_is_brought_inside_it() {
        let input = transpose_shared(0);
        assert_eq!(
            trace_request([9, 2], 30, &input),
            TraceRequest {
                block: [3, 2, 0],
                warp: 7
            }
        );
    }
}
