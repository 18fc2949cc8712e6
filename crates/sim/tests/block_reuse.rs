//! Reusing one block's run for the edge classes shown alike (`kernel::block_shift`) changes no
//! result: for generated kernels of the shapes students write (blocks that walk rows and columns
//! of a matrix at shifted addresses, tiles in shared memory, barriers, loops with a launch-wide
//! trip count, branches on the thread index, bounds checks at one end or both, a loop as long as
//! the block index, and now and then a branch on loaded data or a buffer too small), `BlockSampling::EdgeClasses` gives exactly what running every
//! class's block gives (`EdgeClassesEachRun`): the counters, the memory profile, the per-line
//! counters, the fused loads, the prediction and the trace the page's per-line view asks for, or
//! the same error. `EdgeClasses` also runs only one or two warps of each class of warps shown alike
//! (`kernel::block_shift::analyze_warps`), which the generated blocks of 3 to 32 warps exercise:
//! lanes that read their neighbour's tile entry within the warp or across warps, checks on the
//! thread index, and the cc 1.x devices, whose DRAM rows see every moved record. And its warps
//! skip the loop iterations shown alike (`kernel::block_shift::analyze_loop`), which the
//! generated loops exercise: tiles staged in shared memory phase by phase behind a bounds check
//! that turns false part way, with two barriers a phase; a step down; and two loops that must not
//! be skipped, or not past what they change (a doubling step, a register read after the loop).
//! Shuffles and votes (`WarpPart`) join them: where what other lanes hold decides an address or
//! a branch, no run is reused for it; where it decides only the sums, the fast paths stay open.

use memplay_sim::device::{a100, fermi, g80, gt200, h100};
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::lesson_kernels::{matmul_launch, BOUNDARY, MATMUL};
use memplay_sim::simulate::{
    simulate, BlockSampling, SimulationError, SimulationInput, SimulationReport,
};
use memplay_sim::timing::predict;
use memplay_sim::trace::TraceRequest;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::cell::Cell;

/// One generated launch: the kernel's parts and the launch's shape.
#[derive(Clone, Debug)]
struct Shape {
    grid: [u32; 2],
    block: [u32; 2],
    /// Elements between the columns (`x`) and rows (`y`) of blocks.
    step: [u32; 2],
    /// The row length of the matrix the blocks walk.
    width: u32,
    loop_rows: u32,
    guard: Guard,
    tile: Tile,
    /// `for (int i = t; i < {strided_loop}; i += threads) acc += a[i];` (0: none): a loop whose
    /// trip count differs between the lanes of a warp.
    strided_loop: u32,
    /// A loop whose iterations may be shown alike (`kernel::interp`'s `loops`), or one that
    /// must not be.
    phases: Phases,
    lanes_below: u32,
    /// The buffers hold this share of what the launch reads, in eighths (8: all of it).
    eighths: u64,
    device: usize,
    /// The block (x, y, as a share of the grid in eighths) and warp whose trace is asked for,
    /// as the page's per-line view asks, if any.
    trace: Option<([u32; 2], u32)>,
    /// How the kernel is written: as C, or as the C++ courses write it.
    spelling: Spelling,
    /// Warp-level primitives whose results feed the block's sums, addresses and branches.
    warp: WarpPart,
}

/// Shuffles and votes after the strided loop, where every lane of the block runs: what another
/// lane holds, or what the warp's lanes say together, is no shift of the block index, so a run
/// may be reused only where it does not decide what is counted.
#[derive(Clone, Copy, Debug)]
enum WarpPart {
    None,
    /// `acc += a[gy * W + __shfl_xor_sync(0xffffffff, gx, mask)]`: an address another lane of
    /// the warp computed.
    Neighbour {
        mask: u32,
    },
    /// `for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xffffffff, acc, o, width);`: a
    /// reduction of the sums, which decides no access.
    Reduction {
        width: u32,
    },
    /// `acc += __popc(__ballot_sync(0xffffffff, acc > 0.5f)) + __all_sync(0xffffffff, gx < n)`:
    /// votes on the sums and on a bounds check, which decide no access.
    Votes,
    /// `if (__shfl_sync(0xffffffff, gx, 0) < n)`: a branch on lane 0's index, which the warps
    /// of a block and the blocks of the grid take differently.
    Broadcast,
    /// `unsigned b = __ballot_sync(0xffffffff, gx < n);` and a read at `__popc(b)` further on:
    /// an address made of every lane's bounds check.
    Ballot,
    /// `if (__any_sync(0xffffffff, a[gy * W + gx] > 0.9f))`: a branch the warp takes together
    /// on loaded data.
    AnyData,
    /// `if ((threadIdx.x & 31) < lanes)`, and in it a shuffle up and a read at
    /// `__reduce_add_sync(__activemask(), 1)` further on: the lanes taking part counted.
    Partial {
        lanes: u32,
    },
    /// `for (int p = 0; p < count; ++p) acc += a[gy * W + __shfl_sync(0xffffffff, gx + p,
    /// threadIdx.x + 1)];`: a loop whose address each iteration comes from the next lane.
    ShuffledLoop {
        count: u32,
    },
}

/// The same kernel as C, or in C++: the row width a `constexpr` in a namespace, the accumulator
/// a `typedef` made with `static_cast`, the row loop's read in a `switch` with a `default` (one
/// of its cases through a member of a struct of two floats laid over `a`), each barrier in a
/// `__device__` helper that waits at `__syncthreads()` (with a `return` before it that no thread
/// takes), the tile's read-back through a helper that waits and reads a `const float&` to the
/// shared element, called inside the call of one that adds to a `real&`, the phases' read-back
/// through a reference bound in each phase, and the final store through a reference to a
/// struct's member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spelling {
    C,
    Cpp,
}

/// Whether the block stages a tile of `a` in shared memory, and which neighbour each thread reads
/// back from it after the barrier.
#[derive(Clone, Copy, Debug)]
enum Tile {
    None,
    /// `s[(t + 1) % threads]`: the next thread's, across warps (a signed remainder).
    Next,
    /// `s[t - (t & 31) + ((t + 1) & 31)]`: the next lane's within the warp.
    NextLane,
}

/// Loops for the iterations shown alike: a warp runs one and skips the ones after it that come
/// out alike. The last three must not be skipped, or not past what they change.
#[derive(Clone, Copy, Debug)]
enum Phases {
    None,
    /// `for (int p = 0; p < count; ++p)`: a tile of `a` staged in shared memory per phase, `step`
    /// elements further each phase, with a bounds check (`p * step + threadIdx.x < n`) that
    /// turns false in some lanes of the later phases, and two barriers a phase; each thread
    /// reads its pair's entry back.
    Tiles {
        count: u32,
        step: u32,
    },
    /// `for (int j = count; j > 0; j -= 3)`: a step down, an index computed anew each iteration
    /// in a register of its own, and no fence: its iterations are reused where no load of one
    /// can reuse another's, with the last 16 passing through everything.
    Down {
        count: u32,
    },
    /// `for (int j = 1; j < count; j *= 2)`: not a constant step, so no iteration is like the
    /// next.
    Doubling {
        count: u32,
    },
    /// `if (j < 3) last = j;` in the loop, `last` read after it for an address: the loop's
    /// registers hold what its last iteration run left.
    LastAfter {
        count: u32,
    },
    /// A loop over phases, each staging an element per thread in shared memory between two
    /// barriers, with a loop inside it (`for (int k = 0; k < bound; ++k)`) that reads the
    /// shared array and `a` at `k` further on: a warp skips the inner loop's iterations in the
    /// phases it runs, also while it captures a phase to skip the ones after it.
    Nested {
        count: u32,
        inner: u32,
        step: u32,
        bound: InnerBound,
        /// `if (p * step + k + threadIdx.x < n)` around the inner loop's body: a guard that
        /// turns within the inner loop.
        guarded: bool,
        /// `if (k < 2) last = k;` in the inner loop and `last` read after the phases for an
        /// address: the inner loop's registers hold what its last iteration run left.
        last_after: bool,
        /// `for (int p = 1; p < count; p *= 2)`: phases not alike, around an inner loop
        /// that is.
        doubling: bool,
    },
}

/// How many iterations the inner loop of `Phases::Nested` makes.
#[derive(Clone, Copy, Debug)]
enum InnerBound {
    /// A constant, `inner`.
    Constant,
    /// `p + inner`: one more each phase.
    Phase,
    /// `inner + blockIdx.x % 2`: one more in every other block.
    Block,
}

#[derive(Clone, Copy, Debug)]
enum Guard {
    None,
    /// `if (gx < n)`: a bounds check on the block index.
    Bounds,
    /// `if (gx > 0 && gy <= n / 2)`: a check at both ends.
    BothEnds,
    /// `for (int j = 0; j < blockIdx.x; ++j)`: a loop as long as the block index.
    BlockLoop,
    /// `if (a[threadIdx.x] > 0.5f)`: a branch on loaded data.
    Data,
    /// `acc += 8 / (int)(a[...] * 300.0f)`: an integer division by loaded data, which stops the
    /// blocks whose data holds a value below 1/300 there (about one block in five).
    DataDivide,
    /// `gx` assigned again in straight-line code (`gx = blockIdx.x * step + threadIdx.x + 1`)
    /// before the store.
    Reassign,
    /// `gx` assigned again in some lanes only (`if (threadIdx.x < 4) gx = blockIdx.y;`).
    ReassignSome,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        (1u32..=6, 1u32..=4),
        (
            prop::sample::select(vec![8u32, 16, 32, 64, 64, 128, 128, 256]),
            1u32..=4,
        ),
        (
            prop::sample::select(vec![8u32, 16, 24, 32, 64, 96]),
            prop::sample::select(vec![1u32, 2, 4, 8]),
        ),
        prop::sample::select(vec![256u32, 384, 1000, 1024]),
        0u32..=3,
        prop::sample::select(vec![
            Guard::None,
            Guard::Bounds,
            Guard::Bounds,
            Guard::BothEnds,
            Guard::BlockLoop,
            Guard::Data,
            Guard::DataDivide,
            Guard::Reassign,
            Guard::ReassignSome,
        ]),
        (
            prop::sample::select(vec![Tile::None, Tile::Next, Tile::NextLane]),
            prop::sample::select(vec![0u32, 0, 100, 180]),
            prop::sample::select(vec![
                Phases::None,
                Phases::None,
                Phases::Tiles { count: 5, step: 8 },
                Phases::Tiles {
                    count: 12,
                    step: 32,
                },
                Phases::Tiles {
                    count: 40,
                    step: 16,
                },
                Phases::Down { count: 120 },
                Phases::Doubling { count: 100 },
                Phases::LastAfter { count: 9 },
                Phases::Nested {
                    count: 6,
                    inner: 8,
                    step: 8,
                    bound: InnerBound::Constant,
                    guarded: false,
                    last_after: false,
                    doubling: false,
                },
                Phases::Nested {
                    count: 9,
                    inner: 5,
                    step: 16,
                    bound: InnerBound::Phase,
                    guarded: true,
                    last_after: false,
                    doubling: false,
                },
                Phases::Nested {
                    count: 40,
                    inner: 12,
                    step: 4,
                    bound: InnerBound::Block,
                    guarded: true,
                    last_after: false,
                    doubling: true,
                },
                Phases::Nested {
                    count: 7,
                    inner: 6,
                    step: 8,
                    bound: InnerBound::Constant,
                    guarded: false,
                    last_after: true,
                    doubling: false,
                },
            ]),
        ),
        prop::sample::select(vec![0u32, 8, 20, 64, 100]),
        prop::sample::select(vec![8u64, 8, 8, 6]),
        0usize..5,
        (
            prop::option::of(((0u32..8, 0u32..8), 0u32..2)),
            prop::sample::select(vec![Spelling::C, Spelling::Cpp]),
        ),
    )
        .prop_map(
            |(
                grid,
                block,
                step,
                width,
                loop_rows,
                guard,
                (tile, strided_loop, phases),
                lanes_below,
                eighths,
                device,
                (trace, spelling),
            )| {
                Shape {
                    grid: [grid.0, grid.1],
                    block: [block.0, block.1],
                    step: [step.0, step.1],
                    width,
                    loop_rows,
                    guard,
                    tile,
                    strided_loop,
                    phases,
                    lanes_below,
                    eighths,
                    device,
                    trace: trace.map(|((x, y), warp)| ([x, y], warp)),
                    spelling,
                    warp: WarpPart::None,
                }
            },
        )
}

/// A shape with warp-level primitives (`WarpPart`), never `WarpPart::None`, on the H100 or the
/// A100: the older presets have no shuffles (compute capability 3.0) and no `__reduce_*_sync`
/// (8.0), and refuse the launch.
fn warp_shape() -> impl Strategy<Value = Shape> {
    let part = prop_oneof![
        1 => prop::sample::select(vec![1u32, 2, 16, 31]).prop_map(|mask| WarpPart::Neighbour { mask }),
        2 => prop::sample::select(vec![8u32, 32]).prop_map(|width| WarpPart::Reduction { width }),
        2 => Just(WarpPart::Votes),
        1 => Just(WarpPart::Broadcast),
        1 => Just(WarpPart::Ballot),
        1 => Just(WarpPart::AnyData),
        1 => prop::sample::select(vec![5u32, 16, 31]).prop_map(|lanes| WarpPart::Partial { lanes }),
        1 => prop::sample::select(vec![4u32, 12]).prop_map(|count| WarpPart::ShuffledLoop { count }),
    ];
    (shape(), part).prop_map(|(shape, warp)| Shape {
        warp,
        device: shape.device % 2,
        ..shape
    })
}

impl Shape {
    fn source(&self) -> String {
        let [sx, sy] = self.step;
        let w = self.width;
        let threads = self.block[0] * self.block[1];
        let mut body = format!(
            "  int gx = blockIdx.x * {sx} + threadIdx.x;\n  int gy = blockIdx.y * {sy} + threadIdx.y;\n  float acc = 0.0f;\n"
        );
        let cpp = self.spelling == Spelling::Cpp;
        body += &if cpp {
            format!(
                "  for (auto j = 0; j < {}; ++j) {{\n    switch (j & 1) {{\n    case 1: acc += a[(gy + j) * {w} + gx]; break;\n    default: acc += a[(gy + j) * {w} + gx];\n    }}\n  }}\n",
                self.loop_rows
            )
        } else {
            format!(
                "  for (int j = 0; j < {}; ++j) acc += a[(gy + j) * {w} + gx];\n",
                self.loop_rows
            )
        };
        let neighbour = match self.tile {
            Tile::None => None,
            Tile::Next => Some(format!("(t + 1) % {threads}")),
            Tile::NextLane => Some("t - (t & 31) + ((t + 1) & 31)".to_string()),
        };
        if let Some(neighbour) = neighbour {
            let read = if cpp {
                format!("add_to(acc, synced_read(s[{neighbour}]));")
            } else {
                format!("__syncthreads();\n  acc += s[{neighbour}];")
            };
            body += &format!(
                "  __shared__ float s[{threads}];\n  int t = threadIdx.y * blockDim.x + threadIdx.x;\n  s[t] = a[gy * {w} + gx];\n  {read}\n  __syncthreads();\n"
            );
        }
        if self.strided_loop > 0 {
            body += &format!(
                "  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < {}; i += {threads}) acc += a[i];\n",
                self.strided_loop
            );
        }
        const FULL: &str = "0xffffffff";
        body += &match self.warp {
            WarpPart::None => String::new(),
            WarpPart::Neighbour { mask } => format!(
                "  acc += a[gy * {w} + __shfl_xor_sync({FULL}, gx, {mask})];\n"
            ),
            WarpPart::Reduction { width } => format!(
                "  for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync({FULL}, acc, o, {width});\n"
            ),
            WarpPart::Votes => format!(
                "  acc += __popc(__ballot_sync({FULL}, acc > 0.5f)) + __all_sync({FULL}, gx < n);\n"
            ),
            WarpPart::Broadcast => format!(
                "  if (__shfl_sync({FULL}, gx, 0) < n) acc += a[gy * {w} + gx + 2];\n"
            ),
            WarpPart::Ballot => format!(
                "  unsigned b = __ballot_sync({FULL}, gx < n);\n  acc += a[gy * {w} + gx + __popc(b)];\n"
            ),
            WarpPart::AnyData => format!(
                "  if (__any_sync({FULL}, a[gy * {w} + gx] > 0.9f)) acc += a[gy * {w} + gx + 1];\n"
            ),
            WarpPart::Partial { lanes } => format!(
                "  if ((threadIdx.x & 31) < {lanes}) {{\n    acc += __shfl_up_sync(__activemask(), acc, 1);\n    acc += a[gy * {w} + gx + __reduce_add_sync(__activemask(), 1)];\n  }}\n"
            ),
            WarpPart::ShuffledLoop { count } => format!(
                "  for (int p = 0; p < {count}; ++p) acc += a[gy * {w} + __shfl_sync({FULL}, gx + p, threadIdx.x + 1)];\n"
            ),
        };
        body += &match self.phases {
            Phases::None => String::new(),
            Phases::Tiles { count, step } => format!(
                "  __shared__ float ph[{threads}];\n  int q = threadIdx.y * blockDim.x + threadIdx.x;\n  for (int p = 0; p < {count}; ++p) {{\n    if (p * {step} + threadIdx.x < n) ph[q] = a[gy * {w} + blockIdx.x * {sx} + p * {step} + threadIdx.x];\n    else ph[q] = 0.0f;\n    __syncthreads();\n    acc += ph[q - (q & 1) + 1 - (q & 1)];\n    __syncthreads();\n  }}\n"
            ),
            Phases::Down { count } => format!(
                "  for (int j = {count}; j > 0; j -= 3) {{\n    int at = gy * {w} + gx + j;\n    acc += a[at];\n  }}\n"
            ),
            Phases::Doubling { count } => {
                format!("  for (int j = 1; j < {count}; j *= 2) acc += a[gy * {w} + gx + j];\n")
            }
            Phases::Nested {
                count,
                inner,
                step,
                bound,
                guarded,
                last_after,
                doubling,
            } => {
                let outer = if doubling {
                    format!("for (int p = 1; p < {count}; p *= 2)")
                } else {
                    format!("for (int p = 0; p < {count}; ++p)")
                };
                let bound = match bound {
                    InnerBound::Constant => format!("{inner}"),
                    InnerBound::Phase => format!("p + {inner}"),
                    InnerBound::Block => format!("{inner} + blockIdx.x % 2"),
                };
                let read = format!("acc += ph[q + k] * a[gy * {w} + gx + p * {step} + k];");
                let read = if guarded {
                    format!("if (p * {step} + k + threadIdx.x < n) {{ {read} }}")
                } else {
                    read
                };
                let (last_in, last_out) = if last_after {
                    (
                        "      if (k < 2) last = k;\n".to_string(),
                        format!("  acc += a[gy * {w} + gx + last * 8];\n"),
                    )
                } else {
                    (String::new(), String::new())
                };
                format!(
                    "  __shared__ float ph[{}];\n  int q = threadIdx.y * blockDim.x + threadIdx.x;\n  int last = 0;\n  {outer} {{\n    ph[q] = a[gy * {w} + gx + p * {step}];\n    __syncthreads();\n    for (int k = 0; k < {bound}; ++k) {{\n      {read}\n{last_in}    }}\n    __syncthreads();\n  }}\n{last_out}",
                    threads + inner + count + 1
                )
            }
            Phases::LastAfter { count } => format!(
                "  int last = 0;\n  for (int j = 0; j < {count}; ++j) {{\n    acc += a[gy * {w} + gx + j];\n    if (j < 3) last = j;\n  }}\n  acc += a[gy * {w} + gx + last * 8];\n"
            ),
        };
        let store = format!("out[gy * {w} + gx] = acc;");
        let store = if self.lanes_below > 0 {
            format!("if (threadIdx.x < {}) {store}", self.lanes_below)
        } else {
            store
        };
        body += &match self.guard {
            Guard::None => format!("  {store}\n"),
            Guard::Bounds => format!("  if (gx < n) {{ {store} }}\n"),
            Guard::BothEnds => format!("  if (gx > 0 && gy <= n / 2) {{ {store} }}\n"),
            Guard::BlockLoop => {
                format!("  for (int j = 0; j < blockIdx.x; ++j) acc += 1.0f;\n  {store}\n")
            }
            Guard::Data => format!("  if (a[threadIdx.x] > 0.5f) {{ {store} }}\n"),
            Guard::Reassign => {
                format!("  gx = blockIdx.x * {sx} + threadIdx.x + 1;\n  {store}\n")
            }
            Guard::ReassignSome => {
                format!("  if (threadIdx.x < 4) gx = blockIdx.y;\n  {store}\n")
            }
            Guard::DataDivide => {
                format!("  acc += 8 / (int)(a[gy * {w} + gx] * 300.0f);\n  {store}\n")
            }
        };
        if cpp {
            // The kernel is a template instantiated at the launch (`k<float>`), its width the
            // default argument: an instantiation must count exactly as the C kernel.
            let body = body
                .replace(&format!(" * {w} + "), " * W_T + ")
                .replace("__syncthreads();", "tile_sync();")
                .replace("float acc = 0.0f;", "real acc = static_cast<real>(0);")
                .replace(
                    "case 1: acc += a[(gy + j) * W_T + gx];",
                    "case 1: acc += reinterpret_cast<const Cell*>(a)[((gy + j) * W_T + gx) >> 1].lo;",
                )
                .replace(
                    "out[gy * W_T + gx] = acc;",
                    "{ float &o = reinterpret_cast<Cell*>(out)[(gy * W_T + gx) >> 1].lo; o = acc; }",
                )
                .replace(
                    "acc += ph[q - (q & 1) + 1 - (q & 1)];",
                    "const float &pair = ph[q - (q & 1) + 1 - (q & 1)]; acc += pair;",
                );
            return format!(
                "namespace grid_c {{ constexpr int W = {w}; }}\ntypedef float real;\n\
                 struct Cell {{ float lo, hi; }};\n\
                 __device__ void tile_sync() {{ if (threadIdx.x >= 1024) return; __syncthreads(); }}\n\
                 __device__ float synced_read(const float &v) {{ __syncthreads(); return v; }}\n\
                 __device__ void add_to(real &sum, float v) {{ sum += v; }}\n\
                 template <typename T, int W_T = grid_c::W>\n\
                 __global__ void k(const T* a, T* out, int n) {{\n{body}}}\n"
            );
        }
        format!("__global__ void k(const float* a, float* out, int n) {{\n{body}}}\n")
    }

    fn input(&self, sampling: BlockSampling) -> SimulationInput {
        let device = [h100(), a100(), fermi(), gt200(), g80()][self.device].clone();
        let kernel = if self.spelling == Spelling::Cpp {
            "k<float>"
        } else {
            "k"
        };
        let mut input = SimulationInput::new(&self.source(), kernel, device);
        input.grid = Dim3::new(self.grid[0], self.grid[1], 1);
        input.block = Dim3::new(self.block[0], self.block[1], 1);
        input.args = vec![("n".to_string(), Value::Int(i64::from(self.width) / 2))];
        let rows = u64::from((self.grid[1] - 1) * self.step[1] + self.block[1] + self.loop_rows);
        let bytes = rows * u64::from(self.width) * 4 * self.eighths / 8;
        input.buffers = vec![("a".to_string(), bytes), ("out".to_string(), bytes)];
        input.regs = 16;
        input.sampling = sampling;
        input.trace = self.trace.map(|([x, y], warp)| TraceRequest {
            block: [x * self.grid[0] / 8, y * self.grid[1] / 8, 0],
            warp,
        });
        input
    }
}

/// What a reusing run took of the fast paths.
#[derive(Clone, Copy, Default)]
struct FastPaths {
    /// A block's run was reused for other classes.
    reused: bool,
    /// Warps were shown alike.
    warps: bool,
    /// Loop iterations were skipped.
    loops: bool,
}

/// Whether `shape` gives the same answer both ways; the error says how it differs. Also says
/// which fast paths the reusing run took.
fn same_answer(shape: &Shape) -> Result<FastPaths, String> {
    let reused = simulate(&shape.input(BlockSampling::EdgeClasses));
    let each = simulate(&shape.input(BlockSampling::EdgeClassesEachRun));
    match (reused, each) {
        (Ok(r), Ok(e)) => {
            let differs = [
                ("counters", r.counters != e.counters),
                ("memory profile", r.memory != e.memory),
                ("per-line counters", r.lines != e.lines),
                ("fused loads", r.fused_loads != e.fused_loads),
                ("prediction", predict(&r) != predict(&e)),
                ("trace", r.trace != e.trace),
            ];
            if let Some((what, _)) = differs.iter().find(|(_, d)| *d) {
                return Err(format!("the {what} differ"));
            }
            let blocks: u64 = r.sampled_blocks.iter().map(|b| b.scale).sum();
            if blocks != r.grid_blocks {
                return Err(format!(
                    "the runs stand for {blocks} of {} blocks",
                    r.grid_blocks
                ));
            }
            Ok(FastPaths {
                reused: r.sampled_blocks.iter().any(|b| !b.reused_for.is_empty()),
                warps: r.sampled_blocks.iter().any(|b| b.warps_shown_alike > 0),
                loops: r.sampled_blocks.iter().any(|b| b.iterations_skipped > 0),
            })
        }
        (Err(r), Err(e)) => {
            let budget = matches!(e, SimulationError::StepBudget { .. });
            if budget || r.to_string() == e.to_string() {
                Ok(FastPaths::default())
            } else {
                Err(format!("the errors differ: {r} / {e}"))
            }
        }
        (Ok(_), Err(e)) => Err(format!("only the run of every class fails: {e}")),
        (Err(r), Ok(_)) => Err(format!("only the reusing run fails: {r}")),
    }
}

#[test]
fn reusing_a_run_for_classes_shown_alike_changes_no_result() {
    let config = Config {
        cases: 320,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
    let reused_cases = Cell::new(0u32);
    let warp_cases = Cell::new(0u32);
    let loop_cases = Cell::new(0u32);
    let result = runner.run(&shape(), |shape| {
        let paths = same_answer(&shape)
            .map_err(|why| TestCaseError::fail(format!("{why}\n{}", shape.source())))?;
        reused_cases.set(reused_cases.get() + u32::from(paths.reused));
        warp_cases.set(warp_cases.get() + u32::from(paths.warps));
        loop_cases.set(loop_cases.get() + u32::from(paths.loops));
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    // The generator is for the fast path: a good share of its cases must take it.
    assert!(
        reused_cases.get() >= 20,
        "only {} of 320 cases reused a run",
        reused_cases.get()
    );
    assert!(
        warp_cases.get() >= 16,
        "only {} of 320 cases showed warps alike",
        warp_cases.get()
    );
    assert!(
        loop_cases.get() >= 16,
        "only {} of 320 cases skipped loop iterations",
        loop_cases.get()
    );
}

#[test]
fn reusing_a_run_changes_no_result_where_shuffles_and_votes_feed_sums_addresses_and_branches() {
    let config = Config {
        cases: 320,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[37; 32]));
    let fast = Cell::new(0u32);
    let result = runner.run(&warp_shape(), |shape| {
        let paths = same_answer(&shape)
            .map_err(|why| TestCaseError::fail(format!("{why}\n{}", shape.source())))?;
        fast.set(fast.get() + u32::from(paths.reused || paths.warps || paths.loops));
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    // Where the primitives decide only sums (`Reduction`, `Votes`), the fast paths stay open.
    assert!(
        fast.get() >= 32,
        "only {} of 320 cases took a fast path",
        fast.get()
    );
}

#[test]
fn a_tiled_matmul_on_a_grid_of_32_by_32_runs_one_block() {
    let input = matmul(MATMUL, "mm_tiled", 1024, 32, 0);
    let report = simulate(&input).expect("the launch simulates");
    assert_eq!(report.sampled_blocks.len(), 1);
    assert_eq!(report.sampled_blocks[0].reused_for.len(), 8);
    assert_eq!(report.sampled_blocks[0].scale, 1024);
    // Warp w of a block reads row w of each tile: the proof gives each access's move, one warp
    // runs, and the other 31 are its records, moved a row at a time.
    assert_eq!(report.sampled_blocks[0].warps_shown_alike, 31);
}

#[test]
fn tiled_matmuls_with_fused_and_reused_loads_count_the_same_with_warps_shown_alike() {
    // The tiled matmul's reads of `sa` are fused four at a time (`compile_effects`), and the
    // warps that did not run reuse what the fuser made of their class's first warp: the result
    // must be that of running every warp, fused loads included.
    for (tile, pad) in [(8, 0), (16, 0), (16, 1), (32, 0), (32, 1)] {
        let mut input = matmul(MATMUL, "mm_tiled", 256, tile, pad);
        input.trace = Some(TraceRequest {
            block: [1, 1, 0],
            warp: 3,
        });
        let label = format!("tile {tile}, pad {pad}");
        let reused = reused_and_checked(input, &label);
        // Blocks of 8 x 8 threads hold two warps: both run, and nothing is shown alike.
        let shown_alike = reused
            .sampled_blocks
            .iter()
            .any(|b| b.warps_shown_alike > 0);
        assert_eq!(shown_alike, tile > 8, "{label}");
    }
}

#[test]
fn a_guarded_matmul_whose_last_tile_splits_the_warps_runs_two_leaders_a_block_through_two_phases() {
    // With n = 200 in tiles of 16 the last phase reads rows 192 to 207 of `b`: the first four
    // warps of every block (rows 192 to 199) read them, the last four (rows 200 to 207) store
    // zeros instead. Warp 0 leads warps 1 to 3 and warp 4 leads warps 5 to 7; the totals are
    // those of running every warp.
    let mut input = matmul(BOUNDARY, "mm_tiled_guarded", 200, 16, 0);
    input.trace = Some(TraceRequest {
        block: [12, 12, 0],
        warp: 5,
    });
    let reused = reused_and_checked(input, "guarded matmul, n = 200");
    let shown_alike: Vec<u32> = reused
        .sampled_blocks
        .iter()
        .map(|b| b.warps_shown_alike)
        .collect();
    assert!(shown_alike.iter().all(|&w| w == 6), "{shown_alike:?}");
    // Its 13 phases move the tiles alike up to the last, partly outside the matrix: each leader
    // runs the first phase, skips the next 11 and runs the last. In each phase it runs, its `k`
    // loop runs its first four iterations, whose reads of `sa` nvcc fuses into one 16-byte load,
    // and skips the other 12 four at a time.
    let skipped = skipped_per_block(&reused);
    assert!(
        skipped.iter().all(|&i| i == 2 * (11 + 2 * 12)),
        "{skipped:?}"
    );
}

#[test]
fn a_load_after_a_skipped_loop_reuses_what_its_last_iteration_loaded_only_without_a_fence_between()
{
    // Each phase stores its element of a tile (a store first, so that load reuse keeps nothing
    // from one phase into the next), waits, and reads a neighbour's; after the loop the same
    // read again. Without the closing `__syncthreads()` the last phase's read is still held
    // (load reuse, `compile_effects`), so the last skipped phase passes through everything and
    // the read after the loop finds it; with it, nothing after the loop can, and no phase need
    // pass through (`IterationFences::after_last_record`). Either way the counts are those of
    // running every iteration; taking the second case's way in the first fails.
    let source = "__global__ void k(const float* a, float* out, int n) {
  __shared__ float s[64];
  float acc = 0.0f;
  int t = threadIdx.x;
  for (int p = 0; p < 8; ++p) {
    s[t] = (float)(p + t);
    __syncthreads();
    acc += s[(t + 1) % 64];
#if FENCE
    __syncthreads();
#endif
  }
  acc += s[(t + 1) % 64];
  out[t] = acc + a[t] + n;
}
";
    let mut shared_loads = Vec::new();
    for fence in ["0", "1"] {
        let mut input = SimulationInput::new(source, "k", h100());
        input.defines = vec![("FENCE".to_string(), fence.to_string())];
        input.grid = Dim3::new(4, 1, 1);
        input.block = Dim3::new(64, 1, 1);
        input.args = vec![("n".to_string(), Value::Int(1))];
        input.buffers = vec![("a".to_string(), 4 * 8 * 64), ("out".to_string(), 4 * 64)];
        let reused = reused_and_checked(input, &format!("FENCE={fence}"));
        let skipped: u64 = skipped_per_block(&reused).iter().sum();
        assert!(skipped > 0, "FENCE={fence}: no iteration was skipped");
        shared_loads.push(reused.counters.get("smsp__inst_executed_op_shared_ld.sum"));
    }
    // The read after the loop is reused where no fence lies between it and the last phase's:
    // 4 blocks of 2 warps read 8 times in the loop, and once more after it only with the fence.
    assert_eq!(shared_loads, [Some(64.0), Some(72.0)]);
}

#[test]
fn a_nested_loop_skipped_in_a_captured_iteration_leaves_load_reuse_holding_its_last_loads() {
    // Each of the 4 iterations of `p` reads the same 12 words of `s` in its inner loop, with no
    // store or fence between: the compiled code loads them in the first and reuses them in the
    // other three (load reuse, `compile_effects`, keeps up to 16). In the iteration of `p` a
    // warp captures, the inner loop's skipped iterations are logged from the ones it ran
    // (`RecordSink::nested_iterations_repeated`), and its last ones must still leave load reuse
    // holding the 12 values, as a full run does.
    let source = "__global__ void k(float* out, int n) {
  __shared__ float s[128];
  int t = threadIdx.x;
  s[t] = (float)t;
  s[t + 64] = (float)(n - t);
  __syncthreads();
  float acc = 0.0f;
  for (int p = 0; p < 4; ++p) {
    for (int j = 0; j < 12; ++j) acc += s[t + j];
  }
  out[t] = acc;
}
";
    let mut input = SimulationInput::new(source, "k", h100());
    input.grid = Dim3::new(4, 1, 1);
    input.block = Dim3::new(64, 1, 1);
    input.args = vec![("n".to_string(), Value::Int(1))];
    input.buffers = vec![("out".to_string(), 4 * 64)];
    let reused = reused_and_checked(input, "a nested loop of 12 reads, four times");
    let skipped: u64 = skipped_per_block(&reused).iter().sum();
    assert!(skipped > 0, "no iteration was skipped");
    // 4 blocks of 2 warps issue the 12 reads once each.
    assert_eq!(
        reused.counters.get("smsp__inst_executed_op_shared_ld.sum"),
        Some(8.0 * 12.0)
    );
}

#[test]
fn a_bounds_check_in_a_nested_loop_stops_the_phases_skipped_where_its_last_iteration_turns() {
    // The check `p * 8 + k < n` moves by 8 a phase and by 1 an iteration of `k`. In the first
    // phase each warp runs `k = 0` and skips `k = 1` to 7; the phases after it come out alike
    // only as long as the check holds at `k = 7` too, up to phase 6 (with n = 60 it turns at
    // phase 7, k = 4), so phase 7 must run. The phases skipped count the differences of the
    // inner iterations skipped; counting only those run would skip phase 7 as well.
    let source = "__global__ void k(const float* a, float* out, int n) {
  float acc = 0.0f;
  for (int p = 0; p < 16; ++p) {
    for (int k = 0; k < 8; ++k) {
      if (p * 8 + k < n) acc += a[p * 8 + k + threadIdx.x];
    }
  }
  out[threadIdx.x] = acc;
}
";
    let mut input = SimulationInput::new(source, "k", h100());
    input.grid = Dim3::new(2, 1, 1);
    input.block = Dim3::new(64, 1, 1);
    input.args = vec![("n".to_string(), Value::Int(60))];
    input.buffers = vec![("a".to_string(), 4 * 256), ("out".to_string(), 4 * 64)];
    let reused = reused_and_checked(input, "a bounds check in a nested loop");
    // Per warp of the one block run: 7 iterations of `k` skipped in phase 0, phases 1 to 6
    // skipped, 3 iterations in phase 7 (k = 1 to 3, before the check turns), and 7 in each of
    // phases 8 to 15, where the check is false throughout.
    let skipped = skipped_per_block(&reused);
    assert_eq!(skipped, [2 * (7 + 6 + 3 + 8 * 7)]);
}

#[test]
fn a_loop_whose_reads_are_fused_in_pairs_is_skipped_two_iterations_at_a_time() {
    // At tile 10 a row of `sa` is 40 bytes, so nvcc fuses `sa[ty][k]` and `sa[ty][k + 1]` into
    // one 8-byte load: a warp captures the `k` loop two iterations at a time, so that the reads
    // of every pair it skips pair up as in the two it ran. With n = 95 the last of the 10 phases
    // is partly outside the matrix and runs in full; its `k` loop, which no captured phase
    // encloses, hands the iterations it skips to the counting at once. The traced warp is in a
    // block of the last row and column, where the guards turn.
    let mut input = matmul(BOUNDARY, "mm_tiled_guarded", 95, 10, 0);
    input.trace = Some(TraceRequest {
        block: [9, 9, 0],
        warp: 2,
    });
    let reused = reused_and_checked(input, "guarded matmul, n = 95, tile 10");
    let skipped = skipped_per_block(&reused);
    // Per block, each of its 4 warps skips phases 1 to 8, and in phases 0 and 9 runs `k` = 0 and
    // 1 and skips the other 8 (one at a time, it would run `k` = 0 and skip 9).
    assert_eq!(skipped, [4 * (8 + 2 * 8); 9]);
}

/// A matmul `kernel` of `source` on the H100 (`matmul_launch`), with `PAD` floats of padding per
/// tile row where the kernel has it.
fn matmul(source: &str, kernel: &str, n: u32, tile: u32, pad: u32) -> SimulationInput {
    let mut input = matmul_launch(source, kernel, n, tile, h100());
    input.defines.push(("PAD".to_string(), pad.to_string()));
    input
}

/// The loop iterations each sampled block's warps skipped, in the report's order.
fn skipped_per_block(report: &SimulationReport) -> Vec<u64> {
    report
        .sampled_blocks
        .iter()
        .map(|b| b.iterations_skipped)
        .collect()
}

/// Simulates `input` with runs reused (`EdgeClasses`) and with every class run
/// (`EdgeClassesEachRun`), asserts that both count the same (counters, memory profile, per-line
/// counters, fused loads, trace and prediction), and returns the report that reused runs.
fn reused_and_checked(mut input: SimulationInput, label: &str) -> SimulationReport {
    input.sampling = BlockSampling::EdgeClasses;
    let reused = simulate(&input).expect("the launch simulates");
    input.sampling = BlockSampling::EdgeClassesEachRun;
    let each = simulate(&input).expect("the launch simulates");
    assert_eq!(reused.counters, each.counters, "{label}");
    assert_eq!(reused.memory, each.memory, "{label}");
    assert_eq!(reused.lines, each.lines, "{label}");
    assert_eq!(reused.fused_loads, each.fused_loads, "{label}");
    assert_eq!(reused.trace, each.trace, "{label}");
    assert_eq!(predict(&reused), predict(&each), "{label}");
    reused
}
