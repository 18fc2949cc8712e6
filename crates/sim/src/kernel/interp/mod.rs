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
//! The interpreter is split along its seams, each module naming only those before it: `lanes`
//! (arithmetic on the 32 lanes of a register), `registers` (a warp's registers, and which hold
//! one value in every lane, computed once), `launch` (the launch, its objects and the records), `sink` (what
//! takes the records, and the contract a sink that takes copies at once must keep), `reuse` and `leader_records` (what a block's run keeps for reuse),
//! `machine` (a warp's control flow and expressions; `output`, its `printf`, clock and `assert`), `access` (memory accesses: addresses,
//! bounds, records), `simulation` (a launch laid out in memory, and the block loop), and on top
//! `warps` (the warps of a block shown alike) and `loops` (the iterations of a loop shown alike,
//! and the exactness contract of both), which add their methods to `Machine` and `Simulation`.

mod access;
mod block_vote;
mod lanes;
mod launch;
mod leader_records;
mod loops;
mod machine;
mod output;
mod registers;
mod reuse;
mod sanitize;
mod simulation;
mod sink;
mod warps;
mod xorwow;

pub use launch::{
    move_lanes, parameter_leaves, step_budget_message, BlockRun, BlockSelection, BlockStats, Dim3,
    IterationFences, Launch, LoadOrder, MemRecord, MovedRecord, RepeatNeed, Repeated,
    RepeatsNeeded, RunConfig, SiteMove, SkipWindow, Value, WarpsAlike, GLOBAL_BASE,
    MAX_LOCAL_BYTES, MAX_SHARED_BYTES,
};
pub(crate) use loops::gcd;
pub use simulation::{run, Simulation};
pub use sink::IterationsRepeated;
pub(crate) use sink::RecordSink;
