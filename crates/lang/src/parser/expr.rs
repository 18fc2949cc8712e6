//! Expressions, by precedence climbing over C's levels (C11 section 6.5).

use super::{is_decl_word, is_statement_word, Parser, Tree};
use crate::ast::{BinaryOp, Expr, ExprKind, Type, UnaryOp};
use crate::lexer::{Punct, TokenKind};
use crate::limits::MAX_TREE_DEPTH;
use crate::span::{Diagnostic, DiagnosticKind, Span};

impl<'a> Parser<'a> {
    /// A full expression (commas included).
    pub(super) fn expr(&mut self) -> Result<Expr, Diagnostic> {
        Ok(self.comma()?.expr)
    }

    /// An assignment expression (no top-level comma), as in an initialiser.
    pub(super) fn assignment_expr(&mut self) -> Result<Expr, Diagnostic> {
        Ok(self.assignment()?.expr)
    }

    /// Makes a node whose deepest child is `below` levels deep, or fails when the node would be
    /// deeper than `MAX_TREE_DEPTH`, pointing at `at` (the operator that goes too deep).
    pub(super) fn node(
        &self,
        kind: ExprKind,
        span: Span,
        below: usize,
        at: Span,
    ) -> Result<Tree, Diagnostic> {
        let depth = below + 1;
        if depth > MAX_TREE_DEPTH {
            return Err(Diagnostic::new(
                at,
                format!(
                    "this expression is deeper than the simulator's limit of {MAX_TREE_DEPTH} levels"
                ),
            ));
        }
        Ok(Tree {
            expr: Expr { kind, span },
            depth,
        })
    }

    /// Reads the operator at the current position and returns its span.
    pub(super) fn operator(&mut self) -> Span {
        let at = self.here();
        self.pos += 1;
        at
    }

    pub(super) fn comma(&mut self) -> Result<Tree, Diagnostic> {
        let mut e = self.assignment()?;
        while self.at(Punct::Comma) {
            let at = self.operator();
            let rhs = self.assignment()?;
            let span = e.expr.span.to(rhs.expr.span);
            let below = e.depth.max(rhs.depth);
            e = self.node(
                ExprKind::Comma(Box::new(e.expr), Box::new(rhs.expr)),
                span,
                below,
                at,
            )?;
        }
        Ok(e)
    }

    pub(super) fn assignment(&mut self) -> Result<Tree, Diagnostic> {
        let lhs = self.conditional()?;
        let op = match self.peek().map(|t| &t.kind) {
            Some(TokenKind::Punct(p)) => match p {
                Punct::Assign => Some(None),
                Punct::PlusAssign => Some(Some(BinaryOp::Add)),
                Punct::MinusAssign => Some(Some(BinaryOp::Sub)),
                Punct::StarAssign => Some(Some(BinaryOp::Mul)),
                Punct::SlashAssign => Some(Some(BinaryOp::Div)),
                Punct::PercentAssign => Some(Some(BinaryOp::Rem)),
                Punct::AmpAssign => Some(Some(BinaryOp::BitAnd)),
                Punct::PipeAssign => Some(Some(BinaryOp::BitOr)),
                Punct::CaretAssign => Some(Some(BinaryOp::BitXor)),
                Punct::ShlAssign => Some(Some(BinaryOp::Shl)),
                Punct::ShrAssign => Some(Some(BinaryOp::Shr)),
                _ => None,
            },
            _ => None,
        };
        let Some(op) = op else { return Ok(lhs) };
        let at = self.operator();
        // `a = b = c` nests to the right.
        let rhs = self.nested(Self::assignment)?;
        let span = lhs.expr.span.to(rhs.expr.span);
        let below = lhs.depth.max(rhs.depth);
        self.node(
            ExprKind::Assign(op, Box::new(lhs.expr), Box::new(rhs.expr)),
            span,
            below,
            at,
        )
    }

    pub(super) fn conditional(&mut self) -> Result<Tree, Diagnostic> {
        let cond = self.binary(1)?;
        if !self.at(Punct::Question) {
            return Ok(cond);
        }
        let at = self.operator();
        let (a, b) = self.nested(|p| {
            let a = p.comma()?;
            p.expect(Punct::Colon)?;
            let b = p.conditional()?;
            Ok((a, b))
        })?;
        let span = cond.expr.span.to(b.expr.span);
        let below = cond.depth.max(a.depth).max(b.depth);
        self.node(
            ExprKind::Conditional(Box::new(cond.expr), Box::new(a.expr), Box::new(b.expr)),
            span,
            below,
            at,
        )
    }

    pub(super) fn binary_op(&self) -> Option<(BinaryOp, u8)> {
        let TokenKind::Punct(p) = self.peek()?.kind else {
            return None;
        };
        Some(match p {
            Punct::OrOr => (BinaryOp::Or, 1),
            Punct::AndAnd => (BinaryOp::And, 2),
            Punct::Pipe => (BinaryOp::BitOr, 3),
            Punct::Caret => (BinaryOp::BitXor, 4),
            Punct::Amp => (BinaryOp::BitAnd, 5),
            Punct::EqEq => (BinaryOp::Eq, 6),
            Punct::Ne => (BinaryOp::Ne, 6),
            Punct::Lt => (BinaryOp::Lt, 7),
            Punct::Gt => (BinaryOp::Gt, 7),
            Punct::Le => (BinaryOp::Le, 7),
            Punct::Ge => (BinaryOp::Ge, 7),
            Punct::Shl => (BinaryOp::Shl, 8),
            Punct::Shr => (BinaryOp::Shr, 8),
            Punct::Plus => (BinaryOp::Add, 9),
            Punct::Minus => (BinaryOp::Sub, 9),
            Punct::Star => (BinaryOp::Mul, 10),
            Punct::Slash => (BinaryOp::Div, 10),
            Punct::Percent => (BinaryOp::Rem, 10),
            _ => return None,
        })
    }

    /// Precedence climbing over the left-associative binary operators. A chain of one operator is
    /// a loop; the recursion for the right operand goes one precedence level up each time, so it
    /// is at most ten calls deep without a nesting level of its own.
    pub(super) fn binary(&mut self, min_prec: u8) -> Result<Tree, Diagnostic> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.binary_op() {
            if prec < min_prec {
                break;
            }
            let at = self.operator();
            let rhs = self.binary(prec + 1)?;
            let span = lhs.expr.span.to(rhs.expr.span);
            let below = lhs.depth.max(rhs.depth);
            lhs = self.node(
                ExprKind::Binary(op, Box::new(lhs.expr), Box::new(rhs.expr)),
                span,
                below,
                at,
            )?;
        }
        Ok(lhs)
    }

    /// `(` followed by a type (a type word or a type alias) starts a cast, unless a `(` follows
    /// the type: in `(float(i) + 0.5f)` a functional cast follows the `(`.
    pub(super) fn at_cast(&self) -> bool {
        self.at(Punct::LParen)
            && (self.peek_at(1).and_then(|t| t.ident()).is_some_and(|w| {
                is_decl_word(w)
                    && !matches!(w, "__shared__" | "__constant__" | "extern" | "__global__")
            }) || self.at_alias_type_at(1))
            && !self.type_then_parenthesis(1)
            && !self.alias_then_parenthesis(1)
    }

    /// Whether a type alias `ahead` tokens on is followed by `(`: a functional cast (`real(0)`).
    /// (`peek_name_at` counts the tokens ahead in what it takes.)
    pub(super) fn alias_then_parenthesis(&self, ahead: usize) -> bool {
        self.at_alias_type_at(ahead)
            && self.peek_name_at(ahead).is_some_and(|(_, taken)| {
                self.peek_at(taken)
                    .is_some_and(|t| t.is_punct(Punct::LParen))
            })
    }

    /// Whether the words of a type (and `*`s) that start `ahead` tokens on are followed by `(`.
    pub(super) fn type_then_parenthesis(&self, mut ahead: usize) -> bool {
        loop {
            match self.peek_at(ahead) {
                Some(t) if t.is_punct(Punct::Star) || t.ident().is_some_and(is_decl_word) => {
                    ahead += 1
                }
                other => return other.is_some_and(|t| t.is_punct(Punct::LParen)),
            }
        }
    }

    /// A type name as in a cast or `sizeof(T)`: specifiers, then `*`s, then `[N]`s are not allowed.
    pub(super) fn type_name(&mut self) -> Result<Type, Diagnostic> {
        let spec = self.specifiers()?;
        let (ty, _) = self.pointers(spec.base.clone(), spec.is_const)?;
        if self.at(Punct::Amp) || self.at(Punct::AndAnd) {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                self.here(),
                "a cast to a reference type (`(float&)x`) is not simulated; cast the value, or a \
                 pointer (`*(float*)&x`)",
            ));
        }
        self.with_alias_dims(ty, &spec)
    }

    /// A prefix operator, cast or `sizeof`, whose operand is one nesting level deeper, or a
    /// postfix expression.
    pub(super) fn unary(&mut self) -> Result<Tree, Diagnostic> {
        let start = self.here();
        let op = match self.peek().map(|t| &t.kind) {
            Some(TokenKind::Punct(p)) => match p {
                Punct::Minus => Some(UnaryOp::Neg),
                Punct::Plus => Some(UnaryOp::Plus),
                Punct::Bang => Some(UnaryOp::Not),
                Punct::Tilde => Some(UnaryOp::BitNot),
                Punct::Star => Some(UnaryOp::Deref),
                Punct::Amp => Some(UnaryOp::AddrOf),
                Punct::PlusPlus => Some(UnaryOp::PreInc),
                Punct::MinusMinus => Some(UnaryOp::PreDec),
                _ => None,
            },
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            let operand = self.nested(Self::unary)?;
            let span = start.to(operand.expr.span);
            return self.node(
                ExprKind::Unary(op, Box::new(operand.expr)),
                span,
                operand.depth,
                start,
            );
        }
        if self.at_cast() {
            self.pos += 1;
            let ty = self.type_name()?;
            self.expect(Punct::RParen)?;
            let operand = self.nested(Self::unary)?;
            let span = start.to(operand.expr.span);
            return self.node(
                ExprKind::Cast(ty, Box::new(operand.expr)),
                span,
                operand.depth,
                start,
            );
        }
        // `alignof(T)` (C++11; `__alignof__` and C11's `_Alignof` are spellings of it): the
        // type's alignment, known here.
        if self.at_word("alignof") || self.at_word("__alignof__") || self.at_word("_Alignof") {
            self.pos += 1;
            self.expect(Punct::LParen)?;
            let ty = self.type_name()?;
            let close = self.expect(Punct::RParen)?;
            let kind = ExprKind::Int {
                value: ty.align(),
                unsigned: true,
                long: true,
                hex: false,
            };
            return self.node(kind, start.to(close), 0, start);
        }
        if self.at_word("sizeof") {
            self.pos += 1;
            if self.at_cast() {
                self.pos += 1;
                let ty = self.type_name()?;
                let close = self.expect(Punct::RParen)?;
                return self.node(ExprKind::SizeofType(ty), start.to(close), 0, start);
            }
            let operand = self.nested(Self::unary)?;
            let span = start.to(operand.expr.span);
            return self.node(
                ExprKind::SizeofExpr(Box::new(operand.expr)),
                span,
                operand.depth,
                start,
            );
        }
        self.postfix()
    }

    pub(super) fn postfix(&mut self) -> Result<Tree, Diagnostic> {
        let mut e = self.primary()?;
        loop {
            if self.at(Punct::LBracket) {
                let at = self.operator();
                let index = self.nested(Self::comma)?;
                let close = self.expect(Punct::RBracket)?;
                let span = e.expr.span.to(close);
                let below = e.depth.max(index.depth);
                e = self.node(
                    ExprKind::Index(Box::new(e.expr), Box::new(index.expr)),
                    span,
                    below,
                    at,
                )?;
            } else if self.at(Punct::LParen) {
                // `v.f(args)` and `p->f(args)` call a member function: the call `.f` whose first
                // argument is the object (`sema` finds the function of its type).
                let (name, name_span, object) = match e.expr.kind {
                    ExprKind::Ident(name) => (name, e.expr.span, None),
                    ExprKind::Member {
                        base,
                        field,
                        field_span,
                    } => (format!(".{field}"), field_span, Some(*base)),
                    _ => {
                        return Err(Diagnostic::new(
                            self.here(),
                            "only a function named directly can be called",
                        ))
                    }
                };
                let at = self.operator();
                let (args, below) = self.nested(|p| {
                    let mut args = Vec::new();
                    let mut below = 0;
                    while !p.at(Punct::RParen) {
                        let arg = p.assignment()?;
                        below = arg.depth.max(below);
                        args.push(arg.expr);
                        if !p.eat(Punct::Comma) {
                            break;
                        }
                    }
                    Ok((args, below))
                })?;
                let close = self.expect(Punct::RParen)?;
                let mut args = args;
                self.with_defaults(&name, &mut args);
                if let Some(object) = object {
                    args.insert(0, object);
                }
                e = self.node(
                    ExprKind::Call {
                        name,
                        name_span,
                        args,
                    },
                    name_span.to(close),
                    below,
                    at,
                )?;
            } else if self.at(Punct::Dot) || self.at(Punct::Arrow) {
                let arrow = self.at(Punct::Arrow);
                let at = self.operator();
                let (field, field_span) = self.ident(if arrow {
                    "a field name after '->'"
                } else {
                    "a field name after '.'"
                })?;
                // `p->f` is `(*p).f`.
                if arrow {
                    let span = e.expr.span;
                    e = self.node(
                        ExprKind::Unary(UnaryOp::Deref, Box::new(e.expr)),
                        span,
                        e.depth,
                        at,
                    )?;
                }
                let span = e.expr.span.to(field_span);
                e = self.node(
                    ExprKind::Member {
                        base: Box::new(e.expr),
                        field,
                        field_span,
                    },
                    span,
                    e.depth,
                    at,
                )?;
            } else if self.at(Punct::PlusPlus) || self.at(Punct::MinusMinus) {
                let op = if self.at(Punct::PlusPlus) {
                    UnaryOp::PostInc
                } else {
                    UnaryOp::PostDec
                };
                let span = e.expr.span.to(self.here());
                let at = self.operator();
                e = self.node(ExprKind::Unary(op, Box::new(e.expr)), span, e.depth, at)?;
            } else {
                return Ok(e);
            }
        }
    }

    /// `kernel<<<grid, block>>>(args)` in device code (dynamic parallelism, CUDA C++ Programming
    /// Guide, "CUDA Dynamic Parallelism"): read past and refused as the statement's unsupported
    /// construct, so the kernels that do not launch one still run.
    fn device_launch(&mut self, name: Span) -> Result<Tree, Diagnostic> {
        self.pos += 2;
        let mut depth = 0usize;
        loop {
            let Some(t) = self.peek() else {
                return Err(self.error_here("'>>>' closing the launch"));
            };
            if depth == 0
                && t.is_punct(Punct::Shr)
                && self.peek_at(1).is_some_and(|t| t.is_punct(Punct::Gt))
            {
                self.pos += 2;
                break;
            }
            if t.is_punct(Punct::LParen) {
                depth += 1;
            } else if t.is_punct(Punct::RParen) {
                depth = depth.saturating_sub(1);
            }
            self.pos += 1;
        }
        if !self.at(Punct::LParen) {
            return Err(self.error_here("the launch's arguments"));
        }
        self.pos = super::after_match(self.tokens, self.pos)?;
        if self.unsupported.is_none() {
            self.unsupported = Some(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                name,
                "launching a kernel from device code (dynamic parallelism) is not simulated",
            ));
        }
        let zero = ExprKind::Int {
            value: 0,
            unsigned: false,
            long: false,
            hex: false,
        };
        self.node(zero, name, 0, name)
    }

    pub(super) fn primary(&mut self) -> Result<Tree, Diagnostic> {
        if let Some(cast) = self.cxx_cast()? {
            return Ok(cast);
        }
        let Some(t) = self.peek() else {
            return Err(self.error_here("an expression"));
        };
        if let Some(limit) = self.numeric_limit()? {
            return Ok(limit);
        }
        if let Some((kind, span)) = self.name_expression() {
            if self.at(Punct::Shl) && self.peek_at(1).is_some_and(|t| t.is_punct(Punct::Lt)) {
                return self.device_launch(span);
            }
            let kind = self.template_id(kind)?;
            return self.node(kind, span, 0, span);
        }
        let kind = match &t.kind {
            TokenKind::Int {
                value,
                unsigned,
                long,
                hex,
            } => ExprKind::Int {
                value: *value,
                unsigned: *unsigned,
                long: *long,
                hex: *hex,
            },
            TokenKind::Char(value) => ExprKind::Int {
                value: *value,
                unsigned: false,
                long: false,
                hex: false,
            },
            TokenKind::Float { value, single } => ExprKind::Float {
                value: *value,
                single: *single,
            },
            TokenKind::Str(text) => {
                // Adjacent literals are one (C11 6.4.5): `"a" "b"` is `"ab"`.
                let mut joined = text.clone();
                let mut span = t.span;
                self.pos += 1;
                while let Some(next) = self.peek() {
                    let TokenKind::Str(more) = &next.kind else {
                        break;
                    };
                    joined.push_str(more);
                    span = span.to(next.span);
                    self.pos += 1;
                }
                return self.node(ExprKind::Str(joined), span, 0, span);
            }
            TokenKind::Ident(name) if name == "true" || name == "false" => {
                ExprKind::Bool(name == "true")
            }
            TokenKind::Ident(name) if !is_decl_word(name) && !is_statement_word(name) => {
                ExprKind::Ident(name.clone())
            }
            TokenKind::Punct(Punct::LParen) => {
                let open = t.span;
                self.pos += 1;
                let mut inner = self.nested(Self::comma)?;
                let close = self.expect(Punct::RParen)?;
                inner.expr.span = open.to(close);
                return Ok(inner);
            }
            _ => return Err(self.error_here("an expression")),
        };
        self.pos += 1;
        self.node(kind, t.span, 0, t.span)
    }
}
