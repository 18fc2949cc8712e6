//! The semantic check: names, types and C's conversions, and lowering to the interpreter's form.
//!
//! Before anything runs, every identifier must be declared (seed 000's tiled matmul slide uses an
//! undeclared `m`: nvcc rejects it, and so does this check), indexing needs an array or pointer,
//! `const` places are not assigned, builtins get the right number of arguments, and array sizes
//! are constant expressions. Expressions get C's integer promotions and usual arithmetic
//! conversions (C11 standard, section 6.3.1). Per-thread arrays whose every index is a constant or
//! the variable of a loop with a constant trip count are kept in registers, as nvcc does after
//! unrolling; other per-thread arrays live in local memory (seed 002, "Local Memory").
//!
//! Errors are kept where they belong, as nvcc compiles the other kernels of a file: an error in a
//! function's body (a type error, or a construct the simulator does not support) is stored with
//! that function and reported when a kernel that is or calls it is launched (`Program::kernel`).
//! Errors of the file itself (declarations, names defined twice, recursion) fail the whole check.
//!
//! The check recurses over expression trees, nested statements, braced initialisers and types,
//! whose depth the parser bounds (`limits`); everything else it walks (the call graph, the chain of
//! an array's dimensions, the statements of a block) it walks with loops.

use super::ast::*;
use super::ir::*;
use super::issue;
use super::span::{Diagnostic, Span};
use std::collections::HashMap;

/// A checked program, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub functions: Vec<FunctionIr>,
    /// Every `__shared__`, `__constant__`, `__device__` variable and per-thread array.
    pub objects: Vec<MemObject>,
    /// Registers every warp needs (all functions are allocated statically; recursion is rejected).
    pub n_regs: Reg,
}

impl Program {
    /// How nvcc unrolls the loop whose statement spans `span` (`issue`), if there is one: the
    /// one decision the passes after the front end read (`compile_effects` fuses the loads of a
    /// fully unrolled loop).
    pub fn loop_unroll(&self, span: Span) -> Option<Unroll> {
        self.functions.iter().find_map(|function| {
            function
                .code
                .iter()
                .zip(&function.spans)
                .find_map(|(op, op_span)| match op {
                    Op::LoopBegin { unroll, .. } if *op_span == span => Some(*unroll),
                    _ => None,
                })
        })
    }

    /// The names of the `__global__` kernels, in source order.
    pub fn kernel_names(&self) -> Vec<&str> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Kernel)
            .map(|f| f.name.as_str())
            .collect()
    }

    pub fn kernel_index(&self, name: &str) -> Option<usize> {
        self.functions
            .iter()
            .position(|f| f.kind == FunctionKind::Kernel && f.name == name)
    }

    /// The kernel named `name`, ready to launch: its parameters (names, types) and code. An
    /// error if there is no such kernel, or if its body or the body of a `__device__` function it
    /// calls (directly or not) did not check.
    pub fn kernel(&self, name: &str) -> Result<&FunctionIr, Diagnostic> {
        let Some(index) = self.kernel_index(name) else {
            let names = self.kernel_names().join(", ");
            return Err(Diagnostic::new(
                Span::default(),
                format!("there is no kernel named '{name}' (kernels: {names})"),
            ));
        };
        for f in self.reachable(index) {
            if let Some(error) = &self.functions[f].error {
                return Err(error.clone());
            }
        }
        Ok(&self.functions[index])
    }

    /// The kernel's function and every device function it calls, the kernel first.
    pub fn reachable(&self, kernel: usize) -> Vec<usize> {
        let mut seen = vec![kernel];
        let mut i = 0;
        while i < seen.len() {
            if let Some(f) = self.functions.get(seen[i]) {
                for &c in &f.callees {
                    if !seen.contains(&c) {
                        seen.push(c);
                    }
                }
            }
            i += 1;
        }
        seen
    }
}

#[derive(Clone, Debug)]
enum Symbol {
    Var {
        reg: Reg,
        ty: Type,
        is_const: bool,
        const_value: Option<i64>,
    },
    Object {
        id: usize,
    },
}

/// An expression as the check sees it: a value, a register variable, or a place in memory.
enum Lv {
    Value(Ex, Type),
    Var { reg: Reg, ty: Type, is_const: bool },
    Mem { addr: Ex, ty: Type, is_const: bool },
}

struct Sema<'a> {
    unit: &'a TranslationUnit,
    objects: Vec<MemObject>,
    functions: Vec<FunctionIr>,
    function_index: HashMap<String, usize>,
    globals: HashMap<String, Symbol>,
    next_reg: Reg,
    // The function being lowered.
    scopes: Vec<HashMap<String, Symbol>>,
    current: usize,
    code: Vec<Op>,
    spans: Vec<Span>,
    loop_depth: u32,
    unroll_regs: Vec<Reg>,
    n_temps: Reg,
    local_bytes: u64,
    callees: Vec<usize>,
}

/// Checks a parsed file and lowers it for the interpreter.
pub fn check(unit: &TranslationUnit) -> Result<Program, Diagnostic> {
    let mut sema = Sema {
        unit,
        objects: Vec::new(),
        functions: Vec::new(),
        function_index: HashMap::new(),
        globals: HashMap::new(),
        next_reg: SPECIAL_REGS,
        scopes: Vec::new(),
        current: 0,
        code: Vec::new(),
        spans: Vec::new(),
        loop_depth: 0,
        unroll_regs: Vec::new(),
        n_temps: 0,
        local_bytes: 0,
        callees: Vec::new(),
    };
    sema.declare_functions()?;
    for item in &unit.items {
        if let Item::Variable(decl) = item {
            sema.file_scope_variable(decl)?;
        }
    }
    let mut index = 0;
    for item in &unit.items {
        if let Item::Function(f) = item {
            if let Err(error) = sema.function_body(index, f) {
                sema.failed_body(index, error);
            }
            index += 1;
        }
    }
    sema.reject_recursion()?;
    Ok(Program {
        functions: sema.functions,
        objects: sema.objects,
        n_regs: sema.next_reg,
    })
}

fn err<T>(span: Span, message: impl Into<String>) -> Result<T, Diagnostic> {
    Err(Diagnostic::new(span, message))
}

/// Registers a value of the type takes.
pub(crate) fn width_of(ty: &Type) -> u8 {
    match ty {
        Type::Void | Type::Array(..) => 0,
        Type::Scalar(_) | Type::Pointer { .. } => 1,
        Type::Vector(_, n) => *n,
    }
}

fn elem_of(ty: &Type) -> Option<Elem> {
    match ty {
        Type::Scalar(s) => Some(Elem::scalar(*s)),
        Type::Vector(s, n) => Some(Elem { scalar: *s, n: *n }),
        Type::Pointer { .. } => Some(Elem::scalar(Scalar::U64)),
        _ => None,
    }
}

/// C's integer promotion: everything below `int` becomes `int`.
fn promote(s: Scalar) -> Scalar {
    if s.rank() < 3 {
        Scalar::I32
    } else {
        s
    }
}

/// C's usual arithmetic conversions.
fn common(a: Scalar, b: Scalar) -> Scalar {
    if a.is_float() || b.is_float() {
        return if a == Scalar::F64 || b == Scalar::F64 {
            Scalar::F64
        } else {
            Scalar::F32
        };
    }
    let (a, b) = (promote(a), promote(b));
    if a == b {
        return a;
    }
    if a.is_signed() == b.is_signed() {
        return if a.rank() >= b.rank() { a } else { b };
    }
    let (signed, unsigned) = if a.is_signed() { (a, b) } else { (b, a) };
    if unsigned.rank() >= signed.rank() {
        unsigned
    } else {
        signed
    }
}

fn konst(bits: u64, ty: Scalar, span: Span) -> Ex {
    let _ = ty;
    Ex::new(ExKind::Const(bits), 1, span)
}

/// The canonical register bits of an integer constant of type `ty`.
fn int_bits(value: i64, ty: Scalar) -> u64 {
    match ty {
        Scalar::Bool => u64::from(value != 0),
        Scalar::I8 => value as i8 as i64 as u64,
        Scalar::U8 => value as u8 as u64,
        Scalar::I16 => value as i16 as i64 as u64,
        Scalar::U16 => value as u16 as u64,
        Scalar::I32 => value as i32 as i64 as u64,
        Scalar::U32 => value as u32 as u64,
        Scalar::I64 | Scalar::U64 => value as u64,
        Scalar::F32 => u64::from((value as f32).to_bits()),
        Scalar::F64 => (value as f64).to_bits(),
    }
}

fn float_bits(value: f64, ty: Scalar) -> u64 {
    match ty {
        Scalar::F32 => u64::from((value as f32).to_bits()),
        Scalar::F64 => value.to_bits(),
        other => int_bits(value as i64, other),
    }
}

fn is_arith(ty: &Type) -> bool {
    matches!(ty, Type::Scalar(_))
}

/// A compile-time constant.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ConstValue {
    Int(i64),
    Float(f64),
}

impl ConstValue {
    fn as_f64(self) -> f64 {
        match self {
            ConstValue::Int(i) => i as f64,
            ConstValue::Float(f) => f,
        }
    }
}

/// Does the statement or expression assign, increment or take the address of `name`?
fn stmt_modifies(s: &Stmt, name: &str) -> bool {
    match &s.kind {
        StmtKind::Declaration(d) => d.declarators.iter().any(|x| {
            x.name == name
                || match &x.init {
                    Some(Initializer::Expr(e)) => expr_modifies(e, name),
                    _ => false,
                }
        }),
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr_modifies(e, name),
        StmtKind::Block(stmts) => stmts.iter().any(|s| stmt_modifies(s, name)),
        StmtKind::If(c, a, b) => {
            expr_modifies(c, name)
                || stmt_modifies(a, name)
                || b.as_ref().is_some_and(|b| stmt_modifies(b, name))
        }
        StmtKind::While(c, body) | StmtKind::DoWhile(body, c) => {
            expr_modifies(c, name) || stmt_modifies(body, name)
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
            ..
        } => {
            init.as_ref().is_some_and(|s| stmt_modifies(s, name))
                || cond.as_ref().is_some_and(|e| expr_modifies(e, name))
                || step.as_ref().is_some_and(|e| expr_modifies(e, name))
                || stmt_modifies(body, name)
        }
        StmtKind::Return(None)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Empty
        | StmtKind::Unsupported(_) => false,
    }
}

/// Whether what a declarator declares (a variable, or the elements of an array) is itself
/// `const`. The declaration's `const` belongs to its base type: `const int n` and `const float
/// w[3]` are constant, but in `const float* p` it is what `p` points to that is constant (the
/// pointer type says so), and `p` may move; in `float* const p` the pointer itself is constant.
fn const_elements(decl: &Declaration, d: &Declarator) -> bool {
    if matches!(d.ty, Type::Pointer { .. }) {
        d.pointer_const
    } else {
        decl.is_const
    }
}

fn is_ident(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Ident(n) if n == name)
}

fn expr_modifies(e: &Expr, name: &str) -> bool {
    match &e.kind {
        ExprKind::Assign(_, lhs, rhs) => {
            is_ident(lhs, name) || expr_modifies(lhs, name) || expr_modifies(rhs, name)
        }
        ExprKind::Unary(op, a) => {
            (matches!(
                op,
                UnaryOp::PreInc
                    | UnaryOp::PreDec
                    | UnaryOp::PostInc
                    | UnaryOp::PostDec
                    | UnaryOp::AddrOf
            ) && is_ident(a, name))
                || expr_modifies(a, name)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) | ExprKind::Comma(a, b) => {
            expr_modifies(a, name) || expr_modifies(b, name)
        }
        ExprKind::Conditional(a, b, c) => {
            expr_modifies(a, name) || expr_modifies(b, name) || expr_modifies(c, name)
        }
        ExprKind::Call { args, .. } => args.iter().any(|a| expr_modifies(a, name)),
        ExprKind::Member { base, .. } => expr_modifies(base, name),
        ExprKind::Cast(_, a) | ExprKind::SizeofExpr(a) => expr_modifies(a, name),
        _ => false,
    }
}

impl<'a> Sema<'a> {
    // ----- file scope -----

    fn declare_functions(&mut self) -> Result<(), Diagnostic> {
        for item in &self.unit.items {
            let Item::Function(f) = item else { continue };
            if self.function_index.contains_key(&f.name) {
                return err(f.span, format!("'{}' is defined twice", f.name));
            }
            if f.kind == FunctionKind::Kernel && f.ret != Type::Void {
                return err(f.span, format!("the kernel '{}' must return void", f.name));
            }
            let mut params = Vec::new();
            for p in &f.params {
                if matches!(p.ty, Type::Void | Type::Array(..)) {
                    return err(
                        p.span,
                        format!("the parameter '{}' cannot have type '{}'", p.name, p.ty),
                    );
                }
                if params.iter().any(|q: &ParamInfo| q.name == p.name) {
                    return err(p.span, format!("two parameters are named '{}'", p.name));
                }
                let reg = self.alloc(width_of(&p.ty));
                params.push(ParamInfo {
                    name: p.name.clone(),
                    span: p.span,
                    ty: p.ty.clone(),
                    reg,
                });
            }
            let ret = match &f.ret {
                Type::Void => None,
                other => {
                    let Some(elem) = elem_of(other) else {
                        return err(f.span, format!("'{}' cannot return '{other}'", f.name));
                    };
                    Some((elem, self.alloc(elem.n)))
                }
            };
            self.function_index
                .insert(f.name.clone(), self.functions.len());
            self.functions.push(FunctionIr {
                name: f.name.clone(),
                kind: f.kind,
                span: f.span,
                end_span: f.end_span,
                params,
                ret,
                code: Vec::new(),
                spans: Vec::new(),
                temp_base: 0,
                n_temps: 0,
                callees: Vec::new(),
                issue: Vec::new(),
                loads_in_flight: Vec::new(),
                error: None,
            });
        }
        Ok(())
    }

    fn alloc(&mut self, width: u8) -> Reg {
        let reg = self.next_reg;
        self.next_reg += Reg::from(width);
        reg
    }

    fn file_scope_variable(&mut self, decl: &Declaration) -> Result<(), Diagnostic> {
        for d in &decl.declarators {
            if self.globals.contains_key(&d.name) || self.function_index.contains_key(&d.name) {
                return err(d.span, format!("'{}' is declared twice", d.name));
            }
            let ty = self.full_type(d, decl.storage)?;
            let space = if decl.storage == Storage::Constant {
                ObjectSpace::Constant
            } else {
                ObjectSpace::Global
            };
            let init = match &d.init {
                None if space == ObjectSpace::Constant => ObjectInit::Random,
                None => ObjectInit::Zero,
                Some(init) => {
                    let mut bytes = vec![0u8; ty.size() as usize];
                    self.constant_bytes(init, &ty, &mut bytes, 0)?;
                    ObjectInit::Bytes(bytes)
                }
            };
            let id = self.objects.len();
            self.objects.push(MemObject {
                name: d.name.clone(),
                space,
                size: ty.size(),
                align: ty.align(),
                ty,
                init,
                span: d.span,
                function: None,
                in_registers: false,
                local_offset: 0,
                is_const: const_elements(decl, d),
            });
            self.globals.insert(d.name.clone(), Symbol::Object { id });
        }
        Ok(())
    }

    /// Writes a constant initialiser of a file-scope variable into `bytes` at `offset`.
    fn constant_bytes(
        &mut self,
        init: &Initializer,
        ty: &Type,
        bytes: &mut [u8],
        offset: usize,
    ) -> Result<(), Diagnostic> {
        match (init, ty) {
            (Initializer::List(items, span), Type::Array(elem, n)) => {
                if items.len() as u64 > u64::from(n.unwrap_or(0)) {
                    return err(*span, "too many values in the initialiser");
                }
                let size = elem.size() as usize;
                for (i, item) in items.iter().enumerate() {
                    self.constant_bytes(item, elem, bytes, offset + i * size)?;
                }
                Ok(())
            }
            (Initializer::Expr(e), Type::Scalar(s)) => {
                let Some(v) = self.const_value(e) else {
                    return err(
                        e.span,
                        "a file-scope variable's initialiser must be a constant",
                    );
                };
                let bits = match v {
                    ConstValue::Int(i) => int_bits(i, *s),
                    ConstValue::Float(f) => float_bits(f, *s),
                };
                let size = s.size() as usize;
                if let Some(slot) = bytes.get_mut(offset..offset + size) {
                    slot.copy_from_slice(&bits.to_le_bytes()[..size]);
                }
                Ok(())
            }
            (Initializer::List(items, _), Type::Scalar(_)) if items.len() == 1 => {
                self.constant_bytes(&items[0], ty, bytes, offset)
            }
            (Initializer::List(_, span), _) => {
                err(*span, format!("a braced list cannot initialise '{ty}'"))
            }
            (Initializer::Expr(e), _) => err(
                e.span,
                format!("a file-scope '{ty}' cannot be initialised here"),
            ),
        }
    }

    /// The declarator's type with its array dimensions applied.
    fn full_type(&mut self, d: &Declarator, storage: Storage) -> Result<Type, Diagnostic> {
        let mut ty = d.ty.clone();
        if ty == Type::Void {
            return err(d.span, format!("'{}' cannot have type void", d.name));
        }
        for (i, dim) in d.dims.iter().enumerate().rev() {
            let n = match dim {
                None if i == 0 && storage == Storage::ExternShared => None,
                None if i == 0 && matches!(d.init, Some(Initializer::List(..))) => match &d.init {
                    Some(Initializer::List(items, _)) => Some(items.len() as u32),
                    _ => None,
                },
                None => return err(d.span, format!("the array '{}' needs a size", d.name)),
                Some(e) => match self.const_value(e) {
                    Some(ConstValue::Int(n)) if n > 0 && n <= (1 << 28) => Some(n as u32),
                    Some(ConstValue::Int(n)) => {
                        return err(
                            e.span,
                            format!(
                                "the size of '{}' must be positive and not huge, not {n}",
                                d.name
                            ),
                        )
                    }
                    _ => {
                        return err(
                            e.span,
                            format!("the size of '{}' must be a constant expression", d.name),
                        )
                    }
                },
            };
            ty = Type::Array(Box::new(ty), n);
        }
        if storage == Storage::ExternShared && !matches!(ty, Type::Array(_, None)) {
            return err(
                d.span,
                format!(
                    "'extern __shared__' declares an unsized array: write '{}[]'",
                    d.name
                ),
            );
        }
        if ty.size() > (1 << 30) {
            return err(d.span, format!("'{}' is too large", d.name));
        }
        Ok(ty)
    }

    // ----- constants -----

    fn lookup(&self, name: &str) -> Option<&Symbol> {
        for scope in self.scopes.iter().rev() {
            if let Some(s) = scope.get(name) {
                return Some(s);
            }
        }
        self.globals.get(name)
    }

    fn const_value(&self, e: &Expr) -> Option<ConstValue> {
        use ConstValue::*;
        Some(match &e.kind {
            ExprKind::Int { value, .. } => Int(*value as i64),
            ExprKind::Bool(b) => Int(i64::from(*b)),
            ExprKind::Float { value, .. } => Float(*value),
            ExprKind::Ident(name) => match self.lookup(name) {
                Some(Symbol::Var {
                    const_value: Some(v),
                    ..
                }) => Int(*v),
                _ if name == "warpSize" => Int(32),
                _ => return None,
            },
            ExprKind::SizeofType(ty) => Int(ty.size() as i64),
            ExprKind::Unary(op, a) => {
                let a = self.const_value(a)?;
                match (op, a) {
                    (UnaryOp::Neg, Int(i)) => Int(i.wrapping_neg()),
                    (UnaryOp::Neg, Float(f)) => Float(-f),
                    (UnaryOp::Plus, v) => v,
                    (UnaryOp::BitNot, Int(i)) => Int(!i),
                    (UnaryOp::Not, v) => Int(i64::from(v.as_f64() == 0.0)),
                    _ => return None,
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.const_value(a)?, self.const_value(b)?);
                match (a, b) {
                    (Int(x), Int(y)) => Int(match op {
                        BinaryOp::Add => x.wrapping_add(y),
                        BinaryOp::Sub => x.wrapping_sub(y),
                        BinaryOp::Mul => x.wrapping_mul(y),
                        BinaryOp::Div => x.checked_div(y)?,
                        BinaryOp::Rem => x.checked_rem(y)?,
                        BinaryOp::Shl => x.wrapping_shl(y as u32),
                        BinaryOp::Shr => x.wrapping_shr(y as u32),
                        BinaryOp::BitAnd => x & y,
                        BinaryOp::BitOr => x | y,
                        BinaryOp::BitXor => x ^ y,
                        BinaryOp::Lt => i64::from(x < y),
                        BinaryOp::Gt => i64::from(x > y),
                        BinaryOp::Le => i64::from(x <= y),
                        BinaryOp::Ge => i64::from(x >= y),
                        BinaryOp::Eq => i64::from(x == y),
                        BinaryOp::Ne => i64::from(x != y),
                        BinaryOp::And => i64::from(x != 0 && y != 0),
                        BinaryOp::Or => i64::from(x != 0 || y != 0),
                    }),
                    (x, y) => {
                        let (x, y) = (x.as_f64(), y.as_f64());
                        match op {
                            BinaryOp::Add => Float(x + y),
                            BinaryOp::Sub => Float(x - y),
                            BinaryOp::Mul => Float(x * y),
                            BinaryOp::Div => Float(x / y),
                            _ => return None,
                        }
                    }
                }
            }
            ExprKind::Conditional(c, a, b) => {
                if self.const_value(c)?.as_f64() != 0.0 {
                    self.const_value(a)?
                } else {
                    self.const_value(b)?
                }
            }
            ExprKind::Cast(Type::Scalar(s), a) => match self.const_value(a)? {
                Int(i) if s.is_integer() => Int(int_bits(i, *s) as i64),
                Float(f) if s.is_integer() => Int(int_bits(f as i64, *s) as i64),
                v => Float(v.as_f64()),
            },
            _ => return None,
        })
    }

    /// An index that is known at compile time once constant-trip loops are unrolled.
    fn unrollable(&self, e: &Expr) -> bool {
        if matches!(self.const_value(e), Some(ConstValue::Int(_))) {
            return true;
        }
        match &e.kind {
            ExprKind::Ident(name) => {
                matches!(self.lookup(name), Some(Symbol::Var { reg, .. }) if self.unroll_regs.contains(reg))
            }
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot, a)
            | ExprKind::Cast(_, a) => self.unrollable(a),
            ExprKind::Binary(op, a, b) => {
                !matches!(op, BinaryOp::And | BinaryOp::Or)
                    && self.unrollable(a)
                    && self.unrollable(b)
            }
            _ => false,
        }
    }

    // ----- functions and statements -----

    fn function_body(&mut self, index: usize, f: &Function) -> Result<(), Diagnostic> {
        self.current = index;
        self.code.clear();
        self.spans.clear();
        self.loop_depth = 0;
        self.unroll_regs.clear();
        self.n_temps = 0;
        self.local_bytes = 0;
        self.callees.clear();
        let mut scope = HashMap::new();
        for p in &self.functions[index].params {
            let is_const = f.params.iter().any(|q| q.name == p.name && q.is_const);
            scope.insert(
                p.name.clone(),
                Symbol::Var {
                    reg: p.reg,
                    ty: p.ty.clone(),
                    is_const,
                    const_value: None,
                },
            );
        }
        self.scopes = vec![scope];
        for s in &f.body {
            self.statement(s)?;
        }
        self.scopes.clear();
        let temp_base = self.next_reg;
        self.next_reg += self.n_temps;
        let func = &mut self.functions[index];
        func.code = std::mem::take(&mut self.code);
        func.spans = std::mem::take(&mut self.spans);
        func.temp_base = temp_base;
        func.n_temps = self.n_temps;
        func.callees = std::mem::take(&mut self.callees);
        (func.issue, func.loads_in_flight) = issue::annotate(func);
        Ok(())
    }

    /// Keeps the error of a body that did not check with its function, which gets no code. The
    /// calls seen before the error stay, so that a launch finds the error through them too.
    fn failed_body(&mut self, index: usize, error: Diagnostic) {
        self.scopes.clear();
        self.code.clear();
        self.spans.clear();
        let func = &mut self.functions[index];
        func.code = Vec::new();
        func.spans = Vec::new();
        func.temp_base = self.next_reg;
        func.n_temps = 0;
        func.callees = std::mem::take(&mut self.callees);
        func.error = Some(error);
    }

    fn reject_recursion(&self) -> Result<(), Diagnostic> {
        for (start, f) in self.functions.iter().enumerate() {
            // Depth-first search from each callee; reaching `start` again is recursion.
            let mut stack: Vec<usize> = f.callees.clone();
            let mut seen = vec![false; self.functions.len()];
            while let Some(g) = stack.pop() {
                if g == start {
                    return err(
                        f.span,
                        format!(
                            "'{}' calls itself (recursion is not supported by the simulator)",
                            f.name
                        ),
                    );
                }
                if std::mem::replace(&mut seen[g], true) {
                    continue;
                }
                stack.extend(self.functions[g].callees.iter().copied());
            }
        }
        Ok(())
    }

    fn emit(&mut self, op: Op, span: Span) -> usize {
        let mut op = op;
        let temps = match &mut op {
            Op::Eval(e)
            | Op::If { cond: e, .. }
            | Op::LoopCond { cond: e, .. }
            | Op::Return(Some(e)) => e.assign_temps(0),
            _ => 0,
        };
        self.n_temps = self.n_temps.max(temps);
        self.code.push(op);
        self.spans.push(span);
        self.code.len() - 1
    }

    fn declare(&mut self, name: &str, span: Span, symbol: Symbol) -> Result<(), Diagnostic> {
        let Some(scope) = self.scopes.last_mut() else {
            return err(span, "internal: no scope");
        };
        if scope.contains_key(name) {
            return err(span, format!("'{name}' is already declared in this scope"));
        }
        scope.insert(name.to_string(), symbol);
        Ok(())
    }

    fn scoped(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        self.scopes.push(HashMap::new());
        let r = self.statement(s);
        self.scopes.pop();
        r
    }

    fn statement(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        match &s.kind {
            StmtKind::Empty => Ok(()),
            StmtKind::Unsupported(diagnostic) => Err(diagnostic.clone()),
            StmtKind::Block(stmts) => {
                self.scopes.push(HashMap::new());
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
            StmtKind::Expr(e) => self.expression_statement(e, s.span),
            StmtKind::If(c, then, otherwise) => {
                let cond = self.condition(c)?;
                let if_at = self.emit(
                    Op::If {
                        cond,
                        else_at: 0,
                        predicated: None,
                    },
                    c.span,
                );
                self.scoped(then)?;
                let else_at = match otherwise {
                    Some(otherwise) => {
                        let else_at = self.emit(Op::Else { end_at: 0 }, otherwise.span);
                        self.scoped(otherwise)?;
                        Some(else_at)
                    }
                    None => None,
                };
                let end = self.emit(Op::EndIf, s.span);
                let body = if else_at.is_none() {
                    issue::predicated_body(&self.code[if_at + 1..end], &self.objects)
                } else {
                    None
                };
                if let Op::If {
                    else_at: target,
                    predicated,
                    ..
                } = &mut self.code[if_at]
                {
                    *target = else_at.unwrap_or(end);
                    *predicated = body;
                }
                if let Some(at) = else_at {
                    if let Op::Else { end_at } = &mut self.code[at] {
                        *end_at = end;
                    }
                }
                Ok(())
            }
            StmtKind::While(c, body) => {
                let begin = self.emit(
                    Op::LoopBegin {
                        end_at: 0,
                        unroll: Unroll::Times(1),
                        counter: None,
                    },
                    s.span,
                );
                let cond = self.condition(c)?;
                let top = self.emit(Op::LoopCond { cond, end_at: 0 }, c.span);
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
                self.scopes.push(HashMap::new());
                let r = self.for_loop(
                    s.span,
                    init.as_deref(),
                    cond.as_ref(),
                    step.as_ref(),
                    body,
                    *pragma_unroll,
                );
                self.scopes.pop();
                r
            }
            StmtKind::Return(value) => {
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
                        Some(Ex::new(
                            ExKind::Assign {
                                place: Place::Reg { reg, elem },
                                value: Box::new(ex),
                            },
                            elem.n,
                            v.span,
                        ))
                    }
                };
                self.emit(Op::Return(value), s.span);
                Ok(())
            }
            StmtKind::Break => {
                if self.loop_depth == 0 {
                    return err(s.span, "'break' outside a loop");
                }
                self.emit(Op::Break, s.span);
                Ok(())
            }
            StmtKind::Continue => {
                if self.loop_depth == 0 {
                    return err(s.span, "'continue' outside a loop");
                }
                self.emit(Op::Continue, s.span);
                Ok(())
            }
        }
    }

    fn unit_return_type(&self, name: &str) -> Type {
        for item in &self.unit.items {
            if let Item::Function(f) = item {
                if f.name == name {
                    return f.ret.clone();
                }
            }
        }
        Type::Void
    }

    fn loop_body(&mut self, body: &Stmt) -> Result<(), Diagnostic> {
        self.loop_depth += 1;
        let r = self.scoped(body);
        self.loop_depth -= 1;
        r
    }

    /// Emits the `LoopEnd`, points the loop's `LoopBegin` and `LoopCond`s at it and decides how
    /// nvcc unrolls the loop: as `decided` says (a pragma, a constant trip count), or by the form
    /// and size of its body (`issue::runtime_unroll`).
    fn finish_loop(
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
    }

    fn for_loop(
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
            },
            span,
        );
        // "An omitted expression-2 is replaced by a nonzero constant" (C11 6.8.5.3): the loop
        // still has its `LoopCond`, where lanes that broke out or returned leave it.
        let top = match cond {
            Some(c) => {
                let cond = self.condition(c)?;
                self.emit(Op::LoopCond { cond, end_at: 0 }, c.span)
            }
            None => {
                let always = konst(1, Scalar::Bool, span);
                self.emit(
                    Op::LoopCond {
                        cond: always,
                        end_at: 0,
                    },
                    span,
                )
            }
        };
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

    /// The variable of `for (int k = A; k < B; ++k)` with constant `A`, `B` and step, not changed
    /// in the body: nvcc can unroll such a loop, which makes `k` a constant in each copy.
    fn constant_trip_variable(
        &self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &Stmt,
    ) -> Option<String> {
        let StmtKind::Declaration(d) = &init?.kind else {
            return None;
        };
        let [x] = d.declarators.as_slice() else {
            return None;
        };
        if !x.dims.is_empty() || !matches!(x.ty, Type::Scalar(s) if s.is_integer()) {
            return None;
        }
        let Some(Initializer::Expr(start)) = &x.init else {
            return None;
        };
        self.const_value(start)?;
        let name = x.name.as_str();
        let ExprKind::Binary(op, lhs, rhs) = &cond?.kind else {
            return None;
        };
        if !matches!(
            op,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Ne
        ) || !is_ident(lhs, name)
        {
            return None;
        }
        self.const_value(rhs)?;
        let step_ok = match &step?.kind {
            ExprKind::Unary(
                UnaryOp::PreInc | UnaryOp::PostInc | UnaryOp::PreDec | UnaryOp::PostDec,
                v,
            ) => is_ident(v, name),
            ExprKind::Assign(Some(BinaryOp::Add | BinaryOp::Sub), v, by) => {
                is_ident(v, name) && self.const_value(by).is_some()
            }
            // `w <<= 1` from a constant to a constant: nvcc counts the trips (eight in
            // `p_pred_grow`'s `for (int w = 1; w < 256; w <<= 1)`) and unrolls them all.
            ExprKind::Assign(
                Some(BinaryOp::Shl | BinaryOp::Shr | BinaryOp::Mul | BinaryOp::Div),
                v,
                by,
            ) => {
                is_ident(v, name)
                    && matches!(self.const_value(by), Some(ConstValue::Int(b)) if b != 0)
            }
            _ => false,
        };
        if !step_ok || stmt_modifies(body, name) {
            return None;
        }
        Some(name.to_string())
    }

    fn expression_statement(&mut self, e: &Expr, span: Span) -> Result<(), Diagnostic> {
        if let ExprKind::Call {
            name,
            name_span,
            args,
        } = &e.kind
        {
            if name == "__syncthreads" || name == "__syncwarp" {
                let max_args = usize::from(name == "__syncwarp");
                if args.len() > max_args {
                    return err(
                        *name_span,
                        format!("'{name}' takes {max_args} arguments, not {}", args.len()),
                    );
                }
                if name == "__syncthreads" {
                    if self.functions[self.current].kind == FunctionKind::Device {
                        return err(*name_span, "__syncthreads() inside a __device__ function is not supported by the simulator; call it in the kernel");
                    }
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
        let ex = self.expression(e)?;
        self.emit(Op::Eval(ex), span);
        Ok(())
    }

    fn local_declaration(&mut self, decl: &Declaration) -> Result<(), Diagnostic> {
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
                    let id = self.new_object(d, ty, space, const_elements(decl, d));
                    self.declare(&d.name, d.span, Symbol::Object { id })?;
                }
                Storage::Automatic if matches!(ty, Type::Array(..)) => {
                    let align = ty.align().max(4);
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
                        let assign = Ex::new(
                            ExKind::Assign {
                                place: Place::Reg { reg, elem },
                                value: Box::new(value),
                            },
                            width,
                            d.span,
                        );
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

    fn new_object(
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
            align: match ty.innermost() {
                Type::Vector(..) => 16,
                other => other.align(),
            },
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
    fn array_initializer(
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

    /// A full expression for its value (of any type, including void).
    fn expression(&mut self, e: &Expr) -> Result<Ex, Diagnostic> {
        Ok(self.rvalue(e)?.0)
    }

    fn rvalue(&mut self, e: &Expr) -> Result<(Ex, Type), Diagnostic> {
        let lv = self.lower(e)?;
        Ok(self.rvalue_of(lv, e.span))
    }

    fn rvalue_of(&mut self, lv: Lv, span: Span) -> (Ex, Type) {
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

    /// A condition: any scalar or pointer, compared with zero.
    fn condition(&mut self, e: &Expr) -> Result<Ex, Diagnostic> {
        let (ex, ty) = self.rvalue(e)?;
        self.bool_of(ex, &ty, e.span)
    }

    #[inline(never)]
    fn bool_of(&mut self, ex: Ex, ty: &Type, span: Span) -> Result<Ex, Diagnostic> {
        let from = match ty {
            Type::Scalar(s) => *s,
            Type::Pointer { .. } => Scalar::U64,
            other => {
                return err(
                    span,
                    format!("a condition must be a number or a pointer, not '{other}'"),
                )
            }
        };
        // Comparisons and && / || already give 0 or 1.
        let already = matches!(&ex.kind, ExKind::Logical { .. })
            || matches!(&ex.kind, ExKind::Binary { op, .. } if op.is_comparison())
            || from == Scalar::Bool;
        if already {
            return Ok(ex);
        }
        Ok(Ex::new(
            ExKind::Convert {
                from,
                to: Scalar::Bool,
                value: Box::new(ex),
            },
            1,
            span,
        ))
    }

    /// An implicit conversion (assignment, argument passing, initialisation, return).
    #[inline(never)]
    fn convert(&mut self, ex: Ex, from: &Type, to: &Type, span: Span) -> Result<Ex, Diagnostic> {
        if from == to {
            return Ok(ex);
        }
        match (from, to) {
            (Type::Scalar(a), Type::Scalar(b)) => Ok(self.convert_scalar(ex, *a, *b)),
            (
                Type::Pointer {
                    pointee: pa,
                    pointee_const: ca,
                },
                Type::Pointer {
                    pointee: pb,
                    pointee_const: cb,
                },
            ) => {
                if *ca && !*cb {
                    return err(span, format!("cannot pass a '{from}' where a '{to}' is expected: it would drop the const"));
                }
                if pa == pb || **pa == Type::Void || **pb == Type::Void {
                    return Ok(ex);
                }
                err(
                    span,
                    format!("cannot convert '{from}' to '{to}' without a cast"),
                )
            }
            (Type::Scalar(s), Type::Pointer { .. })
                if s.is_integer() && matches!(ex.kind, ExKind::Const(0)) =>
            {
                Ok(ex)
            }
            (Type::Void, _) => err(span, "a void value cannot be used"),
            _ => err(span, format!("cannot convert '{from}' to '{to}'")),
        }
    }

    #[inline(never)]
    fn convert_scalar(&mut self, ex: Ex, from: Scalar, to: Scalar) -> Ex {
        if from == to {
            return ex;
        }
        // Constants convert at compile time.
        if let ExKind::Const(bits) = ex.kind {
            let bits = match from {
                Scalar::F32 => float_bits(f64::from(f32::from_bits(bits as u32)), to),
                Scalar::F64 => float_bits(f64::from_bits(bits), to),
                s if s.is_signed() => int_bits(bits as i64, to),
                _ if to.is_float() => float_bits(bits as f64, to),
                _ => int_bits(bits as i64, to),
            };
            return Ex::new(ExKind::Const(bits), 1, ex.span);
        }
        let span = ex.span;
        Ex::new(
            ExKind::Convert {
                from,
                to,
                value: Box::new(ex),
            },
            1,
            span,
        )
    }

    /// An explicit cast.
    #[inline(never)]
    fn cast(&mut self, ex: Ex, from: &Type, to: &Type, span: Span) -> Result<Ex, Diagnostic> {
        match (from, to) {
            (_, Type::Void) => Ok(ex),
            (Type::Scalar(a), Type::Scalar(b)) => Ok(self.convert_scalar(ex, *a, *b)),
            (Type::Pointer { .. }, Type::Pointer { .. }) => Ok(ex),
            (Type::Pointer { .. }, Type::Scalar(s)) if s.is_integer() => {
                Ok(self.convert_scalar(ex, Scalar::U64, *s))
            }
            (Type::Scalar(s), Type::Pointer { .. }) if s.is_integer() => {
                Ok(self.convert_scalar(ex, *s, Scalar::U64))
            }
            (a, b) if a == b => Ok(ex),
            _ => err(span, format!("cannot cast '{from}' to '{to}'")),
        }
    }

    /// `base + index * stride` as a pointer to elements of `elem_size` bytes, merged into an
    /// existing offset node. (`step` is the index's type and the stride in bytes.)
    #[inline(never)]
    fn offset(
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
    fn lower(&mut self, e: &Expr) -> Result<Lv, Diagnostic> {
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
        }
    }

    #[inline(never)]
    fn index_expression(&mut self, e: &Expr) -> Result<Lv, Diagnostic> {
        let whole_chain_constant = self.index_chain_is_constant(e);
        self.index(e, whole_chain_constant)
    }

    #[inline(never)]
    fn member(
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
    fn binary_expression(
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
    fn conditional(&mut self, c: &Expr, a: &Expr, b: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        let cond = self.condition(c)?;
        let (ea, ta) = self.rvalue(a)?;
        let (eb, tb) = self.rvalue(b)?;
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
    fn call_expression(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<Lv, Diagnostic> {
        let (ex, ty) = self.call(name, name_span, args, span)?;
        Ok(Lv::Value(ex, ty))
    }

    #[inline(never)]
    fn cast_expression(&mut self, to: &Type, a: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        let (ex, from) = self.rvalue(a)?;
        let mut ex = self.cast(ex, &from, to, span)?;
        ex.span = span;
        Ok(Lv::Value(ex, to.clone()))
    }

    #[inline(never)]
    fn sizeof_expression(&mut self, a: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        let lv = self.lower(a)?;
        let ty = match &lv {
            Lv::Value(_, t) | Lv::Var { ty: t, .. } | Lv::Mem { ty: t, .. } => t.clone(),
        };
        Ok(Lv::Value(
            konst(ty.size(), Scalar::U64, span),
            Type::Scalar(Scalar::U64),
        ))
    }

    #[inline(never)]
    fn comma(&mut self, a: &Expr, b: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        let (ea, _) = self.rvalue(a)?;
        let (eb, tb) = self.rvalue(b)?;
        let n = eb.width;
        Ok(Lv::Value(
            Ex::new(ExKind::Comma(Box::new(ea), Box::new(eb)), n, span),
            tb,
        ))
    }

    #[inline(never)]
    fn ident(&mut self, name: &str, span: Span, constant_index: bool) -> Result<Lv, Diagnostic> {
        match self.lookup(name).cloned() {
            Some(Symbol::Var {
                reg, ty, is_const, ..
            }) => Ok(Lv::Var { reg, ty, is_const }),
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
    fn index_chain_is_constant(&self, e: &Expr) -> bool {
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
    fn index(&mut self, e: &Expr, constant_chain: bool) -> Result<Lv, Diagnostic> {
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
    fn place(&mut self, lv: Lv, span: Span, what: &str) -> Result<(Place, Type), Diagnostic> {
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
    fn unary(&mut self, op: UnaryOp, a: &Expr, span: Span) -> Result<Lv, Diagnostic> {
        match op {
            UnaryOp::Deref => {
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
                let (ex, ty) = self.rvalue(a)?;
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
    fn binary(
        &mut self,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
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
        let (ea, ta) = self.rvalue(a)?;
        let (eb, tb) = self.rvalue(b)?;
        self.binary_values(op, ea, ta, eb, tb, span, a.span, b.span)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn binary_values(
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
    fn assign(
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
        let lv = self.lower(lhs)?;
        let (place, ty) = self.place(lv, lhs.span, &what)?;
        let (value, vty) = self.rvalue(rhs)?;
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

    #[inline(never)]
    fn call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        if let Some(&index) = self.function_index.get(name) {
            let callee = &self.functions[index];
            if callee.kind == FunctionKind::Kernel {
                return err(name_span, format!("'{name}' is a __global__ kernel; kernels cannot be called from device code"));
            }
            if args.len() != callee.params.len() {
                return err(
                    name_span,
                    format!(
                        "'{name}' takes {} arguments, not {}",
                        callee.params.len(),
                        args.len()
                    ),
                );
            }
            let param_types: Vec<Type> = callee.params.iter().map(|p| p.ty.clone()).collect();
            let ret_ty = self.unit_return_type(name);
            let mut lowered = Vec::new();
            for (a, pty) in args.iter().zip(&param_types) {
                let (ex, ty) = self.rvalue(a)?;
                lowered.push(self.convert(ex, &ty, pty, a.span)?);
            }
            if !self.callees.contains(&index) {
                self.callees.push(index);
            }
            let width = width_of(&ret_ty);
            return Ok((
                Ex::new(
                    ExKind::Call {
                        function: index,
                        args: lowered,
                    },
                    width,
                    span,
                ),
                ret_ty,
            ));
        }
        self.builtin(name, name_span, args, span)
    }

    fn expect_args(
        &self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        n: usize,
    ) -> Result<(), Diagnostic> {
        if args.len() != n {
            let plural = if n == 1 { "argument" } else { "arguments" };
            return err(
                name_span,
                format!("'{name}' takes {n} {plural}, not {}", args.len()),
            );
        }
        Ok(())
    }

    fn scalar_arg(&mut self, a: &Expr, name: &str) -> Result<(Ex, Scalar), Diagnostic> {
        let (ex, ty) = self.rvalue(a)?;
        match ty {
            Type::Scalar(s) => Ok((ex, s)),
            other => err(
                a.span,
                format!("'{name}' needs a number here, not '{other}'"),
            ),
        }
    }

    #[inline(never)]
    fn builtin(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let math1 = |f: &str| -> Option<(MathFn, Option<Scalar>)> {
            let (base, ty) = match f.strip_suffix('f') {
                Some(b) if !matches!(f, "erf" | "fmaf") => (b, Some(Scalar::F32)),
                _ => (f, None),
            };
            let base = base.strip_prefix("__").unwrap_or(base);
            let m = match base {
                "sqrt" => MathFn::Sqrt,
                "rsqrt" => MathFn::Rsqrt,
                "exp" => MathFn::Exp,
                "log" => MathFn::Log,
                "sin" => MathFn::Sin,
                "cos" => MathFn::Cos,
                "tan" => MathFn::Tan,
                "fabs" => MathFn::Fabs,
                "floor" => MathFn::Floor,
                "ceil" => MathFn::Ceil,
                "round" => MathFn::Round,
                "trunc" => MathFn::Trunc,
                _ => return None,
            };
            Some((m, ty))
        };
        match name {
            "__syncthreads" | "__syncwarp" => err(
                name_span,
                format!("{name}() must be a statement of its own"),
            ),
            "__threadfence" | "__threadfence_block" => {
                self.expect_args(name, name_span, args, 0)?;
                Ok((Ex::new(ExKind::Fence, 0, span), Type::Void))
            }
            "fmaf" | "fma" | "__fmaf_rn" => {
                self.expect_args(name, name_span, args, 3)?;
                let ty = if name == "fma" {
                    Scalar::F64
                } else {
                    Scalar::F32
                };
                let mut parts = Vec::new();
                for a in args {
                    let (ex, s) = self.scalar_arg(a, name)?;
                    parts.push(self.convert_scalar(ex, s, ty));
                }
                let c = parts.pop();
                let b = parts.pop();
                let a = parts.pop();
                let (Some(a), Some(b), Some(c)) = (a, b, c) else {
                    return err(name_span, "internal: fma arguments");
                };
                Ok((
                    Ex::new(
                        ExKind::Fma {
                            ty,
                            a: Box::new(a),
                            b: Box::new(b),
                            c: Box::new(c),
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
            "min" | "max" | "umin" | "umax" | "fminf" | "fmaxf" | "fmin" | "fmax" => {
                self.expect_args(name, name_span, args, 2)?;
                let (ea, sa) = self.scalar_arg(&args[0], name)?;
                let (eb, sb) = self.scalar_arg(&args[1], name)?;
                let ty = match name {
                    "fminf" | "fmaxf" => Scalar::F32,
                    "fmin" | "fmax" => Scalar::F64,
                    _ => common(sa, sb),
                };
                let ea = self.convert_scalar(ea, sa, ty);
                let eb = self.convert_scalar(eb, sb, ty);
                let op = if name.contains("min") {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                Ok((
                    Ex::new(
                        ExKind::Binary {
                            op,
                            ty,
                            lhs: Box::new(ea),
                            rhs: Box::new(eb),
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
            "abs" | "labs" | "llabs" => {
                self.expect_args(name, name_span, args, 1)?;
                let (ex, s) = self.scalar_arg(&args[0], name)?;
                let ty = promote(s);
                let ex = self.convert_scalar(ex, s, ty);
                Ok((
                    Ex::new(
                        ExKind::Math {
                            f: MathFn::Abs,
                            ty,
                            args: vec![ex],
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
            "powf" | "pow" | "__powf" => {
                self.expect_args(name, name_span, args, 2)?;
                let ty = if name == "pow" {
                    Scalar::F64
                } else {
                    Scalar::F32
                };
                let mut parts = Vec::new();
                for a in args {
                    let (ex, s) = self.scalar_arg(a, name)?;
                    parts.push(self.convert_scalar(ex, s, ty));
                }
                Ok((
                    Ex::new(
                        ExKind::Math {
                            f: MathFn::Pow,
                            ty,
                            args: parts,
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
            "__fdividef" | "fdividef" => {
                self.expect_args(name, name_span, args, 2)?;
                let (ea, sa) = self.scalar_arg(&args[0], name)?;
                let (eb, sb) = self.scalar_arg(&args[1], name)?;
                let ea = self.convert_scalar(ea, sa, Scalar::F32);
                let eb = self.convert_scalar(eb, sb, Scalar::F32);
                let ex = Ex::new(
                    ExKind::Binary {
                        op: BinOp::Div,
                        ty: Scalar::F32,
                        lhs: Box::new(ea),
                        rhs: Box::new(eb),
                    },
                    1,
                    span,
                );
                Ok((ex, Type::Scalar(Scalar::F32)))
            }
            "make_float2" | "make_float4" | "make_int2" | "make_int4" | "make_uint2"
            | "make_uint4" | "make_double2" => {
                let (scalar, n) = match name {
                    "make_float2" => (Scalar::F32, 2),
                    "make_float4" => (Scalar::F32, 4),
                    "make_int2" => (Scalar::I32, 2),
                    "make_int4" => (Scalar::I32, 4),
                    "make_uint2" => (Scalar::U32, 2),
                    "make_uint4" => (Scalar::U32, 4),
                    _ => (Scalar::F64, 2),
                };
                self.expect_args(name, name_span, args, usize::from(n))?;
                let mut parts = Vec::new();
                for a in args {
                    let (ex, s) = self.scalar_arg(a, name)?;
                    parts.push(self.convert_scalar(ex, s, scalar));
                }
                Ok((
                    Ex::new(ExKind::MakeVector { scalar, parts }, n, span),
                    Type::Vector(scalar, n),
                ))
            }
            "atomicAdd" | "atomicSub" | "atomicExch" | "atomicMin" | "atomicMax" | "atomicAnd"
            | "atomicOr" | "atomicXor" | "atomicCAS" => {
                let op = match name {
                    "atomicAdd" => AtomicOp::Add,
                    "atomicSub" => AtomicOp::Sub,
                    "atomicExch" => AtomicOp::Exch,
                    "atomicMin" => AtomicOp::Min,
                    "atomicMax" => AtomicOp::Max,
                    "atomicAnd" => AtomicOp::And,
                    "atomicOr" => AtomicOp::Or,
                    "atomicXor" => AtomicOp::Xor,
                    _ => AtomicOp::Cas,
                };
                self.expect_args(
                    name,
                    name_span,
                    args,
                    if op == AtomicOp::Cas { 3 } else { 2 },
                )?;
                let (pex, pty) = self.rvalue(&args[0])?;
                let Type::Pointer {
                    pointee,
                    pointee_const,
                } = pty
                else {
                    return err(args[0].span, format!("the first argument of '{name}' must be a pointer (write '&x'), not '{pty}'"));
                };
                // The types of the function's overloads (CUDA C++ Programming Guide, "Atomic
                // Functions"), named as there.
                let allowed: &[Scalar] = match op {
                    AtomicOp::Add | AtomicOp::Exch => &[
                        Scalar::I32,
                        Scalar::U32,
                        Scalar::U64,
                        Scalar::F32,
                        Scalar::F64,
                    ],
                    _ => &[Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64],
                };
                let works_on = || {
                    let names: Vec<&str> = allowed.iter().map(|&a| a.name()).collect();
                    match names.split_last() {
                        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                        None => String::new(),
                    }
                };
                let Type::Scalar(s) = *pointee else {
                    return err(
                        args[0].span,
                        format!("'{name}' works on {}, not '{pointee}'", works_on()),
                    );
                };
                if !allowed.contains(&s) {
                    return err(
                        args[0].span,
                        format!(
                            "'{name}' does not work on '{}': it works on {}",
                            s.name(),
                            works_on()
                        ),
                    );
                }
                if pointee_const {
                    return err(
                        args[0].span,
                        format!("'{name}' cannot change a const location"),
                    );
                }
                let (vex, vs) = self.scalar_arg(&args[1], name)?;
                let value = self.convert_scalar(vex, vs, s);
                let value2 = if op == AtomicOp::Cas {
                    let (ex2, s2) = self.scalar_arg(&args[2], name)?;
                    Some(Box::new(self.convert_scalar(ex2, s2, s)))
                } else {
                    None
                };
                let ex = Ex::new(
                    ExKind::Atomic {
                        op,
                        ty: s,
                        addr: Box::new(pex),
                        value: Box::new(value),
                        value2,
                    },
                    1,
                    span,
                );
                Ok((ex, Type::Scalar(s)))
            }
            other => {
                let Some((f, single)) = math1(other) else {
                    return err(
                        name_span,
                        format!("'{other}' is not declared (no such function or builtin)"),
                    );
                };
                self.expect_args(name, name_span, args, 1)?;
                let (ex, s) = self.scalar_arg(&args[0], name)?;
                let ty = single.unwrap_or(if s == Scalar::F32 {
                    Scalar::F32
                } else {
                    Scalar::F64
                });
                let ex = self.convert_scalar(ex, s, ty);
                Ok((
                    Ex::new(
                        ExKind::Math {
                            f,
                            ty,
                            args: vec![ex],
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
        }
    }
}

/// An integer literal with C's type rules: the first of int, unsigned (hex only), long,
/// unsigned long that holds it, with `u` and `l` suffixes narrowing the choice.
fn int_literal(v: u64, unsigned: bool, long: bool, hex: bool, span: Span) -> Lv {
    let ty = match (unsigned, long) {
        (false, false) if v <= i32::MAX as u64 => Scalar::I32,
        (false, false) if hex && v <= u64::from(u32::MAX) => Scalar::U32,
        (true, false) if v <= u64::from(u32::MAX) => Scalar::U32,
        (false, _) if v <= i64::MAX as u64 => Scalar::I64,
        _ => Scalar::U64,
    };
    Lv::Value(konst(v, ty, span), Type::Scalar(ty))
}

fn comparison(op: BinaryOp) -> BinOp {
    match op {
        BinaryOp::Lt => BinOp::Lt,
        BinaryOp::Le => BinOp::Le,
        BinaryOp::Gt => BinOp::Gt,
        BinaryOp::Ge => BinOp::Ge,
        BinaryOp::Eq => BinOp::Eq,
        _ => BinOp::Ne,
    }
}

/// Folds integer arithmetic on canonical constants of type `ty` (not division: that may fault).
fn fold_int(op: BinOp, a: i64, b: i64, ty: Scalar) -> Option<i64> {
    let bits = ty.size() * 8;
    let (ua, ub) = (a as u64, b as u64);
    let shift = (b as u32) & (bits - 1);
    let signed = ty.is_signed();
    let cmp = |o: std::cmp::Ordering| -> std::cmp::Ordering { o };
    let ord = if signed {
        cmp(a.cmp(&b))
    } else {
        cmp(ua.cmp(&ub))
    };
    Some(match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::Shl => a.wrapping_shl(shift),
        BinOp::Shr if signed => a.wrapping_shr(shift),
        BinOp::Shr => {
            let masked = if bits == 64 {
                ua
            } else {
                ua & ((1u64 << bits) - 1)
            };
            (masked >> shift) as i64
        }
        BinOp::Lt => i64::from(ord.is_lt()),
        BinOp::Le => i64::from(ord.is_le()),
        BinOp::Gt => i64::from(ord.is_gt()),
        BinOp::Ge => i64::from(ord.is_ge()),
        BinOp::Eq => i64::from(a == b),
        BinOp::Ne => i64::from(a != b),
        BinOp::Min => {
            if ord.is_le() {
                a
            } else {
                b
            }
        }
        BinOp::Max => {
            if ord.is_ge() {
                a
            } else {
                b
            }
        }
        BinOp::Div | BinOp::Rem => return None,
    })
}
