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
//!
//! Every label of a shared access (the table's words, the maps' headlines, the counters' degree
//! row) reads its conflict degree from one function, `conflict_degree`: wavefronts over the
//! conflict-free ideal. Where nvcc fused a load (`compile_effects`), its row and map say so and
//! name the degree of the loads as written. The view opens on the access furthest from its
//! ideal (`focus`), which is the one the lessons' controls move; `access_statements` is what the
//! view says, for the host tests.

use crate::format::format_number;
use crate::model::{explain, lane_list};
#[cfg(test)]
use crate::statements::{Claim, Statement};
use memplay_sim::access::{AccessKind, AccessWidth, Space, WarpAccess};
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
    /// How far the access is from its ideal: the conflict degree of a shared access, a global
    /// access's sectors per request over the 4 of a warp reading consecutive floats (at least
    /// 1). The view opens on the row where this is largest (`focus`).
    pub excess: f64,
    /// Wavefronts per warp instruction (shared) or sectors per request (global).
    pub per_instruction: f64,
    /// What nvcc's load fusion did to this load, where it fused it.
    pub fusion: Option<Fusion>,
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

/// The n of an "n-way bank conflict": the wavefronts an access took over the wavefronts the
/// same bytes take without a conflict (1 for none; 0 where there is no ideal, for an access with
/// no active lane). Every label of a shared access reads its degree from here: the per-line
/// table, the bank maps' headlines, the counters' degree row (the same quotient of Nsight
/// Compute's wavefronts and bank conflicts), so no two of them can name different degrees.
///
/// The ideal is what the bytes need, not one wavefront per instruction: a 128-bit load of 32
/// lanes needs 4 wavefronts with no conflict, and a half-warp-served G80 load 2.
pub fn conflict_degree(wavefronts: f64, ideal: f64) -> f64 {
    if ideal > 0.0 {
        wavefronts / ideal
    } else {
        0.0
    }
}

/// A conflict degree as the bank maps' headlines say it: "no conflict", "32-way", and one
/// decimal where the launch averages accesses of different degrees ("2.5-way on average").
pub fn degree_label(degree: f64) -> String {
    if degree <= 1.0 + 1e-9 {
        "no conflict".to_string()
    } else if (degree - degree.round()).abs() < 1e-9 {
        format!("{}-way", degree.round())
    } else {
        format!("{degree:.1}-way on average")
    }
}

/// A conflict degree as the per-line table says it: "no conflict", "32-way conflict", "2.5-way
/// conflict on average".
pub fn degree_text(degree: f64) -> String {
    let label = degree_label(degree);
    match label.strip_suffix(" on average") {
        _ if degree <= 1.0 + 1e-9 => label,
        Some(average) => format!("{average} conflict on average"),
        None => format!("{label} conflict"),
    }
}

/// The degree a label names, read back from its words: 1 for "no conflict", n for "n-way"
/// (rounded where the label gives an average). The statements carry this, so a check compares
/// what the student reads, not what the code meant.
#[cfg(test)]
pub fn degree_in_words(label: &str) -> Option<u32> {
    if label.starts_with("no conflict") {
        return Some(1);
    }
    let (number, _) = label.split_once("-way")?;
    number.parse::<f64>().ok().map(|n| n.round() as u32)
}

/// The degree of one traced or drawn shared access, through `conflict_degree`.
pub fn bank_degree(report: &BankReport) -> f64 {
    conflict_degree(
        f64::from(report.wavefronts),
        f64::from(report.ideal_wavefronts),
    )
}

/// The words over a bank map, the pattern explorer's and the per-line view's alike: its degree,
/// its wavefronts against the ideal, and the sentence that says why.
#[derive(Clone, Debug, PartialEq)]
pub struct BankWords {
    /// "32-way", "no conflict".
    pub degree: String,
    pub bad: bool,
    /// "32 wavefronts (ideal 1)".
    pub wavefronts: String,
    pub explain: String,
}

pub fn bank_words(report: &BankReport) -> BankWords {
    let degree = bank_degree(report);
    BankWords {
        degree: degree_label(degree),
        bad: degree > 1.0 + 1e-9,
        wavefronts: format!(
            "{} (ideal {})",
            plural(f64::from(report.wavefronts), "wavefront", "wavefronts"),
            report.ideal_wavefronts
        ),
        explain: explain(report),
    }
}

/// What one bank map says, as statements: its degree and wavefronts as the labels of one access
/// (`site` names it), and its sentence. `per_fused_load` is 1 unless nvcc fused the loads.
#[cfg(test)]
pub fn bank_statements(
    view: &'static str,
    site: &str,
    report: &BankReport,
    per_fused_load: u32,
) -> Vec<Statement> {
    let words = bank_words(report);
    vec![
        Statement {
            view,
            text: format!("Bank conflict: {}; {}", words.degree, words.wavefronts),
            claim: Claim::Access {
                site: site.to_string(),
                degree_in_words: degree_in_words(&words.degree).unwrap_or(0),
                wavefronts_per_instruction: f64::from(report.wavefronts),
                per_fused_load,
            },
        },
        Statement::words(view, words.explain),
    ]
}

/// Everything the per-line view says about the accesses it shows: for every shared row the
/// labels of that access (the degree its words name, its wavefronts per instruction, and how
/// many of the source's loads one fused load serves, with the words that say so), for every
/// global row its sectors per request, and the picked access's map.
#[cfg(test)]
pub fn access_statements(view: &LineView) -> Vec<Statement> {
    const VIEW: &str = "lines";
    let mut statements = Vec::new();
    for row in &view.rows {
        let site = format!("line {}: {}", row.site.span.line, row.access);
        match (row.site.space, row.site.kind) {
            (Space::Shared, AccessKind::Atomic) => {}
            (Space::Shared, _) => {
                let mut text = row.verdict.clone();
                if let Some(fusion) = &row.fusion {
                    text = format!("{text} ({})", fusion.words());
                }
                statements.push(Statement {
                    view: VIEW,
                    text,
                    claim: Claim::Access {
                        site,
                        degree_in_words: degree_in_words(&row.verdict).unwrap_or(0),
                        wavefronts_per_instruction: row.per_instruction,
                        per_fused_load: row.fusion.as_ref().map_or(1, |f| f.per_fused_load),
                    },
                });
            }
            _ => statements.push(Statement::figure(
                VIEW,
                format!("{site}, sectors per request"),
                row.per_instruction,
                row.verdict.clone(),
            )),
        }
    }
    if let (Some(row), Some(map)) = (view.picked.map(|i| &view.rows[i]), &view.map) {
        let site = format!("line {}: {}", row.site.span.line, row.access);
        match map {
            AccessMap::Banks(report) => statements.extend(bank_statements(
                "line map",
                &site,
                report,
                row.fusion.as_ref().map_or(1, |f| f.per_fused_load),
            )),
            AccessMap::Sectors(map) => statements.push(Statement::figure(
                "line map",
                format!("{site}, sectors per request of one execution"),
                map.sectors_per_request,
                format!(
                    "Sectors per request: {}",
                    per_request_text(map.sectors_per_request)
                ),
            )),
        }
    }
    statements
}

/// What nvcc's load fusion did to one shared load of the source (`compile_effects`): how many
/// of the source's loads one executed load serves, its width, and the degree the source's own
/// loads have, one element at a time, which is the number the lectures reason with.
#[derive(Clone, Debug, PartialEq)]
pub struct Fusion {
    pub per_fused_load: u32,
    pub load_bits: u32,
    /// The conflict degree of the traced warp's executions split back into the loads as
    /// written; `None` where the traced warp does not make the access.
    pub degree_as_written: Option<f64>,
}

impl Fusion {
    /// The words beside the degree: "nvcc fuses 4 of these loads into one 128-bit load; as
    /// written, one float at a time, it is 32-way".
    pub fn words(&self) -> String {
        let fused = format!(
            "nvcc fuses {} of these loads into one {}-bit load",
            self.per_fused_load, self.load_bits
        );
        match self.degree_as_written {
            Some(degree) if degree <= 1.0 + 1e-9 => {
                format!("{fused}; as written, one load at a time, it has no conflict")
            }
            Some(degree) => format!(
                "{fused}; as written, one load at a time, it is {}",
                degree_label(degree)
            ),
            None => fused,
        }
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

fn row(source: &str, line: &LineCounters, fusion: Option<Fusion>) -> LineRow {
    let site = line.site;
    let per = |of: f64, per: f64| if per > 0.0 { of / per } else { 0.0 };
    let (count, cost, verdict, bad, excess, per_instruction) = match (site.space, site.kind) {
        (Space::Shared, AccessKind::Atomic) => (
            plural(line.instructions, "instruction", "instructions"),
            String::new(),
            String::new(),
            false,
            1.0,
            0.0,
        ),
        (Space::Shared, _) => {
            let degree = conflict_degree(line.wavefronts, line.wavefronts - line.bank_conflicts);
            (
                plural(line.instructions, "instruction", "instructions"),
                plural(line.wavefronts, "wavefront", "wavefronts"),
                degree_text(degree),
                degree > 1.0 + 1e-9,
                degree.max(1.0),
                per(line.wavefronts, line.instructions),
            )
        }
        _ => {
            let per_request = line.sectors_per_request();
            (
                plural(line.requests, "request", "requests"),
                plural(line.sectors, "sector", "sectors"),
                format!("{} sectors per request", per_request_text(per_request)),
                per_request > 4.0 + 1e-9,
                (per_request / 4.0).max(1.0),
                per_request,
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
        excess,
        per_instruction,
        fusion,
    }
}

/// What fusion did to `site` over the launch, with the degree its loads have as written, from
/// the traced warp's executions of it (`records`).
fn fusion_of(
    report: &SimulationReport,
    site: AccessSite,
    records: &[TraceRecord],
) -> Option<Fusion> {
    let fused = report.fused_loads.iter().find(|f| f.span == site.span)?;
    if site.space != Space::Shared || site.kind != AccessKind::Load {
        return None;
    }
    let per_fused_load = if fused.loads_as_compiled > 0.0 {
        (fused.loads_as_written / fused.loads_as_compiled).round() as u32
    } else {
        1
    };
    if per_fused_load <= 1 || fused.widest_bytes == 0 {
        return None;
    }
    let element = (fused.widest_bytes / per_fused_load).max(1);
    let (mut wavefronts, mut ideal) = (0u64, 0u64);
    for record in executions(records, site) {
        for access in as_written(&record.access(), element) {
            let count = banks::wavefronts(&access, &report.device);
            wavefronts += u64::from(count.wavefronts);
            ideal += u64::from(count.ideal_wavefronts);
        }
    }
    Some(Fusion {
        per_fused_load,
        load_bits: fused.widest_bytes * 8,
        degree_as_written: (ideal > 0).then(|| conflict_degree(wavefronts as f64, ideal as f64)),
    })
}

/// A fused load split back into the loads of `element` bytes that the source makes: the first
/// element of every lane, then the second, and so on, as the unfused loop reads them.
fn as_written(access: &WarpAccess, element: u32) -> Vec<WarpAccess> {
    let parts = (access.width.bytes() / element).max(1);
    let Ok(width) = AccessWidth::new(element) else {
        return vec![*access];
    };
    (0..parts)
        .map(|part| {
            WarpAccess::from_fn(access.space, access.kind, width, |lane| {
                access.lanes[lane as usize].map(|address| address + u64::from(part * element))
            })
        })
        .collect()
}

/// The table's rows, in source order: the report's shared and global access sites.
pub fn rows(report: &SimulationReport, source: &str) -> Vec<LineRow> {
    let records = report
        .trace
        .as_ref()
        .map_or(&[][..], |trace| &trace.records[..]);
    report
        .lines
        .iter()
        .map(|line| row(source, line, fusion_of(report, line.site, records)))
        .collect()
}

/// The row the view opens on: the access furthest from its ideal (the worst conflict degree, or
/// the most sectors per request over the 4 of consecutive floats), so that the map shows what
/// the lesson's controls change. Where several are as far, loads come before stores (the
/// lectures' pictures are of reads), shared accesses before global ones (a kernel that stages
/// through shared memory is there for its banks), then source order. The rule keeps its pick
/// while a control turns the bad case into a good one: the transpose's column read is picked
/// at PAD 0, 32-way, and at PAD 1, where every access has no conflict, as the first shared load.
pub fn focus(rows: &[LineRow]) -> Option<usize> {
    let key = |row: &LineRow| {
        (
            row.excess,
            row.site.kind == AccessKind::Load,
            row.site.space == Space::Shared,
        )
    };
    let mut best: Option<usize> = None;
    for (i, row) in rows.iter().enumerate() {
        let better = best.is_none_or(|b| {
            let (a, b) = (key(row), key(&rows[b]));
            a.0 > b.0 + 1e-9 || ((a.0 - b.0).abs() <= 1e-9 && (a.1, a.2) > (b.1, b.2))
        });
        if better {
            best = Some(i);
        }
    }
    best
}

/// Which row is picked: the one the student picked, while it is in the table, or the one the
/// view opens on: the access the lesson names (`opens_on`, its code as the source writes it,
/// spaces aside), or else the costliest (`focus`).
pub fn picked(rows: &[LineRow], site: Option<AccessSite>, opens_on: Option<&str>) -> Option<usize> {
    let plain = |code: &str| code.split_whitespace().collect::<String>();
    site.and_then(|site| rows.iter().position(|row| row.site == site))
        .or_else(|| {
            let code = plain(opens_on?);
            rows.iter().position(|row| plain(&row.access) == code)
        })
        .or_else(|| focus(rows))
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
    opens_on: Option<&str>,
    step: usize,
) -> LineView {
    let rows = rows(report, &input.source);
    let picked = picked(&rows, site, opens_on);
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
    use crate::components::kernel_view::{counter_rows, counter_statements};

    use crate::model::bank_grid;
    use crate::state::State;
    use memplay_sim::access::AccessWidth;
    use memplay_sim::compile_effects::CompileEffects;
    use memplay_sim::device::{gt200, h100};
    use memplay_sim::kernel::{Dim3, Span, Value};
    use memplay_sim::lesson_kernels::{COALESCING, TRANSPOSE};
    use memplay_sim::simulate::simulate;
    use memplay_sim::DeviceId;

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
        let site = line_view(input, &report, None, None, 0)
            .rows
            .iter()
            .map(|row| row.site)
            .find(|s| s.span.line == line && s.space == space && s.kind == kind)
            .unwrap_or_else(|| panic!("no row for line {line}: {:?}", report.lines));
        let view = line_view(input, &report, Some(site), None, 0);
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
    fn the_worst_row_is_picked_until_the_student_picks_one_still_in_the_table() {
        let report = simulate(&transpose_shared(0)).expect("it simulates");
        let rows = rows(&report, TRANSPOSE);
        // Row 3 is the 32-way column read; row 0 the conflict-free row write.
        assert_eq!(rows[3].verdict, "32-way conflict");
        assert_eq!(picked(&rows, None, None), Some(3));
        assert_eq!(picked(&rows, Some(rows[0].site), None), Some(0));
        let gone = AccessSite {
            span: Span::default(),
            ..rows[0].site
        };
        assert_eq!(picked(&rows, Some(gone), None), Some(3));
        assert_eq!(picked(&[], Some(gone), None), None);
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
            let row = &rows[picked(&rows, None, None).expect("a row")];
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
    /// The page's launch of `state`, with warp 0 of block 0 traced as the page traces it.
    fn page_launch(state: &State) -> (SimulationInput, SimulationReport) {
        let mut input = state.launch();
        input.trace = Some(trace_request([0, 0], 0, &input));
        let report = simulate(&input).expect("the lesson's launch simulates");
        (input, report)
    }

    /// The number a counters row shows, by its label.
    fn counter(report: &SimulationReport, label: &str) -> String {
        counter_rows(report)
            .into_iter()
            .find(|row| row.0 == label)
            .unwrap_or_else(|| panic!("no counters row {label}"))
            .2
    }

    /// The banks a bank map shows busy for more than one wavefront in one phase, the most of
    /// any phase.
    fn busiest_banks_per_phase(report: &BankReport) -> usize {
        bank_grid(report)
            .iter()
            .map(|grid| {
                let most = grid.cycles_per_bank.iter().copied().max().unwrap_or(0);
                grid.cycles_per_bank.iter().filter(|&&c| c == most).count()
            })
            .max()
            .unwrap_or(0)
    }

    /// The n of "n banks each hold" in a bank map's sentence, where it says so.
    fn banks_in_words(sentence: &str) -> Option<usize> {
        let (before, _) = sentence.split_once(" banks each hold")?;
        before.rsplit(' ').next()?.parse().ok()
    }

    /// Every label of every shared load of `state`'s launch names one degree: the per-line
    /// table's words, its wavefronts per instruction over the access's ideal, the picked map's
    /// headline, the map's sentence's count of busy banks against the banks the map draws busy,
    /// the counters' degree where the kernel has one shared load, and, where nvcc fused the
    /// load, the as-written degree its words name against the same launch as written.
    fn labels_agree(state: &State) {
        let (input, report) = page_launch(state);
        let shared_loads: Vec<&LineCounters> = report
            .lines
            .iter()
            .filter(|l| l.site.space == Space::Shared && l.site.kind == AccessKind::Load)
            .collect();
        let table = rows(&report, &input.source);
        for line in &shared_loads {
            let context = format!(
                "{:?} {:?} line {}",
                state, line.site.kind, line.site.span.line
            );
            let view = line_view(&input, &report, Some(line.site), None, 0);
            let row = &view.rows[view.picked.expect("picked")];
            let degree = conflict_degree(line.wavefronts, line.wavefronts - line.bank_conflicts);
            let named = degree_in_words(&row.verdict).expect("the verdict names a degree");
            assert_eq!(f64::from(named), degree.round().max(1.0), "{context}");
            let ideal_per_instruction = (line.wavefronts - line.bank_conflicts) / line.instructions;
            assert!(
                (row.per_instruction / ideal_per_instruction - degree).abs() < 1e-9,
                "{context}"
            );
            let statements = access_statements(&view);
            let degrees: Vec<u32> = statements
                .iter()
                .filter_map(|s| match &s.claim {
                    Claim::Access {
                        site,
                        degree_in_words,
                        ..
                    } if site
                        .starts_with(&format!("line {}: {}", row.site.span.line, row.access)) =>
                    {
                        Some(*degree_in_words)
                    }
                    _ => None,
                })
                .collect();
            // The row and its map, both naming the same degree.
            assert_eq!(degrees, [named, named], "{context}: {statements:?}");
            if let Some(AccessMap::Banks(map)) = &view.map {
                let words = bank_words(map);
                if let Some(banks) = banks_in_words(&words.explain) {
                    assert_eq!(
                        banks,
                        busiest_banks_per_phase(map),
                        "{context}: {}",
                        words.explain
                    );
                }
            }
            if shared_loads.len() == 1 {
                let counted = counter_statements(&report)
                    .into_iter()
                    .find_map(|s| match s.claim {
                        Claim::Figure { label, value }
                            if label
                                == "bank conflict degree of shared loads (1 = no conflict)" =>
                        {
                            Some(value)
                        }
                        _ => None,
                    })
                    .expect("the counters' degree");
                assert!((counted - degree).abs() < 1e-9, "{context}");
                let shown = counter(
                    &report,
                    "bank conflict degree of shared loads (1 = no conflict)",
                );
                assert_eq!(shown, format!("{degree:.2}"), "{context}");
            }
            match &row.fusion {
                Some(fusion) => {
                    assert!(state.compile.fuse_shared_loads, "{context}");
                    let written = State {
                        compile: CompileEffects::AS_WRITTEN,
                        ..state.clone()
                    };
                    let (input, report) = page_launch(&written);
                    let as_written = rows(&report, &input.source)
                        .into_iter()
                        .find(|r| r.site == row.site)
                        .expect("the same load as written");
                    assert!(as_written.fusion.is_none(), "{context}");
                    assert_eq!(
                        fusion.degree_as_written.map(degree_label),
                        Some(degree_label(as_written.excess)),
                        "{context}"
                    );
                }
                None => {
                    assert!(
                        report.fused_loads.iter().all(|f| f.span != row.site.span
                            || f.loads_as_written == f.loads_as_compiled),
                        "{context}"
                    )
                }
            }
        }
        assert!(!table.is_empty());
    }

    #[test]
    fn every_label_of_a_shared_access_names_one_degree_on_the_h100_and_the_g80() {
        let variants = [
            crate::lessons::variant("bank-conflicts", "row-per-thread"),
            crate::lessons::variant("bank-conflicts", "stride"),
            crate::lessons::variant("bank-conflicts", "transpose"),
            crate::lessons::variant("bank-conflicts", "swizzle"),
            crate::lessons::variant("tiled-matmul", "tiled"),
        ];
        for variant in variants {
            for device in [DeviceId::H100, DeviceId::G80] {
                for compile in [CompileEffects::AS_COMPILED, CompileEffects::AS_WRITTEN] {
                    for pad in [0, 1] {
                        for stride in [1, 2, 32] {
                            if stride != 1
                                && variant != crate::lessons::variant("bank-conflicts", "stride")
                            {
                                continue;
                            }
                            labels_agree(&State {
                                variant,
                                device,
                                compile,
                                pad,
                                stride,
                                ..State::default()
                            });
                        }
                    }
                }
            }
        }
    }

    /// The shared load on `line` of `state`'s launch as the page opens it there: the table's
    /// verdict, its fusion words, the map's headline and sentence, and the counters' degree.
    fn shared_load_words(state: &State, line: u32) -> [String; 5] {
        let (input, report) = page_launch(state);
        let site = report
            .lines
            .iter()
            .map(|l| l.site)
            .find(|s| s.span.line == line && s.space == Space::Shared && s.kind == AccessKind::Load)
            .expect("the shared load");
        let view = line_view(&input, &report, Some(site), None, 0);
        let row = &view.rows[view.picked.expect("picked")];
        let Some(AccessMap::Banks(map)) = &view.map else {
            panic!("a bank map");
        };
        let words = bank_words(map);
        [
            row.verdict.clone(),
            row.fusion.as_ref().map(Fusion::words).unwrap_or_default(),
            words.degree,
            words.explain,
            counter(
                &report,
                "bank conflict degree of shared loads (1 = no conflict)",
            ),
        ]
    }

    #[test]
    fn the_row_per_thread_read_fused_into_128_bit_loads_is_8_way_and_says_it_is_32_way_as_written()
    {
        let state = State {
            variant: crate::lessons::variant("bank-conflicts", "row-per-thread"),
            ..State::default()
        };
        assert_eq!(
            shared_load_words(&state, 28),
            [
                "8-way conflict",
                "nvcc fuses 4 of these loads into one 128-bit load; as written, one load at a \
                 time, it is 32-way",
                "8-way",
                "In each half-warp, 4 banks each hold 16 different words that lanes want (bank 0 \
                 holds words for 16 lanes): each bank serves one word per cycle, so the access \
                 takes 32 wavefronts instead of 4.",
                "8.00",
            ]
            .map(String::from)
        );
        let written = State {
            compile: CompileEffects::AS_WRITTEN,
            ..state
        };
        assert_eq!(shared_load_words(&written, 28)[0], "32-way conflict");
        assert_eq!(shared_load_words(&written, 28)[4], "32.00");
    }

    #[test]
    fn the_tiled_matmuls_row_read_on_the_g80_is_4_way_as_compiled_and_says_it_has_none_as_written()
    {
        let state = State {
            variant: crate::lessons::variant("tiled-matmul", "tiled"),
            device: DeviceId::G80,
            ..State::default()
        };
        let [verdict, fusion, degree, _, _] = shared_load_words(&state, 29);
        assert_eq!(
            [verdict, fusion, degree],
            [
                "4-way conflict",
                "nvcc fuses 4 of these loads into one 128-bit load; as written, one load at a \
                 time, it has no conflict",
                "4-way",
            ]
            .map(String::from)
        );
    }

    #[test]
    fn the_coalescing_lessons_map_opens_on_the_strided_load_whose_sectors_the_stride_moves() {
        let opened = |stride: u32| {
            let state = State {
                variant: crate::lessons::lesson("coalescing").variants()[0],
                stride,
                ..State::default()
            };
            let (input, report) = page_launch(&state);
            let view = line_view(&input, &report, None, None, 0);
            let row = &view.rows[view.picked.expect("a row is open")];
            let Some(AccessMap::Sectors(map)) = &view.map else {
                panic!("a sector map");
            };
            (
                row.access.clone(),
                row.what.clone(),
                map.sectors_per_request,
            )
        };
        assert_eq!(
            opened(1),
            (
                "in[(size_t)i * stride]".to_string(),
                "global load".to_string(),
                4.0
            )
        );
        assert_eq!(
            opened(32),
            (
                "in[(size_t)i * stride]".to_string(),
                "global load".to_string(),
                32.0
            )
        );
    }

    #[test]
    fn the_bank_lessons_map_opens_on_the_column_read_that_padding_frees() {
        let opened = |pad: u32| {
            let state = State {
                variant: crate::lessons::lesson("bank-conflicts").variants()[0],
                pad,
                ..State::default()
            };
            let (input, report) = page_launch(&state);
            let view = line_view(&input, &report, None, None, 0);
            let row = &view.rows[view.picked.expect("a row is open")];
            let Some(AccessMap::Banks(map)) = &view.map else {
                panic!("a bank map");
            };
            (row.access.clone(), bank_words(map).degree)
        };
        let column = "tile[threadIdx.x][threadIdx.y + j]".to_string();
        assert_eq!(opened(0), (column.clone(), "32-way".to_string()));
        assert_eq!(opened(1), (column, "no conflict".to_string()));
    }
}
