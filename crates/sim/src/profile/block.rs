//! One block's records, as the interpreter emits them (`BlockProfiler`): the sectors each buffer
//! has read and written with their bytes, the lines and passes of the requests, the round trips
//! of each warp, the updates of the atomics, and the DRAM rows (`rows`). A global access is
//! measured into its shape (`shape`) and placed: what depends on where it lies (the sectors new
//! to the block, the round trips they end) is counted at its place. `grid` sums the blocks.

use super::rows::RowStreams;
use super::shape::{
    halves_clash, load_wavefronts, shape_move_bytes, CopyKind, Issue, LikeShapes, LineSet,
    RecordShape,
};
use super::{Footprint, TouchedSectors, DRAM_ATOM_BYTES, LOADS_IN_FLIGHT_PER_SITE};
use crate::access::{AccessKind, Space, WarpAccess};
use crate::coalescing::{self, LINE_BYTES, SECTOR_BYTES};
use crate::device::Device;
use crate::hashing::IntegerHashMap as HashMap;
use crate::kernel::MemRecord;
use std::collections::HashSet as StdHashSet;

/// Per-warp state for the round trips.
#[derive(Clone, Debug, Default)]
pub(super) struct WarpTrace {
    seen: bool,
    /// A barrier has passed since the current round trip began.
    barrier: bool,
    /// A global store has been issued since the current round trip began.
    stored: bool,
    /// Loads in the current round trip, per source location (by its span's line and column):
    /// a kernel's few load sites, found by a look along the list faster than by hashing.
    in_flight: Vec<((u32, u32), u32)>,
    /// The first load of the current round trip (`LoadOrder::sequence`; 0 if unknown).
    open_first: u32,
    /// Whether the current round trip waits for a sector new to the block.
    missing: bool,
    pub(super) missing_round_trips: u32,
    pub(super) hitting_round_trips: u32,
}

impl WarpTrace {
    /// Closes the current round trip, if any.
    pub(super) fn close(&mut self) {
        if self.in_flight.is_empty() {
            return;
        }
        if self.missing {
            self.missing_round_trips += 1;
        } else {
            self.hitting_round_trips += 1;
        }
        self.in_flight.clear();
        self.missing = false;
    }
}

/// Collects one block's records (as the interpreter emits them, before the compiler-effects pass,
/// which only changes shared loads).
#[derive(Debug)]
pub struct BlockProfiler {
    pub(super) device: Device,
    /// (name, base, size) of each global object, ascending.
    layout: Vec<(String, u64, u64)>,
    /// Per buffer: sector -> mask of the bytes read (and likewise written). A read sector's
    /// entry also says whether a load read it (`LOADED`, above the mask's 32 bits): the sectors
    /// the block's loads bring into the L1, found with the one look-up.
    pub(super) reads: Vec<ReadSectors>,
    pub(super) writes: Vec<HashMap<u64, u32>>,
    pub(super) ld_lines: u64,
    pub(super) ld_wavefronts: u64,
    pub(super) st_lines: u64,
    pub(super) partial_st_lines: u64,
    pub(super) atomic_lines: u64,
    pub(super) transactions: u64,
    pub(super) local_sectors: u64,
    pub(super) warps: Vec<WarpTrace>,
    last_warp: Option<u32>,
    /// Global atomic address -> what the block's atomics did to it.
    pub(super) atomics: HashMap<u64, AtomicUpdates>,
    /// Updates the L2 makes for the block's global atomics, per slice granule (the bytes one
    /// slice takes before the next).
    pub(super) slice_granules: HashMap<u64, u64>,
    /// Source places of the atomics whose address the compiler proves warp-uniform.
    uniform_atomic_sites: StdHashSet<(u32, u32)>,
    pub(super) shared_atomic_passes: u64,
    /// The DRAM rows the block's access streams hold open and activate (`DramRows` devices).
    pub(super) rows: RowStreams,
    /// A global load's address (or a branch before it) needed data the launch loaded: its
    /// repetitions may go elsewhere. Kept across blocks.
    data_steered: bool,
    /// The shape of the access being recorded, and the lines of one of its steps: kept between
    /// records so that none allocates.
    shape: RecordShape,
    lines: LineSet,
    /// Whether to watch the halves of lines (`TouchedRange::half_line_shift_safe`), and, per
    /// buffer, whether a request of the block touched both halves of a line, or the upper half
    /// of one and the lower half of the next.
    watch_half_lines: bool,
    half_line_clash: Vec<bool>,
    /// The shapes measured so far in the launch, found again by the accesses like them.
    like_shapes: LikeShapes,
}

/// The bit of a read sector's entry (`BlockProfiler::reads`) that says a load read it.
const LOADED: u64 = 1 << 32;

/// The bit of a read sector's entry that says the sector was read at all, so that an entry is
/// present exactly where it is not 0 (`ReadSectors`).
const PRESENT: u64 = 1 << 33;

/// The 32-byte sectors of a 128-byte line, and of a 64-byte DRAM atom (a line holds two).
const SECTORS_PER_LINE: usize = (LINE_BYTES / SECTOR_BYTES) as usize;
const SECTORS_PER_ATOM: usize = (DRAM_ATOM_BYTES / SECTOR_BYTES) as usize;

/// The sectors of one buffer that a block read, each with its entry (the mask of the bytes read,
/// `LOADED` and `PRESENT`), kept per 128-byte line: the sectors a warp's request touches mostly
/// share a line, and are found with one look-up of it instead of one each (the naive matmul's
/// `b[k * n + col]` at tile 27 touches five sectors in two lines).
#[derive(Clone, Debug, Default)]
pub(super) struct ReadSectors(HashMap<u64, [u64; SECTORS_PER_LINE]>);

impl ReadSectors {
    /// The entries of the sectors of `line`, 0 for a sector not read.
    fn line(&mut self, line: u64) -> &mut [u64; SECTORS_PER_LINE] {
        self.0.entry(line).or_insert([0; SECTORS_PER_LINE])
    }

    /// The sectors read, each with its entry, in no order.
    fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0.iter().flat_map(|(&line, slots)| {
            (0..SECTORS_PER_LINE as u64)
                .zip(slots)
                .filter(|&(_, &read)| read != 0)
                .map(move |(k, &read)| (line * SECTORS_PER_LINE as u64 + k, read))
        })
    }

    /// The footprint of the sectors read (`Footprint::of`), and the sectors and lines the block
    /// loaded (`LOADED`), counted a line at a time: a line's DRAM atoms are its two halves, so no
    /// set of atoms or lines need be built (a tiled matmul's block reads some 9,000 sectors).
    pub(super) fn footprint_and_fills(&self) -> (Footprint, u64, u64) {
        let mut footprint = Footprint::default();
        let (mut fill_sectors, mut fill_lines) = (0u64, 0u64);
        for slots in self.0.values() {
            let mut loaded = 0u64;
            for &read in slots {
                if read != 0 {
                    footprint.bytes += f64::from((read as u32).count_ones());
                    footprint.sectors += 1.0;
                }
                loaded += u64::from(read & LOADED != 0);
            }
            let halves = slots.chunks(SECTORS_PER_ATOM);
            footprint.atoms += halves.filter(|half| half.iter().any(|&r| r != 0)).count() as f64;
            fill_sectors += loaded;
            fill_lines += u64::from(loaded > 0);
        }
        (footprint, fill_sectors, fill_lines)
    }

    pub(super) fn contains(&self, sector: u64) -> bool {
        let per_line = SECTORS_PER_LINE as u64;
        self.0
            .get(&(sector / per_line))
            .is_some_and(|slots| slots[(sector % per_line) as usize] != 0)
    }
}

/// Where one block read or wrote a buffer: the buffer's base and size in bytes, and the first
/// and last sector touched (absolute, in 32-byte units), if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TouchedRange {
    pub base: u64,
    pub size: u64,
    pub sectors: Option<(u64, u64)>,
    /// Whether moving every access of the block to this buffer by half a line (64 bytes, or
    /// that plus whole lines) keeps each request's lines, and the block's, as many and as
    /// filled, their banks turned by 16: no request, nor the block as a whole, touches both
    /// halves of a line, or the upper half of one line and the lower half of the next (which
    /// the move would put into one line). Known only while `watch_half_lines` is on.
    pub half_line_shift_safe: bool,
}

impl BlockProfiler {
    /// A profiler for blocks of a launch whose global objects are `layout` (from
    /// `Simulation::global_objects`).
    pub fn new(device: &Device, layout: Vec<(String, u64, u64)>) -> BlockProfiler {
        let n = layout.len();
        BlockProfiler {
            device: device.clone(),
            layout,
            reads: vec![ReadSectors::default(); n],
            writes: vec![HashMap::default(); n],
            ld_lines: 0,
            ld_wavefronts: 0,
            st_lines: 0,
            partial_st_lines: 0,
            atomic_lines: 0,
            transactions: 0,
            local_sectors: 0,
            warps: Vec::new(),
            last_warp: None,
            atomics: HashMap::default(),
            slice_granules: HashMap::default(),
            uniform_atomic_sites: StdHashSet::new(),
            shared_atomic_passes: 0,
            rows: RowStreams::default(),
            data_steered: false,
            shape: RecordShape::default(),
            lines: LineSet::default(),
            watch_half_lines: false,
            half_line_clash: vec![false; n],
            like_shapes: LikeShapes::default(),
        }
    }

    /// Whether a global load of the blocks so far had an address (or a branch before it) that
    /// needed data loaded from global or local memory.
    pub(crate) fn data_steered(&self) -> bool {
        self.data_steered
    }

    /// Makes the profiler watch how the block's requests fill the halves of lines, for
    /// `TouchedRange::half_line_shift_safe`.
    pub(crate) fn watch_half_lines(&mut self) {
        self.watch_half_lines = true;
    }

    /// Per buffer of the layout: where it lies, and the first and last sector the current block
    /// has read or written, if any.
    pub(crate) fn touched_sector_ranges(&self) -> Vec<TouchedRange> {
        self.layout
            .iter()
            .enumerate()
            .map(|(i, &(_, base, size))| {
                let range = self
                    .block_sectors(i)
                    .fold(None, |range: Option<(u64, u64)>, s| {
                        Some(range.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s))))
                    });
                let half_line_shift_safe = self.watch_half_lines
                    && !self.half_line_clash[i]
                    && !halves_clash(self.block_sectors(i));
                TouchedRange {
                    base,
                    size,
                    sectors: range,
                    half_line_shift_safe,
                }
            })
            .collect()
    }

    /// The sectors of buffer `buffer` the current block has read or written (a sector both read
    /// and written comes twice).
    fn block_sectors(&self, buffer: usize) -> impl Iterator<Item = u64> + '_ {
        self.reads[buffer]
            .iter()
            .map(|(sector, _)| sector)
            .chain(self.writes[buffer].keys().copied())
    }

    /// The global sectors the current block has read or written, per buffer.
    pub(crate) fn touched_sectors(&self) -> TouchedSectors {
        let mut sectors = StdHashSet::new();
        for buffer in 0..self.layout.len() {
            sectors.extend(self.block_sectors(buffer).map(|s| (buffer, s)));
        }
        sectors
    }

    /// Names the atomics (by source line and column) whose address every lane of a warp provably
    /// shares: the compiler issues them once per warp.
    pub(crate) fn set_uniform_atomic_sites(&mut self, sites: StdHashSet<(u32, u32)>) {
        self.uniform_atomic_sites = sites;
    }

    /// The buffer holding `address`, if any.
    fn buffer_of(&self, address: u64) -> Option<usize> {
        let index = self.layout.partition_point(|(_, base, _)| *base <= address);
        let candidate = index.checked_sub(1)?;
        let (_, base, size) = &self.layout[candidate];
        (address < base.saturating_add(*size)).then_some(candidate)
    }

    /// Adds one warp-level access of the block.
    pub fn record(&mut self, record: &MemRecord) {
        let access = &record.access;
        if access.n_active() == 0 {
            return;
        }
        let warp = self.enter(record.warp);

        match access.space {
            Space::Shared => {
                if access.kind == AccessKind::Atomic {
                    // An atomic on a provably warp-uniform address is summed in the warp and
                    // issued by one lane: one pass.
                    let site = (record.span.line, record.span.col);
                    self.shared_atomic_passes += if self.uniform_atomic_sites.contains(&site) {
                        1
                    } else {
                        u64::from(shared_atomic_wavefronts(access, &self.device))
                    };
                }
            }
            Space::Constant => {}
            Space::Global | Space::Local => self.record_global(record, warp),
        }
    }

    /// Notes that `warp` ran, and whether it passed a barrier since it last did: a warp
    /// runs until a barrier or its end, so if it shows up again after another warp ran, it has
    /// passed one. Its index among the block's warps.
    fn enter(&mut self, warp: u32) -> usize {
        let index = warp as usize;
        if self.warps.len() <= index {
            self.warps.resize(index + 1, WarpTrace::default());
        }
        if self.last_warp != Some(warp) && self.warps[index].seen {
            self.warps[index].barrier = true;
        }
        self.warps[index].seen = true;
        self.last_warp = Some(warp);
        index
    }

    /// What the profile sees of a copy of `CopyKind::WarpOnly` (`place_copy`): that `warp` ran.
    /// A warp's accesses until its next barrier need note it only once.
    pub(crate) fn warp_runs(&mut self, warp: u32) {
        self.enter(warp);
    }

    fn record_global(&mut self, record: &MemRecord, warp: usize) {
        let access = &record.access;
        let mut shape = std::mem::take(&mut self.shape);
        self.measure_shape(access, &mut shape);
        if let Some(rows) = self.device.timing.dram_rows {
            self.rows.record(record, rows, &self.device);
        }
        if access.space == Space::Local {
            self.local_sectors += u64::from(coalescing::sectors_of(
                &self.device,
                shape.transactions,
                shape.bytes_moved,
            ));
            self.round_trips(Issue::of(record), warp);
            // Local memory is the thread's own: its misses are counted as fills, not per line.
            self.ld_wavefronts += shape.hit_wavefronts;
        } else {
            self.note_half_lines(&shape.touched);
            self.place(Issue::of(record), warp, &shape, 0);
            if access.kind == AccessKind::Atomic {
                self.record_atomic(record);
            }
        }
        self.shape = shape;
    }

    /// Where the profiler watches the halves of lines: whether the request that touched
    /// `touched` touched both halves of a line of a buffer, or the upper half of one and the
    /// lower half of the next.
    fn note_half_lines(&mut self, touched: &[(usize, u64, u32)]) {
        if !self.watch_half_lines {
            return;
        }
        // Each buffer the request touched (nearly always one), checked once.
        for (k, &(buffer, _, _)) in touched.iter().enumerate() {
            if self.half_line_clash[buffer] || touched[..k].iter().any(|t| t.0 == buffer) {
                continue;
            }
            let sectors = touched[k..].iter().filter(|t| t.0 == buffer).map(|t| t.1);
            self.half_line_clash[buffer] = halves_clash(sectors);
        }
    }

    /// The moves that keep a global access's shape on the profiler's device (`shape_move_bytes`).
    pub(crate) fn shape_move_bytes(&self) -> i64 {
        shape_move_bytes(&self.device)
    }

    /// Adds an access of `warp` that copies another, moved (a warp shown alike to its leader, a
    /// loop iteration skipped, `kernel::interp`'s `warps` and `loops`): `issue` gives its kind,
    /// site and order, `kind` what the profile must see of it (`CopyKind::of` the access
    /// copied), and `shape` a shape of the same access measured `by` bytes away
    /// (`record_shape`'s). Where `by`
    /// is a whole number of `shape_move_bytes`, the access makes the same transactions, lines and
    /// passes at moved sectors, and only what depends on where it lies (the sectors new to the
    /// block, the round trips they end) is counted anew. False for an access to be placed whose
    /// shape does not hold, which the caller adds whole.
    pub(crate) fn place_copy(
        &mut self,
        (issue, warp, kind): (Issue, u32, CopyKind),
        shape: Option<(&RecordShape, i64)>,
    ) -> bool {
        match (kind, shape) {
            (CopyKind::Nothing, _) => true,
            (CopyKind::WarpOnly, _) => {
                self.warp_runs(warp);
                true
            }
            (CopyKind::Placed, Some((shape, by))) if by % self.shape_move_bytes() == 0 => {
                let warp = self.enter(warp);
                self.place(issue, warp, shape, by / SECTOR_BYTES as i64);
                true
            }
            (CopyKind::Placed, _) => false,
        }
    }

    /// Adds `record` as `BlockProfiler::record` does, and gives what of it holds wherever it
    /// lies, for the copies of it (`place_copy`): `None` for what has no such
    /// shape (shared, constant and local accesses, atomics, and any access on a device whose
    /// DRAM rows are counted, as rows do depend on where the access lies).
    pub(crate) fn record_shape(&mut self, record: &MemRecord) -> Option<RecordShape> {
        let access = &record.access;
        let shaped = access.space == Space::Global
            && access.kind != AccessKind::Atomic
            && access.n_active() > 0
            && self.device.timing.dram_rows.is_none();
        if !shaped {
            self.record(record);
            return None;
        }
        let move_bytes = self.shape_move_bytes().unsigned_abs();
        let keyed = LikeShapes::key(record.span.start, access, move_bytes);
        // An access like one measured before is what `record_global` makes of it, but for the
        // shape, which is that access's moved.
        let found = keyed.and_then(|(key, first)| {
            self.like_shapes
                .find(key, (access, first), move_bytes, &self.layout)
        });
        if let Some((shape, shift)) = found {
            let mut moved = shape.clone();
            for touched in &mut moved.touched {
                touched.1 = touched.1.wrapping_add_signed(shift);
            }
            let warp = self.enter(record.warp);
            self.note_half_lines(&moved.touched);
            self.place(Issue::of(record), warp, &moved, 0);
            return Some(moved);
        }
        self.record(record);
        if let Some((key, first)) = keyed {
            self.like_shapes.keep(key, access, first, &self.shape);
        }
        Some(self.shape.clone())
    }

    /// The part of a global or local access that does not depend on where it lies, into `shape`:
    /// its transactions, lines and passes through the L1 when it hits, and the sectors it touches
    /// with the bytes touched in each.
    fn measure_shape(&mut self, access: &WarpAccess, shape: &mut RecordShape) {
        // The transactions and the distinct 128-byte lines they lie in, without the allocations
        // of `coalescing::analyze`: this runs for every global access of a simulation.
        let mut n_transactions = 0u64;
        let mut bytes_moved = 0u64;
        let lines = &mut self.lines;
        lines.clear();
        let mut extra_lines = 0u64;
        coalescing::each_transaction(access, &self.device, |t| {
            n_transactions += 1;
            bytes_moved += u64::from(t.bytes);
            let last = t.address.saturating_add(u64::from(t.bytes).max(1) - 1);
            for line in (t.address / LINE_BYTES)..=(last / LINE_BYTES) {
                if !lines.insert(line) {
                    // More distinct lines than a warp of 16-byte lanes can touch: count on.
                    extra_lines += 1;
                }
            }
        });
        shape.transactions = n_transactions;
        shape.bytes_moved = bytes_moved;
        // A load's passes through the L1 data pipe when it hits (`load_wavefronts`); a miss adds
        // its lines in `place`, once the sectors new to the block are known.
        shape.hit_wavefronts = if access.kind == AccessKind::Load {
            load_wavefronts(access, self.lines.as_slice()) + extra_lines
        } else {
            0
        };
        shape.lines = self.lines.len() as u64 + extra_lines;
        shape.touched.clear();
        shape.partial_store_lines = 0;
        if access.space == Space::Local {
            return;
        }
        // The sectors of the access with the bytes touched in each, per buffer (a lane's bytes
        // may straddle two sectors). Neighbouring lanes mostly share the last sector.
        let touched = &mut shape.touched;
        let width = u64::from(access.width.bytes());
        // Lanes mostly fall in the buffer the lane before them did: it is tried first.
        let mut last_buffer: Option<(usize, u64, u64)> = None;
        // A lane at the address of the lane before it (a broadcast) adds nothing to a buffer's
        // sectors: it is skipped. (A local address counts per lane, so only buffer lanes are.)
        let mut last_address: Option<u64> = None;
        for slot in &access.lanes {
            let Some(address) = *slot else {
                continue;
            };
            if last_address == Some(address) {
                continue;
            }
            let buffer = match last_buffer {
                Some((index, base, end)) if (base..end).contains(&address) => index,
                _ => {
                    let Some(index) = self.buffer_of(address) else {
                        shape.outside_buffers += 1;
                        continue;
                    };
                    let (_, base, size) = &self.layout[index];
                    last_buffer = Some((index, *base, base.saturating_add(*size)));
                    index
                }
            };
            last_address = Some(address);
            let last = address.saturating_add(width.max(1) - 1);
            for sector in (address / SECTOR_BYTES)..=(last / SECTOR_BYTES) {
                let from = address.max(sector * SECTOR_BYTES) % SECTOR_BYTES;
                let to = last.min(sector * SECTOR_BYTES + SECTOR_BYTES - 1) % SECTOR_BYTES;
                let mask = (u32::MAX >> (31 - (to - from))) << from;
                let found = match touched.last() {
                    Some(&(b, s, _)) if b == buffer && s == sector => Some(touched.len() - 1),
                    _ => touched
                        .iter()
                        .position(|&(b, s, _)| b == buffer && s == sector),
                };
                match found {
                    Some(k) => touched[k].2 |= mask,
                    None => touched.push((buffer, sector, mask)),
                }
            }
        }
        if access.kind == AccessKind::Store {
            self.lines.clear();
            for &(_, sector, mask) in touched.iter() {
                if mask != u32::MAX {
                    self.lines.insert(sector * SECTOR_BYTES / LINE_BYTES);
                }
            }
            shape.partial_store_lines = self.lines.len() as u64;
        }
    }

    /// Counts a global (not local) access of `shape` at its sectors moved by `sector_shift`:
    /// its transactions and lines, its round trips, the sectors it reads and writes, and the
    /// lines of a load that bring sectors new to the block.
    fn place(&mut self, issue: Issue, warp: usize, shape: &RecordShape, sector_shift: i64) {
        let kind = issue.kind;
        self.transactions += shape.transactions;
        match kind {
            AccessKind::Load => self.ld_lines += shape.lines,
            AccessKind::Store => self.st_lines += shape.lines,
            AccessKind::Atomic => self.atomic_lines += shape.lines,
        }
        self.round_trips(issue, warp);
        // Lanes outside every buffer count as local memory, sector by sector.
        self.local_sectors += shape.outside_buffers;
        self.partial_st_lines += shape.partial_store_lines;
        // The lines of the load that bring sectors new to the block: each comes back from L2 on
        // its own, and the data pipe hands each to the warp in a pass of its own.
        let missed_lines = &mut self.lines;
        missed_lines.clear();
        if kind != AccessKind::Store {
            // The touched sectors of a line of a buffer mostly follow each other: the line is
            // looked up once for them.
            let mut at: Option<(usize, u64, &mut [u64; SECTORS_PER_LINE])> = None;
            for &(buffer, sector, mask) in &shape.touched {
                let sector = sector.wrapping_add_signed(sector_shift);
                let line = sector / SECTORS_PER_LINE as u64;
                let slots = match at.take() {
                    Some((b, l, slots)) if b == buffer && l == line => slots,
                    _ => self.reads[buffer].line(line),
                };
                let read = &mut slots[(sector % SECTORS_PER_LINE as u64) as usize];
                *read |= u64::from(mask) | PRESENT;
                if kind == AccessKind::Load && *read & LOADED == 0 {
                    *read |= LOADED;
                    self.warps[warp].missing = true;
                    missed_lines.insert(sector * SECTOR_BYTES / LINE_BYTES);
                }
                at = Some((buffer, line, slots));
            }
        }
        if kind != AccessKind::Load {
            for &(buffer, sector, mask) in &shape.touched {
                let sector = sector.wrapping_add_signed(sector_shift);
                *self.writes[buffer].entry(sector).or_insert(0) |= mask;
            }
        }
        if kind == AccessKind::Load {
            self.ld_wavefronts += shape.hit_wavefronts.max(self.lines.len() as u64);
        }
    }

    /// Round trips: loads wait, stores and atomics (whose results the lecture kernels never
    /// use) are fire-and-forget but order the loads after them.
    fn round_trips(&mut self, issue: Issue, warp: usize) {
        let trace = &mut self.warps[warp];
        match issue.kind {
            AccessKind::Load => {
                let order = issue.order;
                self.data_steered |= order.waits_for != 0;
                let site = issue.site;
                let repeats = trace
                    .in_flight
                    .iter()
                    .find(|(at, _)| *at == site)
                    .map_or(0, |&(_, loads)| loads);
                let limit = if order.in_flight == 0 {
                    LOADS_IN_FLIGHT_PER_SITE
                } else {
                    order.in_flight
                };
                // A load whose address (or a branch before it) needs the data of a load in the
                // current round trip waits for it: the next round trip begins (probe group C).
                let waits = trace.open_first > 0 && order.waits_for >= trace.open_first;
                if trace.barrier || trace.stored || repeats >= limit || waits {
                    trace.close();
                }
                if trace.in_flight.is_empty() {
                    trace.open_first = order.sequence;
                }
                trace.barrier = false;
                trace.stored = false;
                match trace.in_flight.iter_mut().find(|(at, _)| *at == site) {
                    Some((_, loads)) => *loads += 1,
                    None => trace.in_flight.push((site, 1)),
                }
            }
            AccessKind::Store | AccessKind::Atomic => trace.stored = true,
        }
    }

    /// The atomics' updates per address and per L2 slice granule.
    fn record_atomic(&mut self, record: &MemRecord) {
        let access = &record.access;
        let uniform = self
            .uniform_atomic_sites
            .contains(&(record.span.line, record.span.col));
        let mut per_address: HashMap<u64, u64> = HashMap::default();
        for (_, address) in access.active_lanes() {
            *per_address.entry(address).or_insert(0) += 1;
        }
        // The busiest word of each sector: the L2 serves a sector's words together and
        // one word's lanes one after another.
        let mut busiest: HashMap<u64, (u64, u64)> = HashMap::default();
        for (&address, &lanes) in &per_address {
            let entry = busiest
                .entry(address / SECTOR_BYTES)
                .or_insert((address, 0));
            if lanes > entry.1 || (lanes == entry.1 && address < entry.0) {
                *entry = (address, lanes);
            }
        }
        for (address, lanes) in per_address {
            let entry = self.atomics.entry(address).or_default();
            entry.requests += 1;
            entry.lanes += lanes;
        }
        let granule = u64::from(self.device.timing.l2_slice_interleave_bytes.max(1));
        for (address, lanes) in busiest.into_values() {
            *self.slice_granules.entry(address / granule).or_insert(0) +=
                if uniform { 1 } else { lanes };
        }
    }

    /// Forgets the block, keeping the launch's layout and device.
    pub(super) fn reset(&mut self) {
        for map in &mut self.reads {
            map.0.clear();
        }
        for map in &mut self.writes {
            map.clear();
        }
        self.ld_lines = 0;
        self.ld_wavefronts = 0;
        self.st_lines = 0;
        self.partial_st_lines = 0;
        self.atomic_lines = 0;
        self.transactions = 0;
        self.local_sectors = 0;
        self.warps.clear();
        self.last_warp = None;
        self.atomics.clear();
        self.slice_granules.clear();
        self.shared_atomic_passes = 0;
        self.rows.clear();
        self.half_line_clash
            .iter_mut()
            .for_each(|clash| *clash = false);
    }
}

/// What the atomics of one block, or of the blocks a sampled block stands for, did to one global
/// address.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AtomicUpdates {
    /// Warp requests that updated it.
    pub(super) requests: u64,
    /// Lanes that updated it.
    pub(super) lanes: u64,
}

/// The passes a shared atomic takes through the shared-memory pipe: the most lanes that fall in
/// one bank, whether on one word or on several. Unlike a load, lanes on one word are not served
/// together, since each must read the word the one before it wrote. Probe group G: Nsight's
/// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom` per instruction is 1 for distinct
/// banks, 2, 4, 8 and 32 for 2- to 32-way conflicts, and 32 for a warp on one word.
fn shared_atomic_wavefronts(access: &WarpAccess, device: &Device) -> u32 {
    let n_banks = device.n_banks.max(1) as usize;
    let width = u64::from(device.bank_width_bytes.max(1));
    let mut lanes_per_bank = [0u32; 64];
    for (_, address) in access.active_lanes() {
        lanes_per_bank[((address / width) as usize % n_banks) % 64] += 1;
    }
    lanes_per_bank.iter().copied().max().unwrap_or(0)
}
