//! The memory profile of a launch: what the timing model needs to know beyond the counters.
//!
//! The counters (`counters.rs`) say how many requests, sectors and wavefronts a launch makes. To
//! estimate time, `timing` also needs to know *which* bytes are touched and in what order:
//!
//! - **footprints**, per buffer: the distinct bytes, 32-byte sectors and 64-byte DRAM atoms that
//!   the launch reads and writes. A block's footprint is measured exactly; the
//!   grid's is the sum over the sampled blocks, each times the blocks it stands for, capped at the
//!   buffer's size. The cap is what finds the reuse across blocks: the 4,096 blocks of a 1024 x 1024
//!   matmul read 64 times as many bytes as `a` and `b` hold, so the footprint is the buffers.
//! - **L1 fills**: the distinct sectors each block loads, summed over the grid. A block runs on one
//!   SM and its warps reuse each other's lines within a short time, so the second read of a sector
//!   by the same block (adjacent difference's `input[i - 1]`, matmul's row of `a`) hits in L1 and the
//!   first one misses. Reuse between different blocks on one SM is not counted (Nsight Compute shows
//!   it is 0-30% of the fills for the lecture kernels), nor are capacity misses of a block whose
//!   reuse distance exceeds the L1.
//! - **lines** per request: the distinct 128-byte lines each warp-level global access touches. The
//!   L1's tag stage looks up one line per cycle, so a request that scatters over 32 lines takes 32
//!   cycles of it however few bytes it moves (Nsight Compute Kernel Profiling Guide, "L1/TEX Cache":
//!   `t` requests are split into wavefronts of one tag each).
//! - **round trips**: how many times a warp must wait for global memory before it can go on. A warp
//!   issues its independent loads back to back and waits once for all of them. A new round trip
//!   starts at a load that follows a barrier (the loads after `__syncthreads()` cannot be issued
//!   before it), a global store (the compiler cannot move a load above a store that may alias it, so
//!   `out[i] = in[i]` in a loop waits once per element; `tr_copy` shows it), a load whose address
//!   (or a branch before it) needs the data of a load in the current round trip (`LoadOrder`: a
//!   pointer chase, probe group C), or more executions of one load than nvcc's unrolling of its
//!   loop keeps in flight (`kernel::issue`: 16 for a small loop of a run-time trip count, probe
//!   group D). A round trip *misses* if it loads a sector the
//!   block had not loaded before (it waits for L2 or DRAM) and *hits* otherwise (L1). A block's
//!   critical path is its slowest warp: the most missing round trips, then the most hitting ones.
//! - **atomics**: how many updates land on the most-updated address, which the memory system
//!   serializes, and how many lanes of shared atomics collide on one address within an instruction.
//! - **DRAM rows** (devices without an L2, cc 1.x, whose presets carry `DramRows`): how many
//!   transactions open a DRAM row. An address lies in partition `(address / interleave) mod
//!   partitions`, and there in row `address / (partitions x row_bytes)`. A row-hit-first memory
//!   controller (Rixner et al., "Memory access scheduling", ISCA 2000) serves the queued requests
//!   of an access stream to the row that stream opened together, so a row is taken to stay open
//!   for the stream that opened it: the successive executions of one load or store by one
//!   half-warp (cc 1.x issues a request per half-warp). `a[row * n + k]` walks one row and hits
//!   it; `b[k * n + col]` moves 4 KB a step and opens a row each time. Every transaction of a
//!   request counts, so the 16 transactions a cc 1.0 half-warp makes for 16 words of one row
//!   open it once and hit it 15 times. A half-warp's first execution of an instruction continues
//!   the block's stream there, finding the rows the block's earlier half-warps left open at it.
//!   If the first executions of an instruction by a block cover one range of addresses, the block
//!   is a piece of a sweep that its neighbours continue (adjacent difference's 1 KB of a 64 MB
//!   stream): the blocks that run together share the sweep's rows, and the block is charged one
//!   activation per row's worth of bytes it covers. Otherwise each row it opens counts.
//!
//! Barriers are seen from the order of the records: the interpreter runs a warp until it reaches
//! `__syncthreads()` or ends, then the next warp, so a warp whose records resume after another
//! warp's has passed a barrier. A barrier in a one-warp block is not seen (it orders nothing).
//!
//! A global access's record splits into its shape (`RecordShape`: its transactions, lines, passes
//! when it hits and the sectors it touches with their bytes), which does not change when the
//! access moves by a whole number of `shape_move_bytes` (a line, or 256 bytes on cc 1.x), and its
//! placing (the sectors new to the block, the round trips). A warp shown alike to its class's
//! first warp (`kernel::interp`'s `warps`) reuses that warp's shapes, moved
//! (`BlockProfiler::place_copy`), and so does a loop iteration skipped (`loops`).

use crate::access::{AccessKind, Space, WarpAccess};
use crate::coalescing::{self, LINE_BYTES, SECTOR_BYTES, SHAPE_MOVE_BYTES};
use crate::device::{Device, DramRows, GlobalCoalescing};
use crate::hashing::{IntegerHashSet, IntegerHasher};
use crate::kernel::{LoadOrder, MemRecord};
use serde::{Deserialize, Serialize};
use std::collections::HashSet as StdHashSet;
use std::hash::Hasher;

// The profiler's maps and sets are keyed by integers. The re-export keeps the path that the
// simulation's driver names.
pub use crate::hashing::IntegerHashMap;
type HashMap<K, V> = IntegerHashMap<K, V>;
type HashSet<K> = IntegerHashSet<K>;

/// The unit in which HBM on A100 and H100 moves data: two sectors. Source: `h100.json`, ncu record
/// `strided_copy stride=32`: 1,048,576 one-float loads, each in its own 128-byte line, read
/// 67,115,520 bytes of DRAM, 64 bytes per load.
pub const DRAM_ATOM_BYTES: u64 = 64;

/// How many executions of one load instruction a warp has in flight together when its record
/// does not say (`LoadOrder::in_flight`, which the interpreter sets from nvcc's unrolling).
pub const LOADS_IN_FLIGHT_PER_SITE: u32 = 4;

/// Global sectors a block touched, as (buffer index, sector) pairs (`BlockProfiler::touched_sectors`).
pub type TouchedSectors = StdHashSet<(usize, u64)>;

/// Distinct bytes touched, in the units the memory levels move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Footprint {
    /// Distinct bytes (what the program asked for once).
    pub bytes: f64,
    /// Distinct 32-byte sectors (what L1 and L2 move).
    pub sectors: f64,
    /// Distinct 64-byte atoms (what HBM moves, `DRAM_ATOM_BYTES`).
    pub atoms: f64,
}

impl Footprint {
    fn add_scaled(&mut self, other: &Footprint, times: f64) {
        self.bytes += other.bytes * times;
        self.sectors += other.sectors * times;
        self.atoms += other.atoms * times;
    }

    /// No more of a buffer than the buffer itself can be touched (buffers start 256-byte
    /// aligned, so a buffer of `size` bytes spans `size / unit` units, rounded up).
    fn capped(self, size: u64) -> Footprint {
        let units = |unit: u64| size.div_ceil(unit) as f64;
        Footprint {
            bytes: self.bytes.min(size as f64),
            sectors: self.sectors.min(units(SECTOR_BYTES)),
            atoms: self.atoms.min(units(DRAM_ATOM_BYTES)),
        }
    }

    /// The footprint of a set of distinct sectors, each with the mask of its bytes that were
    /// touched.
    fn of(sectors: impl Iterator<Item = (u64, u32)>) -> Footprint {
        let mut atoms: HashSet<u64> = HashSet::default();
        let (mut bytes, mut count) = (0.0, 0.0);
        for (sector, mask) in sectors {
            atoms.insert(sector * SECTOR_BYTES / DRAM_ATOM_BYTES);
            bytes += f64::from(mask.count_ones());
            count += 1.0;
        }
        Footprint {
            bytes,
            sectors: count,
            atoms: atoms.len() as f64,
        }
    }
}

/// What a launch reads and writes of one global buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferFootprint {
    pub name: String,
    pub size_bytes: u64,
    pub read: Footprint,
    pub written: Footprint,
    /// Sectors the launch writes only in part and never reads: to write one back, DRAM must
    /// read it and merge (probe group M). For the grid, the fewer of the blocks' own such
    /// sectors and the sectors that the grid's written bytes cannot fill, since other blocks may
    /// complete a sector in the L2 before it is written back.
    #[serde(default)]
    pub partial_sectors: f64,
}

/// The memory profile of a launch, extrapolated to the grid like the counters. Plain data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryProfile {
    /// Footprints per global buffer, in address order.
    pub buffers: Vec<BufferFootprint>,
    /// Sectors that miss a per-block L1: each block's distinct global-load sectors, summed.
    pub l1_fill_sectors: f64,
    /// The 128-byte lines of those sectors: the requests the L1 sends to L2 for them.
    pub l1_fill_lines: f64,
    /// Distinct 128-byte lines per global load request, summed over requests.
    pub global_ld_lines: f64,
    /// Passes of the global loads through the L1's data pipe (`load_wavefronts`, and a pass per
    /// line that brings a sector new to the block), summed over requests.
    #[serde(default)]
    pub global_ld_wavefronts: f64,
    /// Distinct 128-byte lines per global store request, summed over requests.
    pub global_st_lines: f64,
    /// Of those, the lines in which the request writes part of a sector (`tr_naive`'s column
    /// writes): the L2 merges them into the sector (probe group M).
    #[serde(default)]
    pub global_partial_st_lines: f64,
    /// Distinct 128-byte lines per global atomic request, summed over requests.
    pub global_atomic_lines: f64,
    /// Global and local memory transactions (cc 1.x segments; one per sector on cc >= 2.0).
    pub global_transactions: f64,
    /// Of those, the transactions that open a DRAM row, on devices without an L2 (`DramRows`);
    /// 0 elsewhere.
    pub dram_row_activations: f64,
    /// Global and local loads, atomics and stores whose addresses are in no known buffer (local
    /// memory), in sectors; they are counted as reads and writes that reach L2.
    pub local_sectors: f64,
    /// Round trips to global memory on the critical path of a block (its slowest warp), averaged
    /// over the blocks: those that wait for a sector the block had not loaded before (an L1 miss)...
    pub missing_round_trips_per_block: f64,
    /// ... and those whose sectors the block had all loaded before (L1 hits).
    pub hitting_round_trips_per_block: f64,
    /// Updates of the most-updated global address, counting the lanes of one warp request as one
    /// update (the L2 combines them on cc >= 2.0).
    pub hottest_address_requests: f64,
    /// Updates of the most-updated global address, lane by lane.
    pub hottest_address_lanes: f64,
    /// Updates the busiest L2 slice makes for global atomics (devices with an L2): a warp
    /// request's lanes on one sector are one update per lane on its busiest word (lanes on
    /// different words of a sector are served together), or one update in all if the compiler
    /// proved the address warp-uniform (`kernel::uniformity`). Addresses that several sampled
    /// blocks update are taken to be updated by every block they stand for; the rest spread
    /// evenly over the slices.
    #[serde(default)]
    pub hottest_slice_updates: f64,
    /// Shared atomic instructions weighted by the most lanes that fall in one bank
    /// (`shared_atomic_wavefronts`): the passes they take through the shared-memory pipe.
    pub shared_atomic_passes: f64,
    /// Blocks the profile stands for (the grid).
    pub blocks: f64,
    /// The share of the sectors that the next repetition of the launch touches and this one did
    /// not: 0 unless the launch's addresses follow data it loaded and one of its blocks, run
    /// again on the memory the launch left, goes elsewhere (`simulate`; probe group C's
    /// `p_mlp*`, whose `state` moves every warp on to new lines).
    #[serde(default)]
    pub repeat_moves_on: f64,
}

impl MemoryProfile {
    /// Bytes the program touches at least once, read or written (counting a byte both read and
    /// written twice): the "useful" bytes of a bandwidth figure.
    pub fn useful_bytes(&self) -> f64 {
        self.buffers
            .iter()
            .map(|b| b.read.bytes + b.written.bytes)
            .sum()
    }
}

/// Per-warp state for the round trips.
#[derive(Clone, Debug, Default)]
struct WarpTrace {
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
    missing_round_trips: u32,
    hitting_round_trips: u32,
}

impl WarpTrace {
    /// Closes the current round trip, if any.
    fn close(&mut self) {
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
    device: Device,
    /// (name, base, size) of each global object, ascending.
    layout: Vec<(String, u64, u64)>,
    /// Per buffer: sector -> mask of the bytes read (and likewise written). A read sector's
    /// entry also says whether a load read it (`LOADED`, above the mask's 32 bits): the sectors
    /// the block's loads bring into the L1, found with the one look-up.
    reads: Vec<ReadSectors>,
    writes: Vec<HashMap<u64, u32>>,
    ld_lines: u64,
    ld_wavefronts: u64,
    st_lines: u64,
    partial_st_lines: u64,
    atomic_lines: u64,
    transactions: u64,
    local_sectors: u64,
    warps: Vec<WarpTrace>,
    last_warp: Option<u32>,
    /// Global atomic address -> what the block's atomics did to it.
    atomics: HashMap<u64, AtomicUpdates>,
    /// Updates the L2 makes for the block's global atomics, per slice granule (the bytes one
    /// slice takes before the next).
    slice_granules: HashMap<u64, u64>,
    /// Source places of the atomics whose address the compiler proves warp-uniform.
    uniform_atomic_sites: StdHashSet<(u32, u32)>,
    shared_atomic_passes: u64,
    /// The open DRAM row of each partition, per access stream (warp, half-warp, source line and
    /// column).
    stream_rows: HashMap<(u32, u32, u32, u32), Vec<u64>>,
    /// The rows the block's streams opened, per source location.
    site_rows: HashMap<(u32, u32), SiteRows>,
    /// Row activations of later executions of an instruction by a half-warp.
    activations: u64,
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

/// Shapes of global accesses measured in the launch (`BlockProfiler::record_shape`), by site,
/// kind, width, alignment to `shape_move_bytes` and the lanes' places relative to the first
/// lane's. An access found here with every lane inside the one buffer the measured access lay
/// in has its shape, moved: the same premise as `BlockProfiler::place_copy`'s. The warps of a
/// block at one site, and a warp of one block and the same warp of the next along a row or
/// column, repeat their accesses at other places: a guarded matmul at tile 17 measures one
/// access in six anew.
#[derive(Debug, Default)]
struct LikeShapes(HashMap<(u32, u64), Box<LikeShape>>);

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
    fn key(site: u32, access: &WarpAccess, move_bytes: u64) -> Option<((u32, u64), u64)> {
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
    fn find(
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
    fn keep(&mut self, key: (u32, u64), access: &WarpAccess, first: u64, shape: &RecordShape) {
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
    transactions: u64,
    bytes_moved: u64,
    /// Distinct 128-byte lines of its transactions.
    lines: u64,
    /// Passes through the L1's data pipe when every line hits.
    hit_wavefronts: u64,
    /// Lines of a store that it writes part of a sector of.
    partial_store_lines: u64,
    /// Lanes outside every buffer, counted as local memory.
    outside_buffers: u64,
    /// The sectors it touches, per buffer, with the bytes touched in each (bit `k` for byte `k`).
    touched: Vec<(usize, u64, u32)>,
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
struct ReadSectors(HashMap<u64, [u64; SECTORS_PER_LINE]>);

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
    fn footprint_and_fills(&self) -> (Footprint, u64, u64) {
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

    fn contains(&self, sector: u64) -> bool {
        let per_line = SECTORS_PER_LINE as u64;
        self.0
            .get(&(sector / per_line))
            .is_some_and(|slots| slots[(sector % per_line) as usize] != 0)
    }
}

/// The moves that keep a global access's shape on `device` (`RecordShape`): on the devices of
/// sectors (cc 2.0 on) nothing the shape holds looks past a 128-byte line (its sectors, their
/// bytes, its lines and the passes through the L1 per line, half lines, DRAM atoms of 64 bytes),
/// so a move by whole lines keeps it; cc 1.x needs `SHAPE_MOVE_BYTES`. A loop that moves an
/// access 68 bytes an iteration (a 17-wide tile of floats) so finds its shape again every 32
/// iterations, not every 64.
pub fn shape_move_bytes(device: &Device) -> i64 {
    match device.global_coalescing {
        GlobalCoalescing::Sectors => LINE_BYTES as i64,
        GlobalCoalescing::SegmentHalfWarp | GlobalCoalescing::StrictHalfWarp => SHAPE_MOVE_BYTES,
    }
}

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
        spans.sort_unstable();
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
            stream_rows: HashMap::default(),
            site_rows: HashMap::default(),
            activations: 0,
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
    pub fn data_steered(&self) -> bool {
        self.data_steered
    }

    /// Makes the profiler watch how the block's requests fill the halves of lines, for
    /// `TouchedRange::half_line_shift_safe`.
    pub fn watch_half_lines(&mut self) {
        self.watch_half_lines = true;
    }

    /// Per buffer of the layout: where it lies, and the first and last sector the current block
    /// has read or written, if any.
    pub fn touched_sector_ranges(&self) -> Vec<TouchedRange> {
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
    pub fn touched_sectors(&self) -> TouchedSectors {
        let mut sectors = StdHashSet::new();
        for buffer in 0..self.layout.len() {
            sectors.extend(self.block_sectors(buffer).map(|s| (buffer, s)));
        }
        sectors
    }

    /// Names the atomics (by source line and column) whose address every lane of a warp provably
    /// shares: the compiler issues them once per warp.
    pub fn set_uniform_atomic_sites(&mut self, sites: StdHashSet<(u32, u32)>) {
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
    pub fn warp_runs(&mut self, warp: u32) {
        self.enter(warp);
    }

    fn record_global(&mut self, record: &MemRecord, warp: usize) {
        let access = &record.access;
        let mut shape = std::mem::take(&mut self.shape);
        self.measure_shape(access, &mut shape);
        if let Some(rows) = self.device.timing.dram_rows {
            self.record_rows(record, rows);
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
    pub fn shape_move_bytes(&self) -> i64 {
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
    pub fn place_copy(
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
    pub fn record_shape(&mut self, record: &MemRecord) -> Option<RecordShape> {
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

    /// Counts the transactions of `record` that open a DRAM row: each half-warp's transactions
    /// continue that half-warp's stream at this instruction (see the module documentation).
    fn record_rows(&mut self, record: &MemRecord, rows: DramRows) {
        let access = &record.access;
        let half = ((self.device.warp_size / 2).max(1) as usize).min(access.lanes.len());
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
            for transaction in coalescing::analyze(&alone, &self.device).transactions {
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

    /// Forgets the block, keeping the launch's layout and device.
    fn reset(&mut self) {
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
        self.stream_rows.clear();
        self.site_rows.clear();
        self.activations = 0;
        self.half_line_clash
            .iter_mut()
            .for_each(|clash| *clash = false);
    }
}

/// Whether `sectors` touch both halves of a 128-byte line, or the upper half of one line and the
/// lower half of the next: a move by half a line would then merge or split lines. A request's
/// sectors (at most 64) are sorted in place on the stack, as this runs for every global access
/// of a launch whose blocks may be reused; more go to the heap.
fn halves_clash(sectors: impl Iterator<Item = u64>) -> bool {
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
struct LineSet {
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
    fn clear(&mut self) {
        self.len = 0;
    }

    /// Adds `line`; false only if it is new and there is no room left for it.
    fn insert(&mut self, line: u64) -> bool {
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

    fn as_slice(&self) -> &[u64] {
        &self.lines[..self.len]
    }

    fn len(&self) -> usize {
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
fn load_wavefronts(access: &WarpAccess, lines: &[u64]) -> u64 {
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

/// How many lanes of a shared atomic update the busiest 4-byte word.
/// The passes a shared atomic takes through the shared-memory pipe: the most lanes that fall in
/// one bank, whether on one word or on several. Unlike a load, lanes on one word are not served
/// together, since each must read the word the one before it wrote. Probe group G: Nsight's
/// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom` per instruction is 1 for distinct
/// banks, 2, 4, 8 and 32 for 2- to 32-way conflicts, and 32 for a warp on one word.
/// What the atomics of one block, or of the blocks a sampled block stands for, did to one global
/// address.
#[derive(Clone, Copy, Debug, Default)]
struct AtomicUpdates {
    /// Warp requests that updated it.
    requests: u64,
    /// Lanes that updated it.
    lanes: u64,
}

/// The same over the grid: scaled by the blocks the sampled ones stand for, and as the largest
/// one sampled block made.
#[derive(Clone, Copy, Debug, Default)]
struct GridAtomicUpdates {
    scaled_requests: f64,
    scaled_lanes: f64,
    requests: f64,
    lanes: f64,
    /// Sampled blocks that updated the address.
    sampled: u32,
}

fn shared_atomic_wavefronts(access: &WarpAccess, device: &Device) -> u32 {
    let n_banks = device.n_banks.max(1) as usize;
    let width = u64::from(device.bank_width_bytes.max(1));
    let mut lanes_per_bank = [0u32; 64];
    for (_, address) in access.active_lanes() {
        lanes_per_bank[((address / width) as usize % n_banks) % 64] += 1;
    }
    lanes_per_bank.iter().copied().max().unwrap_or(0)
}

/// The updates of the busiest L2 slice over the grid's `grid_blocks` blocks, from each slice's
/// updates by each sampled block.
///
/// A slice's updates over the grid are estimated as the sampled blocks' mean times the grid's
/// blocks. Taking the largest of these estimates would overstate the busiest slice when the
/// updates are spread at random (a histogram of thousands of bins): each estimate rests on a few
/// sampled blocks, and the largest of many noisy estimates lies above every true value. Each is
/// lowered by its sampling error (the spread of the sampled blocks' counts over the root of their
/// number) times the expected largest of as many standard normal deviates, about sqrt(2 ln n); a
/// slice every sampled block updates alike (a sum's one word) has no error and keeps its
/// estimate.
fn busiest_slice(slices: &HashMap<u64, Vec<f64>>, grid_blocks: f64) -> f64 {
    if slices.is_empty() {
        return 0.0;
    }
    // The expected largest of n standard normal deviates is below sqrt(2 ln n).
    let z = (2.0 * (slices.len().max(2) as f64).ln()).sqrt();
    let estimate = |own: &[f64]| {
        let k = own.len().max(1) as f64;
        let average = own.iter().sum::<f64>() / k;
        let error = if own.len() >= 2 {
            let variance = own.iter().map(|x| (x - average).powi(2)).sum::<f64>() / (k - 1.0);
            variance.sqrt() / k.sqrt()
        } else {
            0.0
        };
        (average - z * error).max(0.0) * grid_blocks
    };
    slices.values().map(|own| estimate(own)).fold(0.0, f64::max)
}

/// Sums block profiles into a launch profile.
#[derive(Debug, Default)]
pub struct ProfileBuilder {
    profile: MemoryProfile,
    sizes: Vec<u64>,
    /// Global atomic address -> its updates over the grid.
    atomics: HashMap<u64, GridAtomicUpdates>,
    /// Slice granule -> the updates each sampled block made there: (the block's index among the
    /// sampled atomic blocks, its updates, the grid blocks it stands for).
    slice_granules: HashMap<u64, Vec<(u32, u64, f64)>>,
    /// Sampled blocks that made global atomics.
    atomic_blocks: u32,
    /// The grid blocks each of those stands for.
    atomic_block_times: Vec<f64>,
    /// The L2's slices (`DeviceTiming`).
    l2_slices: u64,
    missing_round_trips: f64,
    hitting_round_trips: f64,
}

impl ProfileBuilder {
    /// A builder for a launch on `device` whose global objects are `layout`.
    pub fn new(device: &Device, layout: &[(String, u64, u64)]) -> ProfileBuilder {
        ProfileBuilder {
            profile: MemoryProfile {
                buffers: layout
                    .iter()
                    .map(|(name, _, size)| BufferFootprint {
                        name: name.clone(),
                        size_bytes: *size,
                        read: Footprint::default(),
                        written: Footprint::default(),
                        partial_sectors: 0.0,
                    })
                    .collect(),
                ..MemoryProfile::default()
            },
            sizes: layout.iter().map(|(_, _, size)| *size).collect(),
            atomics: HashMap::default(),
            slice_granules: HashMap::default(),
            atomic_blocks: 0,
            atomic_block_times: Vec::new(),
            l2_slices: u64::from(device.timing.l2_slices.max(1)),
            missing_round_trips: 0.0,
            hitting_round_trips: 0.0,
        }
    }

    /// Adds `block` as standing for `times` blocks of the grid, and resets it for the next block.
    pub fn add_block(&mut self, block: &mut BlockProfiler, times: f64) {
        let p = &mut self.profile;
        let (mut fill_sectors, mut fill_lines) = (0u64, 0u64);
        for (i, buffer) in p.buffers.iter_mut().enumerate() {
            if let Some(reads) = block.reads.get(i) {
                let (read, sectors, lines) = reads.footprint_and_fills();
                buffer.read.add_scaled(&read, times);
                fill_sectors += sectors;
                fill_lines += lines;
            }
            if let Some(writes) = block.writes.get(i) {
                let masks = writes.iter().map(|(&sector, &mask)| (sector, mask));
                buffer.written.add_scaled(&Footprint::of(masks), times);
                let reads = block.reads.get(i);
                let partial = writes
                    .iter()
                    .filter(|&(sector, &mask)| {
                        mask != u32::MAX && reads.is_none_or(|r| !r.contains(*sector))
                    })
                    .count();
                buffer.partial_sectors += partial as f64 * times;
            }
        }
        // Buffers hold whole lines (they start 256-byte aligned), so the lines each buffer
        // loaded are distinct from every other buffer's.
        p.l1_fill_sectors += fill_sectors as f64 * times;
        p.l1_fill_lines += fill_lines as f64 * times;
        p.global_ld_lines += block.ld_lines as f64 * times;
        p.global_st_lines += block.st_lines as f64 * times;
        p.global_ld_wavefronts += block.ld_wavefronts as f64 * times;
        p.global_partial_st_lines += block.partial_st_lines as f64 * times;
        p.global_atomic_lines += block.atomic_lines as f64 * times;
        p.global_transactions += block.transactions as f64 * times;
        let row_bytes = block
            .device
            .timing
            .dram_rows
            .map_or(1, |rows| u64::from(rows.row_bytes));
        let first: f64 = block
            .site_rows
            .values()
            .map(|site| site.first_activations(row_bytes))
            .sum();
        p.dram_row_activations += (block.activations as f64 + first) * times;
        p.local_sectors += block.local_sectors as f64 * times;
        p.shared_atomic_passes += block.shared_atomic_passes as f64 * times;
        p.blocks += times;
        for warp in &mut block.warps {
            warp.close();
        }
        // The slowest warp: the most round trips that miss, then the most that hit.
        let (missing, hitting) = block
            .warps
            .iter()
            .map(|w| (w.missing_round_trips, w.hitting_round_trips))
            .max()
            .unwrap_or((0, 0));
        self.missing_round_trips += f64::from(missing) * times;
        self.hitting_round_trips += f64::from(hitting) * times;
        for (&address, block_updates) in &block.atomics {
            let entry = self.atomics.entry(address).or_default();
            entry.scaled_requests += block_updates.requests as f64 * times;
            entry.scaled_lanes += block_updates.lanes as f64 * times;
            entry.requests = entry.requests.max(block_updates.requests as f64);
            entry.lanes = entry.lanes.max(block_updates.lanes as f64);
            entry.sampled += 1;
        }
        for (&granule, &updates) in &block.slice_granules {
            self.slice_granules.entry(granule).or_default().push((
                self.atomic_blocks,
                updates,
                times,
            ));
        }
        if !block.slice_granules.is_empty() {
            self.atomic_blocks += 1;
            self.atomic_block_times.push(times);
        }
        block.reset();
    }

    /// The launch profile: footprints capped at the buffers' sizes, and the hottest address. An
    /// address that several sampled blocks update is taken to be updated by every block they
    /// stand for (`result` of a sum); one that a single sampled block updates, by that block only
    /// (each block of its class then has an address of its own).
    pub fn finish(mut self) -> MemoryProfile {
        for (buffer, &size) in self.profile.buffers.iter_mut().zip(&self.sizes) {
            buffer.read = buffer.read.capped(size);
            buffer.written = buffer.written.capped(size);
            let unfilled = buffer.written.sectors - buffer.written.bytes / SECTOR_BYTES as f64;
            buffer.partial_sectors = buffer.partial_sectors.min(unfilled).max(0.0);
        }
        for a in self.atomics.values() {
            let (r, l) = if a.sampled >= 2 {
                (a.scaled_requests, a.scaled_lanes)
            } else {
                (a.requests, a.lanes)
            };
            self.profile.hottest_address_requests = self.profile.hottest_address_requests.max(r);
            self.profile.hottest_address_lanes = self.profile.hottest_address_lanes.max(l);
        }
        // A granule every sampled block updates is one the grid's blocks share (a sum's
        // `result`, a histogram's bins): each block of the grid updates it as the sampled ones
        // do on average. The others are the blocks' own (a per-block output, a block's range of
        // bins), and the blocks not simulated have theirs elsewhere, spread evenly over the
        // slices that the granules between the sampled blocks' lowest and highest cover (all of
        // them for a per-block output; 32 for `p_atom_seq`'s 4,096 bins, which every 16th block
        // updates again).
        let blocks = self.atomic_blocks as usize;
        let grid_blocks: f64 = self.atomic_block_times.iter().sum();
        // Per slice: each sampled block's updates of shared granules.
        let mut slices: HashMap<u64, Vec<f64>> = HashMap::default();
        let mut spread_updates = 0.0;
        let mut spread_granules = (u64::MAX, 0u64);
        for (&granule, updates) in &self.slice_granules {
            if updates.len() >= blocks {
                let slice = slices
                    .entry(granule % self.l2_slices)
                    .or_insert_with(|| vec![0.0; blocks]);
                for &(block, count, _) in updates {
                    if let Some(own) = slice.get_mut(block as usize) {
                        *own += count as f64;
                    }
                }
            } else {
                spread_updates += updates.iter().map(|&(_, c, t)| c as f64 * t).sum::<f64>();
                spread_granules = (
                    spread_granules.0.min(granule),
                    spread_granules.1.max(granule),
                );
            }
        }
        let spread_slices = if spread_granules.0 <= spread_granules.1 {
            (spread_granules.1 - spread_granules.0 + 1).min(self.l2_slices)
        } else {
            self.l2_slices
        };
        // However the estimates fall, the busiest slice takes at least an even share of all the
        // launch's updates.
        let all_updates: f64 = self
            .slice_granules
            .values()
            .flatten()
            .map(|&(_, count, times)| count as f64 * times)
            .sum();
        let even = all_updates / self.l2_slices as f64;
        self.profile.hottest_slice_updates =
            (busiest_slice(&slices, grid_blocks) + spread_updates / spread_slices as f64).max(even);
        if self.profile.blocks > 0.0 {
            self.profile.missing_round_trips_per_block =
                self.missing_round_trips / self.profile.blocks;
            self.profile.hitting_round_trips_per_block =
                self.hitting_round_trips / self.profile.blocks;
        }
        self.profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{gt200, h100};
    use crate::kernel::{Dim3, Value};
    use crate::simulate::{simulate, SimulationInput};

    use crate::lesson_kernels::{ADJ_DIFF, ATOMICS, COALESCING, MATMUL, TRANSPOSE};

    /// One named quantity of a profile.
    fn field(profile: &MemoryProfile, name: &str) -> f64 {
        let buffer = |buffer: &str| {
            profile
                .buffers
                .iter()
                .find(|b| b.name == buffer)
                .unwrap_or_else(|| panic!("no buffer {buffer}"))
        };
        match name {
            "missing round trips" => profile.missing_round_trips_per_block,
            "hitting round trips" => profile.hitting_round_trips_per_block,
            "l1 fill sectors" => profile.l1_fill_sectors,
            "input bytes read" => buffer("input").read.bytes,
            "result bytes written" => buffer("result").written.bytes,
            "a bytes read" => buffer("a").read.bytes,
            "a atoms read" => buffer("a").read.atoms,
            "hottest requests" => profile.hottest_address_requests,
            "hottest lanes" => profile.hottest_address_lanes,
            "hottest slice updates" => profile.hottest_slice_updates,
            "shared atomic passes" => profile.shared_atomic_passes,
            "store lines" => profile.global_st_lines,
            "partial store lines" => profile.global_partial_st_lines,
            "out partial sectors" => buffer("out").partial_sectors,
            "row activations" => profile.dram_row_activations,
            other => panic!("unknown quantity {other}"),
        }
    }

    /// Simulates `input` on H100 and compares the named quantities of its memory profile.
    fn check(input: &SimulationInput, expected: &[(&str, f64)]) {
        let report = simulate(input).expect("the launch simulates");
        for (name, value) in expected {
            assert_eq!(field(&report.memory, name), *value, "{name}");
        }
    }

    fn launch(source: &str, kernel: &str, grid: Dim3, block: Dim3) -> SimulationInput {
        let mut input = SimulationInput::new(source, kernel, h100());
        input.grid = grid;
        input.block = block;
        input
    }

    fn transpose(kernel: &str) -> SimulationInput {
        let mut input = launch(TRANSPOSE, kernel, Dim3::new(4, 4, 1), Dim3::new(32, 8, 1));
        input.args = vec![("n".to_string(), Value::Int(128))];
        input.buffers = vec![
            ("out".to_string(), 4 * 128 * 128),
            ("in".to_string(), 4 * 128 * 128),
        ];
        input
    }

    /// The L1 passes of a 4-byte load that hits, lane l reading the byte address `address(l)`.
    fn passes(address: impl Fn(u64) -> u64) -> u64 {
        let width = crate::access::AccessWidth::new(4).expect("4 bytes is a width");
        let access = WarpAccess::from_fn(Space::Global, AccessKind::Load, width, |lane| {
            Some(address(u64::from(lane)))
        });
        let mut lines: Vec<u64> = access.active_lanes().map(|(_, a)| a / LINE_BYTES).collect();
        lines.sort_unstable();
        lines.dedup();
        load_wavefronts(&access, &lines)
    }

    /// A global load of buffer `a` (1 MB at `crate::kernel::interp::GLOBAL_BASE`) by `warp`, lane
    /// l at `offset(l)` bytes into it; `None` for a lane off.
    fn load_of_a(warp: u32, offset: impl Fn(u64) -> Option<u64>) -> MemRecord {
        let width = crate::access::AccessWidth::new(4).expect("4 bytes is a width");
        let base = crate::kernel::interp::GLOBAL_BASE;
        MemRecord {
            access: WarpAccess::from_fn(Space::Global, AccessKind::Load, width, |lane| {
                offset(u64::from(lane)).map(|offset| base + offset)
            }),
            span: crate::kernel::Span {
                line: 20,
                col: 7,
                start: 300,
                end: 330,
            },
            block: [0, 0, 0],
            warp,
            order: LoadOrder::default(),
            fences_passed: 0,
        }
    }

    #[test]
    fn an_access_like_one_measured_before_is_profiled_as_its_shape_moved() {
        // A 17-wide tile's row and the start of the next, 4,000 bytes on: the warps of a guarded
        // matmul's block at tile 17. The same layout a line on, two lines on and 4 bytes on
        // (another alignment), in another block; then across the end of the buffer's first
        // megabyte half, which a layout of two buffers splits.
        let tile = |start: u64| {
            move |lane: u64| {
                Some(
                    start
                        + if lane < 17 {
                            4 * lane
                        } else {
                            4000 + 4 * (lane - 17)
                        },
                )
            }
        };
        let records = [
            load_of_a(0, tile(0)),
            load_of_a(1, tile(128)),
            load_of_a(1, tile(256)),
            load_of_a(0, tile(4)),
            load_of_a(2, tile(0)),
            load_of_a(0, tile((1 << 19) - 128)),
        ];
        let device = h100();
        let one_buffer = vec![("a".to_string(), crate::kernel::interp::GLOBAL_BASE, 1 << 20)];
        let halves = vec![
            ("a".to_string(), crate::kernel::interp::GLOBAL_BASE, 1 << 19),
            (
                "b".to_string(),
                crate::kernel::interp::GLOBAL_BASE + (1 << 19),
                1 << 19,
            ),
        ];
        for layout in [one_buffer, halves] {
            // Each record measured afresh, by a profiler of its own blocks' shapes...
            let mut measured = ProfileBuilder::new(&device, &layout);
            let mut found = ProfileBuilder::new(&device, &layout);
            let mut shapes = BlockProfiler::new(&device, layout.clone());
            shapes.watch_half_lines();
            for (block, record) in records.iter().enumerate() {
                let mut alone = BlockProfiler::new(&device, layout.clone());
                alone.watch_half_lines();
                let shape = alone.record_shape(record);
                // ... and by one that keeps them from block to block.
                assert_eq!(
                    shapes.record_shape(record).map(|s| s.touched),
                    shape.map(|s| s.touched)
                );
                assert_eq!(
                    shapes.touched_sector_ranges(),
                    alone.touched_sector_ranges(),
                    "{block}"
                );
                measured.add_block(&mut alone, 1.0);
                found.add_block(&mut shapes, 1.0);
            }
            assert_eq!(found.finish(), measured.finish());
        }
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
        let shapes = include_str!("../../../tests/reference/l1_shapes/shapes.jsonl");
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
    fn tr_copy_waits_once_per_element_and_tr_shared_once_per_tile() {
        // `out` may alias `in`, so each of tr_copy's four loads waits for the store before it;
        // tr_shared's four loads go to shared memory, issued together, and wait once.
        check(
            &transpose("tr_copy"),
            &[("missing round trips", 4.0), ("hitting round trips", 0.0)],
        );
        check(&transpose("tr_shared"), &[("missing round trips", 1.0)]);
        // tr_naive writes a column: each of a warp's stores touches 32 lines.
        check(
            &transpose("tr_naive"),
            &[("store lines", 16.0 * 8.0 * 4.0 * 32.0)],
        );
    }

    #[test]
    fn a_column_store_writes_part_of_a_sector_in_each_of_its_lines_and_a_scatter_leaves_them_partial(
    ) {
        // Probe group M and `tr_naive`: each of a warp's column stores writes one word in each of
        // 32 lines, a part of a sector the L2 merges; the block's 32 rows fill the sectors, so
        // none is left partly written for DRAM.
        check(
            &transpose("tr_naive"),
            &[
                ("partial store lines", 16.0 * 8.0 * 4.0 * 32.0),
                ("out partial sectors", 0.0),
            ],
        );
        check(
            &transpose("tr_copy"),
            &[("partial store lines", 0.0), ("out partial sectors", 0.0)],
        );
        // One word in every eighth word: a warp's request writes part of 8 lines' sectors, and
        // no thread ever completes one (p_scatter_st cstride=8). The grid's estimate is the
        // fewer of the blocks' own 64 and the 56 that its 256 written bytes cannot fill, as it
        // cannot tell which blocks would complete which sectors.
        const SCATTER: &str =
            "__global__ void scatter(int* out) { out[8 * threadIdx.x] = threadIdx.x; }\n";
        let mut input = launch(SCATTER, "scatter", Dim3::new(1, 1, 1), Dim3::new(64, 1, 1));
        input.buffers = vec![("out".to_string(), 4 * 8 * 64)];
        check(
            &input,
            &[
                ("partial store lines", 2.0 * 8.0),
                ("out partial sectors", 56.0),
            ],
        );
    }

    #[test]
    fn adjacent_difference_reads_each_input_once_but_fills_one_sector_more_per_block() {
        // Seed 000: input[i - 1] is read again, but it lies in the sector the block (or, at the
        // block's first lane, the previous block) reads anyway: 256 ints are 32 sectors, plus one.
        let n = 4 * 256;
        let mut input = launch(
            ADJ_DIFF,
            "adj_diff_naive",
            Dim3::new(4, 1, 1),
            Dim3::new(256, 1, 1),
        );
        input.args = vec![("n".to_string(), Value::Int(n))];
        input.buffers = vec![
            ("result".to_string(), 4 * n as u64),
            ("input".to_string(), 4 * n as u64),
        ];
        check(
            &input,
            &[
                ("input bytes read", 4.0 * n as f64),
                ("result bytes written", 4.0 * (n - 1) as f64),
                ("l1 fill sectors", 32.0 + 3.0 * 33.0),
                ("missing round trips", 1.0),
            ],
        );
        // The shared version's first warp reads input[i - 1] after the barrier: a second trip.
        input.kernel = "adj_diff_shared".to_string();
        input.dyn_smem = 1024;
        check(&input, &[("missing round trips", 1.75)]);
    }

    #[test]
    fn matmul_footprints_are_capped_at_the_buffers_and_four_iterations_are_in_flight() {
        // 64 blocks each read 16 rows of `a`: 4 times the matrix, which the cap brings back to it.
        let mut input = launch(MATMUL, "mm_naive", Dim3::new(8, 8, 1), Dim3::new(16, 16, 1));
        input.args = vec![("n".to_string(), Value::Int(128))];
        input.buffers = ["a", "b", "c"]
            .iter()
            .map(|b| (b.to_string(), 4 * 128 * 128))
            .collect();
        check(
            &input,
            &[
                ("a bytes read", 4.0 * 128.0 * 128.0),
                ("a atoms read", 4.0 * 128.0 * 128.0 / 64.0),
                // 128 iterations, four in flight at a time.
                ("missing round trips", 32.0),
            ],
        );
    }

    #[test]
    fn a_global_sum_updates_one_address_from_every_warp() {
        // Seed 000: every thread adds to one counter; lanes of a warp combine, warps serialize.
        let mut input = launch(
            ATOMICS,
            "sum_global_atomic",
            Dim3::new(8, 1, 1),
            Dim3::new(256, 1, 1),
        );
        input.args = vec![("n".to_string(), Value::Int(2048))];
        input.buffers = vec![("in".to_string(), 4 * 2048), ("result".to_string(), 4)];
        // `result` is a kernel parameter, so nvcc proves the address warp-uniform: its L2 slice
        // makes one update per warp.
        check(
            &input,
            &[
                ("hottest requests", 64.0),
                ("hottest lanes", 2048.0),
                ("hottest slice updates", 64.0),
            ],
        );
        // The hierarchical sum: one global update per block, and one pass per warp through the
        // shared-memory pipe, since `&partial` is warp-uniform too.
        input.kernel = "sum_hier_atomic".to_string();
        check(
            &input,
            &[
                ("hottest requests", 8.0),
                ("hottest slice updates", 8.0),
                ("shared atomic passes", 64.0),
            ],
        );
    }

    #[test]
    fn lanes_on_one_word_update_it_one_by_one_unless_the_address_is_provably_uniform() {
        // Probe group F: `mask` is 0 at run time, so every lane adds to bins[0], but the
        // compiler cannot know it: each lane is an update of its own. Bins 32 bytes apart
        // (`stride` 8) lie in one 512-byte slice granule, bins 128 bytes apart do not.
        let source = "__global__ void bins(int* bins, int mask, int stride) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            atomicAdd(&bins[(i & mask) * stride], 1);
        }";
        let with = |mask: i64, stride: i64| {
            let mut input = launch(source, "bins", Dim3::new(4, 1, 1), Dim3::new(64, 1, 1));
            input.buffers = vec![("bins".to_string(), 4096)];
            input.args = vec![
                ("mask".to_string(), Value::Int(mask)),
                ("stride".to_string(), Value::Int(stride)),
            ];
            input
        };
        // 256 lanes on one word: 256 updates.
        check(&with(0, 1), &[("hottest slice updates", 256.0)]);
        // Eight bins in one sector: the L2 serves the sector's words together, each word's
        // four lanes of a warp one by one.
        check(&with(7, 1), &[("hottest slice updates", 8.0 * 4.0)]);
        // Eight sectors of one granule: one after another, 32 updates a warp again.
        check(&with(7, 8), &[("hottest slice updates", 256.0)]);
        // Eight lines, two granules: half each.
        check(&with(7, 32), &[("hottest slice updates", 128.0)]);
    }

    #[test]
    fn a_column_walk_opens_a_row_per_lane_and_a_sweep_shares_its_rows_on_gt200() {
        // On GT200 (7 partitions of 256 bytes, 4 KB rows), lanes 4 KB apart land in 32 different
        // rows: 32 activations. The copy's 128 contiguous bytes of `out` are a piece of a sweep,
        // which blocks running together share: 128 / 4096 of a row.
        let mut input = launch(
            COALESCING,
            "strided_copy",
            Dim3::new(1, 1, 1),
            Dim3::new(32, 1, 1),
        );
        input.device = gt200();
        input.args = vec![
            ("stride".to_string(), Value::Int(1024)),
            ("n_out".to_string(), Value::Int(32)),
        ];
        input.buffers = vec![
            ("out".to_string(), 4 * 32),
            ("in".to_string(), 4 * 32 * 1024),
        ];
        check(&input, &[("row activations", 32.0 + 128.0 / 4096.0)]);
        // Adjacent difference streams: each of its three accesses covers about 1 KB a block.
        let n = 4 * 256;
        let mut input = launch(
            ADJ_DIFF,
            "adj_diff_naive",
            Dim3::new(4, 1, 1),
            Dim3::new(256, 1, 1),
        );
        input.device = gt200();
        input.args = vec![("n".to_string(), Value::Int(n))];
        input.buffers = vec![
            ("result".to_string(), 4 * n as u64),
            ("input".to_string(), 4 * n as u64),
        ];
        let report = simulate(&input).expect("the launch simulates");
        let activations = report.memory.dram_row_activations;
        assert!(
            (2.9..3.2).contains(&activations),
            "{activations} activations for 12 accesses of 1 KB"
        );
        // H100 has an L2 in front of its DRAM: no rows are counted.
        input.device = h100();
        check(&input, &[("row activations", 0.0)]);
    }

    #[test]
    fn a_slice_every_sampled_block_updates_alike_keeps_its_estimate_and_a_noisy_one_is_lowered() {
        // One word every block updates 256 times: no sampling error, 16,384 blocks x 256.
        let sum: HashMap<u64, Vec<f64>> = [(0, vec![256.0, 256.0, 256.0])].into_iter().collect();
        assert_eq!(busiest_slice(&sum, 16_384.0), 4_194_304.0);
        // Random bins: 64 slices whose three sampled counts scatter around 4; the largest
        // estimate (from counts 9, 8, 7) is lowered by its error, sqrt(2 ln 64) x 1 x 16,384.
        let mut random: HashMap<u64, Vec<f64>> =
            (1..64).map(|slice| (slice, vec![4.0, 4.0, 4.0])).collect();
        random.insert(0, vec![9.0, 8.0, 7.0]);
        let z = (2.0 * 64f64.ln()).sqrt();
        let expected = (8.0 - z * (1.0 / 3f64.sqrt())) * 16_384.0;
        assert!((busiest_slice(&random, 16_384.0) - expected).abs() < 1e-6);
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
