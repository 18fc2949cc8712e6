//! The lecture kernels: the files of `www/kernels/`, which are the kernels measured on the H100
//! (`tests/reference/kernels/`, checked to be identical by `tests/reference.rs`), included at
//! compile time. The page's lessons and the unit tests run them; nothing reads a file at run time.
//! `BOUNDARY` is the one exception to "measured": seed 004's tiled matmul with boundary checks,
//! written for the boundary-checks lesson, and `DIVERGENCE`, the divergence lesson's loop, the
//! loop of probe group I (`tests/reference/probes/probe.cu`, `p_branch`) with its split as an
//! argument, and `SWIZZLE`, the shared-tile transpose with an XOR swizzle in place of padding.

pub const ADJ_DIFF: &str = include_str!("../../../www/kernels/adj_diff.cu");
pub const ATOMICS: &str = include_str!("../../../www/kernels/atomics.cu");
pub const BOUNDARY: &str = include_str!("../../../www/kernels/boundary.cu");
pub const BANKS: &str = include_str!("../../../www/kernels/banks.cu");
pub const DIVERGENCE: &str = include_str!("../../../www/kernels/divergence.cu");
pub const COALESCING: &str = include_str!("../../../www/kernels/coalescing.cu");
pub const MATMUL: &str = include_str!("../../../www/kernels/matmul.cu");
pub const SWIZZLE: &str = include_str!("../../../www/kernels/swizzle.cu");
pub const TRANSPOSE: &str = include_str!("../../../www/kernels/transpose.cu");
