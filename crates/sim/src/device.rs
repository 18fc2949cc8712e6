//! Device presets: the numbers that describe one GPU, from G80 to H100.
//!
//! Every figure carries its source. The limits follow the CUDA C++ Programming Guide, section
//! "Compute Capabilities" (table "Technical Specifications per Compute Capability"), and the CUDA
//! Occupancy Calculator (`cuda_occupancy.h` in the CUDA toolkit) for allocation units and
//! granularities. Clocks, bandwidths and peaks come from the vendor datasheets named at each preset.
//! The H100 facts that were measured on a real H100 SXM are in `tests/reference/h100.json`
//! (`"exp": "device"`, `"ceiling"` and `"pitch"` rows).
//!
//! The launch limits (largest grid and block per dimension, threads per block) are fields too, and
//! `Device::check_launch` refuses a launch beyond them as the GPU would, before anything runs.
//!
//! Per-architecture rules are not keyed on a device's name: they are fields of the preset
//! (`n_banks`, `shared_phase`, `shared_word_delivery`, `global_coalescing`, ...), so a new preset
//! only needs new numbers.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// A compute capability such as 9.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl ComputeCapability {
    /// The value nvcc's device pass gives `__CUDA_ARCH__` when it compiles for this capability:
    /// 10 x major + minor, times ten (900 for 9.0, 100 for 1.0; CUDA C++ Programming Guide,
    /// "`__CUDA_ARCH__`").
    pub fn cuda_arch(self) -> u32 {
        (self.major * 10 + self.minor) * 10
    }

    /// The macros nvcc's device pass defines before a file compiled for this capability,
    /// `__CUDACC__` and `__CUDA_ARCH__`, then `defines` (the `-D`s, which may redefine them, as a
    /// file's own `#define` may).
    pub fn device_pass_defines(self, defines: &[(String, String)]) -> Vec<(String, String)> {
        let mut all = vec![
            ("__CUDACC__".to_string(), "1".to_string()),
            ("__CUDA_ARCH__".to_string(), self.cuda_arch().to_string()),
        ];
        all.extend_from_slice(defines);
        all
    }
}

/// The lower-case ids used on the command line and in URLs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceId {
    G80,
    Gt200,
    Fermi,
    V100,
    A100,
    H100,
}

impl DeviceId {
    pub const ALL: [DeviceId; 6] = [
        DeviceId::G80,
        DeviceId::Gt200,
        DeviceId::Fermi,
        DeviceId::V100,
        DeviceId::A100,
        DeviceId::H100,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeviceId::G80 => "g80",
            DeviceId::Gt200 => "gt200",
            DeviceId::Fermi => "fermi",
            DeviceId::V100 => "v100",
            DeviceId::A100 => "a100",
            DeviceId::H100 => "h100",
        }
    }

    /// The short name messages use: "the H100 allows at most ...".
    pub fn label(self) -> &'static str {
        match self {
            DeviceId::G80 => "G80",
            DeviceId::Gt200 => "GT200",
            DeviceId::Fermi => "Fermi",
            DeviceId::V100 => "V100",
            DeviceId::A100 => "A100",
            DeviceId::H100 => "H100",
        }
    }

    pub fn device(self) -> Device {
        match self {
            DeviceId::G80 => g80(),
            DeviceId::Gt200 => gt200(),
            DeviceId::Fermi => fermi(),
            DeviceId::V100 => v100(),
            DeviceId::A100 => a100(),
            DeviceId::H100 => h100(),
        }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The id was not one of the presets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDevice(pub String);

impl fmt::Display for UnknownDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown device '{}' (expected one of g80, gt200, fermi, v100, a100, h100)",
            self.0
        )
    }
}

impl std::error::Error for UnknownDevice {}

impl FromStr for DeviceId {
    type Err = UnknownDevice;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DeviceId::ALL
            .into_iter()
            .find(|id| id.as_str() == s)
            .ok_or_else(|| UnknownDevice(s.to_string()))
    }
}

/// How the register file is handed out: per warp (cc >= 2.0) or per block (cc 1.x).
/// Source: CUDA Occupancy Calculator, "Register allocation granularity".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RegisterGranularity {
    Warp,
    Block,
}

/// How many lanes of a warp the shared memory serves together for 32-bit accesses.
/// cc 1.x splits a warp's request into two half-warp requests; cc >= 2.0 serves the whole warp.
/// Source: CUDA C Programming Guide 3.2, sections G.3.3 (cc 1.x) and G.4.3 (cc 2.x).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SharedPhase {
    HalfWarp,
    FullWarp,
}

/// What happens when several lanes read the same 32-bit word of shared memory.
/// Source: CUDA C Programming Guide 3.2, G.3.3.1 (cc 1.x broadcast) and G.4.3.1 (cc 2.x multicast).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SharedWordDelivery {
    /// cc 1.x: in each step one word is broadcast; any other address in a bank costs its own step,
    /// even if other lanes read the very same word.
    Broadcast,
    /// cc >= 2.0: any word read by several lanes is delivered to all of them at once.
    Multicast,
}

/// The rules by which a warp's global accesses become memory transactions.
/// Source: CUDA C Programming Guide 3.2, section G.3.2 (cc 1.0/1.1 and 1.2/1.3) and G.4.2 (cc 2.x),
/// and the CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory" (sectors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GlobalCoalescing {
    /// cc 1.0/1.1: a half-warp coalesces only if lane k reads word k of an aligned segment;
    /// otherwise every active lane costs a transaction of its own.
    StrictHalfWarp,
    /// cc 1.2/1.3: per half-warp, one transaction per 32/64/128-byte segment touched, each shrunk
    /// to the half that is used.
    SegmentHalfWarp,
    /// cc >= 2.0: one request per warp instruction, counted in the 32-byte sectors it touches.
    Sectors,
}

/// One GPU. Plain data; every constant is sourced at its preset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub id: DeviceId,
    /// The preset's name. A `Cow` so that a device read back from serialized data (the page
    /// sends launches to its worker) owns its text, while the presets borrow theirs.
    pub name: Cow<'static, str>,
    pub compute_capability: ComputeCapability,
    pub n_sms: u32,
    /// The clock the FP32 peak is quoted at (shader clock on G80/GT200/Fermi, boost clock after).
    pub sm_clock_mhz: u32,
    pub fp32_lanes_per_sm: u32,
    /// The FP32 peak the lectures and datasheets quote, in GFLOP/s.
    pub fp32_peak_gflops: f64,
    /// A measured FP32 FMA ceiling where one is known.
    pub fp32_achievable_gflops: Option<f64>,
    pub dram_bandwidth_gbps: f64,
    /// A measured device-to-device copy bandwidth where one is known.
    pub dram_achievable_gbps: Option<f64>,
    pub l2_bytes: u64,
    pub warp_size: u32,
    /// The largest grid a launch may have, in blocks along x, y and z (`cudaDeviceProp::maxGridSize`).
    /// Source: CUDA C++ Programming Guide, "Compute Capabilities", table "Technical Specifications
    /// per Compute Capability" ("Maximum x-, y- or z-dimension of a grid of thread blocks").
    pub max_grid_dim: [u32; 3],
    /// The largest block a launch may have, in threads along x, y and z
    /// (`cudaDeviceProp::maxThreadsDim`). Source: the same table ("Maximum x- or y-dimension of a
    /// block", "Maximum z-dimension of a block").
    pub max_block_dim: [u32; 3],
    /// Threads in one block, whatever its shape. Source: the same table.
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    /// Warps are allocated in groups of this many (2 on cc 1.x).
    pub warp_alloc_granularity: u32,
    pub regs_per_sm: u32,
    pub max_regs_per_block: u32,
    pub max_regs_per_thread: u32,
    /// The fewest registers a thread is given, whatever fewer its code needs (0: no minimum known).
    pub min_regs_per_thread: u32,
    pub reg_alloc_unit: u32,
    pub reg_granularity: RegisterGranularity,
    /// Register file partitions that warps are spread over (4 from Maxwell on, 1 before).
    /// Source: `cuda_occupancy.h`, `cudaOccSubPartitionsPerMultiprocessor`.
    pub reg_file_partitions: u32,
    pub smem_per_sm: u32,
    /// The default limit of static plus dynamic shared memory a block may use.
    pub smem_per_block: u32,
    /// The limit a kernel can opt in to with `cudaFuncAttributeMaxDynamicSharedMemorySize`.
    pub smem_per_block_optin: u32,
    /// Shared memory the system reserves for each resident block (cc >= 8.0).
    pub reserved_smem_per_block: u32,
    /// The sizes, in KB, the driver may configure an SM's shared memory to (the rest of the unified
    /// L1/shared array becomes L1 cache). One size where the split is fixed.
    pub smem_carveouts_kb: Cow<'static, [u32]>,
    /// The largest carveout, in KB, the driver configures to give the resident blocks room beyond
    /// what they need (`occupancy::driver_carveout`); it goes larger only if they need more.
    #[serde(default)]
    pub carveout_room_limit_kb: u32,
    pub smem_alloc_unit: u32,
    pub n_banks: u32,
    pub bank_width_bytes: u32,
    pub shared_phase: SharedPhase,
    pub shared_word_delivery: SharedWordDelivery,
    pub global_coalescing: GlobalCoalescing,
    /// The alignment `cudaMallocPitch` rounds every row up to, in bytes (`pitch::pitch_bytes`).
    /// It is the texture hardware's alignment of a base address, `cudaDeviceProp::textureAlignment`
    /// (deviceQuery's "Texture alignment"): a row that starts on it can be bound as a 2-D texture
    /// without an offset, and it is a multiple of the 32-, 64- and 128-byte segments global
    /// accesses are served in, so every row starts aligned for coalescing as the first does (seed
    /// 001, "What cudaMallocPitch does?"). It is not `cudaDeviceProp::texturePitchAlignment`, the
    /// granularity a texture binding asks of a pitch: that is 32 bytes on the H100 (h100.json
    /// "device" row) while the pitches measured there are multiples of 512.
    pub pitch_alignment_bytes: u32,
    /// The bus to the host and what a copy over it costs (`transfer`).
    pub host_link: HostLink,
    /// Latencies, cache and DRAM constants for the timing model (`timing`).
    pub timing: DeviceTiming,
}

/// The bus between the host and a device, with what a copy over it costs (`transfer` models
/// the copies; its module doc gives the sources).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostLink {
    /// The link's name, as a datasheet gives it ("PCIe 5.0 x16").
    pub name: Cow<'static, str>,
    /// Bytes per second per direction after the line code, in GB/s.
    pub raw_gbps: f64,
    /// The host's own memory copy bandwidth (the staging copy of pageable memory), in GB/s.
    pub host_copy_gbps: f64,
    /// The fixed cost of one copy call, in microseconds.
    pub call_us: f64,
}

/// The constants the timing model (`timing`) needs beyond the limits above: latencies,
/// bandwidths of the levels between SM and DRAM, issue rates and fixed overheads. Each preset
/// names the source of each value; where no source for a device was found the value is carried
/// over from a related device and marked as such. Cycles are SM clock cycles (`sm_clock_mhz`).
/// Which warp instructions issue charges for, by the instruction set the device runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssuedInstructions {
    /// FP32 and memory instructions only, as seed 003 counts a G80's: its instruction set takes
    /// a shared-memory operand in an arithmetic instruction, and the lecture's kernels are
    /// loads and FMAs.
    Fp32AndMemory,
    /// Every instruction of the SASS nvcc makes for sm_70 and later (`kernel::issue`'s estimate,
    /// read off sm_90 code): integer and control instructions take slots too (probe groups J
    /// and L).
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceTiming {
    /// A load that hits L1, from issue to use.
    pub l1_hit_latency_cycles: u32,
    /// A load that misses L1 and hits L2.
    pub l2_hit_latency_cycles: u32,
    /// A load that goes to DRAM (without a TLB miss), unloaded.
    pub dram_latency_cycles: u32,
    /// What the L2 moves per clock, summed over its slices (0 without an L2 for global memory).
    pub l2_bytes_per_clock: u32,
    /// Partitions the L2 is split into; each caches the data its SMs use, so data reused by all
    /// SMs (as a kernel's inputs are from one launch to the next) occupies every partition.
    pub l2_partitions: u32,
    /// The smallest unit DRAM reads or writes behind the L2.
    pub dram_atom_bytes: u32,
    /// The DRAM's rows and command timings, where no L2 sits in front of DRAM (cc 1.x) and every
    /// transaction is a DRAM access of its own; `None` where an L2 groups accesses into lines.
    pub dram_rows: Option<DramRows>,
    /// Warp instructions an SM issues per clock (all its schedulers together).
    pub warp_instructions_per_clock: f64,
    /// Which instructions take issue slots in the code the device's compiler makes.
    pub issued: IssuedInstructions,
    /// Clocks the shared memory takes per wavefront (one conflict-free pass over its banks).
    pub shared_clocks_per_wavefront: f64,
    /// Fixed cost of a launch as CUDA events see it, in clocks.
    pub launch_overhead_cycles: u32,
    /// Clocks of an SM's share of the block dispatcher per block it starts and retires, however
    /// little the block does: the rate that binds grids of many small blocks.
    pub block_dispatch_cycles: f64,
    /// Clocks of the same per warp of a block: a large block takes longer to start than
    /// `block_dispatch_cycles` (the dispatcher's time is the larger of the two).
    pub warp_dispatch_cycles: f64,
    /// Clocks between two serialized updates of one global address by atomics (on devices with
    /// an L2: between two updates by one L2 slice).
    pub global_atomic_cycles: f64,
    /// Clocks a block waits at each `__syncthreads()` beyond its warps' own work: the last warp's
    /// arrival is seen and every warp is released.
    pub barrier_cycles: f64,
    /// Clocks from one warp instruction to the next that needs its result: a warp alone issues no
    /// faster, so a block of few warps takes at least its warps' instructions times this.
    pub dependent_issue_cycles: f64,
    /// Slices of the L2, each with its own atomic unit, and the bytes of the address space one
    /// slice takes before the next (global atomics on one slice serialize, `profile`).
    pub l2_slices: u32,
    pub l2_slice_interleave_bytes: u32,
    /// L2 line slots a store request's line takes when the request writes only part of a sector
    /// there (a full line takes one): the slice reads the sector and merges the bytes in.
    pub l2_partial_store_slots: f64,
    /// DRAM time, in bytes at the device's bandwidth, that a sector written only in part costs
    /// beyond its own write when it leaves the L2: DRAM reads it to merge the write.
    pub dram_partial_sector_bytes: f64,
}

/// The GDDR3 behind a cc 1.x memory system, as the timing model counts its row activations
/// (`profile` and `timing::predict`). A transaction's burst takes its bytes over the
/// device's bandwidth; beyond that each transaction takes a column command, and one that opens a
/// row an activation. Plain data; each preset names its sources.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DramRows {
    /// The memory (command) clock of the DRAM chips, in MHz.
    pub clock_mhz: u32,
    /// Memory partitions: 64-bit channels, each with its own chips, rows and command bus.
    pub partitions: u32,
    /// Consecutive bytes of the address space that map to one partition before the next.
    pub interleave_bytes: u32,
    /// Bytes one row activation opens in one partition (a row of each of its chips).
    pub row_bytes: u32,
    /// Memory clocks each transaction takes beyond its burst: its column command.
    pub command_clocks: f64,
    /// Memory clocks a transaction that opens a row takes beyond that: the activation.
    pub activate_clocks: f64,
}

impl Device {
    /// Special function unit results (a reciprocal, reciprocal square root, base-2 logarithm or
    /// exponential, sine or cosine) an SM makes per clock: CUDA C++ Programming Guide,
    /// "Arithmetic Instructions", throughput table, by compute capability. On the H100 the
    /// probes confirm it: one `MUFU` per 8 clocks per sub-partition, 16 lanes a clock an SM
    /// (`tests/reference/warp_probes`, `w_exp2f` and `w_fast_sinf`).
    pub fn sfu_lanes_per_sm(&self) -> u32 {
        match (self.compute_capability.major, self.compute_capability.minor) {
            (1, _) => 2,
            (2, 0) => 4,
            (2, _) => 8,
            (3..=5, _) | (6, 1..) => 32,
            _ => 16,
        }
    }

    /// Warp instructions an SM's integer and logic pipe (the ALU pipe: logical operations,
    /// shifts, comparisons, minimum and maximum) takes per clock: its results per clock over the
    /// 32 lanes of a warp, from the CUDA C++ Programming Guide's throughput table ("Arithmetic
    /// Instructions": compare, minimum, maximum, bitwise and shift at 64 results a clock an SM
    /// from compute capability 7.0, 128 on 5.x and 6.1-6.2, 64 on 6.0, 160 on 3.x, 32 and 48 on
    /// 2.0 and 2.1, 8 on 1.x). On the H100 the warp probes confirm it: `w_any` and `w_ballot`,
    /// loops of logic, shifts, comparisons and votes, run one such instruction per 2 clocks per
    /// sub-partition (`smsp__inst_executed_pipe_alu` over `sm__cycles_elapsed`).
    pub fn alu_warp_instructions_per_clock(&self) -> f64 {
        let lanes = match (self.compute_capability.major, self.compute_capability.minor) {
            (1, _) => 8,
            (2, 0) => 32,
            (2, _) => 48,
            (3, _) => 160,
            (6, 0) => 64,
            (5, _) | (6, _) => 128,
            _ => 64,
        };
        f64::from(lanes) / f64::from(self.warp_size.max(1))
    }

    /// Passes an SM's warp match and reduce unit makes per clock: one `REDUX` (one pass) per 8
    /// clocks in each of its 4 sub-partitions, a `MATCH` (two passes) per 16, on the H100
    /// (`tests/reference/warp_probes`, `w_reduce_add` and `w_match_any`; the adu pipe). The
    /// instructions exist from compute capability 7.0 (`MATCH`) and 8.0 (`REDUX`); no probe
    /// measures them before the H100, so its rate stands for the V100's and A100's.
    pub fn warp_unit_passes_per_clock(&self) -> f64 {
        0.5
    }

    /// The FP32 ceiling for the roofline: measured where known, else the datasheet peak.
    pub(crate) fn best_fp32_gflops(&self) -> f64 {
        self.fp32_achievable_gflops.unwrap_or(self.fp32_peak_gflops)
    }

    /// The bandwidth ceiling for the roofline: measured where known, else the datasheet figure.
    pub(crate) fn best_dram_gbps(&self) -> f64 {
        self.dram_achievable_gbps
            .unwrap_or(self.dram_bandwidth_gbps)
    }

    /// Whether a launch of `grid` blocks of `block` threads is one the device accepts: every
    /// extent at least 1 and within `max_grid_dim` and `max_block_dim`, and the block within
    /// `max_threads_per_block`. A launch that fails here fails on the GPU before any block runs
    /// (`cudaErrorInvalidConfiguration`), so nothing is simulated for it.
    pub(crate) fn check_launch(&self, grid: [u32; 3], block: [u32; 3]) -> Result<(), LaunchError> {
        for (what, extents, limits) in [
            (LaunchPart::Grid, grid, self.max_grid_dim),
            (LaunchPart::Block, block, self.max_block_dim),
        ] {
            for (axis, (extent, max)) in Axis::ALL.into_iter().zip(extents.into_iter().zip(limits))
            {
                if extent == 0 {
                    return Err(LaunchError::ZeroExtent { what, axis });
                }
                if extent > max {
                    return Err(LaunchError::TooLarge {
                        what,
                        axis,
                        extent,
                        max,
                        device: self.id,
                    });
                }
            }
        }
        // Each extent is at most 1024 here, so the product fits easily; checked all the same.
        let threads = block
            .iter()
            .try_fold(1u64, |product, &extent| {
                product.checked_mul(u64::from(extent))
            })
            .unwrap_or(u64::MAX);
        if threads > u64::from(self.max_threads_per_block) {
            return Err(LaunchError::TooManyThreads {
                block,
                threads,
                max: self.max_threads_per_block,
                device: self.id,
            });
        }
        Ok(())
    }
}

/// The grid or the block of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LaunchPart {
    Grid,
    Block,
}

/// One dimension of a grid or block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];
}

/// Why a device refuses a launch's shape (`Device::check_launch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LaunchError {
    /// An extent of 0: CUDA refuses an empty grid or block.
    ZeroExtent { what: LaunchPart, axis: Axis },
    /// An extent beyond the device's `max_grid_dim` or `max_block_dim`.
    TooLarge {
        what: LaunchPart,
        axis: Axis,
        extent: u32,
        max: u32,
        device: DeviceId,
    },
    /// Each extent fits, but the block has more threads than `max_threads_per_block`.
    TooManyThreads {
        block: [u32; 3],
        threads: u64,
        max: u32,
        device: DeviceId,
    },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = |what: LaunchPart| match what {
            LaunchPart::Grid => "grid",
            LaunchPart::Block => "block",
        };
        let axis = |axis: Axis| match axis {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        };
        match *self {
            LaunchError::ZeroExtent { what, axis: a } => write!(
                f,
                "{} {} is 0; every grid and block extent must be at least 1",
                part(what),
                axis(a)
            ),
            LaunchError::TooLarge {
                what,
                axis: a,
                extent,
                max,
                device,
            } => write!(
                f,
                "{} {} is {extent}; the {} allows at most {max}",
                part(what),
                axis(a),
                device.label()
            ),
            LaunchError::TooManyThreads {
                block,
                threads,
                max,
                device,
            } => write!(
                f,
                "a block of {}x{}x{} is {threads} threads; the {} allows at most {max} per block",
                block[0],
                block[1],
                block[2],
                device.label()
            ),
        }
    }
}

impl std::error::Error for LaunchError {}

/// GeForce 8800 GTX, the lectures' G80 (compute capability 1.0).
pub fn g80() -> Device {
    Device {
        id: DeviceId::G80,
        name: Cow::Borrowed("GeForce 8800 GTX (G80)"),
        compute_capability: ComputeCapability { major: 1, minor: 0 },
        // 16 SMs of 8 SPs; shader clock 1350 MHz (NVIDIA GeForce 8800 technical brief, 2006).
        n_sms: 16,
        sm_clock_mhz: 1350,
        fp32_lanes_per_sm: 8,
        // Seed 003 ("peak 346.5 GFLOPS"): 128 SPs x 2 flops (MAD) x 1.35 GHz.
        fp32_peak_gflops: 346.5,
        fp32_achievable_gflops: None,
        // Seed 003: 86.4 GB/s (384-bit GDDR3 at 900 MHz).
        dram_bandwidth_gbps: 86.4,
        dram_achievable_gbps: None,
        // G80 has no L2 for global memory loads (texture caches only).
        l2_bytes: 0,
        warp_size: 32,
        // Programming Guide, Technical Specifications, cc 1.x: a grid of at most two dimensions,
        // 65535 x 65535 blocks; a block of at most 512 x 512 x 64 threads.
        max_grid_dim: [65_535, 65_535, 1],
        max_block_dim: [512, 512, 64],
        // Programming Guide, cc 1.0: 512 threads per block, 768 threads, 24 warps and 8 blocks per SM
        // (seed 003: "SM in G80 can take up to 768 threads", "up to 8 blocks").
        max_threads_per_block: 512,
        max_threads_per_sm: 768,
        max_warps_per_sm: 24,
        max_blocks_per_sm: 8,
        warp_alloc_granularity: 2,
        // Programming Guide, cc 1.0: 8 K registers per SM; Occupancy Calculator: unit 256, per block.
        regs_per_sm: 8192,
        max_regs_per_block: 8192,
        max_regs_per_thread: 124,
        // No launch measured with fewer registers than this device's minimum might be.
        min_regs_per_thread: 0,
        reg_alloc_unit: 256,
        reg_granularity: RegisterGranularity::Block,
        reg_file_partitions: 1,
        // Programming Guide, cc 1.0: 16 KB shared memory per SM; Occupancy Calculator: unit 512 B.
        smem_per_sm: 16384,
        smem_per_block: 16384,
        smem_per_block_optin: 16384,
        reserved_smem_per_block: 0,
        // Programming Guide, cc 1.x: 16 KB of shared memory, no L1 to share it with.
        smem_carveouts_kb: Cow::Borrowed(&[16]),
        // Its largest size: the H100's 132 KB is beyond it.
        carveout_room_limit_kb: 16,
        smem_alloc_unit: 512,
        // Programming Guide 3.2, G.3.3: 16 banks of 32 bits, served per half-warp, broadcast only.
        n_banks: 16,
        bank_width_bytes: 4,
        shared_phase: SharedPhase::HalfWarp,
        shared_word_delivery: SharedWordDelivery::Broadcast,
        global_coalescing: GlobalCoalescing::StrictHalfWarp,
        // cudaDeviceProp::textureAlignment is 256 bytes on cc 1.x: deviceQuery of the CUDA 2.3
        // SDK prints "Texture alignment: 256 bytes" for a Tesla C1060 (cc 1.3) and a GeForce GTS
        // 250 (cc 1.1). Seed 001 asks rows to be aligned to "128 or 256 bytes". That
        // cudaMallocPitch rounds rows to it here is the rule of the later devices (see H100), not
        // a measurement on a cc 1.x device.
        pitch_alignment_bytes: 256,
        // GeForce 8800 GTX: PCI Express 1.0a x16, 2.5 GT/s x 16 lanes with 8b/10b coding, 4 GB/s
        // per direction (PCI-SIG). Its hosts (2006-2007) had DDR2-800 memory, about 3 GB/s for a
        // memcpy of one thread.
        host_link: HostLink {
            name: Cow::Borrowed("PCIe 1.0 x16"),
            raw_gbps: 4.0,
            host_copy_gbps: 3.0,
            call_us: 10.0,
        },
        timing: DeviceTiming {
            // No L1 or L2 for global memory on cc 1.x: every load goes to DRAM. CUDA C Programming
            // Guide 2.3, 5.1.2.1: "400 to 600 clock cycles of memory latency".
            l1_hit_latency_cycles: 500,
            l2_hit_latency_cycles: 500,
            dram_latency_cycles: 500,
            l2_bytes_per_clock: 0,
            l2_partitions: 1,
            dram_atom_bytes: 32,
            dram_rows: Some(DramRows {
                // 900 MHz GDDR3 on a 384-bit bus: 6 partitions of 64 bits (two x32 chips each),
                // 6 x 16 bytes x 900 MHz = 86.4 GB/s (GeForce 8800 technical brief, 2006). A
                // GDDR3 read moves four 32-bit words a chip in two clocks (Qimonda
                // HYB18H512321BF data sheet, 1.2: 4n prefetch, bursts of 4 or 8), so the
                // smallest transaction, 32 bytes, is one burst of a partition.
                clock_mhz: 900,
                partitions: 6,
                // Ruetsch and Micikevicius, "Optimizing Matrix Transpose in CUDA" (NVIDIA, 2009),
                // "partition camping": global memory is divided into partitions of 256 bytes.
                interleave_bytes: 256,
                // A 512-Mbit x32 GDDR3 chip has 8 banks (HYB18H512321BF, 1.2) of 4,096 rows of
                // 512 32-bit columns: 2 KB a row, 4 KB for the two chips of a partition.
                row_bytes: 4096,
                // Qimonda HYB18H512321AF data sheet, table 38: CAS-to-CAS period tCCD = 2 tCK, and
                // the least time between activations of two banks tRRD = 8 tCK. These are the
                // values of its fastest grade (800 MHz, -12); faster parts have not been checked
                // and may need a clock more of tRRD. Both are added to the burst: the model takes
                // independent transactions not to chain seamlessly (see `timing`).
                command_clocks: 2.0,
                activate_clocks: 8.0,
            }),
            // Seed 003: "4 clock cycles needed to dispatch the same instruction for all threads in
            // a Warp in G80" (8 SPs).
            warp_instructions_per_clock: 0.25,
            issued: IssuedInstructions::Fp32AndMemory,
            // Programming Guide 3.2, G.3.3: each bank delivers 32 bits per two clock cycles, and a
            // warp's request is served per half-warp.
            shared_clocks_per_wavefront: 2.0,
            // Accel-Sim's kernel launch latency (gpgpu_kernel_launch_latency 5000 in its Volta
            // and later configurations); not measured on this device.
            launch_overhead_cycles: 5000,
            // Carried over from the H100 (probe group A): no measurement of this device's block
            // dispatcher was found; in SM clocks, the same per-block work.
            block_dispatch_cycles: 158.0,
            warp_dispatch_cycles: 7.0,
            // cc 1.0 has no atomics; the value of GT200 is kept so that no preset lacks one.
            global_atomic_cycles: 500.0,
            // CUDA Programming Guide 2.3, 5.1.1.4: `__syncthreads` issues at 8 operations a clock
            // per SM on cc 1.x, 4 clocks a warp, 32 for the 8 warps of the lectures' 16 x 16
            // blocks (the H100's 71 is a measured wait, probe group K; nothing measured here).
            barrier_cycles: 32.0,
            // CUDA C Programming Guide 3.2, 5.2.3: a register dependency costs "about 22 clock
            // cycles" on cc 1.x and 2.x.
            dependent_issue_cycles: 22.0,
            // No L2 for global memory: atomics serialize per address (`hottest_address_lanes`).
            l2_slices: 1,
            l2_slice_interleave_bytes: 256,
            // No L2: every transaction goes to DRAM on its own (`DramRows`), so no line or
            // sector is merged.
            l2_partial_store_slots: 1.0,
            dram_partial_sector_bytes: 0.0,
        },
    }
}

/// GeForce GTX 260 (Core 216), the lectures' GT200 (compute capability 1.3).
pub fn gt200() -> Device {
    Device {
        id: DeviceId::Gt200,
        name: Cow::Borrowed("GeForce GTX 260 (GT200)"),
        compute_capability: ComputeCapability { major: 1, minor: 3 },
        // 27 SMs of 8 SPs at 1242 MHz shader clock (NVIDIA GTX 260 Core 216 specifications).
        n_sms: 27,
        sm_clock_mhz: 1242,
        fp32_lanes_per_sm: 8,
        // Seed 000: "peak fp performance of GeForce GTX 260: 805 GFLOPS" (216 x 3 flops x 1.242 GHz).
        fp32_peak_gflops: 805.0,
        fp32_achievable_gflops: None,
        // Seed 000: "actual memory bandwidth of GeForce GTX 260: 112 GB/s" (448-bit GDDR3, 999 MHz).
        dram_bandwidth_gbps: 112.0,
        dram_achievable_gbps: None,
        l2_bytes: 0,
        warp_size: 32,
        // Programming Guide, Technical Specifications, cc 1.x: a grid of at most two dimensions,
        // 65535 x 65535 blocks; a block of at most 512 x 512 x 64 threads.
        max_grid_dim: [65_535, 65_535, 1],
        max_block_dim: [512, 512, 64],
        // Programming Guide, cc 1.2/1.3: 512 threads per block, 1024 threads, 32 warps, 8 blocks per SM.
        max_threads_per_block: 512,
        max_threads_per_sm: 1024,
        max_warps_per_sm: 32,
        max_blocks_per_sm: 8,
        warp_alloc_granularity: 2,
        // Programming Guide, cc 1.2/1.3: 16 K registers; Occupancy Calculator: unit 512, per block.
        regs_per_sm: 16384,
        max_regs_per_block: 16384,
        max_regs_per_thread: 124,
        // No launch measured with fewer registers than this device's minimum might be.
        min_regs_per_thread: 0,
        reg_alloc_unit: 512,
        reg_granularity: RegisterGranularity::Block,
        reg_file_partitions: 1,
        smem_per_sm: 16384,
        smem_per_block: 16384,
        smem_per_block_optin: 16384,
        reserved_smem_per_block: 0,
        // Programming Guide, cc 1.x: 16 KB of shared memory, no L1 to share it with.
        smem_carveouts_kb: Cow::Borrowed(&[16]),
        // Its largest size: the H100's 132 KB is beyond it.
        carveout_room_limit_kb: 16,
        smem_alloc_unit: 512,
        n_banks: 16,
        bank_width_bytes: 4,
        shared_phase: SharedPhase::HalfWarp,
        shared_word_delivery: SharedWordDelivery::Broadcast,
        global_coalescing: GlobalCoalescing::SegmentHalfWarp,
        // As G80: textureAlignment is 256 bytes on cc 1.x (deviceQuery, Tesla C1060, cc 1.3).
        pitch_alignment_bytes: 256,
        // GeForce GTX 260/280: PCI Express 2.0 x16, 5 GT/s with 8b/10b coding, 8 GB/s per
        // direction (PCI-SIG). Hosts of 2008-2009: DDR2/DDR3, about 5 GB/s for one memcpy.
        host_link: HostLink {
            name: Cow::Borrowed("PCIe 2.0 x16"),
            raw_gbps: 8.0,
            host_copy_gbps: 5.0,
            call_us: 10.0,
        },
        timing: DeviceTiming {
            // No L1 or L2 for global memory on cc 1.x. Programming Guide 2.3, 5.1.2.1: "400 to 600
            // clock cycles of memory latency".
            l1_hit_latency_cycles: 500,
            l2_hit_latency_cycles: 500,
            dram_latency_cycles: 500,
            l2_bytes_per_clock: 0,
            l2_partitions: 1,
            dram_atom_bytes: 32,
            dram_rows: Some(DramRows {
                // 999 MHz GDDR3 on a 448-bit bus: 7 partitions of 64 bits, 7 x 16 bytes x 999 MHz
                // = 112 GB/s (seed 000; NVIDIA GTX 260 Core 216 specifications).
                clock_mhz: 999,
                partitions: 7,
                // As G80 (see there): 256-byte partitions, 2 KB rows per x32 chip, two chips per
                // partition, tCCD = 2 tCK and tRRD = 8 tCK.
                interleave_bytes: 256,
                row_bytes: 4096,
                command_clocks: 2.0,
                activate_clocks: 8.0,
            }),
            // 8 SPs per SM: a warp instruction takes 4 clocks to issue (seed 003).
            warp_instructions_per_clock: 0.25,
            issued: IssuedInstructions::Fp32AndMemory,
            // Programming Guide 3.2, G.3.3: 32 bits per bank per two clock cycles, per half-warp.
            shared_clocks_per_wavefront: 2.0,
            // Accel-Sim's kernel launch latency (gpgpu_kernel_launch_latency 5000 in its Volta
            // and later configurations); not measured on this device.
            launch_overhead_cycles: 5000,
            // Carried over from the H100 (probe group A): no measurement of this device's block
            // dispatcher was found; in SM clocks, the same per-block work.
            block_dispatch_cycles: 158.0,
            warp_dispatch_cycles: 7.0,
            // Same-address atomics are performed at the memory, one lane after the other: each
            // waits for the previous one's round trip (an estimate: the DRAM latency).
            global_atomic_cycles: 500.0,
            // CUDA Programming Guide 2.3, 5.1.1.4: `__syncthreads` issues at 8 operations a clock
            // per SM on cc 1.x, 4 clocks a warp, 32 for the 8 warps of the lectures' 16 x 16
            // blocks (the H100's 71 is a measured wait, probe group K; nothing measured here).
            barrier_cycles: 32.0,
            // CUDA C Programming Guide 3.2, 5.2.3: a register dependency costs "about 22 clock
            // cycles" on cc 1.x and 2.x.
            dependent_issue_cycles: 22.0,
            // No L2 for global memory: atomics serialize per address (`hottest_address_lanes`).
            l2_slices: 1,
            l2_slice_interleave_bytes: 256,
            // No L2: every transaction goes to DRAM on its own (`DramRows`), so no line or
            // sector is merged.
            l2_partial_store_slots: 1.0,
            dram_partial_sector_bytes: 0.0,
        },
    }
}

/// Tesla C2050, Fermi (compute capability 2.0).
pub fn fermi() -> Device {
    Device {
        id: DeviceId::Fermi,
        name: Cow::Borrowed("Tesla C2050 (Fermi)"),
        compute_capability: ComputeCapability { major: 2, minor: 0 },
        // Tesla C2050 datasheet: 14 SMs of 32 cores at 1.15 GHz, 1.03 TFLOPS FP32, 144 GB/s, 768 KB L2.
        n_sms: 14,
        sm_clock_mhz: 1150,
        fp32_lanes_per_sm: 32,
        fp32_peak_gflops: 1030.0,
        fp32_achievable_gflops: None,
        dram_bandwidth_gbps: 144.0,
        dram_achievable_gbps: None,
        l2_bytes: 768 * 1024,
        warp_size: 32,
        // Programming Guide, Technical Specifications, cc 2.x: 65535 blocks along x, y and z (z
        // since CUDA 4.0); a block of at most 1024 x 1024 x 64 threads.
        max_grid_dim: [65_535, 65_535, 65_535],
        max_block_dim: [1024, 1024, 64],
        // Programming Guide, cc 2.x: 1024 threads per block, 1536 threads, 48 warps, 8 blocks per SM.
        max_threads_per_block: 1024,
        max_threads_per_sm: 1536,
        max_warps_per_sm: 48,
        max_blocks_per_sm: 8,
        warp_alloc_granularity: 1,
        // Programming Guide, cc 2.x: 32 K registers, 63 per thread; Occupancy Calculator: unit 64, per warp.
        regs_per_sm: 32768,
        max_regs_per_block: 32768,
        max_regs_per_thread: 63,
        // No launch measured with fewer registers than this device's minimum might be.
        min_regs_per_thread: 0,
        reg_alloc_unit: 64,
        reg_granularity: RegisterGranularity::Warp,
        reg_file_partitions: 1,
        // Programming Guide, cc 2.x: 48 KB shared memory (the 48 KB / 16 KB L1 split); unit 128 B.
        smem_per_sm: 49152,
        smem_per_block: 49152,
        smem_per_block_optin: 49152,
        reserved_smem_per_block: 0,
        // Programming Guide, cc 2.x: 16 or 48 KB of the 64 KB array (cudaFuncSetCacheConfig).
        smem_carveouts_kb: Cow::Borrowed(&[16, 48]),
        // Its largest size: the H100's 132 KB is beyond it.
        carveout_room_limit_kb: 48,
        smem_alloc_unit: 128,
        // Programming Guide 3.2, G.4.3: 32 banks, whole warp, multicast.
        n_banks: 32,
        bank_width_bytes: 4,
        shared_phase: SharedPhase::FullWarp,
        shared_word_delivery: SharedWordDelivery::Multicast,
        global_coalescing: GlobalCoalescing::Sectors,
        // textureAlignment is 512 bytes from cc 2.0 on (deviceQuery on a GeForce GTX 460M, cc 2.1,
        // quoted in the Stack Overflow question "CUDA allocation alignment is 256 bytes -
        // seriously?"); cudaMallocPitch pads rows to multiples of 512 bytes on Kepler and Maxwell
        // (NVIDIA developer forum, "Understanding Memory Pitch Alignment", GTX 780 and GTX 750)
        // and on the H100 (measured). Not measured on a Fermi.
        pitch_alignment_bytes: 512,
        // Tesla C2050 / GeForce GTX 480: PCI Express 2.0 x16, 8 GB/s per direction. Hosts of
        // 2010: DDR3, about 6 GB/s for one memcpy.
        host_link: HostLink {
            name: Cow::Borrowed("PCIe 2.0 x16"),
            raw_gbps: 8.0,
            host_copy_gbps: 6.0,
            call_us: 8.0,
        },
        timing: DeviceTiming {
            // Not measured here for Fermi: L1 and L2 latencies carried over from V100 (see there);
            // Programming Guide 3.2, 5.2.3: "400 to 800 clock cycles" for device memory.
            l1_hit_latency_cycles: 36,
            l2_hit_latency_cycles: 221,
            dram_latency_cycles: 600,
            // An estimate: 6 L2 slices (one per memory controller, Fermi whitepaper) of 64 B per
            // clock.
            l2_bytes_per_clock: 384,
            l2_partitions: 1,
            dram_atom_bytes: 32,
            dram_rows: None,
            // Fermi whitepaper: two warp schedulers, each issuing to 16 cores, so one warp
            // instruction per clock per SM.
            warp_instructions_per_clock: 1.0,
            issued: IssuedInstructions::All,
            // Programming Guide 3.2, G.4.3: 32 bits per bank per two clock cycles.
            shared_clocks_per_wavefront: 2.0,
            // Accel-Sim's kernel launch latency (gpgpu_kernel_launch_latency 5000 in its Volta
            // and later configurations); not measured on this device.
            launch_overhead_cycles: 5000,
            // Carried over from the H100 (probe group A): no measurement of this device's block
            // dispatcher was found; in SM clocks, the same per-block work.
            block_dispatch_cycles: 158.0,
            warp_dispatch_cycles: 7.0,
            // Carried over from the H100 (probe group F), as are its L2 slices: no
            // measurement of this device's atomics was found.
            global_atomic_cycles: 1.45,
            barrier_cycles: 71.0,
            // CUDA C Programming Guide 3.2, 5.2.3: a register dependency costs "about 22 clock
            // cycles" on cc 1.x and 2.x.
            dependent_issue_cycles: 22.0,
            l2_slices: 64,
            l2_slice_interleave_bytes: 512,
            // Carried over from the H100 (probe group M): this device's ECC also covers whole
            // sectors; no measurement of its partial writes was found.
            l2_partial_store_slots: 4.0 / 3.0,
            dram_partial_sector_bytes: 192.0,
        },
    }
}

/// Tesla V100 SXM2 (compute capability 7.0).
pub fn v100() -> Device {
    Device {
        id: DeviceId::V100,
        name: Cow::Borrowed("Tesla V100 SXM2"),
        compute_capability: ComputeCapability { major: 7, minor: 0 },
        // NVIDIA Tesla V100 datasheet / Volta whitepaper: 80 SMs x 64 FP32 lanes at 1530 MHz boost,
        // 15.7 TFLOPS FP32, 900 GB/s HBM2, 6 MB L2.
        n_sms: 80,
        sm_clock_mhz: 1530,
        fp32_lanes_per_sm: 64,
        fp32_peak_gflops: 15_700.0,
        fp32_achievable_gflops: None,
        dram_bandwidth_gbps: 900.0,
        dram_achievable_gbps: None,
        l2_bytes: 6 * 1024 * 1024,
        warp_size: 32,
        // Programming Guide, Technical Specifications, cc 7.0 (as every cc >= 3.0): 2^31 - 1 blocks
        // along x, 65535 along y and z; a block of at most 1024 x 1024 x 64 threads.
        max_grid_dim: [2_147_483_647, 65_535, 65_535],
        max_block_dim: [1024, 1024, 64],
        // Programming Guide, cc 7.0: 1024 threads per block, 2048 threads, 64 warps, 32 blocks per SM.
        max_threads_per_block: 1024,
        max_threads_per_sm: 2048,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        warp_alloc_granularity: 1,
        // Programming Guide, cc 7.0: 64 K registers, 255 per thread; Occupancy Calculator: unit 256, per warp.
        regs_per_sm: 65536,
        max_regs_per_block: 65536,
        max_regs_per_thread: 255,
        // No launch measured with fewer registers than this device's minimum might be.
        min_regs_per_thread: 0,
        reg_alloc_unit: 256,
        reg_granularity: RegisterGranularity::Warp,
        reg_file_partitions: 4,
        // Programming Guide, cc 7.0: up to 96 KB shared memory per SM, 48 KB per block by default,
        // 96 KB opt-in; Occupancy Calculator: unit 256 B; no per-block reservation before cc 8.0.
        smem_per_sm: 98304,
        smem_per_block: 49152,
        smem_per_block_optin: 98304,
        reserved_smem_per_block: 0,
        // Programming Guide, cc 7.x: "0, 8, 16, 32, 64 or 96 KB".
        smem_carveouts_kb: Cow::Borrowed(&[0, 8, 16, 32, 64, 96]),
        // Its largest size: the H100's 132 KB is beyond it.
        carveout_room_limit_kb: 96,
        smem_alloc_unit: 256,
        n_banks: 32,
        bank_width_bytes: 4,
        shared_phase: SharedPhase::FullWarp,
        shared_word_delivery: SharedWordDelivery::Multicast,
        global_coalescing: GlobalCoalescing::Sectors,
        // deviceQuery prints "Texture alignment: 512 bytes" on a V100 (CUDA 11.4 samples), as on
        // every device from Fermi on; rows padded to multiples of 512 (see Fermi and H100). The
        // pitch itself is not measured on a V100.
        pitch_alignment_bytes: 512,
        // Tesla V100: PCI Express 3.0 x16 to the host (the SXM2 board's NVLink joins GPUs, not
        // the x86 host), 8 GT/s with 128b/130b coding, 15.75 GB/s per direction. Hosts of 2017:
        // DDR4, about 10 GB/s for one memcpy.
        host_link: HostLink {
            name: Cow::Borrowed("PCIe 3.0 x16"),
            raw_gbps: 15.75,
            host_copy_gbps: 10.0,
            call_us: 5.0,
        },
        timing: DeviceTiming {
            // Pointer-chase latencies, V100 row of markdewing/AI_kernels latency/README.md.
            l1_hit_latency_cycles: 36,
            l2_hit_latency_cycles: 221,
            dram_latency_cycles: 460,
            // Hardware-features table of PMC10448217 (table 3): L2 3,133 GB/s
            // at 1,530 MHz, 2,048 bytes per clock.
            l2_bytes_per_clock: 2048,
            l2_partitions: 1,
            dram_atom_bytes: 32,
            dram_rows: None,
            // Volta whitepaper: four sub-partitions per SM, each issuing one warp instruction per
            // clock.
            warp_instructions_per_clock: 4.0,
            issued: IssuedInstructions::All,
            // 32 banks of 4 bytes serve one wavefront per clock (Volta tuning guide: 128 B/clk).
            shared_clocks_per_wavefront: 1.0,
            // Accel-Sim's kernel launch latency (gpgpu_kernel_launch_latency 5000 in its Volta
            // and later configurations); not measured on this device.
            launch_overhead_cycles: 5000,
            // Carried over from the H100 (probe group A): no measurement of this device's block
            // dispatcher was found; in SM clocks, the same per-block work.
            block_dispatch_cycles: 158.0,
            warp_dispatch_cycles: 7.0,
            // Carried over from the H100 (probe group F), as are its L2 slices: no
            // measurement of this device's atomics was found.
            global_atomic_cycles: 1.45,
            barrier_cycles: 71.0,
            // Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"
            // (2018): 4 clocks between dependent FP32 and integer instructions from Volta on.
            dependent_issue_cycles: 4.0,
            l2_slices: 64,
            l2_slice_interleave_bytes: 512,
            // Carried over from the H100 (probe group M): this device's ECC also covers whole
            // sectors; no measurement of its partial writes was found.
            l2_partial_store_slots: 4.0 / 3.0,
            dram_partial_sector_bytes: 192.0,
        },
    }
}

/// A100 SXM4 40 GB (compute capability 8.0).
pub fn a100() -> Device {
    Device {
        id: DeviceId::A100,
        name: Cow::Borrowed("A100 SXM4 40GB"),
        compute_capability: ComputeCapability { major: 8, minor: 0 },
        // NVIDIA A100 datasheet / Ampere whitepaper: 108 SMs x 64 FP32 lanes at 1410 MHz boost,
        // 19.5 TFLOPS FP32, 1555 GB/s HBM2 (seed 004: "1555 GB/second", "19,500 GFLOPS"), 40 MB L2.
        n_sms: 108,
        sm_clock_mhz: 1410,
        fp32_lanes_per_sm: 64,
        fp32_peak_gflops: 19_500.0,
        fp32_achievable_gflops: None,
        dram_bandwidth_gbps: 1555.0,
        dram_achievable_gbps: None,
        l2_bytes: 40 * 1024 * 1024,
        warp_size: 32,
        // Programming Guide, Technical Specifications, cc 8.0 (as every cc >= 3.0): 2^31 - 1 blocks
        // along x, 65535 along y and z; a block of at most 1024 x 1024 x 64 threads.
        max_grid_dim: [2_147_483_647, 65_535, 65_535],
        max_block_dim: [1024, 1024, 64],
        // Programming Guide, cc 8.0: 1024 threads per block, 2048 threads, 64 warps, 32 blocks per SM.
        max_threads_per_block: 1024,
        max_threads_per_sm: 2048,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        warp_alloc_granularity: 1,
        regs_per_sm: 65536,
        max_regs_per_block: 65536,
        max_regs_per_thread: 255,
        // No launch measured with fewer registers than this device's minimum might be.
        min_regs_per_thread: 0,
        reg_alloc_unit: 256,
        reg_granularity: RegisterGranularity::Warp,
        reg_file_partitions: 4,
        // Programming Guide, cc 8.0: 164 KB shared memory per SM, 163 KB per block opt-in, 48 KB by
        // default, 1 KB reserved per block (seed 004: "maximum of 164 KB of shared memory per SM").
        smem_per_sm: 167_936,
        smem_per_block: 49152,
        smem_per_block_optin: 166_912,
        reserved_smem_per_block: 1024,
        // Programming Guide, cc 8.0: "0, 8, 16, 32, 64, 100, 132 or 164 KB".
        smem_carveouts_kb: Cow::Borrowed(&[0, 8, 16, 32, 64, 100, 132, 164]),
        // Carried over from the H100: no measurement of this driver's choice was found.
        carveout_room_limit_kb: 132,
        smem_alloc_unit: 128,
        n_banks: 32,
        bank_width_bytes: 4,
        shared_phase: SharedPhase::FullWarp,
        shared_word_delivery: SharedWordDelivery::Multicast,
        global_coalescing: GlobalCoalescing::Sectors,
        // As every device from Fermi on: textureAlignment of 512 bytes, rows padded to multiples
        // of 512 (see Fermi and H100). Not measured on an A100.
        pitch_alignment_bytes: 512,
        // A100: PCI Express 4.0 x16, 16 GT/s with 128b/130b coding, 31.5 GB/s per direction
        // (A100 datasheet: "PCIe Gen4: 64 GB/s", both directions). Hosts of 2020: DDR4-3200,
        // about 12 GB/s for one memcpy.
        host_link: HostLink {
            name: Cow::Borrowed("PCIe 4.0 x16"),
            raw_gbps: 31.5,
            host_copy_gbps: 12.0,
            call_us: 5.0,
        },
        timing: DeviceTiming {
            // Pointer-chase latencies, A100 SXM row of markdewing/AI_kernels latency/README.md.
            l1_hit_latency_cycles: 39,
            l2_hit_latency_cycles: 210,
            dram_latency_cycles: 550,
            // PMC10448217 table 3: L2 7,219 GB/s at 1,410 MHz, 5,120 bytes per clock.
            l2_bytes_per_clock: 5120,
            // Ampere whitepaper: "The L2 cache is divided into two partitions".
            l2_partitions: 2,
            // Carried over from H100 (see there).
            dram_atom_bytes: 64,
            dram_rows: None,
            // Four sub-partitions as on the H100, which sustain 3.5 of their 4 (see there).
            warp_instructions_per_clock: 3.5,
            issued: IssuedInstructions::All,
            shared_clocks_per_wavefront: 1.0,
            // Accel-Sim's kernel launch latency (gpgpu_kernel_launch_latency 5000 in its Volta
            // and later configurations); not measured on this device.
            launch_overhead_cycles: 5000,
            // Carried over from the H100 (probe group A): no measurement of this device's block
            // dispatcher was found; in SM clocks, the same per-block work.
            block_dispatch_cycles: 158.0,
            warp_dispatch_cycles: 7.0,
            // Carried over from the H100 (probe group F), as are its L2 slices: no
            // measurement of this device's atomics was found.
            global_atomic_cycles: 1.45,
            barrier_cycles: 71.0,
            // Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"
            // (2018): 4 clocks between dependent FP32 and integer instructions from Volta on.
            dependent_issue_cycles: 4.0,
            l2_slices: 64,
            l2_slice_interleave_bytes: 512,
            // Carried over from the H100 (probe group M): this device's ECC also covers whole
            // sectors; no measurement of its partial writes was found.
            l2_partial_store_slots: 4.0 / 3.0,
            dram_partial_sector_bytes: 192.0,
        },
    }
}

/// H100 SXM5 80 GB (compute capability 9.0).
pub fn h100() -> Device {
    Device {
        id: DeviceId::H100,
        name: Cow::Borrowed("H100 SXM5 80GB"),
        compute_capability: ComputeCapability { major: 9, minor: 0 },
        // h100.json "device" row: 132 SMs. H100 datasheet: 128 FP32 lanes per SM, 1980 MHz boost,
        // 67 TFLOPS FP32, 3.35 TB/s HBM3.
        n_sms: 132,
        sm_clock_mhz: 1980,
        fp32_lanes_per_sm: 128,
        fp32_peak_gflops: 66_900.0,
        // h100.json "ceiling" rows: fp32_fma 55,637 GFLOP/s, d2d_copy 3,011 GB/s, measured.
        fp32_achievable_gflops: Some(55_637.0),
        dram_bandwidth_gbps: 3350.0,
        dram_achievable_gbps: Some(3011.0),
        // h100.json "device" row: l2 52,428,800 bytes.
        l2_bytes: 52_428_800,
        warp_size: 32,
        // Programming Guide, Technical Specifications, cc 9.0 (as every cc >= 3.0): 2^31 - 1 blocks
        // along x, 65535 along y and z; a block of at most 1024 x 1024 x 64 threads.
        max_grid_dim: [2_147_483_647, 65_535, 65_535],
        max_block_dim: [1024, 1024, 64],
        // h100.json "device" row: 2048 threads and 32 blocks per SM; Programming Guide: 1024 per block.
        max_threads_per_block: 1024,
        max_threads_per_sm: 2048,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        warp_alloc_granularity: 1,
        // h100.json "device" row: 65,536 registers per SM and per block; Programming Guide: 255 per thread.
        regs_per_sm: 65536,
        max_regs_per_block: 65536,
        max_regs_per_thread: 255,
        // Probes p_row_st, p_pred_gst and p_scatter_st: compiled to 8 and 10 registers
        // (cudaFuncGetAttributes), launched with 16 (Nsight Compute's
        // `launch__registers_per_thread`), which sets their register limit of blocks.
        min_regs_per_thread: 16,
        reg_alloc_unit: 256,
        reg_granularity: RegisterGranularity::Warp,
        reg_file_partitions: 4,
        // h100.json "device" row: 233,472 B per SM, 49,152 per block, 232,448 opt-in, 1,024 reserved.
        smem_per_sm: 233_472,
        smem_per_block: 49152,
        smem_per_block_optin: 232_448,
        reserved_smem_per_block: 1024,
        // Programming Guide, cc 9.0: "0, 8, 16, 32, 64, 100, 132, 164, 196 or 228 KB".
        smem_carveouts_kb: Cow::Borrowed(&[0, 8, 16, 32, 64, 100, 132, 164, 196, 228]),
        // Measured on the H100 (2026-11-25, a kernel launched alone per process under Nsight
        // Compute for 6 block sizes and 14 shared-memory sizes): the driver gives blocks of up
        // to 512 threads room for twice the resident blocks while that fits 132 KB.
        carveout_room_limit_kb: 132,
        smem_alloc_unit: 128,
        n_banks: 32,
        bank_width_bytes: 4,
        shared_phase: SharedPhase::FullWarp,
        shared_word_delivery: SharedWordDelivery::Multicast,
        global_coalescing: GlobalCoalescing::Sectors,
        // Measured: h100.json's "pitch" rows give widths of 4 and 400 bytes a 512-byte pitch and
        // 4000 bytes 4096, multiples of 512 (crates/sim/tests/pitch_reference.rs compares them),
        // while the same file's texture_pitch_alignment is 32: the pitch follows the texture
        // alignment of a base address (512 from Fermi on), not texturePitchAlignment.
        pitch_alignment_bytes: 512,
        // H100 SXM5: PCI Express 5.0 x16 to the host, 32 GT/s with 128b/130b coding, 63 GB/s
        // per direction (H100 datasheet: "PCIe Gen5: 128 GB/s", both directions). Hosts of 2022:
        // DDR5, about 20 GB/s for one memcpy.
        host_link: HostLink {
            name: Cow::Borrowed("PCIe 5.0 x16"),
            raw_gbps: 63.0,
            host_copy_gbps: 20.0,
            call_us: 5.0,
        },
        timing: DeviceTiming {
            // Pointer-chase latencies, H100 SXM row of markdewing/AI_kernels latency/README.md.
            l1_hit_latency_cycles: 40,
            l2_hit_latency_cycles: 291,
            dram_latency_cycles: 700,
            // PMC10448217 table 3: L2 8,986 GB/s at 1,755 MHz, 5,120 bytes per clock.
            l2_bytes_per_clock: 5120,
            // Hopper whitepaper, as Ampere: two L2 partitions.
            l2_partitions: 2,
            // h100.json, ncu record strided_copy stride=32: one float per 128-byte line reads 64
            // bytes of DRAM.
            dram_atom_bytes: 64,
            dram_rows: None,
            // Hopper whitepaper: four SM sub-partitions, one warp instruction per clock each; what
            // they sustain on issue-bound code is less, as dependent instructions stall: Nsight
            // Compute's `smsp__inst_executed` over `sm__cycles_elapsed` gives 3.54-3.67 warp
            // instructions a clock for the FMA chains of probe group I and the shared loads of L
            // (3.1-3.3 for the integer chains of J).
            warp_instructions_per_clock: 3.5,
            issued: IssuedInstructions::All,
            // h100.json, ncu records smem_stride stride=8 and 32: 12,288 more wavefronts per SM took
            // 6.0 us more, one wavefront per clock at 1,980 MHz.
            shared_clocks_per_wavefront: 1.0,
            // Probe group A, p_empty grid=1 block=32: an empty one-block launch takes 5.26 us
            // between its CUDA events (the median of 20), 10,400 clocks. Nsight Compute's
            // gpu__time_duration of the same launch is 2.1 us: events also see the launch's
            // way from the front end to the SMs and back.
            launch_overhead_cycles: 10_400,
            // Probe group A, p_empty grid=524288: 524,288 empty blocks of 32 to 512 threads take
            // 0.32 ms whatever their size, 158 clocks per block on each of 132 SMs; blocks of
            // 1,024 threads take 0.45 ms, 222 clocks a block or 7 a warp.
            block_dispatch_cycles: 158.0,
            warp_dispatch_cycles: 7.0,
            // Probe group F, p_atom_global mask=0: 4,194,304 lanes add to one word in 3.07 ms,
            // 0.73 ns (1.45 clocks) each (the lectures' warp-uniform sum, 32,768 updates in
            // 27.5 us, agrees: 1.66 clocks with its loads).
            global_atomic_cycles: 1.45,
            // Probe group K: 1,024 barriers more (p_barrier against p_nobarrier, 256 threads, one
            // wave of 8 blocks per SM) take 36.8 us more, 71 clocks each.
            barrier_cycles: 71.0,
            // Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"
            // (2018): 4 clocks between dependent FP32 and integer instructions from Volta on.
            dependent_issue_cycles: 4.0,
            // Probe group F: eight bins 32 bytes apart (256 bytes) take as long as one word, eight
            // bins 128 bytes apart (1 KB) half as long, and p_atom_seq's 32 bins 128 bytes apart
            // (4 KB) an eighth: a slice takes 512 bytes before the next. The count is not
            // isolated by a probe: atomics spread over 64 KB or more are bound by the L2's
            // bandwidth for any count above about 48; 64 is taken.
            l2_slices: 64,
            l2_slice_interleave_bytes: 512,
            // tr_naive n=2048 (h100-timing.json): 4,194,304 column stores, one word in each of
            // the 32 lines of a request, take 70.8 us beyond the launch, 29.9 lines a clock;
            // probe group M's p_scatter_st cstride=1 (the same pattern, 4 MB and 512 KB rows)
            // 28.1 and 31.8. A full line's store takes a 128-byte slot of the L2's 5,120 bytes a
            // clock, 40 lines a clock: a partial one takes 4/3 of that. Writing part of a sector
            // makes the slice read and merge it, as ECC covers whole sectors.
            l2_partial_store_slots: 4.0 / 3.0,
            // Probe group M, p_scatter_st cstride=8 and 32: 8,388,608 sectors, each written by one
            // 4-byte lane and never completed, take 0.55 ms, and Nsight Compute counts 32 bytes
            // of DRAM read for each beside the 32 written: a read-modify-write. At the copy
            // bandwidth 0.55 ms is 197 bytes a sector; beyond the write's 64-byte atom, the read
            // and the bus's turnarounds between reading and writing take about 192.
            dram_partial_sector_bytes: 192.0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(id: &str, expected: DeviceId) {
        assert_eq!(id.parse::<DeviceId>(), Ok(expected));
        assert_eq!(expected.as_str(), id);
        assert_eq!(expected.device().id, expected);
    }

    #[test]
    fn every_preset_round_trips_through_its_id() {
        check("g80", DeviceId::G80);
        check("gt200", DeviceId::Gt200);
        check("fermi", DeviceId::Fermi);
        check("v100", DeviceId::V100);
        check("a100", DeviceId::A100);
        check("h100", DeviceId::H100);
    }

    #[test]
    fn unknown_device_is_an_error_not_a_panic() {
        assert_eq!(
            "rtx4090".parse::<DeviceId>(),
            Err(UnknownDevice("rtx4090".into()))
        );
    }

    #[test]
    fn warps_and_threads_per_sm_agree_on_every_preset() {
        for id in DeviceId::ALL {
            let d = id.device();
            assert_eq!(
                d.max_warps_per_sm * d.warp_size,
                d.max_threads_per_sm,
                "{id}"
            );
        }
    }

    #[test]
    fn old_devices_have_dram_rows_that_add_up_to_their_bandwidth() {
        // cc 1.x has no L2, so its DRAM timings matter; 64-bit partitions move 16 bytes a clock.
        for id in DeviceId::ALL {
            let d = id.device();
            let old = d.compute_capability.major == 1;
            assert_eq!(d.timing.dram_rows.is_some(), old, "{id}");
            if let Some(rows) = d.timing.dram_rows {
                let gbps = f64::from(rows.partitions * 16 * rows.clock_mhz) / 1000.0;
                // 7 x 16 B x 999 MHz is 111.9 GB/s, which the GTX 260 quotes as 112.
                assert!(
                    (gbps - d.dram_bandwidth_gbps).abs() < 0.005 * d.dram_bandwidth_gbps,
                    "{id}: {gbps}"
                );
                assert_eq!(rows.row_bytes % rows.interleave_bytes, 0, "{id}");
            }
        }
    }

    /// The message `check_launch` gives for `grid` and `block` on `device`, or "ok".
    fn check_launch(device: DeviceId, grid: [u32; 3], block: [u32; 3], expected: &str) {
        let found = match device.device().check_launch(grid, block) {
            Ok(()) => "ok".to_string(),
            Err(error) => error.to_string(),
        };
        assert_eq!(found, expected, "{device} {grid:?} {block:?}");
    }

    #[test]
    fn cuda_arch_is_ten_times_the_two_digits_of_the_compute_capability() {
        let arch: Vec<u32> = DeviceId::ALL
            .iter()
            .map(|id| id.device().compute_capability.cuda_arch())
            .collect();
        assert_eq!(arch, [100, 130, 200, 700, 800, 900]);
    }

    #[test]
    fn every_preset_has_the_launch_limits_of_its_compute_capability() {
        let limits = |id: DeviceId| {
            let d = id.device();
            (d.max_grid_dim, d.max_block_dim, d.max_threads_per_block)
        };
        let cc1 = ([65_535, 65_535, 1], [512, 512, 64], 512);
        let cc2 = ([65_535, 65_535, 65_535], [1024, 1024, 64], 1024);
        let cc3_on = ([2_147_483_647, 65_535, 65_535], [1024, 1024, 64], 1024);
        assert_eq!(limits(DeviceId::G80), cc1);
        assert_eq!(limits(DeviceId::Gt200), cc1);
        assert_eq!(limits(DeviceId::Fermi), cc2);
        assert_eq!(limits(DeviceId::V100), cc3_on);
        assert_eq!(limits(DeviceId::A100), cc3_on);
        assert_eq!(limits(DeviceId::H100), cc3_on);
    }

    #[test]
    fn a_launch_beyond_the_device_limits_names_the_limit_and_the_device() {
        use DeviceId::*;
        check_launch(H100, [2_147_483_647, 65_535, 65_535], [1024, 1, 1], "ok");
        check_launch(
            H100,
            [64, 70_000, 1],
            [16, 16, 1],
            "grid y is 70000; the H100 allows at most 65535",
        );
        check_launch(
            H100,
            [4_294_967_295, 4_294_967_295, 4_294_967_295],
            [1, 1, 1],
            "grid x is 4294967295; the H100 allows at most 2147483647",
        );
        check_launch(
            G80,
            [1, 1, 2],
            [1, 1, 1],
            "grid z is 2; the G80 allows at most 1",
        );
        check_launch(
            Gt200,
            [65_536, 1, 1],
            [1, 1, 1],
            "grid x is 65536; the GT200 allows at most 65535",
        );
        check_launch(Fermi, [1, 1, 65_535], [1, 1, 1], "ok");
        check_launch(
            A100,
            [1, 1, 1],
            [1, 1, 65],
            "block z is 65; the A100 allows at most 64",
        );
        check_launch(
            V100,
            [1, 1, 1],
            [2048, 1, 1],
            "block x is 2048; the V100 allows at most 1024",
        );
        check_launch(
            Gt200,
            [1, 1, 1],
            [32, 32, 1],
            "a block of 32x32x1 is 1024 threads; the GT200 allows at most 512 per block",
        );
        check_launch(
            H100,
            [1, 0, 1],
            [32, 1, 1],
            "grid y is 0; every grid and block extent must be at least 1",
        );
        check_launch(
            H100,
            [1, 1, 1],
            [32, 1, 0],
            "block z is 0; every grid and block extent must be at least 1",
        );
    }

    #[test]
    fn old_devices_have_sixteen_banks_and_half_warps() {
        for id in DeviceId::ALL {
            let d = id.device();
            let old = d.compute_capability.major == 1;
            assert_eq!(d.n_banks, if old { 16 } else { 32 }, "{id}");
            let phase = if old {
                SharedPhase::HalfWarp
            } else {
                SharedPhase::FullWarp
            };
            assert_eq!(d.shared_phase, phase, "{id}");
        }
    }
}
