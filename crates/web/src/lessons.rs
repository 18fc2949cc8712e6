//! The lesson kernels: the lectures' CUDA kernels, launched from the page's settings.
//!
//! Each lesson is one kernel of the files in `www/kernels/` (the kernels measured on a real H100,
//! `tests/reference/kernels/`), at the size it was measured at, with the settings a student
//! turns mapped onto its launch: the tile width becomes `TILE_WIDTH` and the block edge of the
//! matrix multiplications, the padding becomes `PAD`, threads per block the block of the 1-D
//! kernels, the stride the `stride` argument. Everything here is pure, so the launches are tested on
//! the host; the page runs them through `memplay_sim::simulate`.

use crate::state::State;
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::simulate::SimulationInput;

use memplay_sim::lesson_kernels::{ADJ_DIFF, ATOMICS, BANKS, COALESCING, MATMUL, TRANSPOSE};

/// The lessons, in the order of the lectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LessonId {
    MatmulNaive,
    MatmulTiled,
    AdjDiffNaive,
    AdjDiffShared,
    SmemStride,
    RowPerThread,
    StridedCopy,
    TransposeNaive,
    TransposeShared,
    AtomicsGlobal,
    AtomicsHierarchical,
}

/// The setting a lesson's sweep chart varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepSetting {
    Tile,
    Block,
    Pad,
    Stride,
}

impl SweepSetting {
    pub fn label(self) -> &'static str {
        match self {
            SweepSetting::Tile => "tile width",
            SweepSetting::Block => "threads per block",
            SweepSetting::Pad => "padding",
            SweepSetting::Stride => "stride",
        }
    }

    /// The values the chart shows.
    pub fn values(self) -> &'static [u32] {
        match self {
            SweepSetting::Tile => &[4, 8, 16, 32],
            SweepSetting::Block => &[64, 128, 256, 512, 1024],
            SweepSetting::Pad => &[0, 1, 2, 4],
            SweepSetting::Stride => &[1, 2, 4, 8, 16, 32],
        }
    }

    /// The current value of this setting in `state`.
    pub fn current(self, state: &State) -> u32 {
        match self {
            SweepSetting::Tile => state.tile,
            SweepSetting::Block => state.block,
            SweepSetting::Pad => state.pad,
            SweepSetting::Stride => state.stride,
        }
    }

    /// `state` with this setting at `value`.
    pub fn with(self, state: &State, value: u32) -> State {
        let mut state = state.clone();
        match self {
            SweepSetting::Tile => state.tile = value,
            SweepSetting::Block => state.block = value,
            SweepSetting::Pad => state.pad = value,
            SweepSetting::Stride => state.stride = value,
        }
        state
    }
}

/// Matrices of the matmul lessons are n x n with this n, as measured on the H100.
pub const MATMUL_N: u32 = 1024;
/// Elements of the adjacent-difference input, as in the H100 counter measurements.
pub const ADJ_DIFF_N: u32 = 1 << 22;
/// Transposed matrices are n x n with this n.
pub const TRANSPOSE_N: u32 = 2048;
/// Elements copied by the strided copy, and summed by the atomics lessons.
pub const COPY_N: u32 = 1 << 20;

impl LessonId {
    pub const ALL: [LessonId; 11] = [
        LessonId::MatmulNaive,
        LessonId::MatmulTiled,
        LessonId::AdjDiffNaive,
        LessonId::AdjDiffShared,
        LessonId::SmemStride,
        LessonId::RowPerThread,
        LessonId::StridedCopy,
        LessonId::TransposeNaive,
        LessonId::TransposeShared,
        LessonId::AtomicsGlobal,
        LessonId::AtomicsHierarchical,
    ];

    /// The id in the URL (`lesson=matmul-tiled`).
    pub fn key(self) -> &'static str {
        match self {
            LessonId::MatmulNaive => "matmul-naive",
            LessonId::MatmulTiled => "matmul-tiled",
            LessonId::AdjDiffNaive => "adj-diff-naive",
            LessonId::AdjDiffShared => "adj-diff-shared",
            LessonId::SmemStride => "smem-stride",
            LessonId::RowPerThread => "row-per-thread",
            LessonId::StridedCopy => "strided-copy",
            LessonId::TransposeNaive => "transpose-naive",
            LessonId::TransposeShared => "transpose-shared",
            LessonId::AtomicsGlobal => "atomics-global",
            LessonId::AtomicsHierarchical => "atomics-hierarchical",
        }
    }

    pub fn parse(key: &str) -> Option<LessonId> {
        LessonId::ALL.into_iter().find(|lesson| lesson.key() == key)
    }

    pub fn title(self) -> &'static str {
        match self {
            LessonId::MatmulNaive => "Matrix multiply, naive (seed 000)",
            LessonId::MatmulTiled => "Matrix multiply, tiled in shared memory (seeds 000, 003)",
            LessonId::AdjDiffNaive => "Adjacent difference, two global loads (seed 000)",
            LessonId::AdjDiffShared => "Adjacent difference through shared memory (seed 000)",
            LessonId::SmemStride => "Shared memory read with a stride (seed 001)",
            LessonId::RowPerThread => "32x32 array, each thread a row (seed 001)",
            LessonId::StridedCopy => "Strided global copy: coalescing (seeds 001, 002)",
            LessonId::TransposeNaive => "Transpose, naive (coalescing)",
            LessonId::TransposeShared => "Transpose through a shared tile (banks, padding)",
            LessonId::AtomicsGlobal => "Sum with one global atomic per thread (seed 000)",
            LessonId::AtomicsHierarchical => "Sum with hierarchical atomics (seed 000)",
        }
    }

    /// The lesson's source file as shipped in `www/kernels/`.
    pub fn source(self) -> &'static str {
        match self {
            LessonId::MatmulNaive | LessonId::MatmulTiled => MATMUL,
            LessonId::AdjDiffNaive | LessonId::AdjDiffShared => ADJ_DIFF,
            LessonId::SmemStride | LessonId::RowPerThread => BANKS,
            LessonId::StridedCopy => COALESCING,
            LessonId::TransposeNaive | LessonId::TransposeShared => TRANSPOSE,
            LessonId::AtomicsGlobal | LessonId::AtomicsHierarchical => ATOMICS,
        }
    }

    /// The `__global__` function the lesson launches.
    pub fn kernel(self) -> &'static str {
        match self {
            LessonId::MatmulNaive => "mm_naive",
            LessonId::MatmulTiled => "mm_tiled",
            LessonId::AdjDiffNaive => "adj_diff_naive",
            LessonId::AdjDiffShared => "adj_diff_shared",
            LessonId::SmemStride => "smem_stride",
            LessonId::RowPerThread => "row_per_thread",
            LessonId::StridedCopy => "strided_copy",
            LessonId::TransposeNaive => "tr_naive",
            LessonId::TransposeShared => "tr_shared",
            LessonId::AtomicsGlobal => "sum_global_atomic",
            LessonId::AtomicsHierarchical => "sum_hier_atomic",
        }
    }

    /// Which settings change the launch, so the page can say what to try.
    pub fn settings(self) -> &'static str {
        match self {
            LessonId::MatmulNaive => "tile width (the block is TILE x TILE), registers",
            LessonId::MatmulTiled => "tile width, padding, registers",
            LessonId::AdjDiffNaive | LessonId::AdjDiffShared => "threads per block, registers",
            LessonId::SmemStride => "stride, threads per block",
            LessonId::RowPerThread => "padding",
            LessonId::StridedCopy => "stride, threads per block",
            LessonId::TransposeNaive => "none (32x8 blocks over 32x32 tiles)",
            LessonId::TransposeShared => "padding",
            LessonId::AtomicsGlobal | LessonId::AtomicsHierarchical => "threads per block",
        }
    }

    /// The setting the sweep chart varies.
    pub fn sweep(self) -> SweepSetting {
        match self {
            LessonId::MatmulNaive | LessonId::MatmulTiled => SweepSetting::Tile,
            LessonId::RowPerThread | LessonId::TransposeShared | LessonId::TransposeNaive => {
                SweepSetting::Pad
            }
            LessonId::SmemStride | LessonId::StridedCopy => SweepSetting::Stride,
            _ => SweepSetting::Block,
        }
    }

    /// The launch of this lesson's kernel for the page's settings, running `source` (the lesson's
    /// file, or the student's edit of it).
    pub fn launch(self, state: &State, source: &str) -> SimulationInput {
        let device = state.device.device();
        let mut input = SimulationInput::new(source, self.kernel(), device);
        input.regs = state.regs;
        input.compile = state.compile;
        let define = |name: &str, value: u32| (name.to_string(), value.to_string());
        let int = |name: &str, value: u32| (name.to_string(), Value::Int(i64::from(value)));
        let bytes = |name: &str, elements: u64| (name.to_string(), elements * 4);
        let block = state.block;
        let blocks_for = |n: u32| n.div_ceil(block.max(1));
        match self {
            LessonId::MatmulNaive | LessonId::MatmulTiled => {
                let n = MATMUL_N;
                let tile = state.tile;
                input.grid = Dim3::new(n.div_ceil(tile), n.div_ceil(tile), 1);
                input.block = Dim3::new(tile, tile, 1);
                input.defines = vec![define("TILE_WIDTH", tile), define("PAD", state.pad)];
                input.args = vec![int("n", n)];
                let elements = u64::from(n) * u64::from(n);
                input.buffers = vec![
                    bytes("a", elements),
                    bytes("b", elements),
                    bytes("c", elements),
                ];
            }
            LessonId::AdjDiffNaive | LessonId::AdjDiffShared => {
                let n = ADJ_DIFF_N;
                input.grid = Dim3::new(blocks_for(n), 1, 1);
                input.block = Dim3::new(block, 1, 1);
                if self == LessonId::AdjDiffShared {
                    input.dyn_smem = block * 4;
                }
                input.args = vec![int("n", n)];
                input.buffers = vec![bytes("result", n.into()), bytes("input", n.into())];
            }
            LessonId::SmemStride => {
                // One block per H100 SM, as measured: the shared reads, not the grid, are the lesson.
                let grid = 132;
                input.grid = Dim3::new(grid, 1, 1);
                input.block = Dim3::new(block, 1, 1);
                input.args = vec![int("stride", state.stride), int("iters", 64)];
                input.buffers = vec![bytes("out", u64::from(grid) * u64::from(block))];
            }
            LessonId::RowPerThread => {
                let grid = 132;
                input.grid = Dim3::new(grid, 1, 1);
                input.block = Dim3::new(32, 1, 1);
                input.defines = vec![define("PAD", state.pad)];
                input.buffers = vec![
                    bytes("out", u64::from(grid) * 32),
                    bytes("in", u64::from(grid) * 1024),
                ];
            }
            LessonId::StridedCopy => {
                let n_out = COPY_N;
                let stride = state.stride.max(1);
                input.grid = Dim3::new(blocks_for(n_out), 1, 1);
                input.block = Dim3::new(block, 1, 1);
                input.args = vec![int("stride", stride), int("n_out", n_out)];
                input.buffers = vec![
                    bytes("out", n_out.into()),
                    bytes("in", u64::from(n_out) * u64::from(stride)),
                ];
            }
            LessonId::TransposeNaive | LessonId::TransposeShared => {
                let n = TRANSPOSE_N;
                input.grid = Dim3::new(n / 32, n / 32, 1);
                input.block = Dim3::new(32, 8, 1);
                input.defines = vec![define("PAD", state.pad)];
                input.args = vec![int("n", n)];
                let elements = u64::from(n) * u64::from(n);
                input.buffers = vec![bytes("out", elements), bytes("in", elements)];
            }
            LessonId::AtomicsGlobal | LessonId::AtomicsHierarchical => {
                let n = COPY_N;
                input.grid = Dim3::new(blocks_for(n), 1, 1);
                input.block = Dim3::new(block, 1, 1);
                input.args = vec![int("n", n)];
                input.buffers = vec![bytes("in", n.into()), bytes("result", 1)];
            }
        }
        input
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplay_sim::simulate::simulate;

    /// Simulates the lesson at the given settings and returns the named Nsight counter.
    fn check(lesson: LessonId, state: State, counter: &str, expected: f64) {
        let input = lesson.launch(&state, lesson.source());
        let report = simulate(&input).unwrap_or_else(|e| panic!("{lesson:?}: {e}"));
        let found = report.counters.get(counter).expect("a known counter");
        assert_eq!(found, expected, "{lesson:?} {counter}");
    }

    #[test]
    fn every_lesson_simulates_at_the_default_settings() {
        for lesson in LessonId::ALL {
            let input = lesson.launch(&State::default(), lesson.source());
            assert!(simulate(&input).is_ok(), "{lesson:?}");
            assert_eq!(LessonId::parse(lesson.key()), Some(lesson));
        }
    }

    #[test]
    fn row_per_thread_without_padding_takes_32_wavefronts_per_read() {
        // 132 blocks x 32 reads s[t][j] of one warp, each a 32-way conflict, counted as written
        // (nvcc would fuse the unrolled reads of a 16-byte aligned row into 128-bit loads).
        let state = State {
            pad: 0,
            compile: memplay_sim::compile_effects::CompileEffects::AS_WRITTEN,
            ..State::default()
        };
        check(
            LessonId::RowPerThread,
            state.clone(),
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            132.0 * 32.0 * 32.0,
        );
        check(
            LessonId::RowPerThread,
            State { pad: 1, ..state },
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            132.0 * 32.0,
        );
    }

    #[test]
    fn sixteen_wide_tiles_load_each_matrix_element_once_per_tile() {
        // Seed 003: 16x16 tiles cut global loads 16-fold, to 2 n^3 / 16 element loads, made by
        // warp-level requests of 32 lanes each.
        let n = f64::from(MATMUL_N);
        check(
            LessonId::MatmulTiled,
            State::default(),
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            2.0 * n * n * n / 16.0 / 32.0,
        );
    }
}
