//! What a launch to simulate is: plain data, as a user types it on the page or a reference
//! measurement's `launch_spec` says, and the defaults a front end starts from.
//!
//! Nothing here runs: `simulate` (the parent module) reads it. The one premise is that a launch
//! file written before a field existed still reads, so the fields added later default.

use crate::compile_effects::CompileEffects;
use crate::device::Device;
use crate::fill::Fill;
use crate::kernel::{Dim3, Value};
use crate::pointer_argument::PointerArgument;
use crate::sanitizer::SanitizerConfig;
use crate::trace::TraceRequest;
use serde::{Deserialize, Serialize};

/// The default step budget, for the whole simulation, the same in the page and the CLI (a step
/// is a statement or expression node of one warp, and one per active lane of a memory access).
/// The largest launches the page makes, the matmuls with 32x32 tiles at n = 1024, take 26.9
/// million steps (`mm_naive`; `mm_tiled` 26.2); the n = 2048 reference launches take up to 54
/// million and pass a larger budget (`--budget`). A step costs 8 to 65 ns natively, depending on
/// the kernel, so at this budget an endless loop stops within 0.5 s (arithmetic) to 2.5 s (the
/// slowest kernel the fuzz target found: chains of conversions, shared atomics and cc 1.x
/// coalescing on the GT200).
pub const DEFAULT_STEP_BUDGET: u64 = 40_000_000;

/// Which blocks of the grid are run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSampling {
    /// One block per edge class, scaled to the grid (`sampling::classes`); the classes whose
    /// blocks `kernel::block_shift` shows to do another run block's work at shifted addresses
    /// reuse that run instead of running their own.
    #[default]
    EdgeClasses,
    /// One block per edge class, each run, even where a run could be reused: what
    /// `EdgeClasses` must equal to the last digit.
    EdgeClassesEachRun,
    /// Every block; exact for any kernel, slow for large grids.
    All,
}

/// Whether a launch may reuse runs it has shown alike, or must run every warp and iteration of
/// each block it runs (`SimulationInput::reuse`; `plan` decides from it what is reused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reuse {
    /// Reuse every run a proof shows alike: the records are those of a full run, so the
    /// counters are too, with fewer steps.
    #[default]
    Exact,
    /// Reuse nothing: every block the sampling names, and every warp and loop iteration of it,
    /// runs.
    None,
}

/// One launch to simulate. Plain data: every field is what a user types on the page or what the
/// `launch_spec` of a reference measurement says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulationInput {
    /// The CUDA C source, with one or more kernels.
    pub source: String,
    /// The name of the `__global__` function to launch.
    pub kernel: String,
    /// `-D NAME=VALUE` overrides of the source's `#define`s.
    pub defines: Vec<(String, String)>,
    pub grid: Dim3,
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes (the third launch parameter).
    pub dyn_smem: u32,
    /// Registers per thread (what nvcc chose; 0 when unknown, which does not limit occupancy).
    pub regs: u32,
    /// Values of the scalar parameters, by name.
    pub args: Vec<(String, Value)>,
    /// Bytes of each buffer, by name: a pointer parameter's buffer is named after it, unless
    /// `pointers` names another.
    pub buffers: Vec<(String, u64)>,
    /// The pointer parameters that point into a buffer named otherwise, or past its start
    /// (`pointer_argument`: `in = d_in + 3`). Launch files written before the field existed read
    /// as empty. Always written: the page's worker reads its input in bincode, which has no
    /// field names and so cannot leave one out.
    #[serde(default)]
    pub pointers: Vec<PointerArgument>,
    /// What each named buffer holds before the kernel runs (`fill`); a buffer not named here
    /// holds `Fill::Small`. Launch files written before the field existed read as empty.
    #[serde(default)]
    pub fills: Vec<(String, Fill)>,
    pub device: Device,
    pub compile: CompileEffects,
    pub sampling: BlockSampling,
    /// Steps (statements and expression nodes evaluated) the whole simulation may take, summed
    /// over every warp of every block run; beyond it the simulation stops with an error.
    pub step_budget: u64,
    /// Seed of the buffers' pseudo-random contents (`Fill::Small` and `Fill::Random`).
    pub seed: u64,
    /// One warp whose shared and global accesses the report keeps (`trace`); `None` keeps none.
    /// Launch files written before the field existed read as `None`.
    #[serde(default)]
    pub trace: Option<TraceRequest>,
    /// Whether runs shown alike may be reused (`plan`), or every warp and loop iteration of
    /// each block run must run. Launch files written before the field existed read as
    /// `Reuse::Exact`.
    #[serde(default)]
    pub reuse: Reuse,
    /// The sanitizer's checks to run (`crate::sanitizer`); with any on, the launch reuses no
    /// run (`plan`), so that every warp and iteration of the blocks it runs is checked. Launch
    /// files written before the field existed read as none.
    #[serde(default)]
    pub sanitizer: SanitizerConfig,
}

impl SimulationInput {
    /// A launch of `kernel` in `source` on `device` with the defaults: no defines, arguments or
    /// buffers, one block of one thread, as compiled, edge-class sampling with exact reuse, the
    /// default budget.
    pub fn new(source: &str, kernel: &str, device: Device) -> SimulationInput {
        SimulationInput {
            source: source.to_string(),
            kernel: kernel.to_string(),
            defines: Vec::new(),
            grid: Dim3::new(1, 1, 1),
            block: Dim3::new(1, 1, 1),
            dyn_smem: 0,
            regs: 0,
            args: Vec::new(),
            buffers: Vec::new(),
            fills: Vec::new(),
            pointers: Vec::new(),
            device,
            compile: CompileEffects::default(),
            sampling: BlockSampling::default(),
            step_budget: DEFAULT_STEP_BUDGET,
            seed: 1,
            trace: None,
            reuse: Reuse::Exact,
            sanitizer: SanitizerConfig::default(),
        }
    }
}
