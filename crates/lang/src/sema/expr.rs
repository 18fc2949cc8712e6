//! Expressions: names, indexing, members, operators, assignments, and the offsets of memory places.

use super::record;
use super::*;

impl Sema<'_> {
    /// A full expression for its value (of any type, including void).
    pub(super) fn expression(&mut self, e: &Expr) -> Result<Ex, Diagnostic> {
        Ok(self.rvalue(e)?.0)
    }

    pub(super) fn rvalue(&mut self, e: &Expr) -> Result<(Ex, Type), Diagnostic> {
        let lv = self.lower(e)?;
        let span = self.read_span(e);
        Ok(self.rvalue_of(lv, span))
    }

    pub(super) fn rvalue_of(&mut self, lv: Lv, span: Span) -> (Ex, Type) {
        match lv {
            Lv::Value(ex, ty) => (ex, ty),
            Lv::Var { reg, ty, .. } => (Ex::new(ExKind::Reg(reg), width_of(&ty), span), ty),
            Lv::Mem {
                addr,
                ty: Type::Array(elem, _),
                is_const,
            } => {
                let mut addr = addr;
                addr.span = span;
                (
                    addr,
                    Type::Pointer {
                        pointee: elem,
                        pointee_const: is_const,
                    },
                )
            }
            Lv::Mem {
                addr,
                ty: Type::Struct(record),
                is_const,
            } => {
                let lv = Lv::Mem {
                    addr,
                    ty: Type::Struct(record.clone()),
                    is_const,
                };
                // A struct too large to copy has no value; using one is the error of the
                // copy that needs it (`record`).
                let ex = self
                    .struct_rvalue(lv, &record, span)
                    .unwrap_or_else(|_| Ex::new(ExKind::Const(0), 0, span));
                (ex, Type::Struct(record))
            }
            Lv::Mem { addr, ty, .. } => {
                let elem = elem_of(&ty).unwrap_or(Elem::scalar(Scalar::I32));
                (
                    Ex::new(
                        ExKind::Load {
                            addr: Box::new(addr),
                            elem,
                        },
                        elem.n,
                        span,
                    ),
                    ty,
                )
            }
        }
    }

    /// `base + index * stride` as a pointer to elements of `elem_size` bytes, merged into an
    /// existing offset node. (`step` is the index's type and the stride in bytes.)
    #[inline(never)]
    pub(super) fn offset(
        &mut self,
        base: Ex,
        index: Ex,
        step: (Scalar, i64),
        elem_size: u32,
        span: Span,
    ) -> Ex {
        let (index_ty, stride) = step;
        // Canonical integer registers already hold the index's value as a 64-bit integer (signed
        // types sign-extended, unsigned zero-extended), so only `bool` needs a conversion.
        let index = if index_ty == Scalar::Bool {
            self.convert_scalar(index, index_ty, Scalar::I64)
        } else {
            index
        };
        if let ExKind::Const(0) = index.kind {
            let mut base = base;
            base.span = span;
            if let ExKind::Offset {
                elem_size: unit, ..
            } = &mut base.kind
            {
                *unit = elem_size;
            }
            return base;
        }
        let term = Term { index, stride };
        match base.kind {
            ExKind::Offset {
                base: inner,
                mut terms,
                ..
            } => {
                terms.push(term);
                let kind = ExKind::Offset {
                    base: inner,
                    terms,
                    elem_size,
                };
                Ex::new(kind, 1, span)
            }
            kind => {
                let base = Ex {
                    kind,
                    tmp: 0,
                    width: 1,
                    span: base.span,
                };
                Ex::new(
                    ExKind::Offset {
                        base: Box::new(base),
                        terms: vec![term],
                        elem_size,
                    },
                    1,
                    span,
                )
            }
        }
    }

    /// Lowers an expression. Each kind has its own method, marked `#[inline(never)]` (each has
    /// one caller, so the compiler would otherwise fold them all into this one frame), which
    /// keeps this recursive dispatcher's stack frame small: deep expressions must not overflow
    /// the stack, in debug builds too.
    pub(super) fn lower(&mut self, e: &Expr) -> Result<Lv, Diagnostic> {
        let span = e.span;
        match &e.kind {
            ExprKind::Int {
                value,
                unsigned,
                long,
                hex,
            } => Ok(int_literal(*value, *unsigned, *long, *hex, span)),
            ExprKind::Float { value, single } => {
                let ty = if *single { Scalar::F32 } else { Scalar::F64 };
                Ok(Lv::Value(
                    konst(float_bits(*value, ty), ty, span),
                    Type::Scalar(ty),
                ))
            }
            ExprKind::Bool(b) => Ok(Lv::Value(
                konst(u64::from(*b), Scalar::Bool, span),
                Type::Scalar(Scalar::Bool),
            )),
            ExprKind::Ident(name) => self.ident(name, span, false),
            ExprKind::Index(..) => self.index_expression(e),
            ExprKind::Member {
                base,
                field,
                field_span,
            } => self.member(base, field, *field_span, span),
            ExprKind::Unary(op, a) => self.unary(*op, a, span),
            ExprKind::Binary(op, a, b) => self.binary_expression(*op, a, b, span),
            ExprKind::Assign(op, lhs, rhs) => self.assign(*op, lhs, rhs, span),
            ExprKind::Conditional(c, a, b) => self.conditional(c, a, b, span),
            ExprKind::Call {
                name,
                name_span,
                args,
            } => self.call_expression(name, *name_span, args, span),
            ExprKind::Cast(to, a) => self.cast_expression(to, a, span),
            ExprKind::SizeofType(ty) => Ok(Lv::Value(
                konst(ty.size(), Scalar::U64, span),
                Type::Scalar(Scalar::U64),
            )),
            ExprKind::SizeofExpr(a) => self.sizeof_expression(a, span),
            ExprKind::Comma(a, b) => self.comma(a, b, span),
            ExprKind::Str(_) => err(
                span,
                "memplay reads a string literal only as a printf format or a `%s` argument",
            ),
        }
    }

    #[inline(never)]
    pub(super) fn index_expression(&mut self, e: &Expr) -> Result<Lv, Diagnostic> {
        let whole_chain_constant = self.index_chain_is_constant(e);
        self.index(e, whole_chain_constant)
    }

    #[inline(never)]
    pub(super) fn member(
        &mut self,
        base: &Expr,
        field: &str,
        field_span: Span,
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let lv = self.lower(base)?;
        let ty = match &lv {
            Lv::Value(_, t) | Lv::Var { ty: t, .. } | Lv::Mem { ty: t, .. } => t.clone(),
        };
        if let Type::Struct(record) = &ty {
            return self.struct_member(lv, record, field, field_span, span);
        }
        let Type::Vector(s, n) = ty else {
            return err(field_span, format!("'{ty}' has no member '{field}'"));
        };
        let comp = match field {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            "w" => 3,
            _ => n,
        };
        if comp >= n {
            return err(field_span, format!("'{ty}' has no member '{field}'"));
        }
        let sty = Type::Scalar(s);
        Ok(match lv {
            Lv::Var { reg, is_const, .. } => Lv::Var {
                reg: reg + Reg::from(comp),
                ty: sty,
                is_const,
            },
            Lv::Mem { addr, is_const, .. } => {
                let at = konst(u64::from(comp) * u64::from(s.size()), Scalar::I64, span);
                Lv::Mem {
                    addr: self.offset(addr, at, (Scalar::I64, 1), s.size(), span),
                    ty: sty,
                    is_const,
                }
            }
            Lv::Value(ex, _) => {
                Lv::Value(Ex::new(ExKind::Component(Box::new(ex), comp), 1, span), sty)
            }
        })
    }

    #[inline(never)]
    pub(super) fn binary_expression(
        &mut self,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let (ex, ty) = self.binary(op, a, b, span)?;
        Ok(Lv::Value(ex, ty))
    }

    #[inline(never)]
    pub(super) fn conditional(
        &mut self,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let (cond, (ea, ta), (eb, tb)) = if self.calls_in_place(a) || self.calls_in_place(b) {
            let sides = self.conditional_in_place(c, a, b, span)?;
            (sides.cond, sides.a, sides.b)
        } else {
            (self.condition(c)?, self.rvalue(a)?, self.rvalue(b)?)
        };
        let ty = match (&ta, &tb) {
            (Type::Scalar(x), Type::Scalar(y)) => Type::Scalar(common(*x, *y)),
            (Type::Pointer { .. }, Type::Scalar(_)) => ta.clone(),
            (Type::Scalar(_), Type::Pointer { .. }) => tb.clone(),
            _ if ta == tb => ta.clone(),
            (Type::Pointer { .. }, Type::Pointer { .. }) => ta.clone(),
            _ => {
                return err(
                    span,
                    format!("the two sides of '?:' have types '{ta}' and '{tb}'"),
                )
            }
        };
        if ty == Type::Void {
            return err(span, "the sides of '?:' have no value");
        }
        // A struct value is its leaves in consecutive registers: the select copies them all.
        if let Type::Struct(record) = &ty {
            self.struct_width(record, span)?;
        }
        let ea = if matches!(ty, Type::Pointer { .. }) && ta != ty {
            ea
        } else {
            self.convert(ea, &ta, &ty, a.span)?
        };
        let eb = if matches!(ty, Type::Pointer { .. }) && tb != ty {
            eb
        } else {
            self.convert(eb, &tb, &ty, b.span)?
        };
        let n = width_of(&ty);
        let select = ExKind::Select {
            cond: Box::new(cond),
            a: Box::new(ea),
            b: Box::new(eb),
            n,
        };
        Ok(Lv::Value(Ex::new(select, n, span), ty))
    }

    #[inline(never)]
    pub(super) fn call_expression(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let (ex, ty) = if let Some(method) = name.strip_prefix('.') {
            self.method_call(method, name_span, args, span)?
        } else if let Some(method) = self.implicit_method(name) {
            let mut with_this = vec![crate::parser::this_object(name_span)];
            with_this.extend(args.iter().cloned());
            self.method_call(&method, name_span, &with_this, span)?
        } else {
            self.call(name, name_span, args, span)?
        };
        Ok(Lv::Value(ex, ty))
    }

    #[inline(never)]
    pub(super) fn cast_expression(
        &mut self,
        to: &Type,
        a: &Expr,
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        if let Type::Struct(record) = to {
            // `S(args)`: the parser's cast of the constructor call.
            if let ExprKind::Call { args, .. } = &a.kind {
                return self.construction(record, args, span);
            }
            return self.construction(record, std::slice::from_ref(a), span);
        }
        let (ex, from) = self.rvalue(a)?;
        let mut ex = self.cast(ex, &from, to, span)?;
        ex.span = span;
        Ok(Lv::Value(ex, to.clone()))
    }

    #[inline(never)]
    pub(super) fn sizeof_expression(&mut self, a: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        let ty = self.unevaluated_type(a)?;
        Ok(Lv::Value(
            konst(ty.size(), Scalar::U64, span),
            Type::Scalar(Scalar::U64),
        ))
    }

    /// The type of `a`, which is not evaluated (`sizeof`'s operand): what a call lowered in
    /// place in it made (code, its arrays) goes.
    pub(super) fn unevaluated_type(&mut self, a: &Expr) -> Result<Type, Diagnostic> {
        let (code_before, objects_before, local_bytes) =
            (self.code.len(), self.objects.len(), self.local_bytes);
        let lv = self.lower(a)?;
        self.code.truncate(code_before);
        self.spans.truncate(code_before);
        self.objects.truncate(objects_before);
        self.local_bytes = local_bytes;
        Ok(match lv {
            Lv::Value(_, t) | Lv::Var { ty: t, .. } | Lv::Mem { ty: t, .. } => t,
        })
    }

    #[inline(never)]
    pub(super) fn comma(&mut self, a: &Expr, b: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        let (ea, _) = self.rvalue(a)?;
        if self.calls_in_place(b) {
            // `a` is evaluated before `b`'s call.
            self.emit(Op::Eval(ea), a.span);
            let (eb, tb) = self.rvalue(b)?;
            return Ok(Lv::Value(eb, tb));
        }
        let (eb, tb) = self.rvalue(b)?;
        let n = eb.width;
        Ok(Lv::Value(
            Ex::new(ExKind::Comma(Box::new(ea), Box::new(eb)), n, span),
            tb,
        ))
    }

    #[inline(never)]
    pub(super) fn ident(
        &mut self,
        name: &str,
        span: Span,
        constant_index: bool,
    ) -> Result<Lv, Diagnostic> {
        match self.lookup(name).cloned() {
            Some(Symbol::Var {
                reg, ty, is_const, ..
            }) => Ok(Lv::Var { reg, ty, is_const }),
            Some(Symbol::HostOnly(why)) => Err(Diagnostic { span, ..why }),
            Some(Symbol::Ref {
                addr, ty, is_const, ..
            }) => Ok(Lv::Mem {
                addr: Ex::new(ExKind::Reg(addr), 1, span),
                ty,
                is_const,
            }),
            Some(Symbol::Constant { scalar, value }) => Ok(Lv::Value(
                konst(decl::constant_bits(value, scalar), scalar, span),
                Type::Scalar(scalar),
            )),
            Some(Symbol::Object { id }) => {
                let obj = &self.objects[id];
                let ty = obj.ty.clone();
                let is_const = obj.space == ObjectSpace::Constant || obj.is_const;
                if obj.space == ObjectSpace::Local && !constant_index {
                    self.objects[id].in_registers = false;
                }
                Ok(Lv::Mem {
                    addr: Ex::new(ExKind::AddrOf(id), 1, span),
                    ty,
                    is_const,
                })
            }
            None => match name {
                "threadIdx" => Ok(Lv::Var {
                    reg: REG_THREAD_IDX,
                    ty: Type::Vector(Scalar::U32, 3),
                    is_const: true,
                }),
                "blockIdx" => Ok(Lv::Var {
                    reg: REG_BLOCK_IDX,
                    ty: Type::Vector(Scalar::U32, 3),
                    is_const: true,
                }),
                "blockDim" => Ok(Lv::Var {
                    reg: REG_BLOCK_DIM,
                    ty: Type::Vector(Scalar::U32, 3),
                    is_const: true,
                }),
                "gridDim" => Ok(Lv::Var {
                    reg: REG_GRID_DIM,
                    ty: Type::Vector(Scalar::U32, 3),
                    is_const: true,
                }),
                "warpSize" => Ok(Lv::Value(
                    konst(32, Scalar::I32, span),
                    Type::Scalar(Scalar::I32),
                )),
                _ if self.function_index.contains_key(name) => {
                    err(span, format!("'{name}' is a function: call it with (...)"))
                }
                _ => err(span, format!("'{name}' is not declared")),
            },
        }
    }

    /// `a[i][j]...` indexes a per-thread array completely with compile-time indices.
    pub(super) fn index_chain_is_constant(&self, e: &Expr) -> bool {
        let mut indices = 0;
        let mut cur = e;
        while let ExprKind::Index(base, index) = &cur.kind {
            if !self.unrollable(index) {
                return false;
            }
            indices += 1;
            cur = base;
        }
        let ExprKind::Ident(name) = &cur.kind else {
            return false;
        };
        let Some(Symbol::Object { id }) = self.lookup(name) else {
            return false;
        };
        let obj = &self.objects[*id];
        let mut dims = 0;
        let mut ty = &obj.ty;
        while let Type::Array(elem, _) = ty {
            dims += 1;
            ty = elem;
        }
        obj.space == ObjectSpace::Local && dims == indices
    }

    #[inline(never)]
    pub(super) fn index(&mut self, e: &Expr, constant_chain: bool) -> Result<Lv, Diagnostic> {
        let ExprKind::Index(base, index) = &e.kind else {
            return self.lower(e);
        };
        let span = e.span;
        let lv = match &base.kind {
            ExprKind::Index(..) => self.index(base, constant_chain)?,
            ExprKind::Ident(name) => self.ident(name, base.span, constant_chain)?,
            _ => self.lower(base)?,
        };
        let (iex, ity) = self.rvalue(index)?;
        let Type::Scalar(is) = ity else {
            return err(
                index.span,
                format!("an array index must be an integer, not '{ity}'"),
            );
        };
        if is.is_float() {
            return err(
                index.span,
                format!("an array index must be an integer, not '{ity}'"),
            );
        }
        match lv {
            Lv::Mem {
                addr,
                ty: Type::Array(elem, _),
                is_const,
            } => {
                let stride = elem.size() as i64;
                let addr = self.offset(addr, iex, (is, stride), stride as u32, span);
                Ok(Lv::Mem {
                    addr,
                    ty: *elem,
                    is_const,
                })
            }
            Lv::Var {
                reg,
                ty: Type::Array(elem, Some(n)),
                is_const,
            } => {
                // An array member of a struct held in registers: one register per leaf.
                let index = match iex.kind {
                    ExKind::Const(i) if i < u64::from(n) => i as Reg,
                    _ => {
                        return Err(Diagnostic::of_kind(
                            DiagnosticKind::NotSimulated,
                            index.span,
                            "an array member of a struct held in registers (a parameter or \
                             `this`) is indexed only by a constant in range here",
                        ))
                    }
                };
                let width = crate::record::leaf_count(&elem).unwrap_or(0) as Reg;
                Ok(Lv::Var {
                    reg: reg + index * width,
                    ty: *elem,
                    is_const,
                })
            }
            other => {
                let (pex, pty) = self.rvalue_of(other, base.span);
                let Type::Pointer {
                    pointee,
                    pointee_const,
                } = pty
                else {
                    return err(base.span, format!("cannot index a value of type '{pty}': it is neither an array nor a pointer"));
                };
                if *pointee == Type::Void {
                    return err(
                        base.span,
                        "cannot index a 'void*': cast it to a typed pointer first",
                    );
                }
                let stride = pointee.size() as i64;
                let addr = self.offset(pex, iex, (is, stride), stride as u32, span);
                Ok(Lv::Mem {
                    addr,
                    ty: *pointee,
                    is_const: pointee_const,
                })
            }
        }
    }

    #[inline(never)]
    pub(super) fn place(
        &mut self,
        lv: Lv,
        span: Span,
        what: &str,
    ) -> Result<(Place, Type), Diagnostic> {
        match lv {
            Lv::Value(..) => err(
                span,
                format!("{what} needs a variable or a memory location"),
            ),
            Lv::Var { is_const: true, .. } | Lv::Mem { is_const: true, .. } => err(
                span,
                format!("{what} cannot change a const or __constant__ location"),
            ),
            Lv::Var { reg, ty, .. } => {
                let elem = elem_of(&ty).ok_or_else(|| {
                    Diagnostic::new(span, format!("{what} cannot change a '{ty}'"))
                })?;
                Ok((Place::Reg { reg, elem }, ty))
            }
            Lv::Mem { addr, ty, .. } => {
                let Some(elem) = elem_of(&ty) else {
                    return err(span, format!("{what} cannot change a whole array ('{ty}')"));
                };
                Ok((
                    Place::Mem {
                        addr: Box::new(addr),
                        elem,
                    },
                    ty,
                ))
            }
        }
    }

    #[inline(never)]
    pub(super) fn unary(&mut self, op: UnaryOp, a: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        match op {
            UnaryOp::Deref => {
                if let Some(this) = self.this_object(a) {
                    return this;
                }
                // `*&v` is `v` ([expr.unary.op]): a register variable too, whose address the
                // simulator has not (the toolkit headers' `curand(&state)` reads `*(&state)`).
                if let ExprKind::Unary(UnaryOp::AddrOf, inner) = &a.kind {
                    if matches!(inner.kind, ExprKind::Ident(_)) {
                        if let Lv::Var { reg, ty, is_const } = self.lower(inner)? {
                            return Ok(Lv::Var { reg, ty, is_const });
                        }
                    }
                }
                let (ex, ty) = self.rvalue(a)?;
                let Type::Pointer { pointee, pointee_const } = ty else {
                    return err(a.span, format!("cannot dereference a '{ty}': it is not a pointer"));
                };
                if *pointee == Type::Void {
                    return err(a.span, "cannot dereference a 'void*'");
                }
                Ok(Lv::Mem { addr: ex, ty: *pointee, is_const: pointee_const })
            }
            UnaryOp::AddrOf => match self.lower(a)? {
                Lv::Mem { mut addr, ty, is_const } => {
                    addr.span = span;
                    Ok(Lv::Value(addr, Type::pointer_to(ty, is_const)))
                }
                Lv::Var { .. } => err(
                    a.span,
                    "cannot take the address of a register variable in the simulator; use an array or a __shared__ variable",
                ),
                Lv::Value(..) => err(a.span, "cannot take the address of a temporary value"),
            },
            UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec => {
                let what = if matches!(op, UnaryOp::PreInc | UnaryOp::PostInc) { "'++'" } else { "'--'" };
                let lv = self.lower(a)?;
                let (place, ty) = self.place(lv, a.span, what)?;
                let sign = if matches!(op, UnaryOp::PreInc | UnaryOp::PostInc) { 1 } else { -1 };
                let post = matches!(op, UnaryOp::PostInc | UnaryOp::PostDec);
                let (delta, pointer) = match &ty {
                    Type::Scalar(_) => (sign, false),
                    Type::Pointer { pointee, .. } => (sign * pointee.size() as i64, true),
                    other => return err(a.span, format!("{what} needs a number or a pointer, not '{other}'")),
                };
                Ok(Lv::Value(Ex::new(ExKind::IncDec { place, delta, post, pointer }, 1, span), ty))
            }
            UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot => {
                let lv = self.lower(a)?;
                let symbol = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    _ => "~",
                };
                let vector = matches!(record::lv_type(&lv), Type::Vector(..));
                if record::struct_of(&lv).is_some() || vector && self.declares_operator(symbol) {
                    let (ex, ty) = self.struct_operator(symbol, (lv, a.span), None, span)?;
                    return Ok(Lv::Value(ex, ty));
                }
                let read = self.read_span(a);
                let (ex, ty) = self.rvalue_of(lv, read);
                let Type::Scalar(s) = ty else {
                    return err(a.span, format!("this operator needs a number, not '{ty}'"));
                };
                if op == UnaryOp::BitNot && s.is_float() {
                    return err(a.span, format!("'~' needs an integer, not '{ty}'"));
                }
                let p = promote(s);
                let ex = self.convert_scalar(ex, s, p);
                if op == UnaryOp::Plus {
                    return Ok(Lv::Value(ex, Type::Scalar(p)));
                }
                if let ExKind::Const(bits) = ex.kind {
                    let folded = match (op, p) {
                        (UnaryOp::Neg, Scalar::F32) => u64::from((-f32::from_bits(bits as u32)).to_bits()),
                        (UnaryOp::Neg, Scalar::F64) => (-f64::from_bits(bits)).to_bits(),
                        (UnaryOp::Neg, s) => int_bits((bits as i64).wrapping_neg(), s),
                        (_, s) => int_bits(!(bits as i64), s),
                    };
                    return Ok(Lv::Value(konst(folded, p, span), Type::Scalar(p)));
                }
                let uop = if op == UnaryOp::Neg { UnOp::Neg } else { UnOp::BitNot };
                Ok(Lv::Value(Ex::new(ExKind::Unary { op: uop, ty: p, value: Box::new(ex) }, 1, span), Type::Scalar(p)))
            }
            UnaryOp::Not => {
                let cond = self.condition(a)?;
                let zero = konst(0, Scalar::Bool, span);
                let ex = Ex::new(ExKind::Binary { op: BinOp::Eq, ty: Scalar::Bool, lhs: Box::new(cond), rhs: Box::new(zero) }, 1, span);
                Ok(Lv::Value(ex, Type::Scalar(Scalar::I32)))
            }
        }
    }

    #[inline(never)]
    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            if self.calls_in_place(b) {
                return self.logical_in_place(op == BinaryOp::And, a, b, span);
            }
            let lhs = self.condition(a)?;
            let rhs = self.condition(b)?;
            let ex = Ex::new(
                ExKind::Logical {
                    and: op == BinaryOp::And,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                1,
                span,
            );
            return Ok((ex, Type::Scalar(Scalar::I32)));
        }
        let left = self.lower(a)?;
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) && self.calls_in_place(b) {
            // C++17 evaluates a shift's left operand first ([expr.shift]): before a call lowered
            // in place on its right.
            let read = self.read_span(a);
            let (ea, ta) = self.rvalue_of(left, read);
            let ea = self.held(ea, &ta);
            let (eb, tb) = self.rvalue(b)?;
            return self.binary_values(op, ea, ta, eb, tb, span, a.span, b.span);
        }
        let (eb, tb) = self.rvalue(b)?;
        let vector_operator = || {
            (matches!(record::lv_type(&left), Type::Vector(..)) || matches!(tb, Type::Vector(..)))
                && self.declares_operator(op.symbol())
        };
        if record::struct_of(&left).is_some() || matches!(tb, Type::Struct(_)) || vector_operator()
        {
            let right = Some((eb, tb, b.span));
            return self.struct_operator(op.symbol(), (left, a.span), right, span);
        }
        // A read through a reference carries the span of the place it names (`read_span`).
        let read = self.read_span(a);
        let (ea, ta) = self.rvalue_of(left, read);
        self.binary_values(op, ea, ta, eb, tb, span, a.span, b.span)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn binary_values(
        &mut self,
        op: BinaryOp,
        ea: Ex,
        ta: Type,
        eb: Ex,
        tb: Type,
        span: Span,
        sa: Span,
        sb: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let symbol = op.symbol();
        // Pointer arithmetic and pointer comparisons.
        match (&ta, &tb, op) {
            (Type::Pointer { pointee, .. }, Type::Scalar(s), BinaryOp::Add | BinaryOp::Sub)
                if s.is_integer() =>
            {
                let size = pointee.size().max(1) as i64;
                let stride = if op == BinaryOp::Sub { -size } else { size };
                let moved = self.offset(ea, eb, (*s, stride), size as u32, span);
                return Ok((moved, ta.clone()));
            }
            (Type::Scalar(s), Type::Pointer { pointee, .. }, BinaryOp::Add) if s.is_integer() => {
                let size = pointee.size().max(1) as i64;
                let moved = self.offset(eb, ea, (*s, size), size as u32, span);
                return Ok((moved, tb.clone()));
            }
            (Type::Pointer { pointee, .. }, Type::Pointer { .. }, BinaryOp::Sub) => {
                let elem_size = pointee.size().max(1) as u32;
                let ex = Ex::new(
                    ExKind::PtrDiff {
                        lhs: Box::new(ea),
                        rhs: Box::new(eb),
                        elem_size,
                    },
                    1,
                    span,
                );
                return Ok((ex, Type::Scalar(Scalar::I64)));
            }
            (Type::Pointer { .. }, Type::Pointer { .. } | Type::Scalar(_), _)
            | (Type::Scalar(_), Type::Pointer { .. }, _)
                if matches!(
                    op,
                    BinaryOp::Eq
                        | BinaryOp::Ne
                        | BinaryOp::Lt
                        | BinaryOp::Le
                        | BinaryOp::Gt
                        | BinaryOp::Ge
                ) =>
            {
                let ea = if let Type::Scalar(s) = ta {
                    self.convert_scalar(ea, s, Scalar::U64)
                } else {
                    ea
                };
                let eb = if let Type::Scalar(s) = tb {
                    self.convert_scalar(eb, s, Scalar::U64)
                } else {
                    eb
                };
                let bop = comparison(op);
                let ex = Ex::new(
                    ExKind::Binary {
                        op: bop,
                        ty: Scalar::U64,
                        lhs: Box::new(ea),
                        rhs: Box::new(eb),
                    },
                    1,
                    span,
                );
                return Ok((ex, Type::Scalar(Scalar::I32)));
            }
            _ => {}
        }
        let (Type::Scalar(x), Type::Scalar(y)) = (&ta, &tb) else {
            let bad = if is_arith(&ta) { (&tb, sb) } else { (&ta, sa) };
            return err(
                bad.1,
                format!("'{symbol}' cannot be applied to a '{}'", bad.0),
            );
        };
        let (x, y) = (*x, *y);
        let integer_only = matches!(
            op,
            BinaryOp::Rem
                | BinaryOp::Shl
                | BinaryOp::Shr
                | BinaryOp::BitAnd
                | BinaryOp::BitOr
                | BinaryOp::BitXor
        );
        if integer_only && (x.is_float() || y.is_float()) {
            let at = if x.is_float() { sa } else { sb };
            return err(
                at,
                format!("'{symbol}' needs integer operands, not 'float'"),
            );
        }
        let ty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            promote(x)
        } else {
            common(x, y)
        };
        let ea = self.convert_scalar(ea, x, ty);
        let eb = self.convert_scalar(eb, y, ty);
        let (bop, result) = match op {
            BinaryOp::Add => (BinOp::Add, ty),
            BinaryOp::Sub => (BinOp::Sub, ty),
            BinaryOp::Mul => (BinOp::Mul, ty),
            BinaryOp::Div => (BinOp::Div, ty),
            BinaryOp::Rem => (BinOp::Rem, ty),
            BinaryOp::Shl => (BinOp::Shl, ty),
            BinaryOp::Shr => (BinOp::Shr, ty),
            BinaryOp::BitAnd => (BinOp::BitAnd, ty),
            BinaryOp::BitOr => (BinOp::BitOr, ty),
            BinaryOp::BitXor => (BinOp::BitXor, ty),
            other => (comparison(other), Scalar::I32),
        };
        // Fold constant integer arithmetic (array sizes in expressions, `TILE_WIDTH + PAD`).
        if let (ExKind::Const(p), ExKind::Const(q)) = (&ea.kind, &eb.kind) {
            if ty.is_integer() && !matches!(bop, BinOp::Div | BinOp::Rem) {
                if let Some(v) = fold_int(bop, *p as i64, *q as i64, ty) {
                    return Ok((
                        konst(int_bits(v, result), result, span),
                        Type::Scalar(result),
                    ));
                }
            }
        }
        let ex = Ex::new(
            ExKind::Binary {
                op: bop,
                ty,
                lhs: Box::new(ea),
                rhs: Box::new(eb),
            },
            1,
            span,
        );
        Ok((ex, Type::Scalar(result)))
    }

    #[inline(never)]
    pub(super) fn assign(
        &mut self,
        op: Option<BinaryOp>,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let what = match op {
            None => "'='".to_string(),
            Some(op) => format!("'{}='", op.symbol()),
        };
        // The right side is evaluated before the left (C++17 [expr.ass]): before a call
        // lowered in place on the left.
        let value_first = if self.calls_in_place(lhs) {
            let (value, vty) = self.rvalue(rhs)?;
            Some((self.held(value, &vty), vty))
        } else {
            None
        };
        let lv = self.lower(lhs)?;
        if let Some(record) = record::struct_of(&lv) {
            return self.struct_assign(op, lv, record, rhs, span);
        }
        // `v += w` on a vector type whose `operator+` the file defines is `v = v + w`, as the
        // compound operators of the CUDA samples' `helper_math.h` are.
        let vector_op = op.filter(|op| {
            matches!(record::lv_type(&lv), Type::Vector(..)) && self.declares_operator(op.symbol())
        });
        let (place, ty) = self.place(lv.clone(), lhs.span, &what)?;
        if let (Some(op), None) = (vector_op, &value_first) {
            let (value, vty) = self.rvalue(rhs)?;
            let (combined, cty) = self.struct_operator(
                op.symbol(),
                (lv, lhs.span),
                Some((value, vty, rhs.span)),
                span,
            )?;
            let combined = self.convert(combined, &cty, &ty, span)?;
            let n = place.elem().n;
            let assign = ExKind::Assign {
                place,
                value: Box::new(combined),
            };
            return Ok(Lv::Value(Ex::new(assign, n, span), ty));
        }
        let (value, vty) = match value_first {
            Some(value) => value,
            None => self.rvalue(rhs)?,
        };
        let Some(op) = op else {
            let value = self.convert(value, &vty, &ty, rhs.span)?;
            let n = place.elem().n;
            return Ok(Lv::Value(
                Ex::new(
                    ExKind::Assign {
                        place,
                        value: Box::new(value),
                    },
                    n,
                    span,
                ),
                ty,
            ));
        };
        if let Type::Pointer { pointee, .. } = &ty {
            let (Place::Reg { reg, elem }, Type::Scalar(s), BinaryOp::Add | BinaryOp::Sub) =
                (&place, &vty, op)
            else {
                return err(span, format!("{what} on a pointer works only as 'p += n' or 'p -= n' on a pointer variable"));
            };
            if s.is_float() {
                return err(rhs.span, "a pointer can only move by an integer");
            }
            let size = pointee.size().max(1) as i64;
            let stride = if op == BinaryOp::Sub { -size } else { size };
            let current = Ex::new(ExKind::Reg(*reg), 1, lhs.span);
            let moved = self.offset(current, value, (*s, stride), size as u32, span);
            let place = Place::Reg {
                reg: *reg,
                elem: *elem,
            };
            return Ok(Lv::Value(
                Ex::new(
                    ExKind::Assign {
                        place,
                        value: Box::new(moved),
                    },
                    1,
                    span,
                ),
                ty,
            ));
        }
        let (Type::Scalar(ps), Type::Scalar(vs)) = (&ty, &vty) else {
            return err(
                span,
                format!("{what} needs numbers, not '{ty}' and '{vty}'"),
            );
        };
        let (ps, vs) = (*ps, *vs);
        let integer_only = matches!(
            op,
            BinaryOp::Rem
                | BinaryOp::Shl
                | BinaryOp::Shr
                | BinaryOp::BitAnd
                | BinaryOp::BitOr
                | BinaryOp::BitXor
        );
        if integer_only && (ps.is_float() || vs.is_float()) {
            return err(span, format!("{what} needs integer operands"));
        }
        let op_ty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            promote(ps)
        } else {
            common(ps, vs)
        };
        let value = self.convert_scalar(value, vs, op_ty);
        let bop = match op {
            BinaryOp::Add => BinOp::Add,
            BinaryOp::Sub => BinOp::Sub,
            BinaryOp::Mul => BinOp::Mul,
            BinaryOp::Div => BinOp::Div,
            BinaryOp::Rem => BinOp::Rem,
            BinaryOp::Shl => BinOp::Shl,
            BinaryOp::Shr => BinOp::Shr,
            BinaryOp::BitAnd => BinOp::BitAnd,
            BinaryOp::BitOr => BinOp::BitOr,
            BinaryOp::BitXor => BinOp::BitXor,
            _ => return err(span, format!("{what} is not an operator")),
        };
        Ok(Lv::Value(
            Ex::new(
                ExKind::Compound {
                    place,
                    op: bop,
                    ty: op_ty,
                    value: Box::new(value),
                },
                1,
                span,
            ),
            ty,
        ))
    }
}
