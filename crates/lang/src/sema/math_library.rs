//! Calls of the rest of the CUDA Math API (`math_library`): each is one `Math` node of a
//! `LibraryFn`, its operands converted as C++ converts a function's arguments. The functions
//! with pointer out-parameters (`sincosf(x, &s, &c)`, `frexpf(x, &e)`, `modff(x, &ip)`,
//! `remquof(x, y, &q)`, `sincospif`) evaluate their operands once, into registers, and write
//! each further result through its pointer as an assignment to that place would: `&s` of a local
//! variable names the variable itself, which memplay keeps in a register as nvcc does once the
//! call is inlined.

use super::{err, Sema};
use crate::ast::{Expr, ExprKind, Scalar, Type, UnaryOp};
use crate::ir::{Elem, Ex, ExKind, MathFn};
use crate::math_library::{library_function, LibraryFn};
use crate::span::{Diagnostic, Span};

/// A function with out-parameters: the type of its node (`None`: its operand's), its operand
/// count, what it returns (`None`: nothing) and what it writes through each pointer after them.
type OutParameters = (Option<Scalar>, usize, Option<MathFn>, &'static [MathFn]);

fn out_parameters(name: &str) -> Option<OutParameters> {
    use LibraryFn::*;
    use MathFn::Library as L;
    let (double, ty) = match name.strip_suffix('f') {
        Some(base) if name != "modf" => (base, Some(Scalar::F32)),
        _ => (name, None),
    };
    Some(match double {
        "sincos" => (ty, 1, None, &[MathFn::Sin, L(SincosCosine)]),
        "__sincos" => (ty, 1, None, &[MathFn::FastSin, MathFn::FastCos]),
        "sincospi" => (ty, 1, None, &[L(SinPi), L(CosPi)]),
        "frexp" => (ty, 1, Some(L(FrexpMantissa)), &[L(FrexpExponent)]),
        "modf" => (ty, 1, Some(L(ModfFraction)), &[MathFn::Trunc]),
        "remquo" => (ty, 2, Some(L(Remainder)), &[L(RemquoQuotient)]),
        _ => return None,
    })
}

/// The type of the value `f` computes on a node of type `ty`.
fn result_of(f: MathFn, ty: Scalar) -> Scalar {
    match f {
        MathFn::Library(l) => l.result(ty),
        _ => ty,
    }
}

impl Sema<'_> {
    /// A call of the math library's rest, or `None` for any other name.
    pub(super) fn library_call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        if let Some(shape) = out_parameters(name) {
            return Some(self.out_parameter_call(name, name_span, args, span, shape));
        }
        if let Some(ty) = match name {
            "norm4df" | "rnorm4df" => Some(Some(Scalar::F32)),
            "norm4d" | "rnorm4d" => Some(None),
            _ => None,
        } {
            return Some(self.norm4(name, name_span, args, span, ty));
        }
        // `__frsqrt_rn` is the correctly rounded reciprocal square root, as `rsqrtf` computes.
        let (f, ty, arity) = match name {
            "__frsqrt_rn" => (MathFn::Rsqrt, Some(Scalar::F32), 1),
            _ => {
                let (f, ty, arity) = library_function(name)?;
                (MathFn::Library(f), ty, arity)
            }
        };
        Some(
            self.expect_args(name, name_span, args, arity)
                .and_then(|()| {
                    let (ty, args) = self.library_operands(name, f, ty, args)?;
                    let node = Ex::new(ExKind::Math { f, ty, args }, 1, span);
                    Ok((node, Type::Scalar(result_of(f, ty))))
                }),
        )
    }

    /// The operands of `f`, each converted to its type; the node's type is `ty` or else that of
    /// the first operand, `float` or `double`.
    fn library_operands(
        &mut self,
        name: &str,
        f: MathFn,
        mut ty: Option<Scalar>,
        args: &[Expr],
    ) -> Result<(Scalar, Vec<Ex>), Diagnostic> {
        let mut values = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            let (ex, s) = self.scalar_arg(a, name)?;
            let node = *ty.get_or_insert(if s == Scalar::F32 {
                Scalar::F32
            } else {
                Scalar::F64
            });
            let to = match f {
                MathFn::Library(l) => l.operand(node, k),
                _ => node,
            };
            values.push(self.convert_scalar(ex, s, to));
        }
        Ok((ty.unwrap_or(Scalar::F64), values))
    }

    /// `norm4df(a, b, c, d)` as the hypotenuse of `norm3df(a, b, c)` and `d` (and `rnorm4df`
    /// its reciprocal): within the Math API's bound of two units in the last place.
    fn norm4(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
        ty: Option<Scalar>,
    ) -> Result<(Ex, Type), Diagnostic> {
        self.expect_args(name, name_span, args, 4)?;
        let norm3 = MathFn::Library(LibraryFn::Norm3d);
        let (ty, mut values) = self.library_operands(name, norm3, ty, args)?;
        let last = values.pop();
        let inner = Ex::new(
            ExKind::Math {
                f: norm3,
                ty,
                args: values,
            },
            1,
            span,
        );
        let f = if name.starts_with('r') {
            MathFn::Library(LibraryFn::Rhypot)
        } else {
            MathFn::Hypot
        };
        let args = [Some(inner), last].into_iter().flatten().collect();
        Ok((
            Ex::new(ExKind::Math { f, ty, args }, 1, span),
            Type::Scalar(ty),
        ))
    }

    /// `sincosf(x, &s, &c)` and its kin: the operands held in registers, each pointer's place
    /// assigned its value, and the function's own result last.
    fn out_parameter_call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
        (ty, inputs, returned, written): OutParameters,
    ) -> Result<(Ex, Type), Diagnostic> {
        self.expect_args(name, name_span, args, inputs + written.len())?;
        let (ty, values) = self.library_operands(name, MathFn::Sqrt, ty, &args[..inputs])?;
        let mut steps = Vec::new();
        let mut held = Vec::new();
        for value in values {
            let reg = self.alloc(1);
            steps.push(Ex::assign_reg(reg, Elem::scalar(ty), value, 1, span));
            held.push(reg);
        }
        let node = |f: MathFn| {
            let args = held
                .iter()
                .map(|&r| Ex::new(ExKind::Reg(r), 1, span))
                .collect();
            Ex::new(ExKind::Math { f, ty, args }, 1, span)
        };
        for (&f, pointer) in written.iter().zip(&args[inputs..]) {
            let lv = match &pointer.kind {
                ExprKind::Unary(UnaryOp::AddrOf, place) => self.lower(place)?,
                _ => self.unary(UnaryOp::Deref, pointer, pointer.span)?,
            };
            let what = format!("'{name}'");
            let (place, place_ty) = self.place(lv, pointer.span, &what)?;
            let result = result_of(f, ty);
            if place_ty != Type::Scalar(result) {
                return err(
                    pointer.span,
                    format!(
                        "'{name}' writes through a pointer to '{}', not to '{place_ty}'",
                        result.name()
                    ),
                );
            }
            let kind = ExKind::Assign {
                place,
                value: Box::new(node(f)),
            };
            steps.push(Ex::new(kind, 1, span));
        }
        let result_ty = match returned {
            Some(f) => {
                steps.push(node(f));
                Type::Scalar(result_of(f, ty))
            }
            None => Type::Void,
        };
        let mut steps = steps.into_iter().rev();
        let last = steps.next();
        let joined = steps.fold(last, |rest, step| {
            rest.map(|rest| {
                let width = rest.width;
                Ex::new(ExKind::Comma(Box::new(step), Box::new(rest)), width, span)
            })
        });
        match joined {
            Some(ex) => Ok((ex, result_ty)),
            None => err(name_span, format!("'{name}' has nothing to compute")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::FunctionIr;
    use crate::issue::{annotate, ISSUE_SCALE};

    fn kernel(source: &str) -> Result<FunctionIr, String> {
        let program = compile(source, &[]).map_err(|d| d.message.clone())?;
        match program.kernel("k") {
            Ok(_) => Ok(program.functions[0].clone()),
            Err(d) => Err(d.message),
        }
    }

    /// The whole instructions the statements on each of `lines` issue.
    fn line_instructions(source: &str, lines: std::ops::RangeInclusive<u32>) -> Vec<u32> {
        let function = kernel(source).unwrap_or_else(|m| panic!("{m}"));
        let (issue, _) = annotate(&function);
        let on = |line: u32| {
            let ops = (0..function.code.len()).filter(|&pc| function.spans[pc].line == line);
            ops.map(|pc| issue[pc]).sum::<u32>() / ISSUE_SCALE
        };
        lines.map(on).collect()
    }

    #[test]
    fn a_pun_issues_nothing_a_conversion_one_instruction_and_a_rounded_quotient_ten() {
        let lines = line_instructions(
            "__global__ void k(int* out, float* f, double* d, float x, double y) {
  out[0] = 0;
  out[1] = __float_as_int(x);
  out[2] = __float2int_rd(x);
  d[0] = __dadd_ru(y, y);
  f[0] = __fdiv_rd(x, 3.0f);
  f[1] = x;
}",
            3..=7,
        );
        // Each line stores once; the pun adds nothing, `F2I.FLOOR` and `DADD.RP` one each.
        assert_eq!(lines, [1, 1 + 1, 1 + 1, 1 + 10, 1]);
    }

    #[test]
    fn sincos_issues_the_sine_and_the_cosine_polynomial_beside_it_and_two_stores() {
        let lines = line_instructions(
            "__global__ void k(float* f, float x) {
  f[2] = x;
  sincosf(x, &f[0], &f[1]);
}",
            3..=3,
        );
        assert_eq!(lines, [2 + 25 + 6]);
    }

    #[test]
    fn an_out_parameter_of_the_wrong_type_or_a_missing_one_is_named() {
        let wrong = kernel(
            "__global__ void k(float* out, float x) { float e; out[0] = frexpf(x, &e) + e; }",
        );
        assert_eq!(
            wrong.err().as_deref(),
            Some("'frexpf' writes through a pointer to 'int', not to 'float'")
        );
        let missing = kernel("__global__ void k(float* out, float x) { float s; sincosf(x, &s); }");
        assert_eq!(
            missing.err().as_deref(),
            Some("'sincosf' takes 3 arguments, not 2")
        );
        let none = kernel("__global__ void k(int* out) { out[0] = __float2int_rn(); }");
        assert_eq!(
            none.err().as_deref(),
            Some("'__float2int_rn' takes 1 argument, not 0")
        );
    }
}
