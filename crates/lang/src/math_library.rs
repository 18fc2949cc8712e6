//! The rest of the CUDA Math API that students use: the single and double precision functions
//! beyond the common ones (`rintf`, `erfcf`, `lgammaf`, `norm3df`, `remainderf`, `frexpf`, ...),
//! the "Type Casting Intrinsics" (`__float2int_rd`, `__int_as_float`, `__double2hiint`, ...) and
//! the directed-rounding arithmetic of the "Single/Double Precision Intrinsics" (`__fadd_ru`,
//! `__dmul_rz`, `__fma_rd`, ...), each one `LibraryFn` and its value here.
//!
//! Values follow the CUDA Math API's definitions. A directed rounding is exact: the operation's
//! exact result is held as a rounded `f64` and the sign of its error (a two-sum, a two-product or
//! the remainder of a quotient, Knuth TAOCP 4.2.2 and Boldo and Muller's error-free
//! transformations), which decides the direction. A conversion to an integer saturates and maps
//! NaN to 0 as PTX's `cvt` does (PTX ISA, "cvt": float-to-integer conversions clamp to the
//! destination's range). The special functions (`erf`, `lgamma`, ...) are computed in `f64`
//! with series, continued fractions and Newton steps: correctly rounded for `float` in practice,
//! and for `double` within a few units in the last place, as the Math API's own error bounds.

use crate::ast::Scalar;

/// The rounding of an intrinsic's suffix: `_rn` to nearest even, `_rz` toward zero, `_ru` up
/// (toward +infinity), `_rd` down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    Nearest,
    Zero,
    Up,
    Down,
}

/// The arithmetic of the rounded intrinsics (`__fadd_rz`, `__drcp_ru`, `__fma_rd`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundedOp {
    Add,
    Sub,
    Mul,
    Div,
    Rcp,
    Sqrt,
    Fma,
}

/// A function of the math library or a type casting intrinsic, on operands of the `Math` node's
/// type (`operands` names the exceptions) with a result of `result`'s type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibraryFn {
    /// `rintf`, `nearbyintf`: to an integral value, ties to even.
    Rint,
    /// `sinpif(x)` = sin(pi x), `cospif(x)` = cos(pi x), exact at integers and halves.
    SinPi,
    CosPi,
    /// The cosine `sincosf` writes beside its sine, sharing the sine's range reduction.
    SincosCosine,
    Erf,
    Erfc,
    ErfInv,
    ErfcInv,
    /// The standard normal distribution function and its inverse.
    NormCdf,
    NormCdfInv,
    Lgamma,
    Tgamma,
    /// `rcbrtf(x)` = 1 / cbrt(x).
    Rcbrt,
    /// `exp10f` and the fast `__exp10f`.
    Exp10,
    FastExp10,
    /// `logbf`: the exponent of `x` as a float; `ilogbf` as an `int`.
    Logb,
    Ilogb,
    /// `modff`'s result: `x` less its integral part, with `x`'s sign.
    ModfFraction,
    /// `frexpf`'s result, in [0.5, 1), and the exponent it writes.
    FrexpMantissa,
    FrexpExponent,
    /// `signbit(x)`: 1 where the sign bit is set (-0.0 and negative NaNs included).
    Signbit,
    /// `fdimf(x, y)`: `x - y` where positive, else +0.
    Fdim,
    /// `ldexpf(x, e)` and `scalbnf(x, e)`: `x * 2^e`, `e` an `int`.
    Ldexp,
    /// `remainderf(x, y)`: `x - n y` with `n` the integer nearest `x / y`, ties even.
    Remainder,
    /// The low three bits of that `n` with the sign of `x / y`, which `remquof` writes.
    RemquoQuotient,
    Nextafter,
    /// `rhypotf(x, y)` = 1 / sqrt(x^2 + y^2).
    Rhypot,
    Norm3d,
    Rnorm3d,
    /// `lroundf`, `llroundf`: to the nearest `long long`, halves away from zero, saturating.
    Lround,
    /// An operation rounded as `Rounding` says.
    Arithmetic(RoundedOp, Rounding),
    /// A float converted to the integer type `.0`, rounded, saturating, NaN to 0.
    ToInteger(Scalar, Rounding),
    /// An integer or a `double` converted to the float type `.0`, rounded.
    ToFloat(Scalar, Rounding),
    /// The same bits read as the type `.0` (`__float_as_int`, `__longlong_as_double`, ...).
    Bits(Scalar),
    /// `__double2hiint`, `__double2loint`: a word of a `double`'s bits as an `int`.
    HighWord,
    LowWord,
    /// `__hiloint2double(hi, lo)`.
    JoinWords,
}

/// The functions named by their `double` name; the `float` one adds an `f` (`erfcf`).
const FUNCTIONS: [(&str, LibraryFn, usize); 30] = {
    use LibraryFn::*;
    [
        ("rint", Rint, 1),
        ("nearbyint", Rint, 1),
        ("sinpi", SinPi, 1),
        ("cospi", CosPi, 1),
        ("erf", Erf, 1),
        ("erfc", Erfc, 1),
        ("erfinv", ErfInv, 1),
        ("erfcinv", ErfcInv, 1),
        ("normcdf", NormCdf, 1),
        ("normcdfinv", NormCdfInv, 1),
        ("lgamma", Lgamma, 1),
        ("tgamma", Tgamma, 1),
        ("rcbrt", Rcbrt, 1),
        ("exp10", Exp10, 1),
        ("__exp10", FastExp10, 1),
        ("logb", Logb, 1),
        ("ilogb", Ilogb, 1),
        ("signbit", Signbit, 1),
        ("fdim", Fdim, 2),
        ("ldexp", Ldexp, 2),
        ("scalbn", Ldexp, 2),
        ("remainder", Remainder, 2),
        ("nextafter", Nextafter, 2),
        ("rhypot", Rhypot, 2),
        ("norm3d", Norm3d, 3),
        ("rnorm3d", Rnorm3d, 3),
        ("lrint", ToInteger(Scalar::I64, Rounding::Nearest), 1),
        ("llrint", ToInteger(Scalar::I64, Rounding::Nearest), 1),
        ("lround", Lround, 1),
        ("llround", Lround, 1),
    ]
};

/// The type punning intrinsics: name, operand type, result type.
const PUNNING: [(&str, Scalar, Scalar); 6] = {
    use Scalar::{F32, F64, I32, I64, U32};
    [
        ("__float_as_int", F32, I32),
        ("__int_as_float", I32, F32),
        ("__float_as_uint", F32, U32),
        ("__uint_as_float", U32, F32),
        ("__double_as_longlong", F64, I64),
        ("__longlong_as_double", I64, F64),
    ]
};

/// The type of a conversion intrinsic's word: `__float2int_rn` converts a `float` to an `int`.
fn type_word(word: &str) -> Option<Scalar> {
    Some(match word {
        "float" => Scalar::F32,
        "double" => Scalar::F64,
        "int" => Scalar::I32,
        "uint" => Scalar::U32,
        "ll" => Scalar::I64,
        "ull" => Scalar::U64,
        _ => return None,
    })
}

fn rounding(suffix: &str) -> Option<Rounding> {
    Some(match suffix {
        "rn" => Rounding::Nearest,
        "rz" => Rounding::Zero,
        "ru" => Rounding::Up,
        "rd" => Rounding::Down,
        _ => return None,
    })
}

/// A call of the library: the function, the type of its `Math` node (`None`: that of its first
/// operand, `float` or `double`, as C++'s overloads pick) and its operand count.
pub fn library_function(name: &str) -> Option<(LibraryFn, Option<Scalar>, usize)> {
    if let Some(&(_, from, to)) = PUNNING.iter().find(|(n, ..)| *n == name) {
        return Some((LibraryFn::Bits(to), Some(from), 1));
    }
    match name {
        "__double2hiint" => return Some((LibraryFn::HighWord, Some(Scalar::F64), 1)),
        "__double2loint" => return Some((LibraryFn::LowWord, Some(Scalar::F64), 1)),
        "__hiloint2double" => return Some((LibraryFn::JoinWords, Some(Scalar::I32), 2)),
        _ => {}
    }
    if let Some((stem, suffix)) = name.strip_prefix("__").and_then(|n| n.rsplit_once('_')) {
        let round = rounding(suffix)?;
        // `__float2int_rd` and its kin.
        if let Some((from, to)) = stem.split_once('2') {
            let (from, to) = (type_word(from)?, type_word(to)?);
            let f = if to.is_float() {
                LibraryFn::ToFloat(to, round)
            } else if from.is_float() {
                LibraryFn::ToInteger(to, round)
            } else {
                return None;
            };
            return Some((f, Some(from), 1));
        }
        // `__fadd_rz`, `__dsqrt_ru`, `__fmaf_rd`, `__fma_rn`.
        let (ty, op) = match stem {
            "fmaf" => (Scalar::F32, "fma"),
            "fma" => (Scalar::F64, "fma"),
            _ => match stem.split_at_checked(1)? {
                ("f", op) => (Scalar::F32, op),
                ("d", op) => (Scalar::F64, op),
                _ => return None,
            },
        };
        let (op, arity) = match op {
            "add" => (RoundedOp::Add, 2),
            "sub" => (RoundedOp::Sub, 2),
            "mul" => (RoundedOp::Mul, 2),
            "div" => (RoundedOp::Div, 2),
            "rcp" => (RoundedOp::Rcp, 1),
            "sqrt" => (RoundedOp::Sqrt, 1),
            "fma" => (RoundedOp::Fma, 3),
            _ => return None,
        };
        return Some((LibraryFn::Arithmetic(op, round), Some(ty), arity));
    }
    let find = |n: &str| FUNCTIONS.iter().find(|(f, ..)| *f == n);
    if let Some(&(_, f, arity)) = find(name) {
        // `signbit` and the double names take the type of their operand.
        return Some((f, None, arity));
    }
    let &(_, f, arity) = find(name.strip_suffix('f')?)?;
    Some((f, Some(Scalar::F32), arity))
}

impl LibraryFn {
    /// The type of operand `k` of a call whose node has type `ty`.
    pub fn operand(self, ty: Scalar, k: usize) -> Scalar {
        match (self, k) {
            (LibraryFn::Ldexp, 1) => Scalar::I32,
            _ => ty,
        }
    }

    /// The type of the result of a call whose node has type `ty`.
    pub fn result(self, ty: Scalar) -> Scalar {
        match self {
            LibraryFn::Ilogb
            | LibraryFn::FrexpExponent
            | LibraryFn::Signbit
            | LibraryFn::RemquoQuotient
            | LibraryFn::HighWord
            | LibraryFn::LowWord => Scalar::I32,
            LibraryFn::JoinWords => Scalar::F64,
            LibraryFn::Lround => Scalar::I64,
            LibraryFn::ToInteger(to, _) | LibraryFn::ToFloat(to, _) | LibraryFn::Bits(to) => to,
            _ => ty,
        }
    }

    /// The function's value on the canonical bits of its operands (a `float` in the low 32
    /// bits, an `int` sign-extended), as the canonical bits of its result.
    pub fn value(self, ty: Scalar, [x, y, z]: [u64; 3]) -> u64 {
        use LibraryFn::*;
        let result = self.result(ty);
        let int = |v: i64| match result {
            Scalar::I32 => v as i32 as i64 as u64,
            _ => v as u64,
        };
        match self {
            Bits(to) => return canonical(x & mask(ty), to),
            HighWord => return int((x >> 32) as i32 as i64),
            LowWord => return int(x as i32 as i64),
            JoinWords => return (x << 32) | (y & mask(Scalar::I32)),
            ToFloat(to, round) => {
                let (hi, lo) = if ty.is_float() {
                    (ty.float_value(x), 0.0)
                } else {
                    let exact = if ty.is_signed() {
                        i128::from(x as i64)
                    } else {
                        i128::from(x)
                    };
                    let hi = exact as f64;
                    (hi, (exact - hi as i128) as f64)
                };
                return rounded(to, hi, lo, round);
            }
            Arithmetic(op, round) => {
                let (a, b, c) = (ty.float_value(x), ty.float_value(y), ty.float_value(z));
                let (hi, lo) = exact_arithmetic(op, a, b, c);
                return rounded(ty, hi, lo, round);
            }
            _ => {}
        }
        let (a, b, c) = (ty.float_value(x), ty.float_value(y), ty.float_value(z));
        let r = match self {
            ToInteger(to, round) => {
                let r = match round {
                    Rounding::Nearest => a.round_ties_even(),
                    Rounding::Zero => a.trunc(),
                    Rounding::Up => a.ceil(),
                    Rounding::Down => a.floor(),
                };
                // Rust's float-to-integer `as` saturates and maps NaN to 0, as `cvt` does.
                return match to {
                    Scalar::I32 => int(i64::from(r as i32)),
                    Scalar::U32 => u64::from(r as u32),
                    Scalar::I64 => r as i64 as u64,
                    _ => r as u64,
                };
            }
            Lround => return a.round() as i64 as u64,
            Signbit => return int(i64::from(a.is_sign_negative())),
            Ilogb => {
                return int(i64::from(match exponent(a) {
                    Some(e) => e,
                    None if a.is_infinite() => i32::MAX,
                    None => i32::MIN,
                }))
            }
            FrexpExponent => return int(i64::from(exponent(a).map_or(0, |e| e + 1))),
            RemquoQuotient => return int(i64::from(remainder(a, b).1)),
            Nextafter if ty == Scalar::F32 => {
                let (a32, b32) = (a as f32, b as f32);
                let r = if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else if a == b {
                    b32
                } else if b > a {
                    a32.next_up()
                } else {
                    a32.next_down()
                };
                return u64::from(r.to_bits());
            }
            Nextafter => match () {
                _ if a.is_nan() || b.is_nan() => f64::NAN,
                _ if a == b => b,
                _ if b > a => a.next_up(),
                _ => a.next_down(),
            },
            Rint => a.round_ties_even(),
            SinPi => sin_pi(a),
            CosPi | SincosCosine => cos_pi(a),
            Erf => erf(a),
            Erfc => erfc(a),
            ErfInv => erf_inv(a),
            ErfcInv => erfc_inv(a),
            NormCdf => erfc(-a / std::f64::consts::SQRT_2) / 2.0,
            NormCdfInv => -std::f64::consts::SQRT_2 * erfc_inv(2.0 * a),
            Lgamma => ln_gamma(a).0,
            Tgamma => gamma(a),
            Rcbrt => 1.0 / a.cbrt(),
            Exp10 | FastExp10 => 10f64.powf(a),
            Logb => match exponent(a) {
                Some(e) => f64::from(e),
                None if a == 0.0 => f64::NEG_INFINITY,
                None => a.abs(),
            },
            ModfFraction if a.is_infinite() => 0f64.copysign(a),
            ModfFraction => (a - a.trunc()).copysign(a),
            FrexpMantissa => match exponent(a) {
                Some(e) => scale(a, -e - 1),
                None => a,
            },
            Fdim if a.is_nan() || b.is_nan() => f64::NAN,
            Fdim => (a - b).max(0.0),
            Ldexp => scale(a, (y as i32).clamp(-2200, 2200)),
            Remainder => remainder(a, b).0,
            Rhypot => 1.0 / a.hypot(b),
            Norm3d => norm3(a, b, c),
            Rnorm3d => 1.0 / norm3(a, b, c),
            _ => 0.0,
        };
        ty.float_bits(r)
    }
}

fn mask(ty: Scalar) -> u64 {
    if ty.size() == 8 {
        u64::MAX
    } else {
        0xffff_ffff
    }
}

/// `bits` of a 32- or 64-bit value in the canonical form of `to`.
fn canonical(bits: u64, to: Scalar) -> u64 {
    match to {
        Scalar::I32 => bits as i32 as i64 as u64,
        _ => bits,
    }
}

/// The exact result of `op` on `a`, `b`, `c` (doubles, or floats held exactly as doubles) as
/// its value rounded to a double and a number with the sign of the rounding's error.
fn exact_arithmetic(op: RoundedOp, a: f64, b: f64, c: f64) -> (f64, f64) {
    // Knuth's two-sum: `s + e` is exactly `p + q`.
    let two_sum = |p: f64, q: f64| {
        let s = p + q;
        let v = s - p;
        (s, (p - (s - v)) + (q - v))
    };
    let quotient = |n: f64, d: f64| {
        let q = n / d;
        // The remainder of the rounded quotient is exact with a fused multiply-add.
        (q, -q.mul_add(d, -n) * d.signum())
    };
    let (hi, lo) = match op {
        RoundedOp::Add => two_sum(a, b),
        RoundedOp::Sub => two_sum(a, -b),
        RoundedOp::Mul => {
            let p = a * b;
            (p, a.mul_add(b, -p))
        }
        RoundedOp::Div => quotient(a, b),
        RoundedOp::Rcp => quotient(1.0, a),
        RoundedOp::Sqrt => {
            let s = a.sqrt();
            (s, (-s).mul_add(s, a))
        }
        RoundedOp::Fma => {
            let hi = a.mul_add(b, c);
            let p = a * b;
            let (s, e) = two_sum(p, c);
            (hi, (s - hi) + (e + a.mul_add(b, -p)))
        }
    };
    // With an infinite or NaN operand there is no error; a finite result that overflowed to
    // infinity lies below it (the error terms above are then NaN or infinite).
    if ![a, b, c].iter().all(|v| v.is_finite()) {
        (hi, 0.0)
    } else if hi.is_infinite() {
        (hi, -hi)
    } else {
        (hi, lo)
    }
}

/// The float of type `ty` (`float` or `double`) that `round` gives for the exact value
/// `hi + lo` (`hi` the nearest double; only the sign of `lo` is used, as the error of `hi`).
fn rounded(ty: Scalar, hi: f64, lo: f64, round: Rounding) -> u64 {
    if ty == Scalar::F32 {
        let c = hi as f32;
        let d = hi - f64::from(c);
        // The sign of the exact value less `c`.
        let above = if d != 0.0 { d } else { lo };
        let r = match round {
            Rounding::Nearest => {
                // `hi` exactly halfway between two floats: the error decides the tie.
                let other = if d > 0.0 { c.next_up() } else { c.next_down() };
                let tie = d != 0.0 && (f64::from(other) - hi).abs() == d.abs();
                if tie && lo * d > 0.0 {
                    other
                } else {
                    c
                }
            }
            _ => step(c, above, round, f32::next_up, f32::next_down),
        };
        return u64::from(r.to_bits());
    }
    let r = match round {
        Rounding::Nearest => hi,
        _ => step(hi, lo, round, f64::next_up, f64::next_down),
    };
    ty.float_bits(r)
}

/// `c`, the nearest float to an exact value `above` away from it in sign, moved one float in
/// `round`'s direction where that direction lies on the exact value's side.
fn step<T: Copy + PartialOrd + Default>(
    c: T,
    above: f64,
    round: Rounding,
    up: fn(T) -> T,
    down: fn(T) -> T,
) -> T {
    let zero = T::default();
    match round {
        Rounding::Up if above > 0.0 => up(c),
        Rounding::Down if above < 0.0 => down(c),
        Rounding::Zero if c > zero && above < 0.0 => down(c),
        Rounding::Zero if c < zero && above > 0.0 => up(c),
        _ => c,
    }
}

/// The exponent `e` of a finite nonzero `a`, `2^e <= |a| < 2^(e+1)`; `None` for 0, infinities
/// and NaN.
fn exponent(a: f64) -> Option<i32> {
    if a == 0.0 || !a.is_finite() {
        return None;
    }
    // A subnormal is first made normal.
    let (a, shift) = if a.abs() < f64::MIN_POSITIVE {
        (a * 2f64.powi(64), 64)
    } else {
        (a, 0)
    };
    Some(((a.to_bits() >> 52) & 0x7ff) as i32 - 1023 - shift)
}

/// `a * 2^n` in steps that neither overflow nor underflow before the last.
fn scale(mut a: f64, mut n: i32) -> f64 {
    while n.abs() > 1000 {
        let s = n.signum() * 1000;
        a *= 2f64.powi(s);
        n -= s;
    }
    a * 2f64.powi(n)
}

/// IEEE remainder of `a` by `b` and the low three bits of the rounded quotient, signed as
/// `a / b` (C11 7.12.10.2 and 7.12.10.3). Every step is exact.
fn remainder(a: f64, b: f64) -> (f64, i32) {
    if a.is_nan() || b.is_nan() || a.is_infinite() || b == 0.0 {
        return (f64::NAN, 0);
    }
    let bb = b.abs();
    // Only the quotient's last three bits matter: reduce by 8|b| first where it is finite.
    let mut r = if (8.0 * bb).is_finite() {
        a.abs() % (8.0 * bb)
    } else {
        a.abs()
    };
    let mut q = 0;
    while r >= bb && q < 8 {
        r -= bb;
        q += 1;
    }
    // Now r < |b|: round the quotient up where the rest is over half |b|, or half on an odd one.
    if r > bb - r || (r == bb - r && q % 2 == 1) {
        r -= bb;
        q += 1;
    }
    let sign = if (a < 0.0) != (b < 0.0) { -1 } else { 1 };
    // The remainder has the sign of `a` (and is a zero of that sign).
    let r = if a < 0.0 { -r } else { r };
    let r = if r == 0.0 { 0f64.copysign(a) } else { r };
    (r, sign * (q & 7))
}

/// sin(pi a), its argument reduced exactly to [-1/2, 1/2].
fn sin_pi(a: f64) -> f64 {
    if !a.is_finite() {
        return f64::NAN;
    }
    let r = a - 2.0 * (a / 2.0).round();
    let r = if r.abs() > 0.5 {
        1f64.copysign(r) - r
    } else {
        r
    };
    if r == 0.0 {
        return 0f64.copysign(a);
    }
    (std::f64::consts::PI * r).sin()
}

/// cos(pi a) = sin(pi (1/2 - |r|)), exactly 0 at the halves.
fn cos_pi(a: f64) -> f64 {
    if !a.is_finite() {
        return f64::NAN;
    }
    let r = (a - 2.0 * (a / 2.0).round()).abs();
    if r > 0.5 {
        -(std::f64::consts::PI * (r - 0.5)).sin()
    } else {
        (std::f64::consts::PI * (0.5 - r)).sin()
    }
}

/// Beyond this, `erfc` is taken from its continued fraction and `erf` as its complement.
const ERF_SERIES_LIMIT: f64 = 2.5;

/// erf by its series in positive terms, 2/sqrt(pi) exp(-a^2) sum (2a^2)^n a / (2n+1)!!
/// (Abramowitz and Stegun 7.1.6), for |a| below `ERF_SERIES_LIMIT`.
fn erf_series(a: f64) -> f64 {
    let (mut term, mut sum) = (a, a);
    for n in 1..200 {
        term *= 2.0 * a * a / f64::from(2 * n + 1);
        sum += term;
        if term.abs() < sum.abs() * 1e-17 {
            break;
        }
    }
    std::f64::consts::FRAC_2_SQRT_PI * (-a * a).exp() * sum
}

/// erfc of `a >= ERF_SERIES_LIMIT` by its continued fraction, exp(-a^2)/sqrt(pi) /
/// (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))) (Abramowitz and Stegun 7.1.14), evaluated from
/// its 120th term back.
fn erfc_fraction(a: f64) -> f64 {
    let mut t = a;
    for k in (1..120).rev() {
        t = a + f64::from(k) / 2.0 / t;
    }
    (-a * a).exp() / (t * std::f64::consts::PI.sqrt())
}

fn erf(a: f64) -> f64 {
    match a.abs() {
        x if x.is_nan() => a,
        x if x < ERF_SERIES_LIMIT => erf_series(a),
        x => (1.0 - erfc_fraction(x)).copysign(a),
    }
}

fn erfc(a: f64) -> f64 {
    match a {
        x if x.is_nan() => a,
        x if x >= ERF_SERIES_LIMIT => erfc_fraction(x),
        x if x <= -ERF_SERIES_LIMIT => 2.0 - erfc_fraction(-x),
        x => 1.0 - erf_series(x),
    }
}

/// The derivative of erf at `x`.
fn erf_slope(x: f64) -> f64 {
    std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp()
}

/// erfinv by Newton's method on erf near 0 and through erfcinv toward +-1.
fn erf_inv(y: f64) -> f64 {
    if y.abs() >= 0.5 || y.is_nan() {
        // 1 - |y| is exact here (Sterbenz).
        return erfc_inv(1.0 - y.abs()).copysign(y);
    }
    let mut x = y * 0.886;
    for _ in 0..40 {
        let dx = (erf(x) - y) / erf_slope(x);
        x -= dx;
        if dx.abs() <= x.abs() * 1e-17 {
            break;
        }
    }
    x
}

/// erfcinv by Newton's method on ln erfc, which stays well scaled as erfc falls to 0.
fn erfc_inv(z: f64) -> f64 {
    match z {
        _ if z.is_nan() || !(0.0..=2.0).contains(&z) => f64::NAN,
        0.0 => f64::INFINITY,
        2.0 => f64::NEG_INFINITY,
        _ if z > 1.0 => -erfc_inv(2.0 - z),
        _ => {
            let mut x = (-z.ln()).sqrt() * 0.8;
            for _ in 0..60 {
                let e = erfc(x);
                let dx = (e.ln() - z.ln()) * e / -erf_slope(x);
                x -= dx;
                if dx.abs() <= x.abs() * 1e-17 {
                    break;
                }
            }
            x
        }
    }
}

/// ln |gamma(a)| and the sign of gamma(a), by Lanczos' approximation (g = 7, nine terms; Press
/// et al., Numerical Recipes 6.1) with the reflection formula below 1/2.
fn ln_gamma(a: f64) -> (f64, f64) {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if a.is_nan() {
        return (a, 1.0);
    }
    if a.is_infinite() {
        return (f64::INFINITY, 1.0);
    }
    // Lanczos' sum leaves a few units of the last place where the logarithm is 0.
    if a == 1.0 || a == 2.0 {
        return (0.0, 1.0);
    }
    if a < 0.5 {
        // Poles at 0 and the negative integers.
        let s = sin_pi(a);
        if s == 0.0 {
            return (f64::INFINITY, 1.0);
        }
        let (l, _) = ln_gamma(1.0 - a);
        return ((std::f64::consts::PI / s.abs()).ln() - l, s.signum());
    }
    let x = a - 1.0;
    let t = x + G + 0.5;
    let series = (1..9).fold(C[0], |sum, k| sum + C[k] / (x + k as f64));
    let ln = 0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln();
    (ln, 1.0)
}

fn gamma(a: f64) -> f64 {
    if a == 0.0 {
        return f64::INFINITY.copysign(a);
    }
    if a < 0.0 && a == a.floor() || a == f64::NEG_INFINITY {
        return f64::NAN;
    }
    let (ln, sign) = ln_gamma(a);
    sign * ln.exp()
}

/// sqrt(a^2 + b^2 + c^2) without overflow: infinite where any is.
fn norm3(a: f64, b: f64, c: f64) -> f64 {
    let m = a.abs().max(b.abs()).max(c.abs());
    if [a, b, c].iter().any(|v| v.is_infinite()) {
        return f64::INFINITY;
    }
    if m == 0.0 || m.is_nan() {
        return m;
    }
    let (a, b, c) = (a / m, b / m, c / m);
    m * (a * a + b * b + c * c).sqrt()
}

#[cfg(test)]
mod tests {
    use super::{erf, erf_inv, erfc, erfc_inv, library_function, LibraryFn, Rounding};
    use crate::ast::Scalar;

    /// The value of the named function on `float` operands, as a `float`, an `int` or a
    /// `long long` widened to `f64` (by its result's type).
    fn call(name: &str, operands: &[f64]) -> f64 {
        let (f, ty, _) = library_function(name).unwrap_or_else(|| panic!("{name}"));
        let ty = ty.unwrap_or(Scalar::F32);
        let mut bits = [0u64; 3];
        for (k, &v) in operands.iter().enumerate() {
            bits[k] = match f.operand(ty, k) {
                Scalar::I32 => v as i32 as i64 as u64,
                Scalar::U32 => v as u32 as u64,
                Scalar::I64 => v as i64 as u64,
                Scalar::U64 => v as u64,
                s => s.float_bits(v),
            };
        }
        let r = f.value(ty, bits);
        match f.result(ty) {
            Scalar::I32 | Scalar::I64 => r as i64 as f64,
            Scalar::U32 | Scalar::U64 => r as f64,
            s => s.float_value(r),
        }
    }

    fn float(v: f32) -> f64 {
        f64::from(v)
    }

    #[test]
    fn a_float_to_int_conversion_rounds_as_its_suffix_says_and_saturates() {
        assert_eq!(call("__float2int_rd", &[-1.5]), -2.0);
        assert_eq!(call("__float2int_ru", &[-1.5]), -1.0);
        assert_eq!(call("__float2int_rz", &[-1.5]), -1.0);
        assert_eq!(call("__float2int_rn", &[2.5]), 2.0);
        assert_eq!(call("__float2int_rn", &[3.5]), 4.0);
        assert_eq!(call("__float2int_rz", &[3.9e9]), 2147483647.0);
        assert_eq!(call("__float2int_rz", &[f64::NAN]), 0.0);
        assert_eq!(call("__float2uint_rn", &[-3.0]), 0.0);
        assert_eq!(call("__float2ll_rz", &[-1e20]), i64::MIN as f64);
        assert_eq!(call("__double2int_ru", &[2.25]), 3.0);
        assert_eq!(call("lrintf", &[2.5]), 2.0);
        assert_eq!(call("lroundf", &[2.5]), 3.0);
        assert_eq!(call("llroundf", &[-2.5]), -3.0);
    }

    #[test]
    fn a_conversion_to_a_float_rounds_in_the_direction_its_suffix_names() {
        // 2^24 + 1 lies between the floats 2^24 and 2^24 + 2.
        assert_eq!(call("__int2float_rz", &[16777217.0]), 16777216.0);
        assert_eq!(call("__int2float_ru", &[16777217.0]), 16777218.0);
        assert_eq!(call("__int2float_rn", &[16777217.0]), 16777216.0);
        assert_eq!(
            call("__double2float_rd", &[0.1]),
            float(f32::from_bits(0x3dcc_cccc))
        );
        assert_eq!(
            call("__double2float_ru", &[0.1]),
            float(f32::from_bits(0x3dcc_cccd))
        );
        assert_eq!(call("__double2float_rz", &[1e300]), float(f32::MAX));
        assert_eq!(call("__double2float_ru", &[1e300]), f64::INFINITY);
    }

    #[test]
    fn a_long_long_halfway_after_its_rounding_to_double_still_rounds_up_to_float() {
        // 2^60 + 2^36 + 1: its double is 2^60 + 2^36, halfway between the floats 2^60 and
        // 2^60 + 2^37, and the 1 lost on the way decides the tie upward.
        let (f, _, _) = library_function("__ll2float_rn").unwrap_or_else(|| panic!());
        let x = (1u64 << 60) + (1 << 36) + 1;
        let r = f32::from_bits(f.value(Scalar::I64, [x, 0, 0]) as u32);
        assert_eq!(f64::from(r), ((1u64 << 60) + (1 << 37)) as f64);
        let (f, _, _) = library_function("__ull2double_rd").unwrap_or_else(|| panic!());
        let r = f64::from_bits(f.value(Scalar::U64, [u64::MAX, 0, 0]));
        assert_eq!(r, 18446744073709549568.0);
    }

    #[test]
    fn a_directed_add_keeps_the_float_below_or_moves_to_the_one_above() {
        assert_eq!(call("__fadd_rd", &[1.0, 1e-8]), 1.0);
        assert_eq!(call("__fadd_rz", &[1.0, 1e-8]), 1.0);
        assert_eq!(call("__fadd_ru", &[1.0, 1e-8]), float(1f32.next_up()));
        assert_eq!(
            call("__fadd_rd", &[-1.0, -1e-8]),
            float((-1f32).next_down())
        );
        assert_eq!(call("__fadd_rz", &[-1.0, -1e-8]), -1.0);
        assert_eq!(call("__fsub_ru", &[1.0, -1e-8]), float(1f32.next_up()));
        assert_eq!(call("__dadd_ru", &[1.0, 1e-30]), 1f64.next_up());
        assert_eq!(call("__dadd_rd", &[1.0, 1e-30]), 1.0);
        assert_eq!(call("__dmul_rz", &[f64::MAX, 2.0]), f64::MAX);
        assert_eq!(call("__dmul_rn", &[f64::MAX, 2.0]), f64::INFINITY);
    }

    #[test]
    fn directed_quotients_roots_and_fused_multiply_adds_bracket_the_exact_value() {
        assert_eq!(
            call("__fdiv_rd", &[1.0, 3.0]),
            float(f32::from_bits(0x3eaa_aaaa))
        );
        assert_eq!(
            call("__fdiv_ru", &[1.0, 3.0]),
            float(f32::from_bits(0x3eaa_aaab))
        );
        assert_eq!(
            call("__frcp_rz", &[3.0]),
            float(f32::from_bits(0x3eaa_aaaa))
        );
        assert_eq!(
            call("__fsqrt_rd", &[2.0]),
            float(f32::from_bits(0x3fb5_04f3))
        );
        assert_eq!(
            call("__fsqrt_ru", &[2.0]),
            float(f32::from_bits(0x3fb5_04f4))
        );
        // 1 * 1 + 1e-8 lies just above 1.
        assert_eq!(call("__fmaf_ru", &[1.0, 1.0, 1e-8]), float(1f32.next_up()));
        assert_eq!(call("__fmaf_rd", &[1.0, 1.0, 1e-8]), 1.0);
        assert_eq!(call("__fma_ru", &[1.0, 1.0, 1e-30]), 1f64.next_up());
        // The double nearest 1/3 lies below it, so three of it lie just below 1.
        assert_eq!(call("__fma_rz", &[3.0, 1.0 / 3.0, 0.0]), 1f64.next_down());
        assert_eq!(call("__fma_rn", &[3.0, 1.0 / 3.0, 0.0]), 1.0);
        assert_eq!(call("__dsqrt_rn", &[4.0]), 2.0);
    }

    #[test]
    fn punning_keeps_the_bits_and_the_words_of_a_double_split_and_join() {
        assert_eq!(call("__float_as_int", &[1.0]), f64::from(0x3f80_0000));
        assert_eq!(
            call("__float_as_int", &[-1.0]),
            f64::from(0xbf80_0000u32 as i32)
        );
        assert_eq!(call("__float_as_uint", &[-0.0]), f64::from(0x8000_0000u32));
        assert_eq!(call("__int_as_float", &[f64::from(0x4040_0000)]), 3.0);
        let (f, _, _) = library_function("__double2hiint").unwrap_or_else(|| panic!());
        assert_eq!(f.value(Scalar::F64, [1f64.to_bits(), 0, 0]), 0x3ff0_0000);
        let (f, _, _) = library_function("__hiloint2double").unwrap_or_else(|| panic!());
        let two = f.value(Scalar::I32, [0x4000_0000, u64::MAX, 0]);
        assert_eq!(two, 0x4000_0000_ffff_ffff);
        assert_eq!(
            library_function("__longlong_as_double"),
            Some((LibraryFn::Bits(Scalar::F64), Some(Scalar::I64), 1))
        );
    }

    #[test]
    fn rounding_and_decomposing_functions_give_cs_values() {
        assert_eq!(call("rintf", &[2.5]), 2.0);
        assert_eq!(call("nearbyintf", &[-3.5]), -4.0);
        assert_eq!(call("ilogbf", &[8.0]), 3.0);
        assert_eq!(call("ilogbf", &[0.0]), f64::from(i32::MIN));
        assert_eq!(call("logbf", &[0.25]), -2.0);
        assert_eq!(call("logbf", &[0.0]), f64::NEG_INFINITY);
        assert_eq!(call("ldexpf", &[1.5, 4.0]), 24.0);
        assert_eq!(call("scalbnf", &[1.0, -149.0]), float(f32::from_bits(1)));
        assert_eq!(call("ldexpf", &[1.0, 128.0]), f64::INFINITY);
        assert_eq!(call("fdimf", &[5.0, 3.0]), 2.0);
        assert_eq!(call("fdimf", &[3.0, 5.0]), 0.0);
        assert_eq!(call("nextafterf", &[1.0, 2.0]), float(1f32.next_up()));
        assert_eq!(call("nextafterf", &[0.0, -1.0]), -float(f32::from_bits(1)));
        assert_eq!(call("signbit", &[-0.0]), 1.0);
        assert_eq!(call("signbit", &[0.0]), 0.0);
        let f32_of = |f: LibraryFn, v: f32| f.value(Scalar::F32, [u64::from(v.to_bits()), 0, 0]);
        let of_float = |bits: u64| f32::from_bits(bits as u32);
        assert_eq!(of_float(f32_of(LibraryFn::FrexpMantissa, 8.0)), 0.5);
        assert_eq!(f32_of(LibraryFn::FrexpExponent, 8.0), 4);
        assert_eq!(of_float(f32_of(LibraryFn::FrexpMantissa, -3.0)), -0.75);
        assert_eq!(f32_of(LibraryFn::FrexpExponent, -3.0), 2);
        assert_eq!(f32_of(LibraryFn::FrexpExponent, 0.0), 0);
        assert_eq!(of_float(f32_of(LibraryFn::ModfFraction, -2.5)), -0.5);
        assert_eq!(f32_of(LibraryFn::ModfFraction, -2.0), 0x8000_0000);
        assert_eq!(f32_of(LibraryFn::ModfFraction, f32::INFINITY), 0);
    }

    #[test]
    fn remainder_rounds_the_quotient_to_even_and_remquo_keeps_its_low_bits() {
        // 5 / 2 = 2.5 rounds to 2; 7 / 2 = 3.5 to 4; 5.5 / 2 = 2.75 to 3.
        assert_eq!(call("remainderf", &[5.0, 2.0]), 1.0);
        assert_eq!(call("remainderf", &[7.0, 2.0]), -1.0);
        assert_eq!(call("remainderf", &[-7.0, 2.0]), 1.0);
        assert_eq!(call("remainderf", &[5.5, 2.0]), -0.5);
        let quotient = |a: f64, b: f64| super::remainder(a, b).1;
        assert_eq!(
            [quotient(7.0, 2.0), quotient(-7.0, 2.0), quotient(5.5, 2.0)],
            [4, -4, 3]
        );
        // 23 / 2 = 11.5 rounds to 12, whose low three bits are 4.
        assert_eq!(quotient(23.0, 2.0), 4);
    }

    #[test]
    fn sin_pi_and_cos_pi_are_exact_at_integers_and_halves() {
        assert_eq!(call("sinpif", &[1.0]), 0.0);
        assert_eq!(call("sinpif", &[0.5]), 1.0);
        assert_eq!(call("sinpif", &[-2.5]), -1.0);
        assert_eq!(call("cospif", &[0.5]), 0.0);
        assert_eq!(call("cospif", &[1.0]), -1.0);
        assert_eq!(call("sinpif", &[1.0 / 6.0]), 0.5);
    }

    #[test]
    fn norms_and_reciprocal_roots_of_pythagorean_quadruples_are_exact() {
        assert_eq!(call("norm3df", &[2.0, 3.0, 6.0]), 7.0);
        assert_eq!(call("rnorm3df", &[2.0, 3.0, 6.0]), float(1.0 / 7.0));
        assert_eq!(call("rhypotf", &[3.0, 4.0]), float(0.2));
        assert_eq!(call("rcbrtf", &[8.0]), 0.5);
        assert_eq!(call("exp10f", &[2.0]), 100.0);
    }

    #[test]
    fn the_error_functions_match_their_tabulated_values() {
        // Abramowitz and Stegun, table 7.1, and erfc's asymptotic tail.
        let close = |a: f64, b: f64| (a - b).abs() <= b.abs() * 4e-15;
        assert!(close(erf(0.5), 0.520_499_877_813_046_5), "{}", erf(0.5));
        assert!(close(erf(1.0), 0.842_700_792_949_714_9), "{}", erf(1.0));
        assert!(close(erfc(2.5), 4.069_520_174_449_59e-4), "{}", erfc(2.5));
        assert!(close(erfc(3.0), 2.209_049_699_858_544e-5), "{}", erfc(3.0));
        assert!(close(erfc(5.0), 1.537_459_794_428_035e-12), "{}", erfc(5.0));
        assert!(close(erfc(-1.0), 1.842_700_792_949_715), "{}", erfc(-1.0));
        assert!(
            close(erf_inv(0.5), 0.476_936_276_204_469_9),
            "{}",
            erf_inv(0.5)
        );
        assert!(
            close(erf_inv(-0.1), -0.088_855_990_494_257_69),
            "{}",
            erf_inv(-0.1)
        );
        let round_trip = erfc(erfc_inv(1e-10));
        assert!((round_trip - 1e-10).abs() < 1e-23, "{round_trip}");
        assert_eq!(erfc_inv(0.0), f64::INFINITY);
        assert_eq!(call("erff", &[0.0]), 0.0);
        assert_eq!(call("normcdff", &[0.0]), 0.5);
        assert_eq!(call("normcdfinvf", &[0.5]), 0.0);
        let quantile = -std::f64::consts::SQRT_2 * erfc_inv(2.0 * 0.975);
        assert!(close(quantile, 1.959_963_984_540_054), "{quantile}");
    }

    #[test]
    fn gamma_functions_give_factorials_and_the_root_of_pi() {
        assert_eq!(call("tgammaf", &[5.0]), 24.0);
        assert_eq!(call("tgammaf", &[0.5]), float(std::f32::consts::PI.sqrt()));
        assert_eq!(
            call("tgammaf", &[-0.5]),
            float(-2.0 * std::f32::consts::PI.sqrt())
        );
        assert!(call("tgammaf", &[-2.0]).is_nan());
        assert_eq!(call("lgammaf", &[0.5]), float(0.572_364_9));
        assert_eq!(call("lgammaf", &[1.0]), 0.0);
        assert_eq!(call("lgammaf", &[-3.0]), f64::INFINITY);
        // ln(9!) = ln 362880.
        assert_eq!(call("lgammaf", &[10.0]), float(12.801_827));
    }

    #[test]
    fn only_the_four_roundings_and_known_types_make_a_casting_intrinsic() {
        assert_eq!(
            library_function("__float2uint_ru"),
            Some((
                LibraryFn::ToInteger(Scalar::U32, Rounding::Up),
                Some(Scalar::F32),
                1
            ))
        );
        assert_eq!(library_function("__float2int_rx"), None);
        assert_eq!(library_function("__int2int_rn"), None);
        assert_eq!(library_function("__float2half_rn"), None);
    }
}
