//! Kernels run: the kernel language (`memplay-lang`: preprocessing, parsing, checking, lowering
//! to `ir`) and the interpreter that runs its IR warp by warp.
//!
//! The language keeps its paths here (`memplay_sim::kernel::ir`, `kernel::compile`, ...). This
//! crate adds:
//!
//! - `interp`: a block runs warp by warp, lanes in lockstep with active masks, and each load, store
//!   and atomic becomes a `MemRecord` holding a `WarpAccess` (CUDA C++ Programming Guide, "SIMT
//!   Architecture");
//! - `memory`: the buffers, arrays and fills a launch's kernel reads and writes.
//!
//! Every error is a `Diagnostic` with a line and column; no input makes this module panic.
//!
//! ```
//! use memplay_sim::kernel::{compile, run, BlockSelection, Dim3, Launch, RunConfig, Value};
//! let program = compile("__global__ void add_one(int* a) { a[threadIdx.x] += 1; }", &[]).unwrap();
//! let launch = Launch {
//!     grid: Dim3::new(1, 1, 1),
//!     block: Dim3::new(32, 1, 1),
//!     dyn_smem: 0,
//!     args: vec![],
//!     buffers: vec![("a".to_string(), 128)],
//!     fills: vec![],
//!     pointers: vec![],
//! };
//! let config = RunConfig { step_budget: 10_000, blocks: BlockSelection::All, seed: 1 };
//! let runs = run(&program, "add_one", &launch, &config).unwrap();
//! assert_eq!(runs[0].records.len(), 2); // one warp-level load and one store
//! ```

// The language itself (reading, checking, lowering, and the analyses of the IR) is the
// `memplay-lang` crate; its modules keep their paths here, `memplay_sim::kernel::ir` and so on.
pub use memplay_lang::{
    ast, block_shift, compile, constant_expression, constant_expressions,
    constant_float_expressions, ir, issue, launches, lexer, limits, parse, parser, preprocess,
    printf_format, sema, span, templates, uniformity,
};

pub mod interp;
pub mod memory;

pub(crate) use interp::RecordSink;
pub use interp::{
    move_lanes, run, BlockRun, BlockSelection, BlockStats, Dim3, IterationFences,
    IterationsRepeated, Launch, LoadOrder, MemRecord, MovedRecord, RepeatNeed, Repeated,
    RepeatsNeeded, RunConfig, Simulation, SiteMove, SkipWindow, Value, WarpsAlike,
};
pub use sema::Program;
pub use span::{Diagnostic, DiagnosticKind, MemoryObject, Span};

#[cfg(test)]
mod statement_tests;
#[cfg(test)]
mod tests;
