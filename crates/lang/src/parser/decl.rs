//! Declarations: specifiers, declarators (pointers, array dimensions), initializers, and the
//! file's items: variables and functions.

use super::{Parser, Specifiers};
use crate::ast::{
    Declaration, Declarator, Expr, Function, FunctionKind, Initializer, Item, LaunchBounds, Param,
    Scalar, Storage, Type,
};
use crate::header_names::named_type;
use crate::lexer::Punct;
use crate::limits::MAX_TYPE_DEPTH;
use crate::span::{Diagnostic, DiagnosticKind, Span};

impl<'a> Parser<'a> {
    /// Reads storage classes, qualifiers and the base type.
    pub(super) fn specifiers(&mut self) -> Result<Specifiers, Diagnostic> {
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
        let mut launch_bounds = None;
        let mut align = None;
        let mut alias = None;
        let mut compile_time = false;
        let mut is_auto = false;
        loop {
            if let Some(n) = self.attributes()? {
                align = Some(n);
            }
            let Some(t) = self.peek() else { break };
            let Some(word) = t.ident() else {
                if base.is_none() && alias.is_none() {
                    alias = self.alias_type();
                    if alias.is_some() {
                        continue;
                    }
                }
                break;
            };
            match word {
                "__launch_bounds__" => {
                    launch_bounds = Some(self.launch_bounds()?);
                    continue;
                }
                "const" => is_const = true,
                // `constexpr` makes a variable `const` and a compile-time constant, and a
                // function callable from device code ([dcl.constexpr]).
                "constexpr" => (is_const, compile_time) = (true, true),
                "auto" => is_auto = true,
                // `enum E x`: the name of the enumeration follows.
                "enum" => {}
                "volatile" | "register" | "static" | "inline" | "__inline__"
                | "__forceinline__" | "__noinline__" | "__restrict__" | "__host__" => {}
                "extern" => is_extern = true,
                // `struct S x`: the struct's name follows, a type like any other.
                "struct" | "class" => {}
                "__shared__" => storage = Storage::Shared,
                "__constant__" => storage = Storage::Constant,
                // A `__managed__` variable is a `__device__` one the host reads too (Programming
                // Guide, "Unified Memory"): to the kernel, global memory.
                "__device__" | "__managed__" => device = true,
                "__global__" => function = Some(FunctionKind::Kernel),
                "unsigned" => unsigned = Some(true),
                "signed" => unsigned = Some(false),
                "long" => longs += 1,
                "short" => short = true,
                _ if matches!(word, "void" | "bool" | "char" | "int" | "float" | "double")
                    || named_type(word).is_some() =>
                {
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
                _ => {
                    let plain = unsigned.is_none() && longs == 0 && !short;
                    if base.is_none() && alias.is_none() && !is_auto && plain {
                        alias = self.alias_type();
                        if alias.is_some() {
                            continue;
                        }
                    }
                    break;
                }
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
        let mut dims = Vec::new();
        let base_type = match base.map(|(w, _)| w) {
            None if alias.is_some() => {
                let alias = alias.take().map(|a| (a.ty, a.is_const, a.dims));
                let (ty, alias_const, alias_dims) = alias.unwrap_or((Type::Void, false, dims));
                is_const |= alias_const;
                dims = alias_dims;
                ty
            }
            None if is_auto => Type::Void,
            Some("void") => Type::Void,
            Some("bool") => Type::Scalar(Scalar::Bool),
            Some("char") => Type::Scalar(if unsigned_flag {
                Scalar::U8
            } else {
                Scalar::I8
            }),
            Some("float") => Type::Scalar(Scalar::F32),
            Some("double") => Type::Scalar(Scalar::F64),
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
            Some(other) => match named_type(other) {
                Some(ty) => ty,
                None => return Err(Diagnostic::new(start, format!("unknown type '{other}'"))),
            },
        };
        Ok(Specifiers {
            base: base_type,
            is_const,
            storage,
            function,
            span: start.to(self.previous_span()),
            launch_bounds,
            align,
            dims,
            compile_time,
            is_auto,
        })
    }

    /// `__launch_bounds__(max threads [, min blocks [, max blocks per cluster]])`.
    fn launch_bounds(&mut self) -> Result<LaunchBounds, Diagnostic> {
        let start = self.here();
        self.pos += 1;
        self.expect(Punct::LParen)?;
        let max_threads = self.assignment_expr()?;
        let mut more = Vec::new();
        while more.len() < 2 && self.eat(Punct::Comma) {
            more.push(self.assignment_expr()?);
        }
        self.expect(Punct::RParen)?;
        Ok(LaunchBounds {
            max_threads,
            min_blocks: more.into_iter().next(),
            span: start.to(self.previous_span()),
        })
    }

    /// Reads GNU `__attribute__((...))`, C++ `[[...]]` and `alignas(n)` attributes, which nvcc accepts on
    /// functions, variables, parameters and statements. The simulator ignores them all
    /// (`always_inline`, `noinline`, `unused`, `likely`, ...) but `aligned(n)`: the alignment
    /// `n`, an integer, is returned for the variable it is written on.
    pub(super) fn attributes(&mut self) -> Result<Option<u64>, Diagnostic> {
        let mut align = None;
        loop {
            let gnu = self.at_word("__attribute__") || self.at_word("__attribute");
            // `alignas(n)` (C++11) and CUDA's `__align__(n)` say `aligned(n)` alone.
            let alignas = self.at_word("alignas") || self.at_word("__align__");
            let cpp = self.at(Punct::LBracket)
                && self.peek_at(1).is_some_and(|t| t.is_punct(Punct::LBracket));
            if !gnu && !cpp && !alignas {
                return Ok(align);
            }
            let open = self.here();
            if gnu || alignas {
                self.pos += 1;
            }
            if let (true, Some(crate::lexer::TokenKind::Int { value, .. })) =
                (alignas, self.peek_at(1).map(|t| &t.kind))
            {
                align = Some(*value);
            }
            // The tokens up to the bracket that closes the first one, read as a flat list with a
            // depth count: nothing in them nests the parser.
            let mut depth = 0usize;
            loop {
                let Some(t) = self.peek() else {
                    return Err(Diagnostic::new(open, "this attribute is never closed"));
                };
                if t.is_punct(Punct::LParen) || t.is_punct(Punct::LBracket) {
                    depth += 1;
                } else if t.is_punct(Punct::RParen) || t.is_punct(Punct::RBracket) {
                    depth = depth.saturating_sub(1);
                } else if matches!(t.ident(), Some("aligned" | "__aligned__")) {
                    if let (Some(paren), Some(crate::lexer::TokenKind::Int { value, .. })) =
                        (self.peek_at(1), self.peek_at(2).map(|t| &t.kind))
                    {
                        if paren.is_punct(Punct::LParen) {
                            align = Some(*value);
                        }
                    }
                }
                self.pos += 1;
                if depth == 0 {
                    break;
                }
            }
        }
    }

    /// Reads `*`, `* const`, `__restrict__` before a declarator's name (at most
    /// `MAX_TYPE_DEPTH` levels). Also says whether the declarator's own pointer is `const`
    /// (`float* const p`: the `const` after the last `*`), which the pointer type cannot carry.
    pub(super) fn pointers(
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

    /// Reads the `&` of a reference declarator after its pointers (`float &x`, `float *&p`),
    /// and says whether there was one. An rvalue reference (`float &&x`) and a declarator in
    /// parentheses (`float (&a)[4]`) are refused by name.
    pub(super) fn reference(&mut self) -> Result<bool, Diagnostic> {
        if self.at(Punct::AndAnd) {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                self.here(),
                "rvalue references (`T&&`) are not simulated; take the value or a `const T&`",
            ));
        }
        if self.at(Punct::LParen)
            && self
                .peek_at(1)
                .is_some_and(|t| t.is_punct(Punct::Amp) || t.is_punct(Punct::Star))
        {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                self.here(),
                "a reference or pointer to a whole array or to a function (`float (&a)[N]`, \
                 `void (*f)(int)`) is not simulated; use a pointer to the array's first element",
            ));
        }
        Ok(self.eat(Punct::Amp))
    }

    /// Array dimensions `[N]` after a declarator's name (at most `MAX_TYPE_DEPTH`).
    pub(super) fn dims(&mut self) -> Result<Vec<Option<Expr>>, Diagnostic> {
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

    pub(super) fn initializer(&mut self) -> Result<Initializer, Diagnostic> {
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
    pub(super) fn declaration_rest(
        &mut self,
        spec: Specifiers,
        first_name: Option<(String, Span, Type, bool)>,
    ) -> Result<Declaration, Diagnostic> {
        let mut declarators = Vec::new();
        let mut pending = first_name;
        loop {
            let mut reference = false;
            let (name, span, ty, pointer_const) = match pending.take() {
                Some(first) => first,
                None => {
                    let (ty, pointer_const) = self.pointers(spec.base.clone(), spec.is_const)?;
                    reference = self.reference()?;
                    let (name, span) = self.ident("a variable name")?;
                    (self.names.declare(&name), span, ty, pointer_const)
                }
            };
            let mut dims = self.dims()?;
            let align = self.attributes()?.or(spec.align);
            if !spec.dims.is_empty() {
                if ty != spec.base {
                    return Err(Diagnostic::of_kind(
                        DiagnosticKind::NotSimulated,
                        span,
                        "a pointer to an array type is not simulated",
                    ));
                }
                dims.extend(spec.dims.iter().cloned());
            }
            let init = if self.eat(Punct::Assign) {
                Some(self.initializer()?)
            } else if reference && self.eat(Punct::LParen) {
                // `float &r(a[i]);` binds as `float &r = a[i];` does.
                let place = self.expr()?;
                self.expect(Punct::RParen)?;
                Some(Initializer::Expr(place))
            } else if dims.is_empty() {
                self.direct_initializer(&ty, span, spec.storage == Storage::Automatic)?
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
                align,
                reference,
            });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect_semi("the declaration")?;
        Ok(Declaration {
            storage: spec.storage,
            is_const: spec.is_const,
            compile_time: spec.compile_time,
            is_auto: spec.is_auto,
            declarators,
            span: spec.span.to(self.previous_span()),
        })
    }

    /// A file-scope item. An unsupported construct outside any statement (a name of cooperative groups in a file-scope
    /// initialiser or an array parameter's size) fails the file: it has no function to fail.
    pub(super) fn item(&mut self) -> Result<Option<Item>, Diagnostic> {
        if self.at_word("static_assert") {
            let assertion = self.static_assertion()?;
            self.static_asserts.push(assertion);
            return Ok(None);
        }
        if self.at_word("template") {
            // A host function template is host code, read past.
            if let Some(host) = self.host_item()? {
                return Ok(host);
            }
            self.template_definition()?;
            return Ok(None);
        }
        if self.at_record() {
            let start = self.pos;
            return match self.record_item() {
                Ok(()) => Ok(None),
                // A class the device language cannot read that only the host uses (member
                // functions without `__device__`, `std::` members) is host code, read past.
                Err(error) => {
                    self.pos = start;
                    match self.host_item()? {
                        Some(host) => Ok(host),
                        None => Err(error),
                    }
                }
            };
        }
        if let Some(host) = self.host_item()? {
            return Ok(host);
        }
        let item = match self.name_item()? {
            Some(item) => item,
            None => self.item_inner()?,
        };
        if let Some(Item::Variable(declaration)) = &item {
            self.remember_constants(declaration);
        }
        match self.unsupported.take() {
            Some(diagnostic) => Err(diagnostic),
            None => Ok(item),
        }
    }

    pub(super) fn item_inner(&mut self) -> Result<Option<Item>, Diagnostic> {
        if !self.starts_declaration() {
            return Err(self.error_here("a kernel, a __device__ function or a file-scope variable"));
        }
        // A constructor of a struct defined after it (`S::S(...)`), or another member function.
        if let Some(item) = self.member_definition(None)? {
            return Ok(item);
        }
        let spec = self.specifiers()?;
        let (ty, pointer_const) = self.pointers(spec.base.clone(), spec.is_const)?;
        let reference_at = self.here();
        if self.reference()? {
            let returned = self.at_word("operator") || self.struct_member_name_here();
            let what = if returned || self.peek_at(1).is_some_and(|t| t.is_punct(Punct::LParen)) {
                "a function that returns a reference (`float& f()`) is not simulated; return the \
                 value or a pointer"
            } else {
                "a reference at file scope is not simulated"
            };
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                reference_at,
                what,
            ));
        }
        if self.at_word("operator") {
            return self.free_operator(spec, ty).map(Some);
        }
        if self.struct_member_name_here() {
            return Ok(self.member_definition(Some((spec, ty)))?.flatten());
        }
        let (name, span) = self.ident("a name")?;
        let name = self.names.declare(&name);
        if self.at(Punct::LParen) {
            // A prototype (`__device__ float f(float);`) makes no item: sema knows every
            // function of the file before it checks a body.
            return Ok(self.function(spec, ty, name, span)?.map(Item::Function));
        }
        // A file-scope `const` or `constexpr` without a memory space is a compile-time
        // constant in device code, as nvcc makes it (sema checks its initialiser).
        // A file-scope `__shared__` variable is one per block, as one declared in a kernel.
        let constant = spec.storage == Storage::Automatic && spec.is_const;
        if spec.storage == Storage::Automatic && !constant {
            return Err(Diagnostic::new(
                span,
                "host variables are not simulated: a file-scope variable needs __device__ or \
                 __constant__",
            ));
        }
        Ok(Some(Item::Variable(self.declaration_rest(
            spec,
            Some((name, span, ty, pointer_const)),
        )?)))
    }

    pub(super) fn function(
        &mut self,
        spec: Specifiers,
        ret: Type,
        name: String,
        span: Span,
    ) -> Result<Option<Function>, Diagnostic> {
        // A `constexpr` function is callable from device code (nvcc's
        // `--expt-relaxed-constexpr`, which the CUDA samples build with).
        let function = match spec.function {
            None if spec.compile_time => Some(FunctionKind::Device),
            other => other,
        };
        let Some(kind) = function else {
            return Err(Diagnostic::new(
                span,
                format!("'{name}' is a host function; only __global__ kernels and __device__ functions are simulated"),
            ));
        };
        self.expect(Punct::LParen)?;
        let mut params = Vec::new();
        let mut defaults = Vec::new();
        if self.at_word("void") && self.peek_at(1).is_some_and(|t| t.is_punct(Punct::RParen)) {
            self.pos += 1;
        }
        while !self.at(Punct::RParen) {
            if !self.starts_declaration() {
                return Err(self.error_here("a parameter type"));
            }
            let pspec = self.specifiers()?;
            let (mut ty, mut pointer_const) = self.pointers(pspec.base.clone(), pspec.is_const)?;
            let reference = self.reference()?;
            // A parameter without a name (in a prototype, or one the body does not use) gets
            // one no source can spell.
            let unnamed = [Punct::Comma, Punct::RParen, Punct::Assign, Punct::LBracket];
            let (pname, pspan) = if unnamed.iter().any(|&p| self.at(p)) {
                (format!("(parameter {})", params.len() + 1), self.here())
            } else {
                self.ident("a parameter name")?
            };
            // `float a[]` and `float a[N]` as parameters are pointers.
            let mut dims = self.dims()?;
            self.attributes()?;
            dims.extend(pspec.dims.iter().cloned());
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
            defaults.push(if self.eat(Punct::Assign) {
                Some(self.assignment_expr()?)
            } else {
                None
            });
            params.push(Param {
                name: pname,
                span: pspan,
                ty,
                is_const,
                reference,
            });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect(Punct::RParen)?;
        self.attributes()?;
        self.member_function_qualifiers();
        self.names.set_defaults(&name, defaults);
        if self.eat(Punct::Semi) {
            return Ok(None);
        }
        if !self.at(Punct::LBrace) && !self.at(Punct::Colon) {
            return Err(self.error_here("'{' to start the body of the function"));
        }
        let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
        let mark = self.enter_function(&names);
        let outer_return = self.return_type.replace(ret.clone());
        // A constructor's member initialisers are the first statements of its body.
        let body = self.member_initializers().and_then(|mut stmts| {
            let (body, open, close) = self.block()?;
            stmts.extend(body);
            Ok((stmts, open, close))
        });
        self.return_type = outer_return;
        self.leave_function(mark);
        let (body, _, end_span) = body?;
        Ok(Some(Function {
            kind,
            ret,
            name,
            span,
            params,
            is_constexpr: spec.compile_time,
            body,
            end_span,
            launch_bounds: spec.launch_bounds.map(Box::new),
        }))
    }

    // ----- statements -----
}
