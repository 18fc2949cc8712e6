//! Occupancy: how many blocks of a kernel fit on one SM, and what limits them.
//!
//! The calculation is the CUDA occupancy API's (`cudaOccupancyMaxActiveBlocksPerMultiprocessor`, as
//! written out in `cuda_occupancy.h` of the CUDA toolkit, and the CUDA Occupancy Calculator
//! spreadsheet for compute capability 1.x). Seed 003 ("Considering Occupancy", "Dynamic
//! Partitioning of Resources") gives the G80 cases; the `"attrs"` rows of
//! `tests/reference/h100.json` give the H100 ones, checked in `tests/reference.rs`.

use crate::device::{Device, RegisterGranularity};
use crate::kernel::span::one_line;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What one block of a launch asks of an SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BlockResources {
    pub threads_per_block: u32,
    pub regs_per_thread: u32,
    /// Static plus dynamic shared memory, in bytes, without the system's per-block reservation.
    pub smem_per_block: u32,
}

/// The resource that stops one more block from fitting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Registers,
    SharedMem,
    Warps,
    Blocks,
}

impl Limiter {
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::Registers => "registers",
            Limiter::SharedMem => "shared_mem",
            Limiter::Warps => "warps",
            Limiter::Blocks => "blocks",
        }
    }
}

/// The occupancy of one launch configuration, as the CUDA occupancy API computes it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OccupancyReport {
    pub active_blocks_per_sm: u32,
    pub active_warps_per_sm: u32,
    pub theoretical_occupancy_pct: f64,
    pub limiter: Limiter,
    pub limit_registers: u32,
    pub limit_shared_mem: u32,
    pub limit_warps: u32,
    pub limit_blocks: u32,
    pub warps_per_block: u32,
    pub regs_per_block_allocated: u32,
    pub smem_per_block_allocated: u32,
    /// The shared memory per SM the driver configures for this launch (the rest of the unified
    /// L1/shared array is L1 cache); `limit_shared_mem` is counted against it.
    pub shared_carveout_bytes: u32,
}

/// A launch that cannot run at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OccupancyError {
    EmptyBlock,
    TooManyThreads {
        threads: u32,
        max: u32,
    },
    TooManyRegistersPerThread {
        regs: u32,
        max: u32,
    },
    TooManyRegistersPerBlock {
        regs: u32,
        max: u32,
    },
    TooMuchSharedMemory {
        bytes: u32,
        max: u32,
    },
    /// More threads per block than the kernel's `__launch_bounds__` allows (`launch_bounds`).
    AboveLaunchBounds {
        threads: u32,
        max: u32,
    },
}

/// One printable line (`kernel::span::one_line`), as every error of the simulator.
impl fmt::Display for OccupancyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match *self {
            OccupancyError::EmptyBlock => "a block needs at least one thread".to_string(),
            OccupancyError::TooManyThreads { threads, max } => format!(
                "{threads} threads per block is more than this device's {max}: the kernel does not launch"
            ),
            OccupancyError::TooManyRegistersPerThread { regs, max } => {
                format!("{regs} registers per thread is more than this device's {max}")
            }
            OccupancyError::TooManyRegistersPerBlock { regs, max } => format!(
                "the block needs {regs} registers, more than the {max} one block may have"
            ),
            OccupancyError::TooMuchSharedMemory { bytes, max } => format!(
                "the block needs {bytes} bytes of shared memory, more than the {max} one block may have"
            ),
            OccupancyError::AboveLaunchBounds { threads, max } => format!(
                "this launch has {threads} threads per block but __launch_bounds__({max}) allows at most {max}: CUDA refuses it (too many resources requested for launch)"
            ),
        };
        f.write_str(&one_line(&text))
    }
}

impl std::error::Error for OccupancyError {}

/// What a kernel's `__launch_bounds__(maxThreadsPerBlock, minBlocksPerMultiprocessor)` does to a
/// launch of `threads_per_block` threads that nvcc gave `regs_per_thread` registers (CUDA C++
/// Programming Guide, "Launch Bounds"): a block of more than `maxThreadsPerBlock` threads does not
/// launch, and nvcc keeps the registers per thread at or below the most with which
/// `minBlocksPerMultiprocessor` blocks (one when it is not given) of `maxThreadsPerBlock` threads
/// fit on one SM, by the register rule `calculate` applies (allocation unit and partitions
/// included). So the registers the launch is counted with are the lower of the two; 0 (not
/// known) stays 0. On the H100, `__launch_bounds__(256, 4)`: 4 blocks of 8 warps in 65,536
/// registers leave 2,048 per warp, 64 per thread.
pub fn launch_bounds_registers(
    device: &Device,
    bounds: crate::kernel::ir::LaunchBounds,
    threads_per_block: u32,
    regs_per_thread: u32,
) -> Result<u32, OccupancyError> {
    let max = bounds.max_threads_per_block;
    if threads_per_block > max {
        return Err(OccupancyError::AboveLaunchBounds {
            threads: threads_per_block,
            max,
        });
    }
    let blocks = bounds.min_blocks_per_multiprocessor.unwrap_or(1);
    let fits = |regs: u32| {
        let block = BlockResources {
            threads_per_block: max,
            regs_per_thread: regs,
            smem_per_block: 0,
        };
        calculate(device, block).is_ok_and(|report| report.limit_registers >= blocks)
    };
    if regs_per_thread == 0 || fits(regs_per_thread) {
        return Ok(regs_per_thread);
    }
    // Fewer registers never fit fewer blocks, so the most that fit is found by halving the range
    // (a launch may ask for any count, up to u32::MAX, that the occupancy calculation refuses).
    let (mut fitting, mut too_many) = (0u32, regs_per_thread);
    while too_many - fitting > 1 {
        let middle = fitting + (too_many - fitting) / 2;
        if fits(middle) {
            fitting = middle;
        } else {
            too_many = middle;
        }
    }
    Ok(if fitting == 0 {
        regs_per_thread
    } else {
        fitting
    })
}

/// How many blocks of `block` fit on one SM of `device`, and which resource stops one more.
///
/// This follows `cudaOccupancyMaxActiveBlocksPerMultiprocessor` (`cuda_occupancy.h` in the CUDA
/// toolkit, and the Occupancy Calculator spreadsheet for cc 1.x):
/// - warps: `max_warps_per_sm / warps_per_block`;
/// - blocks: the device's `max_blocks_per_sm`;
/// - registers, per warp (cc >= 2.0): each warp's `regs x 32` is rounded up to the allocation unit,
///   each of the register-file partitions holds a whole number of such warps, and the SM's warps are
///   shared out in whole blocks; per block (cc 1.x): the block's warps, rounded up to the warp
///   allocation granularity, times `regs x 32`, rounded up to the allocation unit;
/// - shared memory: static plus dynamic bytes plus the per-block system reservation (cc >= 8.0),
///   rounded up to the allocation unit, into the SM's shared memory.
///
/// A resource the block does not use (0 registers) does not limit it; such a limit, and the shared
/// memory limit, are reported capped at the device's block limit, as Nsight Compute reports its
/// `launch__occupancy_limit_*` values.
pub fn calculate(
    device: &Device,
    block: BlockResources,
) -> Result<OccupancyReport, OccupancyError> {
    let threads = block.threads_per_block;
    if threads == 0 {
        return Err(OccupancyError::EmptyBlock);
    }
    if threads > device.max_threads_per_block {
        return Err(OccupancyError::TooManyThreads {
            threads,
            max: device.max_threads_per_block,
        });
    }
    if block.regs_per_thread > device.max_regs_per_thread {
        return Err(OccupancyError::TooManyRegistersPerThread {
            regs: block.regs_per_thread,
            max: device.max_regs_per_thread,
        });
    }
    let warps_per_block = threads.div_ceil(device.warp_size);
    // A kernel that uses registers is given at least the device's minimum.
    let regs_per_thread = if block.regs_per_thread == 0 {
        0
    } else {
        block.regs_per_thread.max(device.min_regs_per_thread)
    };
    let regs_per_warp = u64::from(regs_per_thread) * u64::from(device.warp_size);
    let regs_per_block_requested = regs_per_warp * u64::from(warps_per_block);
    if regs_per_block_requested > u64::from(device.max_regs_per_block) {
        return Err(OccupancyError::TooManyRegistersPerBlock {
            regs: saturate(regs_per_block_requested),
            max: device.max_regs_per_block,
        });
    }
    let smem_requested = u64::from(block.smem_per_block);
    if smem_requested > u64::from(device.smem_per_block_optin) {
        return Err(OccupancyError::TooMuchSharedMemory {
            bytes: block.smem_per_block,
            max: device.smem_per_block_optin,
        });
    }

    let limit_blocks = device.max_blocks_per_sm;
    let limit_warps = device.max_warps_per_sm / warps_per_block;

    let (limit_registers, regs_per_block_allocated) = if block.regs_per_thread == 0 {
        (limit_blocks, 0)
    } else {
        let unit = u64::from(device.reg_alloc_unit.max(1));
        match device.reg_granularity {
            RegisterGranularity::Warp => {
                let per_warp = round_up(regs_per_warp, unit);
                let partitions = u64::from(device.reg_file_partitions.max(1));
                let warps_per_partition = u64::from(device.regs_per_sm) / partitions / per_warp;
                let warps = warps_per_partition * partitions;
                (
                    saturate(warps / u64::from(warps_per_block)),
                    saturate(per_warp * u64::from(warps_per_block)),
                )
            }
            RegisterGranularity::Block => {
                let granularity = device.warp_alloc_granularity.max(1);
                let warps = u64::from(warps_per_block.div_ceil(granularity) * granularity);
                let per_block = round_up(warps * regs_per_warp, unit);
                (
                    saturate(u64::from(device.regs_per_sm) / per_block),
                    saturate(per_block),
                )
            }
        }
    };

    let smem_per_block_allocated = round_up(
        smem_requested + u64::from(device.reserved_smem_per_block),
        u64::from(device.smem_alloc_unit.max(1)),
    );
    // What the occupancy API computes: the blocks that fit in the largest shared memory an SM can
    // be configured to.
    let limit_shared_mem_at_most = u64::from(device.smem_per_sm)
        .checked_div(smem_per_block_allocated)
        .map_or(limit_blocks, |blocks| saturate(blocks).min(limit_blocks));
    let active_blocks_per_sm = limit_warps
        .min(limit_blocks)
        .min(limit_registers)
        .min(limit_shared_mem_at_most);

    // What Nsight Compute reports: the blocks that fit in the shared memory the driver configured
    // for this launch (see `driver_carveout`). The carveout always holds the resident blocks, so
    // it never lowers the occupancy; it only changes the shared-memory limit that is shown. A block
    // that asks for no shared memory is not limited by it.
    let other_limits = limit_warps.min(limit_blocks).min(limit_registers);
    let shared_carveout_bytes = driver_carveout(
        device,
        smem_per_block_allocated,
        other_limits,
        block.threads_per_block,
        smem_requested > 0,
    );
    // Nsight Compute reports the blocks the carveout holds, even beyond the SM's block limit
    // (`p_carveout` with 64 threads and 0.5 KB: 42); the occupancy calculator of the devices
    // without a carveout to configure (cc 1.x, seed 003) caps it at the block limit.
    let configurable = device.smem_carveouts_kb.len() > 1;
    let limit_shared_mem = u64::from(shared_carveout_bytes)
        .checked_div(smem_per_block_allocated)
        .map_or(limit_blocks, |blocks| {
            let blocks = saturate(blocks);
            if configurable {
                blocks
            } else {
                blocks.min(limit_blocks)
            }
        })
        .max(active_blocks_per_sm);

    // The first limiter in this order wins a tie: a warp limit of 8 and a register limit of 8 are
    // reported as "warps", and the block limit comes before the limits that are capped at it.
    let candidates = [
        (Limiter::Warps, limit_warps),
        (Limiter::Blocks, limit_blocks),
        (Limiter::Registers, limit_registers),
        (Limiter::SharedMem, limit_shared_mem_at_most),
    ];
    let limiter = candidates
        .into_iter()
        .find(|&(_, limit)| limit == active_blocks_per_sm)
        .map_or(Limiter::Warps, |(limiter, _)| limiter);
    let active_warps_per_sm = active_blocks_per_sm * warps_per_block;
    Ok(OccupancyReport {
        active_blocks_per_sm,
        active_warps_per_sm,
        theoretical_occupancy_pct: 100.0 * f64::from(active_warps_per_sm)
            / f64::from(device.max_warps_per_sm),
        limiter,
        limit_registers,
        limit_shared_mem,
        limit_warps,
        limit_blocks,
        warps_per_block,
        regs_per_block_allocated,
        smem_per_block_allocated: saturate(smem_per_block_allocated),
        shared_carveout_bytes,
    })
}

/// How many times the resident blocks' shared memory the driver gives a kernel that asks for
/// none (its blocks hold only the system's reservation) and one that asks for some (blocks of at
/// most a quarter of the SM's threads; larger blocks get room for the resident ones alone).
const ROOM_WITHOUT_SHARED: u64 = 4;
const ROOM_WITH_SHARED: u64 = 2;

/// The shared memory per SM the driver configures for a launch whose blocks take `block_bytes`
/// each (with the system's reservation; `asks_shared`: beyond it) and could be `resident` at a
/// time by every other limit.
///
/// NVIDIA does not document how the driver picks the carveout when a kernel states no preference.
/// This is the rule the H100 shows, exact on all 84 launches of a kernel alone in its process
/// (blocks of 32 to 1,024 threads, 0 to 48 KB of dynamic shared memory; Nsight Compute's
/// `launch__shared_mem_config_size`, 2026-11-25) and on all 162 probe launches, which ran one
/// after another (so the choice does not depend on the launches before it): the smallest size
/// that holds room for `ROOM_WITHOUT_SHARED` or `ROOM_WITH_SHARED` times the resident blocks (at
/// most the SM's block limit), or the smallest that holds as many blocks as any size does. Room
/// beyond the resident blocks is given up to `Device::carveout_room_limit_kb`; a kernel whose
/// resident blocks alone need more gets the smallest size that holds them. Only the reported
/// shared-memory limit depends on it: the carveout always holds the resident blocks.
fn driver_carveout(
    device: &Device,
    block_bytes: u64,
    resident: u32,
    threads_per_block: u32,
    asks_shared: bool,
) -> u32 {
    let mut sizes: Vec<u64> = device
        .smem_carveouts_kb
        .iter()
        .map(|&kb| u64::from(kb) * 1024)
        .collect();
    sizes.sort_unstable();
    let holds = |size: u64| size.checked_div(block_bytes).unwrap_or(u64::MAX);
    // The smallest size that holds `blocks`, or else the smallest that holds the most.
    let size_for = |blocks: u64| {
        sizes
            .iter()
            .copied()
            .find(|&size| holds(size) >= blocks)
            .or_else(|| {
                let most = sizes.iter().map(|&size| holds(size)).max()?;
                sizes.iter().copied().find(|&size| holds(size) == most)
            })
            .unwrap_or(u64::from(device.smem_per_sm))
    };
    let resident = u64::from(resident.max(1));
    let block_limit = u64::from(device.max_blocks_per_sm);
    let size = if !asks_shared {
        size_for((ROOM_WITHOUT_SHARED * resident).min(block_limit))
    } else if threads_per_block <= device.max_threads_per_sm / 4 {
        let roomy = size_for((ROOM_WITH_SHARED * resident).min(block_limit));
        let room_limit = u64::from(device.carveout_room_limit_kb) * 1024;
        if roomy <= room_limit {
            roomy
        } else {
            size_for(resident).max(room_limit)
        }
    } else {
        size_for(resident)
    };
    saturate(size)
}

fn round_up(value: u64, unit: u64) -> u64 {
    value.div_ceil(unit) * unit
}

fn saturate(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeviceId;

    #[test]
    fn launch_bounds_cap_any_register_count_asked_for_at_the_most_that_fits() {
        // `__launch_bounds__(256, 4)` on the H100: 4 blocks of 8 warps share 65,536 registers,
        // 2,048 a warp, 64 a thread; a launch asking for every register there is gets 64, and one
        // asking for 40 keeps its 40.
        let device = crate::device::h100();
        let bounds = crate::kernel::ir::LaunchBounds {
            max_threads_per_block: 256,
            min_blocks_per_multiprocessor: Some(4),
        };
        assert_eq!(
            launch_bounds_registers(&device, bounds, 128, u32::MAX),
            Ok(64)
        );
        assert_eq!(launch_bounds_registers(&device, bounds, 256, 65), Ok(64));
        assert_eq!(launch_bounds_registers(&device, bounds, 256, 40), Ok(40));
    }

    /// (active blocks per SM, limiter, [registers, shared memory, warps, blocks] limits)
    fn check(
        device: DeviceId,
        threads: u32,
        regs: u32,
        smem: u32,
        expected: (u32, Limiter, [u32; 4]),
    ) {
        let block = BlockResources {
            threads_per_block: threads,
            regs_per_thread: regs,
            smem_per_block: smem,
        };
        let report = calculate(&device.device(), block).expect("the launch fits");
        let found = (
            report.active_blocks_per_sm,
            report.limiter,
            [
                report.limit_registers,
                report.limit_shared_mem,
                report.limit_warps,
                report.limit_blocks,
            ],
        );
        assert_eq!(
            found, expected,
            "{device} {threads} threads, {regs} regs, {smem} B"
        );
    }

    #[test]
    fn g80_tile_8_runs_512_threads_limited_by_blocks() {
        // Seed 003: 8x8 tiles give 64-thread blocks; 8 blocks per SM make 512 threads.
        check(
            DeviceId::G80,
            64,
            10,
            512,
            (8, Limiter::Blocks, [10, 8, 12, 8]),
        );
    }

    #[test]
    fn g80_tile_16_runs_768_threads_limited_by_threads() {
        // Seed 003: 16x16 tiles give 256-thread blocks; 3 blocks fill the SM's 768 threads.
        check(
            DeviceId::G80,
            256,
            10,
            2048,
            (3, Limiter::Warps, [3, 8, 3, 8]),
        );
    }

    #[test]
    fn g80_tile_32_does_not_launch() {
        // Seed 003: 32x32 = 1024 threads per block, more than G80's 512.
        let block = BlockResources {
            threads_per_block: 1024,
            regs_per_thread: 10,
            smem_per_block: 8192,
        };
        assert_eq!(
            calculate(&DeviceId::G80.device(), block),
            Err(OccupancyError::TooManyThreads {
                threads: 1024,
                max: 512
            })
        );
    }

    #[test]
    fn h100_tiled_matmul_16_is_limited_by_warps_and_registers_alike() {
        // h100.json ncu record "mm_tiled T=16 PAD=0": 32 registers, 2 KB of tiles. The 8 resident
        // blocks need 24 KB with the reservations; the driver configures 64 KB, which holds 21.
        check(
            DeviceId::H100,
            256,
            32,
            2048,
            (8, Limiter::Warps, [8, 21, 8, 32]),
        );
    }

    #[test]
    fn h100_sixteen_registers_leave_room_for_sixteen_blocks_of_registers() {
        // adj_diff_naive: 16 registers x 32 lanes = 512 per warp, 32 warps per partition.
        check(
            DeviceId::H100,
            256,
            16,
            0,
            (8, Limiter::Warps, [16, 32, 8, 32]),
        );
    }

    #[test]
    fn h100_registers_round_up_to_the_allocation_unit_per_warp() {
        // 24 registers: 768 per warp, 21 warps per 16 K partition, 84 warps, 10 blocks of 8 warps.
        check(
            DeviceId::H100,
            256,
            24,
            8192,
            (8, Limiter::Warps, [10, 14, 8, 32]),
        );
        // 255 registers: 8160 rounds up to 8192 per warp, 2 per partition, 8 warps: one block.
        // The driver gives its reserved kilobyte room for four blocks: an 8 KB carveout.
        check(
            DeviceId::H100,
            256,
            255,
            0,
            (1, Limiter::Registers, [1, 8, 8, 32]),
        );
    }

    #[test]
    fn h100_shared_memory_counts_the_reserved_kilobyte() {
        // 32 KB + 1 KB reserved = 33 KB per block: 6 fit in 228 KB.
        check(
            DeviceId::H100,
            256,
            12,
            32768,
            (6, Limiter::SharedMem, [16, 6, 8, 32]),
        );
    }

    #[test]
    fn the_driver_carveout_holds_twice_the_resident_blocks_up_to_132_kb() {
        // The H100 alone-per-process measurements (`driver_carveout`), in KB for blocks of 256
        // threads (8 resident) with 0.5 to 16 KB of dynamic shared memory and 1 KB reserved.
        let h100 = DeviceId::H100.device();
        let carveout = |dynamic_kb: f64, threads: u32, resident: u32| {
            let block = (dynamic_kb * 1024.0) as u64 + 1024;
            driver_carveout(&h100, block, resident, threads, true) / 1024
        };
        assert_eq!(carveout(0.5, 256, 8), 32);
        assert_eq!(carveout(2.0, 256, 8), 64);
        assert_eq!(carveout(4.0, 256, 8), 100);
        // Room for 16 blocks would take 164 KB: 132 it is.
        assert_eq!(carveout(8.0, 256, 8), 132);
        assert_eq!(carveout(12.0, 256, 8), 132);
        // The 8 resident blocks alone need more than 132 KB.
        assert_eq!(carveout(16.0, 256, 8), 164);
        // 1,024 threads: room for the resident blocks only.
        assert_eq!(carveout(2.0, 1024, 2), 8);
        assert_eq!(carveout(4.0, 1024, 2), 16);
        // 48 KB: four fit in 196 KB as in 228.
        assert_eq!(carveout(48.0, 256, 8), 196);
        // No shared memory: room for four times the resident blocks' reserved kilobyte.
        assert_eq!(driver_carveout(&h100, 1024, 8, 256, false) / 1024, 32);
        assert_eq!(driver_carveout(&h100, 1024, 4, 512, false) / 1024, 16);
        // G80's 16 KB are not configurable.
        assert_eq!(
            driver_carveout(&DeviceId::G80.device(), 2048, 3, 256, true),
            16 * 1024
        );
    }

    #[test]
    fn small_blocks_hit_the_block_limit() {
        check(
            DeviceId::H100,
            32,
            16,
            0,
            (32, Limiter::Blocks, [128, 32, 64, 32]),
        );
    }

    #[test]
    fn gt200_registers_are_allocated_per_block_of_warp_pairs() {
        // 3 warps round up to 4 for registers: 4 x 32 x 16 = 2048 per block, 8 fit in 16 K.
        check(
            DeviceId::Gt200,
            96,
            16,
            0,
            (8, Limiter::Blocks, [8, 8, 10, 8]),
        );
        // 33 registers x 64 lanes = 2112, rounded up to 2560: 6 blocks.
        check(
            DeviceId::Gt200,
            64,
            33,
            0,
            (6, Limiter::Registers, [6, 8, 16, 8]),
        );
    }

    #[test]
    fn impossible_launches_are_errors() {
        let h100 = DeviceId::H100.device();
        let with = |threads, regs, smem| BlockResources {
            threads_per_block: threads,
            regs_per_thread: regs,
            smem_per_block: smem,
        };
        assert_eq!(
            calculate(&h100, with(0, 32, 0)),
            Err(OccupancyError::EmptyBlock)
        );
        assert_eq!(
            calculate(&h100, with(2000, 32, 0)),
            Err(OccupancyError::TooManyThreads {
                threads: 2000,
                max: 1024
            })
        );
        assert_eq!(
            calculate(&h100, with(256, 300, 0)),
            Err(OccupancyError::TooManyRegistersPerThread {
                regs: 300,
                max: 255
            })
        );
        assert_eq!(
            calculate(&h100, with(1024, 128, 0)),
            Err(OccupancyError::TooManyRegistersPerBlock {
                regs: 131072,
                max: 65536
            })
        );
        assert_eq!(
            calculate(&h100, with(256, 32, 300_000)),
            Err(OccupancyError::TooMuchSharedMemory {
                bytes: 300_000,
                max: 232_448
            })
        );
    }

    #[test]
    fn an_impossible_launch_reads_as_one_line() {
        let check = |error: OccupancyError, expected: &str| assert_eq!(error.to_string(), expected);
        check(
            OccupancyError::TooManyThreads {
                threads: 2000,
                max: 1024,
            },
            "2000 threads per block is more than this device's 1024: the kernel does not launch",
        );
        check(
            OccupancyError::TooMuchSharedMemory {
                bytes: 300_000,
                max: 232_448,
            },
            "the block needs 300000 bytes of shared memory, more than the 232448 one block may have",
        );
    }
}
