//! The runs of a launch that count nothing: the traced warp's block where the sampling did not
//! run it (`trace_uncounted_block`), and the repetition of the first block on the memory the
//! launch left (`repeat_moves_on`).
//!
//! Both run after every counted block, with what is left of the step budget, and their records
//! reach no counter: the premise is only that their sinks see what a counted block's would (the
//! trace's records pass through compiler effects of their own).

use super::block_classes::checked_product;
use super::input::SimulationInput;
use crate::compile_effects::{FusibleLoad, LoadFuser, LoadReuse};
use crate::kernel::span::one_line;
use crate::kernel::{DiagnosticKind, MemRecord, RecordSink, Simulation};
use crate::profile::{BlockProfiler, TouchedSectors};
use crate::trace::{TraceRecorder, TraceRequest};
use std::collections::HashMap;

/// Traces a block that is not counted: the requested warp's block when the sampling does not
/// run it. Its records pass through a fuser of their own, so they are what a counted block's
/// would be.
pub(super) struct TraceSink<'a> {
    pub(super) reuse: Option<LoadReuse>,
    pub(super) fuser: Option<LoadFuser>,
    pub(super) trace: &'a mut TraceRecorder,
}

impl RecordSink for TraceSink<'_> {
    fn record(&mut self, record: &MemRecord) {
        let TraceSink {
            reuse,
            fuser,
            trace,
        } = self;
        let mut issued = |record: &MemRecord| match fuser {
            Some(fuser) => fuser.push(record, &mut |r| trace.record(r)),
            None => trace.record(record),
        };
        match reuse {
            Some(reuse) => reuse.push(record, &mut issued),
            None => issued(record),
        }
    }
}

/// Feeds a block's records to a profiler alone, to see which sectors it touches.
pub(super) struct ProfileOnly<'a> {
    pub(super) profiler: &'a mut BlockProfiler,
}

impl RecordSink for ProfileOnly<'_> {
    fn record(&mut self, record: &MemRecord) {
        self.profiler.record(record);
    }
}

/// The share of the sectors that a repetition of the launch touches and the first run did not,
/// seen from `block`: it runs again on the memory the launch left, as the next timed launch
/// would find it. The hardware's L2 still holds what the previous launch touched (`timing`), so a
/// kernel that walks the same lines every time finds them there; one whose addresses follow data
/// it wrote (probe group C's `p_mlp*`, which keeps each warp's position in `state`) moves on to
/// lines the L2 does not hold. Only launches whose load addresses follow loaded data can move
/// on, and only they pay for the extra block. A block the budget cannot run again is taken to
/// stay where it was.
pub(super) fn repeat_moves_on(
    sim: &mut Simulation<'_>,
    input: &SimulationInput,
    layout: &[(String, u64, u64)],
    block: [u32; 3],
    first_sectors: &TouchedSectors,
    steps: &mut u64,
) -> f64 {
    let mut profiler = BlockProfiler::new(&input.device, layout.to_vec());
    let remaining = input.step_budget.saturating_sub(*steps);
    let Ok(stats) = sim.run_block_into(
        block,
        remaining,
        &mut ProfileOnly {
            profiler: &mut profiler,
        },
    ) else {
        return 0.0;
    };
    *steps = steps.saturating_add(stats.steps.max(1));
    let again = profiler.touched_sectors();
    if again.is_empty() {
        return 0.0;
    }
    let new = again.iter().filter(|s| !first_sectors.contains(s)).count();
    new as f64 / again.len() as f64
}

/// Why `request` names no warp of the launch, if it does not.
pub(super) fn outside_the_launch(request: TraceRequest, input: &SimulationInput) -> Option<String> {
    let TraceRequest { block, warp } = request;
    let [x, y, z] = block;
    let grid = input.grid;
    if x >= grid.x || y >= grid.y || z >= grid.z {
        return Some(format!(
            "block ({x}, {y}, {z}) is outside the grid of {}x{}x{} blocks",
            grid.x, grid.y, grid.z
        ));
    }
    let warps = checked_product([input.block.x, input.block.y, input.block.z]).div_ceil(32);
    (u64::from(warp) >= warps).then(|| format!("warp {warp} is beyond the block's {warps} warps"))
}

/// Runs the traced warp's block, which the sampling did not run, for its trace alone: with what
/// is left of the step budget, after every counted block, so nothing it does reaches a counter.
/// Returns why the trace stops short, if it does.
pub(super) fn trace_uncounted_block(
    sim: &mut Simulation<'_>,
    input: &SimulationInput,
    remaining: u64,
    recorder: &mut TraceRecorder,
    load_classes: &HashMap<(u32, u32), u32>,
    fusible: &[FusibleLoad],
) -> Option<String> {
    let block = recorder.request().block;
    let [x, y, z] = block;
    let mut sink = TraceSink {
        reuse: input
            .compile
            .reuse_loaded_values
            .then(|| LoadReuse::new(load_classes.clone())),
        fuser: input
            .compile
            .fuse_shared_loads
            .then(|| LoadFuser::new(fusible.to_vec())),
        trace: recorder,
    };
    let result = sim.run_block_into(block, remaining, &mut sink);
    let TraceSink { fuser, trace, .. } = sink;
    if let Some(mut fuser) = fuser {
        fuser.finish(&mut |r| trace.record(r));
    }
    result.err().map(|diagnostic| {
        // The interpreter names only what was left of the budget, which is not a number the
        // student set.
        let why = if diagnostic.kind == DiagnosticKind::StepBudget {
            "what was left of the step budget ran out".to_string()
        } else {
            diagnostic.message
        };
        one_line(&format!(
            "block ({x}, {y}, {z}) stopped at {}: {why}",
            diagnostic.span
        ))
    })
}

#[cfg(test)]
mod tests {
    use crate::device::h100;
    use crate::fill::Fill;
    use crate::kernel::Dim3;
    use crate::simulate::{simulate, SimulationInput};

    /// A warp that keeps its position in `state`: each lane reads `buf` at its position and
    /// moves it on by `step` rows of 32 words.
    fn walk(step: u32) -> SimulationInput {
        let source = format!(
            "__global__ void walk(const int* buf, int* state) {{\n\
             int t = threadIdx.x;\n\
             int j = state[t];\n\
             int v = buf[j * 32 + t];\n\
             state[t] = j + {step} + (v & 0);\n}}\n"
        );
        let mut input = SimulationInput::new(&source, "walk", h100());
        input.grid = Dim3::new(1, 1, 1);
        input.block = Dim3::new(32, 1, 1);
        input.buffers = vec![("buf".to_string(), 4096 * 4), ("state".to_string(), 128)];
        input.fills = vec![("state".to_string(), Fill::Zeros)];
        input
    }

    #[test]
    fn a_kernel_that_moves_its_own_position_finds_new_lines_in_the_next_launch() {
        // Probe group C: the repetition reads four sectors of `buf` the first run did not, and the
        // four sectors of `state` again.
        let moved = simulate(&walk(8)).expect("the launch simulates");
        assert_eq!(moved.memory.repeat_moves_on, 0.5);
        let stays = simulate(&walk(0)).expect("the launch simulates");
        assert_eq!(stays.memory.repeat_moves_on, 0.0);
    }
}
