//! C's conversions (C11 6.3): conditions, arithmetic conversions between scalars, casts.

use super::*;

impl Sema<'_> {
    /// A condition: any scalar or pointer, compared with zero.
    pub(super) fn condition(&mut self, e: &Expr) -> Result<Ex, Diagnostic> {
        let (ex, ty) = self.rvalue(e)?;
        self.bool_of(ex, &ty, e.span)
    }

    #[inline(never)]
    pub(super) fn bool_of(&mut self, ex: Ex, ty: &Type, span: Span) -> Result<Ex, Diagnostic> {
        let from = match ty {
            Type::Scalar(s) => *s,
            Type::Pointer { .. } => Scalar::U64,
            other => {
                return err(
                    span,
                    format!("a condition must be a number or a pointer, not '{other}'"),
                )
            }
        };
        // Comparisons and && / || already give 0 or 1.
        let already = matches!(&ex.kind, ExKind::Logical { .. })
            || matches!(&ex.kind, ExKind::Binary { op, .. } if op.is_comparison())
            || from == Scalar::Bool;
        if already {
            return Ok(ex);
        }
        Ok(Ex::new(
            ExKind::Convert {
                from,
                to: Scalar::Bool,
                value: Box::new(ex),
            },
            1,
            span,
        ))
    }

    /// An implicit conversion (assignment, argument passing, initialisation, return).
    #[inline(never)]
    pub(super) fn convert(
        &mut self,
        ex: Ex,
        from: &Type,
        to: &Type,
        span: Span,
    ) -> Result<Ex, Diagnostic> {
        if from == to {
            return Ok(ex);
        }
        match (from, to) {
            (Type::Scalar(a), Type::Scalar(b)) => Ok(self.convert_scalar(ex, *a, *b)),
            (
                Type::Pointer {
                    pointee: pa,
                    pointee_const: ca,
                },
                Type::Pointer {
                    pointee: pb,
                    pointee_const: cb,
                },
            ) => {
                if *ca && !*cb {
                    return err(span, format!("cannot pass a '{from}' where a '{to}' is expected: it would drop the const"));
                }
                if pa == pb || **pa == Type::Void || **pb == Type::Void {
                    return Ok(ex);
                }
                err(
                    span,
                    format!("cannot convert '{from}' to '{to}' without a cast"),
                )
            }
            (Type::Scalar(s), Type::Pointer { .. })
                if s.is_integer() && matches!(ex.kind, ExKind::Const(0)) =>
            {
                Ok(ex)
            }
            // `dim3 b = 16;`: dim3's constructor is not explicit, so a number converts to the
            // dim3 (16, 1, 1) (`vector_types.h`; `uint3` has dim3's layout here).
            (Type::Scalar(s), Type::Vector(Scalar::U32, 3)) => {
                let x = self.convert_scalar(ex, *s, Scalar::U32);
                let one = || Ex::new(ExKind::Const(1), 1, span);
                let parts = vec![x, one(), one()];
                let scalar = Scalar::U32;
                Ok(Ex::new(ExKind::MakeVector { scalar, parts }, 3, span))
            }
            (Type::Void, _) => err(span, "a void value cannot be used"),
            (Type::Struct(record), _) => match self.struct_conversion(ex, record, to, span) {
                Some(converted) => {
                    let (ex, ty) = converted?;
                    if &ty == to {
                        Ok(ex)
                    } else {
                        self.convert(ex, &ty, to, span)
                    }
                }
                None => err(span, format!("cannot convert '{from}' to '{to}'")),
            },
            _ => err(span, format!("cannot convert '{from}' to '{to}'")),
        }
    }

    #[inline(never)]
    pub(super) fn convert_scalar(&mut self, ex: Ex, from: Scalar, to: Scalar) -> Ex {
        if from == to {
            return ex;
        }
        // Constants convert at compile time.
        if let ExKind::Const(bits) = ex.kind {
            let bits = match from {
                s if s.is_float() => float_bits(s.float_value(bits), to),
                s if s.is_signed() => int_bits(bits as i64, to),
                _ if to.is_float() => float_bits(bits as f64, to),
                _ => int_bits(bits as i64, to),
            };
            return Ex::new(ExKind::Const(bits), 1, ex.span);
        }
        let span = ex.span;
        Ex::new(
            ExKind::Convert {
                from,
                to,
                value: Box::new(ex),
            },
            1,
            span,
        )
    }

    /// An explicit cast.
    #[inline(never)]
    pub(super) fn cast(
        &mut self,
        ex: Ex,
        from: &Type,
        to: &Type,
        span: Span,
    ) -> Result<Ex, Diagnostic> {
        match (from, to) {
            (_, Type::Void) => Ok(ex),
            (Type::Scalar(a), Type::Scalar(b)) => Ok(self.convert_scalar(ex, *a, *b)),
            (Type::Pointer { .. }, Type::Pointer { .. }) => Ok(ex),
            (Type::Pointer { .. }, Type::Scalar(s)) if s.is_integer() => {
                Ok(self.convert_scalar(ex, Scalar::U64, *s))
            }
            (Type::Scalar(s), Type::Pointer { .. }) if s.is_integer() => {
                Ok(self.convert_scalar(ex, *s, Scalar::U64))
            }
            (a, b) if a == b => Ok(ex),
            _ => err(span, format!("cannot cast '{from}' to '{to}'")),
        }
    }
}
