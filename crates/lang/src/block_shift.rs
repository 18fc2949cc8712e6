//! Which blocks of a launch provably do the same work at shifted addresses, so that one block's
//! run can stand for theirs (issue 13: "run less", without changing a result).
//!
//! Block sampling (`sampling`) runs one block per edge class because bounds checks can make the
//! blocks at the grid's edges differ. Many kernels have no such check: the tiled matmul's blocks
//! all take the same branches with the same lanes, and each of its buffers is read at the
//! addresses of any other block moved by a fixed number of bytes (`a` by `TILE_WIDTH * n * 4` per
//! row of blocks, `b` by `TILE_WIDTH * 4` per column). Such blocks make the same counters and the
//! same memory profile whenever every buffer's shift is a whole number of 128-byte lines (sectors,
//! lines, the L1's banks and the DRAM atoms then line up alike), or half a line more where no
//! request of the run block, nor the block as a whole, fills both halves of a line or the halves
//! about a line's end (the counters count 32-byte sectors, which a half line moves whole, and the
//! profile's lines stay as many and as filled: `profile::TouchedRange::half_line_shift_safe`), and
//! the shifted addresses stay in their buffers.
//!
//! The analysis proves the first two properties from the kernel's code, with the launch's
//! arguments and dimensions as constants, as an abstract interpretation over its registers, to a
//! fixpoint: one value per register, joined over its assignments, except for a register assigned
//! only in straight-line code (outside every `if`, loop and conditional operand), whose
//! assignment replaces its value (a transpose's `x` from `blockIdx.x`, then from `blockIdx.y`). A value is *shifted* if it is some
//! block-free value plus `shift . blockIdx`, with `shift` the same in every thread (`blockIdx.y *
//! TILE_WIDTH + threadIdx.y`, then times `n`); anything else that depends on `blockIdx`, and
//! everything loaded from memory, is *other*. The proof holds when:
//! - every branch, loop and selection condition, and every operand of `&&` and `||`, is
//!   block-free (its shift is zero) and depends on no loaded data, so every block runs the same
//!   instructions with the same lanes; or it is a *guard*, a comparison of two shifted integers
//!   (`row < n`, `i > 0`), whose outcome the run checks per pair of blocks (below);
//! - every memory address is shifted, with the same shift at every access of one object, and
//!   none for shared, local and constant memory;
//! - every integer division or remainder divides by a block-free value that depends on no
//!   loaded data: a zero divisor stops a block with an error, which must then stop every block
//!   alike;
//! - the kernel has no atomics (their contention depends on which blocks share an address) and
//!   calls no function.
//!
//! `simulate` then checks the rest per pair of blocks (`runs_alike`): each buffer's shift in bytes
//! is a whole number of lines, or half a line more where the run block's requests allow it, the
//! addresses the run block touched stay in the buffer once shifted, and every guard comes out the
//! same in every lane each time. The interpreter keeps, per guard, the least and the greatest
//! `lhs - rhs` the run block's lanes compared, apart for the lanes where
//! it came out true and false (`GuardRange`); the other block compares those plus the guard's
//! shift, so `row < n`, true in every lane of the interior block of a 1024-row matmul in 16-row
//! blocks (rows 512 to 527), stays true down to the last row of blocks (rows 1008 to 1023) and
//! turns false in some lane of a block past the edge.
//!
//! `analyze_warps` proves the same of the warps of one block (`kernel::interp`'s `warps` uses
//! it): the warp is the variable, `threadIdx` moves by a fixed amount from a warp to the next of
//! its class and `blockIdx` is free; shared arrays may move, each access by its own amount, which
//! the proof gives per place in the source (`BlockShift::site_shifts`).
//!
//! Two assumptions remain, both about indices far outside any buffer. Index arithmetic is taken
//! not to wrap at 32 bits (`blockIdx.x * blockDim.x` is unsigned): a block whose index wrapped
//! where the run block's did not would address its buffer 2^32 elements away from the shifted
//! address, outside any buffer (each holds at most 2^32 bytes), an error that a block shown alike
//! does not report. And a pointer the kernel moves but never dereferences is taken to stay within
//! the interpreter's 2^47-byte address range in every block (the interpreter stops a block whose
//! pointer leaves it). Otherwise every block shown alike gets exactly the run block's counters,
//! or the run its error.

use super::ast::Scalar;
use super::ir::{
    BinOp, Elem, Ex, ExKind, FunctionIr, Op, Place, Reg, UnOp, REG_BLOCK_IDX, REG_THREAD_IDX,
};
use super::span::Span;
use crate::ir::AccessKind;
use crate::reg_set::{RegMap, RegSet};
use std::collections::HashMap;

/// What the analysis proves of a kernel's launch: every block runs the same instructions with
/// the same lanes, and each memory object is accessed at the addresses of any other block moved
/// by `shift . (other - this)` bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockShift {
    /// Per memory object (its index in the launch's objects) that the kernel accesses: bytes
    /// per unit of `blockIdx.x`, `.y` and `.z`.
    pub bytes_per_block: Vec<(usize, [i64; 3])>,
    /// The comparisons whose outcome must be checked per pair of blocks.
    pub guards: Vec<Guard>,
    /// Between warps (`analyze_warps`): how far each access moves per step, by its place in the
    /// source (the span of the expression that loads or stores) and kind; `None` where a place
    /// moves by more than one amount (an access in a loop whose address steps with the warp
    /// differently from pass to pass), which only a run of two warps of a class measures.
    pub site_shifts: Option<Vec<SiteShift>>,
}

/// How far the accesses of one place in the source, of one kind, move per step of the variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteShift {
    pub span: Span,
    pub kind: AccessKind,
    pub bytes_per_step: i64,
}

/// A global buffer (or `__device__` variable) of a launch whose blocks are shown alike: where it
/// lies, and how far each block's accesses of it are from those of block (0, 0, 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShiftedBuffer {
    pub base: u64,
    pub size: u64,
    /// Bytes per unit of `blockIdx.x`, `.y` and `.z`.
    pub bytes_per_block: [i64; 3],
}

/// A comparison of two shifted integers that a branch depends on (`row < n`): its outcome in
/// another block is that of `lhs - rhs + shift . (other - this)` in this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// The comparison's expression: its source place and temporary register, which tell it from
    /// every other expression of the kernel.
    pub site: GuardSite,
    /// `Lt`, `Le`, `Gt`, `Ge`, `Eq` or `Ne`.
    pub op: BinOp,
    /// The shift of `lhs - rhs` per unit of `blockIdx.x`, `.y` and `.z`.
    pub shift: [i64; 3],
}

/// Where a guard is: the line, column and temporary register of its comparison.
pub type GuardSite = (u32, u32, Reg);

/// The differences `lhs - rhs` a block's lanes compared at a guard: the least and the greatest
/// of those where the comparison came out true, and of those where it came out false. A loop's
/// `i < n` is true for every difference up to -1 and false at the lanes' last test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuardRange {
    pub when_true: Option<(i128, i128)>,
    pub when_false: Option<(i128, i128)>,
}

impl GuardRange {
    /// Adds one lane's difference and what the comparison made of it.
    pub fn note(&mut self, difference: i128, outcome: bool) {
        let side = if outcome {
            &mut self.when_true
        } else {
            &mut self.when_false
        };
        *side = Some(side.map_or((difference, difference), |(lo, hi)| {
            (lo.min(difference), hi.max(difference))
        }));
    }

    /// Both ranges, over these lanes and `other`'s.
    pub fn join(self, other: GuardRange) -> GuardRange {
        let join = |a: Option<(i128, i128)>, b: Option<(i128, i128)>| match (a, b) {
            (Some((a_lo, a_hi)), Some((b_lo, b_hi))) => Some((a_lo.min(b_lo), a_hi.max(b_hi))),
            (a, None) => a,
            (None, b) => b,
        };
        GuardRange {
            when_true: join(self.when_true, other.when_true),
            when_false: join(self.when_false, other.when_false),
        }
    }

    /// The ranges widened to hold every difference moved by anything from `least` to
    /// `greatest` (what a class of warps compares, from its first warp's run).
    pub fn spread(self, least: i128, greatest: i128) -> GuardRange {
        // Saturating: a loop skipped as far as a budget near 2^64 steps allows moves a guard by
        // up to 2^127.
        let spread = |side: Option<(i128, i128)>| {
            side.map(|(lo, hi)| (lo.saturating_add(least), hi.saturating_add(greatest)))
        };
        GuardRange {
            when_true: spread(self.when_true),
            when_false: spread(self.when_false),
        }
    }
}

impl Guard {
    /// What the comparison makes of a difference `lhs - rhs`.
    pub fn outcome(op: BinOp, difference: i128) -> bool {
        match op {
            BinOp::Lt => difference < 0,
            BinOp::Le => difference <= 0,
            BinOp::Gt => difference > 0,
            BinOp::Ge => difference >= 0,
            BinOp::Eq => difference == 0,
            _ => difference != 0,
        }
    }

    /// Whether the guard comes out the same in every lane, each time, in a block whose `lhs -
    /// rhs` is `shift` more than in the block that compared `range`: every difference that came
    /// out true stays on the true side once moved, and every one that came out false on the
    /// false side. The lanes may disagree among themselves (a loop's last test, `threadIdx.x <
    /// 100` in warp 3); each keeps its own outcome.
    pub fn holds_alike(&self, range: GuardRange, shift: i128) -> bool {
        shift == 0 || self.holds_alike_over(range, shift, shift)
    }

    /// Whether the guard comes out the same in every lane for every shift from `least` to
    /// `greatest` (the iterations of a loop a warp skips): every difference, moved by any of
    /// them, stays on its side. Exact for the orderings, whose sides are half-lines; for `==` and
    /// `!=` it asks that no moved range of differences reach zero, more than each shift needs.
    pub fn holds_alike_over(&self, range: GuardRange, least: i128, greatest: i128) -> bool {
        // Not in a range of `t` for which the outcome is `outcome`, once moved: the condition
        // per comparison, on the range's least and greatest difference.
        let keeps = |side: Option<(i128, i128)>, outcome: bool| {
            let Some((low, high)) = side else {
                // Never compared so: never in the other block either.
                return true;
            };
            // Saturating, as `spread`: the moves of a long skip reach 2^127.
            let (low, high) = (low.saturating_add(least), high.saturating_add(greatest));
            let excludes_zero = !(low..=high).contains(&0);
            match (self.op, outcome) {
                (BinOp::Lt, true) | (BinOp::Ge, false) => high < 0,
                (BinOp::Lt, false) | (BinOp::Ge, true) => low >= 0,
                (BinOp::Le, true) | (BinOp::Gt, false) => high <= 0,
                (BinOp::Le, false) | (BinOp::Gt, true) => low > 0,
                // An equality holds at one difference only, which a move leaves.
                (BinOp::Eq, true) | (BinOp::Ne, false) => false,
                (BinOp::Eq, false) | (BinOp::Ne, true) => excludes_zero,
                _ => false,
            }
        };
        keeps(range.when_true, true) && keeps(range.when_false, false)
    }
}

/// What the analysis knows of the launch: the registers that hold the same value in every
/// thread and block (kernel parameters, `blockDim`, `gridDim`), and the objects pointer
/// parameters point to.
#[derive(Clone, Debug, Default)]
pub struct LaunchConstants {
    pub values: HashMap<Reg, i64>,
    pub pointers: HashMap<Reg, usize>,
    /// The launch's memory objects that may differ between blocks' accesses (global buffers and
    /// `__device__` variables); accesses to any other object must not be shifted.
    pub global_objects: Vec<usize>,
    /// The shared arrays: each block has its own, so their accesses must not move between
    /// blocks, but they may between the warps of one block.
    pub shared_objects: Vec<usize>,
    /// Arrays in local memory (not kept in registers): each thread has its own copy, laid out by
    /// thread index, which the analysis does not follow; the warps of a block are not shown
    /// alike through them.
    pub local_objects: Vec<usize>,
}

/// What the analysis varies: the block (`analyze`) or the warp within a block
/// (`analyze_warps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variable {
    /// `blockIdx.x`, `.y` and `.z`, each its own component of a shift; `threadIdx` is free.
    Blocks,
    /// One step between warps of a class (`analyze_warps`), the first component of a shift:
    /// `threadIdx` moves by `thread_shift` a step, `blockIdx` is free.
    Warps { thread_shift: [i64; 3] },
    /// One iteration of the loop whose ops are `begin..=end` (`analyze_loop`), the first
    /// component of a shift: its induction registers move by their step an iteration, and
    /// `threadIdx` and `blockIdx` are free.
    Iterations { begin: usize, end: usize },
}

/// The abstract value of a register or expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    /// Not assigned anywhere seen yet.
    Unset,
    /// A block-free value plus `shift . blockIdx`. `known`: the value itself, where it is the
    /// same in every thread and block. `object`: the memory object a pointer points into.
    Shifted {
        shift: [i64; 3],
        known: Option<i64>,
        object: Option<usize>,
    },
    /// Depends on loaded data, or on `blockIdx` other than by a shift.
    Other,
}

const FREE: Value = Value::Shifted {
    shift: [0; 3],
    known: None,
    object: None,
};

fn known(v: i64) -> Value {
    Value::Shifted {
        shift: [0; 3],
        known: Some(v),
        object: None,
    }
}

impl Value {
    fn join(self, other: Value) -> Value {
        match (self, other) {
            (Value::Unset, v) | (v, Value::Unset) => v,
            (
                Value::Shifted {
                    shift: a,
                    known: ka,
                    object: oa,
                },
                Value::Shifted {
                    shift: b,
                    known: kb,
                    object: ob,
                },
            ) if a == b && oa == ob => Value::Shifted {
                shift: a,
                known: if ka == kb { ka } else { None },
                object: oa,
            },
            _ => Value::Other,
        }
    }

    /// Block-free: the same in every block (its shift is zero), whatever each thread holds.
    fn block_free(self) -> bool {
        matches!(
            self,
            Value::Shifted {
                shift: [0, 0, 0],
                ..
            }
        )
    }
}

/// Proves what it can of `function` (the kernel) for a launch with `constants`; `None` when the
/// blocks cannot be shown alike.
pub fn analyze(function: &FunctionIr, constants: &LaunchConstants) -> Option<BlockShift> {
    prove(function, constants, Variable::Blocks)
}

/// Proves, for the warps of one block, what `analyze` proves for blocks: that warps `w` and `w +
/// k` of a class (all the warps `w` of one remainder modulo `k`) run the same instructions with
/// the same lanes, and access each memory object at addresses moved by a fixed number of bytes
/// per step of `k` warps. The caller gives how far each component of `threadIdx` moves in one
/// step, the same in every lane (`thread_shift`: with blocks of 256 x 1 threads and `k = 1`, `[32,
/// 0, 0]`); `blockIdx` is the same for every warp. The result's shifts and guards have their
/// step in the first component (`guards[..].shift[0]`); `bytes_per_block` is empty, since each
/// access may move by its own number of bytes (`sa[ty][tx]` moves with the warp, `sb[k][tx]`
/// does not): `site_shifts` has each access's. Unlike blocks, warps may access shared arrays at
/// moved addresses; an access of local memory, whose copies the interpreter lays out by thread
/// index, ends the proof.
///
/// The data the warps load do not enter the proof: a warp that does not run stores nothing, so
/// a warp that does run may load other values than in a full run, which no branch and no address
/// can see.
pub fn analyze_warps(
    function: &FunctionIr,
    constants: &LaunchConstants,
    thread_shift: [i64; 3],
) -> Option<BlockShift> {
    prove(function, constants, Variable::Warps { thread_shift })
}

/// What `analyze_loop` proves of one loop of a kernel: its iterations run the same instructions
/// with the same lanes, and each access of an iteration is the same access of the iteration
/// before, moved by a fixed number of bytes (`site_shifts`, per place in the source), as far as
/// the loop's guards (its own test among them) come out alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopShift {
    /// The loop's `LoopBegin`.
    pub begin: usize,
    /// Its `LoopCond`, where every iteration starts: the loop's head.
    pub head: usize,
    /// Its `LoopEnd`.
    pub end: usize,
    /// Whether another loop encloses it (the `k` loop of a tiled matmul, in its loop over the
    /// phases).
    pub nested: bool,
    /// The registers the loop steps by a constant once an iteration (`++p`, `i += 256`).
    pub induction: Vec<Induction>,
    /// The comparisons whose outcome must be checked per pair of iterations; each one's shift
    /// per iteration is the first component of its `shift`.
    pub guards: Vec<Guard>,
    /// How far each access site moves per iteration.
    pub site_shifts: Vec<SiteShift>,
}

/// A register that a loop steps by `per_iteration` once an iteration, and nowhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Induction {
    pub reg: Reg,
    pub scalar: Scalar,
    pub per_iteration: i64,
}

/// What a loop does with the registers it assigns (`loop_registers`).
#[derive(Clone, Debug, Default)]
struct LoopRegisters {
    /// Each induction register, with its type and step per iteration.
    induction: RegMap<Induction>,
    /// The registers an iteration may read before it assigns them, so that they carry a value
    /// from one iteration into the next (`r += ...`), other than the induction registers.
    carried: RegSet,
    /// Every register the loop assigns.
    assigned: RegSet,
}

/// Proves, for the iterations of one loop of `function` (the kernel), what `analyze_warps`
/// proves for warps: that iteration `i + 1` runs the same instructions with the same lanes as
/// iteration `i` and accesses memory at its addresses, each place in the source moved by its
/// own number of bytes. `begin` is the loop's `LoopBegin`; only a `for` or `while` loop with no
/// `break`, `continue` or `return` of its own is analysed.
///
/// A loop inside another (a tiled matmul's `k` loop in its loop over the phases) is proved for
/// one run of it, from its entry to its exit: what the enclosing loop changes between runs is
/// the same in every iteration of one run. The code of the enclosing loop before it runs after
/// it too, in the next iteration, and the proof treats all code outside the loop alike.
///
/// The variable is the iteration. An induction register (assigned in the loop only by adding a
/// constant, once an iteration, outside every branch and inner loop) moves by its step; a
/// register the loop assigns and may read before assigning it in the same iteration carries
/// data from one iteration into the next and may hold anything there; one the loop assigns
/// before every read is whatever its assignments make of the rest. After the loop every register
/// it assigned may hold anything: a run that skips iterations leaves in them what its last
/// iteration run left. So every branch and address after the loop must not depend on them, and
/// the data the loop computes (`r` of a matmul) may differ from a full run's, which no branch and
/// no address can see. Unlike `analyze` and `analyze_warps`, the proof holds only with the
/// warps' own guard outcomes, checked per iteration by the interpreter (`kernel::interp`'s
/// `loops`).
pub fn analyze_loop(
    function: &FunctionIr,
    constants: &LaunchConstants,
    begin: usize,
) -> Option<LoopShift> {
    let code = &function.code;
    let Some(Op::LoopBegin { end_at: end, .. }) = code.get(begin) else {
        return None;
    };
    let end = *end;
    if !matches!(code.get(begin + 1), Some(Op::LoopCond { .. })) || end <= begin + 1 {
        return None;
    }
    let mut depth = 0i32;
    for op in &code[..begin] {
        match op {
            Op::LoopBegin { .. } => depth += 1,
            Op::LoopEnd => depth -= 1,
            _ => {}
        }
    }
    let registers = loop_registers(&code[begin + 1..end], constants)?;
    let mut induction: Vec<Induction> = registers.induction.values().copied().collect();
    crate::sorting::sort_by_key(&mut induction, |i| i.reg);
    let shift = prove_with(
        function,
        constants,
        Variable::Iterations { begin, end },
        registers,
    )?;
    Some(LoopShift {
        begin,
        head: begin + 1,
        end,
        nested: depth != 0,
        induction,
        guards: shift.guards,
        site_shifts: shift.site_shifts?,
    })
}

/// One use of a register in an iteration, in the order the interpreter makes them.
enum RegisterUse {
    Read(Reg),
    /// `definite`: made in every iteration, outside every branch and inner loop. `step`: the
    /// constant the assignment adds to the register, if it only adds one.
    Write {
        reg: Reg,
        elem: Elem,
        definite: bool,
        step: Option<i64>,
    },
}

/// What the ops of a loop's body (from its `LoopCond` to before its `LoopEnd`) do with the
/// registers; `None` where the loop breaks, continues or returns on its own, which would change
/// its lanes from one iteration to the next.
fn loop_registers(body: &[Op], constants: &LaunchConstants) -> Option<LoopRegisters> {
    let mut uses: Vec<RegisterUse> = Vec::new();
    let (mut branches, mut loops) = (0u32, 0u32);
    for op in body {
        let definite = branches == 0 && loops == 0;
        match op {
            Op::Eval(e) => register_uses(e, definite, constants, &mut uses),
            Op::If { cond, .. } | Op::LoopCond { cond, .. } => {
                register_uses(cond, definite, constants, &mut uses)
            }
            Op::Return(_) => return None,
            Op::Break | Op::Continue if loops == 0 => return None,
            _ => {}
        }
        match op {
            Op::If { .. } => branches += 1,
            Op::EndIf => branches = branches.checked_sub(1)?,
            Op::LoopBegin { .. } => loops += 1,
            Op::LoopEnd => loops = loops.checked_sub(1)?,
            _ => {}
        }
    }
    let mut registers = LoopRegisters::default();
    // Induction registers: every assignment adds a constant, in every iteration.
    let mut steps: RegMap<(Option<i64>, Scalar)> = RegMap::new();
    for u in &uses {
        if let RegisterUse::Write {
            reg,
            elem,
            definite,
            step,
        } = *u
        {
            for k in 0..Reg::from(elem.n.max(1)) {
                registers.assigned.insert(reg + k);
            }
            let adds = definite && elem.n == 1 && elem.scalar.is_integer();
            let (sum, _) = steps.get_or_insert(reg, (Some(0), elem.scalar));
            *sum = match (*sum, step) {
                (Some(sum), Some(step)) if adds => sum.checked_add(step),
                _ => None,
            };
        }
    }
    registers.induction = steps
        .into_pairs()
        .into_iter()
        .filter_map(|(reg, (step, scalar))| {
            let induction = Induction {
                reg,
                scalar,
                per_iteration: step?,
            };
            Some((reg, induction))
        })
        .collect();
    // Carried registers: read before an assignment of the same iteration that every iteration
    // makes.
    let mut assigned_before: RegSet = RegSet::new();
    for u in &uses {
        match *u {
            RegisterUse::Read(reg) => {
                if registers.assigned.contains(&reg)
                    && !registers.induction.contains_key(&reg)
                    && !assigned_before.contains(&reg)
                {
                    registers.carried.insert(reg);
                }
            }
            RegisterUse::Write {
                reg,
                elem,
                definite: true,
                ..
            } => {
                assigned_before.extend((0..Reg::from(elem.n.max(1))).map(|k| reg + k));
            }
            RegisterUse::Write { .. } => {}
        }
    }
    Some(registers)
}

/// Appends the register uses of `e` to `uses`, in the order the interpreter evaluates them.
/// `definite`: the expression is evaluated in every iteration, in every lane of the loop; the
/// arms of `?:` and the right of `&&` and `||` are not.
fn register_uses(e: &Ex, definite: bool, constants: &LaunchConstants, uses: &mut Vec<RegisterUse>) {
    match &e.kind {
        ExKind::Reg(r) => uses.push(RegisterUse::Read(*r)),
        ExKind::Logical { lhs, rhs, .. } => {
            register_uses(lhs, definite, constants, uses);
            register_uses(rhs, false, constants, uses);
        }
        ExKind::Select { cond, a, b, .. } => {
            register_uses(cond, definite, constants, uses);
            register_uses(a, false, constants, uses);
            register_uses(b, false, constants, uses);
        }
        ExKind::Assign { place, value } => {
            if let Place::Mem { addr, .. } = place {
                register_uses(addr, definite, constants, uses);
            }
            register_uses(value, definite, constants, uses);
            if let Place::Reg { reg, elem } = place {
                // `i = i + c` or `i = c + i`.
                let step = match &value.kind {
                    ExKind::Binary { op, lhs, rhs, .. } => match (op, &lhs.kind, &rhs.kind) {
                        (BinOp::Add, ExKind::Reg(r), _) if r == reg => {
                            known_integer(rhs, constants)
                        }
                        (BinOp::Add, _, ExKind::Reg(r)) if r == reg => {
                            known_integer(lhs, constants)
                        }
                        (BinOp::Sub, ExKind::Reg(r), _) if r == reg => {
                            known_integer(rhs, constants).and_then(i64::checked_neg)
                        }
                        _ => None,
                    },
                    _ => None,
                };
                uses.push(RegisterUse::Write {
                    reg: *reg,
                    elem: *elem,
                    definite,
                    step,
                });
            }
        }
        ExKind::Compound {
            place,
            op,
            ty,
            value,
        } => {
            if let Place::Mem { addr, .. } = place {
                register_uses(addr, definite, constants, uses);
            }
            if let Place::Reg { reg, .. } = place {
                uses.push(RegisterUse::Read(*reg));
            }
            register_uses(value, definite, constants, uses);
            if let Place::Reg { reg, elem } = place {
                let step = match op {
                    BinOp::Add if ty.is_integer() => known_integer(value, constants),
                    BinOp::Sub if ty.is_integer() => {
                        known_integer(value, constants).and_then(i64::checked_neg)
                    }
                    _ => None,
                };
                uses.push(RegisterUse::Write {
                    reg: *reg,
                    elem: *elem,
                    definite,
                    step,
                });
            }
        }
        ExKind::IncDec {
            place,
            delta,
            pointer,
            ..
        } => match place {
            Place::Mem { addr, .. } => register_uses(addr, definite, constants, uses),
            Place::Reg { reg, elem } => {
                uses.push(RegisterUse::Read(*reg));
                uses.push(RegisterUse::Write {
                    reg: *reg,
                    elem: *elem,
                    definite,
                    step: (!pointer).then_some(*delta),
                });
            }
        },
        _ => {
            for child in e.children() {
                register_uses(child, definite, constants, uses);
            }
        }
    }
}

/// The value of an integer expression that is the same in every thread, block and iteration:
/// a literal, a launch constant, or sums and products of them, converted only where the
/// conversion keeps the value.
fn known_integer(e: &Ex, constants: &LaunchConstants) -> Option<i64> {
    match &e.kind {
        ExKind::Const(bits) => Some(*bits as i64),
        ExKind::Reg(r) => constants.values.get(r).copied(),
        ExKind::Convert { from, to, value } if from.is_integer() && to.is_integer() => {
            let v = known_integer(value, constants)?;
            let kept = match convert(known(v), *from, *to) {
                Value::Shifted { known: Some(k), .. } => k,
                _ => return None,
            };
            (kept == v).then_some(v)
        }
        ExKind::Binary { op, ty, lhs, rhs } if ty.is_integer() => {
            let (a, b) = (
                known_integer(lhs, constants)?,
                known_integer(rhs, constants)?,
            );
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                _ => None,
            }
        }
        _ => None,
    }
}

fn prove(
    function: &FunctionIr,
    constants: &LaunchConstants,
    variable: Variable,
) -> Option<BlockShift> {
    prove_with(function, constants, variable, LoopRegisters::default())
}

fn prove_with(
    function: &FunctionIr,
    constants: &LaunchConstants,
    variable: Variable,
    loop_registers: LoopRegisters,
) -> Option<BlockShift> {
    let mut analysis = Analysis {
        regs: RegMap::new(),
        constants,
        variable,
        loop_registers,
        pc: 0,
        changed: false,
        failed: false,
        sites: Vec::new(),
        site_shifts: Vec::new(),
        guards: Vec::new(),
        checking: false,
        depth: 0,
        straight: straight_line_registers(&function.code),
        nesting: 0,
    };
    // Registers only climb the lattice (unset, shifted with a known value, shifted, other), so
    // the passes settle; a cap keeps a bug from looping.
    for _ in 0..64 {
        analysis.changed = false;
        analysis.pass(&function.code);
        if analysis.failed {
            return None;
        }
        if !analysis.changed {
            analysis.checking = true;
            analysis.pass(&function.code);
            if analysis.failed {
                return None;
            }
            let mut bytes_per_block = analysis.sites;
            crate::sorting::sort_by(&mut bytes_per_block, Ord::cmp);
            let guards = analysis.guards;
            // Two guards at one place would mix their ranges.
            let repeated =
                (1..guards.len()).any(|i| guards[..i].iter().any(|g| g.site == guards[i].site));
            if repeated {
                return None;
            }
            let site_shifts: Option<Vec<SiteShift>> = analysis
                .site_shifts
                .into_iter()
                .map(|((span, kind), shift)| {
                    shift.map(|bytes_per_step| SiteShift {
                        span,
                        kind,
                        bytes_per_step,
                    })
                })
                .collect();
            let site_shifts = site_shifts.map(|mut sites| {
                crate::sorting::sort_by_key(&mut sites, |site| (site.span, site.kind));
                sites
            });
            return Some(BlockShift {
                bytes_per_block,
                guards,
                site_shifts,
            });
        }
    }
    None
}

struct Analysis<'a> {
    regs: RegMap<Value>,
    constants: &'a LaunchConstants,
    variable: Variable,
    /// For `Variable::Iterations`: what the loop does with each register it assigns.
    loop_registers: LoopRegisters,
    /// The index of the op being visited.
    pc: usize,
    changed: bool,
    /// A condition or an address breaks the proof, or the kernel does what it does not cover.
    failed: bool,
    /// The shift of every object accessed so far (checking pass only).
    sites: Vec<(usize, [i64; 3])>,
    /// Between warps, the shift per step of every place and kind of access so far, `None`
    /// where one place moves by more than one amount (checking pass only).
    site_shifts: Vec<((Span, AccessKind), Option<i64>)>,
    /// The guards met (checking pass only).
    guards: Vec<Guard>,
    /// The last pass, after the fixpoint: conditions and addresses are checked.
    checking: bool,
    /// How deep `expression` has recursed.
    depth: u32,
    /// Registers assigned only in straight-line code (outside every `if` and loop), and how
    /// deep in `if`s and loops the op being visited is: an assignment there replaces the value
    /// (`x = blockIdx.x * 32 + ...` and later `x = blockIdx.y * 32 + ...`, as a transpose does),
    /// where any other is joined with what the register held.
    straight: RegSet,
    nesting: u32,
}

/// The deepest expression the analysis follows; a deeper one (no kernel a student writes, but
/// the parser lets trees far deeper through) ends the proof rather than the stack.
const MAX_DEPTH: u32 = 64;

impl Analysis<'_> {
    fn pass(&mut self, code: &[Op]) {
        // Straight-line registers start each pass unassigned, as each run of the kernel does.
        for reg in &self.straight {
            self.regs.remove(reg);
        }
        self.nesting = 0;
        for (pc, op) in code.iter().enumerate() {
            self.pc = pc;
            match op {
                Op::Eval(e) | Op::Return(Some(e)) => {
                    self.expression(e);
                }
                Op::If { cond, .. } | Op::LoopCond { cond, .. } => {
                    let c = self.expression(cond);
                    self.require(c.block_free());
                    if matches!(op, Op::If { .. }) {
                        self.nesting += 1;
                    }
                }
                Op::LoopBegin { .. } => self.nesting += 1,
                Op::EndIf | Op::LoopEnd => self.nesting = self.nesting.saturating_sub(1),
                Op::Else { .. }
                | Op::ContinuePoint
                | Op::Jump(_)
                | Op::Break
                | Op::Continue
                | Op::Return(None)
                | Op::SyncThreads
                | Op::SyncWarp => {}
            }
        }
    }

    /// An integer division stops a block whose divisor is zero in some lane: its divisor must be
    /// the same in every block, not loaded data nor moved with the block, so that no block the
    /// run stands for could stop where the run did not.
    fn require_safe_divisor(&mut self, op: BinOp, ty: Scalar, divisor: Value) {
        if matches!(op, BinOp::Div | BinOp::Rem) && ty.is_integer() {
            self.require(divisor.block_free());
        }
    }

    /// In the checking pass, fails the proof unless `holds`.
    fn require(&mut self, holds: bool) {
        if self.checking && !holds {
            self.failed = true;
        }
    }

    fn read(&self, reg: Reg) -> Value {
        match self.variable {
            Variable::Blocks => {
                if (REG_THREAD_IDX..REG_THREAD_IDX + 3).contains(&reg) {
                    return FREE;
                }
                if (REG_BLOCK_IDX..REG_BLOCK_IDX + 3).contains(&reg) {
                    let mut shift = [0; 3];
                    shift[(reg - REG_BLOCK_IDX) as usize] = 1;
                    return shifted(shift, None);
                }
            }
            Variable::Warps { thread_shift } => {
                if (REG_THREAD_IDX..REG_THREAD_IDX + 3).contains(&reg) {
                    return shifted([thread_shift[(reg - REG_THREAD_IDX) as usize], 0, 0], None);
                }
                if (REG_BLOCK_IDX..REG_BLOCK_IDX + 3).contains(&reg) {
                    return FREE;
                }
            }
            Variable::Iterations { begin, end } => {
                if (REG_THREAD_IDX..REG_BLOCK_IDX + 3).contains(&reg) {
                    return FREE;
                }
                let registers = &self.loop_registers;
                if (begin..=end).contains(&self.pc) {
                    // In the loop: an induction register moves by its step an iteration, and a
                    // register that carries a value from one iteration into the next (an
                    // accumulator) may hold anything.
                    if let Some(induction) = registers.induction.get(&reg) {
                        return shifted([induction.per_iteration, 0, 0], None);
                    }
                    if registers.carried.contains(&reg) {
                        return Value::Other;
                    }
                } else if registers.assigned.contains(&reg) {
                    // After the loop, a register it assigned holds what the last iteration run
                    // left, which need not be what a full run leaves (`analyze_loop`).
                    return Value::Other;
                }
            }
        }
        if let Some(&object) = self.constants.pointers.get(&reg) {
            return Value::Shifted {
                shift: [0; 3],
                known: None,
                object: Some(object),
            };
        }
        if let Some(&v) = self.constants.values.get(&reg) {
            return known(v);
        }
        // A register nothing assigned holds zero in every block; one assigned somewhere not yet
        // seen in this pass is unset until the fixpoint says what it is.
        match self.regs.get(&reg) {
            Some(&v) if v != Value::Unset => v,
            _ if self.checking => FREE,
            _ => Value::Unset,
        }
    }

    fn write(&mut self, reg: Reg, width: u8, value: Value) {
        if self.nesting == 0 && self.straight.contains(&reg) {
            // Replaced, not joined: every later read sees this value until the next assignment.
            // It settles with the registers it reads, which the fixpoint follows.
            for k in 0..Reg::from(width.max(1)) {
                self.regs.insert(reg + k, value);
            }
            return;
        }
        for k in 0..Reg::from(width.max(1)) {
            let old = self.regs.get(&(reg + k)).copied().unwrap_or(Value::Unset);
            let new = old.join(value);
            if new != old {
                self.regs.insert(reg + k, new);
                self.changed = true;
            }
        }
    }

    /// An access of memory at `addr`: its object's shift must be the same at every access, and
    /// none outside global memory (between warps: outside global and shared memory).
    fn access(&mut self, addr: Value, span: Span, kind: AccessKind) {
        if !self.checking {
            return;
        }
        match addr {
            Value::Shifted {
                shift,
                object: Some(object),
                ..
            } => {
                let c = self.constants;
                let may_move = match self.variable {
                    Variable::Blocks => c.global_objects.contains(&object),
                    Variable::Warps { .. } => {
                        if c.local_objects.contains(&object) {
                            self.failed = true;
                        }
                        c.global_objects.contains(&object) || c.shared_objects.contains(&object)
                    }
                    // Local memory is laid out by thread index, which the shift does not follow:
                    // a local access must stay where it is from one iteration to the next.
                    Variable::Iterations { .. } => {
                        c.global_objects.contains(&object) || c.shared_objects.contains(&object)
                    }
                };
                if !may_move && shift != [0; 3] {
                    self.failed = true;
                }
                if matches!(
                    self.variable,
                    Variable::Warps { .. } | Variable::Iterations { .. }
                ) {
                    // Each access moves by its own shift; an object need not move as one.
                    let per_step = Some(shift[0]);
                    match self
                        .site_shifts
                        .iter_mut()
                        .find(|(at, _)| *at == (span, kind))
                    {
                        Some((_, seen)) if *seen != per_step => *seen = None,
                        Some(_) => {}
                        None => self.site_shifts.push(((span, kind), per_step)),
                    }
                    return;
                }
                match self
                    .sites
                    .iter()
                    .find(|(seen_object, _)| *seen_object == object)
                {
                    Some(&(_, seen)) if seen != shift => self.failed = true,
                    Some(_) => {}
                    None => self.sites.push((object, shift)),
                }
            }
            _ => self.failed = true,
        }
    }

    /// The address of `place`, if in memory, accessed as `kinds` at `span`.
    fn place_address(&mut self, place: &Place, span: Span, kinds: &[AccessKind]) {
        if let Place::Mem { addr, .. } = place {
            let a = self.expression(addr);
            for &kind in kinds {
                self.access(a, span, kind);
            }
        }
    }

    fn expression(&mut self, e: &Ex) -> Value {
        if self.depth >= MAX_DEPTH {
            self.failed = true;
            return Value::Other;
        }
        self.depth += 1;
        let value = self.node(e);
        self.depth -= 1;
        value
    }

    fn node(&mut self, e: &Ex) -> Value {
        match &e.kind {
            ExKind::Const(bits) => known(*bits as i64),
            ExKind::Fence => FREE,
            ExKind::Reg(r) => self.read(*r),
            ExKind::AddrOf(id) => Value::Shifted {
                shift: [0; 3],
                known: None,
                object: Some(*id),
            },
            ExKind::Component(value, _) => {
                let v = self.expression(value);
                all_free(&[v])
            }
            ExKind::Convert { from, to, value } => {
                let v = self.expression(value);
                convert(v, *from, *to)
            }
            ExKind::Unary { op, ty, value } => {
                let v = self.expression(value);
                match (op, v) {
                    (
                        UnOp::Neg,
                        Value::Shifted {
                            shift,
                            known: k,
                            object: None,
                        },
                    ) if ty.is_integer() => shifted(negate(shift), k.and_then(i64::checked_neg)),
                    _ => all_free(&[v]),
                }
            }
            ExKind::Binary { op, ty, lhs, rhs } => {
                let a = self.expression(lhs);
                let b = self.expression(rhs);
                self.require_safe_divisor(*op, *ty, b);
                if let Some(shift) = guard_shift(*op, *ty, a, b) {
                    // Checked per pair of blocks: where it is run alike, its value is the same.
                    if self.checking {
                        self.guards.push(Guard {
                            site: (e.span.line, e.span.col, e.tmp),
                            op: *op,
                            shift,
                        });
                    }
                    return FREE;
                }
                binary(*op, *ty, a, b)
            }
            ExKind::Logical { lhs, rhs, .. } => {
                // The right operand runs only where the left one says: a branch.
                let a = self.expression(lhs);
                let b = self.expression(rhs);
                self.require(a.block_free() && b.block_free());
                all_free(&[a, b])
            }
            ExKind::Select { cond, a, b, .. } => {
                let c = self.expression(cond);
                self.require(c.block_free());
                let a = self.expression(a);
                let b = self.expression(b);
                match all_free(&[c]) {
                    Value::Unset => Value::Unset,
                    Value::Other => Value::Other,
                    _ => a.join(b),
                }
            }
            ExKind::Fma { a, b, c, .. } => {
                let values = [self.expression(a), self.expression(b), self.expression(c)];
                all_free(&values)
            }
            // Another lane's value, or one made of every lane's, or the clock: no shift of the
            // block index.
            ExKind::Warp { args, .. } | ExKind::Output { args, .. } => {
                for arg in args {
                    self.expression(arg);
                }
                Value::Other
            }
            ExKind::Math { args, .. } | ExKind::MakeVector { parts: args, .. } => {
                let values: Vec<Value> = args.iter().map(|arg| self.expression(arg)).collect();
                all_free(&values)
            }
            ExKind::Offset { base, terms, .. } => {
                let mut value = self.expression(base);
                for term in terms {
                    let index = self.expression(&term.index);
                    value = match (value, index) {
                        (
                            Value::Shifted {
                                shift,
                                object: Some(object),
                                ..
                            },
                            Value::Shifted {
                                shift: by,
                                object: None,
                                ..
                            },
                        ) => match add_scaled(shift, by, term.stride) {
                            Some(shift) => Value::Shifted {
                                shift,
                                known: None,
                                object: Some(object),
                            },
                            None => Value::Other,
                        },
                        (Value::Unset, _) | (_, Value::Unset) => Value::Unset,
                        _ => Value::Other,
                    };
                }
                value
            }
            ExKind::PtrDiff { lhs, rhs, .. } => {
                let a = self.expression(lhs);
                let b = self.expression(rhs);
                match (a, b) {
                    (Value::Shifted { shift: sa, .. }, Value::Shifted { shift: sb, .. })
                        if sa == sb =>
                    {
                        FREE
                    }
                    (Value::Unset, _) | (_, Value::Unset) => Value::Unset,
                    _ => Value::Other,
                }
            }
            ExKind::Load { addr, .. } => {
                let a = self.expression(addr);
                self.access(a, e.span, AccessKind::Load);
                Value::Other
            }
            ExKind::Assign { place, value } => {
                let v = self.expression(value);
                self.place_address(place, e.span, &[AccessKind::Store]);
                if let Place::Reg { reg, elem } = place {
                    self.write(*reg, elem.n, v);
                }
                v
            }
            ExKind::Compound {
                place,
                op,
                ty,
                value,
            } => {
                let v = self.expression(value);
                self.require_safe_divisor(*op, *ty, v);
                self.place_address(place, e.span, &[AccessKind::Load, AccessKind::Store]);
                match place {
                    Place::Reg { reg, elem } => {
                        let current = self.read(*reg);
                        let result = binary(*op, *ty, current, v);
                        self.write(*reg, elem.n, result);
                        result
                    }
                    Place::Mem { .. } => Value::Other,
                }
            }
            ExKind::IncDec { place, .. } => {
                self.place_address(place, e.span, &[AccessKind::Load, AccessKind::Store]);
                match place {
                    Place::Reg { reg, elem } => {
                        // A step of a constant keeps the shift; the value changes.
                        let current = self.read(*reg);
                        let result = match current {
                            Value::Shifted { shift, object, .. } => Value::Shifted {
                                shift,
                                known: None,
                                object,
                            },
                            other => other,
                        };
                        self.write(*reg, elem.n, result);
                        result
                    }
                    Place::Mem { .. } => Value::Other,
                }
            }
            ExKind::Atomic { .. } | ExKind::Call { .. } => {
                self.failed = true;
                Value::Other
            }
            ExKind::Comma(a, b) => {
                self.expression(a);
                self.expression(b)
            }
        }
    }
}

/// The shift of `lhs - rhs` if `op` compares two shifted integers that differ by a shift: a
/// guard. Not for unsigned 64-bit operands, which a signed difference does not order.
fn guard_shift(op: BinOp, ty: Scalar, a: Value, b: Value) -> Option<[i64; 3]> {
    if !op.is_comparison() || !ty.is_integer() || (ty.size() == 8 && !ty.is_signed()) {
        return None;
    }
    match (a, b) {
        (
            Value::Shifted {
                shift: sa,
                object: None,
                ..
            },
            Value::Shifted {
                shift: sb,
                object: None,
                ..
            },
        ) => add_scaled(sa, sb, -1).filter(|shift| *shift != [0; 3]),
        _ => None,
    }
}

/// The registers `code` assigns only outside every `if` and loop (by `=`, `op=`, `++` or `--`).
fn straight_line_registers(code: &[Op]) -> RegSet {
    let mut outside = RegSet::new();
    let mut inside = RegSet::new();
    let mut nesting = 0u32;
    for op in code {
        let expressions: Vec<&Ex> = match op {
            Op::Eval(e) | Op::Return(Some(e)) => vec![e],
            Op::If { cond, .. } | Op::LoopCond { cond, .. } => vec![cond],
            _ => Vec::new(),
        };
        // Iteratively, so that no tree's depth reaches the stack. An assignment in an arm of
        // `?:` or on the right of `&&` or `||` happens in some lanes only: as in an `if`.
        let mut stack: Vec<(&Ex, bool)> = expressions.into_iter().map(|e| (e, false)).collect();
        while let Some((e, conditional)) = stack.pop() {
            if let ExKind::Assign { place, .. }
            | ExKind::Compound { place, .. }
            | ExKind::IncDec { place, .. } = &e.kind
            {
                if let Place::Reg { reg, elem } = place {
                    let set = if nesting == 0 && !conditional {
                        &mut outside
                    } else {
                        &mut inside
                    };
                    set.extend((0..Reg::from(elem.n.max(1))).map(|k| reg + k));
                }
            }
            match &e.kind {
                ExKind::Select { cond, a, b, .. } => {
                    stack.push((cond, conditional));
                    stack.push((a, true));
                    stack.push((b, true));
                }
                ExKind::Logical { lhs, rhs, .. } => {
                    stack.push((lhs, conditional));
                    stack.push((rhs, true));
                }
                _ => stack.extend(e.children().into_iter().map(|c| (c, conditional))),
            }
        }
        match op {
            Op::If { .. } | Op::LoopBegin { .. } => nesting += 1,
            Op::EndIf | Op::LoopEnd => nesting = nesting.saturating_sub(1),
            _ => {}
        }
    }
    outside
        .iter()
        .filter(|reg| !inside.contains(reg))
        .copied()
        .collect()
}

fn all_free(values: &[Value]) -> Value {
    if values.contains(&Value::Unset) {
        Value::Unset
    } else if values.iter().all(|v| v.block_free()) {
        FREE
    } else {
        Value::Other
    }
}

fn negate(shift: [i64; 3]) -> [i64; 3] {
    shift.map(|s| s.wrapping_neg())
}

/// `shift + by * stride`, if it fits.
fn add_scaled(shift: [i64; 3], by: [i64; 3], stride: i64) -> Option<[i64; 3]> {
    let mut out = [0; 3];
    for d in 0..3 {
        out[d] = shift[d].checked_add(by[d].checked_mul(stride)?)?;
    }
    Some(out)
}

/// A shifted integer (see the module documentation on wrapping).
fn shifted(shift: [i64; 3], known: Option<i64>) -> Value {
    Value::Shifted {
        shift,
        known,
        object: None,
    }
}

fn convert(v: Value, from: Scalar, to: Scalar) -> Value {
    match v {
        Value::Shifted {
            shift,
            known: k,
            object: None,
        } if from.is_integer() && to.is_integer() => {
            let narrows = to.size() < from.size();
            if narrows && shift != [0; 3] {
                return Value::Other;
            }
            let k = k.map(|k| match (to.size(), to.is_signed()) {
                (1, true) => i64::from(k as i8),
                (1, false) => i64::from(k as u8),
                (2, true) => i64::from(k as i16),
                (2, false) => i64::from(k as u16),
                (4, true) => i64::from(k as i32),
                (4, false) => i64::from(k as u32),
                _ => k,
            });
            shifted(shift, k)
        }
        _ => all_free(&[v]),
    }
}

/// A shifted integer split at a power of two `2^m` that divides its shift: its low bits (`x &
/// c` for a constant `c < 2^m`, `x % 2^m` unsigned) do not move, and its high bits (`x >> m`, `x /
/// 2^m` unsigned) move by the shift over `2^m`. So `threadIdx.x & 1` is the same in every warp of
/// 256-thread blocks and `threadIdx.x / 32` moves by one a warp. Adding a multiple of `2^m` keeps
/// the low bits in two's complement whatever the signs; the high bits rely on the module's
/// assumption that indices do not wrap. `None` where the rule does not apply.
fn low_and_high_bits(
    op: BinOp,
    ty: Scalar,
    (sa, ka): ([i64; 3], Option<i64>),
    (sb, kb): ([i64; 3], Option<i64>),
) -> Option<Value> {
    let divides = |m: u32, shift: [i64; 3]| m < 62 && shift.iter().all(|s| s % (1i64 << m) == 0);
    // The operand that moves, and the constant on the other side.
    let (shift, constant) = match (sa == [0; 3], sb == [0; 3]) {
        (false, true) => (sa, kb?),
        (true, false) if op == BinOp::BitAnd => (sb, ka?),
        _ => return None,
    };
    let power = |c: i64| (c > 0 && c.count_ones() == 1).then(|| c.trailing_zeros());
    let unsigned = !ty.is_signed();
    match op {
        BinOp::BitAnd if constant >= 0 => {
            let m = 64 - constant.leading_zeros();
            divides(m, shift).then_some(FREE)
        }
        BinOp::Rem if unsigned => {
            let m = power(constant)?;
            divides(m, shift).then_some(FREE)
        }
        BinOp::Div | BinOp::Shr if unsigned || op == BinOp::Shr => {
            let m = if op == BinOp::Div {
                power(constant)?
            } else {
                u32::try_from(constant).ok().filter(|&m| m < 32)?
            };
            divides(m, shift).then(|| shifted(shift.map(|s| s >> m), None))
        }
        _ => None,
    }
}

fn binary(op: BinOp, ty: Scalar, a: Value, b: Value) -> Value {
    let (
        Value::Shifted {
            shift: sa,
            known: ka,
            object: None,
        },
        Value::Shifted {
            shift: sb,
            known: kb,
            object: None,
        },
    ) = (a, b)
    else {
        return match (a, b) {
            (Value::Unset, _) | (_, Value::Unset) => Value::Unset,
            _ => Value::Other,
        };
    };
    let free_a = sa == [0; 3];
    let free_b = sb == [0; 3];
    if !ty.is_integer() {
        return if free_a && free_b { FREE } else { Value::Other };
    }
    let both = ka.zip(kb);
    if let Some(value) = low_and_high_bits(op, ty, (sa, ka), (sb, kb)) {
        return value;
    }
    match op {
        BinOp::Add => match add_scaled(sa, sb, 1) {
            Some(shift) => shifted(shift, both.and_then(|(x, y)| x.checked_add(y))),
            None => Value::Other,
        },
        BinOp::Sub => match add_scaled(sa, sb, -1) {
            Some(shift) => shifted(shift, both.and_then(|(x, y)| x.checked_sub(y))),
            None => Value::Other,
        },
        BinOp::Mul => {
            let product = both.and_then(|(x, y)| x.checked_mul(y));
            if free_a && free_b {
                shifted([0; 3], product)
            } else if let (true, Some(k)) = (free_a, ka) {
                add_scaled([0; 3], sb, k).map_or(Value::Other, |s| shifted(s, product))
            } else if let (true, Some(k)) = (free_b, kb) {
                add_scaled([0; 3], sa, k).map_or(Value::Other, |s| shifted(s, product))
            } else {
                Value::Other
            }
        }
        BinOp::Shl => match kb {
            Some(k) if free_b && (0..32).contains(&k) => {
                let factor = 1i64 << k;
                add_scaled([0; 3], sa, factor).map_or(Value::Other, |s| {
                    shifted(s, ka.and_then(|x| x.checked_mul(factor)))
                })
            }
            _ if free_a && free_b => FREE,
            _ => Value::Other,
        },
        _ if free_a && free_b => {
            let value = both.and_then(|(x, y)| match op {
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                BinOp::BitAnd => Some(x & y),
                BinOp::BitOr => Some(x | y),
                BinOp::BitXor => Some(x ^ y),
                BinOp::Min => Some(x.min(y)),
                BinOp::Max => Some(x.max(y)),
                _ => None,
            });
            shifted([0; 3], value)
        }
        _ => Value::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile;
    use crate::ir::{ObjectSpace, REG_BLOCK_DIM};

    /// What the analysis proves of kernel `kernel` in `source` with `defines` (launched as
    /// `launch_of` says), and the names of the objects it numbers.
    fn analyzed(
        source: &str,
        defines: &[(&str, &str)],
        kernel: &str,
    ) -> (Option<BlockShift>, HashMap<usize, String>) {
        let defines: Vec<(String, String)> = defines
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        let program = compile(source, &defines).expect("the kernel compiles");
        let function = &program.functions[program.kernel_index(kernel).expect("the kernel")];
        let (names, constants) = launch_of(&program, function);
        (analyze(function, &constants), names)
    }

    /// A launch of `function` with `n` = 1024 (every other number too) and blocks of 16 x 16 in
    /// a grid of 64 x 64: the names of the objects it numbers (pointer parameters from 1000 on)
    /// and what the analysis knows of it.
    fn launch_of(
        program: &crate::Program,
        function: &FunctionIr,
    ) -> (HashMap<usize, String>, LaunchConstants) {
        let mut constants = LaunchConstants::default();
        let mut names: HashMap<usize, String> = HashMap::new();
        for (i, param) in function.params.iter().enumerate() {
            if matches!(param.ty, crate::ast::Type::Pointer { .. }) {
                let object = 1000 + i;
                constants.pointers.insert(param.reg, object);
                constants.global_objects.push(object);
                names.insert(object, param.name.clone());
            } else {
                constants.values.insert(param.reg, 1024);
            }
        }
        for (k, v) in [16, 16, 1, 64, 64, 1].into_iter().enumerate() {
            constants.values.insert(REG_BLOCK_DIM + k as Reg, v);
        }
        for (id, object) in program.objects.iter().enumerate() {
            names.insert(id, object.name.clone());
            match object.space {
                ObjectSpace::Shared | ObjectSpace::DynamicShared => {
                    constants.shared_objects.push(id);
                }
                ObjectSpace::Local if !object.in_registers => constants.local_objects.push(id),
                _ => {}
            }
        }
        (names, constants)
    }

    /// Whether the warps of kernel `k` in `source` (launched as `analyzed` says) are shown alike
    /// when `threadIdx` moves by `thread_shift` from a warp to the next of its class, and if so
    /// with how many guards.
    fn check_warps(source: &str, thread_shift: [i64; 3], expected_guards: Option<usize>) {
        let program = compile(source, &[]).expect("the kernel compiles");
        let function = &program.functions[program.kernel_index("k").expect("the kernel")];
        let (_, constants) = launch_of(&program, function);
        let found = analyze_warps(function, &constants, thread_shift).map(|p| p.guards.len());
        assert_eq!(found, expected_guards, "{source}");
    }

    /// The shifts proved for kernel `k` in `source` (launched as `analyzed` says), by object
    /// name; `None` when the blocks are not shown alike.
    fn check(source: &str, expected: Option<&[(&str, [i64; 3])]>) {
        check_kernel(source, &[], "k", expected);
    }

    fn check_kernel(
        source: &str,
        defines: &[(&str, &str)],
        kernel: &str,
        expected: Option<&[(&str, [i64; 3])]>,
    ) {
        let (shift, names) = analyzed(source, defines, kernel);
        let found = shift.map(|shift| {
            shift
                .bytes_per_block
                .iter()
                .map(|(object, bytes)| (names[object].clone(), *bytes))
                .collect::<Vec<_>>()
        });
        let expected = expected.map(|list| {
            let mut list: Vec<(String, [i64; 3])> =
                list.iter().map(|(n, s)| (n.to_string(), *s)).collect();
            list.sort_by_key(|(n, _)| names.iter().find(|(_, m)| *m == n).map(|(id, _)| *id));
            list
        });
        assert_eq!(found, expected, "{source}");
    }

    #[test]
    fn tiled_matmul_blocks_read_a_a_tile_row_apart_and_b_a_tile_column_apart() {
        check_kernel(
            include_str!("../../../www/kernels/matmul.cu"),
            &[("TILE_WIDTH", "16"), ("PAD", "0")],
            "mm_tiled",
            Some(&[
                ("sa", [0, 0, 0]),
                ("sb", [0, 0, 0]),
                ("a", [0, 16 * 1024 * 4, 0]),
                ("b", [16 * 4, 0, 0]),
                ("c", [16 * 4, 16 * 1024 * 4, 0]),
            ]),
        );
    }

    #[test]
    fn a_bounds_check_on_the_block_index_is_a_guard() {
        let source = "__global__ void k(float* c, int n) {
               int i = blockIdx.x * blockDim.x + threadIdx.x;
               if (i < n) c[i] = 1.0f;
             }";
        check(source, Some(&[("c", [16 * 4, 0, 0])]));
        check_guards(source, &[(BinOp::Lt, [16, 0, 0])]);
    }

    /// The guards proved for kernel `k` of `source` (launched as `analyzed` says): comparison and
    /// shift of `lhs - rhs`.
    fn check_guards(source: &str, expected: &[(BinOp, [i64; 3])]) {
        let (shift, _) = analyzed(source, &[], "k");
        let shift = shift.expect("the blocks are shown alike");
        let found: Vec<(BinOp, [i64; 3])> = shift.guards.iter().map(|g| (g.op, g.shift)).collect();
        assert_eq!(found, expected, "{source}");
    }

    /// Whether a guard `op` whose run block compared every difference from `least` to
    /// `greatest` comes out alike `shift` further on.
    fn check_alike(op: BinOp, compared: Option<(i128, i128)>, shift: i128, expected: bool) {
        let guard = Guard {
            site: (1, 1, 0),
            op,
            shift: [1, 0, 0],
        };
        let mut range = GuardRange::default();
        if let Some((least, greatest)) = compared {
            for difference in least..=greatest {
                range.note(difference, Guard::outcome(op, difference));
            }
        }
        assert_eq!(
            guard.holds_alike(range, shift),
            expected,
            "{op:?} {compared:?} {shift}"
        );
    }

    #[test]
    fn row_below_n_stays_true_while_the_shift_keeps_every_lane_below() {
        // The interior block of a 1024-row matmul in blocks of 16 rows: rows 512..527, so
        // `row - n` runs from -512 to -497.
        check_alike(BinOp::Lt, Some((-512, -497)), 31 * 16, true);
        check_alike(BinOp::Lt, Some((-512, -497)), 32 * 16, false);
        check_alike(BinOp::Lt, Some((-512, -497)), -32 * 16, true);
        // `i > 0` false in lane 0 of the first block only: that block is not the others.
        check_alike(BinOp::Gt, Some((0, 255)), 256, false);
        check_alike(BinOp::Gt, Some((256, 511)), -256, false);
        check_alike(BinOp::Gt, Some((256, 511)), 256, true);
        check_alike(BinOp::Ge, Some((1, 10)), -1, true);
        check_alike(BinOp::Ge, Some((1, 10)), -2, false);
        check_alike(BinOp::Le, Some((-5, 0)), -3, true);
        check_alike(BinOp::Le, Some((-5, 0)), 1, false);
        // Mixed outcomes in the run block hold where no lane crosses to the other side: a
        // difference of -1 (true) moved by 1 is 0 (false).
        check_alike(BinOp::Lt, Some((-3, 3)), 0, true);
        check_alike(BinOp::Lt, Some((-3, 3)), 1, false);
        check_alike(BinOp::Lt, Some((-3, 3)), -1, false);
        // Equality: false throughout in both blocks, or not alike.
        check_alike(BinOp::Eq, Some((1, 9)), 20, true);
        check_alike(BinOp::Eq, Some((1, 9)), -5, false);
        check_alike(BinOp::Ne, Some((0, 9)), 20, false);
        // A guard the block never compared is never compared in the other either.
        check_alike(BinOp::Lt, None, 7, true);
    }

    #[test]
    fn a_loop_test_keeps_each_lanes_trip_count_while_no_lane_crosses() {
        // `for (i = threadIdx.x; i < 2048; i += 256)` in warp 0: the lanes test i - 2048 from
        // -2048 to -225 true (8 times each) and 0 to 31 false (once). Warp 7, 224 further on,
        // tests -1824 to -1 true and 224 to 255 false: every lane the same trip count.
        let guard = Guard {
            site: (1, 1, 0),
            op: BinOp::Lt,
            shift: [32, 0, 0],
        };
        let mut range = GuardRange::default();
        for trip in 0..=8 {
            for lane in 0..32 {
                let difference = lane + 256 * trip - 2048;
                range.note(difference, Guard::outcome(BinOp::Lt, difference));
            }
        }
        assert!(guard.holds_alike(range, 7 * 32));
        assert!(!guard.holds_alike(range, 8 * 32));
    }

    #[test]
    fn a_check_on_the_thread_index_alone_keeps_it() {
        check(
            "__global__ void k(float* c, int n) {
               int i = blockIdx.x * blockDim.x + threadIdx.x;
               if (threadIdx.x < 8) c[i] = 1.0f;
             }",
            Some(&[("c", [16 * 4, 0, 0])]),
        );
    }

    #[test]
    fn a_branch_on_loaded_data_breaks_the_proof() {
        check(
            "__global__ void k(float* c, int n) {
               int i = blockIdx.x * blockDim.x + threadIdx.x;
               if (c[threadIdx.x] > 0.5f) c[i] = 1.0f;
             }",
            None,
        );
    }

    #[test]
    fn an_address_from_loaded_data_breaks_the_proof() {
        check(
            "__global__ void k(float* c, const int* idx, int n) {
               int i = blockIdx.x * blockDim.x + threadIdx.x;
               c[idx[i]] = 1.0f;
             }",
            None,
        );
    }

    #[test]
    fn a_block_index_taken_modulo_is_not_a_shift() {
        check(
            "__global__ void k(float* c, int n) {
               c[(blockIdx.x % 4) * 16 + threadIdx.x] = 1.0f;
             }",
            None,
        );
    }

    #[test]
    fn two_shifts_into_one_buffer_break_the_proof() {
        check(
            "__global__ void k(float* c, int n) {
               c[blockIdx.x * 16 + threadIdx.x] = c[blockIdx.x * 32 + threadIdx.x];
             }",
            None,
        );
    }

    #[test]
    fn a_shared_address_that_moves_with_the_block_breaks_the_proof() {
        check(
            "__global__ void k(float* c, int n) {
               __shared__ float s[256];
               s[blockIdx.x] = 1.0f;
               __syncthreads();
               c[threadIdx.x] = s[threadIdx.x];
             }",
            None,
        );
    }

    #[test]
    fn a_loop_walking_a_pointer_keeps_its_shift() {
        check(
            "__global__ void k(const float* a, float* c, int n) {
               const float* p = a + blockIdx.x * n;
               float s = 0;
               for (int j = 0; j < n; ++j) { s += *p; p += 1; }
               c[blockIdx.x] = s;
             }",
            Some(&[("a", [1024 * 4, 0, 0]), ("c", [4, 0, 0])]),
        );
    }

    #[test]
    fn an_integer_division_by_loaded_data_breaks_the_proof() {
        // Another block's data could hold the zero that stops it with an error.
        check(
            "__global__ void k(const int* a, int* c, int n) {
               int i = blockIdx.x * blockDim.x + threadIdx.x;
               c[i] = 100 / a[i];
             }",
            None,
        );
        // A division by the thread index is the same in every block.
        check(
            "__global__ void k(const int* a, int* c, int n) {
               int i = blockIdx.x * blockDim.x + threadIdx.x;
               c[i] = a[i] / (threadIdx.x + 1) + a[i] % n;
             }",
            Some(&[("a", [64, 0, 0]), ("c", [64, 0, 0])]),
        );
    }

    #[test]
    fn a_variable_assigned_again_in_straight_line_code_takes_its_new_shift() {
        // The transpose's x and y: from blockIdx.x and .y for the load, swapped for the store.
        check(
            "__global__ void k(const float* in, float* out, int n) {
               int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
               out[0] = in[y * n + x];
               x = blockIdx.y * 32 + threadIdx.x;
               y = blockIdx.x * 32 + threadIdx.y;
               out[y * n + x] = 1.0f;
             }",
            None,
        );
        check(
            "__global__ void k(const float* in, float* out, int n) {
               int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
               float v = in[y * n + x];
               x = blockIdx.y * 32 + threadIdx.x;
               y = blockIdx.x * 32 + threadIdx.y;
               out[y * n + x] = v;
             }",
            Some(&[
                ("in", [128, 32 * 1024 * 4, 0]),
                ("out", [32 * 1024 * 4, 128, 0]),
            ]),
        );
        // Assigned in one arm of `?:`, it keeps both values: not a shift.
        check(
            "__global__ void k(const float* in, float* out, int n) {
               int x = blockIdx.x * 32 + threadIdx.x;
               int z = threadIdx.x < 4 ? (x = blockIdx.y) : 0;
               out[x] = in[z];
             }",
            None,
        );
    }

    #[test]
    fn atomics_break_the_proof() {
        check(
            "__global__ void k(int* c, int n) { atomicAdd(&c[blockIdx.x], 1); }",
            None,
        );
    }

    #[test]
    fn a_loop_bounded_by_the_block_index_is_a_guard_that_its_exit_breaks() {
        // `j - blockIdx.x` runs up to 0, where the loop ends: the block's guard range mixes
        // outcomes, so no other block is shown alike at run time (`holds_alike`).
        check_guards(
            "__global__ void k(float* c, int n) {
               for (int j = 0; j < blockIdx.x; ++j) c[threadIdx.x] += 1.0f;
             }",
            &[(BinOp::Lt, [-1, 0, 0])],
        );
    }

    #[test]
    fn tiled_matmul_warps_of_16_by_16_blocks_are_two_tile_rows_apart() {
        // 16 x 16 blocks with padded rows of 17 floats: a warp is two rows of the tile, and its
        // accesses move two rows of their array a warp, but for `sb[k][tx]`, which stays.
        let program = compile(
            include_str!("../../../www/kernels/matmul.cu"),
            &[
                ("TILE_WIDTH".to_string(), "16".to_string()),
                ("PAD".to_string(), "1".to_string()),
            ],
        )
        .expect("the kernel compiles");
        let function = &program.functions[program.kernel_index("mm_tiled").expect("the kernel")];
        let (_, constants) = launch_of(&program, function);
        let proof = analyze_warps(function, &constants, [0, 2, 0]).expect("the warps are alike");
        assert!(proof.guards.is_empty());
        let moves: Vec<(u32, AccessKind, i64)> = proof
            .site_shifts
            .expect("every access moves by one amount")
            .iter()
            .map(|site| (site.span.line, site.kind, site.bytes_per_step))
            .collect();
        let (row, tile_row) = (2 * 1024 * 4, 2 * 17 * 4);
        assert_eq!(
            moves,
            [
                // sa[ty][tx] = a[row * n + p * TILE_WIDTH + tx], the store's span first
                (26, AccessKind::Store, tile_row),
                (26, AccessKind::Load, row),
                // sb[ty][tx] = b[(p * TILE_WIDTH + ty) * n + col]
                (27, AccessKind::Store, tile_row),
                (27, AccessKind::Load, row),
                // r += sa[ty][k] * sb[k][tx]
                (29, AccessKind::Load, tile_row),
                (29, AccessKind::Load, 0),
                // c[row * n + col] = r
                (32, AccessKind::Store, row),
            ]
        );
    }

    #[test]
    fn a_lane_parity_branch_is_the_same_in_every_warp() {
        check_warps(
            "__global__ void k(float* out) {
               int t = threadIdx.x;
               if ((t & 1) == 0) out[t] = 1.0f; else out[t] = 2.0f;
             }",
            [32, 0, 0],
            Some(0),
        );
    }

    #[test]
    fn a_warp_parity_branch_needs_classes_of_every_other_warp() {
        let source = "__global__ void k(float* out) {
               int t = threadIdx.x;
               if ((t & 32) == 0) out[t] = 1.0f;
             }";
        check_warps(source, [32, 0, 0], None);
        check_warps(source, [64, 0, 0], Some(0));
    }

    #[test]
    fn the_warp_index_moves_by_one_a_warp() {
        check_warps(
            "__global__ void k(float* out) {
               out[threadIdx.x / 32] = 1.0f;
               out[64 + (threadIdx.x >> 5)] = 1.0f;
             }",
            [32, 0, 0],
            Some(0),
        );
    }

    #[test]
    fn a_check_on_the_thread_index_is_a_guard_between_warps() {
        check_warps(
            "__global__ void k(float* out) {
               if (threadIdx.x < 100) out[threadIdx.x] = 1.0f;
             }",
            [32, 0, 0],
            Some(1),
        );
    }

    #[test]
    fn a_shared_array_may_move_between_warps() {
        check_warps(
            "__global__ void k(float* out) {
               __shared__ float s[256];
               s[threadIdx.x] = 1.0f;
               __syncthreads();
               out[threadIdx.x] = s[255 - threadIdx.x];
             }",
            [32, 0, 0],
            Some(0),
        );
    }

    #[test]
    fn local_memory_breaks_the_warp_proof() {
        check_warps(
            "__global__ void k(float* out, int n) {
               float r[8];
               for (int i = 0; i < n; ++i) r[i & 7] = (float)i;
               out[threadIdx.x] = r[threadIdx.x & 7];
             }",
            [32, 0, 0],
            None,
        );
    }

    /// What `analyze_loop` proves of the first loop of kernel `k` in `source` that no other
    /// loop encloses (launched as `analyzed` says): the accesses that move, as (line, bytes per
    /// iteration) in the order of their lines, and how many guards the iterations check; `None`
    /// when its iterations are not shown alike.
    fn check_loop(source: &str, expected: Option<(&[(u32, i64)], usize)>) {
        check_kernel_loop(source, "k", expected);
    }

    fn check_kernel_loop(source: &str, kernel: &str, expected: Option<(&[(u32, i64)], usize)>) {
        check_nth_loop(source, kernel, 0, expected);
    }

    /// `check_kernel_loop` for the `nth` loop of the kernel in the order they begin (0: the
    /// first); a loop after the first that begins before the first ends lies inside it.
    fn check_nth_loop(
        source: &str,
        kernel: &str,
        nth: usize,
        expected: Option<(&[(u32, i64)], usize)>,
    ) {
        let program = compile(source, &[]).expect("the kernel compiles");
        let function = &program.functions[program.kernel_index(kernel).expect("the kernel")];
        let (_, constants) = launch_of(&program, function);
        let begin = function
            .code
            .iter()
            .enumerate()
            .filter(|(_, op)| matches!(op, Op::LoopBegin { .. }))
            .nth(nth)
            .expect("the loop")
            .0;
        let found = analyze_loop(function, &constants, begin).map(|proof| {
            let moves: Vec<(u32, i64)> = proof
                .site_shifts
                .iter()
                .filter(|site| site.bytes_per_step != 0)
                .map(|site| (site.span.line, site.bytes_per_step))
                .collect();
            (moves, proof.guards.len())
        });
        let expected = expected.map(|(moves, guards)| (moves.to_vec(), guards));
        assert_eq!(found, expected, "{source}");
    }

    #[test]
    fn each_phase_of_the_guarded_tiled_matmul_moves_a_tile_along_a_and_down_b() {
        // The boundary-checks lesson's kernel with n = 1024: a tile of `a` 16 floats further
        // each phase (line 20), one of `b` 16 rows further down (line 25); the loop's test and
        // both bounds checks are the guards.
        check_kernel_loop(
            include_str!("../../../www/kernels/boundary.cu"),
            "mm_tiled_guarded",
            Some((&[(20, 64), (25, 16 * 1024 * 4)], 3)),
        );
    }

    #[test]
    fn each_iteration_of_the_tiled_matmuls_k_loop_moves_along_a_row_of_one_tile_and_down_the_other()
    {
        // The `k` loop inside the loop over the phases (line 30): `sa[ty][k]` one float further
        // each iteration, `sb[k][tx]` one row of 16 floats further; its test is the one guard.
        check_nth_loop(
            include_str!("../../../www/kernels/boundary.cu"),
            "mm_tiled_guarded",
            1,
            Some((&[(30, 4), (30, 16 * 4)], 1)),
        );
    }

    #[test]
    fn a_register_a_nested_loop_assigns_is_not_an_address_in_the_next_iteration_around_it() {
        // `j` holds what the `k` loop's last iteration left when the next phase reads `a[j]`:
        // a run that skips iterations of the `k` loop leaves another value there.
        check_nth_loop(
            "__global__ void k(const float* a, float* out, int n) {
               float r = 0;
               int j = 0;
               for (int p = 0; p < n; ++p) {
                 r += a[j];
                 for (int k = 0; k < 8; ++k) { j = k; r += a[threadIdx.x + k]; }
               }
               out[threadIdx.x] = r;
             }",
            "k",
            1,
            None,
        );
    }

    #[test]
    fn an_accumulator_carries_data_but_no_address() {
        check_loop(
            "__global__ void k(const float* a, float* out, int n) {
               float r = 0;
               for (int k = 0; k < n; ++k) r += a[threadIdx.x * n + k];
               out[threadIdx.x] = r;
             }",
            Some((&[(3, 4)], 1)),
        );
    }

    #[test]
    fn a_grid_stride_loop_steps_by_the_whole_grid() {
        // 64 blocks of 16 x 16 threads along x: 1,024 elements an iteration.
        check_loop(
            "__global__ void k(const float* a, float* out, int n) {
               for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
                    i += blockDim.x * gridDim.x) {
                 out[i] = a[i];
               }
             }",
            Some((&[(4, 4096), (4, 4096)], 1)),
        );
    }

    #[test]
    fn a_doubling_step_is_no_constant_step() {
        check_loop(
            "__global__ void k(float* out, int n) {
               for (int j = 1; j < n; j *= 2) out[j] = 0.0f;
             }",
            None,
        );
    }

    #[test]
    fn a_register_the_loop_assigns_is_not_an_address_after_it() {
        // A warp that skips iterations 1 and 2 leaves `last` at 0 where a full run leaves 2.
        check_loop(
            "__global__ void k(float* out) {
               int last = 0;
               for (int j = 0; j < 8; ++j) {
                 if (j < 3) last = j;
               }
               out[last] = 1.0f;
             }",
            None,
        );
    }

    #[test]
    fn a_loop_that_breaks_is_not_shown_alike() {
        check_loop(
            "__global__ void k(const float* a, float* out, int n) {
               for (int j = 0; j < n; ++j) {
                 if (j > threadIdx.x) break;
                 out[j] = a[j];
               }
             }",
            None,
        );
    }

    #[test]
    fn a_branch_on_loaded_data_in_the_loop_is_not_shown_alike() {
        check_loop(
            "__global__ void k(const float* a, float* out, int n) {
               for (int j = 0; j < n; ++j) {
                 if (a[j] > 0.5f) out[j] = 1.0f;
               }
             }",
            None,
        );
    }
}
