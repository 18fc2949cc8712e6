//! Arithmetic on the 32 lanes of a register: conversions, operators, math functions and atomics, and the exact sum of byte offsets.

use crate::access::WARP_LANES;
use crate::kernel::ast::Scalar;
use crate::kernel::ir::{AtomicOp, BinOp, MathFn};
use crate::kernel::memory::pointer_add;

/// A register's value in each of a warp's 32 lanes.
pub(super) type Lanes = [u64; WARP_LANES];

/// The mask of every lane of a warp.
pub(super) const FULL: u32 = u32::MAX;

/// `to[l] = from[l]` for the lanes in `mask`.
pub(super) fn copy_lanes_masked(from: &Lanes, to: &mut Lanes, mask: u32) {
    if mask == FULL {
        *to = *from;
        return;
    }
    for l in 0..WARP_LANES {
        if mask >> l & 1 != 0 {
            to[l] = from[l];
        }
    }
}

/// The step of `++`/`--` on a value: `delta` elements for a pointer, `delta` for a number.
#[derive(Clone, Copy)]
pub(super) struct Step {
    pub(super) delta: i64,
    pub(super) is_pointer: bool,
    pub(super) scalar: Scalar,
}

impl Step {
    /// (A pointer that cannot move, `inc_dec` has reported before any lane is stepped.)
    pub(super) fn one(self, v: u64) -> u64 {
        if self.is_pointer {
            return pointer_add(v, self.delta).unwrap_or(v);
        }
        match self.scalar {
            Scalar::F32 => bits_f32(f32_of(v) + self.delta as f32),
            Scalar::F64 => (f64::from_bits(v) + self.delta as f64).to_bits(),
            s if s.is_half() => s.float_bits(s.float_value(v) + self.delta as f64),
            s => canon(v.wrapping_add(self.delta as u64), s),
        }
    }

    /// `out[l] = step(from[l])` for every lane. The 32-bit integer, the loop counters' type, has
    /// its own loop, so that the per-lane work is one add.
    pub(super) fn apply(self, from: &Lanes, out: &mut Lanes) {
        if !self.is_pointer && self.scalar == Scalar::I32 {
            let delta = self.delta as i32;
            for l in 0..WARP_LANES {
                out[l] = (from[l] as i32).wrapping_add(delta) as i64 as u64;
            }
        } else {
            for l in 0..WARP_LANES {
                out[l] = self.one(from[l]);
            }
        }
    }

    /// `out[l] = step(from[l])` for the lanes in `mask`.
    pub(super) fn apply_masked(self, from: &Lanes, out: &mut Lanes, mask: u32) {
        for l in 0..WARP_LANES {
            if mask >> l & 1 != 0 {
                out[l] = self.one(from[l]);
            }
        }
    }
}

/// Byte offsets of the 32 lanes, summed exactly: in `by` while they fit an `i64`; the lanes in
/// `overflow`, whose sum did not, in `wide` (made only then: an overflow is an error).
pub(super) struct Offsets {
    pub(super) by: [i64; WARP_LANES],
    pub(super) overflow: u32,
    pub(super) wide: Option<Box<[i128; WARP_LANES]>>,
    /// A bound on every lane's `|by|` while nothing has overflowed: below `SMALL_SUM` the next
    /// small term cannot overflow, and the sum needs no check per lane.
    bound: u64,
}

/// Indices and strides below this in magnitude multiply to below 2^62.
const SMALL_FACTOR: u64 = 1 << 31;
/// Sums below this in magnitude take another term below 2^62 without leaving `i64`.
const SMALL_SUM: u64 = 1 << 62;

impl Offsets {
    pub(super) fn new() -> Offsets {
        Offsets {
            by: [0; WARP_LANES],
            overflow: 0,
            wide: None,
            bound: 0,
        }
    }

    /// Adds `index * stride` to every lane (`index` read as a 64-bit integer).
    #[inline]
    pub(super) fn add(&mut self, index: &Lanes, stride: i64) {
        // The common case of array indexing: indices and strides far below 2^31, so no product
        // nor sum can overflow and the lanes need no checks (a loop the compiler vectorises).
        let largest = index
            .iter()
            .map(|&v| (v as i64).unsigned_abs())
            .fold(0, u64::max);
        let step = stride.unsigned_abs();
        if self.overflow == 0
            && largest < SMALL_FACTOR
            && step < SMALL_FACTOR
            && self.bound < SMALL_SUM
        {
            for (by, &v) in self.by.iter_mut().zip(index) {
                *by += (v as i64) * stride;
            }
            self.bound += largest * step;
            return;
        }
        if self.overflow == 0 {
            // The common case, without a branch per lane: nothing has overflowed, nor does now.
            let mut next = [0i64; WARP_LANES];
            let mut flagged = 0u32;
            for l in 0..WARP_LANES {
                let (d, o1) = (index[l] as i64).overflowing_mul(stride);
                let (sum, o2) = self.by[l].overflowing_add(d);
                next[l] = sum;
                flagged |= u32::from(o1 | o2) << l;
            }
            if flagged == 0 {
                self.by = next;
                self.bound = next.iter().map(|v| v.unsigned_abs()).fold(0, u64::max);
                return;
            }
        }
        self.add_wide(index, stride);
    }

    /// `add` for an index every lane shares (`index[0]` in every lane): the product is made
    /// once. Large values take `add`'s checked path.
    #[inline]
    pub(super) fn add_same(&mut self, index: &Lanes, stride: i64) {
        let largest = (index[0] as i64).unsigned_abs();
        let step = stride.unsigned_abs();
        if self.overflow == 0
            && largest < SMALL_FACTOR
            && step < SMALL_FACTOR
            && self.bound < SMALL_SUM
        {
            let term = (index[0] as i64) * stride;
            for by in self.by.iter_mut() {
                *by += term;
            }
            self.bound += largest * step;
            return;
        }
        self.add(index, stride);
    }

    #[cold]
    pub(super) fn add_wide(&mut self, index: &Lanes, stride: i64) {
        let wide = self.wide.get_or_insert_with(|| Box::new([0; WARP_LANES]));
        for l in 0..WARP_LANES {
            let term = i128::from(index[l] as i64) * i128::from(stride);
            if self.overflow >> l & 1 != 0 {
                wide[l] = wide[l].saturating_add(term);
                continue;
            }
            match i64::try_from(i128::from(self.by[l]) + term) {
                Ok(sum) => self.by[l] = sum,
                Err(_) => {
                    self.overflow |= 1 << l;
                    wide[l] = i128::from(self.by[l]) + term;
                }
            }
        }
    }

    /// Lane `l`'s offset, exactly.
    pub(super) fn exact(&self, l: usize) -> i128 {
        match &self.wide {
            Some(wide) if self.overflow >> l & 1 != 0 => wide[l],
            _ => i128::from(self.by[l]),
        }
    }
}

/// A little-endian value of 1, 2, 4 or 8 bytes.
#[inline]
pub(super) fn read_le(bytes: &[u8]) -> u64 {
    match bytes.len() {
        4 => u64::from(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
        8 => u64::from_le_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        ]),
        2 => u64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
        1 => u64::from(bytes[0]),
        _ => 0,
    }
}

/// Writes the low `bytes.len()` (1, 2, 4 or 8) bytes of `v`, little-endian.
#[inline]
pub(super) fn write_le(bytes: &mut [u8], v: u64) {
    match bytes.len() {
        4 => bytes.copy_from_slice(&(v as u32).to_le_bytes()),
        8 => bytes.copy_from_slice(&v.to_le_bytes()),
        2 => bytes.copy_from_slice(&(v as u16).to_le_bytes()),
        1 => bytes[0] = v as u8,
        _ => {}
    }
}

pub(super) fn lane_mask(lanes: &Lanes) -> u32 {
    let mut m = 0u32;
    for (l, v) in lanes.iter().enumerate() {
        m |= u32::from(*v != 0) << l;
    }
    m
}

/// Canonical bits of an integer result of type `ty`.
#[inline(always)]
pub(super) fn canon(v: u64, ty: Scalar) -> u64 {
    match ty {
        Scalar::Bool => u64::from(v != 0),
        Scalar::I8 => v as i8 as i64 as u64,
        Scalar::U8 => v as u8 as u64,
        Scalar::I16 => v as i16 as i64 as u64,
        Scalar::U16 => v as u16 as u64,
        Scalar::I32 => v as i32 as i64 as u64,
        Scalar::U32 => v as u32 as u64,
        _ => v,
    }
}

pub(super) fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

pub(super) fn bits_f32(f: f32) -> u64 {
    u64::from(f.to_bits())
}

/// `x * y + z` rounded once to the nearest f32, as `fmaf` and the hardware's FFMA compute it,
/// without a call into a software `fmaf` (WebAssembly has no fused multiply-add, and there each
/// call cost some 15 ns: most of a loop of FMAs). The product of two f32s is exact in f64; the
/// sum is made exact as f64 sum plus error (Knuth's TwoSum) and rounded to odd from it, so the
/// final rounding to f32 is the one correct rounding (Boldo and Melquiond, "Emulation of FMA and
/// correctly rounded sums: proved algorithms using rounding to odd", IEEE Transactions on
/// Computers, 2008: round-to-odd at 53 bits, then to nearest at 24, is round-to-nearest).
pub(super) fn fma_f32(x: f32, y: f32, z: f32) -> f32 {
    let product = f64::from(x) * f64::from(y);
    let addend = f64::from(z);
    let sum = product + addend;
    let product_part = sum - addend;
    let error = (product - product_part) + (addend - (sum - product_part));
    // Rounded to odd: where the sum is inexact and its last bit is 0, the neighbour on the
    // error's side (one step away from zero if the error has the sum's sign, else towards it),
    // whose last bit is 1. A sum that is not finite is kept. Without branches, so that the lane
    // loops around it run straight through whatever the lanes' values (the error's sign is as
    // good as random, and a mispredicted branch cost more than the rest of the function).
    let bits = sum.to_bits();
    let inexact = error != 0.0 && bits & 1 == 0 && sum.is_finite();
    let away = (error > 0.0) == (sum > 0.0);
    let step = if away { 1 } else { u64::MAX };
    let odd = bits.wrapping_add(step & (inexact as u64).wrapping_neg());
    f64::from_bits(odd) as f32
}

/// Converts one value between scalar types (C's conversions; float to integer saturates, which is
/// also what the GPU's conversion instructions do).
pub(super) fn convert_value(v: u64, from: Scalar, to: Scalar) -> u64 {
    if to == Scalar::Bool {
        return match from {
            Scalar::F32 => u64::from(f32_of(v) != 0.0),
            Scalar::F64 => u64::from(f64::from_bits(v) != 0.0),
            s if s.is_half() => u64::from(s.float_value(v) != 0.0),
            _ => u64::from(v != 0),
        };
    }
    // A 16-bit float goes through its value as a double: exact from it, rounded once into it.
    if from.is_half() || to.is_half() {
        let x = if from.is_float() {
            from.float_value(v)
        } else if from.is_signed() {
            v as i64 as f64
        } else {
            v as f64
        };
        return if to.is_float() {
            to.float_bits(x)
        } else {
            convert_value(x.to_bits(), Scalar::F64, to)
        };
    }
    match (from.is_float(), to.is_float()) {
        (false, false) => canon(v, to),
        (false, true) => {
            let x = if from.is_signed() {
                v as i64 as f64
            } else {
                v as f64
            };
            if to == Scalar::F32 {
                let f = if from.is_signed() {
                    v as i64 as f32
                } else {
                    v as f32
                };
                bits_f32(f)
            } else {
                x.to_bits()
            }
        }
        (true, _) => {
            let x = if from == Scalar::F32 {
                f64::from(f32_of(v))
            } else {
                f64::from_bits(v)
            };
            match to {
                Scalar::F32 => bits_f32(x as f32),
                Scalar::F64 => x.to_bits(),
                Scalar::I8 => x as i8 as i64 as u64,
                Scalar::U8 => x as u8 as u64,
                Scalar::I16 => x as i16 as i64 as u64,
                Scalar::U16 => x as u16 as u64,
                Scalar::I32 => x as i32 as i64 as u64,
                Scalar::U32 => x as u32 as u64,
                Scalar::I64 => x as i64 as u64,
                _ => x as u64,
            }
        }
    }
}

macro_rules! lanes2 {
    ($out:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {{
        let (aa, bb, oo): (&[u64; N], &[u64; N], &mut [u64; N]) = ($a, $b, $out);
        for l in 0..N {
            let $x = aa[l];
            let $y = bb[l];
            oo[l] = $body;
        }
    }};
}

/// A binary operation over all `N` lanes: 32, or one for a value every lane shares. Division by
/// zero must have been excluded for active lanes; inactive lanes divide by one instead.
pub(super) fn binary_lanes<const N: usize>(
    op: BinOp,
    ty: Scalar,
    a: &[u64; N],
    b: &[u64; N],
    out: &mut [u64; N],
) {
    use BinOp::*;
    match ty {
        Scalar::F32 => {
            let f = |x: u64| f32_of(x);
            match op {
                Add => lanes2!(out, a, b, |x, y| bits_f32(f(x) + f(y))),
                Sub => lanes2!(out, a, b, |x, y| bits_f32(f(x) - f(y))),
                Mul => lanes2!(out, a, b, |x, y| bits_f32(f(x) * f(y))),
                Div => lanes2!(out, a, b, |x, y| bits_f32(f(x) / f(y))),
                Rem => lanes2!(out, a, b, |x, y| bits_f32(f(x) % f(y))),
                Lt => lanes2!(out, a, b, |x, y| u64::from(f(x) < f(y))),
                Le => lanes2!(out, a, b, |x, y| u64::from(f(x) <= f(y))),
                Gt => lanes2!(out, a, b, |x, y| u64::from(f(x) > f(y))),
                Ge => lanes2!(out, a, b, |x, y| u64::from(f(x) >= f(y))),
                Eq => lanes2!(out, a, b, |x, y| u64::from(f(x) == f(y))),
                Ne => lanes2!(out, a, b, |x, y| u64::from(f(x) != f(y))),
                Min => lanes2!(out, a, b, |x, y| bits_f32(f(x).min(f(y)))),
                Max => lanes2!(out, a, b, |x, y| bits_f32(f(x).max(f(y)))),
                _ => *out = *a,
            }
        }
        Scalar::F64 => {
            let f = f64::from_bits;
            match op {
                Add => lanes2!(out, a, b, |x, y| (f(x) + f(y)).to_bits()),
                Sub => lanes2!(out, a, b, |x, y| (f(x) - f(y)).to_bits()),
                Mul => lanes2!(out, a, b, |x, y| (f(x) * f(y)).to_bits()),
                Div => lanes2!(out, a, b, |x, y| (f(x) / f(y)).to_bits()),
                Rem => lanes2!(out, a, b, |x, y| (f(x) % f(y)).to_bits()),
                Lt => lanes2!(out, a, b, |x, y| u64::from(f(x) < f(y))),
                Le => lanes2!(out, a, b, |x, y| u64::from(f(x) <= f(y))),
                Gt => lanes2!(out, a, b, |x, y| u64::from(f(x) > f(y))),
                Ge => lanes2!(out, a, b, |x, y| u64::from(f(x) >= f(y))),
                Eq => lanes2!(out, a, b, |x, y| u64::from(f(x) == f(y))),
                Ne => lanes2!(out, a, b, |x, y| u64::from(f(x) != f(y))),
                Min => lanes2!(out, a, b, |x, y| f(x).min(f(y)).to_bits()),
                Max => lanes2!(out, a, b, |x, y| f(x).max(f(y)).to_bits()),
                _ => *out = *a,
            }
        }
        Scalar::I32 => match op {
            // The hot path of index arithmetic: 32-bit signed.
            Add => lanes2!(out, a, b, |x, y| (x as i32).wrapping_add(y as i32) as i64
                as u64),
            Sub => lanes2!(out, a, b, |x, y| (x as i32).wrapping_sub(y as i32) as i64
                as u64),
            Mul => lanes2!(out, a, b, |x, y| (x as i32).wrapping_mul(y as i32) as i64
                as u64),
            Lt => lanes2!(out, a, b, |x, y| u64::from((x as i64) < (y as i64))),
            _ => integer_lanes(op, ty, a, b, out),
        },
        _ => integer_lanes(op, ty, a, b, out),
    }
}

pub(super) fn integer_lanes<const N: usize>(
    op: BinOp,
    ty: Scalar,
    a: &[u64; N],
    b: &[u64; N],
    out: &mut [u64; N],
) {
    use BinOp::*;
    let bits = ty.size().max(4) * 8;
    let sh = |y: u64| (y as u32) & (bits - 1);
    if ty.is_signed() {
        let s = |x: u64| x as i64;
        match op {
            Add => lanes2!(out, a, b, |x, y| canon(x.wrapping_add(y), ty)),
            Sub => lanes2!(out, a, b, |x, y| canon(x.wrapping_sub(y), ty)),
            Mul => lanes2!(out, a, b, |x, y| canon(x.wrapping_mul(y), ty)),
            Div => lanes2!(out, a, b, |x, y| canon(
                s(x).wrapping_div(if y == 0 { 1 } else { s(y) }) as u64,
                ty
            )),
            Rem => lanes2!(out, a, b, |x, y| canon(
                s(x).wrapping_rem(if y == 0 { 1 } else { s(y) }) as u64,
                ty
            )),
            Shl => lanes2!(out, a, b, |x, y| canon(x.wrapping_shl(sh(y)), ty)),
            Shr => lanes2!(out, a, b, |x, y| canon(s(x).wrapping_shr(sh(y)) as u64, ty)),
            BitAnd => lanes2!(out, a, b, |x, y| x & y),
            BitOr => lanes2!(out, a, b, |x, y| x | y),
            BitXor => lanes2!(out, a, b, |x, y| canon(x ^ y, ty)),
            Lt => lanes2!(out, a, b, |x, y| u64::from(s(x) < s(y))),
            Le => lanes2!(out, a, b, |x, y| u64::from(s(x) <= s(y))),
            Gt => lanes2!(out, a, b, |x, y| u64::from(s(x) > s(y))),
            Ge => lanes2!(out, a, b, |x, y| u64::from(s(x) >= s(y))),
            Eq => lanes2!(out, a, b, |x, y| u64::from(x == y)),
            Ne => lanes2!(out, a, b, |x, y| u64::from(x != y)),
            Min => lanes2!(out, a, b, |x, y| if s(x) <= s(y) { x } else { y }),
            Max => lanes2!(out, a, b, |x, y| if s(x) >= s(y) { x } else { y }),
        }
    } else {
        match op {
            Add => lanes2!(out, a, b, |x, y| canon(x.wrapping_add(y), ty)),
            Sub => lanes2!(out, a, b, |x, y| canon(x.wrapping_sub(y), ty)),
            Mul => lanes2!(out, a, b, |x, y| canon(x.wrapping_mul(y), ty)),
            Div => lanes2!(out, a, b, |x, y| canon(x / if y == 0 { 1 } else { y }, ty)),
            Rem => lanes2!(out, a, b, |x, y| canon(x % if y == 0 { 1 } else { y }, ty)),
            Shl => lanes2!(out, a, b, |x, y| canon(x.wrapping_shl(sh(y)), ty)),
            Shr => lanes2!(out, a, b, |x, y| canon(x.wrapping_shr(sh(y)), ty)),
            BitAnd => lanes2!(out, a, b, |x, y| x & y),
            BitOr => lanes2!(out, a, b, |x, y| x | y),
            BitXor => lanes2!(out, a, b, |x, y| canon(x ^ y, ty)),
            Lt => lanes2!(out, a, b, |x, y| u64::from(x < y)),
            Le => lanes2!(out, a, b, |x, y| u64::from(x <= y)),
            Gt => lanes2!(out, a, b, |x, y| u64::from(x > y)),
            Ge => lanes2!(out, a, b, |x, y| u64::from(x >= y)),
            Eq => lanes2!(out, a, b, |x, y| u64::from(x == y)),
            Ne => lanes2!(out, a, b, |x, y| u64::from(x != y)),
            Min => lanes2!(out, a, b, |x, y| x.min(y)),
            Max => lanes2!(out, a, b, |x, y| x.max(y)),
        }
    }
}

/// The value of math function `f` of type `ty` at the canonical bits `x`, `y`, `z` of its
/// operands (those past its count are 0).
pub(super) fn math_value(f: MathFn, ty: Scalar, [x, y, z]: [u64; 3]) -> u64 {
    if let MathFn::Library(l) = f {
        return l.value(ty, [x, y, z]);
    }
    if f == MathFn::Abs {
        return match ty {
            Scalar::F32 => bits_f32(f32_of(x).abs()),
            Scalar::F64 => f64::from_bits(x).abs().to_bits(),
            t if t.is_half() => x & 0x7fff,
            _ => canon((x as i64).wrapping_abs() as u64, ty),
        };
    }
    let (a, b) = (ty.float_value(x), ty.float_value(y));
    let r = match f {
        MathFn::Sqrt => a.sqrt(),
        MathFn::Rsqrt => 1.0 / a.sqrt(),
        MathFn::Exp | MathFn::FastExp => a.exp(),
        MathFn::Log | MathFn::FastLog => a.ln(),
        MathFn::Sin | MathFn::FastSin => a.sin(),
        MathFn::Cos | MathFn::FastCos => a.cos(),
        MathFn::Tan => a.tan(),
        MathFn::Fabs | MathFn::Abs => a.abs(),
        MathFn::Floor => a.floor(),
        MathFn::Ceil => a.ceil(),
        MathFn::Round => a.round(),
        MathFn::Trunc => a.trunc(),
        MathFn::Pow => a.powf(b),
        MathFn::Fmin => a.min(b),
        MathFn::Fmax => a.max(b),
        MathFn::Exp2 => a.exp2(),
        MathFn::Log2 => a.log2(),
        MathFn::Log10 => a.log10(),
        MathFn::Tanh => a.tanh(),
        MathFn::Sinh => a.sinh(),
        MathFn::Cosh => a.cosh(),
        MathFn::Asin => a.asin(),
        MathFn::Acos => a.acos(),
        MathFn::Atan => a.atan(),
        MathFn::Cbrt => a.cbrt(),
        MathFn::Expm1 => a.exp_m1(),
        MathFn::Log1p => a.ln_1p(),
        MathFn::Atan2 => a.atan2(b),
        MathFn::Hypot => a.hypot(b),
        MathFn::Copysign => a.copysign(b),
        MathFn::Fmod => a % b,
        _ => return integer_intrinsic_value(f, ty, x, y, z),
    };
    ty.float_bits(r)
}

/// The integer intrinsics of the CUDA Math API ("Integer Intrinsics") on canonical bits (0 for a
/// float function, which `math_value` computes). A 32-bit operand is sign- or zero-extended to
/// 64 bits, so the exact difference and sum of two are the same 64-bit arithmetic for `int` and
/// `unsigned int`.
fn integer_intrinsic_value(f: MathFn, ty: Scalar, x: u64, y: u64, z: u64) -> u64 {
    const WORD: u64 = 0xffff_ffff;
    // The 64 bits `y:x` of the byte permutation and the funnel shifts.
    let wide = (y << 32) | (x & WORD);
    match f {
        MathFn::BytePerm => (0..4).fold(0, |r, n| {
            let byte = (wide >> (8 * ((z >> (4 * n)) & 7))) & 0xff;
            r | (byte << (8 * n))
        }),
        MathFn::Sad => (x as i64).abs_diff(y as i64).wrapping_add(z) & WORD,
        MathFn::FunnelShiftL => (wide << (z & 31)) >> 32,
        MathFn::FunnelShiftLc => (wide << z.min(32)) >> 32,
        MathFn::FunnelShiftR => (wide >> (z & 31)) & WORD,
        MathFn::FunnelShiftRc => (wide >> z.min(32)) & WORD,
        MathFn::MulHi64 if ty == Scalar::I64 => {
            ((i128::from(x as i64) * i128::from(y as i64)) >> 64) as u64
        }
        MathFn::MulHi64 => ((u128::from(x) * u128::from(y)) >> 64) as u64,
        MathFn::HalvingAdd | MathFn::RoundedHalvingAdd => {
            let round = i64::from(f == MathFn::RoundedHalvingAdd);
            canon((((x as i64) + (y as i64) + round) >> 1) as u64, ty)
        }
        _ => 0,
    }
}

pub(super) fn atomic_value(op: AtomicOp, ty: Scalar, old: u64, v: u64, v2: u64) -> u64 {
    match op {
        // A pair's halves are added one at a time (`Machine::atomic`).
        AtomicOp::Add | AtomicOp::AddPair => match ty {
            Scalar::F32 => bits_f32(f32_of(old) + f32_of(v)),
            Scalar::F64 => (f64::from_bits(old) + f64::from_bits(v)).to_bits(),
            // Added in `f64`, which rounds the sum to the 16-bit value the hardware's one rounding gives.
            Scalar::F16 | Scalar::BF16 => ty.float_bits(ty.float_value(old) + ty.float_value(v)),
            _ => canon(old.wrapping_add(v), ty),
        },
        AtomicOp::Sub => canon(old.wrapping_sub(v), ty),
        AtomicOp::Exch => v,
        AtomicOp::Inc => {
            if old >= v {
                0
            } else {
                canon(old + 1, ty)
            }
        }
        AtomicOp::Dec => {
            if old == 0 || old > v {
                v
            } else {
                old - 1
            }
        }
        AtomicOp::Min => {
            if ty.is_signed() {
                if (v as i64) < (old as i64) {
                    v
                } else {
                    old
                }
            } else {
                old.min(v)
            }
        }
        AtomicOp::Max => {
            if ty.is_signed() {
                if (v as i64) > (old as i64) {
                    v
                } else {
                    old
                }
            } else {
                old.max(v)
            }
        }
        AtomicOp::And => old & v,
        AtomicOp::Or => old | v,
        AtomicOp::Xor => canon(old ^ v, ty),
        AtomicOp::Cas => {
            if old == v {
                v2
            } else {
                old
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fma_f32;

    /// `fma_f32` against the library's correctly rounded `mul_add`, bit for bit.
    fn check(x: f32, y: f32, z: f32) {
        let (found, expected) = (fma_f32(x, y, z), x.mul_add(y, z));
        assert!(
            found.to_bits() == expected.to_bits() || (found.is_nan() && expected.is_nan()),
            "fma({x:e}, {y:e}, {z:e}) = {found:e}, expected {expected:e}"
        );
    }

    #[test]
    fn the_emulated_fma_rounds_once_like_fmaf() {
        // Cases where rounding the product first would differ, and the edges of the range.
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1.0 + f32::EPSILON,
            1.0 - f32::EPSILON / 2.0,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::MIN_POSITIVE / 3.0,
            1e-45,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            0.1,
            3.0,
            16_777_217.0,
        ];
        for &x in &special {
            for &y in &special {
                for &z in &special {
                    check(x, y, z);
                }
            }
        }
        // A million random triples over all bit patterns and around 1, from a fixed seed.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 32) as u32
        };
        for round in 0..1_000_000 {
            let (a, b, c) = (next(), next(), next());
            if round % 2 == 0 {
                check(f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
            } else {
                // Near 1 and near each other, where cancellation exposes double rounding.
                let near = |bits: u32| f32::from_bits(0x3f80_0000 ^ (bits & 0x00ff_ffff));
                let x = near(a);
                let y = near(b);
                check(x, y, -(x * y) + f32::from_bits(c & 0x807f_ffff));
            }
        }
    }
}
