//! The integer and floating-point intrinsics of the CUDA Math API ("Integer Intrinsics", "Single
//! Precision Intrinsics") and the cache-hinted loads and stores of the CUDA C++ Programming Guide
//! ("Read-Only Data Cache Load Function", "Load Functions Using Cache Hints", "Store Functions
//! Using Cache Hints"). A hinted load is the load it names: the hint changes where the line is
//! cached, not the requests or sectors (tests/reference/warp_probes: `w_copy`, `w_ldg_copy`,
//! `w_ldcs_copy` and `w_ldcg_stcs_copy` make the same counts in the same time).
//!
//! The byte permutation, the sums of absolute differences, the funnel shifts, the high words of
//! 64-bit products and the integer averages are one `MathFn` each (`INTEGER`): nvcc makes each of
//! them one instruction or a short fixed sequence, which `issue` costs as a whole.

use super::{err, Sema};
use crate::ast::{BinaryOp, Expr, ExprKind, Scalar, Type, UnaryOp};
use crate::ir::{BinOp, Elem, Ex, ExKind, MathFn, UnOp};
use crate::span::{Diagnostic, Span};

/// The integer intrinsics that are one `MathFn` each: the name, the function, its operands' types
/// (the first one the function's type) and its result's (CUDA Math API, "Integer Intrinsics").
const INTEGER: [(&str, MathFn, &[Scalar], Scalar); 13] = {
    use Scalar::{I32, I64, U32, U64};
    [
        ("__byte_perm", MathFn::BytePerm, &[U32, U32, U32], U32),
        ("__sad", MathFn::Sad, &[I32, I32, U32], U32),
        ("__usad", MathFn::Sad, &[U32, U32, U32], U32),
        (
            "__funnelshift_l",
            MathFn::FunnelShiftL,
            &[U32, U32, U32],
            U32,
        ),
        (
            "__funnelshift_lc",
            MathFn::FunnelShiftLc,
            &[U32, U32, U32],
            U32,
        ),
        (
            "__funnelshift_r",
            MathFn::FunnelShiftR,
            &[U32, U32, U32],
            U32,
        ),
        (
            "__funnelshift_rc",
            MathFn::FunnelShiftRc,
            &[U32, U32, U32],
            U32,
        ),
        ("__mul64hi", MathFn::MulHi64, &[I64, I64], I64),
        ("__umul64hi", MathFn::MulHi64, &[U64, U64], U64),
        ("__hadd", MathFn::HalvingAdd, &[I32, I32], I32),
        ("__rhadd", MathFn::RoundedHalvingAdd, &[I32, I32], I32),
        ("__uhadd", MathFn::HalvingAdd, &[U32, U32], U32),
        ("__urhadd", MathFn::RoundedHalvingAdd, &[U32, U32], U32),
    ]
};

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
        if let Some(entry) = INTEGER.iter().find(|(n, ..)| *n == name) {
            return Some(
                self.expect_args(name, name_span, args, entry.2.len())
                    .and_then(|()| self.integer_intrinsic(entry, None, args, span)),
            );
        }
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

    /// `__hadd(x, y)` on integers, the average `(x + y) >> 1`, its first operand already checked
    /// (`half` has the `__hadd` of two halves and sends an integer `x` here).
    pub(super) fn integer_average(
        &mut self,
        first: (Ex, Scalar),
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let entry = INTEGER.iter().find(|(n, ..)| *n == "__hadd");
        match entry {
            Some(entry) => self.integer_intrinsic(entry, Some(first), args, span),
            None => err(span, "'__hadd' is not simulated"),
        }
    }

    /// The call of an `INTEGER` intrinsic with `args` (as many as it takes), each converted to
    /// its operand type as C++ converts a function's arguments, the first one given already
    /// checked where `first` is.
    fn integer_intrinsic(
        &mut self,
        &(name, f, operands, result): &(&str, MathFn, &[Scalar], Scalar),
        mut first: Option<(Ex, Scalar)>,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let mut values = Vec::with_capacity(operands.len());
        for (a, &to) in args.iter().zip(operands) {
            let (ex, s) = match first.take() {
                Some(checked) => checked,
                None => self.scalar_arg(a, name)?,
            };
            values.push(self.convert_scalar(ex, s, to));
        }
        let kind = ExKind::Math {
            f,
            ty: operands[0],
            args: values,
        };
        Ok((Ex::new(kind, 1, span), Type::Scalar(result)))
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

#[cfg(test)]
mod tests {
    use crate::ast::Scalar;
    use crate::compile;
    use crate::ir::{AtomicOp, Ex, ExKind, FunctionIr, MathFn, Op};
    use crate::issue::{annotate, ISSUE_SCALE};

    fn kernel(source: &str) -> FunctionIr {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        match program.kernel("k") {
            Ok(_) => program.functions[0].clone(),
            Err(d) => panic!("{d}"),
        }
    }

    fn error(source: &str) -> String {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        match program.kernel("k") {
            Ok(_) => "compiles".to_string(),
            Err(d) => d.message,
        }
    }

    /// Every node of the kernel's statements, depth first.
    fn nodes(function: &FunctionIr) -> Vec<Ex> {
        fn walk(e: &Ex, out: &mut Vec<Ex>) {
            out.push(e.clone());
            for child in e.children() {
                walk(child, out);
            }
        }
        let mut out = Vec::new();
        for op in &function.code {
            if let Op::Eval(e) = op {
                walk(e, &mut out);
            }
        }
        out
    }

    /// The whole instructions the statements on `line` issue.
    fn line_instructions(function: &FunctionIr, line: u32) -> u32 {
        let (issue, _) = annotate(function);
        let on_line = (0..function.code.len()).filter(|&pc| function.spans[pc].line == line);
        on_line.map(|pc| issue[pc]).sum::<u32>() / ISSUE_SCALE
    }

    #[test]
    fn each_integer_intrinsic_is_one_math_node_of_its_operand_type() {
        let function = kernel(
            "__global__ void k(unsigned* out, long long* wide, int a, unsigned b) {
  out[0] = __byte_perm(a, b, 0x3210);
  out[1] = __sad(a, 3, b) + __usad(b, 3u, 1u);
  out[2] = __funnelshift_l(a, b, 4) ^ __funnelshift_lc(a, b, 4);
  out[3] = __funnelshift_r(a, b, 4) ^ __funnelshift_rc(a, b, 4);
  wide[0] = __mul64hi(wide[1], 3) + __umul64hi(wide[2], 3ull);
  out[4] = __hadd(a, 1) + __rhadd(a, 1) + __uhadd(b, 1u) + __urhadd(b, 1u);
}",
        );
        let found: Vec<(MathFn, Scalar, usize)> = nodes(&function)
            .into_iter()
            .filter_map(|e| match e.kind {
                ExKind::Math { f, ty, args } => Some((f, ty, args.len())),
                _ => None,
            })
            .collect();
        use MathFn::*;
        use Scalar::{I32, I64, U32, U64};
        assert_eq!(
            found,
            [
                (BytePerm, U32, 3),
                (Sad, I32, 3),
                (Sad, U32, 3),
                (FunnelShiftL, U32, 3),
                (FunnelShiftLc, U32, 3),
                (FunnelShiftR, U32, 3),
                (FunnelShiftRc, U32, 3),
                (MulHi64, I64, 2),
                (MulHi64, U64, 2),
                (HalvingAdd, I32, 2),
                (RoundedHalvingAdd, I32, 2),
                (HalvingAdd, U32, 2),
                (RoundedHalvingAdd, U32, 2),
            ]
        );
    }

    #[test]
    fn a_byte_permutation_or_funnel_shift_issues_one_instruction_a_sad_two() {
        let function = kernel(
            "__global__ void k(unsigned* out, unsigned a, unsigned b) {
  out[0] = 0;
  out[1] = __byte_perm(a, b, 0x3210);
  out[2] = __funnelshift_r(a, b, 9);
  out[3] = __usad(a, b, 1u);
  out[4] = __uhadd(a, b);
  out[5] = (unsigned)__umul64hi(a, b);
  out[6] = a;
}",
        );
        // The store of a parameter is one instruction; each intrinsic adds its own. (The first
        // statement's op also carries what the kernel issues once, `issue::entry_cost`.)
        let lines: Vec<u32> = (3..=8)
            .map(|line| line_instructions(&function, line))
            .collect();
        assert_eq!(lines, [1 + 1, 1 + 1, 1 + 2, 1 + 3, 1 + 4, 1]);
    }

    #[test]
    fn hadd_of_integers_is_their_average_and_of_halves_their_half_sum() {
        let function = kernel(
            "#include <cuda_fp16.h>
__global__ void k(int* out, half* h) {
  out[0] = __hadd(7, -2);
  h[0] = __hadd(h[1], h[2]);
}",
        );
        let all = nodes(&function);
        let averages = all
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    ExKind::Math {
                        f: MathFn::HalvingAdd,
                        ..
                    }
                )
            })
            .count();
        // The half sum is a float add, rounded to half when stored.
        let float_adds = all
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    ExKind::Binary {
                        ty: Scalar::F32,
                        ..
                    }
                )
            })
            .count();
        assert_eq!((averages, float_adds), (1, 1));
    }

    #[test]
    fn an_integer_intrinsic_with_the_wrong_count_of_arguments_says_how_many_it_takes() {
        let message = error("__global__ void k(unsigned* out) { out[0] = __byte_perm(1u, 2u); }");
        assert!(
            message.contains("'__byte_perm'") && message.contains('3'),
            "{message}"
        );
        let message = error("__global__ void k(long long* out) { out[0] = __mul64hi(1); }");
        assert!(
            message.contains("'__mul64hi'") && message.contains('2'),
            "{message}"
        );
    }

    #[test]
    fn atomic_add_on_16_bit_floats_and_their_pairs_is_one_atomic_of_their_width() {
        let function = kernel(
            "#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void k(half2* p, half* h, __nv_bfloat162* q, __nv_bfloat16* b) {
  half2 old = atomicAdd(&p[0], __floats2half2_rn(1.0f, 2.0f));
  atomicAdd(h, __float2half(1.0f));
  atomicAdd_block(q, __floats2bfloat162_rn(1.0f, 2.0f));
  atomicAdd(&b[threadIdx.x], __float2bfloat16(0.5f));
  p[1] = old;
}",
        );
        let atomics: Vec<(AtomicOp, Scalar, u8)> = nodes(&function)
            .into_iter()
            .filter_map(|e| match e.kind {
                ExKind::Atomic { op, ty, .. } => Some((op, ty, e.width)),
                _ => None,
            })
            .collect();
        assert_eq!(
            atomics,
            [
                (AtomicOp::AddPair, Scalar::F16, 2),
                (AtomicOp::Add, Scalar::F16, 1),
                (AtomicOp::AddPair, Scalar::BF16, 2),
                (AtomicOp::Add, Scalar::BF16, 1),
            ]
        );
    }

    #[test]
    fn atomics_that_do_not_take_16_bit_floats_say_which_types_they_take() {
        let max = error(
            "#include <cuda_fp16.h>
__global__ void k(half2* p) { atomicMax(p, __floats2half2_rn(1.0f, 2.0f)); }",
        );
        assert_eq!(
            max,
            "'atomicMax' works on int, unsigned int, long long or unsigned long long, not 'half2'"
        );
        let exch = error(
            "#include <cuda_fp16.h>
__global__ void k(half* p) { atomicExch(p, __float2half(1.0f)); }",
        );
        assert_eq!(
            exch,
            "'atomicExch' does not work on 'half': it works on int, unsigned int, \
             unsigned long long, float or double"
        );
        let float2 = error("__global__ void k(float2* p) { atomicAdd(p, make_float2(1, 2)); }");
        assert_eq!(
            float2,
            "'atomicAdd' works on int, unsigned int, unsigned long long, float, double, half, \
             __nv_bfloat16, half2 or __nv_bfloat162, not 'float2'"
        );
    }

    #[test]
    fn atomic_add_on_a_half2_adds_a_half2_to_a_location_it_may_change() {
        let value = error(
            "#include <cuda_fp16.h>
__global__ void k(half2* p) { atomicAdd(p, 1.0f); }",
        );
        assert_eq!(
            value,
            "'atomicAdd' on a 'half2' adds a 'half2', not 'float'"
        );
        let constant = error(
            "#include <cuda_fp16.h>
__global__ void k(const half2* p) { atomicAdd((const half2*)p, __float2half2_rn(1.0f)); }",
        );
        assert_eq!(constant, "'atomicAdd' cannot change a const location");
    }
}
