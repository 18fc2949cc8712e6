//! What nvcc makes of the checked program: how it unrolls each loop, and about how many SASS
//! instructions each statement issues.
//!
//! The interpreter runs the source's operations, one IR node at a time, but the hardware issues
//! what nvcc compiled: `x % d` for a run-time `d` is a dozen instructions, a constant operand is
//! free (an immediate), a loop-invariant expression is hoisted out of its loop, and a loop of a
//! run-time trip count is unrolled so that its test and branch are paid once per several
//! iterations. Nsight Compute's `smsp__inst_executed` counts those instructions, and issue (four
//! warp instructions a clock on an H100 SM) limits a kernel whose instructions are not memory
//! operations (probe groups J and L).
//!
//! **Unrolling** (`unroll_of`, decided once, by `sema`, for every loop). Read off `cuobjdump -sass`
//! of the probes (`tests/reference/probes/probe.sass`) and of a study of loop bodies compiled the
//! same way (nvcc 13.0, `-O3`, sm_90):
//! - a constant trip count: unrolled fully (`mm_tiled`'s tile loop, `tr_*`'s loop of four, and a
//!   doubling loop between constants, `p_pred_grow`'s `w <<= 1` from 1 to 256);
//! - `#pragma unroll N`: N copies (`p_walk_u1`, `_u8`, `_u16`);
//! - a run-time trip count with a constant step: 16 copies of a body of up to 10 instructions
//!   (`p_walk`, `p_int_and`, `p_smem_alu3`, `p_barrier`, `mm_naive`: 16, then 8, 4 and 1 for the
//!   rest), otherwise 4, 2 or 1, the most whose copies stay within 160 instructions
//!   (`p_smem_alu6` and a body of eight loads: 4; `p_mlp8`: 2; `p_mlp16`: 1);
//! - any other loop (a grid-stride loop, whose step is a run-time value; a loop whose exit
//!   depends on data): not unrolled.
//!
//! **Instructions** (`ISSUE_SCALE`-ths of a warp instruction per execution of an op, `annotate`).
//! One per arithmetic operation, comparison, conversion between integer and float, load, store,
//! atomic, barrier and branch; nothing for constants, variables, assignments to registers and
//! loop-invariant expressions inside a loop (hoisted); one for an address term that is not a
//! constant (`IMAD.WIDE`); an add folded into the add or multiply it takes (`IADD3`, `IMAD`) and
//! a logical operation into the logical operation it takes (`LOP3`) cost nothing. Integer division
//! and remainder by a run-time value expand to the sequences of probe group J (9 to 13
//! instructions); by a constant, to a multiply-high and a shift (a power of two: one shift or
//! mask). A loop's test, branch and step are paid once per unrolled copy set.
//!
//! **If-conversion** (`predicated_body`, decided by `sema` for every `if` without `else`): a
//! straight-line body of at most 8 instructions becomes predicated instructions that every warp
//! reaching the `if` issues, whether or not a lane takes it, and no branch is left (probe group
//! H: `p_pred_st`, `p_pred_ldst` and `p_pred_grow`'s bodies are predicated, `p_pred_long`'s of
//! about 24 instructions branches).
//!
//! Known limits: the counts are estimates of what nvcc emits, per source operation; address
//! arithmetic that nvcc folds into immediate offsets of unrolled copies is still counted, and an
//! `if` with an `else` is taken to branch.

use super::ast::{FunctionKind, Scalar};
use super::ir::{
    BinOp, Ex, ExKind, FunctionIr, MathFn, MemObject, ObjectSpace, Op, OutputKind, Place,
    PredicatedBody, Reg, Unroll, WarpOp, REG_BLOCK_DIM, REG_THREAD_IDX,
};
use crate::math_library::{LibraryFn, RoundedOp};
use crate::name_map::NameMap;
use crate::reg_set::RegSet;
use crate::registers::{self, for_each_expression, written_registers};
use std::collections::HashMap;

/// Issue costs are whole multiples of this fraction of a warp instruction, so that a loop's test
/// paid once per 16 copies is still counted exactly in integers.
pub const ISSUE_SCALE: u32 = 64;

/// How many executions of one load a warp keeps in flight outside any loop of its function (a
/// site outside loops repeats only when its `__device__` function is called again).
pub const LOADS_IN_FLIGHT_OUTSIDE_LOOPS: u32 = 4;

/// How many copies of a fully unrolled loop's loads a warp has in flight together at most: nvcc
/// unrolls a loop of 256 trips 32 times (study of loop bodies, see the module doc).
pub const LOADS_IN_FLIGHT_FULL_UNROLL: u32 = 32;

/// The largest body (in instructions, the loop's test and step included) that nvcc copies 16
/// times, and the most instructions it lets the copies of a larger body take.
const SMALL_BODY: u32 = 10;
const UNROLLED_BUDGET: u32 = 160;

/// The unroll factor nvcc gives a loop of a run-time trip count whose body issues `body` SASS
/// instructions an iteration (module doc).
pub fn unroll_by_size(body: u32) -> u32 {
    if body <= SMALL_BODY {
        16
    } else {
        [4, 2]
            .into_iter()
            .find(|copies| copies * body <= UNROLLED_BUDGET)
            .unwrap_or(1)
    }
}

/// How a loop that `sema` emitted between `begin` (its `LoopBegin`) and `end` (its `LoopEnd`)
/// is unrolled when neither a pragma nor a constant trip count decides it: by the size of its body
/// if its trip count can be computed when it starts (its condition compares a variable that the
/// loop only steps by a constant with a loop-invariant bound), otherwise not at all.
pub fn runtime_unroll(code: &[Op], begin: usize, end: usize) -> Unroll {
    let written = written_registers(&code[begin..end]);
    let counted = code[begin..end].iter().any(|op| match op {
        Op::LoopCond { cond, .. } => counted_condition(cond, code, begin, end, &written),
        _ => false,
    });
    if !counted {
        return Unroll::Times(1);
    }
    let invariant = |reg: Reg| !written.contains(&reg);
    let body: u32 = code[begin..end]
        .iter()
        .map(|op| op_cost(op, &invariant) + contracted_multiplies(op, &invariant) * ISSUE_SCALE)
        .sum::<u32>()
        .div_ceil(ISSUE_SCALE);
    Unroll::Times(unroll_by_size(body))
}

/// The multiplies of `op` that `contracts_a_multiply` folds into an add. The sizes
/// `unroll_by_size`'s bounds were read with count each multiply-add as two instructions, so a
/// body's size for them counts these again: the unrolling the probes and the timing reference
/// were checked with stays as it was.
fn contracted_multiplies(op: &Op, invariant: &dyn Fn(Reg) -> bool) -> u32 {
    let root = match op {
        Op::Eval(e) | Op::If { cond: e, .. } | Op::LoopCond { cond: e, .. } => e,
        Op::Return(Some(e)) => e,
        _ => return 0,
    };
    let mut count = 0;
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        count += match &e.kind {
            ExKind::Binary { op, ty, lhs, rhs } => {
                u32::from(contracts_a_multiply(*op, *ty, lhs, rhs, invariant))
            }
            ExKind::Compound { op, ty, value, .. } => {
                u32::from(contracts_a_multiply(*op, *ty, value, value, invariant))
            }
            _ => 0,
        };
        stack.extend(e.children());
    }
    count
}

/// `i < n` (or `<=`, `>`, `>=`, `!=`, either way round) with `i` stepped by a constant and `n`
/// not written in the loop.
fn counted_condition(cond: &Ex, code: &[Op], begin: usize, end: usize, written: &RegSet) -> bool {
    let ExKind::Binary { op, lhs, rhs, .. } = &cond.kind else {
        return false;
    };
    if !matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Ne
    ) {
        return false;
    }
    let invariant = |e: &Ex| is_invariant(e, &|reg| !written.contains(&reg));
    let counter = |e: &Ex| match strip_conversions(e).kind {
        ExKind::Reg(reg) => constant_steps_only(reg, &code[begin..end]),
        _ => false,
    };
    (counter(lhs) && invariant(rhs)) || (counter(rhs) && invariant(lhs))
}

fn strip_conversions(e: &Ex) -> &Ex {
    match &e.kind {
        ExKind::Convert { value, .. } => strip_conversions(value),
        _ => e,
    }
}

/// Register `reg` is written in `ops` only by steps of a constant: `++`, `--`, `+= c`, `-= c`.
fn constant_steps_only(reg: Reg, ops: &[Op]) -> bool {
    let mut steps = 0;
    let mut other = false;
    for op in ops {
        for_each_expression(op, &mut |e| match &e.kind {
            ExKind::IncDec {
                place: Place::Reg { reg: r, .. },
                ..
            } if *r == reg => steps += 1,
            ExKind::Compound {
                place: Place::Reg { reg: r, .. },
                op: BinOp::Add | BinOp::Sub,
                value,
                ..
            } if *r == reg => {
                if matches!(strip_conversions(value).kind, ExKind::Const(_)) {
                    steps += 1;
                } else {
                    other = true;
                }
            }
            ExKind::Assign {
                place: Place::Reg { reg: r, .. },
                ..
            }
            | ExKind::Compound {
                place: Place::Reg { reg: r, .. },
                ..
            } if *r == reg => other = true,
            _ => {}
        });
    }
    steps >= 1 && !other
}

/// The expression computes the same value in every iteration of the loop: it reads no memory,
/// writes nothing and reads only registers the loop does not write, so nvcc computes it once
/// before the loop.
fn is_invariant(e: &Ex, invariant: &dyn Fn(Reg) -> bool) -> bool {
    match &e.kind {
        ExKind::Reg(reg) => invariant(*reg),
        ExKind::Load { .. }
        | ExKind::Assign { .. }
        | ExKind::Compound { .. }
        | ExKind::IncDec { .. }
        | ExKind::Atomic { .. }
        | ExKind::Call { .. }
        | ExKind::Warp { .. }
        | ExKind::Output { .. }
        | ExKind::Fence => false,
        _ => e.children().into_iter().all(|c| is_invariant(c, invariant)),
    }
}

/// The SASS instructions of one execution of `op`, in `ISSUE_SCALE`-ths, before its loop's
/// unrolling is taken into account.
fn op_cost(op: &Op, invariant: &dyn Fn(Reg) -> bool) -> u32 {
    let whole = match op {
        Op::Eval(e) => expression_cost(e, invariant),
        // The comparison (in the condition) and the branch; an if-converted body has no branch,
        // its instructions take the comparison's predicate.
        Op::If {
            cond,
            predicated: Some(_),
            ..
        } => expression_cost(cond, invariant),
        Op::If { cond, .. } | Op::LoopCond { cond, .. } => expression_cost(cond, invariant) + 1,
        Op::Return(value) => value.as_ref().map_or(0, |e| expression_cost(e, invariant)) + 1,
        Op::Else { .. } | Op::Break | Op::Continue | Op::SyncThreads | Op::SyncWarp => 1,
        Op::EndIf | Op::LoopBegin { .. } | Op::LoopEnd | Op::ContinuePoint | Op::Jump(_) => 0,
    };
    whole * ISSUE_SCALE
}

/// The SASS instructions of one evaluation of `e` (whole instructions).
fn expression_cost(e: &Ex, invariant: &dyn Fn(Reg) -> bool) -> u32 {
    if is_invariant(e, invariant) {
        return 0;
    }
    // A choice made by a constant (`N == 32 ? ... : ...` in a template) is made by nvcc: only
    // the side chosen is code.
    if let ExKind::Select { cond, a, b, .. } = &e.kind {
        if let ExKind::Const(bits) = cond.kind {
            return expression_cost(if bits != 0 { a } else { b }, invariant);
        }
    }
    let own = match &e.kind {
        ExKind::Const(_)
        | ExKind::Reg(_)
        | ExKind::AddrOf(_)
        | ExKind::Component(..)
        | ExKind::Comma(..)
        | ExKind::Call { .. }
        | ExKind::MakeVector { .. } => 0,
        ExKind::Convert { from, to, .. } => u32::from(
            from.is_float() != to.is_float() || from.size() != to.size() && from.is_float(),
        ),
        // A negation or complement becomes an operand modifier of its user.
        ExKind::Unary { .. } => 0,
        ExKind::Binary { op, ty, lhs, rhs } => {
            binary_cost(*op, *ty, lhs, rhs, invariant)
                - u32::from(contracts_a_multiply(*op, *ty, lhs, rhs, invariant))
        }
        ExKind::Logical { .. } | ExKind::Select { .. } | ExKind::Fma { .. } => 1,
        ExKind::Math { f, .. } => math_cost(*f),
        ExKind::Offset { terms, .. } => terms
            .iter()
            .filter(|t| !is_invariant(&t.index, invariant))
            .count() as u32,
        ExKind::PtrDiff { .. } => 2,
        // A vector nvcc cannot load at once is loaded in parts (`Elem::accesses`).
        ExKind::Load { elem, .. } => elem.accesses(),
        // One `SHFL`, `VOTE`, `MATCH` or `REDUX` (tests/reference/warp_probes/warp_probes.sass).
        ExKind::Atomic { .. } | ExKind::Fence | ExKind::Warp { .. } => 1,
        // `printf` stores each argument to the thread's stack and calls `vprintf` (a handful of
        // instructions around the `CALL`); `clock()` is one `CS2R`; `assert` a test and a branch.
        ExKind::Output { kind, args } => match kind {
            OutputKind::Printf(_) => 4 + args.len() as u32,
            OutputKind::Clock | OutputKind::Assert => 1,
        },
        ExKind::Assign { place, .. } => match place {
            Place::Mem { elem, .. } => elem.accesses(),
            Place::Reg { .. } => 0,
        },
        ExKind::Compound {
            place,
            op,
            ty,
            value,
            ..
        } => {
            // `s += a * b` is one `FFMA` too.
            let combine = binary_cost(*op, *ty, value, value, invariant).max(1)
                - u32::from(contracts_a_multiply(*op, *ty, value, value, invariant));
            match place {
                Place::Reg { .. } => combine,
                // The read, the operation and the write.
                Place::Mem { .. } => combine + 2,
            }
        }
        ExKind::IncDec { place, .. } => match place {
            Place::Reg { .. } => 1,
            Place::Mem { .. } => 3,
        },
    };
    own + e
        .children()
        .into_iter()
        .map(|c| expression_cost(c, invariant))
        .sum::<u32>()
}

/// nvcc contracts a floating-point multiply whose product is added or subtracted into one
/// `FFMA` (or `DFMA`), as `-fmad=true`, its default, allows: `a * b + c` is one instruction, not
/// two (probe `w_fma`: 1.07 instructions per `x * 0.999f + 0.001f`, the loop's test included).
/// The add then costs nothing of its own, its multiply counted once. One multiply is taken.
fn contracts_a_multiply(
    op: BinOp,
    ty: Scalar,
    lhs: &Ex,
    rhs: &Ex,
    invariant: &dyn Fn(Reg) -> bool,
) -> bool {
    let is_product = |e: &Ex| {
        matches!(&e.kind, ExKind::Binary { op: BinOp::Mul, ty: t, .. } if *t == ty)
            && !is_invariant(e, invariant)
    };
    matches!(ty, Scalar::F32 | Scalar::F64)
        && matches!(op, BinOp::Add | BinOp::Sub)
        && (is_product(lhs) || is_product(rhs))
}

fn binary_cost(op: BinOp, ty: Scalar, lhs: &Ex, rhs: &Ex, invariant: &dyn Fn(Reg) -> bool) -> u32 {
    if !ty.is_float() && folds_an_operand(op, lhs, rhs, invariant) {
        return 0;
    }
    if ty.is_float() {
        return match op {
            // IEEE division: a reciprocal, its Newton refinement and the test for the slow path.
            BinOp::Div => 10,
            BinOp::Rem => 12,
            _ => 1,
        };
    }
    match op {
        BinOp::Div | BinOp::Rem => {
            let signed = ty.is_signed();
            match constant_value(rhs) {
                Some(d) if d.is_power_of_two() => {
                    if signed {
                        3
                    } else {
                        1
                    }
                }
                Some(_) => 2 + u32::from(op == BinOp::Rem) + 2 * u32::from(signed),
                // Probe group J (`smsp__inst_executed` per iteration against `& (d - 1)`, loops
                // unrolled four times): `% d` 9, `/ d` 10 and signed `% d` 13 instructions.
                None => match (op, signed) {
                    (BinOp::Rem, false) => 9,
                    (BinOp::Div, false) => 10,
                    _ => 13,
                },
            }
        }
        _ => 1,
    }
}

/// `IADD3` adds three values, `IMAD` multiplies and adds, `LEA` shifts and adds, `LOP3` computes
/// any logical function of three values: an integer add (or logical operation) whose operand is
/// an add, multiply or shift (a logical operation) that is not itself folded into its own operand
/// is one instruction with it. So a chain of n adds takes about n / 2 instructions.
fn folds_an_operand(op: BinOp, lhs: &Ex, rhs: &Ex, invariant: &dyn Fn(Reg) -> bool) -> bool {
    const ADDS: [BinOp; 2] = [BinOp::Add, BinOp::Sub];
    const INTO_ADDS: [BinOp; 4] = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Shl];
    const LOGIC: [BinOp; 3] = [BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor];
    let folding: &[BinOp] = if ADDS.contains(&op) {
        &INTO_ADDS
    } else if LOGIC.contains(&op) {
        &LOGIC
    } else {
        return false;
    };
    [lhs, rhs].into_iter().any(|child| match &child.kind {
        ExKind::Binary {
            op: inner,
            ty,
            lhs,
            rhs,
        } => {
            folding.contains(inner)
                && !ty.is_float()
                && !is_invariant(child, invariant)
                && !folds_an_operand(*inner, lhs, rhs, invariant)
        }
        _ => false,
    })
}

fn constant_value(e: &Ex) -> Option<u64> {
    match &strip_conversions(e).kind {
        ExKind::Const(bits) => Some(*bits),
        _ => None,
    }
}

/// The CUDA math functions as nvcc expands them without `-use_fast_math` (approximate: a special
/// function unit instruction and its range reduction or refinement). Where
/// `tests/reference/warp_probes` measures a function (`smsp__inst_executed` per call, less the
/// loop's `FFMA` baseline and the add or multiply around the call), its cost is that count:
/// `exp2f` 4.4, `rsqrtf` 4.1, `expf` 8.1, `tanhf` 15.5, `sqrtf` 10.2, `sinf` 25.4, `__sinf` 2.1,
/// `__expf` 5.1, and `1.0f / x` 10.1 (`binary_cost`).
fn math_cost(f: MathFn) -> u32 {
    match f {
        MathFn::FastSin | MathFn::FastCos | MathFn::FastLog => 2,
        MathFn::FastExp => 5,
        MathFn::Fabs => 0,
        MathFn::Floor
        | MathFn::Ceil
        | MathFn::Round
        | MathFn::Trunc
        | MathFn::Fmin
        | MathFn::Fmax
        | MathFn::Abs => 1,
        MathFn::Copysign => 2,
        MathFn::Rsqrt | MathFn::Exp2 => 4,
        // Two passes of the special function unit and their range reduction (`tanhf` is
        // `MUFU.EX2` and `MUFU.RCP`).
        MathFn::Tanh => 16,
        MathFn::Hypot => 6,
        MathFn::Log2 => 4,
        MathFn::Log10 | MathFn::Expm1 | MathFn::Log1p | MathFn::Cbrt => 10,
        MathFn::Sinh | MathFn::Cosh | MathFn::Asin | MathFn::Acos | MathFn::Atan => 14,
        MathFn::Atan2 | MathFn::Fmod => 24,
        MathFn::Sqrt => 10,
        MathFn::Exp => 8,
        MathFn::Log => 6,
        MathFn::Sin | MathFn::Cos => 25,
        MathFn::Tan => 20,
        MathFn::Pow => 30,
        // One `PRMT` or `SHF` (nvcc's usual code for them).
        MathFn::BytePerm
        | MathFn::FunnelShiftL
        | MathFn::FunnelShiftLc
        | MathFn::FunnelShiftR
        | MathFn::FunnelShiftRc => 1,
        // The absolute difference and the add (`VABSDIFF` and `IADD3`).
        MathFn::Sad => 2,
        // An add that keeps the carry of the 33-bit sum and the shift that halves it.
        MathFn::HalvingAdd | MathFn::RoundedHalvingAdd => 3,
        // The cross products of the 32-bit halves, an `IMAD.WIDE.U32` chain.
        MathFn::MulHi64 => 4,
        // One fifth (a word) of a matrix-vector product of cuRAND's skipahead: a test of each
        // of the 160 state bits and a load and exclusive or of five words per set bit, about
        // 2,250 warp instructions a product on an H200 (`curand_init(1234, tid, 0, &s)` over
        // 65,536 threads: 34,948 `smsp__inst_executed` a warp, for 15.5 products a warp).
        MathFn::XorwowPower => 450,
        MathFn::Library(l) => library_cost(l),
    }
}

/// The rest of the math library and the casting and rounded intrinsics (`math_library`). These
/// are estimates from the code nvcc makes for them, not yet measured: a reinterpretation of
/// bits is free (a register read as another type; nvcc removes the move), a conversion is one
/// `F2I`, `I2F` or `F2F` as the language's own casts are (`Convert` above), a rounded add,
/// multiply or fused multiply-add is one `FADD`/`DADD`, `FMUL`/`DMUL` or `FFMA`/`DFMA` with its
/// rounding modifier, and a rounded quotient, reciprocal or root is the slow path of the
/// operation nvcc calls for its directed roundings (about `1.0f / x`'s ten). The special
/// functions follow the length of their library code: `erff` a polynomial and an exponential
/// (about `tanhf`'s length), the inverses a logarithm and two polynomials, the gamma functions
/// their argument reduction and a rational approximation.
fn library_cost(f: LibraryFn) -> u32 {
    use LibraryFn::*;
    match f {
        Bits(_) | HighWord | LowWord | JoinWords => 0,
        Rint | Signbit | ToInteger(..) | ToFloat(..) => 1,
        Arithmetic(RoundedOp::Div | RoundedOp::Rcp | RoundedOp::Sqrt, _) => 10,
        Arithmetic(..) => 1,
        // `FRND` and the conversion; a sign test, an add and a select; the exponent's field
        // taken out, biased and tested for zero and infinity.
        Lround | FastExp10 => 2,
        Fdim | ModfFraction => 3,
        Logb | Ilogb | FrexpExponent | RemquoQuotient => 4,
        FrexpMantissa | Ldexp | Nextafter | SincosCosine | Rhypot => 6,
        Norm3d | Rnorm3d | Exp10 => 8,
        Rcbrt => 10,
        Erf | SinPi | CosPi => 16,
        Erfc | NormCdf => 20,
        ErfInv => 26,
        ErfcInv | NormCdfInv | Remainder => 30,
        Tgamma | Lgamma => 50,
    }
}

/// The special function unit passes of the library functions: an exponential for `erfcf`,
/// `erff` and `normcdff`, a logarithm for the inverses (and a reciprocal for those of the
/// complement), a reciprocal square root for the norms, a reciprocal for the rounded quotients
/// and a reciprocal square root for the rounded roots. Conversions are kept off the unit, as the
/// language's casts are, although Nsight Compute counts `F2I` and `I2F` in the XU pipe.
fn library_sfu_passes(f: LibraryFn) -> u32 {
    use LibraryFn::*;
    match f {
        Erf | Erfc | NormCdf | ErfInv | Exp10 | FastExp10 | Rhypot | Norm3d | Rnorm3d => 1,
        Arithmetic(RoundedOp::Div | RoundedOp::Rcp | RoundedOp::Sqrt, _) => 1,
        ErfcInv | NormCdfInv | Rcbrt | Lgamma | Tgamma => 2,
        _ => 0,
    }
}

/// The passes through the special function unit (`MUFU`) of one call of a single-precision math
/// function: `tests/reference/warp_probes` counts one per call of `exp2f`, `expf`, `rsqrtf`,
/// `sqrtf`, `sinf` and the fast intrinsics, and two of `tanhf` (`smsp__inst_executed_pipe_xu`);
/// the others follow how the math library computes them (a logarithm and an exponential for
/// `powf`, a reciprocal where a quotient is taken).
pub fn sfu_passes(f: MathFn) -> u32 {
    match f {
        MathFn::Fabs
        | MathFn::Floor
        | MathFn::Ceil
        | MathFn::Round
        | MathFn::Trunc
        | MathFn::Fmin
        | MathFn::Fmax
        | MathFn::Abs
        | MathFn::Copysign
        | MathFn::Fmod
        | MathFn::BytePerm
        | MathFn::Sad
        | MathFn::FunnelShiftL
        | MathFn::FunnelShiftLc
        | MathFn::FunnelShiftR
        | MathFn::FunnelShiftRc
        | MathFn::MulHi64
        | MathFn::HalvingAdd
        | MathFn::RoundedHalvingAdd
        | MathFn::XorwowPower => 0,
        MathFn::Library(l) => library_sfu_passes(l),
        MathFn::Tanh | MathFn::Pow | MathFn::Tan | MathFn::Cbrt => 2,
        _ => 1,
    }
}

/// Per op of `function`: the SASS instructions one execution issues (`ISSUE_SCALE`-ths, a loop's
/// test and step shared by its unrolled copies) and how many executions of a load there a warp
/// keeps in flight (the copies of the innermost loop around it whose loads fit the registers,
/// `registers::loads_in_flight`).
pub fn annotate(function: &FunctionIr) -> (Vec<u32>, Vec<u32>) {
    let annotation = annotate_function(function);
    (annotation.issue, annotation.loads_in_flight)
}

/// What `annotate_function` decides for each op of a function, read by the interpreter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// The SASS instructions one execution issues, in `ISSUE_SCALE`-ths.
    pub issue: Vec<u32>,
    /// Those of `issue` that only the ALU pipe executes (`alu_cost`), in `ISSUE_SCALE`-ths.
    pub alu: Vec<u32>,
    /// How many executions of a load there a warp keeps in flight.
    pub loads_in_flight: Vec<u32>,
}

/// `annotate`'s issue and loads in flight, and the share of the issue that takes the ALU pipe.
pub fn annotate_function(function: &FunctionIr) -> Annotation {
    let code = &function.code;
    let mut issue = vec![0u32; code.len()];
    let mut alu = vec![0u32; code.len()];
    let mut in_flight = vec![LOADS_IN_FLIGHT_OUTSIDE_LOOPS; code.len()];
    // The loops around each op, innermost last: (begin, end, unroll, loads in flight).
    let mut open: Vec<(usize, usize, Unroll, u32)> = Vec::new();
    let mut written_in: Vec<RegSet> = Vec::new();
    for (pc, op) in code.iter().enumerate() {
        while open.last().is_some_and(|&(_, end, _, _)| pc > end) {
            open.pop();
            written_in.pop();
        }
        if let Op::LoopBegin {
            end_at,
            unroll,
            counter,
            switch: false,
        } = op
        {
            let copies = match unroll {
                Unroll::Full => LOADS_IN_FLIGHT_FULL_UNROLL,
                Unroll::Times(n) => (*n).max(1),
            };
            let enclosing: Vec<(usize, usize)> = open
                .iter()
                .map(|&(begin, end, _, _)| (begin, end))
                .collect();
            let in_flight = registers::loads_in_flight(function, pc, *end_at, &enclosing, copies);
            open.push((pc, *end_at, *unroll, in_flight));
            let mut written = written_registers(&code[pc..*end_at]);
            if *unroll == Unroll::Full {
                // A fully unrolled loop is no loop: nothing is hoisted out of it that the loop
                // around it writes, and in each copy its counter is a constant (`sa[ty][k]` is an
                // address with an immediate offset, nothing to compute).
                if let Some(around) = written_in.last() {
                    written.extend(around.iter().copied());
                }
                if let Some(counter) = counter {
                    written.remove(counter);
                }
            }
            written_in.push(written);
        }
        // Outside loops nothing is hoisted; inside, what the innermost loop does not write is.
        let invariant = |reg: Reg| written_in.last().is_some_and(|w| !w.contains(&reg));
        let cost = match op {
            // nvcc inlines a `__device__` function: its last `return` is no instruction, the
            // value is left where the caller reads it.
            Op::Return(value) if function.kind != FunctionKind::Kernel && pc + 1 == code.len() => {
                value
                    .as_ref()
                    .map_or(0, |e| expression_cost(e, &invariant) * ISSUE_SCALE)
            }
            _ => op_cost(op, &invariant),
        };
        let alu_whole = op_alu_cost(op, &invariant) * ISSUE_SCALE;
        // The loop's test and its step are paid once per set of unrolled copies.
        let shared_by = match open.last() {
            Some(&(begin, _, unroll, _)) if is_loop_overhead(code, begin, pc) => match unroll {
                Unroll::Full => None,
                Unroll::Times(n) => Some(n.max(1)),
            },
            _ => Some(1),
        };
        (issue[pc], alu[pc]) = shared_by.map_or((0, 0), |n| (cost / n, alu_whole / n));
        if let Some(&(_, _, _, loads)) = open.last() {
            in_flight[pc] = loads;
        }
    }
    if let Some(first) = issue.first_mut() {
        *first += entry_cost(function) * ISSUE_SCALE;
    }
    Annotation {
        issue,
        alu,
        loads_in_flight: in_flight,
    }
}

/// The instructions of `op` that run on the ALU pipe (whole instructions): what only it executes
/// on sm_90, as Nsight Compute's `smsp__inst_executed_pipe_alu` counts them in
/// `tests/reference/warp_probes`: logical operations and shifts (`LOP3`, `SHF`), comparisons
/// (`ISETP`, `FSETP`), minimum and maximum (`IMNMX`, `FMNMX`), selections (`SEL`, `FSEL`),
/// predicate logic (`PLOP3`) and votes (`VOTE`). Integer adds and moves are not counted: ptxas
/// gives them to whichever of the ALU and FMA pipes is free (`IADD3` or `IMAD.IADD`, `MOV` or
/// `IMAD.MOV`; `w_any`'s loop of six instructions takes four on the ALU pipe, its add and its
/// select going to the FMA pipe). The ALU pipe takes a warp instruction in two clocks, half the
/// issue rate, so a loop of mostly these is bound by it.
fn op_alu_cost(op: &Op, invariant: &dyn Fn(Reg) -> bool) -> u32 {
    match op {
        Op::Eval(e) | Op::If { cond: e, .. } | Op::LoopCond { cond: e, .. } => {
            alu_cost(e, invariant)
        }
        Op::Return(Some(e)) => alu_cost(e, invariant),
        _ => 0,
    }
}

/// The ALU pipe's share of `expression_cost(e)` (`op_alu_cost`).
fn alu_cost(e: &Ex, invariant: &dyn Fn(Reg) -> bool) -> u32 {
    if is_invariant(e, invariant) {
        return 0;
    }
    if let ExKind::Select { cond, a, b, .. } = &e.kind {
        if let ExKind::Const(bits) = cond.kind {
            return alu_cost(if bits != 0 { a } else { b }, invariant);
        }
    }
    let own = match &e.kind {
        ExKind::Binary { op, ty, lhs, rhs } => binary_alu_cost(*op, *ty, lhs, rhs, invariant),
        ExKind::Compound { op, ty, value, .. } => {
            binary_alu_cost(*op, *ty, value, value, invariant)
        }
        ExKind::Logical { .. } | ExKind::Select { .. } => 1,
        // A vote takes a predicate: an operand that is not a comparison is tested first
        // (`ISETP.NE`, `w_ballot`'s `v & 1u`).
        ExKind::Warp { op, args, .. } => match op {
            WarpOp::Ballot | WarpOp::Any | WarpOp::All => {
                1 + u32::from(!args.last().map(strip_conversions).is_some_and(|p| {
                    matches!(&p.kind, ExKind::Binary { op, .. } if op.is_comparison())
                        || matches!(p.kind, ExKind::Logical { .. })
                }))
            }
            WarpOp::ActiveMask => 1,
            // A barrier's vote takes its predicate from an `ISETP`; the `and` and `or` make
            // their predicate an integer with a `SEL` (`sema::barrier_vote`).
            WarpOp::BlockVote | WarpOp::BlockVoteResult(BinOp::BitAnd | BinOp::BitOr) => 1,
            _ => 0,
        },
        ExKind::Math { f, .. } => match f {
            MathFn::Fmin
            | MathFn::Fmax
            | MathFn::Abs
            | MathFn::BytePerm
            | MathFn::FunnelShiftL
            | MathFn::FunnelShiftLc
            | MathFn::FunnelShiftR
            | MathFn::FunnelShiftRc => 1,
            MathFn::Copysign => 2,
            f => math_alu_cost(*f),
        },
        _ => 0,
    };
    own + e
        .children()
        .into_iter()
        .map(|c| alu_cost(c, invariant))
        .sum::<u32>()
}

/// The ALU pipe's share of a math function's instructions (`math_cost`): the tests of its
/// range reduction and of its special cases, `FSETP`s and `LOP3`s. Where `tests/reference/warp_probes`
/// measures the function (`smsp__inst_executed_pipe_alu` per call, less the loop's), its count:
/// `sinf` 7.2, `tanhf` 4.3, `sqrtf` 2.1, `expf`, `exp2f` and `__expf` 1.3, `rsqrtf` 1.1 (the
/// test for a denormal argument), `__sinf` none. The functions no probe measures are taken to
/// have none, which counts them short of the hardware's.
fn math_alu_cost(f: MathFn) -> u32 {
    match f {
        MathFn::Sin | MathFn::Cos => 7,
        MathFn::Tanh => 4,
        MathFn::Sqrt => 2,
        MathFn::Exp | MathFn::Exp2 | MathFn::FastExp | MathFn::Rsqrt => 1,
        _ => 0,
    }
}

/// The ALU pipe's share of `binary_cost`: a logical operation or shift that is not folded into
/// another, a comparison, a minimum or maximum; of an integer division, the tests and selections
/// of its sequence (about a third of probe group J's, the rest `IMAD`s).
fn binary_alu_cost(
    op: BinOp,
    ty: Scalar,
    lhs: &Ex,
    rhs: &Ex,
    invariant: &dyn Fn(Reg) -> bool,
) -> u32 {
    if op.is_comparison() || matches!(op, BinOp::Min | BinOp::Max) {
        return 1;
    }
    if ty.is_float() {
        // IEEE division tests for its slow path (`w_div`: 2.5 a quotient).
        return if matches!(op, BinOp::Div | BinOp::Rem) {
            2
        } else {
            0
        };
    }
    match op {
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
            u32::from(!folds_an_operand(op, lhs, rhs, invariant))
        }
        BinOp::Div | BinOp::Rem => binary_cost(op, ty, lhs, rhs, invariant).div_ceil(3),
        _ => 0,
    }
}

/// The most instructions a body may have for nvcc to if-convert it: `p_pred_st` (one store),
/// `p_pred_ldst` (two loads, an add, a store) and `p_pred_grow`'s loop body are predicated,
/// `p_pred_long` (four loads, a dozen flops and a store, about 24) branches (probe group H).
const PREDICATED_BODY: u32 = 8;

/// Whether nvcc if-converts the body `ops` of an `if` without `else`, and if so what it issues:
/// a short body of straight-line statements (no loop, branch, barrier, call or return).
pub fn predicated_body(ops: &[Op], objects: &[MemObject]) -> Option<PredicatedBody> {
    let mut body = PredicatedBody::default();
    let mut straight = true;
    let never_invariant = |_: Reg| false;
    for op in ops {
        match op {
            Op::Eval(_) => body.issue += op_cost(op, &never_invariant),
            _ => straight = false,
        }
        for_each_expression(op, &mut |e| {
            let mut access = |addr: &Ex, load: bool, store: bool, parts: u32| {
                let shared = matches!(
                    base_object(addr)
                        .and_then(|id| objects.get(id))
                        .map(|o| o.space),
                    Some(ObjectSpace::Shared | ObjectSpace::DynamicShared)
                );
                match (shared, load, store) {
                    (true, true, _) => body.shared_loads += parts,
                    (false, true, _) => body.global_loads += parts,
                    _ => {}
                }
                match (shared, store) {
                    (true, true) => body.shared_stores += parts,
                    (false, true) => body.global_stores += parts,
                    _ => {}
                }
            };
            match &e.kind {
                ExKind::Load { addr, elem } => access(addr, true, false, elem.accesses()),
                ExKind::Assign {
                    place: Place::Mem { addr, elem },
                    ..
                } => access(addr, false, true, elem.accesses()),
                ExKind::Compound {
                    place: Place::Mem { addr, .. },
                    ..
                }
                | ExKind::IncDec {
                    place: Place::Mem { addr, .. },
                    ..
                } => access(addr, true, true, 1),
                ExKind::Call { .. } => straight = false,
                _ => {}
            }
        });
    }
    (straight && body.issue <= PREDICATED_BODY * ISSUE_SCALE).then_some(body)
}

/// The memory object an address points into, when it is a named object plus an offset.
fn base_object(addr: &Ex) -> Option<usize> {
    match &addr.kind {
        ExKind::AddrOf(id) => Some(*id),
        ExKind::Offset { base, .. } => base_object(base),
        _ => None,
    }
}

/// What a kernel issues once per warp besides its statements: the stack pointer's load and the
/// final `EXIT`, an `S2R` for each component of `threadIdx` and `blockIdx` it reads, and a
/// constant-bank load for each parameter it reads (`blockDim` and `gridDim` are operands in the
/// constant bank). `p_copy`'s 16 instructions a warp are 8 of these and 8 of its statements.
fn entry_cost(function: &FunctionIr) -> u32 {
    if function.kind != FunctionKind::Kernel {
        return 0;
    }
    let mut read: RegSet = RegSet::new();
    for op in &function.code {
        for_each_expression(op, &mut |e| {
            if let ExKind::Reg(reg) = e.kind {
                read.insert(reg);
            }
        });
    }
    let special = (REG_THREAD_IDX..REG_BLOCK_DIM)
        .filter(|reg| read.contains(reg))
        .count();
    let params = function
        .params
        .iter()
        .filter(|p| read.contains(&p.reg))
        .count();
    2 + special as u32 + params as u32
}

/// Classes of load sites by the form of their address: two loads whose address expressions are
/// the same (the same variables, constants and operations, as in the three `in[i]` of
/// `sqrtf(in[i]) * expf(in[i]) + sinf(in[i])`) share a class, which is what lets the compiler
/// reuse one's value for the other (`compile_effects::LoadReuse`). Keyed by each load's span (line
/// and column), over every function of the program.
pub fn load_classes(functions: &[FunctionIr]) -> HashMap<(u32, u32), u32> {
    let mut shapes: NameMap<u32> = NameMap::new();
    let mut classes = HashMap::new();
    for function in functions {
        for op in &function.code {
            for_each_expression(op, &mut |e| {
                if let ExKind::Load { addr, .. } = &e.kind {
                    let mut shape = String::new();
                    write_shape(addr, &mut shape);
                    let class = match shapes.get(&shape) {
                        Some(&class) => class,
                        None => {
                            let next = shapes.len() as u32;
                            shapes.insert(shape, next);
                            next
                        }
                    };
                    classes.insert((e.span.line, e.span.col), class);
                }
            });
        }
    }
    classes
}

/// Writes the form of `e`: its operations, registers and constants, not its spans or temporaries.
fn write_shape(e: &Ex, out: &mut String) {
    use std::fmt::Write as _;
    let _ = match &e.kind {
        ExKind::Const(bits) => write!(out, "c{bits}"),
        ExKind::Reg(reg) => write!(out, "r{reg}"),
        ExKind::AddrOf(id) => write!(out, "&{id}"),
        ExKind::Component(_, c) => write!(out, ".{c}"),
        ExKind::Convert { from, to, .. } => write!(out, "cv{from:?}{to:?}"),
        ExKind::Unary { op, ty, .. } => write!(out, "u{op:?}{ty:?}"),
        ExKind::Binary { op, ty, .. } => write!(out, "b{op:?}{ty:?}"),
        ExKind::Offset {
            terms, elem_size, ..
        } => {
            let strides: Vec<i64> = terms.iter().map(|t| t.stride).collect();
            write!(out, "o{elem_size}{strides:?}")
        }
        // Anything else (a load, a call, an assignment) makes the address one of a kind.
        other => write!(out, "x{:p}", other),
    };
    out.push('(');
    for child in e.children() {
        write_shape(child, out);
        out.push(',');
    }
    out.push(')');
}

/// The op at `pc` is the test of the loop that begins at `begin`, or its step (the evaluation a
/// `for` loop makes after its `ContinuePoint`).
fn is_loop_overhead(code: &[Op], begin: usize, pc: usize) -> bool {
    match &code[pc] {
        Op::LoopCond { .. } => true,
        Op::Eval(_) => {
            pc > begin
                && matches!(code[pc - 1], Op::ContinuePoint)
                && matches!(code.get(pc + 1), Some(Op::Jump(_)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile;

    /// Compiles `source` and gives, for the first kernel, the unroll of each loop in order and
    /// the SASS instructions of one pass through the op at each listed line (summed over ops).
    fn check(source: &str, unrolls: &[Unroll], per_line: &[(u32, f64)]) {
        let program = compile(source, &[]).expect("the test kernel compiles");
        let function = &program.functions[0];
        let found: Vec<Unroll> = function
            .code
            .iter()
            .filter_map(|op| match op {
                Op::LoopBegin { unroll, .. } => Some(*unroll),
                _ => None,
            })
            .collect();
        assert_eq!(found, unrolls, "unrolling");
        let (issue, _) = annotate(function);
        for &(line, expected) in per_line {
            let cost: u32 = function
                .spans
                .iter()
                .zip(&issue)
                .filter(|(span, _)| span.line == line)
                .map(|(_, c)| c)
                .sum();
            assert_eq!(
                f64::from(cost) / f64::from(ISSUE_SCALE),
                expected,
                "line {line}"
            );
        }
    }

    #[test]
    fn a_small_run_time_loop_is_unrolled_sixteen_times() {
        check(
            "__global__ void p_walk(const float* a, float* out, int count, int jump) {\n\
             int c = blockIdx.x * blockDim.x + threadIdx.x; int q = c; float s = 0.0f;\n\
             for (int t = 0; t < count; ++t) {\n\
             s += a[q];\n\
             q += jump;\n\
             }\n\
             out[c] = s;\n\
             }",
            &[Unroll::Times(16)],
            // The load, its address and the add; the step of `q`.
            &[(4, 3.0), (5, 1.0)],
        );
    }

    #[test]
    fn a_fully_unrolled_counter_is_a_constant_but_what_the_loop_around_writes_is_not() {
        check(
            "__global__ void k(const int* a, int* out, int n, int m) {\n\
             int j = threadIdx.x; int v = 0;\n\
             for (int t = 0; t < n; ++t) {\n\
             for (int k = 0; k < 4; ++k)\n\
             v += a[(j + k * 64) & m];\n\
             j = (j + v) & m;\n\
             }\n\
             for (int k = 0; k < 4; ++k)\n\
             v += a[k];\n\
             out[0] = v;\n\
             }",
            &[Unroll::Times(4), Unroll::Full, Unroll::Full],
            // In the outer loop's copies: the add of `j`, the mask, the address, the load and
            // the sum; `a[k]` alone is the load and the sum (its address an immediate offset).
            &[(5, 5.0), (9, 2.0)],
        );
    }

    #[test]
    fn a_pragma_decides_the_unroll() {
        check(
            "__global__ void k(const float* a, float* out, int count) {\n\
             float s = 0.0f;\n\
             #pragma unroll 1\n\
             for (int t = 0; t < count; ++t) s += a[t];\n\
             #pragma unroll 8\n\
             for (int t = 0; t < count; ++t) s += a[t];\n\
             out[0] = s;\n\
             }",
            &[Unroll::Times(1), Unroll::Times(8)],
            &[],
        );
    }

    #[test]
    fn a_constant_trip_count_is_unrolled_fully_and_a_grid_stride_loop_not_at_all() {
        // A doubling loop between constants has a constant trip count too (`p_pred_grow`).
        check(
            "__global__ void k(const float* a, float* out, int n) {\n\
             float s = 0.0f;\n\
             for (int k = 0; k < 4; ++k) s += a[k];\n\
             for (int i = threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += a[i];\n\
             for (int w = 1; w < 256; w <<= 1) s += a[w];\n\
             out[0] = s;\n\
             }",
            &[Unroll::Full, Unroll::Times(1), Unroll::Full],
            &[],
        );
    }

    #[test]
    fn a_large_body_is_unrolled_less() {
        let loads: Vec<String> = (0..24).map(|k| format!("a[(j + {k} * 64) & m]")).collect();
        let source = format!(
            "__global__ void k(const int* a, int* out, int n, int m) {{\n\
             int j = threadIdx.x; int v = 0;\n\
             for (int t = 0; t < n; ++t) {{ v += {}; j = (j + v) & m; }}\n\
             out[0] = j;\n\
             }}",
            loads.join(" + ")
        );
        check(&source, &[Unroll::Times(1)], &[]);
    }

    #[test]
    fn modulo_by_a_run_time_value_is_a_dozen_instructions_and_by_sixty_four_one() {
        check(
            "__global__ void k(unsigned* out, int iters, unsigned d) {\n\
             unsigned x = threadIdx.x;\n\
             for (int it = 0; it < iters; ++it) x = ((x ^ (unsigned)it) + 7u) % d;\n\
             for (int it = 0; it < iters; ++it) x = ((x ^ (unsigned)it) + 7u) % 64u;\n\
             out[0] = x;\n\
             }",
            &[Unroll::Times(4), Unroll::Times(16)],
            // xor, add, remainder; the loop's compare, branch and step once per 4 or 16 copies.
            &[(3, 2.0 + 9.0 + 3.0 / 4.0), (4, 3.0 + 3.0 / 16.0)],
        );
    }

    #[test]
    fn loop_invariant_work_is_hoisted() {
        check(
            "__global__ void k(unsigned* out, int iters, unsigned d) {\n\
             unsigned x = threadIdx.x;\n\
             for (int it = 0; it < iters; ++it) x = (x + 7u) & (d - 1u);\n\
             out[0] = x;\n\
             }",
            &[Unroll::Times(16)],
            &[(3, 2.0 + 3.0 / 16.0)],
        );
    }

    /// The `predicated` field of each `if` of the first kernel of `source`, in order.
    fn predicated(source: &str) -> Vec<Option<PredicatedBody>> {
        let program = compile(source, &[]).expect("the test kernel compiles");
        program.functions[0]
            .code
            .iter()
            .filter_map(|op| match op {
                Op::If { predicated, .. } => Some(*predicated),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_guarded_shared_store_is_predicated_and_a_long_body_branches() {
        let found = predicated(
            "__global__ void k(float* out, int k) {\n\
             __shared__ float s[512];\n\
             if (threadIdx.x < k) s[threadIdx.x] = 1.0f;\n\
             if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + 256];\n\
             if (threadIdx.x < k) {\n\
             float a = s[256 + threadIdx.x]; float b = s[256 + ((threadIdx.x + 37) & 255)];\n\
             float c = s[256 + ((threadIdx.x * 3) & 255)]; float d = s[256 + ((threadIdx.x + 101) & 255)];\n\
             s[threadIdx.x] = a * b + c * d + a * c - b * d + (a + d) * (b - c);\n\
             }\n\
             if (threadIdx.x < k) out[threadIdx.x] = 1.0f; else out[threadIdx.x] = 2.0f;\n\
             }",
        );
        let store = PredicatedBody {
            issue: 2 * ISSUE_SCALE,
            shared_stores: 1,
            ..PredicatedBody::default()
        };
        assert_eq!(found[0], Some(store));
        // The predicated `if` itself is its comparison alone: no branch is left.
        let program = compile(
            "__global__ void k(float* out, int k) {\n\
             __shared__ float s[512];\n\
             if (threadIdx.x < k) s[threadIdx.x] = 1.0f;\n\
             }",
            &[],
        )
        .expect("the test kernel compiles");
        let function = &program.functions[0];
        let (issue, _) = annotate(function);
        let if_at = function
            .code
            .iter()
            .position(|op| matches!(op, Op::If { .. }))
            .expect("the kernel has its if");
        assert_eq!(
            issue[if_at],
            ISSUE_SCALE + entry_cost(function) * ISSUE_SCALE * u32::from(if_at == 0)
        );
        let add = found[1].expect("a load, an add and a store are if-converted");
        assert_eq!((add.shared_loads, add.shared_stores), (2, 1));
        // Four loads, a dozen flops and a store branch; so does any `if` with an `else` here.
        assert_eq!(&found[2..], &[None, None]);
    }

    #[test]
    fn a_multiply_added_or_accumulated_is_one_ffma_with_its_add() {
        check(
            "__global__ void k(float* a, float b, float c) {\n\
             float w = a[2];\n\
             float x = w * b + c;\n\
             x += b * c;\n\
             float y = x * b - c * x;\n\
             a[1] = x + y;\n}",
            &[],
            // An FFMA; an FFMA; an FMUL and an FFMA; an FADD and a store.
            &[(3, 1.0), (4, 1.0), (5, 2.0), (6, 2.0)],
        );
    }

    #[test]
    fn an_inlined_helper_s_last_return_and_a_constant_choice_cost_nothing() {
        let source = "template <unsigned N> __device__ unsigned lanes() {\n\
                      return N == 32 ? 0xffffffffu : (1u << N) - 1;\n}\n\
                      __device__ float twice(float v) {\n\
                      return v + v;\n}\n\
                      __global__ void k(float* a) { a[0] = twice(a[1]) + lanes<32>(); }";
        let program = compile(source, &[]).expect("the test kernel compiles");
        for function in &program.functions {
            let (issue, _) = annotate(function);
            let cost: u32 = issue.iter().sum();
            let expected = match function.name.as_str() {
                // `v + v`, returned where the caller reads it.
                "twice" => 1,
                // The constant side of a constant choice: nothing to compute.
                name if name.starts_with("lanes") => 0,
                _ => continue,
            };
            assert_eq!(cost, expected * ISSUE_SCALE, "{}", function.name);
        }
    }

    #[test]
    fn logic_shifts_comparisons_and_votes_take_the_alu_pipe_and_adds_do_not() {
        let source = "__global__ void k(unsigned* out, int iters) {
            unsigned v = threadIdx.x * 2654435761u;
            unsigned w = v + 7u;
            unsigned b = __ballot_sync(0xffffffffu, v & 1u);
            v = (v >> 1) + __any_sync(0xffffffffu, (v & 7u) == 3u);
            out[threadIdx.x] = v + w + b;
        }";
        let program = compile(source, &[]).expect("the test kernel compiles");
        let function = &program.functions[0];
        let annotation = annotate_function(function);
        let alu_of_line = |line: u32| -> f64 {
            let sum: u32 = function
                .spans
                .iter()
                .zip(&annotation.alu)
                .filter(|(span, _)| span.line == line)
                .map(|(_, a)| a)
                .sum();
            f64::from(sum) / f64::from(ISSUE_SCALE)
        };
        // A multiply and an add: the FMA pipe's (`IMAD`, `IADD3` or `IMAD.IADD`).
        assert_eq!(alu_of_line(2), 0.0);
        assert_eq!(alu_of_line(3), 0.0);
        // `v & 1u`, its test for the predicate (`ISETP.NE`) and the `VOTE`.
        assert_eq!(alu_of_line(4), 3.0);
        // The shift, `v & 7u`, the comparison and the `VOTE`; not the add.
        assert_eq!(alu_of_line(5), 4.0);
    }
}
