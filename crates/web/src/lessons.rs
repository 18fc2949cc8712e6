//! The lessons and their kernels: the lectures' CUDA kernels, launched from the page's settings.
//!
//! A `Lesson` is one topic of the lectures (`?lesson=tiled-matmul`); its `Variant`s are the kernels
//! it compares (`&variant=naive`). The keys of the page's first links, one per kernel
//! (`?lesson=matmul-naive`), still open their lesson at that variant (`Variant::old_key`).
//!
//! Each lesson is one kernel of the files in `www/kernels/` (the kernels measured on a real H100,
//! `tests/reference/kernels/`), at the size it was measured at, with the settings a student
//! turns mapped onto its launch: the tile width becomes `TILE_WIDTH` and the block edge of the
//! matrix multiplications, the padding becomes `PAD`, threads per block the block of the 1-D
//! kernels, the stride the `stride` argument. Everything here is pure, so the launches are tested on
//! the host; the page runs them through `memplay_sim::simulate`.

use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::simulate::SimulationInput;
use memplay_sim::transfer::Layout;
use memplay_sim::DeviceId;

use memplay_sim::lesson_kernels::{
    ADJ_DIFF, ATOMICS, BANKS, BOUNDARY, COALESCING, DIVERGENCE, MATMUL, SWIZZLE, TRANSPOSE,
};

/// A setting of the page's controls that a lesson turns (the device is always shown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Pattern,
    Tile,
    Pad,
    Stride,
    Block,
    Regs,
    /// Pinned or pageable host memory for the copies (`host=`).
    HostMemory,
}

/// A view of the page beside the lesson's words and kernel card, shown where it matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The bank map of one warp's access pattern (`pattern=`).
    BankMap,
    Occupancy,
    Roofline,
    /// Where each of the kernel's variables lives (seed 000's tables).
    MemorySpaces,
    /// cudaMallocPitch's padded rows.
    Pitched,
    /// The kernel's memory accesses line by line, with one warp's bank or coalescing map.
    Lines,
    /// Warps resident on an SM against the warps its memory latency needs (seed 003).
    LatencyHiding,
    /// Active lanes per warp instruction, and the FP32 work the split warps waste (seed 001).
    Divergence,
    /// The copies to and from the host beside the kernel (seeds 000, 001).
    Transfers,
    /// The launch form of the my-kernel lesson.
    LaunchForm,
}

/// The lessons, in the order of the lectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
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
    /// The tiled matmul at an n that is not a multiple of the tile: its loads leave the matrices.
    BoundaryUnguarded,
    /// Seed 004's tiled matmul with boundary checks, at the same n.
    BoundaryGuarded,
    /// The tiled matmul, as the occupancy lesson launches it.
    OccupancyTiled,
    /// The naive and the tiled matmul, as the roofline lesson launches them.
    RooflineNaive,
    RooflineTiled,
    /// The tiled matmul, whose variables the memory-spaces lesson places.
    MemorySpacesTiled,
    /// The naive transpose, the 2-D indexing the pitched-allocation lesson pads.
    PitchedTranspose,
    /// The naive adjacent difference over arrays larger than the L2, whose registers the
    /// latency-hiding lesson turns.
    LatencyAdjDiff,
    /// The shared-tile transpose with an XOR swizzle instead of padding.
    TransposeSwizzle,
    /// The adjacent difference with its input copied in and its result copied out.
    TransfersAdjDiff,
    /// The guarded tiled matmul at n = 1000 with its matrices copied in and out.
    TransfersMatmul,
    /// Any kernel of the student's source, launched as the student writes it (`my_kernel`).
    MyKernel,
    /// The divergence lesson's loop with odd and even lanes on different paths.
    DivergenceSplit,
    /// The same loop with whole warps on one path.
    DivergenceUniform,
}

/// The lessons, in the order of the lectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lesson {
    MemorySpaces,
    AdjacentDifference,
    TiledMatmul,
    BoundaryChecks,
    BankConflicts,
    Coalescing,
    PitchedAllocation,
    WarpDivergence,
    Atomics,
    Occupancy,
    LatencyHiding,
    Roofline,
    HostTransfers,
    MyKernel,
}

impl Lesson {
    pub const ALL: [Lesson; 14] = [
        Lesson::MemorySpaces,
        Lesson::AdjacentDifference,
        Lesson::TiledMatmul,
        Lesson::BoundaryChecks,
        Lesson::BankConflicts,
        Lesson::Coalescing,
        Lesson::PitchedAllocation,
        Lesson::WarpDivergence,
        Lesson::Atomics,
        Lesson::Occupancy,
        Lesson::LatencyHiding,
        Lesson::Roofline,
        Lesson::HostTransfers,
        Lesson::MyKernel,
    ];

    /// The id in the URL (`lesson=tiled-matmul`), also the name of its file in `www/lessons/`.
    pub fn key(self) -> &'static str {
        match self {
            Lesson::MemorySpaces => "memory-spaces",
            Lesson::PitchedAllocation => "pitched-allocation",
            Lesson::AdjacentDifference => "adjacent-difference",
            Lesson::TiledMatmul => "tiled-matmul",
            Lesson::BoundaryChecks => "boundary-checks",
            Lesson::BankConflicts => "bank-conflicts",
            Lesson::Coalescing => "coalescing",
            Lesson::Atomics => "atomics",
            Lesson::Occupancy => "occupancy",
            Lesson::Roofline => "roofline",
            Lesson::WarpDivergence => "warp-divergence",
            Lesson::LatencyHiding => "latency-hiding",
            Lesson::HostTransfers => "host-transfers",
            Lesson::MyKernel => "my-kernel",
        }
    }

    /// The lesson whose id, or whose kernel's old key, this is, with the variant the key names
    /// (the lesson's first for a lesson id).
    pub fn parse(key: &str) -> Option<(Lesson, Variant)> {
        if let Some(lesson) = Lesson::ALL.into_iter().find(|lesson| lesson.key() == key) {
            return Some((lesson, lesson.variants()[0]));
        }
        Variant::parse_old_key(key).map(|variant| (variant.lesson(), variant))
    }

    pub fn title(self) -> &'static str {
        match self {
            Lesson::MemorySpaces => "Memory spaces",
            Lesson::PitchedAllocation => "Pitched allocation",
            Lesson::AdjacentDifference => "Adjacent difference",
            Lesson::TiledMatmul => "Tiled matrix multiply",
            Lesson::BoundaryChecks => "Boundary checks",
            Lesson::BankConflicts => "Shared-memory bank conflicts",
            Lesson::Coalescing => "Coalescing global memory",
            Lesson::Atomics => "Atomics: global and hierarchical",
            Lesson::Occupancy => "Occupancy",
            Lesson::Roofline => "The roofline",
            Lesson::WarpDivergence => "Warp divergence",
            Lesson::LatencyHiding => "Latency hiding",
            Lesson::HostTransfers => "Copies to and from the host",
            Lesson::MyKernel => "My kernel",
        }
    }

    /// The kernels the lesson compares; the first is where it opens.
    pub fn variants(self) -> &'static [Variant] {
        match self {
            Lesson::AdjacentDifference => &[Variant::AdjDiffNaive, Variant::AdjDiffShared],
            Lesson::TiledMatmul => &[Variant::MatmulTiled, Variant::MatmulNaive],
            // The transpose first: its column read goes from every lane in one bank to none
            // with one word of padding, and the padding halves its time.
            Lesson::BankConflicts => &[
                Variant::TransposeShared,
                Variant::RowPerThread,
                Variant::SmemStride,
                Variant::TransposeSwizzle,
            ],
            Lesson::Coalescing => &[Variant::StridedCopy, Variant::TransposeNaive],
            Lesson::Atomics => &[Variant::AtomicsGlobal, Variant::AtomicsHierarchical],
            Lesson::BoundaryChecks => &[Variant::BoundaryUnguarded, Variant::BoundaryGuarded],
            Lesson::Occupancy => &[Variant::OccupancyTiled],
            Lesson::Roofline => &[Variant::RooflineNaive, Variant::RooflineTiled],
            Lesson::MemorySpaces => &[Variant::MemorySpacesTiled],
            Lesson::PitchedAllocation => &[Variant::PitchedTranspose],
            Lesson::WarpDivergence => &[Variant::DivergenceSplit, Variant::DivergenceUniform],
            Lesson::LatencyHiding => &[Variant::LatencyAdjDiff],
            Lesson::HostTransfers => &[Variant::TransfersAdjDiff, Variant::TransfersMatmul],
            Lesson::MyKernel => &[Variant::MyKernel],
        }
    }

    /// The settings the lesson's kernels depend on, in the order the page shows them.
    pub fn controls(self) -> &'static [Control] {
        match self {
            Lesson::AdjacentDifference | Lesson::Atomics | Lesson::LatencyHiding => {
                &[Control::Block, Control::Regs]
            }
            Lesson::WarpDivergence => &[Control::Block],
            Lesson::HostTransfers => &[Control::HostMemory],
            Lesson::MyKernel => &[Control::Regs, Control::HostMemory],
            Lesson::TiledMatmul | Lesson::Occupancy => {
                &[Control::Tile, Control::Pad, Control::Regs]
            }
            Lesson::BoundaryChecks | Lesson::Roofline | Lesson::MemorySpaces => &[Control::Tile],
            Lesson::PitchedAllocation => &[],
            Lesson::BankConflicts => &[
                Control::Pattern,
                Control::Stride,
                Control::Pad,
                Control::Block,
            ],
            Lesson::Coalescing => &[Control::Stride, Control::Block],
        }
    }

    /// The views that matter for the lesson, beside its kernel card.
    pub fn views(self) -> &'static [View] {
        match self {
            Lesson::TiledMatmul => &[View::Lines, View::Roofline, View::Occupancy],
            Lesson::BankConflicts => &[View::BankMap, View::Lines],
            Lesson::Occupancy => &[View::Occupancy],
            Lesson::Roofline => &[View::Roofline],
            Lesson::MemorySpaces => &[View::MemorySpaces],
            Lesson::PitchedAllocation => &[View::Pitched],
            Lesson::LatencyHiding => &[View::LatencyHiding, View::Occupancy],
            Lesson::WarpDivergence => &[View::Divergence],
            Lesson::HostTransfers => &[View::Transfers],
            Lesson::MyKernel => &[
                View::LaunchForm,
                View::Lines,
                View::Occupancy,
                View::LatencyHiding,
                View::Divergence,
                View::Roofline,
                View::Transfers,
            ],
            Lesson::AdjacentDifference
            | Lesson::BoundaryChecks
            | Lesson::Coalescing
            | Lesson::Atomics => &[View::Lines],
        }
    }

    /// The lesson's variant of this name (`naive`), if it has one.
    pub fn variant_named(self, name: &str) -> Option<Variant> {
        self.variants()
            .iter()
            .copied()
            .find(|variant| variant.name() == name)
    }

    /// The lesson's words (`lesson_text`), as shipped in `www/lessons/`.
    pub fn text(self) -> &'static str {
        match self {
            Lesson::AdjacentDifference => {
                include_str!("../../../www/lessons/adjacent-difference.txt")
            }
            Lesson::TiledMatmul => include_str!("../../../www/lessons/tiled-matmul.txt"),
            Lesson::BankConflicts => include_str!("../../../www/lessons/bank-conflicts.txt"),
            Lesson::Coalescing => include_str!("../../../www/lessons/coalescing.txt"),
            Lesson::Atomics => include_str!("../../../www/lessons/atomics.txt"),
            Lesson::BoundaryChecks => include_str!("../../../www/lessons/boundary-checks.txt"),
            Lesson::Occupancy => include_str!("../../../www/lessons/occupancy.txt"),
            Lesson::Roofline => include_str!("../../../www/lessons/roofline.txt"),
            Lesson::MemorySpaces => include_str!("../../../www/lessons/memory-spaces.txt"),
            Lesson::PitchedAllocation => {
                include_str!("../../../www/lessons/pitched-allocation.txt")
            }
            Lesson::WarpDivergence => include_str!("../../../www/lessons/warp-divergence.txt"),
            Lesson::LatencyHiding => include_str!("../../../www/lessons/latency-hiding.txt"),
            Lesson::HostTransfers => include_str!("../../../www/lessons/host-transfers.txt"),
            Lesson::MyKernel => include_str!("../../../www/lessons/my-kernel.txt"),
        }
    }
}

/// What a launch depends on besides its kernel and source: the values the page's controls set.
/// A plain value, so the lessons need nothing of the page's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub device: DeviceId,
    pub tile: u32,
    pub block: u32,
    pub pad: u32,
    pub stride: u32,
    pub regs: u32,
    pub compile: CompileEffects,
}

/// The sweep of a launch: the swept setting, its current value and the launch at each value.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepLaunches {
    /// The swept setting.
    pub setting: SweepSetting,
    pub current: u32,
    pub launches: Vec<(u32, SimulationInput)>,
}

/// The setting a lesson's sweep chart varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SweepSetting {
    Tile,
    Block,
    Pad,
    Stride,
    Regs,
}

impl SweepSetting {
    pub const ALL: [SweepSetting; 5] = [
        SweepSetting::Tile,
        SweepSetting::Block,
        SweepSetting::Pad,
        SweepSetting::Stride,
        SweepSetting::Regs,
    ];

    /// The setting's name in a link's query and in a lesson's placeholders (`regs=64`).
    pub fn key(self) -> &'static str {
        match self {
            SweepSetting::Tile => "tile",
            SweepSetting::Block => "block",
            SweepSetting::Pad => "pad",
            SweepSetting::Stride => "stride",
            SweepSetting::Regs => "regs",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SweepSetting::Tile => "tile width",
            SweepSetting::Block => "threads per block",
            SweepSetting::Pad => "padding",
            SweepSetting::Stride => "stride",
            SweepSetting::Regs => "registers per thread",
        }
    }

    /// The values the chart shows.
    pub fn values(self) -> &'static [u32] {
        match self {
            SweepSetting::Tile => &[4, 8, 16, 32],
            SweepSetting::Block => &[64, 128, 256, 512, 1024],
            SweepSetting::Pad => &[0, 1, 2, 4],
            SweepSetting::Stride => &[1, 2, 4, 8, 16, 32],
            // Where the H100's 65,536 registers hold 64, 48, 32, 24, 16 and 8 warps.
            SweepSetting::Regs => &[32, 40, 64, 80, 128, 255],
        }
    }

    /// The current value of this setting.
    pub fn current(self, settings: Settings) -> u32 {
        match self {
            SweepSetting::Tile => settings.tile,
            SweepSetting::Block => settings.block,
            SweepSetting::Pad => settings.pad,
            SweepSetting::Stride => settings.stride,
            SweepSetting::Regs => settings.regs,
        }
    }

    /// The sweep over this setting's values, the others as in `settings`, with the launch that
    /// `launch_at` makes of each.
    pub fn launches(
        self,
        settings: Settings,
        launch_at: impl Fn(Settings) -> SimulationInput,
    ) -> SweepLaunches {
        SweepLaunches {
            setting: self,
            current: self.current(settings),
            launches: self
                .values()
                .iter()
                .map(|&value| (value, launch_at(self.with(settings, value))))
                .collect(),
        }
    }

    /// The settings with this one at `value`.
    pub fn with(self, mut settings: Settings, value: u32) -> Settings {
        match self {
            SweepSetting::Tile => settings.tile = value,
            SweepSetting::Block => settings.block = value,
            SweepSetting::Pad => settings.pad = value,
            SweepSetting::Stride => settings.stride = value,
            SweepSetting::Regs => settings.regs = value,
        }
        settings
    }
}

/// Matrices of the matmul lessons are n x n with this n, as measured on the H100.
pub const MATMUL_N: u32 = 1024;
/// The boundary-checks lesson's n: not a multiple of any tile width but 1, 2, 4 and 8.
pub const BOUNDARY_N: u32 = 1000;
/// Elements of the adjacent-difference input, as in the H100 counter measurements.
pub const ADJ_DIFF_N: u32 = 1 << 22;
/// Transposed matrices are n x n with this n.
pub const TRANSPOSE_N: u32 = 2048;
/// Elements copied by the strided copy, and summed by the atomics lessons.
pub const COPY_N: u32 = 1 << 20;
/// Elements of the latency-hiding lesson's arrays: 256 MB each, well beyond the H100's 50 MB
/// L2, so every launch streams them from DRAM and DRAM's latency is what the warps must cover.
pub const LATENCY_N: u32 = 1 << 26;
/// The divergence lesson's launch, as probe group I measured it on the H100: 1,056 blocks of
/// 256 threads (eight per SM), each thread a chain of 4,096 multiply-adds.
pub const DIVERGENCE_BLOCKS: u32 = 1056;
pub const DIVERGENCE_ITERS: u32 = 4096;

impl Variant {
    pub const ALL: [Variant; 25] = [
        Variant::MatmulNaive,
        Variant::MatmulTiled,
        Variant::AdjDiffNaive,
        Variant::AdjDiffShared,
        Variant::SmemStride,
        Variant::RowPerThread,
        Variant::StridedCopy,
        Variant::TransposeNaive,
        Variant::TransposeShared,
        Variant::AtomicsGlobal,
        Variant::AtomicsHierarchical,
        Variant::BoundaryUnguarded,
        Variant::BoundaryGuarded,
        Variant::OccupancyTiled,
        Variant::RooflineNaive,
        Variant::RooflineTiled,
        Variant::MemorySpacesTiled,
        Variant::PitchedTranspose,
        Variant::LatencyAdjDiff,
        Variant::DivergenceSplit,
        Variant::DivergenceUniform,
        Variant::TransposeSwizzle,
        Variant::TransfersAdjDiff,
        Variant::TransfersMatmul,
        Variant::MyKernel,
    ];

    /// The kernel's key in the page's first links (`lesson=matmul-tiled`), which still open its
    /// lesson at this variant.
    pub fn old_key(self) -> &'static str {
        match self {
            Variant::MatmulNaive => "matmul-naive",
            Variant::MatmulTiled => "matmul-tiled",
            Variant::AdjDiffNaive => "adj-diff-naive",
            Variant::AdjDiffShared => "adj-diff-shared",
            Variant::SmemStride => "smem-stride",
            Variant::RowPerThread => "row-per-thread",
            Variant::StridedCopy => "strided-copy",
            Variant::TransposeNaive => "transpose-naive",
            Variant::TransposeShared => "transpose-shared",
            Variant::AtomicsGlobal => "atomics-global",
            Variant::AtomicsHierarchical => "atomics-hierarchical",
            Variant::BoundaryUnguarded => "boundary-unguarded",
            Variant::BoundaryGuarded => "boundary-guarded",
            Variant::OccupancyTiled => "occupancy-tiled",
            Variant::RooflineNaive => "roofline-naive",
            Variant::RooflineTiled => "roofline-tiled",
            Variant::MemorySpacesTiled => "memory-spaces-tiled",
            Variant::PitchedTranspose => "pitched-transpose",
            Variant::LatencyAdjDiff => "latency-adj-diff",
            Variant::DivergenceSplit => "divergence-split",
            Variant::DivergenceUniform => "divergence-uniform",
            Variant::TransposeSwizzle => "transpose-swizzle",
            Variant::TransfersAdjDiff => "transfers-adj-diff",
            Variant::TransfersMatmul => "transfers-matmul",
            Variant::MyKernel => "my-kernel-saxpy",
        }
    }

    /// The variant whose old key this is.
    pub fn parse_old_key(key: &str) -> Option<Variant> {
        Variant::ALL
            .into_iter()
            .find(|variant| variant.old_key() == key)
    }

    /// The lesson this kernel belongs to.
    pub fn lesson(self) -> Lesson {
        match self {
            Variant::MatmulNaive | Variant::MatmulTiled => Lesson::TiledMatmul,
            Variant::AdjDiffNaive | Variant::AdjDiffShared => Lesson::AdjacentDifference,
            Variant::SmemStride
            | Variant::RowPerThread
            | Variant::TransposeShared
            | Variant::TransposeSwizzle => Lesson::BankConflicts,
            Variant::TransfersAdjDiff | Variant::TransfersMatmul => Lesson::HostTransfers,
            Variant::MyKernel => Lesson::MyKernel,
            Variant::StridedCopy | Variant::TransposeNaive => Lesson::Coalescing,
            Variant::AtomicsGlobal | Variant::AtomicsHierarchical => Lesson::Atomics,
            Variant::BoundaryUnguarded | Variant::BoundaryGuarded => Lesson::BoundaryChecks,
            Variant::OccupancyTiled => Lesson::Occupancy,
            Variant::RooflineNaive | Variant::RooflineTiled => Lesson::Roofline,
            Variant::MemorySpacesTiled => Lesson::MemorySpaces,
            Variant::PitchedTranspose => Lesson::PitchedAllocation,
            Variant::LatencyAdjDiff => Lesson::LatencyHiding,
            Variant::DivergenceSplit | Variant::DivergenceUniform => Lesson::WarpDivergence,
        }
    }

    /// The variant's name within its lesson (`variant=naive`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::MatmulNaive | Variant::AdjDiffNaive => "naive",
            Variant::MatmulTiled => "tiled",
            Variant::AdjDiffShared => "shared",
            Variant::SmemStride => "stride",
            Variant::RowPerThread => "row-per-thread",
            Variant::TransposeShared | Variant::TransposeNaive => "transpose",
            Variant::StridedCopy => "strided-copy",
            Variant::AtomicsGlobal => "global",
            Variant::AtomicsHierarchical => "hierarchical",
            Variant::BoundaryUnguarded => "unguarded",
            Variant::BoundaryGuarded => "guarded",
            Variant::OccupancyTiled | Variant::RooflineTiled | Variant::MemorySpacesTiled => {
                "tiled"
            }
            Variant::PitchedTranspose => "transpose",
            Variant::RooflineNaive => "naive",
            Variant::LatencyAdjDiff => "adjacent-difference",
            Variant::DivergenceSplit => "divergent",
            Variant::DivergenceUniform => "uniform",
            Variant::TransposeSwizzle => "swizzle",
            Variant::TransfersAdjDiff => "adjacent-difference",
            Variant::TransfersMatmul => "matmul",
            Variant::MyKernel => "my-kernel",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Variant::MatmulNaive => "Matrix multiply, naive",
            Variant::MatmulTiled => "Matrix multiply, tiled in shared memory",
            Variant::AdjDiffNaive => "Adjacent difference, two global loads",
            Variant::AdjDiffShared => "Adjacent difference through shared memory",
            Variant::SmemStride => "Shared memory read with a stride",
            Variant::RowPerThread => "32x32 array, each thread a row",
            Variant::StridedCopy => "Strided global copy: coalescing",
            Variant::TransposeNaive => "Transpose, naive (coalescing)",
            Variant::TransposeShared => "Transpose through a shared tile (banks, padding)",
            Variant::AtomicsGlobal => "Sum with one global atomic per thread",
            Variant::AtomicsHierarchical => "Sum with hierarchical atomics",
            Variant::BoundaryUnguarded => "Tiled matmul at n = 1000, no boundary checks",
            Variant::BoundaryGuarded => "Tiled matmul at n = 1000, with boundary checks",
            Variant::OccupancyTiled | Variant::RooflineTiled | Variant::MemorySpacesTiled => {
                "Matrix multiply, tiled"
            }
            Variant::PitchedTranspose => "Transpose, naive: 2-D indexing",
            Variant::RooflineNaive => "Matrix multiply, naive",
            Variant::LatencyAdjDiff => "Adjacent difference over 64 M elements",
            Variant::DivergenceSplit => "Branch on odd and even lanes: every warp splits",
            Variant::DivergenceUniform => "Branch on whole warps: no warp splits",
            Variant::TransposeSwizzle => {
                "Transpose through a swizzled tile: XOR instead of padding"
            }
            Variant::TransfersAdjDiff => "Adjacent difference, with its copies",
            Variant::TransfersMatmul => "Tiled matmul at n = 1000, with its copies",
            Variant::MyKernel => "Your kernel, launched as you write it",
        }
    }

    /// The lesson's source file as shipped in `www/kernels/`.
    pub fn source(self) -> &'static str {
        match self {
            Variant::MatmulNaive | Variant::MatmulTiled => MATMUL,
            Variant::AdjDiffNaive | Variant::AdjDiffShared => ADJ_DIFF,
            Variant::SmemStride | Variant::RowPerThread => BANKS,
            Variant::StridedCopy => COALESCING,
            Variant::TransposeNaive | Variant::TransposeShared => TRANSPOSE,
            Variant::AtomicsGlobal | Variant::AtomicsHierarchical => ATOMICS,
            Variant::BoundaryUnguarded
            | Variant::OccupancyTiled
            | Variant::RooflineNaive
            | Variant::RooflineTiled
            | Variant::MemorySpacesTiled => MATMUL,
            Variant::PitchedTranspose => TRANSPOSE,
            Variant::BoundaryGuarded => BOUNDARY,
            Variant::LatencyAdjDiff => ADJ_DIFF,
            Variant::DivergenceSplit | Variant::DivergenceUniform => DIVERGENCE,
            Variant::TransposeSwizzle => SWIZZLE,
            Variant::TransfersAdjDiff => ADJ_DIFF,
            Variant::TransfersMatmul => BOUNDARY,
            Variant::MyKernel => crate::my_kernel::STARTER,
        }
    }

    /// The `__global__` function the lesson launches.
    pub fn kernel(self) -> &'static str {
        match self {
            Variant::MatmulNaive => "mm_naive",
            Variant::MatmulTiled => "mm_tiled",
            Variant::AdjDiffNaive => "adj_diff_naive",
            Variant::AdjDiffShared => "adj_diff_shared",
            Variant::SmemStride => "smem_stride",
            Variant::RowPerThread => "row_per_thread",
            Variant::StridedCopy => "strided_copy",
            Variant::TransposeNaive => "tr_naive",
            Variant::TransposeShared => "tr_shared",
            Variant::AtomicsGlobal => "sum_global_atomic",
            Variant::AtomicsHierarchical => "sum_hier_atomic",
            Variant::BoundaryUnguarded
            | Variant::OccupancyTiled
            | Variant::RooflineTiled
            | Variant::MemorySpacesTiled => "mm_tiled",
            Variant::PitchedTranspose => "tr_naive",
            Variant::RooflineNaive => "mm_naive",
            Variant::BoundaryGuarded => "mm_tiled_guarded",
            Variant::LatencyAdjDiff => "adj_diff_naive",
            Variant::DivergenceSplit | Variant::DivergenceUniform => "branch",
            Variant::TransposeSwizzle => "tr_swizzle",
            Variant::TransfersAdjDiff => "adj_diff_naive",
            Variant::TransfersMatmul => "mm_tiled_guarded",
            Variant::MyKernel => "saxpy",
        }
    }

    /// Which settings change the launch, so the page can say what to try.
    pub fn settings(self) -> &'static str {
        match self {
            Variant::MatmulNaive => "tile width (the block is TILE x TILE), registers",
            Variant::MatmulTiled => "tile width, padding, registers",
            Variant::AdjDiffNaive | Variant::AdjDiffShared => "threads per block, registers",
            Variant::SmemStride => "stride, threads per block",
            Variant::RowPerThread => "padding",
            Variant::StridedCopy => "stride, threads per block",
            Variant::TransposeNaive => "none (32x8 blocks over 32x32 tiles)",
            Variant::TransposeShared => "padding",
            Variant::AtomicsGlobal | Variant::AtomicsHierarchical => "threads per block",
            Variant::BoundaryUnguarded | Variant::BoundaryGuarded => "tile width",
            Variant::OccupancyTiled => "tile width, padding, registers, device",
            Variant::RooflineNaive | Variant::RooflineTiled => "tile width, device",
            Variant::MemorySpacesTiled => "tile width (the tiles' size)",
            Variant::PitchedTranspose => "none (32x8 blocks over 32x32 tiles)",
            Variant::LatencyAdjDiff => "registers per thread, threads per block",
            Variant::DivergenceSplit | Variant::DivergenceUniform => "threads per block",
            Variant::TransposeSwizzle => "none (the swizzle replaces the padding)",
            Variant::TransfersAdjDiff | Variant::TransfersMatmul => {
                "host memory (pinned or pageable), device"
            }
            Variant::MyKernel => "the kernel, its launch below the editor, registers, device",
        }
    }

    /// How the launch's buffers are laid out for the host-transfers lesson: the matmul's
    /// matrices in pitched rows of n floats (`cudaMallocPitch`, `cudaMemcpy2D`), the rest in one
    /// block each.
    pub fn transfer_layout(self) -> Layout {
        match self {
            Variant::TransfersMatmul => Layout::Pitched {
                row_bytes: u64::from(BOUNDARY_N) * 4,
            },
            _ => Layout::Linear,
        }
    }

    /// The lesson's controls that change this kernel's launch or a view beside it: a fixed
    /// block (the transposes, the row-per-thread kernel) takes no threads-per-block slider, and
    /// the naive matmul has no padding.
    pub fn controls(self) -> Vec<Control> {
        let fixed_block = matches!(
            self,
            Variant::RowPerThread
                | Variant::TransposeShared
                | Variant::TransposeSwizzle
                | Variant::TransposeNaive
                | Variant::PitchedTranspose
        );
        self.lesson()
            .controls()
            .iter()
            .copied()
            .filter(|control| match control {
                Control::Block => !fixed_block,
                Control::Pad => self != Variant::MatmulNaive,
                _ => true,
            })
            .collect()
    }

    /// The setting the sweep chart varies.
    pub fn sweep(self) -> SweepSetting {
        match self {
            Variant::MatmulNaive
            | Variant::MatmulTiled
            | Variant::BoundaryUnguarded
            | Variant::BoundaryGuarded
            | Variant::OccupancyTiled
            | Variant::RooflineNaive
            | Variant::RooflineTiled
            | Variant::MemorySpacesTiled
            | Variant::TransfersMatmul => SweepSetting::Tile,
            Variant::RowPerThread
            | Variant::TransposeShared
            | Variant::TransposeNaive
            | Variant::PitchedTranspose
            | Variant::TransposeSwizzle => SweepSetting::Pad,
            Variant::SmemStride | Variant::StridedCopy => SweepSetting::Stride,
            Variant::LatencyAdjDiff | Variant::MyKernel => SweepSetting::Regs,
            Variant::AdjDiffNaive
            | Variant::AdjDiffShared
            | Variant::AtomicsGlobal
            | Variant::AtomicsHierarchical
            | Variant::DivergenceSplit
            | Variant::DivergenceUniform
            | Variant::TransfersAdjDiff => SweepSetting::Block,
        }
    }

    /// The launches of the sweep chart: this kernel at each value of its swept setting, the
    /// other settings as they are.
    pub fn sweep_launches(self, settings: Settings, source: &str) -> SweepLaunches {
        self.sweep()
            .launches(settings, |settings| self.launch(settings, source))
    }

    /// The launch of this lesson's kernel for the page's settings, running `source` (the lesson's
    /// file, or the student's edit of it).
    pub fn launch(self, settings: Settings, source: &str) -> SimulationInput {
        let state = settings;
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
            Variant::MatmulNaive
            | Variant::MatmulTiled
            | Variant::BoundaryUnguarded
            | Variant::BoundaryGuarded
            | Variant::OccupancyTiled
            | Variant::RooflineNaive
            | Variant::RooflineTiled
            | Variant::MemorySpacesTiled
            | Variant::TransfersMatmul => {
                let n = match self {
                    Variant::BoundaryUnguarded
                    | Variant::BoundaryGuarded
                    | Variant::TransfersMatmul => BOUNDARY_N,
                    _ => MATMUL_N,
                };
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
            Variant::AdjDiffNaive
            | Variant::AdjDiffShared
            | Variant::LatencyAdjDiff
            | Variant::TransfersAdjDiff => {
                let n = match self {
                    // Devices before Kepler launch at most 65,535 blocks along x; the 1-D kernel
                    // then covers as many elements as that many blocks do.
                    Variant::LatencyAdjDiff => {
                        let most_blocks = input.device.max_grid_dim[0];
                        LATENCY_N.min(most_blocks.saturating_mul(block.max(1)))
                    }
                    _ => ADJ_DIFF_N,
                };
                input.grid = Dim3::new(blocks_for(n), 1, 1);
                input.block = Dim3::new(block, 1, 1);
                if self == Variant::AdjDiffShared {
                    input.dyn_smem = block * 4;
                }
                input.args = vec![int("n", n)];
                input.buffers = vec![bytes("result", n.into()), bytes("input", n.into())];
            }
            Variant::SmemStride => {
                // One block per H100 SM, as measured: the shared reads, not the grid, are the lesson.
                let grid = 132;
                input.grid = Dim3::new(grid, 1, 1);
                input.block = Dim3::new(block, 1, 1);
                input.args = vec![int("stride", state.stride), int("iters", 64)];
                input.buffers = vec![bytes("out", u64::from(grid) * u64::from(block))];
            }
            Variant::RowPerThread => {
                let grid = 132;
                input.grid = Dim3::new(grid, 1, 1);
                input.block = Dim3::new(32, 1, 1);
                input.defines = vec![define("PAD", state.pad)];
                input.buffers = vec![
                    bytes("out", u64::from(grid) * 32),
                    bytes("in", u64::from(grid) * 1024),
                ];
            }
            Variant::StridedCopy => {
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
            Variant::TransposeNaive
            | Variant::TransposeShared
            | Variant::PitchedTranspose
            | Variant::TransposeSwizzle => {
                let n = TRANSPOSE_N;
                input.grid = Dim3::new(n / 32, n / 32, 1);
                input.block = Dim3::new(32, 8, 1);
                input.defines = vec![define("PAD", state.pad)];
                input.args = vec![int("n", n)];
                let elements = u64::from(n) * u64::from(n);
                input.buffers = vec![bytes("out", elements), bytes("in", elements)];
            }
            Variant::DivergenceSplit | Variant::DivergenceUniform => {
                // The branch takes `threadIdx.x & split`: bit 0 splits every warp's lanes,
                // bit 5 whole warps.
                let split = match self {
                    Variant::DivergenceSplit => 1,
                    _ => 32,
                };
                let blocks = DIVERGENCE_BLOCKS;
                input.grid = Dim3::new(blocks, 1, 1);
                input.block = Dim3::new(block, 1, 1);
                input.args = vec![int("iters", DIVERGENCE_ITERS), int("split", split)];
                input.buffers = vec![bytes("out", u64::from(blocks) * u64::from(block))];
            }
            Variant::MyKernel => {
                // The lesson's own launch comes from the page's `MyLaunch` (`State::launch`);
                // without one, the starter's.
                input = crate::my_kernel::build(
                    &crate::my_kernel::MyLaunch::default(),
                    source,
                    settings,
                )
                .0;
            }
            Variant::AtomicsGlobal | Variant::AtomicsHierarchical => {
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
    use crate::state::State;
    use memplay_sim::simulate::simulate;

    /// Simulates the lesson at the given settings and returns the named Nsight counter.
    fn check(variant: Variant, state: State, counter: &str, expected: f64) {
        let input = variant.launch(state.settings(), variant.source());
        let report = simulate(&input).unwrap_or_else(|e| panic!("{variant:?}: {e}"));
        let found = report.counters.get(counter).expect("a known counter");
        assert_eq!(found, expected, "{variant:?} {counter}");
    }

    #[test]
    fn every_kernel_belongs_to_the_lesson_that_lists_it_under_its_name() {
        for variant in Variant::ALL {
            let lesson = variant.lesson();
            assert_eq!(lesson.variant_named(variant.name()), Some(variant));
            assert_eq!(
                Lesson::parse(lesson.key()),
                Some((lesson, lesson.variants()[0]))
            );
        }
        assert_eq!(Lesson::parse("fft"), None);
    }

    #[test]
    fn the_pattern_menu_shows_exactly_where_the_bank_map_it_drives_does() {
        for lesson in Lesson::ALL {
            assert_eq!(
                lesson.controls().contains(&Control::Pattern),
                lesson.views().contains(&View::BankMap),
                "{lesson:?}"
            );
        }
    }

    #[test]
    fn every_lesson_simulates_at_the_default_settings() {
        for lesson in Variant::ALL {
            let input = lesson.launch(State::default().settings(), lesson.source());
            // The unguarded kernel of the boundary-checks lesson fails by design (the next test).
            if lesson != Variant::BoundaryUnguarded {
                assert!(simulate(&input).is_ok(), "{lesson:?}");
            }
            assert_eq!(
                Lesson::parse(lesson.old_key()),
                Some((lesson.lesson(), lesson))
            );
        }
    }

    #[test]
    fn without_boundary_checks_a_ragged_n_reads_outside_the_matrix_and_with_them_it_runs() {
        // Seed 004: n = 1000 needs 63 tiles of 16 per side; the last ones hang over the edge.
        let unguarded = Variant::BoundaryUnguarded;
        let input = unguarded.launch(State::default().settings(), unguarded.source());
        assert_eq!((input.grid.x, input.grid.y), (63, 63));
        let error = simulate(&input).expect_err("the unguarded kernel leaves the matrix");
        assert!(error.to_string().contains("outside"), "{error}");
        let guarded = Variant::BoundaryGuarded;
        let report = simulate(&guarded.launch(State::default().settings(), guarded.source()))
            .expect("the guarded kernel runs");
        // Every element of C is written once: n * n stores of 4 bytes, in warp requests.
        assert!(
            report
                .counters
                .get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
                > Some(0.0)
        );
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
            Variant::RowPerThread,
            state.clone(),
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            132.0 * 32.0 * 32.0,
        );
        check(
            Variant::RowPerThread,
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
            Variant::MatmulTiled,
            State::default(),
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            2.0 * n * n * n / 16.0 / 32.0,
        );
    }

    #[test]
    fn the_divergent_variant_issues_both_paths_with_half_its_lanes() {
        // Seed 001: a warp whose lanes disagree runs both loops, 16 lanes each. The uniform
        // variant does the same thread work in half the warp instructions.
        let run = |variant: Variant| {
            let input = variant.launch(State::default().settings(), variant.source());
            simulate(&input)
                .expect("the divergence lesson runs")
                .counters
        };
        let divergent = run(Variant::DivergenceSplit);
        let uniform = run(Variant::DivergenceUniform);
        let paths = divergent.inst_executed / uniform.inst_executed;
        assert!((1.9..2.0).contains(&paths), "{paths}");
        let lanes = |c: &memplay_sim::counters::Counters| c.thread_inst_executed / c.inst_executed;
        assert!(
            (lanes(&divergent) - 16.0).abs() < 0.5,
            "{}",
            lanes(&divergent)
        );
        assert_eq!(lanes(&uniform), 32.0);
        let threads = divergent.thread_inst_executed / uniform.thread_inst_executed;
        assert!((threads - 1.0).abs() < 0.01, "{threads}");
    }

    #[test]
    fn an_xor_swizzle_removes_the_transposes_32_way_conflict_without_a_wasted_column() {
        // tr_shared's column read tile[threadIdx.x][threadIdx.y + j] is a 32-way conflict at
        // PAD = 0 and none at PAD = 1, for one more column (128 bytes) per tile; the swizzled
        // tile reads and writes in one wavefront each at 4,096 bytes.
        let run = |variant: Variant, pad: u32| {
            let state = State {
                pad,
                ..State::default()
            };
            simulate(&variant.launch(state.settings(), variant.source())).expect("runs")
        };
        let per_load = |report: &memplay_sim::simulate::SimulationReport, op: &str| {
            let counter = |name: String| report.counters.get(&name).unwrap_or(0.0);
            counter(format!(
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
            )) / counter(format!("smsp__inst_executed_op_shared_{op}.sum"))
        };
        let unpadded = run(Variant::TransposeShared, 0);
        let padded = run(Variant::TransposeShared, 1);
        let swizzled = run(Variant::TransposeSwizzle, 0);
        assert_eq!(per_load(&unpadded, "ld"), 32.0);
        assert_eq!(per_load(&padded, "ld"), 1.0);
        assert_eq!(per_load(&swizzled, "ld"), 1.0);
        assert_eq!(per_load(&swizzled, "st"), 1.0);
        assert_eq!(swizzled.shared_bytes_per_block, 32 * 32 * 4);
        assert_eq!(padded.shared_bytes_per_block, 32 * 33 * 4);
    }

    #[test]
    fn the_new_lessons_run_on_every_device_at_their_first_settings() {
        // The timing lessons invite a change of device: none of their launches may fail on one.
        for variant in [
            Variant::LatencyAdjDiff,
            Variant::DivergenceSplit,
            Variant::DivergenceUniform,
            Variant::TransposeSwizzle,
            Variant::TransfersAdjDiff,
            Variant::TransfersMatmul,
            Variant::MyKernel,
        ] {
            for device in memplay_sim::DeviceId::ALL {
                let state = State {
                    device,
                    ..State::default()
                };
                let input = variant.launch(state.settings(), variant.source());
                if let Err(error) = simulate(&input) {
                    panic!("{variant:?} on {device}: {error}");
                }
            }
        }
    }
}
