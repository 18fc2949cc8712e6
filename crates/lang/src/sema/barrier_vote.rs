//! The barriers that also vote (CUDA C++ Programming Guide, "Synchronization Functions"):
//! `__syncthreads_count(predicate)`, `__syncthreads_and(predicate)` and
//! `__syncthreads_or(predicate)` wait as `__syncthreads()` does and return, in every thread, how
//! many threads of the block had a predicate other than zero, whether all had, or whether any
//! had.
//!
//! A call is lowered where it stands in three steps: the predicate joins the block's vote
//! (`WarpOp::BlockVote`, in an `Op::Eval`), the barrier (`Op::SyncThreads`, so it is a barrier
//! to the barrier count, the sanitizer and the interpreter's stops like any other), and the
//! call's value, read after the barrier (`WarpOp::BlockVoteResult`). nvcc compiles the call to
//! one `BAR.RED.POPC`, `BAR.RED.AND` or `BAR.RED.OR` after an `ISETP` that makes the predicate
//! (and a `SEL` that makes the `and`'s and `or`'s predicate an integer): three instructions, as
//! the three steps issue one each.

use super::{err, Sema};
use crate::ast::{Expr, Scalar, Type};
use crate::ir::{BinOp, Ex, ExKind, Op, WarpOp};
use crate::span::{Diagnostic, Span};

/// The vote of the barrier `name` calls, or `None` for any other name.
fn vote(name: &str) -> Option<BinOp> {
    Some(match name {
        "__syncthreads_count" => BinOp::Add,
        "__syncthreads_and" => BinOp::BitAnd,
        "__syncthreads_or" => BinOp::BitOr,
        _ => return None,
    })
}

impl Sema<'_> {
    /// A barrier that votes, or `None` for any other name.
    pub(super) fn barrier_vote(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        let reduce = vote(name)?;
        Some(self.barrier_vote_of(name, name_span, args, span, reduce))
    }

    fn barrier_vote_of(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
        reduce: BinOp,
    ) -> Result<(Ex, Type), Diagnostic> {
        let [predicate] = args else {
            return err(
                name_span,
                format!("'{name}' takes 1 argument, not {}", args.len()),
            );
        };
        let predicate = self.condition(predicate)?;
        let warp = |op, args| ExKind::Warp {
            op,
            ty: Scalar::I32,
            args,
        };
        self.emit(
            Op::Eval(Ex::new(warp(WarpOp::BlockVote, vec![predicate]), 1, span)),
            span,
        );
        self.emit(Op::SyncThreads, span);
        let result = warp(WarpOp::BlockVoteResult(reduce), Vec::new());
        Ok((Ex::new(result, 1, span), Type::Scalar(Scalar::I32)))
    }
}
