//! Statements: blocks, `if`, loops and their unrolling, declarations of locals and arrays with their initialisers.

use super::*;

impl Sema<'_> {
    pub(super) fn scoped(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        self.scopes.push(NameMap::new());
        let r = self.statement(s);
        self.scopes.pop();
        r
    }

    pub(super) fn statement(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        match &s.kind {
            StmtKind::Empty => Ok(()),
            StmtKind::Unsupported(diagnostic) => Err(diagnostic.clone()),
            StmtKind::Block(stmts) => {
                self.scopes.push(NameMap::new());
                for s in stmts {
                    if let Err(e) = self.statement(s) {
                        self.scopes.pop();
                        return Err(e);
                    }
                }
                self.scopes.pop();
                Ok(())
            }
            StmtKind::Declaration(d) => self.local_declaration(d),
            StmtKind::Expr(e) if cpp_statements::static_assert_parts(e).is_some() => {
                self.static_assertion(e)
            }
            StmtKind::Expr(e) => self.expression_statement(e, s.span),
            StmtKind::If(c, then, otherwise) => {
                let cond = self.condition(c)?;
                let if_at = self.open_if(cond, c.span);
                self.scoped(then)?;
                let else_at = match otherwise {
                    Some(otherwise) => {
                        let else_at = self.emit(Op::Else { end_at: 0 }, otherwise.span);
                        self.scoped(otherwise)?;
                        Some(else_at)
                    }
                    None => None,
                };
                self.close_if(if_at, else_at, s.span);
                Ok(())
            }
            StmtKind::While(c, body) => {
                let begin = self.emit(
                    Op::LoopBegin {
                        end_at: 0,
                        unroll: Unroll::Times(1),
                        counter: None,
                        switch: false,
                    },
                    s.span,
                );
                // The condition's code (a call lowered in place) runs in each iteration too.
                let top = self.code.len();
                let cond = self.condition(c)?;
                self.emit(Op::LoopCond { cond, end_at: 0 }, c.span);
                self.loop_body(body)?;
                self.emit(Op::ContinuePoint, s.span);
                self.emit(Op::Jump(top), s.span);
                self.finish_loop(begin, s.span, None, None);
                Ok(())
            }
            StmtKind::DoWhile(body, c) => {
                let begin = self.emit(
                    Op::LoopBegin {
                        end_at: 0,
                        unroll: Unroll::Times(1),
                        counter: None,
                        switch: false,
                    },
                    s.span,
                );
                let top = self.code.len();
                self.loop_body(body)?;
                self.emit(Op::ContinuePoint, s.span);
                let cond = self.condition(c)?;
                self.emit(Op::LoopCond { cond, end_at: 0 }, c.span);
                self.emit(Op::Jump(top), s.span);
                self.finish_loop(begin, s.span, None, None);
                Ok(())
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
                pragma_unroll,
            } => {
                self.scopes.push(NameMap::new());
                // A range-based `for`'s extent is folded once its array's type is known.
                let range_cond = match cond {
                    Some(cond) => self.range_condition(cond),
                    None => Ok(None),
                };
                let range_cond = match range_cond {
                    Ok(range_cond) => range_cond,
                    Err(error) => {
                        self.scopes.pop();
                        return Err(error);
                    }
                };
                let r = self.for_loop(
                    s.span,
                    init.as_deref(),
                    range_cond.as_ref().or(cond.as_ref()),
                    step.as_ref(),
                    body,
                    *pragma_unroll,
                );
                self.scopes.pop();
                r
            }
            StmtKind::Return(value) => {
                if self.inlined_return(value.as_ref(), s.span)? {
                    return Ok(());
                }
                let func = &self.functions[self.current];
                let ret = func.ret;
                let name = func.name.clone();
                let value = match (value, ret) {
                    (None, None) => None,
                    (Some(v), None) => {
                        return err(
                            v.span,
                            format!("'{name}' returns void, so 'return' takes no value"),
                        )
                    }
                    (None, Some(_)) => return err(s.span, format!("'{name}' must return a value")),
                    (Some(v), Some((elem, reg))) => {
                        let (ex, ty) = self.rvalue(v)?;
                        let ret_ty = self.unit_return_type(&name);
                        let ex = self.convert(ex, &ty, &ret_ty, v.span)?;
                        Some(Ex::assign_reg(reg, elem, ex, elem.n, v.span))
                    }
                };
                self.emit(Op::Return(value), s.span);
                Ok(())
            }
            StmtKind::Break => {
                if self.loop_depth == 0 && self.switches.is_empty() {
                    return err(s.span, "'break' outside a loop or 'switch'");
                }
                self.emit(Op::Break, s.span);
                Ok(())
            }
            StmtKind::Continue => {
                if self.loop_depth == 0 {
                    return err(s.span, "'continue' outside a loop");
                }
                self.continue_statement(s.span);
                Ok(())
            }
            StmtKind::Switch(value, body) => self.switch_statement(value, body, s.span),
            StmtKind::Case(value, _) => {
                let word = super::switch::case_word(value.is_some());
                if self.switches.is_empty() {
                    return err(s.span, format!("'{word}' label outside a 'switch'"));
                }
                Err(Diagnostic::of_kind(
                    DiagnosticKind::NotSimulated,
                    s.span,
                    format!("a '{word}' label inside a nested statement of a 'switch' (as in Duff's device) is not simulated"),
                ))
            }
        }
    }

    pub(super) fn unit_return_type(&self, name: &str) -> Type {
        for item in &self.unit.items {
            if let Item::Function(f) = item {
                if f.name == name {
                    return f.ret.clone();
                }
            }
        }
        Type::Void
    }

    pub(super) fn loop_body(&mut self, body: &Stmt) -> Result<(), Diagnostic> {
        self.loop_depth += 1;
        let r = self.scoped(body);
        self.loop_depth -= 1;
        r
    }

    /// Emits the `LoopEnd`, points the loop's `LoopBegin` and `LoopCond`s at it and decides how
    /// nvcc unrolls the loop: as `decided` says (a pragma, a constant trip count), or by the form
    /// and size of its body (`issue::runtime_unroll`).
    pub(super) fn finish_loop(
        &mut self,
        begin: usize,
        span: Span,
        decided: Option<Unroll>,
        counter: Option<Reg>,
    ) {
        let end = self.emit(Op::LoopEnd, span);
        let unroll = decided.unwrap_or_else(|| issue::runtime_unroll(&self.code, begin, end));
        if let Op::LoopBegin {
            unroll: slot,
            counter: counter_slot,
            ..
        } = &mut self.code[begin]
        {
            *slot = unroll;
            *counter_slot = counter.filter(|_| unroll == Unroll::Full);
        }
        let mut depth = 0;
        for op in &mut self.code[begin..end] {
            match op {
                Op::LoopBegin { end_at, .. } => {
                    if depth == 0 {
                        *end_at = end;
                    }
                    depth += 1;
                }
                Op::LoopEnd => depth -= 1,
                Op::LoopCond { end_at, .. } if depth == 1 => *end_at = end,
                _ => {}
            }
        }
        self.leave_returned_lanes(begin, end, span);
    }

    pub(super) fn for_loop(
        &mut self,
        span: Span,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &Stmt,
        pragma_unroll: Option<Option<u64>>,
    ) -> Result<(), Diagnostic> {
        let unroll_name = self.constant_trip_variable(init, cond, step, body);
        let constant_trip = unroll_name.is_some();
        if let Some(init) = init {
            self.statement(init)?;
        }
        let begin = self.emit(
            Op::LoopBegin {
                end_at: 0,
                unroll: Unroll::Times(1),
                counter: None,
                switch: false,
            },
            span,
        );
        // "An omitted expression-2 is replaced by a nonzero constant" (C11 6.8.5.3): the loop
        // still has its `LoopCond`, where lanes that broke out or returned leave it.
        let top = self.code.len();
        match cond {
            Some(c) => {
                let cond = self.condition(c)?;
                self.emit(Op::LoopCond { cond, end_at: 0 }, c.span);
            }
            None => {
                let always = konst(1, Scalar::Bool, span);
                self.emit(
                    Op::LoopCond {
                        cond: always,
                        end_at: 0,
                    },
                    span,
                );
            }
        }
        let unroll_reg = unroll_name.and_then(|n| match self.lookup(&n) {
            Some(Symbol::Var { reg, .. }) => Some(*reg),
            _ => None,
        });
        if let Some(reg) = unroll_reg {
            self.unroll_regs.push(reg);
        }
        let r = self.loop_body(body);
        if unroll_reg.is_some() {
            self.unroll_regs.pop();
        }
        r?;
        self.emit(Op::ContinuePoint, span);
        if let Some(step) = step {
            let ex = self.expression(step)?;
            self.emit(Op::Eval(ex), step.span);
        }
        self.emit(Op::Jump(top), span);
        let decided = match (pragma_unroll, constant_trip) {
            (Some(Some(count)), _) => Some(Unroll::Times(
                u32::try_from(count.max(1)).unwrap_or(u32::MAX),
            )),
            (_, true) => Some(Unroll::Full),
            _ => None,
        };
        self.finish_loop(begin, span, decided, unroll_reg);
        Ok(())
    }

    pub(super) fn expression_statement(&mut self, e: &Expr, span: Span) -> Result<(), Diagnostic> {
        if let ExprKind::Call {
            name,
            name_span,
            args,
        } = &e.kind
        {
            // A cooperative group's `sync()` (`block.sync()`, `cg::sync(tile)`): the block's
            // barrier, or a tile's `__syncwarp` over its lanes.
            if (name == ".sync" || name == "cooperative_groups::sync") && args.len() == 1 {
                let (_, ty) = self.rvalue(&args[0])?;
                let group = match &ty {
                    Type::Struct(record) => record.name.clone(),
                    _ => String::new(),
                };
                let call = |name: &str, args: Vec<Expr>| Expr {
                    kind: ExprKind::Call {
                        name: name.to_string(),
                        name_span: *name_span,
                        args,
                    },
                    span: e.span,
                };
                if group == "cooperative_groups::thread_block" {
                    return self.expression_statement(&call("__syncthreads", Vec::new()), span);
                }
                if group == "cooperative_groups::thread_group" {
                    // A tile of more than a warp waits at the block's barrier, which orders its
                    // accesses as its own would; a tile within a warp at its lanes' `__syncwarp`.
                    // The size is the same in every thread of the block, so every thread takes
                    // the same side.
                    let size = call(".size", vec![args[0].clone()]);
                    let warp = Expr {
                        kind: ExprKind::Int {
                            value: 32,
                            unsigned: true,
                            long: false,
                            hex: false,
                        },
                        span: e.span,
                    };
                    let wide = Expr {
                        kind: ExprKind::Binary(BinaryOp::Gt, Box::new(size), Box::new(warp)),
                        span: e.span,
                    };
                    let statement = |expr: Expr| {
                        Box::new(Stmt {
                            kind: StmtKind::Expr(expr),
                            span,
                        })
                    };
                    let lanes = call(".lanes", vec![args[0].clone()]);
                    let choice = Stmt {
                        kind: StmtKind::If(
                            wide,
                            statement(call("__syncthreads", Vec::new())),
                            Some(statement(call("__syncwarp", vec![lanes]))),
                        ),
                        span,
                    };
                    return self.statement(&choice);
                }
                if group.starts_with("cooperative_groups::thread_block_tile<")
                    || group == "cooperative_groups::coalesced_group"
                {
                    let lanes = call(".lanes", vec![args[0].clone()]);
                    return self.expression_statement(&call("__syncwarp", vec![lanes]), span);
                }
            }
            if name == "__syncthreads" || name == "__syncwarp" {
                let max_args = usize::from(name == "__syncwarp");
                if args.len() > max_args {
                    return err(
                        *name_span,
                        format!("'{name}' takes {max_args} arguments, not {}", args.len()),
                    );
                }
                if name == "__syncthreads" {
                    self.emit(Op::SyncThreads, e.span);
                } else {
                    for a in args {
                        let ex = self.expression(a)?;
                        self.emit(Op::Eval(ex), a.span);
                    }
                    self.emit(Op::SyncWarp, e.span);
                }
                return Ok(());
            }
        }
        let code_before = self.code.len();
        let ex = self.expression(e)?;
        // A call lowered in place whose value is unused leaves nothing to evaluate.
        let inlined_value = matches!(e.kind, ExprKind::Call { .. })
            && matches!(ex.kind, ExKind::Reg(_))
            && self.code.len() > code_before;
        if !inlined_value {
            self.emit(Op::Eval(ex), span);
        }
        Ok(())
    }

    pub(super) fn local_declaration(&mut self, decl: &Declaration) -> Result<(), Diagnostic> {
        if decl.declarators.iter().any(|d| d.reference) {
            return self.declaration_with_references(decl);
        }
        if (decl.compile_time || decl.is_auto) && self.cpp_local_declaration(decl)? {
            return Ok(());
        }
        for d in &decl.declarators {
            let ty = self.full_type(d, decl.storage)?;
            match decl.storage {
                Storage::Shared | Storage::ExternShared => {
                    if let Some(init) = &d.init {
                        let span = match init {
                            Initializer::Expr(e) => e.span,
                            Initializer::List(_, s) => *s,
                        };
                        return err(span, "__shared__ variables cannot have an initialiser; assign them in the kernel");
                    }
                    let space = if decl.storage == Storage::ExternShared {
                        ObjectSpace::DynamicShared
                    } else {
                        ObjectSpace::Shared
                    };
                    // A function lowered in place once per call still has one `__shared__`
                    // variable for the block, as when it is called.
                    let current = Some(self.current);
                    let made = self.objects.iter().position(|o| {
                        self.inline_depth > 0 && o.span == d.span && o.function == current
                    });
                    let id = match made {
                        Some(id) => id,
                        None => self.new_object(d, ty, space, const_elements(decl, d)),
                    };
                    self.declare(&d.name, d.span, Symbol::Object { id })?;
                }
                Storage::Automatic if matches!(ty, Type::Struct(_)) => {
                    let Type::Struct(record) = &ty else { continue };
                    self.struct_local(d, record, const_elements(decl, d))?;
                }
                Storage::Automatic if matches!(ty, Type::Array(..)) => {
                    let align = super::attributes::aligned(ty.align().max(4), d.align);
                    self.local_bytes = self.local_bytes.div_ceil(align) * align;
                    let offset = self.local_bytes;
                    self.local_bytes += ty.size();
                    let id =
                        self.new_object(d, ty.clone(), ObjectSpace::Local, const_elements(decl, d));
                    self.objects[id].local_offset = offset;
                    self.declare(&d.name, d.span, Symbol::Object { id })?;
                    if let Some(init) = &d.init {
                        let base = Ex::new(ExKind::AddrOf(id), 1, d.span);
                        self.array_initializer(init, &ty, base, 0)?;
                    }
                }
                Storage::Automatic => {
                    let width = width_of(&ty);
                    let mut const_value = None;
                    let init = match &d.init {
                        None => None,
                        Some(Initializer::Expr(e)) => {
                            if decl.is_const && matches!(ty, Type::Scalar(s) if s.is_integer()) {
                                if let Some(ConstValue::Int(v)) = self.const_value(e) {
                                    const_value = Some(v);
                                }
                            }
                            let (ex, from) = self.rvalue(e)?;
                            Some(self.convert(ex, &from, &ty, e.span)?)
                        }
                        Some(Initializer::List(items, span)) => {
                            let Type::Vector(s, n) = ty else {
                                return err(
                                    *span,
                                    format!("a braced list cannot initialise '{ty}'"),
                                );
                            };
                            if items.len() != usize::from(n) {
                                return err(*span, format!("'{ty}' needs {n} values"));
                            }
                            let mut parts = Vec::new();
                            for item in items {
                                let Initializer::Expr(e) = item else {
                                    return err(*span, "nested braces");
                                };
                                let (ex, from) = self.rvalue(e)?;
                                parts.push(self.convert(ex, &from, &Type::Scalar(s), e.span)?);
                            }
                            Some(Ex::new(ExKind::MakeVector { scalar: s, parts }, n, *span))
                        }
                    };
                    let reg = self.alloc(width);
                    if let (Some(value), Some(elem)) = (init, elem_of(&ty)) {
                        let assign = Ex::assign_reg(reg, elem, value, width, d.span);
                        self.emit(Op::Eval(assign), d.span);
                    }
                    self.declare(
                        &d.name,
                        d.span,
                        Symbol::Var {
                            reg,
                            ty,
                            is_const: const_elements(decl, d),
                            const_value,
                        },
                    )?;
                }
                Storage::Constant | Storage::Device => {
                    return err(
                        d.span,
                        "__device__ and __constant__ variables belong at file scope",
                    );
                }
            }
        }
        Ok(())
    }

    pub(super) fn new_object(
        &mut self,
        d: &Declarator,
        ty: Type,
        space: ObjectSpace,
        is_const: bool,
    ) -> usize {
        let id = self.objects.len();
        self.objects.push(MemObject {
            name: d.name.clone(),
            space,
            size: ty.size(),
            align: super::attributes::aligned(
                match ty.innermost() {
                    Type::Vector(..) => 16,
                    other => other.align(),
                },
                d.align,
            ),
            ty,
            init: ObjectInit::Zero,
            span: d.span,
            function: Some(self.current),
            in_registers: space == ObjectSpace::Local,
            local_offset: 0,
            is_const,
        });
        id
    }

    /// Stores of a per-thread array's initialiser, element by element.
    pub(super) fn array_initializer(
        &mut self,
        init: &Initializer,
        ty: &Type,
        base: Ex,
        offset: i64,
    ) -> Result<(), Diagnostic> {
        match (init, ty) {
            (Initializer::List(items, span), Type::Array(elem, n)) => {
                if items.len() as u64 > u64::from(n.unwrap_or(0)) {
                    return err(*span, "too many values in the initialiser");
                }
                let size = elem.size() as i64;
                for (i, item) in items.iter().enumerate() {
                    self.array_initializer(item, elem, base.clone(), offset + i as i64 * size)?;
                }
                Ok(())
            }
            (init, Type::Struct(record)) => {
                let span = base.span;
                let at = Ex::new(ExKind::Const(offset as u64), 1, span);
                let addr = self.offset(base, at, (Scalar::I64, 1), ty.size() as u32, span);
                let target = Lv::Mem {
                    addr,
                    ty: ty.clone(),
                    is_const: false,
                };
                if let Some(code) = self.struct_initializer(target, record, Some(init), span)? {
                    self.emit(Op::Eval(code), span);
                }
                Ok(())
            }
            (Initializer::Expr(e), _) if elem_of(ty).is_some() => {
                let (ex, from) = self.rvalue(e)?;
                let value = self.convert(ex, &from, ty, e.span)?;
                let addr = self.offset(
                    base,
                    Ex::new(ExKind::Const(offset as u64), 1, e.span),
                    (Scalar::I64, 1),
                    ty.size() as u32,
                    e.span,
                );
                let elem = elem_of(ty).unwrap_or(Elem::scalar(Scalar::I32));
                let store = Ex::new(
                    ExKind::Assign {
                        place: Place::Mem {
                            addr: Box::new(addr),
                            elem,
                        },
                        value: Box::new(value),
                    },
                    elem.n,
                    e.span,
                );
                self.emit(Op::Eval(store), e.span);
                Ok(())
            }
            (Initializer::List(_, span), _) => {
                err(*span, format!("a braced list cannot initialise '{ty}'"))
            }
            (Initializer::Expr(e), _) => {
                err(e.span, format!("an array '{ty}' needs a braced list"))
            }
        }
    }

    // ----- expressions -----
}
