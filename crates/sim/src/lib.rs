//! memplay-sim: a pure, deterministic model of GPU memory for teaching.
//!
//! It knows device presets, how a warp's shared-memory access falls into banks, how a warp's
//! global access becomes sectors and transactions, how many blocks fit on an SM, and where a kernel
//! sits on the roofline; `simulate` runs a CUDA C kernel's launch and counts what Nsight Compute
//! would. It does no IO, has no randomness without an explicit seed, and knows
//! nothing of the DOM: the command line and the web page are thin front ends over it.

pub mod access;
pub mod banks;
pub mod capability;
pub mod coalescing;
pub mod compile_effects;
pub mod counters;
pub mod device;
pub mod fill;
pub mod hashing;
pub mod kernel;
pub mod lesson_kernels;
pub mod memory_spaces;
pub mod occupancy;
pub mod patterns;
pub mod pitch;
pub mod pointer_argument;
pub mod printf_output;
pub mod profile;
pub mod replay;
pub mod roofline;
pub mod sampling;
pub mod sanitizer;
pub mod simulate;
pub mod timing;
pub mod trace;
pub mod transfer;

/// Decimal numbers and short sorts, shared with the kernel language, keep their paths here.
pub use memplay_lang::{decimal, sorting};

pub use access::{AccessKind, AccessWidth, Space, WarpAccess, WARP_LANES};
pub use device::{Device, DeviceId};
pub use fill::Fill;
pub use simulate::{simulate, SimulationError, SimulationInput, SimulationReport};
