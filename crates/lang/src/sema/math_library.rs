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

/// A function with out-parameters: its operand count, what it returns (`None`: nothing) and
/// what it writes through each pointer after them, for a node of type `ty`.
fn out_parameters(
    name: &str,
) -> Option<(Option<Scalar>, usize, Option<MathFn>, &'static [MathFn])> {
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

    /// `sincosf(x, &s, &c)` and its kin: the operands held in registers, each pointer's place
    /// assigned its value, and the function's own result last.
    fn out_parameter_call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
        (ty, inputs, returned, written): (Option<Scalar>, usize, Option<MathFn>, &[MathFn]),
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
                        "'{name}' writes a '{}' through this pointer, not a '{place_ty}'",
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
