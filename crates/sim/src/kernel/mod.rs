//! The kernel language: a CUDA C subset, parsed, checked and run warp by warp.
//!
//! The lecture kernels (seeds 000-004 and `tests/reference/kernels/*.cu`) are written in a small
//! part of CUDA C++: `__global__` kernels over `threadIdx`/`blockIdx`, `__shared__` tiles,
//! `__syncthreads()`, atomics, `#define`d tile sizes. This module runs such kernels so that the
//! rest of the simulator can see every warp-level memory access they make:
//!
//! - `preprocess` + `lexer`: source to tokens, with `#define`/`#ifndef` and `-D` overrides;
//! - `parser`: tokens to the syntax tree of `ast`;
//! - `sema`: names, types and C conversions checked, lowered to the `ir` the interpreter runs;
//! - `issue`: what nvcc makes of it: each loop's unrolling and the SASS instructions of each op;
//! - `interp`: a block runs warp by warp, lanes in lockstep with active masks, and each load, store
//!   and atomic becomes a `MemRecord` holding a `WarpAccess` (CUDA C++ Programming Guide, "SIMT
//!   Architecture").
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
//! };
//! let config = RunConfig { step_budget: 10_000, blocks: BlockSelection::All, seed: 1 };
//! let runs = run(&program, "add_one", &launch, &config).unwrap();
//! assert_eq!(runs[0].records.len(), 2); // one warp-level load and one store
//! ```

pub mod ast;
pub mod interp;
pub mod ir;
pub mod issue;
pub mod lexer;
pub mod limits;
pub mod memory;
pub mod parser;
pub mod preprocess;
pub mod sema;
pub mod span;
pub mod uniformity;

pub use interp::{
    run, BlockRun, BlockSelection, BlockStats, Dim3, Launch, MemRecord, RecordSink, RunConfig,
    Simulation, Value,
};
pub use sema::Program;
pub use span::{Diagnostic, Span};

/// Preprocesses and parses `source` (`defines` are `-D NAME=VALUE` overrides).
pub fn parse(
    source: &str,
    defines: &[(String, String)],
) -> Result<ast::TranslationUnit, Diagnostic> {
    let tokens = lexer::lex(source)?;
    let tokens = preprocess::preprocess(tokens, defines)?;
    parser::parse(&tokens)
}

/// Preprocesses, parses and checks `source`: the program is ready to run.
pub fn compile(source: &str, defines: &[(String, String)]) -> Result<Program, Diagnostic> {
    sema::check(&parse(source, defines)?)
}

#[cfg(test)]
mod tests;
