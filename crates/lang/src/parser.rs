//! The parser: tokens to a syntax tree, by recursive descent with precedence climbing.
//!
//! It reads the C subset of `ast`: file-scope `__constant__`/`__device__` variables, `__global__`
//! kernels and `__device__` helpers, declarations, statements and C's expression grammar with its
//! precedence levels (C11 standard, section 6.5). Errors name what was expected and point at the
//! token where it was not found; a missing `;` points just after the token it should follow, as
//! clang does.
//!
//! No input can overflow the stack, here or in the stages after: nesting (brackets, blocks,
//! statement bodies, prefix operators, `?:`, assignment chains) is limited to `limits::MAX_NESTING`
//! levels as the parser descends, every expression node knows its depth as it is made and none
//! deeper than `limits::MAX_TREE_DEPTH` is built (so long flat chains such as `1+1+...+1` stop
//! there too), and a type's pointer levels and array dimensions are limited to
//! `limits::MAX_TYPE_DEPTH`.
//!
//! Constructs that are C but not simulated (`switch`, `case`, `default`, `goto` and labels, `->`)
//! are parsed and kept as `StmtKind::Unsupported` in place of the statement they make or appear
//! in, so only the function that uses them fails (in sema); a syntax error fails the whole file.

use super::ast::*;
use super::lexer::{Punct, Token, TokenKind};
use super::limits::{MAX_NESTING, MAX_TREE_DEPTH, MAX_TYPE_DEPTH};
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
        unsupported: None,
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
    /// Levels of nesting entered and not yet left (`nested`).
    nesting: u32,
    /// An unsupported construct (`->`) met in an expression of the statement being parsed;
    /// `statement` turns that statement into `StmtKind::Unsupported`.
    unsupported: Option<Diagnostic>,
}

/// An expression and the depth of its tree, known as it is built (a leaf is 1 deep).
struct Tree {
    expr: Expr,
    depth: usize,
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

    /// Runs `f` one nesting level deeper, or fails at the current token when that is more than
    /// `MAX_NESTING` levels.
    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, Diagnostic>,
    ) -> Result<T, Diagnostic> {
        if self.nesting >= MAX_NESTING {
            return Err(Diagnostic::new(
                self.here(),
                format!("the code nests deeper than the simulator's limit of {MAX_NESTING} levels"),
            ));
        }
        self.nesting += 1;
        let result = f(self);
        self.nesting -= 1;
        result
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

    /// Reads `*`, `* const`, `__restrict__` before a declarator's name (at most
    /// `MAX_TYPE_DEPTH` levels). Also says whether the declarator's own pointer is `const`
    /// (`float* const p`: the `const` after the last `*`), which the pointer type cannot carry.
    fn pointers(
        &mut self,
        mut ty: Type,
        mut pointee_const: bool,
    ) -> Result<(Type, bool), Diagnostic> {
        let mut levels = 0;
        let mut pointer_const = false;
        while self.at(Punct::Star) {
            levels += 1;
            if levels > MAX_TYPE_DEPTH {
                return Err(Diagnostic::new(
                    self.here(),
                    format!(
                        "this type has more pointer levels than the simulator's limit of \
                         {MAX_TYPE_DEPTH}"
                    ),
                ));
            }
            self.pos += 1;
            ty = Type::pointer_to(ty, pointee_const);
            pointee_const = false;
            pointer_const = false;
            while self.at_word("const") || self.at_word("__restrict__") || self.at_word("volatile")
            {
                if self.at_word("const") {
                    // A `const` after this `*` makes this pointer constant, and what the next
                    // `*` points to.
                    pointee_const = true;
                    pointer_const = true;
                }
                self.pos += 1;
            }
        }
        Ok((ty, pointer_const))
    }

    /// Array dimensions `[N]` after a declarator's name (at most `MAX_TYPE_DEPTH`).
    fn dims(&mut self) -> Result<Vec<Option<Expr>>, Diagnostic> {
        let mut dims = Vec::new();
        while self.at(Punct::LBracket) {
            if dims.len() == MAX_TYPE_DEPTH {
                return Err(Diagnostic::new(
                    self.here(),
                    format!(
                        "this array has more dimensions than the simulator's limit of \
                         {MAX_TYPE_DEPTH}"
                    ),
                ));
            }
            self.pos += 1;
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
            let items = self.nested(|p| {
                let mut items = Vec::new();
                while !p.at(Punct::RBrace) {
                    items.push(p.initializer()?);
                    if !p.eat(Punct::Comma) {
                        break;
                    }
                }
                Ok(items)
            })?;
            let close = self.expect(Punct::RBrace)?;
            return Ok(Initializer::List(items, open.to(close)));
        }
        Ok(Initializer::Expr(self.assignment_expr()?))
    }

    /// A declaration after its specifiers: declarators separated by commas, then `;`.
    fn declaration_rest(
        &mut self,
        spec: Specifiers,
        first_name: Option<(String, Span, Type, bool)>,
    ) -> Result<Declaration, Diagnostic> {
        let mut declarators = Vec::new();
        let mut pending = first_name;
        loop {
            let (name, span, ty, pointer_const) = match pending.take() {
                Some(first) => first,
                None => {
                    let (ty, pointer_const) = self.pointers(spec.base.clone(), spec.is_const)?;
                    let (name, span) = self.ident("a variable name")?;
                    (name, span, ty, pointer_const)
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
                pointer_const,
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

    /// A file-scope item. An unsupported construct outside any statement (`->` in a file-scope
    /// initialiser or an array parameter's size) fails the file: it has no function to fail.
    fn item(&mut self) -> Result<Item, Diagnostic> {
        let item = self.item_inner()?;
        match self.unsupported.take() {
            Some(diagnostic) => Err(diagnostic),
            None => Ok(item),
        }
    }

    fn item_inner(&mut self) -> Result<Item, Diagnostic> {
        if !self.starts_declaration() {
            return Err(self.error_here("a kernel, a __device__ function or a file-scope variable"));
        }
        let spec = self.specifiers()?;
        let (ty, pointer_const) = self.pointers(spec.base.clone(), spec.is_const)?;
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
        Ok(Item::Variable(self.declaration_rest(
            spec,
            Some((name, span, ty, pointer_const)),
        )?))
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
            let (mut ty, mut pointer_const) = self.pointers(pspec.base.clone(), pspec.is_const)?;
            let (pname, pspan) = self.ident("a parameter name")?;
            // `float a[]` and `float a[N]` as parameters are pointers.
            let dims = self.dims()?;
            if !dims.is_empty() {
                ty = Type::pointer_to(ty, pspec.is_const);
                pointer_const = false;
            }
            // The parameter itself is constant: `const int n`, or `float* const p`. In `const
            // float* p` only what `p` points to is.
            let is_const = if matches!(ty, Type::Pointer { .. }) {
                pointer_const
            } else {
                pspec.is_const
            };
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

    /// A `{ ... }` block: its statements, its whole span and the span of its closing brace. Each
    /// statement is a nesting level deeper than the block.
    fn block(&mut self) -> Result<(Vec<Stmt>, Span, Span), Diagnostic> {
        let open = self.expect(Punct::LBrace)?;
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
        Ok((stmts, open.to(close), close))
    }

    /// A statement, one nesting level deeper. One that contains an unsupported construct in its
    /// own expressions (not in a nested statement, which is the one that fails) becomes
    /// `StmtKind::Unsupported`.
    fn statement(&mut self) -> Result<Stmt, Diagnostic> {
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

    fn statement_inner(&mut self) -> Result<Stmt, Diagnostic> {
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
            Some("return") => {
                self.pos += 1;
                let value = if self.at(Punct::Semi) {
                    None
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
            // Not simulated, but read to the end of the statement (a `switch`'s body included),
            // so that other functions of the file still compile.
            Some(w @ ("switch" | "case" | "default" | "goto")) => {
                self.pos += 1;
                match w {
                    "switch" => {
                        self.expect(Punct::LParen)?;
                        self.expr()?;
                        self.expect(Punct::RParen)?;
                        self.statement()?;
                    }
                    "case" => {
                        self.conditional()?;
                        self.expect(Punct::Colon)?;
                    }
                    "default" => {
                        self.expect(Punct::Colon)?;
                    }
                    _ => {
                        self.ident("a label after 'goto'")?;
                        self.expect_semi("'goto'")?;
                    }
                }
                StmtKind::Unsupported(Diagnostic::new(
                    start,
                    format!("'{w}' is not supported by the simulator; use if/else"),
                ))
            }
            Some(w)
                if !is_decl_word(w)
                    && !is_statement_word(w)
                    && self.peek_at(1).is_some_and(|t| t.is_punct(Punct::Colon)) =>
            {
                // `name:` can only be a label here (a `?:` needs its `?` first).
                self.pos += 2;
                StmtKind::Unsupported(Diagnostic::new(
                    start,
                    "labels are not supported by the simulator (nor is 'goto')",
                ))
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

    /// A full expression (commas included).
    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        Ok(self.comma()?.expr)
    }

    /// An assignment expression (no top-level comma), as in an initialiser.
    fn assignment_expr(&mut self) -> Result<Expr, Diagnostic> {
        Ok(self.assignment()?.expr)
    }

    /// Makes a node whose deepest child is `below` levels deep, or fails when the node would be
    /// deeper than `MAX_TREE_DEPTH`, pointing at `at` (the operator that goes too deep).
    fn node(&self, kind: ExprKind, span: Span, below: usize, at: Span) -> Result<Tree, Diagnostic> {
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
    fn operator(&mut self) -> Span {
        let at = self.here();
        self.pos += 1;
        at
    }

    fn comma(&mut self) -> Result<Tree, Diagnostic> {
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

    fn assignment(&mut self) -> Result<Tree, Diagnostic> {
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

    fn conditional(&mut self) -> Result<Tree, Diagnostic> {
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

    /// Precedence climbing over the left-associative binary operators. A chain of one operator is
    /// a loop; the recursion for the right operand goes one precedence level up each time, so it
    /// is at most ten calls deep without a nesting level of its own.
    fn binary(&mut self, min_prec: u8) -> Result<Tree, Diagnostic> {
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
        Ok(self.pointers(spec.base, spec.is_const)?.0)
    }

    /// A prefix operator, cast or `sizeof`, whose operand is one nesting level deeper, or a
    /// postfix expression.
    fn unary(&mut self) -> Result<Tree, Diagnostic> {
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

    fn postfix(&mut self) -> Result<Tree, Diagnostic> {
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
                let ExprKind::Ident(name) = &e.expr.kind else {
                    return Err(Diagnostic::new(
                        self.here(),
                        "only a function named directly can be called",
                    ));
                };
                let (name, name_span) = (name.clone(), e.expr.span);
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
                if arrow && self.unsupported.is_none() {
                    // Read on, so that a syntax error later in the statement is still one; the
                    // statement around it becomes `StmtKind::Unsupported`.
                    self.unsupported = Some(Diagnostic::new(
                        at,
                        "'->' is not supported: the kernel language has no structs",
                    ));
                }
                let (field, field_span) = self.ident(if arrow {
                    "a field name after '->'"
                } else {
                    "a field name after '.'"
                })?;
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

    fn primary(&mut self) -> Result<Tree, Diagnostic> {
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

#[cfg(test)]
mod tests {
    use super::super::lexer::lex;
    use super::*;

    /// The unsupported statements among `stmts` and the statements inside them, as
    /// `  LINE:COL: message`.
    fn unsupported(stmts: &[Stmt]) -> Vec<String> {
        let mut found = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::Unsupported(d) => found.push(format!("  {d}")),
                StmtKind::Block(inner) => found.extend(unsupported(inner)),
                StmtKind::If(_, then, otherwise) => {
                    found.extend(unsupported(std::slice::from_ref(then)));
                    if let Some(otherwise) = otherwise {
                        found.extend(unsupported(std::slice::from_ref(otherwise)));
                    }
                }
                StmtKind::While(_, body)
                | StmtKind::DoWhile(body, _)
                | StmtKind::For { body, .. } => {
                    found.extend(unsupported(std::slice::from_ref(body)))
                }
                _ => {}
            }
        }
        found
    }

    /// Parses `source` and shows either the outline of the file (one line per function with its
    /// parameter types and statement count, then its unsupported statements; one line per
    /// file-scope variable) or the error.
    fn check(source: &str, expected: &[&str]) {
        let shown = match lex(source).and_then(|t| parse(&t)) {
            Ok(unit) => unit
                .items
                .iter()
                .flat_map(|item| match item {
                    Item::Function(f) => {
                        let params: Vec<String> = f
                            .params
                            .iter()
                            .map(|p| format!("{} {}", p.ty, p.name))
                            .collect();
                        let outline = format!(
                            "{:?} {}({}) {} statements",
                            f.kind,
                            f.name,
                            params.join(", "),
                            f.body.len()
                        );
                        let mut lines = vec![outline];
                        lines.extend(unsupported(&f.body));
                        lines
                    }
                    Item::Variable(d) => {
                        let names: Vec<String> = d
                            .declarators
                            .iter()
                            .map(|x| format!("{} {}", x.ty, x.name))
                            .collect();
                        vec![format!("{:?} {}", d.storage, names.join(", "))]
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
                "Kernel k(float2* r, char* p, unsigned long long pitch, unsigned int n) 6 statements",
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
    fn switch_case_default_goto_and_labels_become_unsupported_statements() {
        check(
            "__global__ void uses_switch(int* a, int x) {\n\
             \x20 switch (x) { case 1: a[0] = 1; break; default: a[0] = 2; }\n\
             \x20 a[1] = 3;\n\
             }\n\
             __global__ void uses_goto(int* a) { goto done; done: a[0] = 1; }\n\
             __global__ void fine(int* a) { a[0] = 1; }",
            &[
                "Kernel uses_switch(int* a, int x) 2 statements",
                "  2:3: 'switch' is not supported by the simulator; use if/else",
                "Kernel uses_goto(int* a) 3 statements",
                "  5:37: 'goto' is not supported by the simulator; use if/else",
                "  5:48: labels are not supported by the simulator (nor is 'goto')",
                "Kernel fine(int* a) 1 statements",
            ],
        );
    }

    #[test]
    fn an_arrow_makes_the_statement_around_it_unsupported() {
        check(
            "__global__ void k(int* a) {\n  if (a[0]) { a->x = 1; }\n  a[0] = 2;\n}",
            &[
                "Kernel k(int* a) 2 statements",
                "  2:16: '->' is not supported: the kernel language has no structs",
            ],
        );
        check(
            "__global__ void k(int* a) {\n  if (a->x) { a[0] = 1; } else { a[1] = 1; }\n}",
            &[
                "Kernel k(int* a) 1 statements",
                "  2:8: '->' is not supported: the kernel language has no structs",
            ],
        );
    }

    #[test]
    fn a_syntax_error_next_to_an_unsupported_construct_still_fails_the_file() {
        check(
            "__global__ void k(int* a) { a->x = ; }",
            &["1:36: expected an expression, found ';'"],
        );
        check(
            "__global__ void k(int x) { switch (x) { case 1: x = ; } }",
            &["1:53: expected an expression, found ';'"],
        );
        check(
            "__global__ void k(int x) { goto 3; }",
            &["1:33: expected a label after 'goto', found '3'"],
        );
    }

    #[test]
    fn an_arrow_outside_any_function_fails_the_file() {
        check(
            "__device__ int x = p->y;",
            &["1:21: '->' is not supported: the kernel language has no structs"],
        );
    }

    /// Runs `work` on a thread with a 1 MB stack, about what a browser gives WebAssembly, and
    /// returns its result (a failed assertion inside fails the test).
    fn on_a_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        let thread = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(work)
            .expect("a thread starts");
        match thread.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// `check` on a 1 MB stack.
    fn check_on_a_small_stack(source: String, expected: &[&str]) {
        let expected: Vec<String> = expected.iter().map(|e| e.to_string()).collect();
        on_a_small_stack(move || {
            let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
            check(&source, &expected)
        });
    }

    /// `__global__ void k(int* a, int x) { BODY }`: the column of `BODY` is 36.
    fn kernel(body: &str) -> String {
        format!("__global__ void k(int* a, int x) {{ {body} }}")
    }

    #[test]
    fn a_chain_of_180000_additions_stops_at_the_depth_limit() {
        check_on_a_small_stack(
            kernel(&format!("a[0] = 1{};", "+1".repeat(180_000))),
            &["1:442: this expression is deeper than the simulator's limit of 200 levels"],
        );
    }

    #[test]
    fn chains_of_and_and_comma_stop_at_the_depth_limit() {
        check_on_a_small_stack(
            kernel(&format!("a[0] = x{};", " && x".repeat(100_000))),
            &["1:1040: this expression is deeper than the simulator's limit of 200 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!("x{};", ", x".repeat(100_000))),
            &["1:634: this expression is deeper than the simulator's limit of 200 levels"],
        );
    }

    #[test]
    fn postfix_chains_stop_at_the_depth_limit() {
        check_on_a_small_stack(
            kernel(&format!("a{};", "[0]".repeat(100_000))),
            &["1:634: this expression is deeper than the simulator's limit of 200 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!("x{};", "++".repeat(100_000))),
            &["1:435: this expression is deeper than the simulator's limit of 200 levels"],
        );
    }

    #[test]
    fn a_hundred_thousand_nested_conditionals_stop_at_the_nesting_limit() {
        check_on_a_small_stack(
            kernel(&format!("a[0] = {}1;", "x ? 1 : ".repeat(100_000))),
            &["1:799: the code nests deeper than the simulator's limit of 96 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!(
                "a[0] = {}1{};",
                "x ? ".repeat(100_000),
                " : 1".repeat(100_000)
            )),
            &["1:423: the code nests deeper than the simulator's limit of 96 levels"],
        );
    }

    #[test]
    fn deep_brackets_blocks_operators_and_assignments_stop_at_the_nesting_limit() {
        let limit = |column: usize| {
            format!("1:{column}: the code nests deeper than the simulator's limit of 96 levels")
        };
        let n = 100_000;
        let cases = [
            (format!("x = {}1{};", "(".repeat(n), ")".repeat(n)), 135),
            (format!("x = {}1;", "- ".repeat(n)), 230),
            (format!("x = {}1;", "(int)".repeat(n)), 515),
            (format!("{}x = 1;{}", "{".repeat(n), "}".repeat(n)), 132),
            (format!("{}x = 1;", "if (x) ".repeat(n)), 708),
            (format!("x{} = 1;", " = x".repeat(n)), 420),
            (format!("a[{}0{}] = 1;", "a[".repeat(n), "]".repeat(n)), 228),
        ];
        for (body, column) in cases {
            check_on_a_small_stack(kernel(&body), &[&limit(column)]);
        }
    }

    #[test]
    fn deep_initializer_lists_and_types_stop_at_their_limits() {
        check_on_a_small_stack(
            kernel(&format!(
                "int v[1] = {}1{};",
                "{".repeat(100_000),
                "}".repeat(100_000)
            )),
            &["1:143: the code nests deeper than the simulator's limit of 96 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!("int {}p;", "*".repeat(100_000))),
            &["1:56: this type has more pointer levels than the simulator's limit of 16"],
        );
        check_on_a_small_stack(
            kernel(&format!("int v{};", "[1]".repeat(100_000))),
            &["1:89: this array has more dimensions than the simulator's limit of 16"],
        );
    }
}
