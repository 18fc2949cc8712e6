//! The roofline model: attainable performance from arithmetic intensity and a device's ceilings.
//!
//! Seed 004 ("Roofline Analysis"): performance is capped by the compute roof (the FP32 peak) and by
//! the memory slope (DRAM bandwidth x arithmetic intensity); the ridge point is where they meet.
//! Seeds 000 and 003 work the same bound by hand: the naive matmul moves 8 bytes per multiply-add
//! (0.25 FLOP/B), so G80's 86.4 GB/s caps it at 21.6 GFLOP/s and GTX 260's 112 GB/s at 28 GFLOP/s;
//! a TILE-wide tile reuses every loaded value TILE times (seed 004: 16x16 tiles give 4 FLOP/B, and
//! the A100's 1555 GB/s then allows 6220 GFLOP/s).
//!
//! Two rooflines per device: the datasheet's, and where a measurement exists (the `"ceiling"` rows
//! of `tests/reference/h100.json`, carried by the H100 preset) the achievable one.
//!
//! **The hierarchical roofline** (`hierarchical`), as Nsight Compute draws it (Kernel Profiling
//! Guide, "Roofline Charts"; Yang, Kurth and Williams, "Hierarchical Roofline Analysis for GPUs",
//! 2020): one slope per level of the memory hierarchy, and the kernel's intensity at each level,
//! its FLOPs over the bytes that level moved for it. Reuse moves the point right from one level to
//! the next: the tiled matmul at TILE = 16 does 4 FLOP per byte it asks of global memory (every
//! request passes the L1 and reaches the L2: the lecture's count), but most of those bytes hit in
//! the L2, so at DRAM it does some forty times more. The level whose slope lies lowest at the
//! kernel's intensity there binds. The slopes are the bandwidths the timing model charges, from
//! the same per-device constants (`DeviceTiming`): the L1 and shared memory one 128-byte line or
//! wavefront per clock per SM, the L2 its bytes per clock, DRAM its measured or datasheet
//! bandwidth. cc 1.x has no cache for global memory: there the first level is shared memory
//! alone and global requests go straight to DRAM.

use crate::coalescing::SECTOR_BYTES;
use crate::device::Device;
use crate::simulate::SimulationReport;
use crate::timing::Prediction;
use serde::{Deserialize, Serialize};

/// One pair of ceilings: a compute roof and a bandwidth slope.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Roofline {
    pub peak_gflops: f64,
    pub bandwidth_gbps: f64,
}

impl Roofline {
    /// The arithmetic intensity (FLOP per byte) where the slope meets the roof.
    pub fn ridge_intensity(&self) -> f64 {
        self.peak_gflops / self.bandwidth_gbps
    }

    /// min(peak, bandwidth x intensity), in GFLOP/s.
    pub fn attainable_gflops(&self, intensity: f64) -> f64 {
        self.peak_gflops.min(self.bandwidth_gbps * intensity)
    }
}

/// A device's ceilings: from the datasheet, and from measurements where they exist.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ceilings {
    pub theoretical: Roofline,
    pub achievable: Option<Roofline>,
}

impl Ceilings {
    /// The tighter, measured roofline where one is known, else the datasheet's.
    pub fn best(&self) -> Roofline {
        self.achievable.unwrap_or(self.theoretical)
    }
}

pub fn ceilings(device: &Device) -> Ceilings {
    let theoretical = Roofline {
        peak_gflops: device.fp32_peak_gflops,
        bandwidth_gbps: device.dram_bandwidth_gbps,
    };
    let achievable = match (device.fp32_achievable_gflops, device.dram_achievable_gbps) {
        (None, None) => None,
        (compute, bandwidth) => Some(Roofline {
            peak_gflops: compute.unwrap_or(theoretical.peak_gflops),
            bandwidth_gbps: bandwidth.unwrap_or(theoretical.bandwidth_gbps),
        }),
    };
    Ceilings {
        theoretical,
        achievable,
    }
}

/// A level of the memory hierarchy with a slope of its own in the hierarchical roofline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The SM's L1 cache and shared memory, one data pipe (global and local requests through
    /// the L1, shared-memory wavefronts).
    L1Shared,
    L2,
    Dram,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::L1Shared, Level::L2, Level::Dram];

    pub fn label(self) -> &'static str {
        match self {
            Level::L1Shared => "L1 / shared",
            Level::L2 => "L2",
            Level::Dram => "DRAM",
        }
    }
}

/// One level's slope and the kernel's point against it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelPoint {
    pub level: Level,
    /// The level's bandwidth over the whole GPU, in GB/s.
    pub bandwidth_gbps: f64,
    /// Bytes the level moved for the launch.
    pub bytes: f64,
    /// FP32 operations per byte at this level; `None` when the level moved no byte.
    pub intensity: Option<f64>,
    /// What this level alone allows: `bandwidth x intensity`, in GFLOP/s (infinite without bytes).
    pub bound_gflops: f64,
}

/// The kernel against every level of the hierarchy and the FP32 roof.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hierarchical {
    /// The levels the device has, from the SM outwards.
    pub levels: Vec<LevelPoint>,
    pub peak_gflops: f64,
    /// The level whose slope lies lowest at the kernel's intensity there; `None` when the FP32
    /// roof is lower than every slope (the kernel is compute-bound).
    pub binding: Option<Level>,
    /// The kernel's simulated throughput, in GFLOP/s.
    pub gflops: f64,
}

/// The bandwidth of each level `device` has, in GB/s, from the timing model's constants.
pub(crate) fn level_bandwidths(device: &Device) -> Vec<(Level, f64)> {
    let t = &device.timing;
    let clock_ghz = f64::from(device.sm_clock_mhz) / 1e3;
    let sms = f64::from(device.n_sms);
    // One wavefront of `n_banks` words (or one 128-byte line) per `shared_clocks_per_wavefront`.
    let wavefront_bytes = f64::from(device.n_banks * device.bank_width_bytes);
    let l1 = wavefront_bytes / t.shared_clocks_per_wavefront.max(1e-9) * sms * clock_ghz;
    let mut levels = vec![(Level::L1Shared, l1)];
    if device.l2_bytes > 0 && t.l2_bytes_per_clock > 0 {
        levels.push((Level::L2, f64::from(t.l2_bytes_per_clock) * clock_ghz));
    }
    levels.push((Level::Dram, device.best_dram_gbps()));
    levels
}

/// The hierarchical roofline of a simulated launch: the bytes each level moved (the L1 and shared
/// memory: the sectors of global and local requests and 128 bytes per shared wavefront; the L2:
/// the sectors the L1 fetched and the stores and atomics it passed on; DRAM: what the timing
/// model's cache model sends there) and the FLOPs the launch did.
pub fn hierarchical(report: &SimulationReport, prediction: &Prediction) -> Hierarchical {
    let device = &report.device;
    let c = &report.counters;
    let m = &report.memory;
    let sector = SECTOR_BYTES as f64;
    let cached = device.l2_bytes > 0;
    let global_sectors = c.global_ld_sectors + c.global_st_sectors + c.global_atomic_sectors;
    let shared_bytes = (c.shared_ld_wavefronts + c.shared_st_wavefronts)
        * f64::from(device.n_banks * device.bank_width_bytes);
    let bytes_at = |level: Level| match level {
        Level::L1Shared if cached => {
            (global_sectors + c.local_ld_sectors + c.local_st_sectors) * sector + shared_bytes
        }
        Level::L1Shared => shared_bytes,
        Level::L2 => {
            (m.l1_fill_sectors + c.global_st_sectors + c.global_atomic_sectors + m.local_sectors)
                * sector
        }
        Level::Dram => prediction.dram_bytes,
    };
    let flops = c.fp32_flops;
    let levels: Vec<LevelPoint> = level_bandwidths(device)
        .into_iter()
        .map(|(level, bandwidth_gbps)| {
            let bytes = bytes_at(level);
            let intensity = (bytes > 0.0).then(|| flops / bytes);
            LevelPoint {
                level,
                bandwidth_gbps,
                bytes,
                intensity,
                bound_gflops: intensity.map_or(f64::INFINITY, |i| bandwidth_gbps * i),
            }
        })
        .collect();
    let peak_gflops = device.best_fp32_gflops();
    let lowest = levels
        .iter()
        .filter(|point| point.intensity.is_some())
        .min_by(|a, b| a.bound_gflops.total_cmp(&b.bound_gflops));
    Hierarchical {
        binding: lowest
            .filter(|point| point.bound_gflops < peak_gflops)
            .map(|point| point.level),
        levels,
        peak_gflops,
        gflops: prediction.gflops,
    }
}

/// FLOP per byte of DRAM traffic of the naive matmul: one multiply-add (2 FLOP) per two 4-byte
/// loads (seed 000, "How will this perform?": 4 B/op).
pub const NAIVE_MATMUL_INTENSITY: f64 = 0.25;

/// FLOP per byte of the tiled matmul: each value loaded into shared memory is used TILE times
/// (seed 003: "we reduce the accesses to the global memory by a factor of 16").
pub fn tiled_matmul_intensity(tile: u32) -> f64 {
    NAIVE_MATMUL_INTENSITY * f64::from(tile.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeviceId;

    /// Attainable GFLOP/s of `device` under its datasheet roofline at `intensity`.
    fn check(device: DeviceId, intensity: f64, expected_gflops: f64) {
        let found = ceilings(&device.device())
            .theoretical
            .attainable_gflops(intensity);
        assert!(
            (found - expected_gflops).abs() < 0.05,
            "{device} at {intensity} FLOP/B: {found} GFLOP/s, expected {expected_gflops}"
        );
    }

    #[test]
    fn g80_naive_matmul_is_bound_at_21_6_gflops() {
        check(DeviceId::G80, NAIVE_MATMUL_INTENSITY, 21.6);
    }

    #[test]
    fn gtx_260_naive_matmul_is_bound_at_28_gflops() {
        check(DeviceId::Gt200, NAIVE_MATMUL_INTENSITY, 28.0);
    }

    #[test]
    fn a100_sixteen_wide_tiles_allow_6220_gflops() {
        check(DeviceId::A100, tiled_matmul_intensity(16), 6220.0);
    }

    #[test]
    fn g80_sixteen_wide_tiles_reach_just_below_its_peak() {
        // Seed 003 writes "(86.4/4)*16 = 347.6 GFLOPS"; the product is 345.6, just below the
        // 346.5 GFLOP/s peak, so 16-wide tiles sit a hair left of G80's ridge.
        check(DeviceId::G80, tiled_matmul_intensity(16), 345.6);
        let g80 = ceilings(&DeviceId::G80.device()).theoretical;
        assert!(tiled_matmul_intensity(16) < g80.ridge_intensity());
        assert!(tiled_matmul_intensity(32) > g80.ridge_intensity());
    }

    #[test]
    fn the_ridge_is_where_slope_meets_roof() {
        let a100 = ceilings(&DeviceId::A100.device()).theoretical;
        // 19,500 GFLOP/s over 1555 GB/s: 12.5 FLOP/B; 16-wide tiles (4 FLOP/B) stay memory-bound.
        assert!((a100.ridge_intensity() - 12.54).abs() < 0.01);
        assert!(tiled_matmul_intensity(16) < a100.ridge_intensity());
        assert!(tiled_matmul_intensity(64) > a100.ridge_intensity());
    }

    #[test]
    fn only_the_h100_has_measured_ceilings() {
        for id in DeviceId::ALL {
            let found = ceilings(&id.device());
            assert_eq!(found.achievable.is_some(), id == DeviceId::H100, "{id}");
            let best = found.best();
            assert!(best.peak_gflops <= found.theoretical.peak_gflops, "{id}");
            assert!(
                best.bandwidth_gbps <= found.theoretical.bandwidth_gbps,
                "{id}"
            );
        }
    }

    /// The hierarchical roofline of the lecture matmul at n = 1024 on `device`.
    fn matmul_levels(kernel: &str, tile: u32, device: DeviceId) -> Hierarchical {
        use crate::lesson_kernels::{matmul_launch, MATMUL};
        use crate::simulate::simulate;
        let mut input = matmul_launch(MATMUL, kernel, 1024, tile, device.device());
        input.defines.push(("PAD".to_string(), "0".to_string()));
        let report = simulate(&input).expect("the matmul runs");
        let prediction = crate::timing::predict(&report);
        hierarchical(&report, &prediction)
    }

    fn intensity(h: &Hierarchical, level: Level) -> Option<f64> {
        h.levels
            .iter()
            .find(|p| p.level == level)
            .and_then(|p| p.intensity)
    }

    #[test]
    fn the_tiled_matmul_meets_the_l2_at_the_lectures_four_flop_per_byte_on_the_h100() {
        // Seed 003's count, 2 FLOP per 2 loads of 4 bytes times TILE = 16 reuses: 4 FLOP/B. Every
        // global request of the tiles reaches the L2 (a block loads each tile once), so that is
        // the kernel's intensity against the L2; the L2 keeps the matrices (12 MB) between
        // blocks and between timed runs, so DRAM sees almost nothing.
        let h100 = matmul_levels("mm_tiled", 16, DeviceId::H100);
        let at_l2 = intensity(&h100, Level::L2).expect("the L2 moved bytes");
        assert!((at_l2 - 4.0).abs() < 0.1, "{at_l2}");
        assert!(intensity(&h100, Level::Dram).is_none_or(|at_dram| at_dram > 40.0 * at_l2));
        // The shared-memory wavefronts of the inner product (two per multiply-add, 128 bytes
        // each) move the most bytes: the L1 / shared slope binds, as the timing model's
        // bottleneck (shared-memory wavefronts) says.
        assert_eq!(h100.binding, Some(Level::L1Shared));
    }

    #[test]
    fn the_naive_matmul_asks_a_quarter_flop_per_byte_and_its_sectors_carry_half() {
        // Seed 000: 8 bytes per multiply-add, 0.25 FLOP/B requested. The L1 moves whole 32-byte
        // sectors, and a warp of a 16 x 16 block is two rows of 16 threads: its `a[row * n + k]`
        // is two words in two sectors, its `b[k * n + col]` 16 words in two sectors, 128 bytes
        // for 64 FLOP: 0.5 FLOP/B at the L1, and more at the L2, which sees each sector once
        // per block.
        let naive = matmul_levels("mm_naive", 16, DeviceId::H100);
        let at_l1 = intensity(&naive, Level::L1Shared).expect("the L1 moved bytes");
        assert!((at_l1 - 0.5).abs() < 0.01, "{at_l1}");
        assert!(intensity(&naive, Level::L2).expect("the L2 moved bytes") > at_l1);
    }

    #[test]
    fn cc_1_x_has_no_l2_level() {
        let gt200 = matmul_levels("mm_tiled", 16, DeviceId::Gt200);
        let levels: Vec<Level> = gt200.levels.iter().map(|p| p.level).collect();
        assert_eq!(levels, vec![Level::L1Shared, Level::Dram]);
        // Its tiles' global loads go to DRAM at the lecture's 4 FLOP/B.
        let at_dram = intensity(&gt200, Level::Dram).expect("DRAM moved bytes");
        assert!((at_dram - 4.0).abs() < 0.5, "{at_dram}");
    }
}
