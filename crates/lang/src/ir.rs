//! The checked program that the interpreter runs: typed expression trees over warp registers, and
//! statements flattened into structured control-flow instructions.
//!
//! Every value lives in a register of 32 lanes (`[u64; 32]`, one per lane of the warp, CUDA C++
//! Programming Guide "SIMT Architecture"); the semantic check has resolved names to registers or
//! memory objects, inserted C's implicit conversions, and assigned each expression node a
//! temporary register, so the interpreter allocates nothing while it runs. Integers are kept
//! sign- or zero-extended to 64 bits according to their type; floats as their bit patterns.
//!
//! Statements become a flat list of `Op`s with explicit structure (`If`/`Else`/`EndIf`, loops with
//! break and continue points), which lets a warp stop at `__syncthreads()` in the middle of a loop
//! and resume later, and lets lanes diverge with per-lane active masks as the hardware's SIMT stack
//! does.

use super::ast::{FunctionKind, Scalar, Type};
use super::span::{Diagnostic, Span};
use crate::math_library::LibraryFn;
use crate::printf_format::PrintfPiece;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What an access does to memory: load, store or read-modify-write. The simulator's records of
/// warp accesses carry it (`memplay_sim::access`), as do the IR's accesses and their analyses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// A register number. Registers 0..`SPECIAL_REGS` hold `threadIdx`, `blockIdx`, `blockDim` and
/// `gridDim` (x, y, z each); variables and temporaries follow.
pub type Reg = u32;

pub const REG_THREAD_IDX: Reg = 0;
pub const REG_BLOCK_IDX: Reg = 3;
pub const REG_BLOCK_DIM: Reg = 6;
pub const REG_GRID_DIM: Reg = 9;
pub const SPECIAL_REGS: Reg = 12;

/// How a value is stored: `n` components of one scalar (pointers are `U64`, tagged; see `interp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elem {
    pub scalar: Scalar,
    pub n: u8,
}

impl Elem {
    pub fn scalar(scalar: Scalar) -> Elem {
        Elem { scalar, n: 1 }
    }

    pub fn bytes(self) -> u32 {
        self.scalar.size() * u32::from(self.n)
    }

    /// The bytes of each load or store instruction nvcc makes of a value of this layout: its
    /// alignment, never wider (a `float3` is three 4-byte accesses, a `double4` two of 16 bytes;
    /// `header_names`).
    pub fn access_bytes(self) -> u32 {
        self.scalar.vector_align(self.n)
    }

    /// The load or store instructions one access to a value of this layout takes.
    pub fn accesses(self) -> u32 {
        self.bytes() / self.access_bytes()
    }
}

/// The unary operators left after lowering (`+x` is gone, `!x` became a comparison with zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    BitNot,
    /// `__popc`, `__clz`, `__ffs`, `__brev` (and their `ll` forms) on the operand's bits.
    Popc,
    Clz,
    Ffs,
    Brev,
}

/// Binary arithmetic, bitwise, shift and comparison operators on one operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Min,
    Max,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }
}

/// Math functions of one or two float arguments and the integer intrinsics of up to three integer
/// arguments (CUDA Math API).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    Sqrt,
    Rsqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Fabs,
    Floor,
    Ceil,
    Round,
    Trunc,
    Pow,
    Fmin,
    Fmax,
    Abs,
    Exp2,
    Log2,
    Log10,
    Tanh,
    Sinh,
    Cosh,
    Asin,
    Acos,
    Atan,
    Cbrt,
    Expm1,
    Log1p,
    Atan2,
    Hypot,
    Copysign,
    Fmod,
    /// The fast intrinsics `__sinf`, `__cosf`, `__expf` and `__logf`: one pass of the special
    /// function unit with a scaling around it, where the library functions reduce the argument's
    /// range first (CUDA C++ Programming Guide, "Intrinsic Functions"). memplay computes their
    /// values as the library functions', which differ from the hardware's in the last bits.
    FastSin,
    FastCos,
    FastExp,
    FastLog,
    /// `__byte_perm(x, y, s)`: byte n of the result is byte `s<4n+2:4n>` of the eight bytes of
    /// `y:x` (CUDA Math API, "Integer Intrinsics"; the selector's fourth bit is not used).
    BytePerm,
    /// `__sad(x, y, z)` (`ty` `I32`) and `__usad` (`U32`): `|x - y| + z`, an `unsigned int`.
    Sad,
    /// `__funnelshift_l(lo, hi, s)`: the high word of `hi:lo` shifted left by `s & 31`; the `Lc`
    /// form shifts by `min(s, 32)`. `R` and `Rc` shift right and keep the low word.
    FunnelShiftL,
    FunnelShiftLc,
    FunnelShiftR,
    FunnelShiftRc,
    /// `__mul64hi` (`ty` `I64`) and `__umul64hi` (`U64`): the high 64 bits of the 128-bit
    /// product.
    MulHi64,
    /// `__hadd` (`ty` `I32`) and `__uhadd` (`U32`): `(x + y) >> 1`; `__rhadd` and `__urhadd`:
    /// `(x + y + 1) >> 1`; the sum taken without overflow.
    HalvingAdd,
    RoundedHalvingAdd,
    /// `__memplay_xorwow_power(p, word, v0, v1, v2, v3, v4)` of memplay's `curand_kernel.h`: word
    /// `word` of the XORWOW state `v` after `2^p` draws (one matrix-vector product of cuRAND's
    /// skipahead; `memplay_sim`'s `xorwow` computes it).
    XorwowPower,
    /// The rest of the math library and the type casting and rounded intrinsics
    /// (`math_library`), whose result may have a type of its own (`LibraryFn::result`).
    Library(LibraryFn),
}

/// Read-modify-write operations of the atomic functions (CUDA C++ Programming Guide, "Atomic
/// Functions").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Exch,
    /// `atomicAdd` on a `half2` or `__nv_bfloat162` (`ty` its 16-bit type): each half of the four
    /// bytes added on its own, the value and the old value two registers.
    AddPair,
    Min,
    Max,
    And,
    Or,
    Xor,
    Cas,
    /// `atomicInc`: `old >= v ? 0 : old + 1`, and `atomicDec`: `old == 0 || old > v ? v : old - 1`.
    Inc,
    Dec,
}

/// What a kernel says to the world outside its memory (CUDA C++ Programming Guide, "Formatted
/// Output", "Time Function", "Assertion"): output a skipped warp or iteration would not make,
/// so a launch whose kernel holds one reuses no run.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputKind {
    /// `printf(format, ...)`: one argument per `PrintfSlot::Value`, in order; its value is the
    /// number of arguments after the format, as the device's `printf` returns.
    Printf(Arc<PrintfCall>),
    /// `clock()` and `clock64()`: the simulated clock (no operands; `interp` says what it counts).
    Clock,
    /// `assert(condition)`: a lane whose condition is zero stops the launch with an error that
    /// names its block and thread.
    Assert,
}

/// A device `printf`'s format, read at compile time, and what each of its conversions prints.
#[derive(Clone, Debug, PartialEq)]
pub struct PrintfCall {
    pub pieces: Vec<PrintfPiece>,
    pub slots: Vec<PrintfSlot>,
}

/// What one conversion of a `printf` prints: an argument's value, of the type it was promoted
/// to, or a string literal given for `%s`.
#[derive(Clone, Debug, PartialEq)]
pub enum PrintfSlot {
    Value(Scalar),
    /// A pointer for `%p`, printed as the address it holds.
    Pointer,
    Text(String),
}

/// The warp-level primitives (CUDA C++ Programming Guide, "Warp Shuffle Functions", "Warp Vote
/// Functions", "Warp Match Functions", "Warp Reduce Functions"), each over the lanes of one warp
/// at once. Their operands, in order: the lane mask, then the value and, for a shuffle, the
/// source lane, delta or lane mask, and the segment width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `__shfl_sync`: the value of the lane given, within its segment.
    Shfl,
    /// `__shfl_up_sync`: of the lane `delta` below, or the lane's own near the segment's start.
    ShflUp,
    /// `__shfl_down_sync`: of the lane `delta` above, or the lane's own near the segment's end.
    ShflDown,
    /// `__shfl_xor_sync`: of the lane whose number differs by the bits given.
    ShflXor,
    /// `__ballot_sync`: bit k set where lane k's predicate is not zero.
    Ballot,
    /// `__any_sync`, `__all_sync`.
    Any,
    All,
    /// `__activemask()`: the lanes running the call (no operands).
    ActiveMask,
    /// `__match_any_sync`: the lanes holding the same value as this one.
    MatchAny,
    /// `__reduce_add_sync` and its kin: the operation over the named lanes' values.
    Reduce(BinOp),
    /// `__syncthreads_count`, `__syncthreads_and` and `__syncthreads_or` before their barrier
    /// (`Op::SyncThreads`, which follows): the lanes' predicates (the one operand, 0 or 1) join
    /// the block's vote. Its value is unused.
    BlockVote,
    /// The same after their barrier: the vote of every thread of the block, counted (`Add`),
    /// all true (`BitAnd`) or any true (`BitOr`), the same in every lane; no operands.
    BlockVoteResult(BinOp),
}

impl WarpOp {
    /// Whether the primitive is a shuffle (a `SHFL` instruction).
    pub fn is_shuffle(self) -> bool {
        matches!(
            self,
            WarpOp::Shfl | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor
        )
    }
}

/// A place that can be assigned.
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    /// A register variable (its first register; vectors take `elem.n` registers).
    Reg { reg: Reg, elem: Elem },
    /// Memory at the address the pointer expression gives.
    Mem { addr: Box<Ex>, elem: Elem },
}

impl Place {
    pub fn elem(&self) -> Elem {
        match self {
            Place::Reg { elem, .. } | Place::Mem { elem, .. } => *elem,
        }
    }
}

/// One term of an address computation: `index * stride` bytes, the index read as a 64-bit integer
/// (which its canonical register bits are, for every integer type).
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    pub index: Ex,
    pub stride: i64,
}

/// An expression node: what it computes, the temporary register its result goes to (relative to
/// the function's temporary base) and its source span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ex {
    pub kind: ExKind,
    pub tmp: Reg,
    /// Registers the result takes: 1 for scalars and pointers, 2 or 4 for vectors, 0 for `void`.
    pub width: u8,
    pub span: Span,
}

impl Ex {
    pub fn new(kind: ExKind, width: u8, span: Span) -> Ex {
        Ex {
            kind,
            tmp: 0,
            width,
            span,
        }
    }

    /// `value` written to register `reg` as `elem`, `width` lanes wide: the assignment that a
    /// declaration's initialiser, a lowered parameter's copy, a `return` or a `switch`'s flags
    /// make.
    pub fn assign_reg(reg: Reg, elem: Elem, value: Ex, width: u8, span: Span) -> Ex {
        Ex::new(
            ExKind::Assign {
                place: Place::Reg { reg, elem },
                value: Box::new(value),
            },
            width,
            span,
        )
    }

    /// The sub-expressions, in the order the interpreter evaluates them (`children_mut`, read
    /// only).
    pub fn children(&self) -> Vec<&Ex> {
        match &self.kind {
            ExKind::Const(_) | ExKind::Reg(_) | ExKind::AddrOf(_) | ExKind::Fence => Vec::new(),
            ExKind::Component(e, _) => vec![e],
            ExKind::Convert { value, .. } | ExKind::Unary { value, .. } => vec![value],
            ExKind::Binary { lhs, rhs, .. }
            | ExKind::Logical { lhs, rhs, .. }
            | ExKind::PtrDiff { lhs, rhs, .. } => vec![lhs, rhs],
            ExKind::Select { cond, a, b, .. } => vec![cond, a, b],
            ExKind::Fma { a, b, c, .. } => vec![a, b, c],
            ExKind::Math { args, .. }
            | ExKind::Call { args, .. }
            | ExKind::Warp { args, .. }
            | ExKind::Output { args, .. } => args.iter().collect(),
            ExKind::MakeVector { parts, .. } => parts.iter().collect(),
            ExKind::Offset { base, terms, .. } => {
                let mut v: Vec<&Ex> = vec![base];
                v.extend(terms.iter().map(|t| &t.index));
                v
            }
            ExKind::Load { addr, .. } => vec![addr],
            ExKind::Assign { place, value } | ExKind::Compound { place, value, .. } => {
                match place {
                    Place::Mem { addr, .. } => vec![addr, value],
                    Place::Reg { .. } => vec![value],
                }
            }
            ExKind::IncDec { place, .. } => match place {
                Place::Mem { addr, .. } => vec![addr],
                Place::Reg { .. } => Vec::new(),
            },
            ExKind::Atomic {
                addr,
                value,
                value2,
                ..
            } => {
                let mut v: Vec<&Ex> = vec![addr, value];
                if let Some(v2) = value2 {
                    v.push(v2);
                }
                v
            }
            ExKind::Comma(a, b) => vec![a, b],
        }
    }

    /// The sub-expressions in the order the interpreter evaluates them. Temporaries are assigned in
    /// this order too, so that a later sibling never overwrites an earlier sibling's result.
    pub fn children_mut(&mut self) -> Vec<&mut Ex> {
        match &mut self.kind {
            ExKind::Const(_) | ExKind::Reg(_) | ExKind::AddrOf(_) | ExKind::Fence => Vec::new(),
            ExKind::Component(e, _) => vec![e],
            ExKind::Convert { value, .. } | ExKind::Unary { value, .. } => vec![value],
            ExKind::Binary { lhs, rhs, .. }
            | ExKind::Logical { lhs, rhs, .. }
            | ExKind::PtrDiff { lhs, rhs, .. } => {
                vec![lhs, rhs]
            }
            ExKind::Select { cond, a, b, .. } => vec![cond, a, b],
            ExKind::Fma { a, b, c, .. } => vec![a, b, c],
            ExKind::Math { args, .. }
            | ExKind::Call { args, .. }
            | ExKind::Warp { args, .. }
            | ExKind::Output { args, .. } => args.iter_mut().collect(),
            ExKind::MakeVector { parts, .. } => parts.iter_mut().collect(),
            ExKind::Offset { base, terms, .. } => {
                let mut v: Vec<&mut Ex> = vec![base];
                v.extend(terms.iter_mut().map(|t| &mut t.index));
                v
            }
            ExKind::Load { addr, .. } => vec![addr],
            ExKind::Assign { place, value } | ExKind::Compound { place, value, .. } => {
                match place {
                    Place::Mem { addr, .. } => vec![addr, value],
                    Place::Reg { .. } => vec![value],
                }
            }
            ExKind::IncDec { place, .. } => match place {
                Place::Mem { addr, .. } => vec![addr],
                Place::Reg { .. } => Vec::new(),
            },
            ExKind::Atomic {
                addr,
                value,
                value2,
                ..
            } => {
                let mut v: Vec<&mut Ex> = vec![addr, value];
                if let Some(v2) = value2 {
                    v.push(v2);
                }
                v
            }
            ExKind::Comma(a, b) => vec![a, b],
        }
    }

    /// Gives this tree its temporary registers, starting at `first`; returns one past the last.
    /// A node without a value (a call of a void function, an empty struct) still owns one
    /// register, so that nothing the interpreter writes for it lands past the last.
    pub fn assign_temps(&mut self, first: Reg) -> Reg {
        self.tmp = first;
        let mut next = first + Reg::from(self.width.max(1));
        let mut end = next;
        for child in self.children_mut() {
            let child_end = child.assign_temps(next);
            end = end.max(child_end);
            next += Reg::from(child.width);
            end = end.max(next);
        }
        end
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExKind {
    /// The same bits in every lane.
    Const(u64),
    /// A register variable: the result is the variable's own register (no copy).
    Reg(Reg),
    /// Component `comp` of a vector value.
    Component(Box<Ex>, u8),
    Convert {
        from: Scalar,
        to: Scalar,
        value: Box<Ex>,
    },
    Unary {
        op: UnOp,
        ty: Scalar,
        value: Box<Ex>,
    },
    /// Both operands are of type `ty`; comparisons give an `I32` 0 or 1.
    Binary {
        op: BinOp,
        ty: Scalar,
        lhs: Box<Ex>,
        rhs: Box<Ex>,
    },
    /// `&&` / `||` over two `Bool` operands, the right one evaluated only where it matters.
    Logical {
        and: bool,
        lhs: Box<Ex>,
        rhs: Box<Ex>,
    },
    /// `cond ? a : b` with `cond` a `Bool`; each side is evaluated only for its lanes.
    Select {
        cond: Box<Ex>,
        a: Box<Ex>,
        b: Box<Ex>,
        n: u8,
    },
    /// `fmaf(a, b, c)` (and `fma` on doubles).
    Fma {
        ty: Scalar,
        a: Box<Ex>,
        b: Box<Ex>,
        c: Box<Ex>,
    },
    Math {
        f: MathFn,
        ty: Scalar,
        args: Vec<Ex>,
    },
    /// The address of a memory object (resolved per launch).
    AddrOf(usize),
    /// A pointer plus byte offsets: `base + sum(index * stride)`, computed exactly (an offset
    /// that does not fit is an out-of-bounds error). `elem_size` is the size of what the result
    /// points to, the unit in which an error counts the index.
    Offset {
        base: Box<Ex>,
        terms: Vec<Term>,
        elem_size: u32,
    },
    /// `p - q` in elements.
    PtrDiff {
        lhs: Box<Ex>,
        rhs: Box<Ex>,
        elem_size: u32,
    },
    Load {
        addr: Box<Ex>,
        elem: Elem,
    },
    Assign {
        place: Place,
        value: Box<Ex>,
    },
    /// `place op= value`: the place is read and converted to `ty`, combined with `value` (already
    /// of type `ty`), converted back and written.
    Compound {
        place: Place,
        op: BinOp,
        ty: Scalar,
        value: Box<Ex>,
    },
    /// `++`/`--` on a number (`delta` is +1/-1) or on a pointer (`delta` is +-element size).
    IncDec {
        place: Place,
        delta: i64,
        post: bool,
        pointer: bool,
    },
    /// Builds a vector from its components.
    MakeVector {
        scalar: Scalar,
        parts: Vec<Ex>,
    },
    Atomic {
        op: AtomicOp,
        ty: Scalar,
        addr: Box<Ex>,
        value: Box<Ex>,
        /// The second value of `atomicCAS` (the first is the compare value).
        value2: Option<Box<Ex>>,
    },
    Call {
        function: usize,
        args: Vec<Ex>,
    },
    Comma(Box<Ex>, Box<Ex>),
    /// A warp-level primitive over the value of type `ty` (`WarpOp` lists the operands).
    Warp {
        op: WarpOp,
        ty: Scalar,
        args: Vec<Ex>,
    },
    /// `printf`, `clock()` or `assert` over its operands (`OutputKind`).
    Output {
        kind: OutputKind,
        args: Vec<Ex>,
    },
    /// `__threadfence()` and `__threadfence_block()`: a memory fence, one instruction with no
    /// value (width 0, no register). The interpreter runs a block's warps one at a time, so every
    /// write is already visible to every later read and the fence has nothing to order.
    Fence,
}

/// How nvcc unrolls a loop, decided once by `sema` (rules and sources in `issue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unroll {
    /// The body is copied this many times per pass through the loop's test (1: not unrolled).
    Times(u32),
    /// A constant trip count: the loop is unrolled completely and no test is left.
    Full,
}

/// What the body of an if-converted `if` issues when no lane of a warp takes it: its
/// instructions, predicated off, and among them the memory instructions Nsight Compute's
/// `smsp__inst_executed_op_*` counters count all the same (probe group H).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PredicatedBody {
    /// In `issue::ISSUE_SCALE`-ths of a warp instruction.
    pub issue: u32,
    pub shared_loads: u32,
    pub shared_stores: u32,
    pub global_loads: u32,
    pub global_stores: u32,
}

impl PredicatedBody {
    /// `times` tallies of these instructions, as many additions of them would make.
    pub fn times(&self, times: u64) -> PredicatedBody {
        let scale = |count: u32| u32::try_from(u64::from(count) * times).unwrap_or(u32::MAX);
        PredicatedBody {
            issue: scale(self.issue),
            shared_loads: scale(self.shared_loads),
            shared_stores: scale(self.shared_stores),
            global_loads: scale(self.global_loads),
            global_stores: scale(self.global_stores),
        }
    }

    /// Adds `other`'s instructions (a tally of the bodies warps issued predicated off).
    pub fn add(&mut self, other: &PredicatedBody) {
        self.issue = self.issue.saturating_add(other.issue);
        self.shared_loads = self.shared_loads.saturating_add(other.shared_loads);
        self.shared_stores = self.shared_stores.saturating_add(other.shared_stores);
        self.global_loads = self.global_loads.saturating_add(other.global_loads);
        self.global_stores = self.global_stores.saturating_add(other.global_stores);
    }
}

/// A statement-level instruction. The `usize`s are indices into the function's code.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Eval(Ex),
    /// Lanes where `cond` is false go to `else_at` (an `Else` or the `EndIf`). `predicated`: nvcc
    /// if-converts the body (`issue::predicated_body`), so a warp none of whose lanes take it still
    /// issues its instructions.
    If {
        cond: Ex,
        else_at: usize,
        predicated: Option<PredicatedBody>,
    },
    Else {
        end_at: usize,
    },
    EndIf,
    /// Opens a loop; `end_at` is its `LoopEnd`; `unroll` is what nvcc makes of it (`issue`);
    /// `counter` is the variable of a fully unrolled loop, a constant in each of its copies.
    /// `switch`: the one-trip loop a `switch` statement is lowered to, which its `break` leaves;
    /// it has no `LoopCond` and never repeats, and nvcc compiles it as branches, so `issue`
    /// neither hoists out of it nor unrolls it.
    LoopBegin {
        end_at: usize,
        unroll: Unroll,
        counter: Option<Reg>,
        switch: bool,
    },
    /// Lanes where `cond` is false leave the loop; when none is left, go to `end_at`.
    LoopCond {
        cond: Ex,
        end_at: usize,
    },
    /// Lanes that executed `continue` rejoin here.
    ContinuePoint,
    Jump(usize),
    LoopEnd,
    Break,
    Continue,
    Return(Option<Ex>),
    SyncThreads,
    SyncWarp,
}

/// Where a memory object lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectSpace {
    /// A `__device__` variable.
    Global,
    Constant,
    Shared,
    /// The dynamic shared memory of `extern __shared__` arrays.
    DynamicShared,
    /// A per-thread array.
    Local,
}

/// How a `__device__` or `__constant__` object starts out.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectInit {
    Zero,
    /// Seeded pseudo-random values, as if the host had copied data in (`cudaMemcpyToSymbol`).
    Random,
    Bytes(Vec<u8>),
}

/// A variable or array in memory, declared in the program.
#[derive(Clone, Debug, PartialEq)]
pub struct MemObject {
    pub name: String,
    pub space: ObjectSpace,
    pub ty: Type,
    /// Bytes (0 for dynamic shared memory, sized by the launch).
    pub size: u64,
    pub align: u64,
    pub init: ObjectInit,
    pub span: Span,
    /// The function that declares it (`None` at file scope).
    pub function: Option<usize>,
    /// For per-thread arrays: every index is a compile-time constant, so the compiler keeps the
    /// array in registers (seed 002, "Local Memory": local memory is used when "an array is not
    /// indexed with constant quantities"). Such arrays make no memory records.
    pub in_registers: bool,
    /// For per-thread arrays: the offset in each thread's local frame.
    pub local_offset: u64,
    /// Declared with `const` elements (`const float w[3] = {...}`): not assignable.
    pub is_const: bool,
}

/// A parameter of a kernel or device function.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    pub name: String,
    pub span: Span,
    pub ty: Type,
    pub reg: Reg,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionIr {
    pub name: String,
    pub kind: FunctionKind,
    pub span: Span,
    pub end_span: Span,
    pub params: Vec<ParamInfo>,
    /// The return type and the register that holds the returned value.
    pub ret: Option<(Elem, Reg)>,
    pub code: Vec<Op>,
    pub spans: Vec<Span>,
    /// Where this function's temporaries start, and how many it uses.
    pub temp_base: Reg,
    pub n_temps: Reg,
    /// Functions this one calls.
    pub callees: Vec<usize>,
    /// Per op: the SASS instructions one execution issues, in `issue::ISSUE_SCALE`-ths.
    pub issue: Vec<u32>,
    /// Per op: those of `issue` that only the ALU pipe executes (`issue::Annotation::alu`).
    pub alu: Vec<u32>,
    /// Per op: how many executions of a load there a warp keeps in flight (its loop's unrolled
    /// copies, as many as fit the registers: `registers::loads_in_flight`).
    pub loads_in_flight: Vec<u32>,
    /// Why the body could not be checked (a construct the simulator does not support, a type
    /// error): the function has no code, and launching a kernel that is or calls it fails with
    /// this error. The other kernels of the file still run.
    pub error: Option<Diagnostic>,
    /// The kernel's `__launch_bounds__`, evaluated.
    pub launch_bounds: Option<LaunchBounds>,
}

impl FunctionIr {
    /// Whether the function's code takes the address of the memory object `object` (reads,
    /// writes or points into it). A file-scope `__shared__` variable is allocated in a kernel's
    /// shared memory only where the kernel or a function it calls names it, as ptxas allocates
    /// it per kernel that references it.
    pub fn names_object(&self, object: usize) -> bool {
        fn names(e: &Ex, object: usize) -> bool {
            matches!(e.kind, ExKind::AddrOf(id) if id == object)
                || e.children().into_iter().any(|child| names(child, object))
        }
        self.code.iter().any(|op| match op {
            Op::Eval(e)
            | Op::If { cond: e, .. }
            | Op::LoopCond { cond: e, .. }
            | Op::Return(Some(e)) => names(e, object),
            _ => false,
        })
    }
}

/// `__launch_bounds__(max_threads_per_block, min_blocks_per_multiprocessor)` on a kernel (CUDA
/// C++ Programming Guide, "Launch Bounds"): a launch with more threads per block fails, and nvcc
/// keeps the registers per thread low enough for `min_blocks_per_multiprocessor` blocks of
/// `max_threads_per_block` threads to fit on one SM (one block when it is not given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    pub max_threads_per_block: u32,
    pub min_blocks_per_multiprocessor: Option<u32>,
}
