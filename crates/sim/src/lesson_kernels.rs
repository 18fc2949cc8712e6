//! The lecture kernels: the files of `www/kernels/`, which are the kernels measured on the H100
//! (`tests/reference/kernels/`, checked to be identical by `tests/reference.rs`), included at
//! compile time. The page's lessons and the unit tests run them; nothing reads a file at run time.
//! `BOUNDARY` is the one exception to "measured": seed 004's tiled matmul with boundary checks,
//! written for the boundary-checks lesson, and `DIVERGENCE`, the divergence lesson's loop, the
//! loop of probe group I (`tests/reference/probes/probe.cu`, `p_branch`) with its split as an
//! argument, and `SWIZZLE`, the shared-tile transpose with an XOR swizzle in place of padding.
//!
//! `matmul_launch` builds the launch of the lecture's square matmul, which the tests, the
//! benchmarks and the wasm timing all run at many sizes.

use crate::device::Device;
use crate::kernel::{Dim3, Value};
use crate::simulate::SimulationInput;

pub const ADJ_DIFF: &str = include_str!("../../../www/kernels/adj_diff.cu");
pub const ATOMICS: &str = include_str!("../../../www/kernels/atomics.cu");
pub const BOUNDARY: &str = include_str!("../../../www/kernels/boundary.cu");
pub const BANKS: &str = include_str!("../../../www/kernels/banks.cu");
pub const DIVERGENCE: &str = include_str!("../../../www/kernels/divergence.cu");
pub const COALESCING: &str = include_str!("../../../www/kernels/coalescing.cu");
pub const MATMUL: &str = include_str!("../../../www/kernels/matmul.cu");
pub const SWIZZLE: &str = include_str!("../../../www/kernels/swizzle.cu");
pub const TRANSPOSE: &str = include_str!("../../../www/kernels/transpose.cu");

/// The lecture's square matmul: `kernel` of `source` (`mm_naive` or `mm_tiled` of `MATMUL`,
/// `mm_tiled_guarded` of `BOUNDARY`) on `device`, multiplying `n` x `n` matrices of floats `a`
/// and `b` into `c`, with `TILE_WIDTH` defined as `tile` and blocks of `tile` x `tile` threads,
/// as many as cover the matrices. Everything else is `SimulationInput::new`'s; a caller sets
/// what its case needs on top (`PAD`, the registers, a trace, the sampling).
pub fn matmul_launch(
    source: &str,
    kernel: &str,
    n: u32,
    tile: u32,
    device: Device,
) -> SimulationInput {
    let mut input = SimulationInput::new(source, kernel, device);
    input.defines = vec![("TILE_WIDTH".to_string(), tile.to_string())];
    let blocks = n.div_ceil(tile.max(1));
    input.grid = Dim3::new(blocks, blocks, 1);
    input.block = Dim3::new(tile, tile, 1);
    input.args = vec![("n".to_string(), Value::Int(i64::from(n)))];
    let bytes = 4 * u64::from(n) * u64::from(n);
    input.buffers = ["a", "b", "c"]
        .iter()
        .map(|name| (name.to_string(), bytes))
        .collect();
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::h100;
    use crate::simulate::simulate;

    #[test]
    fn a_matmul_launch_covers_matrices_that_are_no_multiple_of_the_tile() {
        let input = matmul_launch(BOUNDARY, "mm_tiled_guarded", 1000, 16, h100());
        assert_eq!(input.grid, Dim3::new(63, 63, 1));
        assert_eq!(input.block, Dim3::new(16, 16, 1));
        assert_eq!(input.buffers.len(), 3);
        assert!(input.buffers.iter().all(|(_, bytes)| *bytes == 4_000_000));
    }

    #[test]
    fn every_lecture_matmul_kernel_simulates_from_its_launch() {
        for (source, kernel) in [
            (MATMUL, "mm_naive"),
            (MATMUL, "mm_tiled"),
            (BOUNDARY, "mm_tiled_guarded"),
        ] {
            let report = simulate(&matmul_launch(source, kernel, 48, 16, h100()));
            assert!(report.is_ok(), "{kernel}: {:?}", report.err());
        }
    }
}
