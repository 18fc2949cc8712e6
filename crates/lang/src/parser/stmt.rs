//! Statements and blocks.

use super::{is_decl_word, is_statement_word, Parser};
use crate::ast::{Stmt, StmtKind, Storage};
use crate::lexer::{Punct, TokenKind};
use crate::span::{Diagnostic, DiagnosticKind, Span};

impl<'a> Parser<'a> {
    /// A `{ ... }` block: its statements, its whole span and the span of its closing brace. Each
    /// statement is a nesting level deeper than the block.
    pub(super) fn block(&mut self) -> Result<(Vec<Stmt>, Span, Span), Diagnostic> {
        let open = self.expect(Punct::LBrace)?;
        let mut stmts = Vec::new();
        let names = self.names.mark();
        loop {
            if self.at(Punct::RBrace) {
                break;
            }
            if self.peek().is_none() {
                return Err(Diagnostic::new(open, "this '{' is never closed"));
            }
            stmts.push(self.statement()?);
        }
        self.names.leave(names);
        let close = self.expect(Punct::RBrace)?;
        Ok((stmts, open.to(close), close))
    }

    /// A statement, one nesting level deeper. One that contains an unsupported construct in its
    /// own expressions (not in a nested statement, which is the one that fails) becomes
    /// `StmtKind::Unsupported`.
    pub(super) fn statement(&mut self) -> Result<Stmt, Diagnostic> {
        let outer = self.unsupported.take();
        let result = self.nested(Self::statement_inner);
        let own = std::mem::replace(&mut self.unsupported, outer);
        let stmt = result?;
        Ok(match own {
            Some(diagnostic) => Stmt {
                kind: StmtKind::Unsupported(diagnostic),
                span: stmt.span,
            },
            None => stmt,
        })
    }

    pub(super) fn statement_inner(&mut self) -> Result<Stmt, Diagnostic> {
        // `[[likely]]` and other attributes before a statement say nothing the simulator uses;
        // `__attribute__`, `alignas` and `__align__` before a declaration are read with its
        // specifiers.
        if self.at(Punct::LBracket) {
            self.attributes()?;
        }
        let start = self.here();
        if let Some(TokenKind::PragmaUnroll(count)) = self.peek().map(|t| &t.kind) {
            // The pragma belongs to the loop that follows; before anything else it says nothing.
            let count = *count;
            self.pos += 1;
            if self.at(Punct::RBrace) {
                return Ok(Stmt {
                    kind: StmtKind::Empty,
                    span: start,
                });
            }
            let mut stmt = self.statement_inner()?;
            if let StmtKind::For { pragma_unroll, .. } = &mut stmt.kind {
                *pragma_unroll = Some(count);
            }
            return Ok(stmt);
        }
        if self.at_record() {
            // A struct defined inside a function is read as the file's structs are: its name
            // is then known past the function too, which no valid program notices.
            let in_function = std::mem::replace(&mut self.names.in_function, false);
            let read = self.record_item();
            self.names.in_function = in_function;
            read?;
            return Ok(Stmt {
                kind: StmtKind::Empty,
                span: start,
            });
        }
        if self.at(Punct::LBrace) {
            let (stmts, span, _) = self.block()?;
            return Ok(Stmt {
                kind: StmtKind::Block(stmts),
                span: start.to(span),
            });
        }
        if self.eat(Punct::Semi) {
            return Ok(Stmt {
                kind: StmtKind::Empty,
                span: start,
            });
        }
        let word = self.peek().and_then(|t| t.ident());
        let kind = match word {
            Some("if") => {
                self.pos += 1;
                self.expect(Punct::LParen)?;
                let cond = self.expr()?;
                self.expect(Punct::RParen)?;
                let then = self.statement()?;
                let otherwise = if self.at_word("else") {
                    self.pos += 1;
                    Some(Box::new(self.statement()?))
                } else {
                    None
                };
                StmtKind::If(cond, Box::new(then), otherwise)
            }
            Some("while") => {
                self.pos += 1;
                self.expect(Punct::LParen)?;
                let cond = self.expr()?;
                self.expect(Punct::RParen)?;
                StmtKind::While(cond, Box::new(self.statement()?))
            }
            Some("do") => {
                self.pos += 1;
                let body = self.statement()?;
                if !self.at_word("while") {
                    return Err(self.error_here("'while' after the body of 'do'"));
                }
                self.pos += 1;
                self.expect(Punct::LParen)?;
                let cond = self.expr()?;
                self.expect(Punct::RParen)?;
                self.expect_semi("'do ... while (...)'")?;
                StmtKind::DoWhile(Box::new(body), cond)
            }
            Some("for") => {
                self.pos += 1;
                self.expect(Punct::LParen)?;
                if self.at_range_for() {
                    let kind = self.range_for()?;
                    return Ok(Stmt {
                        kind,
                        span: start.to(self.previous_span()),
                    });
                }
                let init = if self.eat(Punct::Semi) {
                    None
                } else if self.starts_declaration() {
                    let spec_start = self.here();
                    let spec = self.specifiers()?;
                    let decl = self.declaration_rest(spec, None)?;
                    Some(Box::new(Stmt {
                        kind: StmtKind::Declaration(decl),
                        span: spec_start.to(self.previous_span()),
                    }))
                } else {
                    let e = self.expr()?;
                    let span = e.span;
                    self.expect_semi("the loop's initialisation")?;
                    Some(Box::new(Stmt {
                        kind: StmtKind::Expr(e),
                        span,
                    }))
                };
                let cond = if self.at(Punct::Semi) {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect_semi("the loop's condition")?;
                let step = if self.at(Punct::RParen) {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(Punct::RParen)?;
                let body = Box::new(self.statement()?);
                StmtKind::For {
                    init,
                    cond,
                    step,
                    body,
                    pragma_unroll: None,
                }
            }
            Some("static_assert") => StmtKind::Expr(self.static_assertion()?),
            Some("return") => {
                self.pos += 1;
                let value = if self.at(Punct::Semi) {
                    None
                } else if self.at(Punct::LBrace) {
                    Some(self.braced_return()?)
                } else {
                    Some(self.expr()?)
                };
                self.expect_semi("'return'")?;
                StmtKind::Return(value)
            }
            Some("break") => {
                self.pos += 1;
                self.expect_semi("'break'")?;
                StmtKind::Break
            }
            Some("continue") => {
                self.pos += 1;
                self.expect_semi("'continue'")?;
                StmtKind::Continue
            }
            Some("switch") => {
                self.pos += 1;
                self.expect(Punct::LParen)?;
                let value = self.expr()?;
                self.expect(Punct::RParen)?;
                StmtKind::Switch(value, Box::new(self.statement()?))
            }
            Some(w @ ("case" | "default")) => {
                self.pos += 1;
                let value = if w == "case" {
                    Some(self.conditional()?.expr)
                } else {
                    None
                };
                self.expect(Punct::Colon)?;
                // A label at the end of a block labels nothing, as C23 allows.
                let labelled = if self.at(Punct::RBrace) {
                    Stmt {
                        kind: StmtKind::Empty,
                        span: self.here(),
                    }
                } else {
                    self.statement()?
                };
                StmtKind::Case(value, Box::new(labelled))
            }
            // Not simulated, but read to the end of the statement, so that other functions of
            // the file still compile.
            Some("goto") => {
                self.pos += 1;
                self.ident("a label after 'goto'")?;
                self.expect_semi("'goto'")?;
                StmtKind::Unsupported(Diagnostic::of_kind(
                    DiagnosticKind::NotSimulated,
                    start,
                    "'goto' is not simulated; use a loop with 'break' or 'continue', or if/else",
                ))
            }
            // Inline PTX (`asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));`): read past, so
            // that the kernels that do not use it still run.
            Some("asm" | "__asm__" | "__asm") => {
                self.pos += 1;
                while matches!(
                    self.peek().and_then(|t| t.ident()),
                    Some("volatile" | "__volatile__")
                ) {
                    self.pos += 1;
                }
                if !self.at(Punct::LParen) {
                    return Err(self.error_here("'(' after 'asm'"));
                }
                self.pos = super::after_match(self.tokens, self.pos)?;
                self.expect_semi("'asm'")?;
                StmtKind::Unsupported(Diagnostic::of_kind(
                    DiagnosticKind::NotSimulated,
                    start,
                    "inline PTX assembly (`asm`) is not simulated",
                ))
            }
            Some(w)
                if !is_decl_word(w)
                    && !is_statement_word(w)
                    && self.peek_at(1).is_some_and(|t| t.is_punct(Punct::Colon)) =>
            {
                // `name:` can only be a label here (a `?:` needs its `?` first).
                self.pos += 2;
                StmtKind::Unsupported(Diagnostic::of_kind(
                    DiagnosticKind::NotSimulated,
                    start,
                    "labels are not simulated (nor is 'goto')",
                ))
            }
            Some("else") => return Err(Diagnostic::new(start, "'else' without a matching 'if'")),
            _ if self.at_name_declaration() && !self.at_enum_type() => self.name_statement()?,
            _ if self.starts_declaration() => {
                let spec = self.specifiers()?;
                if spec.function.is_some() && spec.storage != Storage::Device {
                    return Err(Diagnostic::new(
                        spec.span,
                        "functions cannot be declared inside a function",
                    ));
                }
                if spec.storage == Storage::Device || spec.storage == Storage::Constant {
                    return Err(Diagnostic::new(
                        spec.span,
                        "__device__ and __constant__ variables belong at file scope, outside any function",
                    ));
                }
                StmtKind::Declaration(self.declaration_rest(spec, None)?)
            }
            _ => {
                let e = self.expr()?;
                self.expect_semi("the expression")?;
                StmtKind::Expr(e)
            }
        };
        Ok(Stmt {
            kind,
            span: start.to(self.previous_span()),
        })
    }

    // ----- expressions -----
}
