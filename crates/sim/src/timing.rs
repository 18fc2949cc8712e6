//! Timing: how long a simulated launch takes, and what limits it.
//!
//! `simulate` counts what a launch does; `predict` turns those counts into time on a device. The
//! model is a small queueing network, solved per SM:
//!
//! 1. **Units and their busy times.** Every unit the launch uses is busy for the work it gets
//!    divided by its rate: the SM's L1/shared data pipe (one pass of a global load or one
//!    shared-memory wavefront per clock, plus L2 fills into the L1 at 128 bytes per clock; a load
//!    takes a pass per line whose words share a bank with another line's, four lines a pass for
//!    its tags, and a pass per line that misses), its FP32 lanes, its
//!    instruction issue, the L2 (every request takes a 128-byte line slot, so a store that touches
//!    one sector of a line costs as much L2 time as a full line: this is what makes `tr_naive`'s
//!    column writes slow), DRAM (bytes over the measured copy bandwidth; on cc 1.x also a column
//!    command per transaction and an activation per row opened, see below), and the serialized
//!    updates of the most-updated address by global atomics. A store that writes part of a
//!    sector takes the L2 longer than a full line's (it merges the bytes into the sector), and a
//!    sector left partly written must be read from DRAM before it is written back (probe M).
//!    Shared atomics on one word serialize in the SM's own shared-memory pipe, which is why they
//!    are "much faster than atomics to global variables" (seed 000).
//! 2. **The cache model** decides how many bytes reach DRAM. L1: the first load of each sector by
//!    a block misses and later ones hit (adjacent difference's `input[i - 1]`). L2: every distinct
//!    byte the launch reads or writes passes DRAM once (64-byte atoms on H100), and nothing more,
//!    since reuse between blocks (the rows of a matmul) is caught by the L2. Timed repetitions of
//!    a launch run with the L2 as the previous one left it: if the whole footprint fits the L2's
//!    capacity for shared data (its size over its partitions, as data all SMs use is kept in
//!    each partition), the launch finds what it reads there and DRAM reads nothing; if it exceeds
//!    the whole L2, an LRU cache keeps nothing of a cyclic sweep; between the two, the part the
//!    copies leave room for stays (linearly, from all at the lower size to none at the whole L2).
//!    What a launch writes reaches DRAM every time, however well it fits: a repeated launch
//!    writing 8, 16 or 32 MB takes the DRAM's time for it, where one reading 8 or 16 MB finds it in
//!    the L2 (`tests/reference/dram_mix/`, `r_write4` and `r_read4`; `tr_copy` at n = 2048, 16 MB
//!    read and 16 MB written, takes 13 us, DRAM's time for the writes and the launch; the other
//!    presets with an L2 are taken to do the same, unmeasured). A launch whose
//!    addresses follow data it wrote goes elsewhere the next time (probe group C's `p_mlp*` keep
//!    each warp's position in `state`): it finds only the share of its lines that the previous
//!    launch touched too (`simulate` runs one block again to see it). cc 1.x has no cache for global memory: every
//!    coalesced transaction goes to DRAM, and what it costs there depends on the DRAM rows
//!    (`profile`, "DRAM rows"). A transaction takes its burst (its bytes over the bus's
//!    bandwidth), a column command (`tCCD`) on its partition, and, if it opens a row, an
//!    activation (`tRRD`). A row stays open for the access stream that opened it: streams that
//!    walk a row (adjacent difference, `a[row * n + k]`, the tiles of `a`) pay for their bursts
//!    and commands; the column walk `b[k * n + col]` opens a row at every step.
//! 3. **Latency hiding.** Blocks are the customers of a closed queueing network (exact mean-value
//!    analysis, Reiser and Lavenberg 1980): the SM holds as many blocks as the occupancy allows,
//!    each block cycles through the SM's pipes (one station: its pipes overlap), its share of L2,
//!    DRAM and the atomic unit (the busiest L2 slice), and a delay: its round trips to memory
//!    (Little's law: a block waits once per dependent round trip, not once per load) at the
//!    unloaded latency of the level they reach, or, if longer, its warps' instructions at the
//!    dependent-issue latency (a warp alone cannot issue faster; its loads are in flight while it
//!    issues, so the two overlap). The block dispatcher is one more station, which each block
//!    visits once to be started and retired (probe group A). Few blocks with long round trips
//!    leave the pipes idle; many blocks hide the latency and a unit saturates.
//! 4. **Barriers.** The resident blocks of an SM start together on the same work and reach their
//!    barriers together, so at each `__syncthreads` the SM's pipes drain and no other block fills
//!    the gap: each barrier adds its wait to every round of resident blocks on the SM's own time
//!    (a GPU-wide unit such as DRAM stays busy with the other SMs meanwhile).
//! 5. **Waves and launch.** The SM that gets the most blocks (`ceil(blocks / SMs)`) finishes last
//!    (the tail), and every launch pays a fixed launch overhead.
//!
//! The time is the per-SM time of the grid's blocks plus the launch overhead; the bottleneck is the
//! unit with the largest share of that time (or the latency, when no unit is busy most of it, or
//! the launch, when it takes half the time). The bandwidth figure counts useful bytes: each
//! distinct byte the launch reads or writes, once, as the lectures and the reference measurements
//! count them (8 bytes per element for adjacent difference, naive or not).
//!
//! # Constants
//!
//! All constants are per device (`Device`, `DeviceTiming`), none per kernel:
//!
//! | constant | H100 | source |
//! |---|---|---|
//! | SM clock | 1,980 MHz | H100 datasheet (boost clock) |
//! | DRAM bandwidth | 3,011 GB/s | h100.json ceiling `d2d_copy` (other presets: datasheet) |
//! | FP32 lanes per SM | 128 | H100 datasheet |
//! | L1 / L2 / DRAM latency | 40 / 291 / 700 clocks | pointer chase, markdewing/AI_kernels `latency/README.md` |
//! | L2 bandwidth | 5,120 B/clock | hardware-features table of PMC10448217 (table 3: 8,986 GB/s at 1,755 MHz) |
//! | L2 partitions | 2 | Ampere and Hopper whitepapers |
//! | DRAM atom | 64 B | h100.json ncu `strided_copy stride=32` |
//! | issue | 3.5 warp instructions/clock, every SASS instruction | 4 sub-partitions (Hopper whitepaper), 3.54-3.67 sustained (probes I, L, Nsight Compute) |
//! | special function unit | 16 lanes/clock (one `MUFU` per 8 clocks per sub-partition) | Programming Guide throughput table; `tests/reference/warp_probes` (`w_exp2f`, `w_fast_sinf`) |
//! | warp match and reduce | a `REDUX` per 8 clocks per sub-partition, a `MATCH` per 16 | `tests/reference/warp_probes` (`w_reduce_add`, `w_match_any`) |
//! | ALU pipe | 64 lanes/clock (a logical operation, shift, comparison or vote per 2 clocks per sub-partition) | Programming Guide throughput table; `tests/reference/warp_probes` (`w_any`, `w_ballot`) |
//! | shared memory | 1 clock/wavefront | h100.json ncu `smem_stride` records |
//! | block dispatch | 158 clocks a block, or 7 a warp if more | probe group A, `p_empty` (524,288 empty blocks) |
//! | launch overhead | 10,400 clocks | probe group A, `p_empty grid=1` (5.26 us between CUDA events) |
//! | global atomic | 1.45 clocks/update of one L2 slice | probe group F, `p_atom_global mask=0` |
//! | L2 slices | 64, 512 bytes each before the next | probe group F (granule); count assumed (see `device.rs`) |
//! | barrier | 71 clocks per `__syncthreads`, per round of resident blocks | probe group K, `p_barrier` against `p_nobarrier` |
//! | dependent issue | 4 clocks between an instruction and one that needs its result | Jia et al. 2018, Volta microbenchmarks (cc 1.x, 2.x: 22, Programming Guide 3.2) |
//! | L1 data pipe | 1 pass or shared wavefront/clock, fills 128 B/clock; a load takes the larger of its lines over 4 (tags) and the most lines whose words share a bank (data), or its lines that miss | Nsight Compute on the H100: `l1tex__data_pipe_lsu_wavefronts`, `l1tex__t_output_wavefronts` of 18 request shapes (`profile::load_wavefronts`), probe group E |
//! | loads in flight | the unroll factor of the load's loop (16 for a small run-time loop), as many copies as fit 32 registers a thread | `kernel::issue` and `registers`, from the SASS and `ptxas -v` of probes C, D, L and `w_nbody` |
//! | partial-sector store | 4/3 of an L2 line slot per line | `tr_naive` and probe group M's `p_scatter_st cstride=1` (28-32 lines a clock against 40) |
//! | partly written sector | 192 bytes of DRAM time beyond its write | probe group M, `p_scatter_st cstride=8` and `32` (Nsight: 32 bytes read per sector written) |
//!
//! The other presets carry their own values, each sourced at the preset (`device.rs`). cc 1.x
//! issues one warp instruction per 4 clocks (seed 003), counting FP32 and memory instructions
//! only (`IssuedInstructions`: its instructions take shared-memory operands, and the SASS
//! estimate is of sm_90 code), and has no L2; its DRAM (`DramRows`):
//!
//! | constant | G80 | GT200 | source |
//! |---|---|---|---|
//! | memory clock | 900 MHz | 999 MHz | 8800 GTX technical brief; GTX 260 specifications |
//! | partitions (64-bit) | 6 | 7 | 384- and 448-bit buses; 16 B/clock each gives 86.4 and 112 GB/s |
//! | partition interleave | 256 B | 256 B | Ruetsch and Micikevicius, "Optimizing Matrix Transpose in CUDA" (partition camping) |
//! | row per partition | 4 KB | 4 KB | 2 KB rows (512 columns of 4 B) of a 512-Mbit x32 GDDR3 chip, two chips a partition |
//! | column command `tCCD` | 2 clocks | 2 clocks | Qimonda HYB18H512321AF data sheet, table 38 (800 MHz grade) |
//! | row activation `tRRD` | 8 clocks | 8 clocks | Qimonda HYB18H512321AF data sheet, table 38 (800 MHz grade) |
//!
//! # Known limits
//!
//! FP32 instructions are counted as FMAs (two flops per lane), as in the lecture kernels, and
//! occupy the FP32 lanes for the whole warp however many lanes are active. Issue is charged for
//! `kernel::issue`'s estimate of the SASS instructions (within 25% of Nsight Compute's on the
//! probes' loops, not exact), at one sustained rate:
//! the integer multiplies of `%` and `/`, which run at half rate, make group J's division loops
//! 11-22% slower on the H100 than that rate gives. Round trips follow the data (a load waits for a
//! load in flight only if its address or a branch needs that load's data) and the unrolling of
//! the load's loop. Whether a repetition revisits the lines is seen from one block run again on
//! the memory the launch left (`MemoryProfile::repeat_moves_on`), so only what that block does is
//! known: blocks that move on differently from it are taken to move like it. A
//! barrier's wait is one constant however many blocks wait: 32 resident blocks of 64 threads wait
//! longer per barrier (100 clocks) than 8 of 256 (71), and `p_barrier` with 64-thread blocks is
//! 19% fast. Reuse between blocks in one SM's L1 is not counted, nor L1 capacity misses.
//! DRAM row locality is taken to be good on devices with an L2. On cc 1.x it is counted per
//! access stream, and the streams are taken not to disturb each other's rows (a row-hit-first
//! controller with enough banks); the column command and the activation are added to the burst,
//! not overlapped with other banks' bursts. How the rows of streams that several blocks share
//! interleave in time is not modelled either way: a sweep's rows are shared by the blocks that
//! run together, scattered rows are not. With these rules the GT200 lecture figures are met
//! within 20%, but the tiled matmul's 17.2-fold speed-up over the naive one comes out near
//! 12-fold: both kernels walk rows of `a` and jump rows of `b` once per pair of loads, so per
//! transaction the model cannot make the naive kernel much costlier than the tiled one, as the
//! GT200 was. G80's naive matmul (12.3 GFLOPS against the lecture's "about 15") relies on one
//! reading of the lecture's measurement, not of the guide: lanes of a half-warp that read one
//! word share one transaction (`coalescing`), where the guide's cc 1.0 rule would issue 16 and
//! cap the kernel at 4.8 GFLOPS. Likewise, that a store touching part of a sector takes 4/3 of a
//! line slot of the L2 is what the H100 measurements show (`tr_naive`, probe group M), not a
//! documented mechanism; merging into ECC-protected sectors is the likely reason.
//! The network's stations serve exponentially, a rough fit for pipes that are closer to
//! deterministic; the unloaded latencies make up for the queueing in the memory system that the
//! network leaves out.

use crate::coalescing::{LINE_BYTES, SECTOR_BYTES};
use crate::device::{GlobalCoalescing, IssuedInstructions};
use crate::profile;
use crate::simulate::SimulationReport;
use serde::{Deserialize, Serialize};

/// A unit that can limit a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// DRAM: bandwidth, and on cc 1.x column commands and row activations.
    Dram,
    /// L2 request slots.
    L2,
    /// The L1's tag and data stages for global memory: lines of requests, and fills from L2.
    L1,
    /// Shared-memory wavefronts (including bank conflicts and shared atomics).
    Shared,
    /// The FP32 lanes.
    Fp32,
    /// Instruction issue.
    Issue,
    /// The special function unit (`MUFU`: reciprocals, square roots, exponentials, sines).
    Sfu,
    /// The unit that takes a warp's `MATCH` and `REDUX`.
    WarpUnit,
    /// The integer and logic pipe: logical operations, shifts, comparisons, votes.
    Alu,
    /// Serialized global atomics on one address.
    Atomics,
    /// The block dispatcher, which starts and retires blocks at a fixed rate.
    Dispatch,
    /// Waiting for memory: too few blocks, or too few loads in flight, to keep a unit busy.
    Latency,
    /// The fixed cost of a launch.
    Launch,
}

impl Unit {
    /// The unit's name in JSON and URLs: `dram`, `l2`, `l1`, `shared`, `fp32`, `issue`, `sfu`, `atomics`,
    /// `latency`, `launch`.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Dram => "dram",
            Unit::L2 => "l2",
            Unit::L1 => "l1",
            Unit::Shared => "shared",
            Unit::Fp32 => "fp32",
            Unit::Issue => "issue",
            Unit::Sfu => "sfu",
            Unit::WarpUnit => "warp-unit",
            Unit::Alu => "alu",
            Unit::Atomics => "atomics",
            Unit::Dispatch => "dispatch",
            Unit::Latency => "latency",
            Unit::Launch => "launch",
        }
    }

    /// What the unit is, in the lectures' words.
    pub fn describe(self) -> &'static str {
        match self {
            Unit::Dram => "DRAM bandwidth",
            Unit::L2 => "the L2 cache",
            Unit::L1 => "the L1 / global load pipe",
            Unit::Shared => "shared-memory wavefronts",
            Unit::Fp32 => "FP32 arithmetic",
            Unit::Issue => "instruction issue",
            Unit::Sfu => "the special function unit",
            Unit::WarpUnit => "warp matches and reductions",
            Unit::Alu => "the integer and logic pipe",
            Unit::Atomics => "serialized atomics",
            Unit::Dispatch => "starting and retiring blocks",
            Unit::Latency => "memory latency (too little in flight)",
            Unit::Launch => "the launch overhead",
        }
    }
}

/// How busy one unit is during the launch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnitTime {
    pub unit: Unit,
    /// Time the unit is busy (for a per-SM unit, on an average SM), in milliseconds.
    pub busy_ms: f64,
    /// `busy_ms` over the predicted time.
    pub share: f64,
}

/// The predicted time of a launch and where it goes. Plain data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub time_ms: f64,
    /// FP32 operations per second, in GFLOP/s.
    pub gflops: f64,
    /// Useful bytes (each distinct byte read or written once) per second, in GB/s.
    pub gbps: f64,
    /// The distinct bytes the launch reads and writes.
    pub useful_bytes: f64,
    pub bottleneck: Unit,
    /// Every unit's busy time and share, in the order of `Unit`.
    pub units: Vec<UnitTime>,
    /// Bytes between L2 and DRAM (on cc 1.x: every transaction's bytes).
    pub dram_bytes: f64,
    /// Whether the footprint fits the L2 and repeated launches find it there.
    pub l2_warm: bool,
    /// FP32 operations per DRAM byte; `None` when no byte reaches DRAM.
    pub arithmetic_intensity: Option<f64>,
    /// The roofline's bound at that intensity: `min(FP32 ceiling, intensity x DRAM bandwidth)`.
    pub attainable_gflops: f64,
    /// Grid blocks over the blocks all SMs hold at once.
    pub waves: f64,
    /// A block's time waiting for memory, in nanoseconds.
    pub block_latency_ns: f64,
    /// Whether an SM holds enough warps to keep its busiest unit working through that wait.
    pub latency_hiding: LatencyHiding,
}

/// Latency hiding as the lectures count it (seed 003: "a minimal of 13 warps are needed to
/// fully tolerate 200-cycle memory latency"), read off the timing model's queueing network.
///
/// A block alternates between its wait (`Prediction::block_latency_ns`: round trips to memory,
/// or its dependent instructions) and its work at each unit. While it waits, the other resident
/// blocks keep the units busy; the busiest unit never idles once the SM holds as many blocks as
/// a block's whole cycle (wait plus work everywhere) is longer than its work at that unit. That
/// count is the network's saturation point (Lazowska et al., "Quantitative System Performance",
/// 1984, section 5.3: `N* = (D + Z) / D_max`); seed 003's 13 warps are the same count, with a
/// warp's 4 instructions of 4 clocks as its work and 200 clocks as its wait.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyHiding {
    /// Warps resident on one SM: the occupancy's blocks, or the grid's share if that is fewer.
    pub resident_warps: u32,
    /// Warps one SM must hold for its busiest unit to be busy all the time.
    pub warps_to_cover: f64,
    /// One block's work at the busiest unit per pass, in nanoseconds.
    pub busiest_work_ns: f64,
    /// One block's wait per pass (its round trips to memory, or its dependent instructions), in
    /// nanoseconds: the delay of the queueing network.
    pub wait_ns: f64,
    /// One block's work per pass at every unit together (the SM's pipes, the dispatcher, its
    /// shares of the L2, DRAM and the atomic units), in nanoseconds: with the wait, a block's
    /// whole cycle. `warps_to_cover` is (wait + this) / busiest work, in blocks, times the warps
    /// of a block.
    pub work_ns: f64,
    /// The busiest unit: the one the waiting blocks must keep fed.
    pub busiest: Unit,
}

impl LatencyHiding {
    /// The share of the wait the resident warps cover, at most 1: 1 when a unit, not the
    /// latency, sets the pace.
    pub fn covered(&self) -> f64 {
        if self.warps_to_cover <= 0.0 {
            1.0
        } else {
            (f64::from(self.resident_warps) / self.warps_to_cover).min(1.0)
        }
    }
}

/// Throughput (customers per second) of a closed network with `customers` customers, queueing
/// stations of the given `demands` (seconds of service per visit) and a pure delay of `delay`
/// seconds: exact mean-value analysis (Reiser and Lavenberg, "Mean-value analysis of closed
/// multichain queuing networks", JACM 1980).
fn closed_network_throughput(customers: u32, demands: &[f64], delay: f64) -> f64 {
    let mut queue = vec![0.0; demands.len()];
    let mut throughput = 0.0;
    for n in 1..=customers.max(1) {
        let residence: Vec<f64> = demands
            .iter()
            .zip(&queue)
            .map(|(d, q)| d * (1.0 + q))
            .collect();
        let cycle = delay + residence.iter().sum::<f64>();
        if cycle <= 0.0 {
            return f64::INFINITY;
        }
        throughput = f64::from(n) / cycle;
        for (q, r) in queue.iter_mut().zip(&residence) {
            *q = throughput * r;
        }
    }
    throughput
}

/// Seconds one SM needs for `blocks` blocks (fractional: an average SM) holding `resident` at a
/// time: full rounds at the steady throughput, the rest with as many customers as are left.
fn sm_time(blocks: f64, resident: u32, demands: &[f64], delay: f64) -> f64 {
    if blocks <= 0.0 {
        return 0.0;
    }
    let resident = resident.max(1);
    let steady = closed_network_throughput(resident, demands, delay);
    let full = (blocks / f64::from(resident)).floor() * f64::from(resident);
    let rest = blocks - full;
    let mut time = if steady.is_finite() {
        full / steady
    } else {
        0.0
    };
    if rest > 1e-9 {
        let left = (rest.ceil() as u32).clamp(1, resident);
        let throughput = closed_network_throughput(left, demands, delay);
        if throughput.is_finite() && throughput > 0.0 {
            time += rest / throughput;
        }
    }
    time
}

/// Predicts the time of the launch that `report` describes on `device` (the device it was
/// simulated for: the counters depend on it).
pub fn predict(report: &SimulationReport) -> Prediction {
    let device = &report.device;
    let c = &report.counters;
    let m = &report.memory;
    let t = &device.timing;
    let clock = f64::from(device.sm_clock_mhz.max(1)) * 1e6;
    let sms = f64::from(device.n_sms.max(1));
    let grid = report.grid_blocks.max(1) as f64;
    let cached = device.l2_bytes > 0;
    let useful_bytes = m.useful_bytes();

    // The cache model: which bytes reach DRAM.
    let atom = u64::from(t.dram_atom_bytes.max(1));
    let units_of = |f: &profile::Footprint| {
        if atom >= profile::DRAM_ATOM_BYTES {
            f.atoms * (atom / profile::DRAM_ATOM_BYTES) as f64
        } else {
            f.sectors
        }
    };
    let read_bytes: f64 = m.buffers.iter().map(|b| units_of(&b.read)).sum::<f64>() * atom as f64;
    let written_bytes: f64 =
        m.buffers.iter().map(|b| units_of(&b.written)).sum::<f64>() * atom as f64;
    // What a repeated launch finds in the L2. Data that every partition must hold a copy of fits
    // `l2_bytes / l2_partitions`; data held once fits `l2_bytes`. A footprint between the two
    // finds the part of it that the copies leave room for: all of it at the lower capacity,
    // none of it at the whole cache (a cyclic sweep larger than an LRU cache keeps nothing).
    let footprint = read_bytes + written_bytes;
    let copied_capacity = device.l2_bytes as f64 / f64::from(t.l2_partitions.max(1));
    let whole_capacity = device.l2_bytes as f64;
    // A launch whose repetition moves on to other lines (`MemoryProfile::repeat_moves_on`) finds
    // only the lines it shares with the previous one.
    let l2_carried = if !cached {
        0.0
    } else if footprint <= copied_capacity {
        1.0
    } else if footprint >= whole_capacity {
        0.0
    } else {
        (whole_capacity - footprint) / (whole_capacity - copied_capacity)
    } * (1.0 - m.repeat_moves_on);
    let l2_warm = l2_carried >= 1.0;
    let (dram_bytes, dram_read_bytes, dram_seconds) = if !cached {
        // Every transaction goes to DRAM: its burst at the bus's bandwidth, then on its partition
        // a column command, and an activation if it opens a row. The partitions work in parallel
        // and the addresses spread evenly over them.
        let bytes = c.global_bytes_moved + m.local_sectors * SECTOR_BYTES as f64;
        let bursts = bytes / (device.best_dram_gbps().max(1e-9) * 1e9);
        let commands = t.dram_rows.map_or(0.0, |d| {
            (m.global_transactions * d.command_clocks + m.dram_row_activations * d.activate_clocks)
                / (f64::from(d.clock_mhz.max(1)) * 1e6 * f64::from(d.partitions.max(1)))
        });
        (bytes, bytes, bursts + commands)
    } else {
        let missed = 1.0 - l2_carried;
        // A sector written in part and never read goes back to DRAM only after DRAM has read
        // it to merge the write (probe group M): its read, and the time the bus takes to turn
        // from writing to reading and back, `dram_partial_sector_bytes` in all.
        let partial_sectors: f64 =
            m.buffers.iter().map(|b| b.partial_sectors).sum::<f64>() * missed;
        // What the launch writes goes back to DRAM every time, however well it fits the L2: a
        // repeated launch writing 8 to 32 MB takes the DRAM's time for them (`dram_mix`'s
        // `r_write4`), where one reading as much finds it in the L2.
        let reached = read_bytes * missed + written_bytes;
        let bytes = reached + partial_sectors * SECTOR_BYTES as f64;
        let busy_bytes = reached + partial_sectors * t.dram_partial_sector_bytes;
        (
            bytes,
            read_bytes * missed,
            busy_bytes / (device.best_dram_gbps().max(1e-9) * 1e9),
        )
    };

    // Per-SM units, in clocks over the whole grid.
    let sectors_per_line = (LINE_BYTES / SECTOR_BYTES) as f64;
    let l1_clocks = if cached {
        m.global_ld_wavefronts
            + m.global_st_lines
            + m.global_atomic_lines
            + (m.l1_fill_sectors + m.local_sectors) / sectors_per_line
    } else {
        0.0
    };
    let shared_clocks = (c.shared_ld_wavefronts + c.shared_st_wavefronts + m.shared_atomic_passes)
        * t.shared_clocks_per_wavefront;
    let warp = f64::from(device.warp_size.max(1));
    // The FP32 pipe works for whole warps: a warp with half its lanes active in a divergent
    // branch takes it as long as a full one (probe group I).
    let fp32_instructions = c.fp32_issued_flops / (2.0 * warp);
    let fp32_clocks = c.fp32_issued_flops / (2.0 * f64::from(device.fp32_lanes_per_sm.max(1)));
    // cc 1.x counts a request per half-warp; an instruction is issued once per warp.
    let requests_per_instruction = match device.global_coalescing {
        GlobalCoalescing::Sectors => 1.0,
        GlobalCoalescing::SegmentHalfWarp | GlobalCoalescing::StrictHalfWarp => 2.0,
    };
    let memory_instructions = c.shared_ld_instructions
        + c.shared_st_instructions
        + c.shared_atomic_instructions
        + c.constant_requests
        + (c.global_ld_requests
            + c.global_st_requests
            + c.global_atomic_requests
            + c.local_ld_requests
            + c.local_st_requests)
            / requests_per_instruction;
    let issued = match t.issued {
        IssuedInstructions::Fp32AndMemory => fp32_instructions + memory_instructions,
        // Every instruction nvcc's code issues takes an issue slot (probe groups J and L); the
        // FP32 and memory instructions are among them, and never fewer than the simulator counted.
        IssuedInstructions::All => c.inst_executed.max(fp32_instructions + memory_instructions),
    };
    let issue_clocks = issued / t.warp_instructions_per_clock.max(1e-9);
    // A warp's `MUFU` takes the special function unit 32 / its lanes clocks.
    let sfu_clocks = c.sfu_instructions * warp / f64::from(device.sfu_lanes_per_sm().max(1));
    // A pass of the unit that matches and reduces a warp's values takes it 8 clocks in each of
    // the SM's 4 sub-partitions (`Device::warp_unit_passes_per_clock`).
    let warp_unit_clocks = c.warp_unit_passes / device.warp_unit_passes_per_clock();
    // The ALU pipe takes a warp's logical operation, shift, comparison or vote at its own rate,
    // half the issue rate on the H100; cc 1.x issue counts only FP32 and memory instructions.
    let alu_clocks = match t.issued {
        IssuedInstructions::All => c.alu_instructions / device.alu_warp_instructions_per_clock(),
        IssuedInstructions::Fp32AndMemory => 0.0,
    };
    // The L1 and shared memory share one data pipe; the pipes of an SM work in parallel.
    let sm_clocks = (l1_clocks + shared_clocks)
        .max(fp32_clocks)
        .max(issue_clocks)
        .max(sfu_clocks)
        .max(warp_unit_clocks)
        .max(alu_clocks);

    // GPU-wide units, in seconds over the whole grid.
    let l2_seconds = if cached && t.l2_bytes_per_clock > 0 {
        // A store that writes part of a sector takes the slice longer: it merges the bytes
        // into the sector (`tr_naive`, probe group M).
        let store_slots =
            m.global_st_lines + m.global_partial_st_lines * (t.l2_partial_store_slots - 1.0);
        (m.l1_fill_lines + store_slots + m.global_atomic_lines + m.local_sectors / sectors_per_line)
            * LINE_BYTES as f64
            / (f64::from(t.l2_bytes_per_clock) * clock)
    } else {
        0.0
    };
    let hottest = match device.global_coalescing {
        // The L2's slices serialize the updates they make (probe group F).
        GlobalCoalescing::Sectors => m.hottest_slice_updates,
        _ => m.hottest_address_lanes,
    };
    let atomic_seconds = hottest * t.global_atomic_cycles / clock;

    // A block's delay: its round trips at the unloaded latency of the level they reach.
    let fill_bytes = m.l1_fill_sectors * SECTOR_BYTES as f64;
    let dram_share = if fill_bytes > 0.0 {
        (dram_read_bytes / fill_bytes).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (miss_latency, hit_latency) = if cached {
        (
            f64::from(t.l2_hit_latency_cycles)
                + dram_share
                    * (f64::from(t.dram_latency_cycles) - f64::from(t.l2_hit_latency_cycles)),
            f64::from(t.l1_hit_latency_cycles),
        )
    } else {
        let dram = f64::from(t.dram_latency_cycles);
        (dram, dram)
    };
    let warps_per_block = f64::from(report.occupancy.warps_per_block.max(1));
    // Or its warps' own instructions, if they take longer: a warp issues an instruction that
    // needs a result only once the result is there, so a block takes at least its warps'
    // instructions times the dependent-issue latency, however idle the SM. A warp's waits for
    // memory and its instructions overlap (it issues while its loads are in flight), so the
    // longer of the two is its delay.
    let chained = match t.issued {
        // A cc 1.x arithmetic instruction reads its shared-memory operand itself.
        IssuedInstructions::Fp32AndMemory => issued - c.shared_ld_instructions,
        IssuedInstructions::All => issued,
    };
    let issued_per_warp = chained.max(0.0) / grid / warps_per_block;
    // A warp's own chain takes the dependent-issue latency per instruction; the block's issue of
    // its warps' instructions is already the SM station's service, which the chain overlaps (a
    // warp waits while the others issue), so the delay is what the chain takes beyond it. A lone
    // block per SM then takes the longer of the two, not their sum (probe `w_nbody_tiled`: one
    // block of 8 warps an SM, 1.96M clocks for chains of 603k instructions).
    let chain = issued_per_warp * t.dependent_issue_cycles - sm_clocks / grid;
    let delay = (m.missing_round_trips_per_block * miss_latency
        + m.hitting_round_trips_per_block * hit_latency)
        .max(chain.max(0.0))
        / clock;
    // Barriers: each holds a block until its last warp arrives, and the resident blocks of an SM,
    // started together on the same work, reach their barriers together, so the pipes drain at
    // each one and no other block fills the gap (probe group K: 256-thread blocks take 71 clocks
    // more per barrier with 8 resident, 64-thread blocks 100 with 32). The wait adds to each
    // round of resident blocks rather than overlapping as a delay, in the SM's own time.
    let barriers_per_block = c.barrier_warp_instructions / grid / warps_per_block;
    let barrier_seconds = barriers_per_block * t.barrier_cycles / clock;

    // Per block, as one SM sees them: its own pipes, and its share of the GPU-wide units.
    let per_block_sm = sm_clocks / grid / clock;
    let gpu_share = |seconds: f64| seconds * sms / grid;
    // The block dispatcher starts and retires blocks at a rate of its own (probe group A): a
    // station each block visits once, whatever it does.
    let dispatch_clocks = t
        .block_dispatch_cycles
        .max(warps_per_block * t.warp_dispatch_cycles);
    let demands = [
        per_block_sm,
        dispatch_clocks / clock,
        gpu_share(l2_seconds),
        gpu_share(dram_seconds),
        gpu_share(atomic_seconds),
    ];
    let blocks_per_sm = grid / sms;
    let resident = report
        .occupancy
        .active_blocks_per_sm
        .max(1)
        .min(blocks_per_sm.ceil().max(1.0) as u32);
    let average = sm_time(blocks_per_sm, resident, &demands, delay);
    // The SM's station is its busiest pipe; the others are one unit each, in `demands`' order.
    let sm_unit = if sm_clocks == issue_clocks {
        Unit::Issue
    } else if sm_clocks == sfu_clocks {
        Unit::Sfu
    } else if sm_clocks == warp_unit_clocks {
        Unit::WarpUnit
    } else if sm_clocks == alu_clocks {
        Unit::Alu
    } else if sm_clocks == fp32_clocks {
        Unit::Fp32
    } else if l1_clocks >= shared_clocks {
        Unit::L1
    } else {
        Unit::Shared
    };
    let station_units = [sm_unit, Unit::Dispatch, Unit::L2, Unit::Dram, Unit::Atomics];
    let (busiest_unit, busiest_demand) = station_units.into_iter().zip(demands).fold(
        (Unit::Latency, 0.0f64),
        |best, (unit, demand)| {
            if demand > best.1 {
                (unit, demand)
            } else {
                best
            }
        },
    );
    let latency_hiding = LatencyHiding {
        resident_warps: resident * report.occupancy.warps_per_block.max(1),
        warps_to_cover: if busiest_demand > 0.0 {
            (delay + demands.iter().sum::<f64>()) / busiest_demand * warps_per_block
        } else {
            0.0
        },
        busiest_work_ns: busiest_demand * 1e9,
        wait_ns: delay * 1e9,
        work_ns: demands.iter().sum::<f64>() * 1e9,
        busiest: busiest_unit,
    };
    // The SM with the most blocks finishes last; the GPU-wide units are free by then.
    let last_sm = sm_time((grid / sms).ceil(), resident, &demands[..2], delay);
    let launch_seconds = f64::from(t.launch_overhead_cycles) / clock;
    // The barrier waits idle the SM's own pipes; a GPU-wide unit (DRAM, the L2) stays busy with
    // the other SMs' requests meanwhile.
    let last_rounds = ((grid / sms).ceil() / f64::from(resident)).ceil();
    let barrier_wait = last_rounds * barrier_seconds;
    let seconds = average.max(last_sm + barrier_wait) + launch_seconds;

    // Busy times and the bottleneck.
    let per_sm = |clocks: f64| clocks / sms / clock;
    let rounds = blocks_per_sm / f64::from(resident);
    let busy = [
        (Unit::Dram, dram_seconds),
        (Unit::L2, l2_seconds),
        (Unit::L1, per_sm(l1_clocks)),
        (Unit::Shared, per_sm(shared_clocks)),
        (Unit::Fp32, per_sm(fp32_clocks)),
        (Unit::Issue, per_sm(issue_clocks)),
        (Unit::Sfu, per_sm(sfu_clocks)),
        (Unit::WarpUnit, per_sm(warp_unit_clocks)),
        (Unit::Alu, per_sm(alu_clocks)),
        (Unit::Atomics, atomic_seconds),
        (Unit::Dispatch, per_sm(grid * dispatch_clocks)),
        (Unit::Latency, rounds * delay + barrier_wait),
        (Unit::Launch, launch_seconds),
    ];
    let units: Vec<UnitTime> = busy
        .iter()
        .map(|&(unit, s)| UnitTime {
            unit,
            busy_ms: s * 1e3,
            share: if seconds > 0.0 { s / seconds } else { 0.0 },
        })
        .collect();
    // L1 and shared memory are one pipe: their sum competes, named after the larger part.
    let share = |unit: Unit| {
        units
            .iter()
            .find(|u| u.unit == unit)
            .map_or(0.0, |u| u.share)
    };
    let data_pipe = (
        if share(Unit::L1) >= share(Unit::Shared) {
            Unit::L1
        } else {
            Unit::Shared
        },
        share(Unit::L1) + share(Unit::Shared),
    );
    let busiest = [
        Unit::Dram,
        Unit::L2,
        Unit::Fp32,
        Unit::Issue,
        Unit::Sfu,
        Unit::WarpUnit,
        Unit::Alu,
        Unit::Atomics,
        Unit::Dispatch,
    ]
    .into_iter()
    .map(|unit| (unit, share(unit)))
    .chain(std::iter::once(data_pipe))
    .fold((Unit::Latency, 0.0), |best, candidate| {
        if candidate.1 > best.1 {
            candidate
        } else {
            best
        }
    });
    let bottleneck = if share(Unit::Launch) >= 0.5 {
        Unit::Launch
    } else if busiest.1 >= 0.6 {
        // A unit busy most of the time limits the launch; otherwise the blocks spend it waiting.
        busiest.0
    } else {
        Unit::Latency
    };

    let flops = c.fp32_flops;
    let arithmetic_intensity = (dram_bytes > 0.0).then(|| flops / dram_bytes);
    let attainable_gflops = match arithmetic_intensity {
        Some(ai) => device.best_fp32_gflops().min(ai * device.best_dram_gbps()),
        None => device.best_fp32_gflops(),
    };
    let per_second = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    Prediction {
        time_ms: seconds * 1e3,
        gflops: per_second(flops) / 1e9,
        gbps: per_second(useful_bytes) / 1e9,
        useful_bytes,
        bottleneck,
        units,
        dram_bytes,
        l2_warm,
        arithmetic_intensity,
        attainable_gflops,
        waves: blocks_per_sm / f64::from(report.occupancy.active_blocks_per_sm.max(1)),
        block_latency_ns: delay * 1e9,
        latency_hiding,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{g80, gt200, h100, Device, DeviceTiming, DramRows};
    use crate::kernel::{Dim3, Value};
    use crate::simulate::{simulate, SimulationInput};

    use crate::lesson_kernels::{matmul_launch, ADJ_DIFF, ATOMICS, MATMUL};

    /// Seed 000's matmul: n = 1024 with 16 x 16 tiles (4,096 blocks), and few registers, as the
    /// compilers of the time used for it.
    fn matmul(kernel: &str, device: Device) -> SimulationInput {
        let mut input = matmul_launch(MATMUL, kernel, 1024, 16, device);
        input.defines.push(("PAD".to_string(), "0".to_string()));
        input.regs = 10;
        input
    }

    /// Seed 000's adjacent difference over 16 M integers in blocks of 256.
    fn adj_diff(kernel: &str, device: Device, n: u64) -> SimulationInput {
        let mut input = SimulationInput::new(ADJ_DIFF, kernel, device);
        input.grid = Dim3::new(n.div_ceil(256) as u32, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.regs = 10;
        input.dyn_smem = if kernel == "adj_diff_shared" { 1024 } else { 0 };
        input.args = vec![("n".to_string(), Value::Int(n as i64))];
        input.buffers = vec![("result".to_string(), 4 * n), ("input".to_string(), 4 * n)];
        input
    }

    #[test]
    fn sixty_four_warps_hide_drams_wait_for_the_adjacent_difference_and_sixteen_do_not() {
        // Seed 003's count on the H100: a block of the adjacent difference over 256 MB arrays
        // waits some 690 clocks for DRAM and works about 90 ns at DRAM, so an SM needs about
        // 50 warps for DRAM never to idle. The count is the kernel's, not the occupancy's; the
        // registers decide whether the SM holds that many.
        let at = |regs: u32| {
            let mut input = adj_diff("adj_diff_naive", h100(), 1 << 26);
            input.regs = regs;
            predict(&simulate(&input).expect("runs"))
        };
        let (many, few) = (at(32), at(128));
        let (hidden, exposed) = (many.latency_hiding, few.latency_hiding);
        assert_eq!((hidden.resident_warps, exposed.resident_warps), (64, 16));
        assert_eq!(hidden.warps_to_cover, exposed.warps_to_cover);
        assert!((40.0..60.0).contains(&hidden.warps_to_cover), "{hidden:?}");
        assert_eq!(hidden.busiest, Unit::Dram);
        assert_eq!((hidden.covered(), many.bottleneck), (1.0, Unit::Dram));
        assert!(exposed.covered() < 0.4 && few.bottleneck == Unit::Latency);
        assert!(few.time_ms > 2.0 * many.time_ms);
    }

    /// Seed 000's sums of `n` integers with atomics, on H100.
    fn sum(kernel: &str, n: u64) -> SimulationInput {
        let mut input = SimulationInput::new(ATOMICS, kernel, h100());
        input.grid = Dim3::new(n.div_ceil(256) as u32, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.regs = 16;
        input.args = vec![("n".to_string(), Value::Int(n as i64))];
        input.buffers = vec![("in".to_string(), 4 * n), ("result".to_string(), 4)];
        input
    }

    /// Predicts `input` and checks `measure` of the prediction within `tolerance` of `expected`.
    fn check(
        input: &SimulationInput,
        measure: fn(&Prediction) -> f64,
        expected: f64,
        tolerance: f64,
    ) -> Prediction {
        let report = simulate(input).expect("the launch simulates");
        let prediction = predict(&report);
        let value = measure(&prediction);
        assert!(
            (value - expected).abs() <= tolerance * expected,
            "{} on {}: {value:.1}, expected {expected} within {:.0}% ({:?})",
            input.kernel,
            input.device.name,
            100.0 * tolerance,
            prediction
        );
        prediction
    }

    fn gflops(p: &Prediction) -> f64 {
        p.gflops
    }

    fn gbps(p: &Prediction) -> f64 {
        p.gbps
    }

    #[test]
    fn a_lone_warp_waits_for_each_result_it_needs() {
        // One warp of a dependent integer chain: each `x = x * 3 + 1` (one IMAD) issues 4
        // clocks after the last on the H100, where the SM's issue rate alone would allow 3.5 a
        // clock. 100,000 iterations unrolled 16 times: 1.19 instructions each, 4 clocks each,
        // 240 us at 1,980 MHz besides the launch.
        let source = "__global__ void chain(int* out, int n) {\n\
                      int x = threadIdx.x;\n\
                      for (int i = 0; i < n; ++i) x = x * 3 + 1;\n\
                      out[threadIdx.x] = x; }";
        let mut input = SimulationInput::new(source, "chain", h100());
        input.grid = Dim3::new(1, 1, 1);
        input.block = Dim3::new(32, 1, 1);
        input.regs = 16;
        input.args = vec![("n".to_string(), Value::Int(100_000))];
        input.buffers = vec![("out".to_string(), 128)];
        let prediction = predict(&simulate(&input).expect("the launch simulates"));
        let launch_ms = f64::from(h100().timing.launch_overhead_cycles) / 1.98e6;
        let chain_ms = prediction.time_ms - launch_ms;
        assert!((chain_ms - 0.240).abs() < 0.05 * 0.240, "{prediction:?}");
        assert_eq!(prediction.bottleneck, Unit::Latency);
    }

    #[test]
    fn gt200_tiled_matmul_runs_near_the_lectures_183_9_gflops() {
        // Seed 000, "Optimization Analysis": 183.9 GFLOPS on a GT200. Tiles cut the global loads
        // 16-fold, yet DRAM still limits: each tile of `b` opens 16 rows, one a transaction,
        // while the SM's issue of FMAs and shared loads (4 clocks a warp instruction) keeps it
        // busy two thirds of the time. The model predicts 148 GFLOPS, 19% low.
        let tiled = check(&matmul("mm_tiled", gt200()), gflops, 183.9, 0.20);
        assert_eq!(tiled.bottleneck, Unit::Dram);
        let issue = tiled.units.iter().find(|u| u.unit == Unit::Issue);
        assert!(issue.is_some_and(|u| u.share > 0.5), "{tiled:?}");
    }

    #[test]
    fn gt200_naive_matmul_is_bound_by_dram_row_activations() {
        // Seed 000: 10.7 GFLOPS. Each half-warp's a[row * n + k] is a 32-byte transaction in the
        // row its previous one opened; b[k * n + col] is a 64-byte transaction 4 KB past the last,
        // in a new row. Per pair: 6 clocks of bursts, two column commands of 2 clocks and one
        // activation of 8, on one of 7 partitions at 999 MHz: 2.6 ns a pair, 12.4 GFLOPS, 16%
        // above the lecture.
        let naive = check(&matmul("mm_naive", gt200()), gflops, 10.7, 0.20);
        assert_eq!(naive.bottleneck, Unit::Dram);
        let report = simulate(&matmul("mm_naive", gt200())).expect("the launch simulates");
        let m = &report.memory;
        assert!(
            (m.dram_row_activations / m.global_transactions - 0.5).abs() < 0.01,
            "{} activations for {} transactions",
            m.dram_row_activations,
            m.global_transactions
        );
        let tiled = predict(&simulate(&matmul("mm_tiled", gt200())).expect("the launch simulates"));
        // The lecture's speed-up is 17.2x; the model's is 12x (see "Known limits").
        assert!(
            tiled.gflops > 10.0 * naive.gflops,
            "{} vs {}",
            tiled.gflops,
            naive.gflops
        );
    }

    #[test]
    fn gt200_adjacent_difference_moves_36_8_gb_per_s_naive_and_57_5_shared() {
        // Seed 000: the naive kernel loads input[i - 1] again, which cc 1.x has no cache for: 3.5
        // transactions per half-warp instead of 2.1 with the shared tile. Both stream through
        // their rows, so the bursts and column commands set the pace: 40 and 64 GB/s, 8% and 11%
        // above the lecture. n = 2^22 keeps the grid within GT200's 65,535 blocks along x
        // (2^24 elements in 256-thread blocks would be 65,536, which the GT200 refuses).
        let n = 1 << 22;
        let naive = check(&adj_diff("adj_diff_naive", gt200(), n), gbps, 36.8, 0.20);
        let shared = check(&adj_diff("adj_diff_shared", gt200(), n), gbps, 57.5, 0.20);
        assert!(shared.gbps > 1.3 * naive.gbps);
    }

    #[test]
    fn h100_caches_shrink_the_adjacent_difference_speedup_below_one() {
        // The reference README: on H100 the L1 absorbs input[i - 1], so the shared version only
        // adds a barrier and a second round trip for its block-boundary read.
        let n = 1 << 24;
        let naive = predict(
            &simulate(&adj_diff("adj_diff_naive", h100(), n)).expect("the launch simulates"),
        );
        let shared = predict(
            &simulate(&adj_diff("adj_diff_shared", h100(), n)).expect("the launch simulates"),
        );
        assert!(shared.time_ms > naive.time_ms, "{shared:?} vs {naive:?}");
        assert_eq!(naive.bottleneck, Unit::Dram);
    }

    #[test]
    fn g80_naive_matmul_runs_near_the_lectures_15_gflops() {
        // Seed 003: "about 15 GFLOPS" against a 21.6 GFLOPS bandwidth bound. The half-warp's
        // Md[Row*Width+k] is one word, one 32-byte transaction in the row its previous one opened
        // (`coalescing`); Nd[k*Width+Col] is a 64-byte transaction 4 KB past the last, in a new
        // row. As on GT200, bursts, column commands and one activation per pair set the pace, on
        // G80's 6 partitions at 900 MHz: 12.3 GFLOPS, 18% below the lecture.
        let naive = check(&matmul("mm_naive", g80()), gflops, 15.0, 0.20);
        assert_eq!(naive.bottleneck, Unit::Dram);
        // The roofline counts what reaches DRAM: 96 bytes per 32 flops, not the lecture's 4
        // bytes a flop, as the half-warp's lanes share a's word.
        assert!(naive.gflops < naive.attainable_gflops, "{naive:?}");
        // G80's slower bus and fewer resident blocks keep it below GT200 on the same launch.
        let gt200 = predict(&simulate(&matmul("mm_naive", gt200())).expect("the launch simulates"));
        assert!(naive.gflops < gt200.gflops, "{naive:?} vs {gt200:?}");
    }

    #[test]
    fn thirteen_warps_hide_two_hundred_cycles_of_latency() {
        // Seed 003: with one global access every 4 instructions of 4 clocks, 200 clocks of latency
        // need 200 / 16 = 12.5, so 13, warps. In the closed network each warp uses the SM for 16
        // clocks and then waits 200.
        let utilization = |warps: u32| closed_network_throughput(warps, &[16.0], 200.0) * 16.0;
        assert!(utilization(4) < 0.35, "{}", utilization(4));
        assert!(utilization(13) > 0.8, "{}", utilization(13));
        assert!(utilization(24) > 0.99, "{}", utilization(24));
        assert!(utilization(1) > 0.0 && utilization(1) < utilization(2));
    }

    #[test]
    fn shared_atomics_are_much_faster_than_global_ones() {
        // Seed 000, "Advice": atomics to __shared__ variables are much faster. The global sum
        // serializes 32,768 warp updates on one address; the hierarchical one 4,096, while its
        // shared atomics serialize in each SM's own shared memory.
        let global = check(&sum("sum_global_atomic", 1 << 20), |p| p.time_ms, 0.03, 0.5);
        let report = simulate(&sum("sum_hier_atomic", 1 << 20)).expect("the launch simulates");
        let hierarchical = predict(&report);
        assert_eq!(global.bottleneck, Unit::Atomics);
        assert!(hierarchical.time_ms * 3.0 < global.time_ms);
    }

    #[test]
    fn a_footprint_that_fits_the_l2_is_read_there_and_written_to_dram() {
        // 8 MB of adjacent difference fits H100's 25 MB of L2 per partition: repeated launches
        // find what they read in L2, while the 4 MB they write go back to DRAM each time
        // (`tests/reference/dram_mix/`); the launch overhead still dominates.
        let report =
            simulate(&adj_diff("adj_diff_naive", h100(), 1 << 20)).expect("the launch simulates");
        let small = predict(&report);
        assert!(small.l2_warm);
        assert_eq!(small.dram_bytes, 4.0 * f64::from(1 << 20));
        assert_eq!(small.arithmetic_intensity, Some(0.0));
        assert_eq!(small.bottleneck, Unit::Launch);
        let report =
            simulate(&adj_diff("adj_diff_naive", h100(), 1 << 24)).expect("the launch simulates");
        let large = predict(&report);
        assert!(!large.l2_warm);
        // Each distinct byte read or written passes DRAM once: 2 x 64 MB.
        assert!((large.dram_bytes - 2.0 * 4.0 * f64::from(1 << 24)).abs() < 1e6);
    }

    #[test]
    fn the_prediction_serializes_and_degenerate_devices_do_not_panic() {
        let report = simulate(&matmul("mm_tiled", h100())).expect("the launch simulates");
        let prediction = predict(&report);
        let json = serde_json::to_value(&prediction).expect("the prediction serializes");
        assert!(json["time_ms"].is_number());
        assert_eq!(json["units"].as_array().map(Vec::len), Some(13));
        let broken = Device {
            n_sms: 0,
            sm_clock_mhz: 0,
            fp32_lanes_per_sm: 0,
            warp_size: 0,
            dram_bandwidth_gbps: 0.0,
            dram_achievable_gbps: None,
            timing: DeviceTiming {
                warp_instructions_per_clock: 0.0,
                l2_bytes_per_clock: 0,
                l2_partitions: 0,
                dram_atom_bytes: 0,
                ..h100().timing
            },
            ..h100()
        };
        // The report counted on the H100, timed on a device whose figures are all zero.
        let odd = predict(&SimulationReport {
            device: broken,
            ..report.clone()
        });
        assert!(odd.time_ms.is_finite() && odd.time_ms > 0.0, "{odd:?}");
        // A cc 1.x device whose DRAM constants are all zero.
        let mut broken = gt200();
        broken.timing.dram_rows = Some(DramRows {
            clock_mhz: 0,
            partitions: 0,
            interleave_bytes: 0,
            row_bytes: 0,
            command_clocks: 0.0,
            activate_clocks: 0.0,
        });
        let report = simulate(&matmul("mm_naive", broken)).expect("the launch simulates");
        let odd = predict(&report);
        assert!(odd.time_ms.is_finite() && odd.time_ms > 0.0, "{odd:?}");
    }
}
