//! Warp-level primitives for the fuzz target, and a reference that runs them lane by lane.
//!
//! A `WarpProgram` is code over four `unsigned` registers per thread made of the primitives of
//! the CUDA C++ Programming Guide's "Warp Shuffle Functions", "Warp Vote Functions", "Warp Match
//! Functions" and "Warp Reduce Functions": `__shfl_sync`, `__shfl_up_sync`, `__shfl_down_sync`
//! and `__shfl_xor_sync` (on `int`, `unsigned`, `float` and `unsigned long long`, with and
//! without `width`), `__ballot_sync`, `__any_sync`, `__all_sync`, `__activemask()`,
//! `__match_any_sync` and `__reduce_add_sync`, `__reduce_min_sync` and `__reduce_max_sync` (on
//! `int` and `unsigned`), inside branches and loops. Converged code names the full mask; code in a branch names `__activemask()`, so that
//! every generated program is well defined:
//!
//! - a branch on `(threadIdx.x / segment) % 3` leaves whole segments of `segment` lanes active,
//!   and the shuffles inside it keep their `width` within the segment (and a butterfly's lane
//!   mask below it), so that no lane reads a lane that does not take part, whose value the Guide
//!   leaves undefined;
//! - a branch on a register's value, or a loop that lanes leave by `break` at different
//!   iterations, leaves any lanes active: no shuffle runs inside it, only the votes, matches and
//!   reductions, which combine the lanes that take part.
//!
//! `run_warp` executes a program for one warp lane by lane, as the Guide and PTX's `shfl.sync`
//! define each primitive: a source lane outside the caller's `width` segment (below its start
//! for `__shfl_up_sync`, past its end for `__shfl_down_sync` and `__shfl_xor_sync`) gives the
//! caller its own value; `__shfl_sync` reads lane `srcLane % width` of the caller's segment; a
//! butterfly may read an earlier segment. A lane or offset is read from its operand's low five
//! bits, as PTX's `shfl.sync` reads it (`bval[4:0] = b[4:0]`): a delta of 33 moves by 1. `fit`
//! makes a generated program well defined, and `source` writes it as a kernel that stores every
//! register of every thread.

use super::case::Case;
use super::grammar::{args_and_buffers, assemble, clean_launch};
use memplay_sim::device::DeviceId;
use proptest::prelude::*;
use proptest::sample::select;

const LANES: usize = 32;

/// The registers a program computes on, `r0` to `r3`.
pub const REGISTERS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shuffle {
    Index,
    Up,
    Down,
    Xor,
}

/// The type a shuffle moves a register as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `r`, as `unsigned`.
    Unsigned,
    /// `(int)r`.
    Int,
    /// `(float)(r & 0xffffu)`: a whole number a float holds exactly.
    Float,
    /// `(unsigned long long)r << 32 | r[dst]`, of which bits 16 to 47 are kept: both halves
    /// move together.
    Wide,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    Ballot,
    Any,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    Add,
    Min,
    Max,
}

/// One statement of a program; registers are numbered 0 to 3.
#[derive(Clone, Debug)]
pub enum Step {
    /// `r[dst] = __shfl*_sync(mask, r[src], select, width)`, where `select` is `lane`, or
    /// `r[by] & lane` where `by` is set; `kind` is the type the register moves as.
    Shuffle {
        op: Shuffle,
        dst: usize,
        src: usize,
        lane: u32,
        by: Option<usize>,
        width: Option<u32>,
        kind: Kind,
    },
    /// `r[dst] = __ballot_sync(mask, (int)r[src] > above)` and the like.
    Vote {
        op: Vote,
        dst: usize,
        src: usize,
        above: i32,
    },
    /// `r[dst] = __activemask()`.
    ActiveMask { dst: usize },
    /// `r[dst] = __match_any_sync(mask, r[src] & bits)`.
    MatchAny { dst: usize, src: usize, bits: u32 },
    /// `r[dst] = __reduce_*_sync(mask, r[src])`, on `int` where `signed`.
    Reduce {
        op: Reduce,
        signed: bool,
        dst: usize,
        src: usize,
    },
    /// `r[dst] = r[a] * 3u + r[b]`.
    Mix { dst: usize, a: usize, b: usize },
    /// `if ((threadIdx.x / segment) % 3 == pick) { then } else { otherwise }`.
    Segments {
        segment: u32,
        pick: u32,
        then: Vec<Step>,
        otherwise: Vec<Step>,
    },
    /// `if (r[src] % 3u == pick) { body }`.
    Lanes {
        src: usize,
        pick: u32,
        body: Vec<Step>,
    },
    /// `for (int q = 0; q < count; ++q) { body }`.
    Repeat { count: u32, body: Vec<Step> },
    /// `for (int q = 0; q < count; ++q) { if ((r[src] + q) % 3u == pick) break; body }`: lanes
    /// leave the loop at different iterations, and the body runs with those that stay.
    Leave {
        src: usize,
        pick: u32,
        count: u32,
        body: Vec<Step>,
    },
}

/// A program and the constants of its registers' first values: `r0 = threadIdx.x`,
/// `r1 = in[t]`, `r2 = threadIdx.x * scale + blockIdx.x`, `r3 = offset - threadIdx.x`.
#[derive(Clone, Debug)]
pub struct WarpProgram {
    pub scale: u32,
    pub offset: u32,
    pub steps: Vec<Step>,
}

fn register() -> BoxedStrategy<usize> {
    (0..REGISTERS).boxed()
}

fn width() -> BoxedStrategy<Option<u32>> {
    prop_oneof![
        2 => Just(None),
        3 => select(vec![1u32, 2, 4, 8, 16, 32]).prop_map(Some),
    ]
    .boxed()
}

fn leaf_step() -> BoxedStrategy<Step> {
    let shuffle = (
        select(vec![
            Shuffle::Index,
            Shuffle::Up,
            Shuffle::Down,
            Shuffle::Xor,
        ]),
        (register(), register()),
        prop_oneof![6 => 0u32..32, 1 => 32u32..80],
        prop::option::weighted(0.3, register()),
        width(),
        select(vec![Kind::Unsigned, Kind::Int, Kind::Float, Kind::Wide]),
    )
        .prop_map(|(op, (dst, src), lane, by, width, kind)| Step::Shuffle {
            op,
            dst,
            src,
            lane,
            by,
            width,
            kind,
        });
    let vote = (
        select(vec![Vote::Ballot, Vote::Any, Vote::All]),
        register(),
        register(),
        -4i32..40,
    )
        .prop_map(|(op, dst, src, above)| Step::Vote {
            op,
            dst,
            src,
            above,
        });
    let reduce = (
        select(vec![Reduce::Add, Reduce::Min, Reduce::Max]),
        any::<bool>(),
        register(),
        register(),
    )
        .prop_map(|(op, signed, dst, src)| Step::Reduce {
            op,
            signed,
            dst,
            src,
        });
    prop_oneof![
        6 => shuffle,
        2 => vote,
        1 => register().prop_map(|dst| Step::ActiveMask { dst }),
        1 => (register(), register(), select(vec![1u32, 3, 7, 0xff, u32::MAX]))
            .prop_map(|(dst, src, bits)| Step::MatchAny { dst, src, bits }),
        2 => reduce,
        2 => (register(), register(), register()).prop_map(|(dst, a, b)| Step::Mix { dst, a, b }),
    ]
    .boxed()
}

/// Any step, branches and loops included; `fit` makes it well defined.
pub fn step() -> BoxedStrategy<Step> {
    leaf_step()
        .prop_recursive(3, 24, 4, |inner| {
            let body = || prop::collection::vec(inner.clone(), 0..4);
            prop_oneof![
                3 => (select(vec![4u32, 8, 16, 32]), 0u32..3, body(), body()).prop_map(
                    |(segment, pick, then, otherwise)| Step::Segments {
                        segment,
                        pick,
                        then,
                        otherwise,
                    }
                ),
                2 => (register(), 0u32..3, body())
                    .prop_map(|(src, pick, body)| Step::Lanes { src, pick, body }),
                1 => (1u32..4, body()).prop_map(|(count, body)| Step::Repeat { count, body }),
                1 => (register(), 0u32..3, 1u32..5, body()).prop_map(|(src, pick, count, body)| {
                    Step::Leave {
                        src,
                        pick,
                        count,
                        body,
                    }
                }),
            ]
        })
        .boxed()
}

/// A well-defined program (`fit`).
pub fn program() -> BoxedStrategy<WarpProgram> {
    (
        any::<u32>(),
        any::<u32>(),
        prop::collection::vec(step(), 1..7),
    )
        .prop_map(|(scale, offset, steps)| WarpProgram {
            scale,
            offset,
            steps: fit(steps, 32),
        })
        .boxed()
}

/// `steps` made well defined where the active lanes are whole segments of `segment` lanes (0:
/// any lanes): each shuffle's width at most `segment` and a butterfly's lane mask below it, and
/// no shuffle where `segment` is 0 (each becomes a `Mix` of the same registers).
pub fn fit(steps: Vec<Step>, segment: u32) -> Vec<Step> {
    steps
        .into_iter()
        .map(|step| match step {
            Step::Shuffle {
                op,
                dst,
                src,
                mut lane,
                mut by,
                width,
                kind,
            } => {
                if segment == 0 {
                    return Step::Mix {
                        dst,
                        a: src,
                        b: by.unwrap_or(src),
                    };
                }
                if op == Shuffle::Xor {
                    lane &= segment - 1;
                }
                if matches!(op, Shuffle::Up | Shuffle::Down) {
                    by = None;
                }
                Step::Shuffle {
                    op,
                    dst,
                    src,
                    lane,
                    by,
                    width: width
                        .map(|w| w.min(segment))
                        .or_else(|| (segment < 32).then_some(segment)),
                    kind,
                }
            }
            Step::Segments {
                segment: inner,
                pick,
                then,
                otherwise,
            } => Step::Segments {
                segment: inner,
                pick,
                then: fit(then, inner.min(segment)),
                otherwise: fit(otherwise, inner.min(segment)),
            },
            Step::Lanes { src, pick, body } => Step::Lanes {
                src,
                pick,
                body: fit(body, 0),
            },
            Step::Repeat { count, body } => Step::Repeat {
                count,
                body: fit(body, segment),
            },
            Step::Leave {
                src,
                pick,
                count,
                body,
            } => Step::Leave {
                src,
                pick,
                count,
                body: fit(body, 0),
            },
            other => other,
        })
        .collect()
}

/// The registers of one warp, lane by lane.
pub type Registers = [[u32; LANES]; REGISTERS];

/// Runs `steps` for one warp whose lanes `active` take part and whose lane `l` is thread
/// `thread[l]` of its block, lane by lane.
pub fn run_warp(steps: &[Step], regs: &mut Registers, active: u32, thread: &[u32; LANES]) {
    let on = |l: usize| active >> l & 1 != 0;
    let lanes_where = |f: &dyn Fn(usize) -> bool| {
        (0..LANES)
            .filter(|&l| on(l) && f(l))
            .fold(0u32, |bits, l| bits | 1 << l)
    };
    for step in steps {
        let before = *regs;
        match *step {
            Step::Shuffle {
                op,
                dst,
                src,
                lane,
                by,
                width,
                kind,
            } => {
                let w = width.unwrap_or(32) as usize;
                let value = |k: usize| match kind {
                    Kind::Unsigned | Kind::Int => before[src][k],
                    Kind::Float => before[src][k] & 0xffff,
                    Kind::Wide => {
                        ((u64::from(before[src][k]) << 32 | u64::from(before[dst][k])) >> 16) as u32
                    }
                };
                for l in (0..LANES).filter(|&l| on(l)) {
                    // PTX's `shfl.sync` takes the lane or offset from its operand's low five bits.
                    let s = (by.map_or(lane, |r| before[r][l] & lane) & 31) as usize;
                    let start = l & !(w - 1);
                    let within = l - start;
                    let from = match op {
                        Shuffle::Index => Some(start + s % w),
                        Shuffle::Up => within.checked_sub(s).map(|k| start + k),
                        Shuffle::Down => Some(within + s).filter(|&k| k < w).map(|k| start + k),
                        Shuffle::Xor => Some(l ^ s).filter(|&k| k < start + w),
                    }
                    .unwrap_or(l);
                    assert!(
                        on(from),
                        "the program reads lane {from}, which takes no part"
                    );
                    regs[dst][l] = value(from);
                }
            }
            Step::Vote {
                op,
                dst,
                src,
                above,
            } => {
                let bits = lanes_where(&|l| before[src][l] as i32 > above);
                let result = match op {
                    Vote::Ballot => bits,
                    Vote::Any => u32::from(bits != 0),
                    Vote::All => u32::from(bits == active),
                };
                set(regs, dst, active, |_| result);
            }
            Step::ActiveMask { dst } => set(regs, dst, active, |_| active),
            Step::MatchAny { dst, src, bits } => {
                let value = |l: usize| before[src][l] & bits;
                set(regs, dst, active, |l| {
                    lanes_where(&|k| value(k) == value(l))
                });
            }
            Step::Reduce {
                op,
                signed,
                dst,
                src,
            } => {
                let values = (0..LANES).filter(|&l| on(l)).map(|l| before[src][l]);
                let result = match (op, signed) {
                    (Reduce::Add, _) => values.fold(0u32, u32::wrapping_add),
                    (Reduce::Min, false) => values.min().unwrap_or(0),
                    (Reduce::Max, false) => values.max().unwrap_or(0),
                    (Reduce::Min, true) => values.map(|v| v as i32).min().unwrap_or(0) as u32,
                    (Reduce::Max, true) => values.map(|v| v as i32).max().unwrap_or(0) as u32,
                };
                set(regs, dst, active, |_| result);
            }
            Step::Mix { dst, a, b } => set(regs, dst, active, |l| {
                before[a][l].wrapping_mul(3).wrapping_add(before[b][l])
            }),
            Step::Segments {
                segment,
                pick,
                ref then,
                ref otherwise,
            } => {
                let taken = lanes_where(&|l| (thread[l] / segment) % 3 == pick);
                run_warp(then, regs, taken, thread);
                run_warp(otherwise, regs, active & !taken, thread);
            }
            Step::Lanes {
                src,
                pick,
                ref body,
            } => {
                let taken = lanes_where(&|l| before[src][l] % 3 == pick);
                run_warp(body, regs, taken, thread);
            }
            Step::Repeat { count, ref body } => {
                for _ in 0..count {
                    run_warp(body, regs, active, thread);
                }
            }
            Step::Leave {
                src,
                pick,
                count,
                ref body,
            } => {
                let mut staying = active;
                for q in 0..count {
                    for (l, value) in regs[src].iter().enumerate() {
                        if value.wrapping_add(q) % 3 == pick {
                            staying &= !(1 << l);
                        }
                    }
                    run_warp(body, regs, staying, thread);
                }
            }
        }
    }
}

/// Sets register `dst` of the lanes `active` to `value(lane)`.
fn set(regs: &mut Registers, dst: usize, active: u32, value: impl Fn(usize) -> u32) {
    for l in (0..LANES).filter(|&l| active >> l & 1 != 0) {
        regs[dst][l] = value(l);
    }
}

/// `steps` as CUDA C, inside `depth` branches and loops: the full mask where `depth` is 0 and
/// `__activemask()` in a branch.
pub fn statements(steps: &[Step], depth: usize, in_branch: bool, out: &mut String) {
    let mask = if in_branch {
        "__activemask()"
    } else {
        "0xffffffffu"
    };
    for step in steps {
        out.push_str(&"  ".repeat(depth + 1));
        match step {
            Step::Shuffle {
                op,
                dst,
                src,
                lane,
                by,
                width,
                kind,
            } => {
                let name = match op {
                    Shuffle::Index => "",
                    Shuffle::Up => "_up",
                    Shuffle::Down => "_down",
                    Shuffle::Xor => "_xor",
                };
                let value = match kind {
                    Kind::Unsigned => format!("r{src}"),
                    Kind::Int => format!("(int)r{src}"),
                    Kind::Float => format!("(float)(r{src} & 0xffffu)"),
                    Kind::Wide => format!("(unsigned long long)r{src} << 32 | r{dst}"),
                };
                let select = by.map_or(lane.to_string(), |r| format!("r{r} & {lane}u"));
                let width = width.map_or(String::new(), |w| format!(", {w}"));
                let call = format!("__shfl{name}_sync({mask}, {value}, {select}{width})");
                out.push_str(&match kind {
                    Kind::Unsigned => format!("r{dst} = {call};"),
                    Kind::Wide => format!("r{dst} = (unsigned)({call} >> 16);"),
                    _ => format!("r{dst} = (unsigned){call};"),
                });
            }
            Step::Vote {
                op,
                dst,
                src,
                above,
            } => {
                let (cast, name) = match op {
                    Vote::Ballot => ("", "ballot"),
                    Vote::Any => ("(unsigned)", "any"),
                    Vote::All => ("(unsigned)", "all"),
                };
                out.push_str(&format!(
                    "r{dst} = {cast}__{name}_sync({mask}, (int)r{src} > {above});"
                ));
            }
            Step::ActiveMask { dst } => out.push_str(&format!("r{dst} = __activemask();")),
            Step::MatchAny { dst, src, bits } => out.push_str(&format!(
                "r{dst} = __match_any_sync({mask}, r{src} & {bits}u);"
            )),
            Step::Reduce {
                op,
                signed,
                dst,
                src,
            } => {
                let name = match op {
                    Reduce::Add => "add",
                    Reduce::Min => "min",
                    Reduce::Max => "max",
                };
                out.push_str(&if *signed {
                    format!("r{dst} = (unsigned)__reduce_{name}_sync({mask}, (int)r{src});")
                } else {
                    format!("r{dst} = __reduce_{name}_sync({mask}, r{src});")
                });
            }
            Step::Mix { dst, a, b } => out.push_str(&format!("r{dst} = r{a} * 3u + r{b};")),
            Step::Segments {
                segment,
                pick,
                then,
                otherwise,
            } => {
                out.push_str(&format!(
                    "if ((threadIdx.x / {segment}) % 3 == {pick}) {{\n"
                ));
                statements(then, depth + 1, true, out);
                out.push_str(&format!("{}}} else {{\n", "  ".repeat(depth + 1)));
                statements(otherwise, depth + 1, true, out);
                out.push_str(&format!("{}}}", "  ".repeat(depth + 1)));
            }
            Step::Lanes { src, pick, body } => {
                out.push_str(&format!("if (r{src} % 3u == {pick}) {{\n"));
                statements(body, depth + 1, true, out);
                out.push_str(&format!("{}}}", "  ".repeat(depth + 1)));
            }
            Step::Repeat { count, body } => {
                out.push_str(&format!(
                    "for (int q{depth} = 0; q{depth} < {count}; ++q{depth}) {{\n"
                ));
                statements(body, depth + 1, in_branch, out);
                out.push_str(&format!("{}}}", "  ".repeat(depth + 1)));
            }
            Step::Leave {
                src,
                pick,
                count,
                body,
            } => {
                out.push_str(&format!(
                    "for (int q{depth} = 0; q{depth} < {count}; ++q{depth}) {{\n{}\
                     if ((r{src} + q{depth}) % 3u == {pick}) break;\n",
                    "  ".repeat(depth + 2)
                ));
                statements(body, depth + 1, true, out);
                out.push_str(&format!("{}}}", "  ".repeat(depth + 1)));
            }
        }
        out.push('\n');
    }
}

impl WarpProgram {
    /// The kernel `k(const unsigned* in, unsigned* out)`, which stores register `r` of thread
    /// `t` of the grid at `out[4 * t + r]`.
    pub fn source(&self) -> String {
        let mut body = String::new();
        statements(&self.steps, 0, false, &mut body);
        format!(
            "__global__ void k(const unsigned* in, unsigned* out) {{\n\
             \x20 int t = blockIdx.x * blockDim.x + threadIdx.x;\n\
             \x20 unsigned r0 = threadIdx.x, r1 = in[t], r2 = threadIdx.x * {}u + blockIdx.x, \
             r3 = {}u - threadIdx.x;\n{body}\
             \x20 out[4 * t] = r0; out[4 * t + 1] = r1; out[4 * t + 2] = r2; out[4 * t + 3] = r3;\n}}\n",
            self.scale, self.offset
        )
    }

    /// What `source` stores in `out` for a grid of `blocks` blocks of `threads` threads (a
    /// multiple of 32) whose `in` holds `input`, run lane by lane.
    pub fn expected(&self, blocks: u32, threads: u32, input: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        for block in 0..blocks {
            for warp in 0..threads / LANES as u32 {
                let thread: [u32; LANES] = std::array::from_fn(|l| warp * 32 + l as u32);
                let mut regs: Registers = [[0; LANES]; REGISTERS];
                for l in 0..LANES {
                    let tid = thread[l];
                    let t = (block * threads + tid) as usize;
                    regs[0][l] = tid;
                    regs[1][l] = input.get(t).copied().unwrap_or(0);
                    regs[2][l] = tid.wrapping_mul(self.scale).wrapping_add(block);
                    regs[3][l] = self.offset.wrapping_sub(tid);
                }
                run_warp(&self.steps, &mut regs, u32::MAX, &thread);
                out.extend((0..LANES).flat_map(|l| regs.map(|r| r[l])));
            }
        }
        out
    }
}

/// Warp primitives as statements over a C++ case's variables (`i j h u`), for the fuzz target's
/// crash checks: a generated program over registers taken from them, its result added to `j`;
/// a primitive in a branch any lanes take; cooperative groups' tiles; and calls that name odd
/// masks, widths and lanes.
pub fn fuzz_stmt() -> BoxedStrategy<String> {
    let program = prop::collection::vec(step(), 1..5).prop_map(|steps| {
        let mut body = String::new();
        statements(&fit(steps, 32), 1, false, &mut body);
        format!(
            "{{ unsigned r0 = i, r1 = j, r2 = u, r3 = (unsigned)h;\n{body}  j += (int)(r0 ^ r1 ^ r2 ^ r3); }}"
        )
    });
    let raw = step().prop_map(|step| {
        let mut body = String::new();
        statements(&[step], 1, true, &mut body);
        format!(
            "if (i % 5 < 3) {{ unsigned r0 = i, r1 = j, r2 = u, r3 = 9u;\n{body}  j += (int)r1; }}"
        )
    });
    prop_oneof![
        4 => program,
        2 => raw,
        1 => Just(
            "{ namespace cg = cooperative_groups; cg::thread_block tb = cg::this_thread_block(); \
             cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(tb); \
             j += cg::reduce(t16, j, cg::plus<int>()) + t16.shfl_down(j, 3) + (int)t16.ballot(j > 2); \
             v += cg::reduce(t16, v, cg::greater<float>()); t16.sync(); }"
                .to_string()
        ),
        1 => select(vec![
            "j += __shfl_sync(0u, j, 0);",
            "j += __shfl_sync(0xffffffff, j, 1, 3);",
            "j += __shfl_sync(0xffffffff, j, 1, 0);",
            "j += __shfl_sync(0xffffffff, j, 1, 64);",
            "j += __shfl_down_sync(0xffffffff, j, 4294967295u);",
            "j += __shfl_up_sync(0xffffffff, j, -1);",
            "j += __shfl_xor_sync(0x0000ffff, j, 17, 16);",
            "v += __shfl_xor_sync(0xffffffff, v, 1); w += __shfl_down_sync(0xffffffff, w, 2);",
            "j += __reduce_add_sync(1u, j) + __reduce_min_sync(0xffffffff, (unsigned)j);",
            "j += __match_any_sync(0xffffffff, w) + __match_any_sync(0xffffffff, v);",
            "if (threadIdx.x < 7) j += __ballot_sync(0xffffffff, j) + __all_sync(0x7f, 1);",
            "if (threadIdx.x & 1) j += __any_sync(__activemask(), j > 3); else __syncwarp();",
            "while (j < 40) j += __popc(__ballot_sync(__activemask(), j & 1)) + 1;",
            "j += __shfl_sync(__activemask(), j, i);",
        ])
        .prop_map(str::to_string),
    ]
    .boxed()
}

/// A kernel of warp primitives (`fuzz_stmt`), on a clean launch of any block size (a full mask
/// then names lanes a last, partial warp lacks), mostly on a device that has them all.
pub fn warp_case() -> BoxedStrategy<Case> {
    let device = prop_oneof![
        3 => Just(DeviceId::H100),
        2 => Just(DeviceId::A100),
        1 => Just(DeviceId::V100),
        1 => Just(DeviceId::Fermi),
    ];
    (
        prop::collection::vec(fuzz_stmt(), 1..5),
        clean_launch(),
        device,
        args_and_buffers(
            vec![("n".to_string(), false), ("x".to_string(), true)],
            vec!["a".to_string(), "f".to_string()],
        ),
    )
        .prop_map(|(body, launch, device, (args, buffers))| {
            let source = format!(
                "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n\
                 __global__ void k(int* a, float* f, int n, float x) {{\n\
                 \x20 int i = threadIdx.x + blockIdx.x * blockDim.x;\n\
                 \x20 int j = a[i & 63], h = n;\n  unsigned u = 7u;\n  long long w = 1LL;\n\
                 \x20 float v = f[i & 63] + x;\n  {}\n\
                 \x20 a[i & 63] = i + j + h + (int)u + (int)w + (int)v;\n}}\n",
                body.join("\n  ")
            );
            let launch = super::grammar::LaunchParts { device, ..launch };
            assemble(source, "k".to_string(), launch, args, buffers)
        })
        .boxed()
}
