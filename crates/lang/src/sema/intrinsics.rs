//! The integer and floating-point intrinsics of the CUDA Math API ("Integer Intrinsics", "Single
//! Precision Intrinsics") and the cache-hinted loads and stores of the CUDA C++ Programming Guide
//! ("Read-Only Data Cache Load Function", "Load Functions Using Cache Hints", "Store Functions
//! Using Cache Hints"). A hinted load is the load it names: the hint changes where the line is
//! cached, not the requests or sectors (tests/reference/warp_probes: `w_copy`, `w_ldg_copy`,
//! `w_ldcs_copy` and `w_ldcg_stcs_copy` make the same counts in the same time).

use super::{err, Sema};
use crate::ast::{BinaryOp, Expr, ExprKind, Scalar, Type, UnaryOp};
use crate::ir::{BinOp, Elem, Ex, ExKind, MathFn, UnOp};
use crate::span::{Diagnostic, Span};

/// The hinted loads, read as `*p`.
const LOADS: [&str; 6] = ["__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"];
/// The hinted stores, written as `*p = v`.
const STORES: [&str; 4] = ["__stwb", "__stcg", "__stcs", "__stwt"];

fn node(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

fn cast(to: Scalar, e: &Expr) -> Expr {
    node(
        ExprKind::Cast(Type::Scalar(to), Box::new(e.clone())),
        e.span,
    )
}

impl Sema<'_> {
    /// One of the intrinsics above, or `None` for any other name.
    pub(super) fn intrinsic(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        // The bit counts, on the operand's own width.
        let bits = match name {
            "__popc" => Some((UnOp::Popc, Scalar::U32, Scalar::I32)),
            "__popcll" => Some((UnOp::Popc, Scalar::U64, Scalar::I32)),
            "__clz" => Some((UnOp::Clz, Scalar::U32, Scalar::I32)),
            "__clzll" => Some((UnOp::Clz, Scalar::U64, Scalar::I32)),
            "__ffs" => Some((UnOp::Ffs, Scalar::U32, Scalar::I32)),
            "__ffsll" => Some((UnOp::Ffs, Scalar::U64, Scalar::I32)),
            "__brev" => Some((UnOp::Brev, Scalar::U32, Scalar::U32)),
            "__brevll" => Some((UnOp::Brev, Scalar::U64, Scalar::U64)),
            _ => None,
        };
        if let Some((op, operand, result)) = bits {
            return Some(self.expect_args(name, name_span, args, 1).and_then(|()| {
                let (ex, s) = self.scalar_arg(&args[0], name)?;
                let value = self.convert_scalar(ex, s, operand);
                let kind = ExKind::Unary {
                    op,
                    ty: operand,
                    value: Box::new(value),
                };
                let ex = Ex::new(kind, 1, span);
                Ok((
                    self.convert_scalar(ex, operand, result),
                    Type::Scalar(result),
                ))
            }));
        }
        if matches!(name, "isnan" | "isinf" | "isfinite" | "__saturatef") {
            return Some(self.float_test(name, name_span, args, span));
        }
        let arity = if LOADS.contains(&name) || matches!(name, "__frcp_rn" | "__fsqrt_rn") {
            1
        } else if STORES.contains(&name)
            || matches!(
                name,
                "__mul24"
                    | "__umul24"
                    | "__mulhi"
                    | "__umulhi"
                    | "__fadd_rn"
                    | "__fsub_rn"
                    | "__fmul_rn"
                    | "__fdiv_rn"
                    | "__fadd_rz"
                    | "__fmul_rz"
            )
        {
            2
        } else {
            return None;
        };
        Some(
            self.expect_args(name, name_span, args, arity)
                .and_then(|()| {
                    let a = &args[0];
                    let binary = |op: BinaryOp, x: Expr, y: Expr| {
                        node(ExprKind::Binary(op, Box::new(x), Box::new(y)), span)
                    };
                    let deref = |e: &Expr| {
                        node(ExprKind::Unary(UnaryOp::Deref, Box::new(e.clone())), e.span)
                    };
                    let rewritten = match name {
                        n if LOADS.contains(&n) => deref(a),
                        n if STORES.contains(&n) => node(
                            ExprKind::Assign(None, Box::new(deref(a)), Box::new(args[1].clone())),
                            span,
                        ),
                        "__frcp_rn" => binary(
                            BinaryOp::Div,
                            node(
                                ExprKind::Float {
                                    value: 1.0,
                                    single: true,
                                },
                                span,
                            ),
                            cast(Scalar::F32, a),
                        ),
                        "__fsqrt_rn" => node(
                            ExprKind::Call {
                                name: "sqrtf".to_string(),
                                name_span,
                                args: vec![a.clone()],
                            },
                            span,
                        ),
                        "__mul24" | "__umul24" => {
                            let s = if name == "__mul24" {
                                Scalar::I32
                            } else {
                                Scalar::U32
                            };
                            binary(BinaryOp::Mul, cast(s, a), cast(s, &args[1]))
                        }
                        "__mulhi" | "__umulhi" => {
                            let (wide, narrow) = if name == "__mulhi" {
                                (Scalar::I64, Scalar::I32)
                            } else {
                                (Scalar::U64, Scalar::U32)
                            };
                            let product =
                                binary(BinaryOp::Mul, cast(wide, a), cast(wide, &args[1]));
                            let thirty_two = node(
                                ExprKind::Int {
                                    value: 32,
                                    unsigned: false,
                                    long: false,
                                    hex: false,
                                },
                                span,
                            );
                            cast(narrow, &binary(BinaryOp::Shr, product, thirty_two))
                        }
                        _ => {
                            let op = match &name[3..6] {
                                "add" => BinaryOp::Add,
                                "sub" => BinaryOp::Sub,
                                "mul" => BinaryOp::Mul,
                                _ => BinaryOp::Div,
                            };
                            binary(op, cast(Scalar::F32, a), cast(Scalar::F32, &args[1]))
                        }
                    };
                    self.rvalue(&rewritten)
                }),
        )
    }

    /// `isnan`, `isinf`, `isfinite` and `__saturatef`, their operand evaluated once.
    fn float_test(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        self.expect_args(name, name_span, args, 1)?;
        let (ex, s) = self.scalar_arg(&args[0], name)?;
        let ty = if s == Scalar::F64 {
            Scalar::F64
        } else {
            Scalar::F32
        };
        let ex = self.convert_scalar(ex, s, ty);
        let reg = self.alloc(1);
        let keep = Ex::assign_reg(reg, Elem::scalar(ty), ex, 1, span);
        let value = || Ex::new(ExKind::Reg(reg), 1, span);
        let constant = |v: f64| Ex::new(ExKind::Const(ty.float_bits(v)), 1, span);
        let binary = |op, lhs: Ex, rhs: Ex| {
            let kind = ExKind::Binary {
                op,
                ty,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            };
            Ex::new(kind, 1, span)
        };
        let magnitude = || {
            let kind = ExKind::Math {
                f: MathFn::Fabs,
                ty,
                args: vec![value()],
            };
            Ex::new(kind, 1, span)
        };
        let (test, result) = match name {
            "isnan" => (binary(BinOp::Ne, value(), value()), Scalar::I32),
            "isinf" => (
                binary(BinOp::Eq, magnitude(), constant(f64::INFINITY)),
                Scalar::I32,
            ),
            "isfinite" => (
                binary(BinOp::Lt, magnitude(), constant(f64::INFINITY)),
                Scalar::I32,
            ),
            "__saturatef" if ty == Scalar::F32 => {
                let low = binary(BinOp::Max, value(), constant(0.0));
                (binary(BinOp::Min, low, constant(1.0)), Scalar::F32)
            }
            _ => return err(args[0].span, format!("'{name}' takes a float")),
        };
        let kind = ExKind::Comma(Box::new(keep), Box::new(test));
        Ok((Ex::new(kind, 1, span), Type::Scalar(result)))
    }
}
