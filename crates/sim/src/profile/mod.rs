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
//!
//! The module is split along its seams: `block` collects one block's records (`BlockProfiler`),
//! `shape` holds what of a global access a move keeps (`RecordShape`) and the L1's passes of a
//! load that hits, `rows` the DRAM rows of cc 1.x, and `grid` sums the blocks into the launch's
//! profile (`ProfileBuilder`).

mod block;
mod grid;
mod rows;
mod shape;

pub use block::{BlockProfiler, TouchedRange};
pub use grid::ProfileBuilder;
pub use shape::{CopyKind, Issue, RecordShape};
// The profiler's maps are keyed by integers (`hashing`). The re-export keeps the path that the
// simulation's driver names.
pub use crate::hashing::IntegerHashMap;

use crate::coalescing::SECTOR_BYTES;
use crate::hashing::IntegerHashSet;
use serde::{Deserialize, Serialize};
use std::collections::HashSet as StdHashSet;

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
        let mut atoms: IntegerHashSet<u64> = IntegerHashSet::default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{AccessKind, Space, WarpAccess};
    use crate::device::{gt200, h100};
    use crate::kernel::{Dim3, LoadOrder, MemRecord, Value};
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
}
