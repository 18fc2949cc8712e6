//! The numbers a lesson's words may name: what the simulator computes of the shown launch
//! (`Metric`), what the launch is (`LaunchFact`) and what the chosen device is (`DeviceFact`).
//!
//! A lesson file names a number as a placeholder, `{sectors-per-load-request}`, or, where the
//! sentence is about another value of the lesson's swept setting, `{latency-covered-percent
//! regs=64}` (`FactRef`). The page fills each in from the run it shows, or from the sweep's launch
//! at that value, so no number in a lesson's words can disagree with the simulator or the preset;
//! a lecture's own figures are quoted instead (`lesson_text::Inline::Quote`).

use crate::format::{format_number, format_significant, format_time};
use crate::settings::SweepSetting;
use memplay_sim::simulate::{SimulationInput, SimulationReport};
use memplay_sim::timing::Prediction;
use memplay_sim::DeviceId;
use memplay_web::protocol::SweptLaunch;
use std::rc::Rc;

/// A number of a launch that the simulator computes, from its counters or its prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Floats one thread loads from global memory: load requests x 32 lanes / threads.
    GlobalLoadsPerThread,
    /// Global load requests per warp.
    GlobalLoadRequestsPerWarp,
    /// Shared-memory wavefronts per shared load instruction: the conflict degree.
    WavefrontsPerSharedLoad,
    /// 32-byte sectors per global load request.
    SectorsPerLoadRequest,
    /// Global atomic requests per block.
    GlobalAtomicRequestsPerBlock,
    /// Threads of the grid beyond an n x n matrix (the launch's argument `n`): the threads a
    /// boundary check must keep from writing.
    ThreadsWithoutAnElement,
    /// Blocks resident on one SM at once (the occupancy calculator's answer).
    BlocksPerSm,
    /// FP32 operations per byte the kernel asks of global memory: the lecture's arithmetic
    /// intensity, counted at the load and store instructions.
    FlopsPerGlobalByte,
    /// Bytes of shared memory one block of the launch uses.
    SharedBytesPerBlock,
    /// The row pitch cudaMallocPitch gives rows of 100 floats (400 bytes) on the launch's device.
    PitchOf100Floats,
    /// The share of a block's memory wait that the SM's resident warps cover, in percent
    /// (`timing::LatencyHiding::covered`): 100 when a unit, not the latency, sets the pace.
    LatencyCoveredPercent,
    /// Lanes active in the average warp instruction (`smsp__thread_inst_executed` over
    /// `smsp__inst_executed`).
    ActiveLanesPerInstruction,
    /// The time of the launch's copies to and from pinned host memory over the kernel's time
    /// (`transfer::launch_transfers`).
    CopiesOverKernel,
    /// The predicted time of the launch.
    PredictedTime,
    /// Warps an SM must hold for its busiest unit never to idle (`LatencyHiding`).
    WarpsToCover,
    /// Warps resident on an SM (`LatencyHiding::resident_warps`).
    ResidentWarps,
    /// Warps an SM holds at once by the occupancy calculator.
    WarpsPerSm,
    /// The predicted FP32 throughput in GFLOP/s.
    PredictedGflops,
    /// Bytes of global memory the kernel's loads and stores ask for, per thread.
    GlobalBytesPerThread,
    /// Warp instructions issued, per warp of the grid.
    WarpInstructionsPerWarp,
    /// Blocks an SM's registers leave room for (the occupancy calculator's register limit).
    BlocksByRegisters,
    /// Blocks an SM's warp slots leave room for.
    BlocksByWarps,
    /// The occupancy: resident warps over the SM's warp slots, in percent.
    OccupancyPercent,
    /// FP32 operations per byte of DRAM traffic, as the simulated launch moves it.
    FlopsPerDramByte,
    /// A block's wait for memory per pass, in nanoseconds (`Prediction::block_latency_ns`).
    MemoryWaitNs,
    /// The time of the launch's copies to and from pinned host memory.
    CopiesTime,
    /// Bytes of padding cudaMallocPitch adds to a row of 100 floats on the launch's device.
    PaddingOf100Floats,
}

impl Metric {
    pub const ALL: [Metric; 27] = [
        Metric::GlobalLoadsPerThread,
        Metric::GlobalLoadRequestsPerWarp,
        Metric::WavefrontsPerSharedLoad,
        Metric::SectorsPerLoadRequest,
        Metric::GlobalAtomicRequestsPerBlock,
        Metric::ThreadsWithoutAnElement,
        Metric::BlocksPerSm,
        Metric::FlopsPerGlobalByte,
        Metric::SharedBytesPerBlock,
        Metric::PitchOf100Floats,
        Metric::LatencyCoveredPercent,
        Metric::ActiveLanesPerInstruction,
        Metric::CopiesOverKernel,
        Metric::PredictedTime,
        Metric::WarpsToCover,
        Metric::ResidentWarps,
        Metric::WarpsPerSm,
        Metric::PredictedGflops,
        Metric::GlobalBytesPerThread,
        Metric::WarpInstructionsPerWarp,
        Metric::BlocksByRegisters,
        Metric::BlocksByWarps,
        Metric::OccupancyPercent,
        Metric::FlopsPerDramByte,
        Metric::MemoryWaitNs,
        Metric::CopiesTime,
        Metric::PaddingOf100Floats,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Metric::GlobalLoadsPerThread => "global-loads-per-thread",
            Metric::GlobalLoadRequestsPerWarp => "global-load-requests-per-warp",
            Metric::WavefrontsPerSharedLoad => "wavefronts-per-shared-load",
            Metric::SectorsPerLoadRequest => "sectors-per-load-request",
            Metric::GlobalAtomicRequestsPerBlock => "global-atomic-requests-per-block",
            Metric::ThreadsWithoutAnElement => "threads-without-an-element",
            Metric::BlocksPerSm => "blocks-per-sm",
            Metric::FlopsPerGlobalByte => "flops-per-global-byte",
            Metric::SharedBytesPerBlock => "shared-bytes-per-block",
            Metric::PitchOf100Floats => "pitch-of-100-floats",
            Metric::LatencyCoveredPercent => "latency-covered-percent",
            Metric::ActiveLanesPerInstruction => "active-lanes-per-instruction",
            Metric::CopiesOverKernel => "copies-over-kernel",
            Metric::PredictedTime => "predicted-time",
            Metric::WarpsToCover => "warps-to-cover",
            Metric::ResidentWarps => "resident-warps",
            Metric::WarpsPerSm => "warps-per-sm",
            Metric::PredictedGflops => "predicted-gflops",
            Metric::GlobalBytesPerThread => "global-bytes-per-thread",
            Metric::WarpInstructionsPerWarp => "warp-instructions-per-warp",
            Metric::BlocksByRegisters => "blocks-by-registers",
            Metric::BlocksByWarps => "blocks-by-warps",
            Metric::OccupancyPercent => "occupancy-percent",
            Metric::FlopsPerDramByte => "flops-per-dram-byte",
            Metric::MemoryWaitNs => "memory-wait-ns",
            Metric::CopiesTime => "copies-time",
            Metric::PaddingOf100Floats => "padding-of-100-floats",
        }
    }

    /// What the number is, in words, after the number.
    pub fn words(self) -> &'static str {
        match self {
            Metric::GlobalLoadsPerThread => "floats loaded from global memory per thread",
            Metric::GlobalLoadRequestsPerWarp => "global load requests per warp",
            Metric::WavefrontsPerSharedLoad => "wavefronts per shared-memory load",
            Metric::SectorsPerLoadRequest => "sectors per global load request",
            Metric::GlobalAtomicRequestsPerBlock => "global atomic requests per block",
            Metric::ThreadsWithoutAnElement => "threads with no element of C to write",
            Metric::BlocksPerSm => "blocks resident per SM",
            Metric::FlopsPerGlobalByte => "FLOP per byte asked of global memory",
            Metric::SharedBytesPerBlock => "bytes of shared memory per block",
            Metric::PitchOf100Floats => "bytes of pitch for rows of 100 floats",
            Metric::LatencyCoveredPercent => "% of the memory wait covered by resident warps",
            Metric::ActiveLanesPerInstruction => "lanes active per warp instruction",
            Metric::CopiesOverKernel => "times the kernel's time spent on its copies (pinned)",
            Metric::PredictedTime => "predicted",
            Metric::WarpsToCover => "warps needed to cover the wait",
            Metric::ResidentWarps => "warps resident per SM",
            Metric::WarpsPerSm => "warps per SM",
            Metric::PredictedGflops => "GFLOP/s predicted",
            Metric::GlobalBytesPerThread => "bytes of global memory per thread",
            Metric::WarpInstructionsPerWarp => "warp instructions per warp",
            Metric::BlocksByRegisters => "blocks the registers leave room for",
            Metric::BlocksByWarps => "blocks the warp slots leave room for",
            Metric::OccupancyPercent => "% occupancy",
            Metric::FlopsPerDramByte => "FLOP per byte of DRAM traffic",
            Metric::MemoryWaitNs => "ns of a block's wait for memory",
            Metric::CopiesTime => "for the copies (pinned)",
            Metric::PaddingOf100Floats => "bytes of padding per row of 100 floats",
        }
    }

    /// The number for a launch and its report; `None` where the launch has no such access.
    pub fn value(
        self,
        input: &SimulationInput,
        report: &SimulationReport,
        prediction: &Prediction,
    ) -> Option<f64> {
        let counter = |name: &str| report.counters.get(name).unwrap_or(0.0);
        let blocks = input.grid.count() as f64;
        let threads = blocks * input.block.count() as f64;
        let ratio = |numerator: f64, denominator: f64| {
            (denominator > 0.0 && numerator > 0.0).then(|| numerator / denominator)
        };
        let load_requests = counter("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
        match self {
            Metric::GlobalLoadsPerThread => ratio(load_requests * 32.0, threads),
            Metric::GlobalLoadRequestsPerWarp => ratio(load_requests, threads / 32.0),
            Metric::WavefrontsPerSharedLoad => ratio(
                counter("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                counter("smsp__inst_executed_op_shared_ld.sum"),
            ),
            Metric::SectorsPerLoadRequest => ratio(
                counter("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                load_requests,
            ),
            Metric::GlobalAtomicRequestsPerBlock => ratio(
                counter("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"),
                blocks,
            ),
            Metric::ThreadsWithoutAnElement => {
                let n = crate::model::int_argument(input, "n")? as f64;
                // Only a launch that ran (the guarded kernel) answers: the simulator has checked
                // that no thread left the matrix.
                Some(threads - n * n).filter(|_| report.grid_blocks > 0)
            }
            Metric::BlocksPerSm => Some(f64::from(report.occupancy.active_blocks_per_sm)),
            Metric::FlopsPerGlobalByte => {
                ratio(counter("fp32_flops"), counter("global_bytes_requested"))
            }
            Metric::SharedBytesPerBlock => ratio(report.shared_bytes_per_block as f64, 1.0),
            Metric::PitchOf100Floats => {
                Some(memplay_sim::pitch::pitch_bytes(&input.device, 400) as f64)
            }
            Metric::LatencyCoveredPercent => Some(100.0 * prediction.latency_hiding.covered()),
            Metric::CopiesOverKernel => Some(
                memplay_sim::transfer::launch_transfers(
                    report,
                    prediction,
                    memplay_sim::transfer::HostMemory::Pinned,
                    memplay_sim::transfer::Layout::Linear,
                )
                .ratio(),
            ),
            Metric::ActiveLanesPerInstruction => ratio(
                counter("smsp__thread_inst_executed.sum"),
                counter("smsp__inst_executed.sum"),
            ),
            Metric::PredictedTime => Some(prediction.time_ms),
            Metric::WarpsToCover => Some(prediction.latency_hiding.warps_to_cover),
            Metric::ResidentWarps => Some(f64::from(prediction.latency_hiding.resident_warps)),
            Metric::WarpsPerSm => Some(f64::from(report.occupancy.active_warps_per_sm)),
            Metric::PredictedGflops => Some(prediction.gflops),
            Metric::GlobalBytesPerThread => ratio(counter("global_bytes_requested"), threads),
            Metric::WarpInstructionsPerWarp => {
                ratio(counter("smsp__inst_executed.sum"), threads / 32.0)
            }
            Metric::BlocksByRegisters => Some(f64::from(report.occupancy.limit_registers)),
            Metric::BlocksByWarps => Some(f64::from(report.occupancy.limit_warps)),
            Metric::OccupancyPercent => Some(report.occupancy.theoretical_occupancy_pct),
            Metric::FlopsPerDramByte => prediction.arithmetic_intensity,
            Metric::MemoryWaitNs => Some(prediction.block_latency_ns),
            Metric::CopiesTime => {
                let transfers = memplay_sim::transfer::launch_transfers(
                    report,
                    prediction,
                    memplay_sim::transfer::HostMemory::Pinned,
                    memplay_sim::transfer::Layout::Linear,
                );
                Some(transfers.ratio() * prediction.time_ms)
            }
            Metric::PaddingOf100Floats => {
                Some(memplay_sim::pitch::pitch_bytes(&input.device, 400) as f64 - 400.0)
            }
        }
    }

    /// The number as the page prints it.
    pub fn format(self, value: f64) -> String {
        match self {
            Metric::PredictedTime | Metric::CopiesTime => format_time(value),
            Metric::LatencyCoveredPercent
            | Metric::WarpsToCover
            | Metric::OccupancyPercent
            | Metric::MemoryWaitNs => format!("{value:.0}"),
            _ => format_significant(value),
        }
    }
}

/// A number of the launch itself, known before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchFact {
    /// The `TILE_WIDTH` define.
    Tile,
    /// The `PAD` define.
    Pad,
    /// Threads in one block.
    ThreadsPerBlock,
    /// Registers per thread.
    Registers,
    /// The `stride` argument.
    Stride,
    /// The `n` argument.
    N,
    /// Blocks in the grid.
    GridBlocks,
    /// Blocks along the grid's x.
    GridX,
    /// Threads of the whole grid.
    GridThreads,
    /// Warps in one block.
    WarpsPerBlock,
    /// Tiles along a row of the n x n matrices: n over the tile width, rounded up.
    TilesPerRow,
    /// Elements of the n x n matrices.
    MatrixElements,
    /// The `iters` argument.
    Iterations,
    /// Grid threads along x: blocks along x times the block's x.
    ThreadsAcross,
    /// Threads of the grid beyond the n x n matrix, known from the launch alone (the metric
    /// `threads-without-an-element` answers only for a launch that ran).
    ThreadsBeyondMatrix,
}

impl LaunchFact {
    pub const ALL: [LaunchFact; 15] = [
        LaunchFact::Tile,
        LaunchFact::Pad,
        LaunchFact::ThreadsPerBlock,
        LaunchFact::Registers,
        LaunchFact::Stride,
        LaunchFact::N,
        LaunchFact::GridBlocks,
        LaunchFact::GridX,
        LaunchFact::GridThreads,
        LaunchFact::WarpsPerBlock,
        LaunchFact::TilesPerRow,
        LaunchFact::MatrixElements,
        LaunchFact::Iterations,
        LaunchFact::ThreadsAcross,
        LaunchFact::ThreadsBeyondMatrix,
    ];

    pub fn key(self) -> &'static str {
        match self {
            LaunchFact::Tile => "tile",
            LaunchFact::Pad => "pad",
            LaunchFact::ThreadsPerBlock => "threads-per-block",
            LaunchFact::Registers => "registers",
            LaunchFact::Stride => "stride",
            LaunchFact::N => "n",
            LaunchFact::GridBlocks => "grid-blocks",
            LaunchFact::GridX => "grid-x",
            LaunchFact::GridThreads => "grid-threads",
            LaunchFact::WarpsPerBlock => "warps-per-block",
            LaunchFact::TilesPerRow => "tiles-per-row",
            LaunchFact::MatrixElements => "matrix-elements",
            LaunchFact::Iterations => "iterations",
            LaunchFact::ThreadsAcross => "threads-across",
            LaunchFact::ThreadsBeyondMatrix => "threads-beyond-the-matrix",
        }
    }

    pub fn value(self, input: &SimulationInput) -> Option<f64> {
        let define = |name: &str| {
            input
                .defines
                .iter()
                .find(|(define, _)| define == name)
                .and_then(|(_, value)| memplay_sim::decimal::parse_f64(value))
        };
        let argument = |name: &str| crate::model::int_argument(input, name).map(|v| v as f64);
        let threads = input.block.count() as f64;
        match self {
            LaunchFact::Tile => define("TILE_WIDTH"),
            LaunchFact::Pad => define("PAD"),
            LaunchFact::ThreadsPerBlock => Some(threads),
            LaunchFact::Registers => Some(f64::from(input.regs)),
            LaunchFact::Stride => argument("stride"),
            LaunchFact::N => argument("n"),
            LaunchFact::GridBlocks => Some(input.grid.count() as f64),
            LaunchFact::GridX => Some(f64::from(input.grid.x)),
            LaunchFact::GridThreads => Some(input.grid.count() as f64 * threads),
            LaunchFact::WarpsPerBlock => {
                Some((threads / f64::from(input.device.warp_size.max(1))).ceil())
            }
            LaunchFact::TilesPerRow => Some((argument("n")? / define("TILE_WIDTH")?).ceil()),
            LaunchFact::MatrixElements => Some(argument("n")?.powi(2)),
            LaunchFact::Iterations => argument("iters"),
            LaunchFact::ThreadsAcross => Some(f64::from(input.grid.x) * f64::from(input.block.x)),
            LaunchFact::ThreadsBeyondMatrix => {
                Some(input.grid.count() as f64 * threads - argument("n")?.powi(2))
            }
        }
    }
}

/// A fact of the chosen device preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceFact {
    /// The preset's short name ("H100"), as the device menu names it.
    Name,
    Banks,
    BankBytes,
    WarpSize,
    MaxThreadsPerSm,
    MaxWarpsPerSm,
    MaxBlocksPerSm,
    MaxThreadsPerBlock,
    RegistersPerSm,
    SharedBytesPerSm,
    /// The L2's size in MB (binary).
    L2Megabytes,
    Sms,
    /// Shared memory the system reserves for each resident block.
    ReservedSharedPerBlock,
    /// The row alignment `cudaMallocPitch` pads to.
    PitchAlignment,
    /// The DRAM bandwidth the datasheet quotes, GB/s.
    DramGbps,
    /// The compute capability, "9.0".
    ComputeCapability,
    /// The FP32 peak the datasheet quotes, GFLOP/s.
    Fp32PeakGflops,
    /// The ridge point of the roofline: FP32 peak over DRAM bandwidth, FLOP per byte.
    RidgeFlopsPerByte,
    /// The bus to the host, by name ("PCI Express 5.0 x16").
    HostLinkName,
    /// The bus's bandwidth each way, GB/s.
    HostLinkGbps,
    /// Shared memory one block may use by default, KB.
    SharedKilobytesPerBlock,
    /// Shared memory per SM, KB.
    SharedKilobytesPerSm,
    /// The sector global memory is counted in, bytes: 32 on every preset (CUDA C++ Best Practices
    /// Guide, "Coalesced Access to Global Memory").
    SectorBytes,
    /// The cache line, bytes: 128, four sectors (the same guide).
    LineBytes,
}

impl DeviceFact {
    pub const ALL: [DeviceFact; 24] = [
        DeviceFact::Name,
        DeviceFact::Banks,
        DeviceFact::BankBytes,
        DeviceFact::WarpSize,
        DeviceFact::MaxThreadsPerSm,
        DeviceFact::MaxWarpsPerSm,
        DeviceFact::MaxBlocksPerSm,
        DeviceFact::MaxThreadsPerBlock,
        DeviceFact::RegistersPerSm,
        DeviceFact::SharedBytesPerSm,
        DeviceFact::L2Megabytes,
        DeviceFact::Sms,
        DeviceFact::ReservedSharedPerBlock,
        DeviceFact::PitchAlignment,
        DeviceFact::DramGbps,
        DeviceFact::ComputeCapability,
        DeviceFact::Fp32PeakGflops,
        DeviceFact::RidgeFlopsPerByte,
        DeviceFact::HostLinkName,
        DeviceFact::HostLinkGbps,
        DeviceFact::SharedKilobytesPerBlock,
        DeviceFact::SharedKilobytesPerSm,
        DeviceFact::SectorBytes,
        DeviceFact::LineBytes,
    ];

    pub fn key(self) -> &'static str {
        match self {
            DeviceFact::Name => "device",
            DeviceFact::Banks => "banks",
            DeviceFact::BankBytes => "bank-bytes",
            DeviceFact::WarpSize => "warp-size",
            DeviceFact::MaxThreadsPerSm => "max-threads-per-sm",
            DeviceFact::MaxWarpsPerSm => "max-warps-per-sm",
            DeviceFact::MaxBlocksPerSm => "max-blocks-per-sm",
            DeviceFact::MaxThreadsPerBlock => "max-threads-per-block",
            DeviceFact::RegistersPerSm => "registers-per-sm",
            DeviceFact::SharedBytesPerSm => "shared-bytes-per-sm",
            DeviceFact::L2Megabytes => "l2-megabytes",
            DeviceFact::Sms => "sms",
            DeviceFact::ReservedSharedPerBlock => "reserved-shared-per-block",
            DeviceFact::PitchAlignment => "pitch-alignment",
            DeviceFact::DramGbps => "dram-gbps",
            DeviceFact::ComputeCapability => "compute-capability",
            DeviceFact::Fp32PeakGflops => "fp32-peak-gflops",
            DeviceFact::RidgeFlopsPerByte => "ridge-flops-per-byte",
            DeviceFact::HostLinkName => "host-link",
            DeviceFact::HostLinkGbps => "host-link-gbps",
            DeviceFact::SharedKilobytesPerBlock => "shared-kb-per-block",
            DeviceFact::SharedKilobytesPerSm => "shared-kb-per-sm",
            DeviceFact::SectorBytes => "sector-bytes",
            DeviceFact::LineBytes => "line-bytes",
        }
    }

    pub fn text(self, device: &memplay_sim::Device) -> String {
        let number = |value: f64| format_number(value);
        match self {
            DeviceFact::Name => device.id.label().to_string(),
            DeviceFact::Banks => number(f64::from(device.n_banks)),
            DeviceFact::BankBytes => number(f64::from(device.bank_width_bytes)),
            DeviceFact::WarpSize => number(f64::from(device.warp_size)),
            DeviceFact::MaxThreadsPerSm => number(f64::from(device.max_threads_per_sm)),
            DeviceFact::MaxWarpsPerSm => number(f64::from(device.max_warps_per_sm)),
            DeviceFact::MaxBlocksPerSm => number(f64::from(device.max_blocks_per_sm)),
            DeviceFact::MaxThreadsPerBlock => number(f64::from(device.max_threads_per_block)),
            DeviceFact::RegistersPerSm => number(f64::from(device.regs_per_sm)),
            DeviceFact::SharedBytesPerSm => number(f64::from(device.smem_per_sm)),
            DeviceFact::L2Megabytes => number(device.l2_bytes as f64 / f64::from(1 << 20)),
            DeviceFact::Sms => number(f64::from(device.n_sms)),
            DeviceFact::ReservedSharedPerBlock => number(f64::from(device.reserved_smem_per_block)),
            DeviceFact::PitchAlignment => number(f64::from(device.pitch_alignment_bytes)),
            DeviceFact::DramGbps => number(device.dram_bandwidth_gbps),
            DeviceFact::ComputeCapability => format!(
                "{}.{}",
                device.compute_capability.major, device.compute_capability.minor
            ),
            DeviceFact::Fp32PeakGflops => number(device.fp32_peak_gflops),
            DeviceFact::RidgeFlopsPerByte => {
                format_significant(device.fp32_peak_gflops / device.dram_bandwidth_gbps)
            }
            DeviceFact::HostLinkName => device.host_link.name.to_string(),
            DeviceFact::HostLinkGbps => format_significant(device.host_link.raw_gbps),
            DeviceFact::SharedKilobytesPerBlock => {
                number(f64::from(device.smem_per_block) / 1024.0)
            }
            DeviceFact::SharedKilobytesPerSm => number(f64::from(device.smem_per_sm) / 1024.0),
            DeviceFact::SectorBytes => number(memplay_sim::coalescing::SECTOR_BYTES as f64),
            DeviceFact::LineBytes => number(memplay_sim::coalescing::LINE_BYTES as f64),
        }
    }
}

/// A number a lesson's words may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fact {
    Metric(Metric),
    Launch(LaunchFact),
    Device(DeviceFact),
}

impl Fact {
    /// The fact a placeholder's key names.
    pub fn parse(key: &str) -> Option<Fact> {
        Metric::ALL
            .into_iter()
            .find(|metric| metric.key() == key)
            .map(Fact::Metric)
            .or_else(|| {
                LaunchFact::ALL
                    .into_iter()
                    .find(|fact| fact.key() == key)
                    .map(Fact::Launch)
            })
            .or_else(|| {
                DeviceFact::ALL
                    .into_iter()
                    .find(|fact| fact.key() == key)
                    .map(Fact::Device)
            })
    }

    #[cfg(test)]
    pub fn key(self) -> &'static str {
        match self {
            Fact::Metric(metric) => metric.key(),
            Fact::Launch(fact) => fact.key(),
            Fact::Device(fact) => fact.key(),
        }
    }
}

/// A placeholder: the fact, and where it is read if not at the shown launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FactRef {
    pub fact: Fact,
    pub at: Option<At>,
}

/// Where a placeholder reads its fact instead of the shown launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// The sweep's launch at this value of the lesson's swept setting (`regs=64`).
    Setting(SweepSetting, u32),
    /// Another device preset, for a device fact (`device=g80`): a sentence about another
    /// generation names its figures from its preset.
    Device(DeviceId),
}

impl FactRef {
    /// Reads `key` or `key setting=value` (the inside of `{...}`); the error says what is wrong.
    pub fn parse(text: &str) -> Result<FactRef, String> {
        let mut words = text.split_whitespace();
        let key = words.next().ok_or("an empty placeholder `{}`")?;
        let fact = Fact::parse(key).ok_or(format!(
            "`{{{key}}}` names no metric, launch or device fact"
        ))?;
        let at = match words.next() {
            None => None,
            Some(setting) => {
                let (name, value) = setting.split_once('=').ok_or(format!(
                    "`{setting}` in `{{{text}}}` is not `setting=value`"
                ))?;
                if name == "device" {
                    let device = DeviceId::ALL
                        .into_iter()
                        .find(|device| device.as_str() == value)
                        .ok_or(format!("`{value}` in `{{{text}}}` is not a device"))?;
                    if !matches!(fact, Fact::Device(_)) {
                        return Err(format!(
                            "`{{{text}}}`: only a device fact can be read on another device"
                        ));
                    }
                    return Ok(FactRef {
                        fact,
                        at: Some(At::Device(device)),
                    });
                }
                let setting = SweepSetting::ALL
                    .into_iter()
                    .find(|each| each.key() == name)
                    .ok_or(format!("`{name}` in `{{{text}}}` is not a setting"))?;
                let value = value
                    .parse()
                    .map_err(|_| format!("`{value}` in `{{{text}}}` is not a whole number"))?;
                Some(At::Setting(setting, value))
            }
        };
        if words.next().is_some() {
            return Err(format!("`{{{text}}}` has more than one setting"));
        }
        Ok(FactRef { fact, at })
    }
}

/// One launch the page has: its input, and its report and prediction once it ran.
#[derive(Clone, Copy, Debug)]
pub struct LaunchView<'a> {
    pub input: &'a SimulationInput,
    pub outcome: Option<(&'a SimulationReport, &'a Prediction)>,
    /// The launch did not run: its simulator's numbers are shown as "—", not waited for.
    pub failed: bool,
}

/// The launches of the lesson's sweep: the swept setting, and at each value the launch and,
/// once it ran, its report and prediction.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRuns {
    pub setting: SweepSetting,
    pub runs: Vec<SweepRun>,
}

/// One launch of the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRun {
    pub value: u32,
    pub input: SimulationInput,
    /// Its report and prediction, once it ran.
    pub launch: Option<Rc<SweptLaunch>>,
    /// It did not run (it does not launch on the device, or failed).
    pub failed: bool,
}

impl SweepRuns {
    pub fn views(&self) -> Vec<(u32, LaunchView<'_>)> {
        self.runs
            .iter()
            .map(|run| {
                (
                    run.value,
                    LaunchView {
                        input: &run.input,
                        outcome: run
                            .launch
                            .as_deref()
                            .map(|launch| (&launch.report, &launch.prediction)),
                        failed: run.failed,
                    },
                )
            })
            .collect()
    }
}

/// What a placeholder is filled in from: the shown launch, and the sweep's launches that ran.
#[derive(Clone, Copy, Debug)]
pub struct FactContext<'a> {
    pub shown: LaunchView<'a>,
    /// The swept setting and its launches by value.
    pub sweep: Option<(SweepSetting, &'a [(u32, LaunchView<'a>)])>,
}

impl FactContext<'_> {
    /// The placeholder's text, or `None` while the launch it needs has not run (or has no such
    /// number).
    pub fn text(&self, fact: &FactRef) -> Option<String> {
        let launch = match fact.at {
            None => self.shown,
            Some(At::Device(device)) => {
                return match fact.fact {
                    Fact::Device(device_fact) => Some(device_fact.text(&device.device())),
                    _ => None,
                };
            }
            Some(At::Setting(setting, value)) => {
                let (swept, launches) = self.sweep?;
                if swept != setting {
                    return None;
                }
                launches
                    .iter()
                    .find(|(at, _)| *at == value)
                    .map(|(_, launch)| *launch)?
            }
        };
        match fact.fact {
            Fact::Device(device_fact) => Some(device_fact.text(&launch.input.device)),
            Fact::Launch(launch_fact) => launch_fact.value(launch.input).map(format_number),
            Fact::Metric(_) if launch.failed => Some("—".to_string()),
            Fact::Metric(metric) => {
                let (report, prediction) = launch.outcome?;
                metric
                    .value(launch.input, report, prediction)
                    .map(|value| metric.format(value))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_names_a_fact_and_optionally_a_setting() {
        assert_eq!(
            FactRef::parse("latency-covered-percent regs=64"),
            Ok(FactRef {
                fact: Fact::Metric(Metric::LatencyCoveredPercent),
                at: Some(At::Setting(SweepSetting::Regs, 64)),
            })
        );
        assert_eq!(
            FactRef::parse("banks"),
            Ok(FactRef {
                fact: Fact::Device(DeviceFact::Banks),
                at: None,
            })
        );
        assert!(FactRef::parse("speed")
            .unwrap_err()
            .contains("names no metric"));
        assert!(FactRef::parse("banks colour=red")
            .unwrap_err()
            .contains("not a setting"));
        assert_eq!(
            FactRef::parse("banks device=g80"),
            Ok(FactRef {
                fact: Fact::Device(DeviceFact::Banks),
                at: Some(At::Device(DeviceId::G80)),
            })
        );
        assert!(FactRef::parse("predicted-time device=g80")
            .unwrap_err()
            .contains("only a device fact"));
        assert!(FactRef::parse("banks regs=many")
            .unwrap_err()
            .contains("not a whole number"));
    }

    #[test]
    fn every_fact_key_names_one_fact() {
        let keys: Vec<&str> = Metric::ALL
            .iter()
            .map(|m| m.key())
            .chain(LaunchFact::ALL.iter().map(|f| f.key()))
            .chain(DeviceFact::ALL.iter().map(|f| f.key()))
            .collect();
        for key in &keys {
            assert_eq!(Fact::parse(key).map(Fact::key), Some(*key));
        }
        let mut unique = keys.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), keys.len());
    }
}
