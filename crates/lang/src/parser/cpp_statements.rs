//! Two statements of C++11 that kernels borrow: the range-based `for` (C++ [stmt.ranged]) and
//! `static_assert` (C++ [dcl.pre], a static_assert-declaration).
//!
//! A range-based `for` over an array is read as the index loop the standard defines it to be:
//! `for (T x : a) body` is `for (int i = 0; i < extent(a); ++i) { T x = a[i]; body }`, with the
//! element bound by value or by reference as `x` is declared. The extent is a call of
//! `ARRAY_EXTENT`, a name no source can spell, which sema folds to the array's number of elements
//! (or refuses, for a pointer): so the loop has a constant trip count and is unrolled as nvcc
//! unrolls one. `static_assert(condition, "message")` is kept as a call of `static_assert`, which
//! sema folds as a constant expression and which makes no code.

use super::Parser;
use crate::ast::{
    BinaryOp, Declaration, Declarator, Expr, ExprKind, Initializer, Scalar, Stmt, StmtKind,
    Storage, Type, UnaryOp,
};
use crate::lexer::{Punct, TokenKind};
use crate::span::{Diagnostic, Span};

/// The function that a range-based `for`'s condition calls for the number of elements of its
/// range; the parentheses keep it from any name a source can spell.
pub(crate) const ARRAY_EXTENT: &str = "(array extent)";

/// The index variable of a range-based `for`, named so that no source can name it.
const RANGE_INDEX: &str = "(range index)";

impl Parser<'_> {
    /// Whether the `for (` just read opens a range-based `for`: a `:` at the parentheses' own
    /// level, before their `)` and before any `;`, that closes no `?`.
    pub(super) fn at_range_for(&self) -> bool {
        let mut depth = 0usize;
        let mut questions = 0usize;
        for token in &self.tokens[self.pos..] {
            let TokenKind::Punct(punct) = token.kind else {
                continue;
            };
            match punct {
                Punct::LParen | Punct::LBracket | Punct::LBrace => depth += 1,
                Punct::RParen | Punct::RBracket | Punct::RBrace if depth == 0 => return false,
                Punct::RParen | Punct::RBracket | Punct::RBrace => depth -= 1,
                Punct::Semi => return false,
                Punct::Question if depth == 0 => questions += 1,
                Punct::Colon if depth == 0 && questions == 0 => return true,
                Punct::Colon if depth == 0 => questions -= 1,
                _ => {}
            }
        }
        false
    }

    /// The rest of a range-based `for` after `for (`, read as its index loop.
    pub(super) fn range_for(&mut self) -> Result<StmtKind, Diagnostic> {
        let spec = self.specifiers()?;
        let (ty, pointer_const) = self.pointers(spec.base.clone(), spec.is_const)?;
        // `auto&&` binds to an array's element, an lvalue, as `auto&` does.
        let reference = self.eat(Punct::AndAnd) || self.reference()?;
        let (name, span) = self.ident("the name of the loop's element")?;
        let name = self.names.declare(&name);
        self.expect(Punct::Colon)?;
        let range = self.expr()?;
        self.expect(Punct::RParen)?;
        let body = self.statement()?;
        let at = range.span;
        let expr = |kind| Expr { kind, span: at };
        let index = || expr(ExprKind::Ident(RANGE_INDEX.to_string()));
        let declaration = |declarator, is_const, is_auto, span| Stmt {
            kind: StmtKind::Declaration(Declaration {
                storage: Storage::Automatic,
                is_const,
                compile_time: false,
                is_auto,
                declarators: vec![declarator],
                span,
            }),
            span,
        };
        let start = expr(ExprKind::Int {
            value: 0,
            unsigned: false,
            long: false,
            hex: false,
        });
        let init = declaration(
            Declarator {
                name: RANGE_INDEX.to_string(),
                span: at,
                pointer_const: false,
                ty: Type::Scalar(Scalar::I32),
                dims: Vec::new(),
                init: Some(Initializer::Expr(start)),
                align: None,
                reference: false,
            },
            false,
            false,
            at,
        );
        let extent = expr(ExprKind::Call {
            name: ARRAY_EXTENT.to_string(),
            name_span: at,
            args: vec![range.clone()],
        });
        let element = expr(ExprKind::Index(Box::new(range), Box::new(index())));
        let element = declaration(
            Declarator {
                name,
                span,
                pointer_const,
                ty,
                dims: spec.dims.clone(),
                init: Some(Initializer::Expr(element)),
                align: None,
                reference,
            },
            spec.is_const,
            spec.is_auto,
            spec.span.to(span),
        );
        let body_span = body.span;
        Ok(StmtKind::For {
            init: Some(Box::new(init)),
            cond: Some(expr(ExprKind::Binary(
                BinaryOp::Lt,
                Box::new(index()),
                Box::new(extent),
            ))),
            step: Some(expr(ExprKind::Unary(UnaryOp::PreInc, Box::new(index())))),
            body: Box::new(Stmt {
                kind: StmtKind::Block(vec![element, body]),
                span: body_span,
            }),
            pragma_unroll: None,
        })
    }

    /// `static_assert(condition, "message");` or, as C++17 allows, without the message: a call
    /// of `static_assert` with the condition and the message's literal, spanning the whole
    /// declaration.
    pub(super) fn static_assertion(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.here();
        self.pos += 1;
        self.expect(Punct::LParen)?;
        let mut args = vec![self.assignment_expr()?];
        if self.eat(Punct::Comma) {
            let message = self.assignment_expr()?;
            if !matches!(message.kind, ExprKind::Str(_)) {
                return Err(Diagnostic::new(
                    message.span,
                    "the message of 'static_assert' must be a string literal",
                ));
            }
            args.push(message);
        }
        self.expect(Punct::RParen)?;
        self.expect_semi("'static_assert(...)'")?;
        let span: Span = start.to(self.previous_span());
        Ok(Expr {
            kind: ExprKind::Call {
                name: "static_assert".to_string(),
                name_span: start,
                args,
            },
            span,
        })
    }
}
