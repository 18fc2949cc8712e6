//! C++'s casts and constructor calls of built-in types (C++ standard, [expr.static.cast],
//! [expr.reinterpret.cast], [expr.const.cast], [expr.type.conv]).
//!
//! `static_cast<T>(e)`, `reinterpret_cast<T>(e)` and `const_cast<T>(e)` become the C cast
//! `(T)e`: among the types memplay has, each does what the C cast does where both are allowed
//! (a pointer to another pointer type, an integer to a pointer and back, a number to another).
//! A functional cast `int(x)` is `(int)x` too. `dim3(16, 16)` calls `dim3`'s constructor, whose
//! missing components are 1, and so does a declaration `dim3 b(16, 16);` or `dim3 b;`
//! (`vector_types.h`); the semantic check builds it (`sema::builtins`). A vector type other than
//! `dim3` has no constructor taking components, as in CUDA: `make_float4` builds one.

use super::{Parser, Tree};
use crate::ast::{Expr, ExprKind, Initializer, Scalar, Type};
use crate::header_names::named_type;
use crate::lexer::Punct;
use crate::span::{Diagnostic, DiagnosticKind, Span};

/// The type `dim3`: laid out as `uint3`, which memplay takes it for.
const DIM3: Type = Type::Vector(Scalar::U32, 3);

/// Words a functional cast's type may start with: C's arithmetic types and the headers' names.
fn starts_functional_cast(word: &str) -> bool {
    matches!(
        word,
        "bool" | "char" | "short" | "int" | "long" | "unsigned" | "signed" | "float" | "double"
    ) || named_type(word).is_some()
}

impl<'a> Parser<'a> {
    /// A C++ cast or a functional cast, when one starts here.
    pub(super) fn cxx_cast(&mut self) -> Result<Option<Tree>, Diagnostic> {
        let Some(token) = self.peek() else {
            return Ok(None);
        };
        let Some(word) = token.ident() else {
            return Ok(None);
        };
        let start = token.span;
        if matches!(word, "static_cast" | "reinterpret_cast" | "const_cast") {
            self.pos += 1;
            self.expect(Punct::Lt)?;
            let ty = self.type_name()?;
            self.expect(Punct::Gt)?;
            self.expect(Punct::LParen)?;
            let operand = self.nested(Self::comma)?;
            let close = self.expect(Punct::RParen)?;
            let kind = ExprKind::Cast(ty, Box::new(operand.expr));
            return self
                .node(kind, start.to(close), operand.depth, start)
                .map(Some);
        }
        if word == "dynamic_cast" {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                start,
                "`dynamic_cast` works on classes with virtual functions, which are not simulated",
            ));
        }
        if let Some(construction) = self.struct_construction()? {
            return Ok(Some(construction));
        }
        // A type alias (`real(0)`, a template's `T(0)`) followed by `(` is a functional cast too.
        let alias_cast = self.alias_then_parenthesis(0);
        // A type word not followed by `(` is no expression; the caller says so.
        if !alias_cast && (!starts_functional_cast(word) || !self.type_then_parenthesis(0)) {
            return Ok(None);
        }
        let ty = self.specifiers()?.base;
        let (args, depth, close) = self.constructor_arguments()?;
        let expr = self.construct(ty, args, start.to(close))?;
        self.node(expr.kind, expr.span, depth, start).map(Some)
    }

    /// `return {a, b};`: the braced values build the function's return type, as `T{a, b}` would
    /// (a vector's with its `make_` function, a scalar from its one value).
    pub(super) fn braced_return(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.here();
        let Some(ty) = self.return_type.clone() else {
            return Err(self.error_here("a value after 'return'"));
        };
        let (mut args, _, close) = self.arguments_between(Punct::LBrace, Punct::RBrace)?;
        let span = start.to(close);
        match &ty {
            Type::Vector(..) => {
                let name = format!("make_{ty}");
                let kind = ExprKind::Call {
                    name,
                    name_span: span,
                    args,
                };
                Ok(Expr { kind, span })
            }
            Type::Scalar(_) | Type::Pointer { .. } if args.len() == 1 => {
                let value = Box::new(args.remove(0));
                Ok(Expr {
                    kind: ExprKind::Cast(ty, value),
                    span,
                })
            }
            _ => self.construct(ty, args, span),
        }
    }

    /// `(a, b, ...)`: the values of a constructor call, the depth of the deepest and the span of
    /// the `)`.
    pub(super) fn constructor_arguments(&mut self) -> Result<(Vec<Expr>, usize, Span), Diagnostic> {
        self.arguments_between(Punct::LParen, Punct::RParen)
    }

    /// The values between `open` and `close` (`(a, b)` or `{a, b}`), the depth of the deepest and
    /// the span of `close`.
    pub(super) fn arguments_between(
        &mut self,
        open: Punct,
        close: Punct,
    ) -> Result<(Vec<Expr>, usize, Span), Diagnostic> {
        self.expect(open)?;
        let (args, depth) = self.nested(|p| {
            let mut args = Vec::new();
            let mut depth = 0;
            while !p.at(close) {
                let arg = p.assignment()?;
                depth = arg.depth.max(depth);
                args.push(arg.expr);
                if !p.eat(Punct::Comma) {
                    break;
                }
            }
            Ok((args, depth))
        })?;
        let close = self.expect(close)?;
        Ok((args, depth, close))
    }

    /// `T(args)` as an expression: `dim3`'s constructor, or a conversion of one value (none: `T()`
    /// is zero).
    fn construct(&self, ty: Type, mut args: Vec<Expr>, span: Span) -> Result<Expr, Diagnostic> {
        if let Type::Struct(record) = &ty {
            let kind = ExprKind::Call {
                name: super::record::constructor_name(&record.name),
                name_span: span,
                args,
            };
            let call = Box::new(Expr { kind, span });
            return Ok(Expr {
                kind: ExprKind::Cast(ty.clone(), call),
                span,
            });
        }
        if ty == DIM3 {
            let kind = ExprKind::Call {
                name: "dim3".to_string(),
                name_span: span,
                args,
            };
            return Ok(Expr { kind, span });
        }
        if args.len() > 1 {
            let message = match ty {
                Type::Vector(..) => format!(
                    "'{ty}' has no constructor taking its components; build one with make_{ty}(...)"
                ),
                _ => format!("a conversion to '{ty}' takes one value, not {}", args.len()),
            };
            return Err(Diagnostic::new(span, message));
        }
        let value = args.pop().unwrap_or(Expr {
            kind: ExprKind::Int {
                value: 0,
                unsigned: false,
                long: false,
                hex: false,
            },
            span,
        });
        Ok(Expr {
            kind: ExprKind::Cast(ty, Box::new(value)),
            span,
        })
    }

    /// The initialiser of a declarator without `=`: a constructor call `T x(a, b)`, braces
    /// `T x{a, b}`, or for a local `dim3` (`automatic`) without either, its default constructor
    /// (every component 1). A `uint3`, which memplay does not tell from a `dim3`, gets it too:
    /// C++ leaves its value indeterminate, so 1s are as good as any. `None` leaves the variable
    /// uninitialised.
    pub(super) fn direct_initializer(
        &mut self,
        ty: &Type,
        at: Span,
        automatic: bool,
    ) -> Result<Option<Initializer>, Diagnostic> {
        if self.at(Punct::LParen) {
            let (args, _, close) = self.constructor_arguments()?;
            let span = at.to(close);
            if args.is_empty() {
                return Err(Diagnostic::new(
                    span,
                    "empty parentheses declare a function here; drop them to declare a variable",
                ));
            }
            return Ok(Some(Initializer::Expr(self.construct(
                ty.clone(),
                args,
                span,
            )?)));
        }
        if self.at(Punct::LBrace) {
            // C++11's list initialisation: `dim3 b{16, 16}` calls the constructor, `int n{4}`
            // is `int n = 4`, and a vector's braces are its components as after `=`.
            let list = self.initializer()?;
            let Initializer::List(items, span) = &list else {
                return Ok(Some(list));
            };
            let values: Option<Vec<Expr>> = items
                .iter()
                .map(|item| match item {
                    Initializer::Expr(e) => Some(e.clone()),
                    Initializer::List(..) => None,
                })
                .collect();
            return Ok(Some(match values {
                Some(values) if *ty == DIM3 => {
                    Initializer::Expr(self.construct(DIM3, values, *span)?)
                }
                Some(mut values) if values.len() == 1 && !matches!(ty, Type::Vector(..)) => {
                    Initializer::Expr(values.remove(0))
                }
                _ => list,
            }));
        }
        if automatic && *ty == DIM3 {
            return Ok(Some(Initializer::Expr(self.construct(
                DIM3,
                Vec::new(),
                at,
            )?)));
        }
        Ok(None)
    }
}
