//! Tests of the statements that lower to the interpreter's existing ops: `switch` (fall-through,
//! `default`, nested switches, `continue` and `return` inside, lanes of a warp taking different
//! cases) and `__device__` functions that wait at `__syncthreads()`, with the launch bounds that
//! cap a kernel's registers. Outputs are compared with values worked out by hand, counters with
//! those of the same kernel written another way.

use super::{compile, Dim3, Launch, Simulation};
use crate::device::h100;
use crate::kernel::Value;
use crate::simulate::{simulate, Reuse, SimulationError, SimulationInput};

/// Runs `kernel` of `source` in one block of 32 threads and gives the 32 `int`s of `out`.
fn lanes(source: &str) -> Vec<i32> {
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(32, 1, 1),
        dyn_smem: 0,
        args: vec![],
        buffers: vec![("out".to_string(), 128)],
        fills: vec![],
        pointers: vec![],
    };
    let mut sim = Simulation::new(&program, "k", &launch, 1).unwrap_or_else(|d| panic!("{d}"));
    sim.run_block([0, 0, 0], 1_000_000)
        .unwrap_or_else(|d| panic!("{d}"));
    let bytes = sim.read_buffer("out").unwrap_or_default();
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn lanes_of_one_warp_take_the_cases_of_their_own_value() {
    let out = lanes(
        "__global__ void k(int* out) {\n\
           int t = threadIdx.x;\n\
           int v = 0;\n\
           switch (t % 4) {\n\
           case 0: v = 10; break;\n\
           case 1: v = 20; break;\n\
           case 2: v = 30; break;\n\
           default: v = 40; break;\n\
           }\n\
           out[t] = v;\n\
         }",
    );
    let expected: Vec<i32> = (0..32).map(|t| [10, 20, 30, 40][t % 4]).collect();
    assert_eq!(out, expected);
}

#[test]
fn fall_through_default_in_the_middle_a_nested_switch_and_return() {
    // By t % 8: 1 falls into 2 (1 + 10); 2 is 10; 0, 3 and 4 take `default` and fall into 5
    // (100 + 1000); 5 is 1000; 6 and 7 switch on t / 8: block 0 sets -1, block 3 (t = 30, 31)
    // writes -3 and returns, the others take the inner default, -2; then 5 is taken off.
    let out = lanes(
        "__global__ void k(int* out) {\n\
           int t = threadIdx.x;\n\
           int v = 0;\n\
           switch (t % 8) {\n\
           case 1: v += 1;\n\
           case 2: v += 10; break;\n\
           default: v += 100;\n\
           case 5: v += 1000; break;\n\
           case 6: case 7:\n\
             switch (t / 8) {\n\
             case 0: v = -1; break;\n\
             case 3: out[t] = -3; return;\n\
             default: v = -2;\n\
             }\n\
             v -= 5;\n\
             break;\n\
           }\n\
           out[t] = v;\n\
         }",
    );
    let by_residue = [1100, 11, 10, 1100, 1100, 1000];
    let expected: Vec<i32> = (0..32)
        .map(|t: usize| match (t % 8, t / 8) {
            (6 | 7, 0) => -6,
            (6 | 7, 3) => -3,
            (6 | 7, _) => -7,
            (r, _) => by_residue[r],
        })
        .collect();
    assert_eq!(out, expected);
    assert_eq!(&out[..8], [1100, 11, 10, 1100, 1100, 1000, -6, -6]);
    assert_eq!(&out[30..], [-3, -3]);
}

#[test]
fn continue_in_a_switch_continues_the_loop_around_it() {
    // Lane t runs t % 5 + 1 trips; a trip whose (t + i) % 3 is 0 skips the `+ 100`, 1 adds 101,
    // 2 adds 110. Lane 0: i = 0 only, residue 0: 0. Lane 4: i = 0..4, residues 1, 2, 0, 1, 2:
    // 101 + 110 + 0 + 101 + 110 = 422.
    let out = lanes(
        "__global__ void k(int* out) {\n\
           int t = threadIdx.x;\n\
           int s = 0;\n\
           for (int i = 0; i < t % 5 + 1; i++) {\n\
             switch ((t + i) % 3) {\n\
             case 0: continue;\n\
             case 1: s += 1; break;\n\
             default: s += 10;\n\
             }\n\
             s += 100;\n\
           }\n\
           out[t] = s;\n\
         }",
    );
    let expected: Vec<i32> = (0..32)
        .map(|t| {
            (0..t % 5 + 1)
                .map(|i| [0, 101, 110][(t + i) % 3])
                .sum::<i32>()
        })
        .collect();
    assert_eq!(out, expected);
    assert_eq!((out[0], out[4]), (0, 422));
}

#[test]
fn continue_in_a_nested_switch_reaches_the_loop_through_both() {
    // Every trip with i odd continues from the inner switch; the others add i. Lane t runs 4
    // trips (i = 0..3) and adds 0 + 2 = 2, plus t.
    let out = lanes(
        "__global__ void k(int* out) {\n\
           int t = threadIdx.x;\n\
           int s = t;\n\
           for (int i = 0; i < 4; i++) {\n\
             switch (t % 2) {\n\
             default:\n\
               switch (i % 2) { case 1: continue; }\n\
               s += i;\n\
             }\n\
           }\n\
           out[t] = s;\n\
         }",
    );
    let expected: Vec<i32> = (0..32).map(|t| t + 2).collect();
    assert_eq!(out, expected);
}

/// A launch of `kernel` on the H100 with two 64 x 64 `float` matrices in and one out.
fn matmul_input(source: &str, kernel: &str) -> SimulationInput {
    let mut input = SimulationInput::new(source, kernel, h100());
    input.grid = Dim3::new(4, 4, 1);
    input.block = Dim3::new(16, 16, 1);
    input.args = vec![("n".to_string(), Value::Int(64))];
    input.buffers = ["a", "b", "c"]
        .iter()
        .map(|name| (name.to_string(), 64 * 64 * 4))
        .collect();
    input.regs = 40;
    input
}

const TILED_WITH_HELPER: &str = "#define TILE 16\n\
    __device__ void load_tiles(float* sa, float* sb, const float* a, const float* b,\n\
                               int row, int col, int p, int n, int tx, int ty) {\n\
        sa[ty * TILE + tx] = a[row * n + p * TILE + tx];\n\
        sb[ty * TILE + tx] = b[(p * TILE + ty) * n + col];\n\
        __syncthreads();\n\
    }\n\
    __global__ void mm(const float* a, const float* b, float* c, int n) {\n\
        __shared__ float sa[TILE * TILE];\n\
        __shared__ float sb[TILE * TILE];\n\
        int tx = threadIdx.x, ty = threadIdx.y;\n\
        int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n\
        float r = 0.0f;\n\
        for (int p = 0; p < n / TILE; ++p) {\n\
            load_tiles(sa, sb, a, b, row, col, p, n, tx, ty);\n\
            for (int k = 0; k < TILE; ++k) r += sa[ty * TILE + k] * sb[k * TILE + tx];\n\
            __syncthreads();\n\
        }\n\
        c[row * n + col] = r;\n\
    }";

/// The same kernel with the helper's body written in its place, its two pointer parameters
/// taken as local variables (the others are the kernel's own variables, unchanged).
const TILED_INLINED: &str = "#define TILE 16\n\
    __global__ void mm(const float* a, const float* b, float* c, int n) {\n\
        __shared__ float sa[TILE * TILE];\n\
        __shared__ float sb[TILE * TILE];\n\
        int tx = threadIdx.x, ty = threadIdx.y;\n\
        int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n\
        float r = 0.0f;\n\
        for (int p = 0; p < n / TILE; ++p) {\n\
            float* la = sa;\n\
            float* lb = sb;\n\
            la[ty * TILE + tx] = a[row * n + p * TILE + tx];\n\
            lb[ty * TILE + tx] = b[(p * TILE + ty) * n + col];\n\
            __syncthreads();\n\
            for (int k = 0; k < TILE; ++k) r += sa[ty * TILE + k] * sb[k * TILE + tx];\n\
            __syncthreads();\n\
        }\n\
        c[row * n + col] = r;\n\
    }";

#[test]
fn a_helper_that_waits_at_the_barrier_counts_as_its_body_written_in_the_kernel() {
    let helper = simulate(&matmul_input(TILED_WITH_HELPER, "mm")).unwrap_or_else(|e| panic!("{e}"));
    let inlined = simulate(&matmul_input(TILED_INLINED, "mm")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(helper.counters, inlined.counters);
    assert_eq!(helper.occupancy, inlined.occupancy);
    assert_eq!(helper.shared_bytes_per_block, 2048);
    // 16 blocks of 8 warps, 4 phases of two barriers and two shared stores each.
    assert_eq!(helper.counters.barrier_warp_instructions, 1024.0);
    assert_eq!(helper.counters.shared_st_instructions, 1024.0);
}

#[test]
fn a_helper_barrier_reached_by_some_threads_fails_as_one_in_the_kernel_does() {
    let source = |call: &str| {
        format!(
            "__device__ void wait() {{ __syncthreads(); }}\n\
             __global__ void k(int* out) {{\n\
               if (threadIdx.x < 16) {{ {call} }}\n\
               out[threadIdx.x] = 1;\n\
             }}"
        )
    };
    let error = |source: &str| {
        let mut input = SimulationInput::new(source, "k", h100());
        input.block = Dim3::new(32, 1, 1);
        input.buffers = vec![("out".to_string(), 128)];
        match simulate(&input) {
            Err(SimulationError::Kernel(d)) => d.message.clone(),
            other => format!("{other:?}"),
        }
    };
    let expected =
        "__syncthreads() is reached by only some threads of the block (in warp 0, 16 of 32 lanes)";
    assert_eq!(error(&source("wait();")), expected);
    assert_eq!(error(&source("__syncthreads();")), expected);
}

#[test]
fn a_switch_in_a_loop_counts_the_same_with_iterations_reused_or_all_run() {
    let source = "__global__ void k(float* out, int mode, int n) {\n\
          int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
          float s = 0.0f;\n\
          for (int j = 0; j < n; j++) {\n\
            switch (mode) {\n\
            case 0: s += out[i + j * 256]; break;\n\
            case 1: s -= out[i + j * 256];\n\
            default: s *= 2.0f;\n\
            }\n\
          }\n\
          out[i] = s;\n\
        }";
    for mode in [0, 1, 2] {
        let mut input = SimulationInput::new(source, "k", h100());
        input.grid = Dim3::new(2, 1, 1);
        input.block = Dim3::new(128, 1, 1);
        input.args = vec![
            ("mode".to_string(), Value::Int(mode)),
            ("n".to_string(), Value::Int(40)),
        ];
        input.buffers = vec![("out".to_string(), 41 * 256 * 4)];
        let reused = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
        let all_run = simulate(&SimulationInput {
            reuse: Reuse::None,
            ..input.clone()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reused.counters, all_run.counters, "mode {mode}");
        assert_eq!(reused.lines, all_run.lines, "mode {mode}");
        // Modes 0 and 1 load once a trip in each of the 8 warps (2 blocks of 4): 40 x 8 loads;
        // mode 2 only doubles, and loads nothing.
        let loads = if mode == 2 { 0.0 } else { 40.0 * 8.0 };
        assert_eq!(reused.counters.global_ld_requests, loads, "mode {mode}");
    }
}

#[test]
fn launch_bounds_refuse_a_larger_block_and_cap_the_registers() {
    let source = "#define MAX 256\n\
        __global__ void __launch_bounds__(MAX, 4) k(float* out) { out[threadIdx.x] = 1.0f; }";
    let mut input = SimulationInput::new(source, "k", h100());
    input.buffers = vec![("out".to_string(), 4096)];
    input.regs = 96;
    input.block = Dim3::new(512, 1, 1);
    assert_eq!(
        simulate(&input).map(|_| ()).map_err(|e| e.to_string()),
        Err("this launch has 512 threads per block but __launch_bounds__(256) allows at most 256: CUDA refuses it (too many resources requested for launch)".to_string())
    );
    // 4 blocks of 256 threads (8 warps) in the H100's 65,536 registers: 2,048 a warp, 64 a
    // thread, so 96 becomes 64, and a block of 128 threads (4 warps) takes 4 x 2,048 = 8,192:
    // 8 blocks fit, 32 warps of 64, 50%.
    input.block = Dim3::new(128, 1, 1);
    let report = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.launch_bounds_regs, Some(64));
    assert_eq!(report.occupancy.regs_per_block_allocated, 8192);
    assert_eq!(report.occupancy.limit_registers, 8);
    // At 40 registers, under the cap, nothing changes and the report says so.
    input.regs = 40;
    let report = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.launch_bounds_regs, None);
    assert_eq!(report.occupancy.regs_per_block_allocated, 4 * 40 * 32);
}
