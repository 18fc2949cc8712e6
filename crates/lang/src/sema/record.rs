//! Structs and classes in the semantic check: members, whole-struct copies, member functions,
//! constructors and operators.
//!
//! A struct value in registers is its scalar leaves, one register each (`record`); a struct in
//! memory is reached member by member, each member access one load or store of the member's
//! type at the struct's address plus the member's offset, so sectors and banks follow the real
//! addresses. A whole struct moves between memory and registers in the accesses of
//! `Record::copy_plan`, the widest its alignment allows, as nvcc copies it (a 12-byte struct of
//! floats three 4-byte loads, aligned to 16 one 16-byte load: `tests/reference/vector_loads`).
//! Registers are copied leaf by leaf, so that `block_shift` sees each leaf's own value.
//!
//! A member function is a `__device__` function whose first parameter `this` is the object, by
//! value (`parser::record`). A call passes the object and, when the function changes it (its
//! code writes one of `this`'s registers) and the object is a variable or in memory, copies
//! `this` back from the callee's registers after the call, as a reference would have changed it
//! in place. A constructor returns the object it built; an operator on a struct is a call of the
//! member or free function `operator+` whose parameters the operands match (C++ [over.match]).

use super::{err, width_of, Lv, Sema};
use crate::ast::{BinaryOp, Expr, ExprKind, Initializer, Record, Scalar, Type};
use crate::ir::{Elem, Ex, ExKind, Op, Place, Reg};
use crate::span::{Diagnostic, DiagnosticKind, Span};
use std::sync::Arc;

/// A struct value in registers `reg..reg + width`, once `setup` (if any) has run.
pub(super) struct Block {
    setup: Option<Ex>,
    reg: Reg,
}

/// The layout of a value of the struct in a register place: its leaves as bits, copied whole.
pub(super) fn struct_elem(record: &Record) -> Option<Elem> {
    record.width().map(|n| Elem {
        scalar: Scalar::U32,
        n,
    })
}

/// The struct an expression's value has, if it is one.
pub(super) fn struct_of(lv: &Lv) -> Option<Arc<Record>> {
    match lv_type(lv) {
        Type::Struct(record) => Some(record.clone()),
        _ => None,
    }
}

pub(super) fn lv_type(lv: &Lv) -> &Type {
    match lv {
        Lv::Value(_, t) | Lv::Var { ty: t, .. } | Lv::Mem { ty: t, .. } => t,
    }
}

fn lv_is_const(lv: &Lv) -> bool {
    matches!(
        lv,
        Lv::Var { is_const: true, .. } | Lv::Mem { is_const: true, .. } | Lv::Value(..)
    )
}

/// The same place again (its address evaluated again: callers make it free of side effects).
fn same_place(lv: &Lv) -> Option<Lv> {
    match lv {
        Lv::Var { reg, ty, is_const } => Some(Lv::Var {
            reg: *reg,
            ty: ty.clone(),
            is_const: *is_const,
        }),
        Lv::Mem { addr, ty, is_const } => Some(Lv::Mem {
            addr: addr.clone(),
            ty: ty.clone(),
            is_const: *is_const,
        }),
        Lv::Value(..) => None,
    }
}

/// Whether evaluating `ex` changes nothing (no assignment, call or atomic), so that it may be
/// evaluated once per access of a copy.
fn pure(ex: &Ex) -> bool {
    !matches!(
        ex.kind,
        ExKind::Assign { .. }
            | ExKind::Compound { .. }
            | ExKind::IncDec { .. }
            | ExKind::Call { .. }
            | ExKind::Atomic { .. }
    ) && ex.children().into_iter().all(pure)
}

/// `first, then` as one expression whose value is `then`'s.
fn then(first: Option<Ex>, then: Ex, span: Span) -> Ex {
    match first {
        None => then,
        Some(first) => {
            let width = then.width;
            Ex::new(ExKind::Comma(Box::new(first), Box::new(then)), width, span)
        }
    }
}

/// The steps one after the other, as one expression (nothing for none).
fn sequence(steps: Vec<Ex>, span: Span) -> Ex {
    let mut all: Option<Ex> = None;
    for step in steps {
        all = Some(then(all, step, span));
    }
    all.unwrap_or_else(|| Ex::new(ExKind::Const(0), 0, span))
}

fn reg(r: Reg, width: u8, span: Span) -> Ex {
    Ex::new(ExKind::Reg(r), width, span)
}

/// The first leaf of an access whose components are consecutive leaves, all of them.
fn consecutive(parts: &[Option<u32>]) -> Option<u32> {
    let first = parts.first().copied().flatten()?;
    let all = parts
        .iter()
        .enumerate()
        .all(|(k, p)| *p == Some(first + k as u32));
    all.then_some(first)
}

impl Sema<'_> {
    /// The registers a value of `record` takes, or the error of a struct too large to hold.
    pub(super) fn struct_width(&self, record: &Record, span: Span) -> Result<u8, Diagnostic> {
        record.width().ok_or_else(|| {
            Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                span,
                format!(
                    "a whole '{}' of more than {} scalars is not copied in the simulator; use its \
                     members",
                    record.name,
                    crate::record::MAX_LEAVES
                ),
            )
        })
    }

    /// `base.field` where `base` is a struct: a register of a variable, a place in memory at
    /// the member's offset, or a part of a value.
    pub(super) fn struct_member(
        &mut self,
        lv: Lv,
        record: &Record,
        field: &str,
        field_span: Span,
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let Some(member) = record.field(field) else {
            return err(
                field_span,
                format!("'{}' has no member '{field}'", record.name),
            );
        };
        let ty = member.ty.clone();
        Ok(match lv {
            Lv::Var { reg, is_const, .. } => Lv::Var {
                reg: reg + member.first_leaf,
                ty,
                is_const,
            },
            Lv::Mem { addr, is_const, .. } => Lv::Mem {
                addr: self.at_offset(addr, member.offset, ty.size() as u32, span),
                ty,
                is_const,
            },
            Lv::Value(ex, _) => {
                let width = width_of(&ty);
                let part = ExKind::Component(Box::new(ex), member.first_leaf as u8);
                Lv::Value(Ex::new(part, width, span), ty)
            }
        })
    }

    /// `addr + offset` bytes, pointing to something of `size` bytes.
    fn at_offset(&mut self, addr: Ex, offset: u64, size: u32, span: Span) -> Ex {
        let at = Ex::new(ExKind::Const(offset), 1, span);
        self.offset(addr, at, (Scalar::I64, 1), size.max(1), span)
    }

    /// An address that may be evaluated once per access: `addr` itself when it changes
    /// nothing, or a register it is first copied to (the copy is the first result).
    fn stable_address(&mut self, addr: Ex, span: Span) -> (Option<Ex>, Ex) {
        if pure(&addr) {
            return (None, addr);
        }
        let pointer = self.alloc(1);
        let copy = Ex::assign_reg(pointer, Elem::scalar(Scalar::U64), addr, 1, span);
        (Some(copy), reg(pointer, 1, span))
    }

    /// Loads of the struct at `addr` into registers `to..`, in the copy plan's accesses.
    fn load_struct(&mut self, addr: Ex, record: &Record, to: Reg, span: Span) -> Ex {
        let (prefix, addr) = self.stable_address(addr, span);
        let mut steps: Vec<Ex> = prefix.into_iter().collect();
        for access in record.copy_plan() {
            let elem = Elem {
                scalar: access.scalar,
                n: access.parts.len() as u8,
            };
            let at = self.at_offset(addr.clone(), access.offset, elem.bytes(), span);
            let load = Ex::new(
                ExKind::Load {
                    addr: Box::new(at),
                    elem,
                },
                elem.n,
                span,
            );
            if let Some(first) = consecutive(&access.parts) {
                steps.push(Ex::assign_reg(to + first, elem, load, elem.n, span));
                continue;
            }
            // Padding among the components: the access lands in registers of its own, and
            // the leaves are taken from there.
            let staged = self.alloc(elem.n);
            steps.push(Ex::assign_reg(staged, elem, load, elem.n, span));
            for (k, part) in access.parts.iter().enumerate() {
                if let Some(leaf) = part {
                    let one = Elem::scalar(access.scalar);
                    let from = reg(staged + k as Reg, 1, span);
                    steps.push(Ex::assign_reg(to + leaf, one, from, 1, span));
                }
            }
        }
        sequence(steps, span)
    }

    /// Stores of the struct value `block` at `addr`, in the copy plan's accesses.
    fn store_struct(&mut self, addr: Ex, record: &Record, block: Block, span: Span) -> Ex {
        let (prefix, addr) = self.stable_address(addr, span);
        let mut steps: Vec<Ex> = block.setup.into_iter().chain(prefix).collect();
        for access in record.copy_plan() {
            let n = access.parts.len() as u8;
            let elem = Elem {
                scalar: access.scalar,
                n,
            };
            let value = match consecutive(&access.parts) {
                Some(first) => reg(block.reg + first, n, span),
                None => {
                    let parts = access
                        .parts
                        .iter()
                        .map(|part| match part {
                            Some(leaf) => reg(block.reg + leaf, 1, span),
                            None => Ex::new(ExKind::Const(0), 1, span),
                        })
                        .collect();
                    let scalar = access.scalar;
                    Ex::new(ExKind::MakeVector { scalar, parts }, n, span)
                }
            };
            let at = self.at_offset(addr.clone(), access.offset, elem.bytes(), span);
            let place = Place::Mem {
                addr: Box::new(at),
                elem,
            };
            let store = ExKind::Assign {
                place,
                value: Box::new(value),
            };
            steps.push(Ex::new(store, n, span));
        }
        sequence(steps, span)
    }

    /// Copies of the value `block` into registers `to..`, leaf by leaf.
    fn copy_leaves(&mut self, to: Reg, block: Block, record: &Record, span: Span) -> Ex {
        let mut steps: Vec<Ex> = block.setup.into_iter().collect();
        if block.reg != to {
            for (k, leaf) in record.leaves.iter().flatten().enumerate() {
                let from = reg(block.reg + k as Reg, 1, span);
                let one = Elem::scalar(leaf.scalar);
                steps.push(Ex::assign_reg(to + k as Reg, one, from, 1, span));
            }
        }
        sequence(steps, span)
    }

    /// The value of a struct expression in registers.
    pub(super) fn struct_block(
        &mut self,
        lv: Lv,
        record: &Record,
        span: Span,
    ) -> Result<Block, Diagnostic> {
        let width = self.struct_width(record, span)?;
        Ok(match lv {
            Lv::Var { reg, .. } => Block { setup: None, reg },
            Lv::Mem { addr, .. } => {
                let to = self.alloc(width);
                let setup = self.load_struct(addr, record, to, span);
                Block {
                    setup: Some(setup),
                    reg: to,
                }
            }
            Lv::Value(ex, _) => match (Self::comma_register(&ex), ex.kind) {
                (_, ExKind::Reg(r)) => Block {
                    setup: None,
                    reg: r,
                },
                (Some(r), ExKind::Comma(first, _)) => Block {
                    setup: Some(*first),
                    reg: r,
                },
                (_, kind) => {
                    let to = self.alloc(width);
                    let value = Ex { kind, ..ex };
                    let elem = Elem {
                        scalar: Scalar::U32,
                        n: width,
                    };
                    Block {
                        setup: Some(Ex::assign_reg(to, elem, value, width, span)),
                        reg: to,
                    }
                }
            },
        })
    }

    /// The register a `first, reg` expression leaves its value in.
    fn comma_register(ex: &Ex) -> Option<Reg> {
        match &ex.kind {
            ExKind::Comma(_, last) => match last.kind {
                ExKind::Reg(r) => Some(r),
                _ => None,
            },
            _ => None,
        }
    }

    /// A struct's value as an expression whose result registers hold it.
    fn block_value(block: Block, width: u8, span: Span) -> Ex {
        then(block.setup, reg(block.reg, width, span), span)
    }

    /// A struct in memory read for its value (`rvalue_of`).
    pub(super) fn struct_rvalue(
        &mut self,
        lv: Lv,
        record: &Record,
        span: Span,
    ) -> Result<Ex, Diagnostic> {
        let width = self.struct_width(record, span)?;
        let block = self.struct_block(lv, record, span)?;
        Ok(Self::block_value(block, width, span))
    }

    /// `target = value` for a struct target: leaf by leaf into registers, in the copy plan's
    /// accesses into memory.
    fn struct_store(
        &mut self,
        target: Lv,
        record: &Record,
        value: Lv,
        span: Span,
    ) -> Result<Ex, Diagnostic> {
        match target {
            Lv::Var { reg, .. } => match value {
                Lv::Mem { addr, .. } => {
                    self.struct_width(record, span)?;
                    Ok(self.load_struct(addr, record, reg, span))
                }
                other => {
                    let block = self.struct_block(other, record, span)?;
                    Ok(self.copy_leaves(reg, block, record, span))
                }
            },
            Lv::Mem { addr, .. } => {
                let block = self.struct_block(value, record, span)?;
                Ok(self.store_struct(addr, record, block, span))
            }
            Lv::Value(..) => err(span, "'=' needs a variable or a memory location"),
        }
    }

    /// A value of `record` from `e`: the struct itself, or a constructor's conversion of it.
    fn struct_value_of(&mut self, record: &Arc<Record>, e: &Expr) -> Result<Lv, Diagnostic> {
        let lv = self.lower(e)?;
        match lv_type(&lv) {
            Type::Struct(r) if r == record => Ok(lv),
            _ => {
                let read = self.read_span(e);
                let (ex, ty) = self.rvalue_of(lv, read);
                let value = self.construct(record, vec![(ex, ty, e.span)], e.span)?;
                Ok(Lv::Value(value, Type::Struct(record.clone())))
            }
        }
    }

    /// `lhs = rhs` or `lhs op= rhs` where `lhs` is a struct.
    pub(super) fn struct_assign(
        &mut self,
        op: Option<BinaryOp>,
        target: Lv,
        record: Arc<Record>,
        rhs: &Expr,
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        if lv_is_const(&target) {
            return err(span, "'=' cannot change a const struct or a value");
        }
        let Some(op) = op else {
            let value = self.struct_value_of(&record, rhs)?;
            let store = self.struct_store(target, &record, value, span)?;
            return Ok(Lv::Value(store, Type::Void));
        };
        let (ex, ty) = self.rvalue(rhs)?;
        let name = format!("operator{}=", op.symbol());
        let (call, ty) =
            self.member_call(target, &record, &name, vec![(ex, ty, rhs.span)], span)?;
        Ok(Lv::Value(call, ty))
    }

    // ----- declarations -----

    /// A local variable of a struct type: registers, or local memory when the struct has an
    /// array member (which only memory can index) or is too large for registers.
    pub(super) fn struct_local(
        &mut self,
        d: &crate::ast::Declarator,
        record: &Arc<Record>,
        is_const: bool,
    ) -> Result<(), Diagnostic> {
        let ty = Type::Struct(record.clone());
        let target = if record.has_array || record.width().is_none() {
            let align = ty.align().max(4);
            self.local_bytes = self.local_bytes.div_ceil(align) * align;
            let offset = self.local_bytes;
            self.local_bytes += ty.size();
            let id = self.new_object(d, ty.clone(), crate::ir::ObjectSpace::Local, is_const);
            self.objects[id].local_offset = offset;
            self.objects[id].in_registers = false;
            self.declare(&d.name, d.span, super::Symbol::Object { id })?;
            Lv::Mem {
                addr: Ex::new(ExKind::AddrOf(id), 1, d.span),
                ty,
                is_const: false,
            }
        } else {
            let width = self.struct_width(record, d.span)?;
            let reg = self.alloc(width);
            self.declare(
                &d.name,
                d.span,
                super::Symbol::Var {
                    reg,
                    ty: ty.clone(),
                    is_const,
                    const_value: None,
                },
            )?;
            Lv::Var {
                reg,
                ty,
                is_const: false,
            }
        };
        let init = self.struct_initializer(target, record, d.init.as_ref(), d.span)?;
        if let Some(init) = init {
            self.emit(Op::Eval(init), d.span);
        }
        Ok(())
    }

    /// The code that initialises the struct at `target` from `init`: a copy, a constructor
    /// call (`S v(1, 2)`, `S v{1, 2}`, `S v;` with a default constructor), or the members in
    /// order (`S v = {1, 2}` of a struct without constructors, the rest zero).
    pub(super) fn struct_initializer(
        &mut self,
        target: Lv,
        record: &Arc<Record>,
        init: Option<&Initializer>,
        span: Span,
    ) -> Result<Option<Ex>, Diagnostic> {
        let items: Vec<&Expr> = match init {
            None => {
                if self.constructors(record).is_empty() {
                    return Ok(None);
                }
                Vec::new()
            }
            Some(Initializer::Expr(e)) => {
                let value = self.struct_value_of(record, e)?;
                return self.struct_store(target, record, value, e.span).map(Some);
            }
            Some(Initializer::List(items, list_span)) => {
                let mut exprs = Vec::new();
                for item in items {
                    match item {
                        Initializer::Expr(e) => exprs.push(e),
                        Initializer::List(..) if self.constructors(record).is_empty() => {
                            return self.aggregate(target, record, items, *list_span).map(Some)
                        }
                        Initializer::List(_, at) => {
                            return err(*at, "nested braces in a constructor's arguments")
                        }
                    }
                }
                if self.constructors(record).is_empty() {
                    return self.aggregate(target, record, items, *list_span).map(Some);
                }
                exprs
            }
        };
        let mut args = Vec::new();
        for e in items {
            let (ex, ty) = self.rvalue(e)?;
            args.push((ex, ty, e.span));
        }
        let value = self.construct(record, args, span)?;
        let value = Lv::Value(value, Type::Struct(record.clone()));
        self.struct_store(target, record, value, span).map(Some)
    }

    /// Aggregate initialisation: each member from its item in order, the members left over
    /// zero (C++ [dcl.init.aggr]).
    fn aggregate(
        &mut self,
        target: Lv,
        record: &Arc<Record>,
        items: &[Initializer],
        span: Span,
    ) -> Result<Ex, Diagnostic> {
        if items.len() > record.fields.len() {
            return err(span, format!("too many values for '{}'", record.name));
        }
        let mut steps = Vec::new();
        for (k, field) in record.fields.iter().enumerate() {
            let Some(place) = same_place(&target) else {
                return err(span, "a braced list needs a variable to initialise");
            };
            let member = self.struct_member(place, record, &field.name, span, span)?;
            let item = items.get(k);
            if let Type::Struct(inner) = &field.ty {
                if let Some(init) = self.struct_initializer(member, inner, item, span)? {
                    steps.push(init);
                }
                continue;
            }
            let at = match item {
                Some(Initializer::Expr(e)) => e.span,
                Some(Initializer::List(_, at)) => *at,
                None => span,
            };
            let (place, ty) = self.place(member, at, "an initialiser")?;
            let (value, from) = match item {
                Some(Initializer::Expr(e)) => self.rvalue(e)?,
                None => (
                    Ex::new(ExKind::Const(0), 1, span),
                    Type::Scalar(Scalar::I32),
                ),
                Some(Initializer::List(_, at)) => {
                    return err(*at, format!("a braced list cannot initialise '{ty}' here"))
                }
            };
            let value = if item.is_none() && !matches!(ty, Type::Scalar(_)) {
                value
            } else {
                self.convert(value, &from, &ty, at)?
            };
            let n = place.elem().n;
            if item.is_none() && n != 1 {
                continue;
            }
            let assign = ExKind::Assign {
                place,
                value: Box::new(value),
            };
            steps.push(Ex::new(assign, n, at));
        }
        Ok(sequence(steps, span))
    }

    // ----- calls -----

    /// The functions whose name is `base` or `base(types)` (an overload), with whether they
    /// take `this`.
    pub(super) fn overloads(&self, base: &str) -> Vec<usize> {
        self.functions
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                let plain = f.name.split('(').next().unwrap_or_default();
                plain == base
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// The constructors of `record`.
    fn constructors(&self, record: &Record) -> Vec<usize> {
        self.overloads(&crate::parser::constructor_name(&record.name))
    }

    /// Among `candidates`, the one whose parameters (after `this`, when `with_this`) the
    /// arguments' types match best: exactly, else by C's conversions between numbers.
    pub(super) fn best_overload(
        &self,
        candidates: &[usize],
        args: &[Type],
        with_this: bool,
    ) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for &index in candidates {
            let params = &self.functions[index].params;
            let takes_this = params.first().is_some_and(|p| p.name == "this");
            if takes_this != with_this {
                continue;
            }
            let params = &params[usize::from(takes_this)..];
            if params.len() != args.len() {
                continue;
            }
            let mut exact = 0;
            let fits = params.iter().zip(args).all(|(p, a)| {
                exact += usize::from(p.ty == *a);
                p.ty == *a
                    || matches!((&p.ty, a), (Type::Scalar(_), Type::Scalar(_)))
                    || matches!((&p.ty, a), (Type::Pointer { .. }, Type::Pointer { .. }))
            });
            if fits && best.is_none_or(|(_, score)| exact > score) {
                best = Some((index, exact));
            }
        }
        best.map(|(index, _)| index)
    }

    /// A call of the function `index` with its arguments converted to its parameters.
    pub(super) fn call_function(
        &mut self,
        index: usize,
        mut lowered: Vec<Ex>,
        args: Vec<(Ex, Type, Span)>,
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let name = self.functions[index].name.clone();
        if self.waits_at_barrier(&name) {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                span,
                format!(
                    "'{name}' waits at __syncthreads(): a member function or operator that does \
                     is not simulated"
                ),
            ));
        }
        let params: Vec<Type> = self.functions[index].params[lowered.len()..]
            .iter()
            .map(|p| p.ty.clone())
            .collect();
        for ((ex, ty, at), param) in args.into_iter().zip(&params) {
            lowered.push(self.convert(ex, &ty, param, at)?);
        }
        if !self.callees.contains(&index) {
            self.callees.push(index);
        }
        let ret = self.unit_return_type(&name);
        let call = ExKind::Call {
            function: index,
            args: lowered,
        };
        Ok((Ex::new(call, width_of(&ret), span), ret))
    }

    /// A value of `record` built by its constructor from `args`; without constructors, `S()`
    /// is zero and `S(s)` a copy.
    fn construct(
        &mut self,
        record: &Arc<Record>,
        args: Vec<(Ex, Type, Span)>,
        span: Span,
    ) -> Result<Ex, Diagnostic> {
        let width = self.struct_width(record, span)?;
        let candidates = self.constructors(record);
        let types: Vec<Type> = args.iter().map(|(_, t, _)| t.clone()).collect();
        let Some(index) = self.best_overload(&candidates, &types, true) else {
            let ty = Type::Struct(record.clone());
            if args.len() == 1 && args[0].1 == ty {
                return Ok(args
                    .into_iter()
                    .next()
                    .map(|(ex, _, _)| ex)
                    .unwrap_or_else(|| Ex::new(ExKind::Const(0), 0, span)));
            }
            if args.is_empty() && candidates.is_empty() {
                let to = self.alloc(width);
                let zeros: Vec<Ex> = (0..width)
                    .map(|k| {
                        let zero = Ex::new(ExKind::Const(0), 1, span);
                        Ex::assign_reg(to + Reg::from(k), Elem::scalar(Scalar::U32), zero, 1, span)
                    })
                    .collect();
                return Ok(then(
                    Some(sequence(zeros, span)),
                    reg(to, width, span),
                    span,
                ));
            }
            let written: Vec<String> = types.iter().map(Type::to_string).collect();
            return err(
                span,
                format!(
                    "'{}' has no constructor taking ({})",
                    record.name,
                    written.join(", ")
                ),
            );
        };
        // The object under construction starts in registers of its own.
        let object = self.alloc(width);
        let this = vec![reg(object, width, span)];
        Ok(self.call_function(index, this, args, span)?.0)
    }

    /// `S(args)` as an expression (the parser's cast of a constructor call to `S`).
    pub(super) fn construction(
        &mut self,
        record: &Arc<Record>,
        args: &[Expr],
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let ty = Type::Struct(record.clone());
        if self.constructors(record).is_empty() && args.len() > 1 {
            // `S{a, b}` of a struct without constructors: its members in order.
            let width = self.struct_width(record, span)?;
            let to = self.alloc(width);
            let target = Lv::Var {
                reg: to,
                ty: ty.clone(),
                is_const: false,
            };
            let items: Vec<Initializer> = args.iter().cloned().map(Initializer::Expr).collect();
            let code = self.aggregate(target, record, &items, span)?;
            return Ok(Lv::Value(then(Some(code), reg(to, width, span), span), ty));
        }
        let mut lowered = Vec::new();
        for a in args {
            let (ex, ty) = self.rvalue(a)?;
            lowered.push((ex, ty, a.span));
        }
        let value = self.construct(record, lowered, span)?;
        Ok(Lv::Value(value, ty))
    }

    /// Whether the code of function `index` writes one of its `this` registers; a function not
    /// lowered yet (written later in the file) is taken to.
    fn writes_this(&self, index: usize) -> bool {
        let f = &self.functions[index];
        let Some(this) = f.params.first() else {
            return false;
        };
        if index >= self.current {
            return true;
        }
        let range = this.reg..this.reg + Reg::from(width_of(&this.ty));
        let mut stack: Vec<&Ex> = Vec::new();
        for op in &f.code {
            match op {
                Op::Eval(e)
                | Op::If { cond: e, .. }
                | Op::LoopCond { cond: e, .. }
                | Op::Return(Some(e)) => stack.push(e),
                _ => {}
            }
        }
        while let Some(e) = stack.pop() {
            let written = match &e.kind {
                ExKind::Assign { place, .. }
                | ExKind::Compound { place, .. }
                | ExKind::IncDec { place, .. } => match place {
                    Place::Reg { reg, .. } => Some(*reg),
                    Place::Mem { .. } => None,
                },
                _ => None,
            };
            if written.is_some_and(|r| range.contains(&r)) {
                return true;
            }
            stack.extend(e.children());
        }
        false
    }

    /// A call of the member function `name` of `record` on `object`, with the object copied
    /// back when the function changes it.
    pub(super) fn member_call(
        &mut self,
        object: Lv,
        record: &Arc<Record>,
        name: &str,
        args: Vec<(Ex, Type, Span)>,
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let candidates = self.overloads(&format!("{}::{name}", record.name));
        let types: Vec<Type> = args.iter().map(|(_, t, _)| t.clone()).collect();
        let Some(index) = self.best_overload(&candidates, &types, true) else {
            let written: Vec<String> = types.iter().map(Type::to_string).collect();
            return err(
                span,
                format!(
                    "'{}' has no member function '{name}' taking ({})",
                    record.name,
                    written.join(", ")
                ),
            );
        };
        let width = self.struct_width(record, span)?;
        // An address with side effects is computed once, for the call and the copy back.
        let (prefix, object) = match object {
            Lv::Mem { addr, ty, is_const } => {
                let (prefix, addr) = self.stable_address(addr, span);
                (prefix, Lv::Mem { addr, ty, is_const })
            }
            other => (None, other),
        };
        let copy_back = (!lv_is_const(&object) && self.writes_this(index))
            .then(|| same_place(&object))
            .flatten();
        let block = self.struct_block(object, record, span)?;
        let this = vec![Self::block_value(block, width, span)];
        let (call, ret) = self.call_function(index, this, args, span)?;
        let Some(target) = copy_back else {
            return Ok((then(prefix, call, span), ret));
        };
        let callee_this = self.functions[index].params[0].reg;
        let back = Lv::Value(reg(callee_this, width, span), Type::Struct(record.clone()));
        let store = self.struct_store(target, record, back, span)?;
        let ret_width = width_of(&ret);
        let result = if ret_width == 0 {
            then(Some(call), store, span)
        } else {
            let kept = self.alloc(ret_width);
            let elem = super::elem_of(&ret).unwrap_or(Elem::scalar(Scalar::U32));
            let keep = Ex::assign_reg(kept, elem, call, ret_width, span);
            let rest = then(Some(store), reg(kept, ret_width, span), span);
            then(Some(keep), rest, span)
        };
        Ok((then(prefix, result, span), ret))
    }

    /// A struct value converted to `to` by its conversion operator (`operator float*()`,
    /// C++ [class.conv.fct]): the operator to `to` itself, or, for a pointer to const, the one
    /// to the pointer without const. `None` when the struct has neither.
    pub(super) fn struct_conversion(
        &mut self,
        value: Ex,
        record: &Arc<Record>,
        to: &Type,
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        let mut targets = vec![to.clone()];
        if let Type::Pointer {
            pointee,
            pointee_const: true,
        } = to
        {
            targets.push(Type::Pointer {
                pointee: pointee.clone(),
                pointee_const: false,
            });
        }
        let name = targets
            .iter()
            .map(crate::parser::conversion_name)
            .find(|name| {
                !self
                    .overloads(&format!("{}::{name}", record.name))
                    .is_empty()
            })?;
        let object = Lv::Value(value, Type::Struct(record.clone()));
        Some(self.member_call(object, record, &name, Vec::new(), span))
    }

    /// `object.name(args)` (the parser's call `.name` with the object first), or a call of a
    /// member function by its name inside another one (`*this` first).
    pub(super) fn method_call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let Some((object, rest)) = args.split_first() else {
            return err(name_span, "a member function call needs its object");
        };
        let lv = self.lower(object)?;
        let Some(record) = struct_of(&lv) else {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                name_span,
                format!("calling a member function (`.{name}()`) is not simulated"),
            ));
        };
        let mut lowered = Vec::new();
        for a in rest {
            let (ex, ty) = self.rvalue(a)?;
            lowered.push((ex, ty, a.span));
        }
        self.member_call(lv, &record, name, lowered, span)
    }

    /// Inside a member function of `S`, a call of `S::f` by its name alone: on `*this`.
    pub(super) fn implicit_method(&self, name: &str) -> Option<String> {
        let this = self.functions.get(self.current)?.params.first()?;
        let Type::Struct(record) = &this.ty else {
            return None;
        };
        if this.name != "this" {
            return None;
        }
        let method = name.strip_prefix(&format!("{}::", record.name))?;
        (!self.overloads(name).is_empty()).then(|| method.to_string())
    }

    /// The free functions `operator` of `symbol` the file defines (in any namespace).
    fn free_operators(&self, symbol: &str) -> Vec<usize> {
        let name = format!("operator{symbol}");
        (0..self.functions.len())
            .filter(|&i| {
                let plain = self.functions[i].name.split('(').next().unwrap_or_default();
                plain == name || plain.ends_with(&format!("::{name}"))
            })
            .collect()
    }

    /// Whether the file defines a free `operator` of `symbol` (for a vector type's operands).
    pub(super) fn declares_operator(&self, symbol: &str) -> bool {
        !self.free_operators(symbol).is_empty()
    }

    /// `a op b` where an operand is a struct: the member `operator op` of the left operand's
    /// struct, or a free `operator op` of both.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn struct_operator(
        &mut self,
        symbol: &str,
        left: (Lv, Span),
        right: Option<(Ex, Type, Span)>,
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let name = format!("operator{symbol}");
        let (lv, at) = left;
        let args: Vec<(Ex, Type, Span)> = right.into_iter().collect();
        let types: Vec<Type> = args.iter().map(|(_, t, _)| t.clone()).collect();
        if let Some(record) = struct_of(&lv) {
            let members = self.overloads(&format!("{}::{name}", record.name));
            if self.best_overload(&members, &types, true).is_some() {
                // The operand is read, not changed: its value is passed.
                let (ex, ty) = self.rvalue_of(lv, at);
                let value = Lv::Value(ex, ty);
                return self.member_call(value, &record, &name, args, span);
            }
        }
        let (ex, ty) = self.rvalue_of(lv, at);
        let mut all = vec![(ex, ty.clone(), at)];
        all.extend(args);
        let all_types: Vec<Type> = all.iter().map(|(_, t, _)| t.clone()).collect();
        let free = self.free_operators(symbol);
        let Some(index) = self.best_overload(&free, &all_types, false) else {
            let written: Vec<String> = all_types.iter().map(Type::to_string).collect();
            return err(
                span,
                format!("no 'operator{symbol}' takes ({})", written.join(", ")),
            );
        };
        self.call_function(index, Vec::new(), all, span)
    }

    /// The `this` scope of a member function: its struct's members by name, in `this`'s
    /// registers.
    pub(super) fn member_scope(
        &self,
        index: usize,
    ) -> Result<Option<crate::name_map::NameMap<super::Symbol>>, Diagnostic> {
        let Some(this) = self.functions[index].params.first() else {
            return Ok(None);
        };
        let Type::Struct(record) = &this.ty else {
            return Ok(None);
        };
        if this.name != "this" {
            return Ok(None);
        }
        self.struct_width(record, this.span)?;
        let mut scope = crate::name_map::NameMap::new();
        for field in &record.fields {
            scope.insert(
                field.name.clone(),
                super::Symbol::Var {
                    reg: this.reg + field.first_leaf,
                    ty: field.ty.clone(),
                    is_const: false,
                    const_value: None,
                },
            );
        }
        Ok(Some(scope))
    }

    /// `*this` and `this->`: the object a member function works on, in its registers.
    pub(super) fn this_object(&mut self, a: &Expr) -> Option<Result<Lv, Diagnostic>> {
        let ExprKind::Ident(name) = &a.kind else {
            return None;
        };
        if name != "this" {
            return None;
        }
        Some(self.lower(a))
    }
}
