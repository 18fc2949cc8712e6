//! The conversions and arithmetic intrinsics of `cuda_fp16.h` and `cuda_bf16.h` (CUDA Math API,
//! "Half Precision Intrinsics" and "Bfloat16 Precision Intrinsics"): `__float2half`,
//! `__half2float`, `__hadd`, `__hfma`, `__hadd2`, ... on `half`, `__nv_bfloat16` and their pairs.
//!
//! Each is lowered to `float` arithmetic and one rounding to the 16-bit type, which is what the
//! hardware's `HADD`/`HMUL`/`HFMA2` compute for one operation (`sema::common` says why the
//! language's own operators do the same). A pair intrinsic works on `.x` and `.y`, its operands
//! evaluated once.

use super::{err, width_of, Sema};
use crate::ast::{Expr, Scalar, Type};
use crate::ir::{AtomicOp, BinOp, Elem, Ex, ExKind, MathFn, UnOp};
use crate::span::{Diagnostic, Span};

/// What an intrinsic computes from its operands, taken as floats.
#[derive(Clone, Copy)]
enum HalfOp {
    /// A binary operation on two values.
    Binary(BinOp),
    Fma,
    Neg,
    Abs,
    /// A conversion of its one operand to the type the name says.
    To(Scalar),
}

/// The intrinsic `name`: what it computes, whether it works on pairs, and its operand count.
fn intrinsic(name: &str) -> Option<(HalfOp, bool, usize)> {
    let binary = |op| Some((HalfOp::Binary(op), false, 2));
    let pair = |op| Some((HalfOp::Binary(op), true, 2));
    match name {
        "__float2half" | "__float2half_rn" | "__int2half_rn" | "__uint2half_rn" => {
            Some((HalfOp::To(Scalar::F16), false, 1))
        }
        "__float2bfloat16" | "__float2bfloat16_rn" | "__int2bfloat16_rn" => {
            Some((HalfOp::To(Scalar::BF16), false, 1))
        }
        "__half2float" | "__bfloat162float" => Some((HalfOp::To(Scalar::F32), false, 1)),
        "__half2int_rz" | "__bfloat162int_rz" => Some((HalfOp::To(Scalar::I32), false, 1)),
        "__hadd" => binary(BinOp::Add),
        "__hsub" => binary(BinOp::Sub),
        "__hmul" => binary(BinOp::Mul),
        "__hdiv" => binary(BinOp::Div),
        "__hmax" => binary(BinOp::Max),
        "__hmin" => binary(BinOp::Min),
        "__heq" => binary(BinOp::Eq),
        "__hne" => binary(BinOp::Ne),
        "__hlt" => binary(BinOp::Lt),
        "__hle" => binary(BinOp::Le),
        "__hgt" => binary(BinOp::Gt),
        "__hge" => binary(BinOp::Ge),
        "__hfma" => Some((HalfOp::Fma, false, 3)),
        "__hneg" => Some((HalfOp::Neg, false, 1)),
        "__habs" => Some((HalfOp::Abs, false, 1)),
        "__hadd2" => pair(BinOp::Add),
        "__hsub2" => pair(BinOp::Sub),
        "__hmul2" => pair(BinOp::Mul),
        "__h2div" => pair(BinOp::Div),
        "__hmax2" => pair(BinOp::Max),
        "__hmin2" => pair(BinOp::Min),
        "__hfma2" => Some((HalfOp::Fma, true, 3)),
        "__hneg2" => Some((HalfOp::Neg, true, 1)),
        "__habs2" => Some((HalfOp::Abs, true, 1)),
        _ => None,
    }
}

impl Sema<'_> {
    /// A half-precision intrinsic or pair constructor, or `None` for any other name.
    pub(super) fn half_builtin(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        if let Some(result) = self.half_pair_builtin(name, name_span, args, span) {
            return Some(result);
        }
        let (op, pair, arity) = intrinsic(name)?;
        Some(self.half_intrinsic(name, name_span, args, span, op, pair, arity))
    }

    #[allow(clippy::too_many_arguments)]
    fn half_intrinsic(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
        op: HalfOp,
        pair: bool,
        arity: usize,
    ) -> Result<(Ex, Type), Diagnostic> {
        self.expect_args(name, name_span, args, arity)?;
        // The operands, each kept in registers of its own so a pair's halves read it once.
        let mut setup = Vec::new();
        let mut operands = Vec::new();
        let mut element = None;
        for (k, a) in args.iter().enumerate() {
            let (ex, ty) = self.rvalue(a)?;
            // C++'s overloads send `__hadd` of an integer to the integer average.
            if let (0, "__hadd", Type::Scalar(s)) = (k, name, &ty) {
                if s.is_integer() {
                    return self.integer_average((ex, *s), args, span);
                }
            }
            let scalar = match (&ty, pair) {
                (Type::Scalar(s), false) => *s,
                (Type::Vector(s, 2), true) if s.is_half() => *s,
                _ => {
                    let wanted = if pair {
                        "a half2 or __nv_bfloat162"
                    } else {
                        "a number"
                    };
                    return err(a.span, format!("'{name}' needs {wanted} here, not '{ty}'"));
                }
            };
            if scalar.is_half() {
                element.get_or_insert(scalar);
            }
            let width = width_of(&ty);
            let reg = self.alloc(width);
            let elem = Elem { scalar, n: width };
            setup.push(Ex::assign_reg(reg, elem, ex, width, a.span));
            operands.push((reg, scalar));
        }
        // The result's 16-bit type is its operands' (`__hadd` of two bfloat16 is a bfloat16).
        let element = element.unwrap_or(Scalar::F16);
        let lanes: u8 = if pair { 2 } else { 1 };
        let mut parts = Vec::new();
        let mut result = Scalar::F32;
        for component in 0..lanes {
            let value = |sema: &mut Self, k: usize| {
                let (reg, scalar) = operands[k];
                let mut ex = Ex::new(ExKind::Reg(reg), if pair { 2 } else { 1 }, span);
                if pair {
                    ex = Ex::new(ExKind::Component(Box::new(ex), component), 1, span);
                }
                sema.convert_scalar(ex, scalar, Scalar::F32)
            };
            let (ex, ty) = match op {
                HalfOp::To(to) => {
                    let (reg, scalar) = operands[0];
                    let ex = Ex::new(ExKind::Reg(reg), 1, span);
                    (self.convert_scalar(ex, scalar, to), to)
                }
                HalfOp::Binary(op) if op.is_comparison() => {
                    let (lhs, rhs) = (value(self, 0), value(self, 1));
                    let kind = ExKind::Binary {
                        op,
                        ty: Scalar::F32,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    };
                    (Ex::new(kind, 1, span), Scalar::Bool)
                }
                HalfOp::Binary(op) => {
                    let (lhs, rhs) = (value(self, 0), value(self, 1));
                    let kind = ExKind::Binary {
                        op,
                        ty: Scalar::F32,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    };
                    (Ex::new(kind, 1, span), element)
                }
                HalfOp::Fma => {
                    let (a, b, c) = (value(self, 0), value(self, 1), value(self, 2));
                    let kind = ExKind::Fma {
                        ty: Scalar::F32,
                        a: Box::new(a),
                        b: Box::new(b),
                        c: Box::new(c),
                    };
                    (Ex::new(kind, 1, span), element)
                }
                HalfOp::Neg => {
                    let kind = ExKind::Unary {
                        op: UnOp::Neg,
                        ty: Scalar::F32,
                        value: Box::new(value(self, 0)),
                    };
                    (Ex::new(kind, 1, span), element)
                }
                HalfOp::Abs => {
                    let kind = ExKind::Math {
                        f: MathFn::Fabs,
                        ty: Scalar::F32,
                        args: vec![value(self, 0)],
                    };
                    (Ex::new(kind, 1, span), element)
                }
            };
            result = ty;
            let ex = if ty == Scalar::Bool {
                ex
            } else {
                let from = if matches!(op, HalfOp::To(_)) {
                    ty
                } else {
                    Scalar::F32
                };
                self.convert_scalar(ex, from, ty)
            };
            parts.push(ex);
        }
        let value = if pair {
            let kind = ExKind::MakeVector {
                scalar: result,
                parts,
            };
            Ex::new(kind, 2, span)
        } else {
            parts.remove(0)
        };
        let ty = if pair {
            Type::Vector(result, 2)
        } else {
            Type::Scalar(result)
        };
        let width = value.width;
        let value = setup.into_iter().rev().fold(value, |rest, first| {
            Ex::new(ExKind::Comma(Box::new(first), Box::new(rest)), width, span)
        });
        Ok((value, ty))
    }

    /// The pair constructors and accessors: `__floats2half2_rn(a, b)`, `__float2half2_rn(a)`,
    /// `__halves2half2(a, b)`, `make_half2(a, b)`, `__low2half(p)`, `__high2half(p)`,
    /// `__high2float(p)`, `__half22float2(p)` and their bfloat16 forms.
    fn half_pair_builtin(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        let (element, kind) = match name {
            "__floats2half2_rn" | "__halves2half2" | "make_half2" => (Scalar::F16, 2),
            "__floats2bfloat162_rn" | "__halves2bfloat162" | "make_bfloat162" => (Scalar::BF16, 2),
            "__float2half2_rn" | "__half2half2" => (Scalar::F16, 1),
            "__float2bfloat162_rn" | "__bfloat162bfloat162" => (Scalar::BF16, 1),
            "__low2half" | "__low2bfloat16" => (Scalar::F16, 10),
            "__high2half" | "__high2bfloat16" => (Scalar::F16, 11),
            "__low2float" => (Scalar::F32, 10),
            "__high2float" => (Scalar::F32, 11),
            "__half22float2" | "__bfloat1622float2" => (Scalar::F32, 20),
            _ => return None,
        };
        let arity = if kind == 2 { 2 } else { 1 };
        Some(
            self.expect_args(name, name_span, args, arity)
                .and_then(|()| {
                    let mut parts = Vec::new();
                    for a in args {
                        let (ex, ty) = self.rvalue(a)?;
                        parts.push((ex, ty, a.span));
                    }
                    match kind {
                        // Two values, or one twice, into a pair.
                        1 | 2 => {
                            let mut values = Vec::new();
                            for (ex, ty, at) in parts {
                                values.push(self.convert(ex, &ty, &Type::Scalar(element), at)?);
                            }
                            if kind == 1 {
                                let (reg, setup) = self.keep(values.remove(0), element, span);
                                let one = || Ex::new(ExKind::Reg(reg), 1, span);
                                let make = ExKind::MakeVector {
                                    scalar: element,
                                    parts: vec![one(), one()],
                                };
                                let make = Ex::new(make, 2, span);
                                return Ok((comma(setup, make, span), Type::Vector(element, 2)));
                            }
                            let make = ExKind::MakeVector {
                                scalar: element,
                                parts: values,
                            };
                            Ok((Ex::new(make, 2, span), Type::Vector(element, 2)))
                        }
                        // One half of a pair, as a half (or a float).
                        10 | 11 | 20 => {
                            let (ex, ty, at) = parts.remove(0);
                            let Type::Vector(scalar, 2) = ty else {
                                return err(
                                    at,
                                    format!("'{name}' needs a pair of halves, not '{ty}'"),
                                );
                            };
                            let component = |ex: Ex, c: u8| {
                                Ex::new(ExKind::Component(Box::new(ex), c), 1, span)
                            };
                            if kind == 20 {
                                let (reg, setup) = self.keep_pair(ex, scalar, span);
                                let pair = || Ex::new(ExKind::Reg(reg), 2, span);
                                let x =
                                    self.convert_scalar(component(pair(), 0), scalar, Scalar::F32);
                                let y =
                                    self.convert_scalar(component(pair(), 1), scalar, Scalar::F32);
                                let make = ExKind::MakeVector {
                                    scalar: Scalar::F32,
                                    parts: vec![x, y],
                                };
                                let make = Ex::new(make, 2, span);
                                return Ok((
                                    comma(setup, make, span),
                                    Type::Vector(Scalar::F32, 2),
                                ));
                            }
                            let value = component(ex, if kind == 10 { 0 } else { 1 });
                            let to = if element == Scalar::F32 {
                                Scalar::F32
                            } else {
                                scalar
                            };
                            Ok((self.convert_scalar(value, scalar, to), Type::Scalar(to)))
                        }
                        _ => err(name_span, format!("'{name}' is not simulated")),
                    }
                }),
        )
    }

    /// `atomicAdd(p, v)` on a `half2` or `__nv_bfloat162` (CUDA C++ Programming Guide, "atomicAdd()"):
    /// one atomic of four bytes adding each half of `v` to its half of `*p`, the old pair its
    /// value. `addr` is `p` checked, `args` the call's two arguments.
    pub(super) fn atomic_add_pair(
        &mut self,
        (element, pointee_const): (Scalar, bool),
        addr: Ex,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let pair = Type::Vector(element, 2);
        if pointee_const {
            return err(args[0].span, "'atomicAdd' cannot change a const location");
        }
        let (value, ty) = self.rvalue(&args[1])?;
        if ty != pair {
            return err(
                args[1].span,
                format!("'atomicAdd' on a '{pair}' adds a '{pair}', not '{ty}'"),
            );
        }
        let kind = ExKind::Atomic {
            op: AtomicOp::AddPair,
            ty: element,
            addr: Box::new(addr),
            value: Box::new(value),
            value2: None,
        };
        Ok((Ex::new(kind, 2, span), pair))
    }

    /// `value` kept in a register of its own: the register and the assignment to run first.
    fn keep(&mut self, value: Ex, scalar: Scalar, span: Span) -> (u32, Ex) {
        let reg = self.alloc(1);
        (
            reg,
            Ex::assign_reg(reg, Elem::scalar(scalar), value, 1, span),
        )
    }

    /// A pair kept in two registers of its own.
    fn keep_pair(&mut self, value: Ex, scalar: Scalar, span: Span) -> (u32, Ex) {
        let reg = self.alloc(2);
        let elem = Elem { scalar, n: 2 };
        (reg, Ex::assign_reg(reg, elem, value, 2, span))
    }
}

fn comma(first: Ex, then: Ex, span: Span) -> Ex {
    let width = then.width;
    Ex::new(ExKind::Comma(Box::new(first), Box::new(then)), width, span)
}
