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

use crate::device::Device;
use serde::Serialize;

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

    /// Whether a kernel of this intensity sits left of the ridge (limited by memory).
    pub fn is_memory_bound(&self, intensity: f64) -> bool {
        intensity < self.ridge_intensity()
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
        assert!(g80.is_memory_bound(tiled_matmul_intensity(16)));
        assert!(!g80.is_memory_bound(tiled_matmul_intensity(32)));
    }

    #[test]
    fn the_ridge_is_where_slope_meets_roof() {
        let a100 = ceilings(&DeviceId::A100.device()).theoretical;
        // 19,500 GFLOP/s over 1555 GB/s: 12.5 FLOP/B; 16-wide tiles (4 FLOP/B) stay memory-bound.
        assert!((a100.ridge_intensity() - 12.54).abs() < 0.01);
        assert!(a100.is_memory_bound(tiled_matmul_intensity(16)));
        assert!(!a100.is_memory_bound(tiled_matmul_intensity(64)));
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
}
