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
use super::span::{Diagnostic, DiagnosticKind, Span};
use crate::name_map::NameMap;

/// A checked program, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub functions: Vec<FunctionIr>,
    /// Every `__shared__`, `__constant__`, `__device__` variable and per-thread array.
    pub objects: Vec<MemObject>,
    /// Registers every warp needs (all functions are allocated statically; recursion is rejected).
    pub n_regs: Reg,
    /// The kernel templates of the file with their parameters (`mm<typename T, int TILE>`),
    /// which run once instantiated (`crate::templates::instantiate`).
    pub kernel_templates: Vec<String>,
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

    /// The names of the `__global__` kernels, in source order, then the kernel templates with
    /// their parameters (`mm<typename T, int TILE>`), for a chooser to ask for the arguments.
    pub fn kernel_names(&self) -> Vec<&str> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Kernel)
            .map(|f| f.name.as_str())
            .chain(self.kernel_templates.iter().map(String::as_str))
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
    /// A compile-time constant (`const int TILE = 16;` at file scope, a `constexpr` local, an
    /// enumerator): a use is the value itself, as a literal would be.
    Constant {
        scalar: Scalar,
        value: ConstValue,
    },
    /// A file-scope `const` that is no compile-time constant (an initialiser that does not
    /// fold, an array, a pointer): a host variable, which device code cannot read. Only a use
    /// fails, with this error, as nvcc compiles the kernels that do not use it.
    HostOnly(Diagnostic),
    /// A reference bound to a place in memory (`reference`): the register holds the place's
    /// address, computed where the reference was bound; `place` is where the place is written.
    Ref {
        addr: Reg,
        ty: Type,
        is_const: bool,
        place: Span,
    },
}

/// An expression as the check sees it: a value, a register variable, or a place in memory.
#[derive(Clone)]
enum Lv {
    Value(Ex, Type),
    Var { reg: Reg, ty: Type, is_const: bool },
    Mem { addr: Ex, ty: Type, is_const: bool },
}

struct Sema<'a> {
    unit: &'a TranslationUnit,
    objects: Vec<MemObject>,
    functions: Vec<FunctionIr>,
    function_index: NameMap<usize>,
    globals: NameMap<Symbol>,
    next_reg: Reg,
    // The function being lowered.
    scopes: Vec<NameMap<Symbol>>,
    current: usize,
    code: Vec<Op>,
    spans: Vec<Span>,
    loop_depth: u32,
    /// The `switch` statements open around the statement being lowered, innermost last.
    switches: Vec<switch::OpenSwitch>,
    /// How many calls lowered in place (`inline`) are being lowered one in another, and where
    /// a `return` in the innermost one's body leaves its value.
    inline_depth: u32,
    inline_return: Option<inline::InlinedReturn>,
    unroll_regs: Vec<Reg>,
    n_temps: Reg,
    local_bytes: u64,
    callees: Vec<usize>,
    /// `constexpr` calls being folded, one inside the other (`decl`).
    constexpr_calls: std::cell::Cell<u32>,
    /// The instantiations that deduced calls need and the file lacks (`deduce`).
    wanted: Vec<String>,
}

/// Checks a parsed file and lowers it for the interpreter. A call of a function template whose
/// arguments the check deduces (`deduce`) needs an instantiation the file's reading did not
/// make: the file is read again with it asked for and checked again, a bounded number of times.
pub fn check(unit: &TranslationUnit) -> Result<Program, Diagnostic> {
    let (mut result, mut wanted) = check_once(unit);
    let mut grown: Option<TranslationUnit> = None;
    for _ in 0..crate::limits::MAX_DEDUCTION_ROUNDS {
        if wanted.is_empty() {
            break;
        }
        let current = grown.as_ref().unwrap_or(unit);
        let mut requests = current.templates.requests.clone();
        requests.extend(wanted);
        let tokens = &current.templates.tokens;
        let next = crate::parser::parse_with(tokens, &requests)
            .map_err(|e| crate::refused::explain(e, tokens))?;
        (result, wanted) = check_once(&next);
        grown = Some(next);
    }
    result
}

/// One check of `unit`, and the instantiations its deduced calls need that it lacks.
fn check_once(unit: &TranslationUnit) -> (Result<Program, Diagnostic>, Vec<String>) {
    let mut sema = Sema {
        unit,
        objects: Vec::new(),
        functions: Vec::new(),
        function_index: NameMap::new(),
        globals: NameMap::new(),
        next_reg: SPECIAL_REGS,
        scopes: Vec::new(),
        current: 0,
        code: Vec::new(),
        spans: Vec::new(),
        loop_depth: 0,
        switches: Vec::new(),
        inline_depth: 0,
        inline_return: None,
        unroll_regs: Vec::new(),
        n_temps: 0,
        local_bytes: 0,
        callees: Vec::new(),
        constexpr_calls: std::cell::Cell::new(0),
        wanted: Vec::new(),
    };
    let result = sema.check_items();
    (result, sema.wanted)
}

impl Sema<'_> {
    /// The file's declarations, then every function's body.
    fn check_items(&mut self) -> Result<Program, Diagnostic> {
        let unit = self.unit;
        let sema = self;
        sema.declare_functions()?;
        for item in &unit.items {
            if let Item::Variable(decl) = item {
                sema.file_scope_variable(decl)?;
            }
        }
        for assertion in &unit.static_asserts {
            sema.static_assertion(assertion)?;
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
        let templates = unit.templates.list.iter();
        Ok(Program {
            functions: std::mem::take(&mut sema.functions),
            objects: std::mem::take(&mut sema.objects),
            n_regs: sema.next_reg,
            kernel_templates: templates
                .filter(|t| t.kind == FunctionKind::Kernel)
                .map(Template::signature)
                .collect(),
        })
    }
}

fn err<T>(span: Span, message: impl Into<String>) -> Result<T, Diagnostic> {
    Err(Diagnostic::new(span, message))
}

/// Registers a value of the type takes (the interpreter lays out parameters by it).
pub fn width_of(ty: &Type) -> u8 {
    match ty {
        Type::Void | Type::Array(..) => 0,
        Type::Scalar(_) | Type::Pointer { .. } => 1,
        Type::Vector(_, n) => *n,
        Type::Struct(record) => record.width().unwrap_or(0),
    }
}

fn elem_of(ty: &Type) -> Option<Elem> {
    match ty {
        Type::Scalar(s) => Some(Elem::scalar(*s)),
        Type::Vector(s, n) => Some(Elem { scalar: *s, n: *n }),
        Type::Pointer { .. } => Some(Elem::scalar(Scalar::U64)),
        Type::Struct(r) => record::struct_elem(r),
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
/// The type two operands are brought to (C11 6.3.1.8). `half` and `__nv_bfloat16` take part as
/// `float`, as C promotes the small integers to `int`: their arithmetic is done in `float` and
/// rounded where the value is stored as 16 bits again. One operation rounds once either way, as
/// the hardware's `HADD`/`HMUL` do; a chain of them can differ in its last bit.
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
        Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => ty.float_bits(value as f64),
    }
}

fn float_bits(value: f64, ty: Scalar) -> u64 {
    if ty.is_float() {
        ty.float_bits(value)
    } else {
        int_bits(value as i64, ty)
    }
}

fn is_arith(ty: &Type) -> bool {
    matches!(ty, Type::Scalar(_))
}

mod attributes;
mod barrier_vote;
mod builtins;
mod consts;
mod convert;
mod cpp_statements;
mod curand;
mod decl;
mod deduce;
mod expr;
mod half;
mod in_place;
mod inline;
mod intrinsics;
mod math_library;
mod output;
mod record;
mod reference;
mod stmt;
mod switch;
mod warp;

use consts::*;

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
                if p.reference && f.kind == FunctionKind::Kernel {
                    return Err(Diagnostic::of_kind(
                        DiagnosticKind::NotSimulated,
                        p.span,
                        reference::KERNEL_PARAMETER,
                    ));
                }
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
                alu: Vec::new(),
                loads_in_flight: Vec::new(),
                error: None,
                launch_bounds: None,
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
        if decl.storage == Storage::Automatic {
            return self.file_scope_constants(decl);
        }
        for d in &decl.declarators {
            if self.globals.contains_key(&d.name) || self.function_index.contains_key(&d.name) {
                return err(d.span, format!("'{}' is declared twice", d.name));
            }
            let ty = self.full_type(d, decl.storage)?;
            let space = match decl.storage {
                Storage::Constant => ObjectSpace::Constant,
                Storage::Shared => ObjectSpace::Shared,
                Storage::ExternShared => ObjectSpace::DynamicShared,
                _ => ObjectSpace::Global,
            };
            let shared = matches!(space, ObjectSpace::Shared | ObjectSpace::DynamicShared);
            if let (true, Some(init)) = (shared, &d.init) {
                let span = match init {
                    Initializer::Expr(e) => e.span,
                    Initializer::List(_, span) => *span,
                };
                return err(
                    span,
                    "__shared__ variables cannot have an initialiser; assign them in the kernel",
                );
            }
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
                align: attributes::aligned(ty.align(), d.align),
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
                    return Err(Diagnostic::of_kind(
                        DiagnosticKind::NotConstant,
                        e.span,
                        "a file-scope variable's initialiser must be a constant",
                    ));
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
            (Initializer::List(items, span), Type::Struct(record)) => {
                if items.len() > record.fields.len() {
                    return err(*span, format!("too many values for '{}'", record.name));
                }
                for (item, field) in items.iter().zip(&record.fields) {
                    let at = offset + field.offset as usize;
                    self.constant_bytes(item, &field.ty, bytes, at)?;
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
                        return Err(Diagnostic::of_kind(
                            DiagnosticKind::NotConstant,
                            e.span,
                            format!("the size of '{}' must be a constant expression", d.name),
                        ))
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

    fn function_body(&mut self, index: usize, f: &Function) -> Result<(), Diagnostic> {
        self.current = index;
        self.code.clear();
        self.spans.clear();
        self.loop_depth = 0;
        self.switches.clear();
        self.unroll_regs.clear();
        self.n_temps = 0;
        self.local_bytes = 0;
        self.callees.clear();
        let mut scope = NameMap::new();
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
        // A member function sees its struct's members by name, under its parameters.
        self.scopes = self.member_scope(index)?.into_iter().collect();
        self.scopes.push(scope);
        let launch_bounds = self.launch_bounds(f)?;
        self.functions[index].launch_bounds = launch_bounds;
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
        let annotation = issue::annotate_function(func);
        func.issue = annotation.issue;
        func.alu = annotation.alu;
        func.loads_in_flight = annotation.loads_in_flight;
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

    /// A function that calls itself, directly or through others, keeps the refusal as its
    /// error: a launch of a kernel that reaches it fails with it, and the file's other kernels
    /// still run.
    fn reject_recursion(&mut self) -> Result<(), Diagnostic> {
        let mut recursive = Vec::new();
        for (start, f) in self.functions.iter().enumerate() {
            // Depth-first search from each callee; reaching `start` again is recursion.
            let mut stack: Vec<usize> = f.callees.clone();
            let mut seen = vec![false; self.functions.len()];
            while let Some(g) = stack.pop() {
                if g == start {
                    recursive.push(start);
                    break;
                }
                if std::mem::replace(&mut seen[g], true) {
                    continue;
                }
                stack.extend(self.functions[g].callees.iter().copied());
            }
        }
        for index in recursive {
            let f = &mut self.functions[index];
            if f.error.is_none() {
                f.error = Some(Diagnostic::of_kind(
                    DiagnosticKind::NotSimulated,
                    f.span,
                    format!(
                        "'{}' calls itself (recursion is not supported by the simulator)",
                        f.name
                    ),
                ));
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
}
