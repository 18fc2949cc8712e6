//! The interpreter: runs a kernel block by block, warp by warp, lanes in lockstep.
//!
//! The execution model follows the CUDA C++ Programming Guide, "SIMT Architecture" and "Hardware
//! Multithreading": a block's threads are split into warps of 32 consecutive linear thread ids
//! (`tid = x + y*bx + z*bx*by`); a warp executes one instruction at a time for all of its active
//! lanes, and lanes that take a different branch are masked off until the paths rejoin. Each warp
//! runs until it reaches `__syncthreads()` or finishes, then the next warp runs; the barrier
//! releases when every warp that has not exited is waiting at it.
//!
//! `__syncthreads()` reached by only some lanes of a warp is an error (the Programming Guide calls
//! it undefined: "allowed in conditional code but only if the conditional evaluates identically
//! across the entire thread block", seed 002 "Shared Memory: Synchronization"). A warp whose threads
//! have all returned is not waited for: real hardware counts exited warps as arrived, and lesson
//! code such as `if (i >= n) return;` before a barrier in the last block relies on it.
//!
//! Every warp-level load, store or atomic to global, shared, local or constant memory becomes one
//! `MemRecord` with the byte address of each active lane; registers make no records. Per-thread
//! arrays that live in local memory use the hardware's interleaved layout, "organized such that
//! consecutive 32-bit words are accessed by consecutive thread IDs" (CUDA C++ Programming Guide,
//! "Device Memory Accesses", Local Memory): 32-bit word `w` of thread `t` of a block of `T`
//! threads is at byte `(w * T + t) * 4` of the block's local memory.
//!
//! The interpreter is split along its seams: `launch` (the launch, its memory layout and the
//! block loop), `machine` (a warp's control flow and expressions), `lanes` (arithmetic on the
//! 32 lanes of a register), `registers` (a warp's registers, and which hold one value in every
//! lane, computed once), `access` (memory accesses: addresses, bounds, records), `warps` (the
//! warps of a block shown alike), `loops` (the iterations of a loop shown alike) and `sink`
//! (where the records go, and the contract a sink that takes copies at once must keep).

use crate::access::{AccessKind, AccessWidth, Space, WarpAccess, WARP_LANES};
use crate::kernel::ast::{Scalar, Type};
use crate::kernel::ir::*;
use crate::kernel::limits::MAX_CALL_DEPTH;
use crate::kernel::memory::{
    address_add, decode, encode, pointer, pointer_add, pointer_address, pointer_object, Fill,
    PagedBuffer, ADDRESS_MASK,
};
use crate::kernel::sema::Program;
use crate::kernel::span::{Diagnostic, Span};
use serde::{Deserialize, Serialize};
use std::fmt;

type Lanes = [u64; WARP_LANES];
const FULL: u32 = u32::MAX;

mod access;
mod lanes;
mod launch;
mod loops;
mod machine;
mod registers;
mod sink;
mod warps;

use access::*;
use lanes::*;
pub use launch::*;
use loops::*;
use machine::*;
use registers::*;
pub use sink::IterationsRepeated;
pub(crate) use sink::RecordSink;
pub use warps::move_lanes;
use warps::*;
