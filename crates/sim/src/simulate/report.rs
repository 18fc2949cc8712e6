//! What a simulated launch reports, and why a launch could not be simulated.
//!
//! Plain data out, serialized under Nsight Compute's metric names (`counters`). The premise of
//! `SimulationError` is that every message is one printable line (`kernel::span::one_line`) and
//! neutral about the front end, and that an error about a place in the source carries its line
//! and column.

use crate::capability::Unsupported;
use crate::compile_effects::{CompileEffects, FusionSite};
use crate::counters::Counters;
use crate::device::{Device, LaunchError};
use crate::kernel::span::one_line;
use crate::kernel::{Diagnostic, Span};
use crate::occupancy::{OccupancyError, OccupancyReport};
use crate::printf_output::PrintfOutput;
use crate::profile::MemoryProfile;
use crate::sampling::EdgePosition;
use crate::sanitizer::SanitizerReport;
use crate::trace::{LineCounters, WarpTrace};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One simulated block and what it stands for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampledBlock {
    pub block: [u32; 3],
    /// Where it lies along x, y and z: its edge class.
    pub position: [EdgePosition; 3],
    /// The blocks of the grid it stands for: its counters are multiplied by this.
    pub scale: u64,
    /// The representatives of the other edge classes whose blocks were shown to do this block's
    /// work at shifted addresses (`kernel::block_shift`), so that this run counts for them too.
    pub reused_for: Vec<[u32; 3]>,
    /// The counters of this one block.
    pub counters: Counters,
    pub steps: u64,
    /// How many of the block's warps did not run: each was shown to do the work of a warp of its
    /// class at moved addresses, and its records are that warp's, moved (`kernel::interp`'s
    /// `warps`). Reports written before this existed read as 0.
    #[serde(default)]
    pub warps_shown_alike: u32,
    /// How many loop iterations the warps that ran skipped: each was shown to do the work of
    /// an iteration the warp ran at moved addresses, and its records are that iteration's,
    /// moved (`kernel::interp`'s `loops`). Reports written before this existed read as 0.
    #[serde(default)]
    pub iterations_skipped: u64,
}

/// What a launch does, extrapolated to the whole grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulationReport {
    pub kernel: String,
    /// Totals over the grid, serialized under Nsight Compute's metric names.
    pub counters: Counters,
    pub occupancy: OccupancyReport,
    pub sampled_blocks: Vec<SampledBlock>,
    pub grid_blocks: u64,
    /// Warp-level instructions over the grid (the same as `counters.warp_instructions`).
    pub warp_instructions: f64,
    /// Static plus dynamic shared memory of one block, in bytes, as laid out by the interpreter.
    pub shared_bytes_per_block: u64,
    /// The reads whose loads the compiler-effects pass fused, with the counts before and after.
    pub fused_loads: Vec<FusionSite>,
    pub compile: CompileEffects,
    /// Interpreter steps taken over all sampled blocks.
    pub steps: u64,
    /// Footprints, lines, round trips and atomics: what the timing model needs (`timing`).
    pub memory: MemoryProfile,
    /// The counters of every shared and global access in the source, in source order, over the
    /// grid: they add up to `counters` (`trace`).
    pub lines: Vec<LineCounters>,
    /// The accesses of the warp `SimulationInput::trace` asks for.
    pub trace: Option<WarpTrace>,
    /// The device the launch was simulated on: `timing::predict` times the report on it, so a
    /// report cannot be timed on a device it was not counted for.
    pub device: Device,
    /// The registers per thread the kernel's `__launch_bounds__` leave, where they are fewer than
    /// `SimulationInput::regs`: the occupancy was computed with them. Always written (`null`
    /// without a cap): the page's worker sends the report in bincode, which cannot leave a field
    /// out.
    #[serde(default)]
    pub launch_bounds_regs: Option<u32>,
    /// What the sanitizer found, where `SimulationInput::sanitizer` asked for it (`None`
    /// otherwise). Always written, as `launch_bounds_regs`.
    #[serde(default)]
    pub sanitizer: Option<SanitizerReport>,
    /// What the kernel's `printf` calls printed in the simulated blocks (`crate::printf_output`),
    /// where it has any (`None` otherwise). Always written, as `launch_bounds_regs`.
    #[serde(default)]
    pub printf: Option<PrintfOutput>,
}

/// Why a launch could not be simulated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SimulationError {
    /// The kernel does not compile, the launch does not match it, or a run failed (an index out
    /// of bounds, a barrier reached by part of a warp, the step budget): at a line and column.
    Kernel(Diagnostic),
    /// The launch asks more of one SM than the device has: the kernel would not launch.
    DoesNotLaunch(OccupancyError),
    /// The grid or block is empty or beyond the device's launch limits: the launch fails before
    /// any block runs.
    BadLaunch(LaunchError),
    /// The blocks run so far took `steps`, more than the `budget` of `SimulationInput`; `span` is
    /// the statement the last block had reached (the interpreter stops a block as soon as it
    /// uses up what is left), or the kernel's.
    StepBudget { steps: u64, budget: u64, span: Span },
    /// The kernel uses a feature the device's compute capability lacks (`capability`): nvcc would
    /// not compile it for the device, so it does not launch.
    Unsupported(Unsupported),
}

impl SimulationError {
    /// Where in the source the error is, if it is about a place in it.
    pub fn span(&self) -> Option<Span> {
        match self {
            SimulationError::Kernel(diagnostic) if diagnostic.span.line > 0 => {
                Some(diagnostic.span)
            }
            SimulationError::StepBudget { span, .. } if span.line > 0 => Some(*span),
            SimulationError::Unsupported(unsupported) if unsupported.used.span.line > 0 => {
                Some(unsupported.used.span)
            }
            _ => None,
        }
    }

    /// The message without the place: one printable line (`one_line`).
    pub fn message(&self) -> String {
        let message = match self {
            SimulationError::Kernel(diagnostic) => diagnostic.message.clone(),
            SimulationError::DoesNotLaunch(error) => error.to_string(),
            SimulationError::BadLaunch(error) => error.to_string(),
            SimulationError::StepBudget { budget, .. } => {
                format!("the simulation used up its step budget of {budget} steps")
            }
            SimulationError::Unsupported(unsupported) => unsupported.to_string(),
        };
        one_line(&message)
    }
}

impl fmt::Display for SimulationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.span() {
            Some(span) => write!(f, "{span}: {}", self.message()),
            None => f.write_str(&self.message()),
        }
    }
}

impl std::error::Error for SimulationError {}

impl From<Diagnostic> for SimulationError {
    fn from(diagnostic: Diagnostic) -> SimulationError {
        SimulationError::Kernel(diagnostic)
    }
}

#[cfg(test)]
mod tests {
    use super::SimulationError;
    use crate::kernel::Span;

    #[test]
    fn a_spent_budget_names_the_budget_in_words_any_front_end_can_show() {
        let error = SimulationError::StepBudget {
            steps: 2_000_417,
            budget: 2_000_000,
            span: Span {
                line: 9,
                col: 1,
                start: 200,
                end: 300,
            },
        };
        assert_eq!(
            error.to_string(),
            "9:1: the simulation used up its step budget of 2000000 steps"
        );
    }
}
