//! Calls lowered in place (`inline`) inside expressions, in the order C++ evaluates them.
//!
//! Such a call's body is emitted where the call is lowered, before the code of the statement
//! around it, so it runs before whatever of that statement has been lowered but not emitted.
//! That is one of the orders C++ allows for the operands of most operators, which are unsequenced
//! or, with a call, indeterminately sequenced ([intro.execution]); a few operators order their
//! operands or evaluate one only for some threads, and there the order is kept:
//!
//! - `a && b`, `a || b`: `b` is evaluated only where `a` does not decide ([expr.log.and],
//!   [expr.log.or]), so where `b` holds such a call the operator is lowered as the branch it is,
//!   `t = a; if (t) t = b;` (`if (!t)` for `||`);
//! - `c ? a : b`: only the chosen side is evaluated ([expr.cond]), so where a side holds such a
//!   call, each side is lowered in its branch of `if (c)` into a register, and the value is the
//!   one of the side each thread chose;
//! - `a, b`: `a` is evaluated first ([expr.comma]), so it is emitted as a statement of its own
//!   before `b`'s call;
//! - `a = b` and `a op= b`: `b` is evaluated before `a` ([expr.ass], C++17), so where `a` holds
//!   such a call, `b`'s value is taken first;
//! - `a << b`, `a >> b`: `a` is evaluated first ([expr.shift], C++17), so where `b` holds such
//!   a call, `a`'s value is taken, into a register, before it.
//!
//! Everywhere else the call runs as if it had been taken out of the statement into a variable
//! of its own, before it.
//!
//! The branches are those a kernel written with the call as a statement of its own would have,
//! so a barrier in the call is reached by the threads that evaluate it, under the kernel's
//! divergence rule.

use super::{elem_of, issue, width_of, Sema};
use crate::ast::{Expr, ExprKind, Scalar, Type};
use crate::ir::{BinOp, Elem, Ex, ExKind, Op, Reg};
use crate::span::{Diagnostic, Span};

/// The value of an `a ? b : c` whose sides were lowered in their branches: the condition and
/// each side's value with its type, each in a register (or a constant).
pub(super) struct BranchedSides {
    pub(super) cond: Ex,
    pub(super) a: (Ex, Type),
    pub(super) b: (Ex, Type),
}

fn reg(reg: Reg, width: u8, span: Span) -> Ex {
    Ex::new(ExKind::Reg(reg), width, span)
}

impl Sema<'_> {
    /// Whether `e` calls, anywhere in it, a function lowered in place.
    pub(super) fn calls_in_place(&self, e: &Expr) -> bool {
        let mut found = false;
        e.walk(&mut |inner| {
            if let ExprKind::Call { name, .. } = &inner.kind {
                found =
                    found || self.function_index.contains_key(name) && self.lowered_in_place(name);
            }
        });
        found
    }

    /// `value`, of type `ty`, taken now into a register of its own (a constant or an object's
    /// address stays as it is: it reads nothing that can change).
    pub(super) fn held(&mut self, value: Ex, ty: &Type) -> Ex {
        let Some(elem) = elem_of(ty) else {
            return value;
        };
        if matches!(value.kind, ExKind::Const(_) | ExKind::AddrOf(_)) {
            return value;
        }
        let width = width_of(ty);
        let target = self.alloc(width);
        let span = value.span;
        self.emit(
            Op::Eval(Ex::assign_reg(target, elem, value, width, span)),
            span,
        );
        reg(target, width, span)
    }

    /// `a && b` (`and`) or `a || b` whose `b` holds a call lowered in place, as its branch.
    pub(super) fn logical_in_place(
        &mut self,
        and: bool,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let int = Elem::scalar(Scalar::I32);
        let lhs = self.condition(a)?;
        let t = self.alloc(1);
        self.emit(Op::Eval(Ex::assign_reg(t, int, lhs, 1, a.span)), a.span);
        let decides = if and {
            reg(t, 1, a.span)
        } else {
            let zero = Ex::new(ExKind::Const(0), 1, a.span);
            let kind = ExKind::Binary {
                op: BinOp::Eq,
                ty: Scalar::I32,
                lhs: Box::new(reg(t, 1, a.span)),
                rhs: Box::new(zero),
            };
            Ex::new(kind, 1, a.span)
        };
        let if_at = self.open_if(decides, b.span);
        let rhs = self.condition(b)?;
        self.emit(Op::Eval(Ex::assign_reg(t, int, rhs, 1, b.span)), b.span);
        self.close_if(if_at, None, span);
        Ok((reg(t, 1, span), Type::Scalar(Scalar::I32)))
    }

    /// The sides of `c ? a : b` where a side holds a call lowered in place, each lowered in its
    /// branch.
    pub(super) fn conditional_in_place(
        &mut self,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<BranchedSides, Diagnostic> {
        let cond = self.condition(c)?;
        let cond = self.held(cond, &Type::Scalar(Scalar::Bool));
        let if_at = self.open_if(cond.clone(), c.span);
        let (ea, ta) = self.rvalue(a)?;
        let ea = self.held(ea, &ta);
        let else_at = self.emit(Op::Else { end_at: 0 }, b.span);
        let (eb, tb) = self.rvalue(b)?;
        let eb = self.held(eb, &tb);
        self.close_if(if_at, Some(else_at), span);
        Ok(BranchedSides {
            cond,
            a: (ea, ta),
            b: (eb, tb),
        })
    }

    /// Emits `if (cond)`, to be closed by `close_if`.
    pub(super) fn open_if(&mut self, cond: Ex, span: Span) -> usize {
        self.emit(
            Op::If {
                cond,
                else_at: 0,
                predicated: None,
            },
            span,
        )
    }

    /// Closes the `if` at `if_at` (with its `else` at `else_at`, if any): its jumps, and whether
    /// nvcc if-converts a body without `else` (`issue::predicated_body`).
    pub(super) fn close_if(&mut self, if_at: usize, else_at: Option<usize>, span: Span) {
        let end = self.emit(Op::EndIf, span);
        let body = match else_at {
            None => issue::predicated_body(&self.code[if_at + 1..end], &self.objects),
            Some(_) => None,
        };
        if let Op::If {
            else_at: target,
            predicated,
            ..
        } = &mut self.code[if_at]
        {
            *target = else_at.unwrap_or(end);
            *predicated = body;
        }
        if let Some(Op::Else { end_at }) = else_at.map(|at| &mut self.code[at]) {
            *end_at = end;
        }
    }
}
