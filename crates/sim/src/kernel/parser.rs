//! The parser: tokens to a syntax tree, by recursive descent with precedence climbing.
//!
//! It reads the C subset of `ast`: file-scope `__constant__`/`__device__` variables, `__global__`
//! kernels and `__device__` helpers, declarations, statements and C's expression grammar with its
//! precedence levels (C11 standard, section 6.5). Errors name what was expected and point at the
//! token where it was not found; a missing `;` points just after the token it should follow, as
//! clang does. Nesting is limited, so no input can overflow the stack.

use super::ast::*;
use super::lexer::{Punct, Token, TokenKind};
use super::limits::{MAX_NESTING, MAX_TREE_DEPTH};
use super::span::{Diagnostic, Span};

/// Words that may start a declaration.
const DECL_WORDS: [&str; 35] = [
    "void",
    "bool",
    "char",
    "short",
    "int",
    "long",
    "unsigned",
    "signed",
    "float",
    "double",
    "size_t",
    "const",
    "volatile",
    "register",
    "static",
    "inline",
    "extern",
    "__shared__",
    "__constant__",
    "__device__",
    "__global__",
    "__host__",
    "__forceinline__",
    "__noinline__",
    "__restrict__",
    "float2",
    "float4",
    "int2",
    "int4",
    "uint2",
    "uint4",
    "double2",
    "uint",
    "ptrdiff_t",
    "__inline__",
];

fn is_decl_word(word: &str) -> bool {
    DECL_WORDS.contains(&word)
}

/// Parses a preprocessed token stream.
pub fn parse(tokens: &[Token]) -> Result<TranslationUnit, Diagnostic> {
    let mut parser = Parser {
        tokens,
        pos: 0,
        nesting: 0,
    };
    let mut unit = TranslationUnit::default();
    while parser.pos < tokens.len() {
        if parser.eat(Punct::Semi) {
            continue;
        }
        unit.items.push(parser.item()?);
    }
    Ok(unit)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    nesting: u32,
}

/// What a declaration's specifiers said.
struct Specifiers {
    base: Type,
    is_const: bool,
    storage: Storage,
    function: Option<FunctionKind>,
    span: Span,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.pos)
    }

    fn peek_at(&self, ahead: usize) -> Option<&'a Token> {
        self.tokens.get(self.pos + ahead)
    }

    fn at(&self, p: Punct) -> bool {
        self.peek().is_some_and(|t| t.is_punct(p))
    }

    fn at_word(&self, word: &str) -> bool {
        self.peek().and_then(|t| t.ident()) == Some(word)
    }

    fn eat(&mut self, p: Punct) -> bool {
        if self.at(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// The span where an error about the current position belongs: the current token, or just
    /// after the last one at the end of the input.
    fn here(&self) -> Span {
        match self.peek() {
            Some(t) => t.span,
            None => self.previous_end(),
        }
    }

    fn previous_end(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map(|t| t.span.just_after())
            .unwrap_or(Span {
                line: 1,
                col: 1,
                start: 0,
                end: 0,
            })
    }

    fn previous_span(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map(|t| t.span)
            .unwrap_or_default()
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(t) => t.kind.describe(),
            None => "the end of the file".to_string(),
        }
    }

    fn error_here(&self, expected: &str) -> Diagnostic {
        Diagnostic::new(
            self.here(),
            format!("expected {expected}, found {}", self.found()),
        )
    }

    fn expect(&mut self, p: Punct) -> Result<Span, Diagnostic> {
        if let Some(t) = self.peek() {
            if t.is_punct(p) {
                self.pos += 1;
                return Ok(t.span);
            }
        }
        Err(self.error_here(&format!("'{}'", p.as_str())))
    }

    /// A `;` that ends a statement or declaration; when missing, the error points just after the
    /// previous token, where the `;` belongs.
    fn expect_semi(&mut self, after: &str) -> Result<(), Diagnostic> {
        if self.eat(Punct::Semi) {
            return Ok(());
        }
        Err(Diagnostic::new(
            self.previous_end(),
            format!("expected ';' after {after}, found {}", self.found()),
        ))
    }

    fn ident(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match self.peek() {
            Some(t) => match t.ident() {
                Some(name) if !is_decl_word(name) && !is_statement_word(name) => {
                    self.pos += 1;
                    Ok((name.to_string(), t.span))
                }
                _ => Err(self.error_here(what)),
            },
            None => Err(self.error_here(what)),
        }
    }

    fn enter(&mut self) -> Result<(), Diagnostic> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(Diagnostic::new(
                self.here(),
                "the code is nested too deeply",
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    fn starts_declaration(&self) -> bool {
        self.peek()
            .and_then(|t| t.ident())
            .is_some_and(is_decl_word)
    }

    // ----- declarations -----

    /// Reads storage classes, qualifiers and the base type.
    fn specifiers(&mut self) -> Result<Specifiers, Diagnostic> {
        let start = self.here();
        let mut storage = Storage::Automatic;
        let mut is_extern = false;
        let mut is_const = false;
        let mut function = None;
        let mut device = false;
        let mut unsigned = None::<bool>;
        let mut longs = 0;
        let mut short = false;
        let mut base: Option<(&str, Span)> = None;
        while let Some(t) = self.peek() {
            let Some(word) = t.ident() else { break };
            match word {
                "const" => is_const = true,
                "volatile" | "register" | "static" | "inline" | "__inline__"
                | "__forceinline__" | "__noinline__" | "__restrict__" | "__host__" => {}
                "extern" => is_extern = true,
                "__shared__" => storage = Storage::Shared,
                "__constant__" => storage = Storage::Constant,
                "__device__" => device = true,
                "__global__" => function = Some(FunctionKind::Kernel),
                "unsigned" => unsigned = Some(true),
                "signed" => unsigned = Some(false),
                "long" => longs += 1,
                "short" => short = true,
                "void" | "bool" | "char" | "int" | "float" | "double" | "size_t" | "float2"
                | "float4" | "int2" | "int4" | "uint2" | "uint4" | "double2" | "uint"
                | "ptrdiff_t" => {
                    if let Some((previous, _)) = base {
                        if !(previous == "int" || word == "int") || longs + usize::from(short) == 0
                        {
                            return Err(Diagnostic::new(
                                t.span,
                                format!("'{word}' after '{previous}' in one type"),
                            ));
                        }
                    }
                    if base.is_none() || word != "int" {
                        base = Some((word, t.span));
                    }
                }
                _ => break,
            }
            self.pos += 1;
        }
        if device {
            if function.is_none() && storage == Storage::Automatic {
                storage = Storage::Device;
            }
            if function.is_none() {
                function = Some(FunctionKind::Device);
            }
        }
        if is_extern && storage == Storage::Shared {
            storage = Storage::ExternShared;
        }
        let unsigned_flag = unsigned.unwrap_or(false);
        let base_type = match base.map(|(w, _)| w) {
            Some("void") => Type::Void,
            Some("bool") => Type::Scalar(Scalar::Bool),
            Some("char") => Type::Scalar(if unsigned_flag {
                Scalar::U8
            } else {
                Scalar::I8
            }),
            Some("float") => Type::Scalar(Scalar::F32),
            Some("double") => Type::Scalar(Scalar::F64),
            Some("size_t") => Type::Scalar(Scalar::U64),
            Some("ptrdiff_t") => Type::Scalar(Scalar::I64),
            Some("uint") => Type::Scalar(Scalar::U32),
            Some("float2") => Type::Vector(Scalar::F32, 2),
            Some("float4") => Type::Vector(Scalar::F32, 4),
            Some("int2") => Type::Vector(Scalar::I32, 2),
            Some("int4") => Type::Vector(Scalar::I32, 4),
            Some("uint2") => Type::Vector(Scalar::U32, 2),
            Some("uint4") => Type::Vector(Scalar::U32, 4),
            Some("double2") => Type::Vector(Scalar::F64, 2),
            Some("int") | None => {
                if base.is_none() && unsigned.is_none() && longs == 0 && !short {
                    return Err(self.error_here("a type"));
                }
                match (longs > 0, short, unsigned_flag) {
                    (true, _, false) => Type::Scalar(Scalar::I64),
                    (true, _, true) => Type::Scalar(Scalar::U64),
                    (false, true, false) => Type::Scalar(Scalar::I16),
                    (false, true, true) => Type::Scalar(Scalar::U16),
                    (false, false, false) => Type::Scalar(Scalar::I32),
                    (false, false, true) => Type::Scalar(Scalar::U32),
                }
            }
            Some(other) => return Err(Diagnostic::new(start, format!("unknown type '{other}'"))),
        };
        Ok(Specifiers {
            base: base_type,
            is_const,
            storage,
            function,
            span: start.to(self.previous_span()),
        })
    }

    /// Reads `*`, `* const`, `__restrict__` before a declarator's name.
    fn pointers(&mut self, mut ty: Type, mut pointee_const: bool) -> Type {
        while self.eat(Punct::Star) {
            ty = Type::pointer_to(ty, pointee_const);
            pointee_const = false;
            while self.at_word("const") || self.at_word("__restrict__") || self.at_word("volatile")
            {
                self.pos += 1;
            }
        }
        ty
    }

    fn dims(&mut self) -> Result<Vec<Option<Expr>>, Diagnostic> {
        let mut dims = Vec::new();
        while self.eat(Punct::LBracket) {
            if self.eat(Punct::RBracket) {
                dims.push(None);
                continue;
            }
            let size = self.expr()?;
            self.expect(Punct::RBracket)?;
            dims.push(Some(size));
        }
        Ok(dims)
    }

    fn initializer(&mut self) -> Result<Initializer, Diagnostic> {
        if self.at(Punct::LBrace) {
            let open = self.expect(Punct::LBrace)?;
            self.enter()?;
            let mut items = Vec::new();
            while !self.at(Punct::RBrace) {
                items.push(self.initializer()?);
                if !self.eat(Punct::Comma) {
                    break;
                }
            }
            let close = self.expect(Punct::RBrace)?;
            self.leave();
            return Ok(Initializer::List(items, open.to(close)));
        }
        Ok(Initializer::Expr(self.assignment_checked()?))
    }

    /// A declaration after its specifiers: declarators separated by commas, then `;`.
    fn declaration_rest(
        &mut self,
        spec: Specifiers,
        first_name: Option<(String, Span, Type)>,
    ) -> Result<Declaration, Diagnostic> {
        let mut declarators = Vec::new();
        let mut pending = first_name;
        loop {
            let (name, span, ty) = match pending.take() {
                Some(first) => first,
                None => {
                    let ty = self.pointers(spec.base.clone(), spec.is_const);
                    let (name, span) = self.ident("a variable name")?;
                    (name, span, ty)
                }
            };
            let dims = self.dims()?;
            let init = if self.eat(Punct::Assign) {
                Some(self.initializer()?)
            } else {
                None
            };
            declarators.push(Declarator {
                name,
                span,
                ty,
                dims,
                init,
            });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect_semi("the declaration")?;
        Ok(Declaration {
            storage: spec.storage,
            is_const: spec.is_const,
            declarators,
            span: spec.span.to(self.previous_span()),
        })
    }

    fn item(&mut self) -> Result<Item, Diagnostic> {
        if !self.starts_declaration() {
            return Err(self.error_here("a kernel, a __device__ function or a file-scope variable"));
        }
        let spec = self.specifiers()?;
        let ty = self.pointers(spec.base.clone(), spec.is_const);
        let (name, span) = self.ident("a name")?;
        if self.at(Punct::LParen) {
            return Ok(Item::Function(self.function(spec, ty, name, span)?));
        }
        if spec.storage == Storage::Automatic
            || spec.storage == Storage::Shared
            || spec.storage == Storage::ExternShared
        {
            let what = if spec.storage == Storage::Automatic {
                "host variables"
            } else {
                "__shared__ variables at file scope"
            };
            return Err(Diagnostic::new(
                span,
                format!("{what} are not simulated: a file-scope variable needs __device__ or __constant__"),
            ));
        }
        Ok(Item::Variable(
            self.declaration_rest(spec, Some((name, span, ty)))?,
        ))
    }

    fn function(
        &mut self,
        spec: Specifiers,
        ret: Type,
        name: String,
        span: Span,
    ) -> Result<Function, Diagnostic> {
        let Some(kind) = spec.function else {
            return Err(Diagnostic::new(
                span,
                format!("'{name}' is a host function; only __global__ kernels and __device__ functions are simulated"),
            ));
        };
        self.expect(Punct::LParen)?;
        let mut params = Vec::new();
        if self.at_word("void") && self.peek_at(1).is_some_and(|t| t.is_punct(Punct::RParen)) {
            self.pos += 1;
        }
        while !self.at(Punct::RParen) {
            if !self.starts_declaration() {
                return Err(self.error_here("a parameter type"));
            }
            let pspec = self.specifiers()?;
            let mut ty = self.pointers(pspec.base.clone(), pspec.is_const);
            let (pname, pspan) = self.ident("a parameter name")?;
            // `float a[]` and `float a[N]` as parameters are pointers.
            let dims = self.dims()?;
            if !dims.is_empty() {
                ty = Type::pointer_to(ty, pspec.is_const);
            }
            let is_const = pspec.is_const && !matches!(ty, Type::Pointer { .. });
            params.push(Param {
                name: pname,
                span: pspan,
                ty,
                is_const,
            });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect(Punct::RParen)?;
        if !self.at(Punct::LBrace) {
            return Err(self.error_here("'{' to start the body of the function"));
        }
        let (body, _, end_span) = self.block()?;
        Ok(Function {
            kind,
            ret,
            name,
            span,
            params,
            body,
            end_span,
        })
    }

    // ----- statements -----

    /// A `{ ... }` block: its statements, its whole span and the span of its closing brace.
    fn block(&mut self) -> Result<(Vec<Stmt>, Span, Span), Diagnostic> {
        let open = self.expect(Punct::LBrace)?;
        self.enter()?;
        let mut stmts = Vec::new();
        loop {
            if self.at(Punct::RBrace) {
                break;
            }
            if self.peek().is_none() {
                return Err(Diagnostic::new(open, "this '{' is never closed"));
            }
            stmts.push(self.statement()?);
        }
        let close = self.expect(Punct::RBrace)?;
        self.leave();
        Ok((stmts, open.to(close), close))
    }

    fn statement(&mut self) -> Result<Stmt, Diagnostic> {
        self.enter()?;
        let result = self.statement_inner();
        self.leave();
        result
    }

    fn statement_inner(&mut self) -> Result<Stmt, Diagnostic> {
        let start = self.here();
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
                let cond = self.expr_checked()?;
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
                let cond = self.expr_checked()?;
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
                let cond = self.expr_checked()?;
                self.expect(Punct::RParen)?;
                self.expect_semi("'do ... while (...)'")?;
                StmtKind::DoWhile(Box::new(body), cond)
            }
            Some("for") => {
                self.pos += 1;
                self.expect(Punct::LParen)?;
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
                    let e = self.expr_checked()?;
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
                    Some(self.expr_checked()?)
                };
                self.expect_semi("the loop's condition")?;
                let step = if self.at(Punct::RParen) {
                    None
                } else {
                    Some(self.expr_checked()?)
                };
                self.expect(Punct::RParen)?;
                let body = Box::new(self.statement()?);
                StmtKind::For {
                    init,
                    cond,
                    step,
                    body,
                }
            }
            Some("return") => {
                self.pos += 1;
                let value = if self.at(Punct::Semi) {
                    None
                } else {
                    Some(self.expr_checked()?)
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
            Some(w @ ("switch" | "case" | "default" | "goto")) => {
                return Err(Diagnostic::new(
                    start,
                    format!("'{w}' is not supported by the simulator; use if/else"),
                ));
            }
            Some("else") => return Err(Diagnostic::new(start, "'else' without a matching 'if'")),
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
                let e = self.expr_checked()?;
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

    /// A full expression whose tree depth is checked.
    fn expr_checked(&mut self) -> Result<Expr, Diagnostic> {
        let e = self.expr()?;
        check_depth(&e)?;
        Ok(e)
    }

    fn assignment_checked(&mut self) -> Result<Expr, Diagnostic> {
        let e = self.assignment()?;
        check_depth(&e)?;
        Ok(e)
    }

    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let mut e = self.assignment()?;
        while self.eat(Punct::Comma) {
            let rhs = self.assignment()?;
            let span = e.span.to(rhs.span);
            e = Expr {
                kind: ExprKind::Comma(Box::new(e), Box::new(rhs)),
                span,
            };
        }
        self.leave();
        Ok(e)
    }

    fn assignment(&mut self) -> Result<Expr, Diagnostic> {
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
        self.pos += 1;
        self.enter()?;
        let rhs = self.assignment()?;
        self.leave();
        let span = lhs.span.to(rhs.span);
        Ok(Expr {
            kind: ExprKind::Assign(op, Box::new(lhs), Box::new(rhs)),
            span,
        })
    }

    fn conditional(&mut self) -> Result<Expr, Diagnostic> {
        let cond = self.binary(1)?;
        if !self.eat(Punct::Question) {
            return Ok(cond);
        }
        self.enter()?;
        let a = self.expr()?;
        self.expect(Punct::Colon)?;
        let b = self.conditional()?;
        self.leave();
        let span = cond.span.to(b.span);
        Ok(Expr {
            kind: ExprKind::Conditional(Box::new(cond), Box::new(a), Box::new(b)),
            span,
        })
    }

    fn binary_op(&self) -> Option<(BinaryOp, u8)> {
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

    /// Precedence climbing over the left-associative binary operators.
    fn binary(&mut self, min_prec: u8) -> Result<Expr, Diagnostic> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.binary_op() {
            if prec < min_prec {
                break;
            }
            self.pos += 1;
            self.enter()?;
            let rhs = self.binary(prec + 1)?;
            self.leave();
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    /// `(` followed by a type starts a cast (there are no typedefs, so this is unambiguous).
    fn at_cast(&self) -> bool {
        self.at(Punct::LParen)
            && self.peek_at(1).and_then(|t| t.ident()).is_some_and(|w| {
                is_decl_word(w)
                    && !matches!(w, "__shared__" | "__constant__" | "extern" | "__global__")
            })
    }

    /// A type name as in a cast or `sizeof(T)`: specifiers, then `*`s, then `[N]`s are not allowed.
    fn type_name(&mut self) -> Result<Type, Diagnostic> {
        let spec = self.specifiers()?;
        Ok(self.pointers(spec.base, spec.is_const))
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let result = self.unary_inner();
        self.leave();
        result
    }

    fn unary_inner(&mut self) -> Result<Expr, Diagnostic> {
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
            let operand = self.unary()?;
            let span = start.to(operand.span);
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(operand)),
                span,
            });
        }
        if self.at_cast() {
            self.pos += 1;
            let ty = self.type_name()?;
            self.expect(Punct::RParen)?;
            let operand = self.unary()?;
            let span = start.to(operand.span);
            return Ok(Expr {
                kind: ExprKind::Cast(ty, Box::new(operand)),
                span,
            });
        }
        if self.at_word("sizeof") {
            self.pos += 1;
            if self.at_cast() {
                self.pos += 1;
                let ty = self.type_name()?;
                let close = self.expect(Punct::RParen)?;
                return Ok(Expr {
                    kind: ExprKind::SizeofType(ty),
                    span: start.to(close),
                });
            }
            let operand = self.unary()?;
            let span = start.to(operand.span);
            return Ok(Expr {
                kind: ExprKind::SizeofExpr(Box::new(operand)),
                span,
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, Diagnostic> {
        let mut e = self.primary()?;
        loop {
            if self.eat(Punct::LBracket) {
                let index = self.expr()?;
                let close = self.expect(Punct::RBracket)?;
                let span = e.span.to(close);
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(index)),
                    span,
                };
            } else if self.at(Punct::LParen) {
                let ExprKind::Ident(name) = &e.kind else {
                    return Err(Diagnostic::new(
                        self.here(),
                        "only a function named directly can be called",
                    ));
                };
                let (name, name_span) = (name.clone(), e.span);
                self.pos += 1;
                let mut args = Vec::new();
                while !self.at(Punct::RParen) {
                    args.push(self.assignment()?);
                    if !self.eat(Punct::Comma) {
                        break;
                    }
                }
                let close = self.expect(Punct::RParen)?;
                e = Expr {
                    kind: ExprKind::Call {
                        name,
                        name_span,
                        args,
                    },
                    span: name_span.to(close),
                };
            } else if self.eat(Punct::Dot) {
                let (field, field_span) = self.ident("a field name after '.'")?;
                let span = e.span.to(field_span);
                e = Expr {
                    kind: ExprKind::Member {
                        base: Box::new(e),
                        field,
                        field_span,
                    },
                    span,
                };
            } else if self.at(Punct::Arrow) {
                return Err(Diagnostic::new(
                    self.here(),
                    "'->' is not supported: the kernel language has no structs",
                ));
            } else if self.at(Punct::PlusPlus) || self.at(Punct::MinusMinus) {
                let op = if self.at(Punct::PlusPlus) {
                    UnaryOp::PostInc
                } else {
                    UnaryOp::PostDec
                };
                let span = e.span.to(self.here());
                self.pos += 1;
                e = Expr {
                    kind: ExprKind::Unary(op, Box::new(e)),
                    span,
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, Diagnostic> {
        let Some(t) = self.peek() else {
            return Err(self.error_here("an expression"));
        };
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
            TokenKind::Ident(name) if name == "true" || name == "false" => {
                ExprKind::Bool(name == "true")
            }
            TokenKind::Ident(name) if !is_decl_word(name) && !is_statement_word(name) => {
                ExprKind::Ident(name.clone())
            }
            TokenKind::Punct(Punct::LParen) => {
                let open = t.span;
                self.pos += 1;
                let mut inner = self.expr()?;
                let close = self.expect(Punct::RParen)?;
                inner.span = open.to(close);
                return Ok(inner);
            }
            _ => return Err(self.error_here("an expression")),
        };
        self.pos += 1;
        Ok(Expr { kind, span: t.span })
    }
}

fn is_statement_word(word: &str) -> bool {
    matches!(
        word,
        "if" | "else"
            | "while"
            | "do"
            | "for"
            | "return"
            | "break"
            | "continue"
            | "switch"
            | "case"
            | "default"
            | "goto"
            | "sizeof"
    )
}

/// Rejects expression trees deeper than `MAX_TREE_DEPTH`, without recursion.
fn check_depth(e: &Expr) -> Result<(), Diagnostic> {
    let mut stack: Vec<(&Expr, usize)> = vec![(e, 1)];
    while let Some((e, depth)) = stack.pop() {
        if depth > MAX_TREE_DEPTH {
            return Err(Diagnostic::new(
                e.span,
                "this expression is too deeply nested for the simulator",
            ));
        }
        match &e.kind {
            ExprKind::Unary(_, a) | ExprKind::Cast(_, a) | ExprKind::SizeofExpr(a) => {
                stack.push((a, depth + 1))
            }
            ExprKind::Member { base, .. } => stack.push((base, depth + 1)),
            ExprKind::Binary(_, a, b)
            | ExprKind::Assign(_, a, b)
            | ExprKind::Index(a, b)
            | ExprKind::Comma(a, b) => {
                stack.push((a, depth + 1));
                stack.push((b, depth + 1));
            }
            ExprKind::Conditional(a, b, c) => {
                stack.push((a, depth + 1));
                stack.push((b, depth + 1));
                stack.push((c, depth + 1));
            }
            ExprKind::Call { args, .. } => {
                for a in args {
                    stack.push((a, depth + 1));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::lexer::lex;
    use super::*;

    /// Parses `source` and shows either the outline of the file (one line per function with its
    /// parameter types and statement count, one per file-scope variable) or the error.
    fn check(source: &str, expected: &[&str]) {
        let shown = match lex(source).and_then(|t| parse(&t)) {
            Ok(unit) => unit
                .items
                .iter()
                .map(|item| match item {
                    Item::Function(f) => {
                        let params: Vec<String> = f
                            .params
                            .iter()
                            .map(|p| format!("{} {}", p.ty, p.name))
                            .collect();
                        format!(
                            "{:?} {}({}) {} statements",
                            f.kind,
                            f.name,
                            params.join(", "),
                            f.body.len()
                        )
                    }
                    Item::Variable(d) => {
                        let names: Vec<String> = d
                            .declarators
                            .iter()
                            .map(|x| format!("{} {}", x.ty, x.name))
                            .collect();
                        format!("{:?} {}", d.storage, names.join(", "))
                    }
                })
                .collect::<Vec<_>>(),
            Err(d) => vec![d.to_string()],
        };
        assert_eq!(shown, expected);
    }

    #[test]
    fn the_naive_matmul_kernel_parses() {
        check(
            "__global__ void mm(const float* a, const float* b, float* c, int n) {\n\
             int row = blockIdx.y * blockDim.y + threadIdx.y;\n\
             int col = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (row < n && col < n) { float r = 0; for (int k = 0; k < n; ++k) r += a[row*n+k] * b[k*n+col]; c[row*n+col] = r; }\n\
             }",
            &["Kernel mm(const float* a, const float* b, float* c, int n) 3 statements"],
        );
    }

    #[test]
    fn file_scope_constant_and_device_variables_parse() {
        check(
            "__constant__ float weights[16];\n__device__ int counter = 0, other;\n__constant__ int thirteen = 13;",
            &["Constant float weights", "Device int counter, int other", "Constant int thirteen"],
        );
    }

    #[test]
    fn casts_pointers_vectors_and_sizeof_parse() {
        check(
            "__device__ float twice(float x) { return 2.0f * x; }\n\
             __global__ void k(float2* r, char* p, size_t pitch, unsigned int n) {\n\
               float* row = (float*)((char*)p + n * pitch);\n\
               float2 v = r[threadIdx.x]; v.y = (float)sizeof(float4) + twice(v.x);\n\
               register int k = n > 3 ? 1 : 2, j = -k;\n\
               do { k--; } while (k > 0);\n\
               extern __shared__ int dyn[];\n\
             }",
            &[
                "Device twice(float x) 1 statements",
                "Kernel k(float2* r, char* p, size_t pitch, unsigned int n) 6 statements",
            ],
        );
    }

    #[test]
    fn a_missing_semicolon_points_just_after_the_previous_token() {
        check(
            "__global__ void k(int* a) {\n  int i = 0\n  a[i] = 1;\n}",
            &["2:12: expected ';' after the declaration, found 'a'"],
        );
        check(
            "__global__ void k(int* a) {\n  a[0] = 1\n}",
            &["2:11: expected ';' after the expression, found '}'"],
        );
    }

    #[test]
    fn an_unclosed_brace_points_at_it() {
        check(
            "__global__ void k(int* a) {\n  if (a) {\n",
            &["2:10: this '{' is never closed"],
        );
    }

    #[test]
    fn a_host_function_is_rejected_by_name() {
        check(
            "int main() { return 0; }",
            &["1:5: 'main' is a host function; only __global__ kernels and __device__ functions are simulated"],
        );
    }

    #[test]
    fn switch_is_reported_as_unsupported() {
        check(
            "__global__ void k(int x) { switch (x) { } }",
            &["1:28: 'switch' is not supported by the simulator; use if/else"],
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let source = format!(
            "__global__ void k(int x) {{ x = {}1{}; }}",
            "(".repeat(500),
            ")".repeat(500)
        );
        let found = lex(&source).and_then(|t| parse(&t));
        assert_eq!(
            found.map_err(|d| d.message),
            Err("the code is nested too deeply".to_string())
        );
        let chain = format!("__global__ void k(int x) {{ x = 1{}; }}", "+1".repeat(5000));
        let found = lex(&chain).and_then(|t| parse(&t));
        assert_eq!(
            found.map_err(|d| d.message),
            Err("this expression is too deeply nested for the simulator".to_string())
        );
    }
}
