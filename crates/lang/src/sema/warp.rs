//! The warp-level primitives of the CUDA C++ Programming Guide ("Warp Shuffle Functions", "Warp
//! Vote Functions", "Warp Match Functions", "Warp Reduce Functions"): `__shfl_sync` and its up,
//! down and xor forms with their optional `width`, `__ballot_sync`, `__any_sync`, `__all_sync`,
//! `__activemask`, `__match_any_sync` and `__reduce_{add,min,max,and,or,xor}_sync`. Each becomes
//! one `ExKind::Warp`, which the interpreter evaluates over the warp's lanes at once.

use super::{err, Sema};
use crate::ast::{Expr, Scalar, Type};
use crate::ir::{BinOp, Ex, ExKind, WarpOp};
use crate::span::{Diagnostic, Span};

/// The primitive `name`, and how many operands it takes (at least, at most).
fn primitive(name: &str) -> Option<(WarpOp, usize, usize)> {
    Some(match name {
        "__shfl_sync" => (WarpOp::Shfl, 3, 4),
        "__shfl_up_sync" => (WarpOp::ShflUp, 3, 4),
        "__shfl_down_sync" => (WarpOp::ShflDown, 3, 4),
        "__shfl_xor_sync" => (WarpOp::ShflXor, 3, 4),
        "__ballot_sync" => (WarpOp::Ballot, 2, 2),
        "__any_sync" => (WarpOp::Any, 2, 2),
        "__all_sync" => (WarpOp::All, 2, 2),
        "__activemask" => (WarpOp::ActiveMask, 0, 0),
        "__match_any_sync" => (WarpOp::MatchAny, 2, 2),
        "__reduce_add_sync" => (WarpOp::Reduce(BinOp::Add), 2, 2),
        "__reduce_min_sync" => (WarpOp::Reduce(BinOp::Min), 2, 2),
        "__reduce_max_sync" => (WarpOp::Reduce(BinOp::Max), 2, 2),
        "__reduce_and_sync" => (WarpOp::Reduce(BinOp::BitAnd), 2, 2),
        "__reduce_or_sync" => (WarpOp::Reduce(BinOp::BitOr), 2, 2),
        "__reduce_xor_sync" => (WarpOp::Reduce(BinOp::BitXor), 2, 2),
        _ => return None,
    })
}

impl Sema<'_> {
    /// A warp-level primitive, or `None` for any other name.
    pub(super) fn warp_builtin(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        let (op, least, most) = primitive(name)?;
        Some(self.warp_primitive(name, name_span, args, span, op, (least, most)))
    }

    fn warp_primitive(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
        op: WarpOp,
        (least, most): (usize, usize),
    ) -> Result<(Ex, Type), Diagnostic> {
        if args.len() < least || args.len() > most {
            let count = if least == most {
                least.to_string()
            } else {
                format!("{least} or {most}")
            };
            return err(
                name_span,
                format!("'{name}' takes {count} arguments, not {}", args.len()),
            );
        }
        let mut lowered = Vec::new();
        let mut value_type = Scalar::U32;
        for (k, a) in args.iter().enumerate() {
            let (ex, s) = self.scalar_arg(a, name)?;
            // The mask, a lane, delta or width: unsigned or int. The value keeps its type where
            // the hardware moves it as it is (32 or 64 bits, integer or float).
            let to = match (k, op) {
                (1, WarpOp::Ballot | WarpOp::Any | WarpOp::All) => Scalar::I32,
                (1, WarpOp::Reduce(BinOp::Add | BinOp::Min | BinOp::Max)) => {
                    if s == Scalar::I32 {
                        Scalar::I32
                    } else {
                        Scalar::U32
                    }
                }
                (1, WarpOp::Reduce(_)) => Scalar::U32,
                (1, _) => match s {
                    Scalar::I32
                    | Scalar::U32
                    | Scalar::I64
                    | Scalar::U64
                    | Scalar::F32
                    | Scalar::F64 => s,
                    s if s.is_half() => {
                        return err(
                            a.span,
                            format!(
                            "'{name}' of a 16-bit float is not simulated; shuffle it as a float"
                        ),
                        )
                    }
                    s if s.is_float() => Scalar::F64,
                    _ => Scalar::I32,
                },
                (2, _) => Scalar::I32,
                _ => Scalar::U32,
            };
            if k == 1 {
                value_type = to;
            }
            let ex = if matches!((k, op), (1, WarpOp::Ballot | WarpOp::Any | WarpOp::All)) {
                self.bool_of(ex, &Type::Scalar(s), a.span)?
            } else {
                self.convert_scalar(ex, s, to)
            };
            lowered.push(ex);
        }
        if op.is_shuffle() && lowered.len() == 3 {
            lowered.push(Ex::new(ExKind::Const(32), 1, span));
        }
        let result = match op {
            WarpOp::Ballot | WarpOp::ActiveMask | WarpOp::MatchAny => Scalar::U32,
            WarpOp::Any | WarpOp::All => Scalar::I32,
            _ => value_type,
        };
        let kind = ExKind::Warp {
            op,
            ty: value_type,
            args: lowered,
        };
        Ok((Ex::new(kind, 1, span), Type::Scalar(result)))
    }
}
