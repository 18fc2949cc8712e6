//! Compiler effects: what `nvcc -O3` does to a kernel's memory instructions that the source does
//! not show.
//!
//! The interpreter runs the kernel as written: one load per array element read. The compiled code
//! can differ. Three effects are switchable here. If-conversion (`if_conversion`): nvcc turns a
//! short `if` body into predicated instructions that every warp reaching it issues, so Nsight
//! Compute counts a guarded shared store once per warp whatever the condition (probe group H);
//! which bodies is decided in the kernel front end (`kernel::issue::predicated_body`), and the
//! interpreter tallies what warps issued predicated off. Reuse of loaded values
//! (`reuse_loaded_values`, `LoadReuse`): a value the warp loaded is kept in a register and read
//! again from there (the students' `sqrtf(in[i]) * expf(in[i]) + sinf(in[i])` makes one request a
//! warp, `tests/reference/students/`). The third effect, the one the H100 measurements of the
//! lecture kernels show
//! (`tests/reference/h100.json`, and its README): in `mm_tiled` nvcc unrolls the constant-trip
//! loop `for (int k = 0; k < TILE_WIDTH; ++k) r += sa[ty][k] * sb[k][tx];` and fuses every four
//! consecutive reads `sa[ty][k..k+3]` into one 128-bit shared load (`LDS.128`). With `TILE_WIDTH`
//! 16 or 32 and `PAD` 0 Nsight Compute counts 41.9M shared load instructions for n = 1024, where
//! the source makes 67.1M; with `PAD` 1 a row is no longer a multiple of 16 bytes, nvcc cannot prove
//! the alignment, and the count stays at 67.1M. An access compiles to one memory instruction only
//! if "the size of the data type is 1, 2, 4, 8, or 16 bytes and the data is naturally aligned (i.e.,
//! its address is a multiple of that size)" (CUDA C++ Programming Guide, "Device Memory Accesses"),
//! which is why the alignment decides.
//!
//! The model has a static and a dynamic half:
//!
//! - **Static** (`fusible_loads`, on the syntax tree): a read `s[i0]..[k + c]` of a `__shared__`
//!   array of 4- or 8-byte elements is a candidate when it sits directly in the body of a `for` loop
//!   over `k` that steps by one and that the front end decided nvcc unrolls fully
//!   (`Program::loop_unroll`: a constant trip count, however it is written; this pass does not
//!   decide it again), the last subscript is `k` plus a constant, no other subscript uses `k`, and the body
//!   has no barrier, fence, atomic, `break`, `continue` or `return`, does not assign `k` and does
//!   not write the array. The widest fused load is the largest of 16 and 8 bytes that divides the
//!   byte stride of every other subscript: only then does every thread's row start aligned, which
//!   is what the compiler must prove, since one instruction serves every warp.
//! - **Dynamic** (`LoadFuser`, on the recorded accesses): within one warp, consecutive executions
//!   of a candidate whose every active lane advances by one element, with the same active lanes,
//!   are merged from an aligned start into one access of 16 (or 8) bytes per lane at the first
//!   addresses. A shared store or atomic of the warp ends every run, so no load moves past a write.
//!
//! Both halves are exact for the lesson kernels. Known limits: a barrier or a shared store inside a
//! `__device__` function called from the loop is not seen by the static half, and subscripts such
//! as `s[4 * t + k]`, whose alignment nvcc could prove from `4 * t`, are not fused.

use crate::access::{AccessKind, AccessWidth, Space};
use crate::hashing::IntegerHashMap;
use crate::kernel::ast::{
    BinaryOp, Declaration, Expr, ExprKind, Initializer, Item, Stmt, StmtKind, Storage,
    TranslationUnit, Type, UnaryOp,
};
use crate::kernel::ir::Unroll;
use crate::kernel::{MemRecord, Program, Span};
use serde::{Deserialize, Serialize};

/// Which compiler effects the counters include.
///
/// `AS_COMPILED` (the default) models what `nvcc -O3` did in the measurements; `AS_WRITTEN`
/// counts one instruction per access in the source, as the lectures reason about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileEffects {
    /// Fuse consecutive aligned shared loads of an unrolled loop into 64- or 128-bit loads.
    pub fuse_shared_loads: bool,
    /// If-convert short `if` bodies (`kernel::issue::predicated_body`): a warp none of whose
    /// lanes take one still issues its instructions, predicated off (probe group H). Launch
    /// files written before this effect existed read it as on, as nvcc does it.
    #[serde(default = "on")]
    pub if_conversion: bool,
    /// Keep a loaded value in a register: a warp's load of addresses it loaded before, with no
    /// store, atomic, barrier or fence of its own in between, is not issued again (`LoadReuse`).
    #[serde(default = "on")]
    pub reuse_loaded_values: bool,
}

fn on() -> bool {
    true
}

impl CompileEffects {
    /// The kernel as the source reads: every element access is one instruction.
    pub const AS_WRITTEN: CompileEffects = CompileEffects {
        fuse_shared_loads: false,
        if_conversion: false,
        reuse_loaded_values: false,
    };
    /// The kernel as `nvcc -O3` compiles it, as far as this module models it.
    pub const AS_COMPILED: CompileEffects = CompileEffects {
        fuse_shared_loads: true,
        if_conversion: true,
        reuse_loaded_values: true,
    };
}

impl Default for CompileEffects {
    fn default() -> CompileEffects {
        CompileEffects::AS_COMPILED
    }
}

/// A shared-memory read that the compiler may fuse with the reads of the following iterations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FusibleLoad {
    /// The span of the read (`sa[ty][k]`), which is the span its records carry.
    pub span: Span,
    pub array: String,
    pub elem_bytes: u32,
    /// The widest fused load whose alignment the strides allow: 8 or 16 bytes.
    pub max_width: u32,
}

/// What fusion did to one read of the source, summed over the blocks it ran in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FusionSite {
    pub span: Span,
    pub array: String,
    /// Warp-level loads the source makes here.
    pub loads_as_written: f64,
    /// Warp-level load instructions after fusion.
    pub loads_as_compiled: f64,
    /// The widest load that was formed, in bytes per lane.
    pub widest_bytes: u32,
}

// ----- the static half -----

/// A `__shared__` array in scope: its element size and dimensions (outermost first, `None` if not
/// a constant).
#[derive(Clone, Debug)]
struct SharedArray {
    name: String,
    elem_bytes: u32,
    dims: Vec<Option<u64>>,
}

/// A name in scope: a shared array, an integer compile-time constant (a file-scope `const`, a
/// `constexpr` local, an enumerator: the front end folds them as it folds a `#define`'s value),
/// or anything else that shadows one.
#[derive(Clone, Debug)]
enum Binding {
    Shared(SharedArray),
    Constant(String, i64),
    Other(String),
}

impl Binding {
    fn name(&self) -> &str {
        match self {
            Binding::Shared(array) => &array.name,
            Binding::Constant(name, _) | Binding::Other(name) => name,
        }
    }
}

/// The reads of `unit` that may be fused, in source order. Which loops nvcc unrolls is the front
/// end's decision (`program`, `kernel::issue`); this pass only looks at their reads.
pub(crate) fn fusible_loads(unit: &TranslationUnit, program: &Program) -> Vec<FusibleLoad> {
    let mut file_scope = Vec::new();
    for item in &unit.items {
        if let Item::Variable(declaration) = item {
            declare(&mut file_scope, declaration, true);
        }
    }
    let mut found = Vec::new();
    for item in &unit.items {
        if let Item::Function(function) = item {
            let mut scope = file_scope.clone();
            for param in &function.params {
                scope.push(Binding::Other(param.name.clone()));
            }
            walk_statements(&function.body, &mut scope, program, &mut found);
        }
    }
    found
}

/// Adds the names of a declaration (`at_file_scope` or in a function) to the scope.
fn declare(scope: &mut Vec<Binding>, declaration: &Declaration, at_file_scope: bool) {
    // Without a memory space at file scope, or `constexpr`: compile-time constants.
    let constant = declaration.compile_time
        || (declaration.storage == Storage::Automatic && declaration.is_const && at_file_scope);
    for declarator in &declaration.declarators {
        let value = match (&declarator.init, constant && declarator.dims.is_empty()) {
            (Some(Initializer::Expr(init)), true) => const_int(init, scope),
            _ => None,
        };
        if let Some(value) = value {
            scope.push(Binding::Constant(declarator.name.clone(), value));
            continue;
        }
        let shared = matches!(declaration.storage, Storage::Shared | Storage::ExternShared);
        let elem_bytes = match &declarator.ty {
            Type::Scalar(scalar) => scalar.size(),
            _ => 0,
        };
        if shared && !declarator.dims.is_empty() && elem_bytes > 0 {
            let dims = declarator
                .dims
                .iter()
                .map(|dim| {
                    dim.as_ref()
                        .and_then(|dim| const_int(dim, scope))
                        .and_then(|v| u64::try_from(v).ok())
                })
                .collect();
            scope.push(Binding::Shared(SharedArray {
                name: declarator.name.clone(),
                elem_bytes,
                dims,
            }));
        } else {
            scope.push(Binding::Other(declarator.name.clone()));
        }
    }
}

/// The shared array a name refers to, if the innermost binding of the name is one.
fn lookup<'s>(scope: &'s [Binding], name: &str) -> Option<&'s SharedArray> {
    match scope.iter().rev().find(|binding| binding.name() == name)? {
        Binding::Shared(array) => Some(array),
        Binding::Constant(..) | Binding::Other(_) => None,
    }
}

fn walk_statements(
    statements: &[Stmt],
    scope: &mut Vec<Binding>,
    program: &Program,
    found: &mut Vec<FusibleLoad>,
) {
    let depth = scope.len();
    for statement in statements {
        walk_statement(statement, scope, program, found);
    }
    scope.truncate(depth);
}

/// Looks for candidate loops in a statement and the statements it contains.
fn walk_statement(
    statement: &Stmt,
    scope: &mut Vec<Binding>,
    program: &Program,
    found: &mut Vec<FusibleLoad>,
) {
    match &statement.kind {
        StmtKind::Declaration(declaration) => declare(scope, declaration, false),
        StmtKind::Block(statements) => walk_statements(statements, scope, program, found),
        StmtKind::If(_, then, otherwise) => {
            walk_scoped(then, scope, program, found);
            if let Some(otherwise) = otherwise {
                walk_scoped(otherwise, scope, program, found);
            }
        }
        StmtKind::While(_, body) | StmtKind::DoWhile(body, _) | StmtKind::Switch(_, body) => {
            walk_scoped(body, scope, program, found)
        }
        StmtKind::Case(_, labelled) => walk_statement(labelled, scope, program, found),
        StmtKind::For { init, body, .. } => {
            let depth = scope.len();
            if let Some(init) = init {
                walk_statement(init, scope, program, found);
            }
            if let Some(variable) = unrolled_variable(statement, program) {
                found.extend(loop_candidates(&variable, body, scope));
            }
            walk_scoped(body, scope, program, found);
            scope.truncate(depth);
        }
        StmtKind::Expr(_)
        | StmtKind::Return(_)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Empty
        | StmtKind::Unsupported(_) => {}
    }
}

fn walk_scoped(
    statement: &Stmt,
    scope: &mut Vec<Binding>,
    program: &Program,
    found: &mut Vec<FusibleLoad>,
) {
    let depth = scope.len();
    walk_statement(statement, scope, program, found);
    scope.truncate(depth);
}

/// The induction variable of a `for` loop that the front end decided nvcc unrolls fully
/// (`Unroll::Full`: a constant trip count, `kernel::issue`), when it steps by one, so that
/// consecutive copies read consecutive elements.
fn unrolled_variable(statement: &Stmt, program: &Program) -> Option<String> {
    let StmtKind::For {
        init: Some(init),
        step: Some(step),
        ..
    } = &statement.kind
    else {
        return None;
    };
    if program.loop_unroll(statement.span) != Some(Unroll::Full) {
        return None;
    }
    let variable = match &init.kind {
        StmtKind::Declaration(declaration) => match declaration.declarators.as_slice() {
            [declarator] => declarator.name.clone(),
            _ => return None,
        },
        StmtKind::Expr(Expr {
            kind: ExprKind::Assign(None, target, _),
            ..
        }) => ident(target)?.to_string(),
        _ => return None,
    };
    let steps_by_one = match &step.kind {
        ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PostInc, target) => {
            ident(target) == Some(variable.as_str())
        }
        ExprKind::Assign(Some(BinaryOp::Add), target, amount) => {
            ident(target) == Some(variable.as_str()) && const_int(amount, &[]) == Some(1)
        }
        _ => false,
    };
    steps_by_one.then_some(variable)
}

/// The candidate reads in the body of a constant-trip loop over `variable`.
fn loop_candidates(variable: &str, body: &Stmt, scope: &[Binding]) -> Vec<FusibleLoad> {
    let mut facts = BodyFacts::default();
    let mut exits = false;
    visit_statement(
        body,
        &mut |expr| facts.note(expr, variable, scope),
        &mut exits,
    );
    if facts.blocked || exits {
        return Vec::new();
    }
    // Only reads that run once per iteration, unconditionally, may be fused: those in the
    // expression statements and declarations directly in the body.
    let straight: Vec<&Stmt> = match &body.kind {
        StmtKind::Block(statements) => statements.iter().collect(),
        _ => vec![body],
    };
    let mut reads = Vec::new();
    for statement in straight {
        match &statement.kind {
            StmtKind::Expr(expr) => unconditional_reads(expr, &mut reads),
            StmtKind::Declaration(declaration) => {
                for declarator in &declaration.declarators {
                    if let Some(Initializer::Expr(expr)) = &declarator.init {
                        unconditional_reads(expr, &mut reads);
                    }
                }
            }
            _ => {}
        }
    }
    reads
        .into_iter()
        .filter_map(|read| candidate(read, variable, scope, &facts.written_arrays))
        .collect()
}

/// What a loop body does that stops fusion.
#[derive(Debug, Default)]
struct BodyFacts {
    /// A barrier, fence or atomic, or an assignment of the loop variable.
    blocked: bool,
    /// Shared arrays the body writes (or takes the address of).
    written_arrays: Vec<String>,
}

impl BodyFacts {
    fn note(&mut self, expr: &Expr, variable: &str, scope: &[Binding]) {
        match &expr.kind {
            ExprKind::Call { name, .. } => {
                let ordering = name.starts_with("__sync")
                    || name.starts_with("__threadfence")
                    || name.starts_with("atomic");
                if ordering {
                    self.blocked = true;
                }
            }
            ExprKind::Assign(_, target, _)
            | ExprKind::Unary(
                UnaryOp::PreInc
                | UnaryOp::PreDec
                | UnaryOp::PostInc
                | UnaryOp::PostDec
                | UnaryOp::AddrOf,
                target,
            ) => {
                if ident(target) == Some(variable) {
                    self.blocked = true;
                }
                if let Some(root) = root_name(target) {
                    if lookup(scope, root).is_some() {
                        self.written_arrays.push(root.to_string());
                    }
                }
            }
            _ => {}
        }
    }
}

/// Calls `on_expr` for every expression in a statement (all nested ones too), and sets `exits` on
/// `break`, `continue` or `return`.
fn visit_statement(statement: &Stmt, on_expr: &mut dyn FnMut(&Expr), exits: &mut bool) {
    match &statement.kind {
        StmtKind::Declaration(declaration) => {
            for declarator in &declaration.declarators {
                for dim in declarator.dims.iter().flatten() {
                    dim.walk(on_expr);
                }
                if let Some(init) = &declarator.init {
                    visit_initializer(init, on_expr);
                }
            }
        }
        StmtKind::Expr(expr) => expr.walk(on_expr),
        StmtKind::Block(statements) => {
            for statement in statements {
                visit_statement(statement, on_expr, exits);
            }
        }
        StmtKind::If(cond, then, otherwise) => {
            cond.walk(on_expr);
            visit_statement(then, on_expr, exits);
            if let Some(otherwise) = otherwise {
                visit_statement(otherwise, on_expr, exits);
            }
        }
        StmtKind::While(cond, body)
        | StmtKind::DoWhile(body, cond)
        | StmtKind::Switch(cond, body) => {
            cond.walk(on_expr);
            visit_statement(body, on_expr, exits);
        }
        StmtKind::Case(_, labelled) => visit_statement(labelled, on_expr, exits),
        StmtKind::For {
            init,
            cond,
            step,
            body,
            ..
        } => {
            if let Some(init) = init {
                visit_statement(init, on_expr, exits);
            }
            for expr in cond.iter().chain(step.iter()) {
                expr.walk(on_expr);
            }
            visit_statement(body, on_expr, exits);
        }
        StmtKind::Return(value) => {
            *exits = true;
            if let Some(value) = value {
                value.walk(on_expr);
            }
        }
        StmtKind::Break | StmtKind::Continue => *exits = true,
        StmtKind::Empty | StmtKind::Unsupported(_) => {}
    }
}

fn visit_initializer(init: &Initializer, on_expr: &mut dyn FnMut(&Expr)) {
    match init {
        Initializer::Expr(expr) => expr.walk(on_expr),
        Initializer::List(items, _) => {
            for item in items {
                visit_initializer(item, on_expr);
            }
        }
    }
}

/// The outermost element reads of an expression that are evaluated every time it is: not the
/// target of an assignment, not under `&`, `++`, `--`, `sizeof`, and not in the arms of `?:` or
/// the right side of `&&` and `||`.
fn unconditional_reads<'e>(expr: &'e Expr, reads: &mut Vec<&'e Expr>) {
    match &expr.kind {
        ExprKind::Index(..) => {
            reads.push(expr);
            // The subscripts are evaluated too, and may read other arrays.
            let mut inner = expr;
            while let ExprKind::Index(base, subscript) = &inner.kind {
                unconditional_reads(subscript, reads);
                inner = base;
            }
        }
        ExprKind::Assign(_, target, value) => {
            // The target is written (a compound assignment also reads it, but a written array is
            // never fused), so only its subscripts are reads worth looking at.
            subscripts_of(target, reads);
            unconditional_reads(value, reads);
        }
        ExprKind::Unary(
            UnaryOp::AddrOf
            | UnaryOp::PreInc
            | UnaryOp::PreDec
            | UnaryOp::PostInc
            | UnaryOp::PostDec,
            target,
        ) => subscripts_of(target, reads),
        ExprKind::Unary(_, inner)
        | ExprKind::Cast(_, inner)
        | ExprKind::Member { base: inner, .. } => unconditional_reads(inner, reads),
        ExprKind::Binary(BinaryOp::And | BinaryOp::Or, lhs, _) => unconditional_reads(lhs, reads),
        ExprKind::Binary(_, lhs, rhs) | ExprKind::Comma(lhs, rhs) => {
            unconditional_reads(lhs, reads);
            unconditional_reads(rhs, reads);
        }
        ExprKind::Conditional(cond, _, _) => unconditional_reads(cond, reads),
        ExprKind::Call { args, .. } => {
            for arg in args {
                unconditional_reads(arg, reads);
            }
        }
        ExprKind::Ident(_)
        | ExprKind::Str(_)
        | ExprKind::Int { .. }
        | ExprKind::Float { .. }
        | ExprKind::Bool(_)
        | ExprKind::SizeofType(_)
        | ExprKind::SizeofExpr(_) => {}
    }
}

/// The reads inside the subscripts of a place that is written.
fn subscripts_of<'e>(place: &'e Expr, reads: &mut Vec<&'e Expr>) {
    let mut inner = place;
    while let ExprKind::Index(base, subscript) = &inner.kind {
        unconditional_reads(subscript, reads);
        inner = base;
    }
}

/// A read `array[i0]..[last]` as a candidate, if it is one.
fn candidate(
    read: &Expr,
    variable: &str,
    scope: &[Binding],
    written: &[String],
) -> Option<FusibleLoad> {
    let mut subscripts = Vec::new();
    let mut base = read;
    while let ExprKind::Index(inner, subscript) = &base.kind {
        subscripts.push(subscript.as_ref());
        base = inner;
    }
    subscripts.reverse();
    let name = ident(base)?;
    let array = lookup(scope, name)?;
    if written.iter().any(|w| w == name) || subscripts.len() != array.dims.len() {
        return None;
    }
    let (last, others) = subscripts.split_last()?;
    if !is_variable_plus_constant(last, variable, scope) {
        return None;
    }
    // The byte stride of each outer subscript: the element size times the inner extents.
    let mut widths = vec![16u64, 8];
    widths.retain(|&w| w > u64::from(array.elem_bytes));
    for (position, subscript) in others.iter().enumerate() {
        if mentions(subscript, variable) {
            return None;
        }
        let mut stride = u64::from(array.elem_bytes);
        for dim in &array.dims[position + 1..] {
            stride = stride.checked_mul((*dim)?)?;
        }
        // A constant subscript adds a known offset; any other may be any row, so its stride must
        // keep every row aligned.
        let step = match const_int(subscript, scope) {
            Some(value) => stride.checked_mul(u64::try_from(value).ok()?)?,
            None => stride,
        };
        widths.retain(|&w| step % w == 0);
    }
    let max_width = *widths.first()?;
    Some(FusibleLoad {
        span: read.span,
        array: name.to_string(),
        elem_bytes: array.elem_bytes,
        max_width: max_width as u32,
    })
}

/// `k`, `k + c`, `c + k` or `k - c` with `c` a constant.
fn is_variable_plus_constant(expr: &Expr, variable: &str, scope: &[Binding]) -> bool {
    match &expr.kind {
        ExprKind::Ident(name) => name == variable,
        ExprKind::Binary(BinaryOp::Add, lhs, rhs) => {
            (ident(lhs) == Some(variable) && const_int(rhs, scope).is_some())
                || (const_int(lhs, scope).is_some() && ident(rhs) == Some(variable))
        }
        ExprKind::Binary(BinaryOp::Sub, lhs, rhs) => {
            ident(lhs) == Some(variable) && const_int(rhs, scope).is_some()
        }
        _ => false,
    }
}

fn mentions(expr: &Expr, variable: &str) -> bool {
    let mut seen = false;
    expr.walk(&mut |e| {
        if ident(e) == Some(variable) {
            seen = true;
        }
    });
    seen
}

fn ident(expr: &Expr) -> Option<&str> {
    match &expr.kind {
        ExprKind::Ident(name) => Some(name),
        _ => None,
    }
}

/// The variable an lvalue such as `s[i][j]` or `s` is rooted in.
fn root_name(expr: &Expr) -> Option<&str> {
    match &expr.kind {
        ExprKind::Ident(name) => Some(name),
        ExprKind::Index(base, _) | ExprKind::Member { base, .. } => root_name(base),
        ExprKind::Unary(UnaryOp::Deref, inner) => root_name(inner),
        _ => None,
    }
}

/// An integer constant expression (macros are already expanded), or `None`.
fn const_int(expr: &Expr, scope: &[Binding]) -> Option<i64> {
    match &expr.kind {
        ExprKind::Int { value, .. } => i64::try_from(*value).ok(),
        ExprKind::Ident(name) => match scope.iter().rev().find(|b| b.name() == name)? {
            Binding::Constant(_, value) => Some(*value),
            _ => None,
        },
        ExprKind::Unary(UnaryOp::Neg, inner) => const_int(inner, scope)?.checked_neg(),
        ExprKind::Unary(UnaryOp::Plus, inner) => const_int(inner, scope),
        ExprKind::Cast(Type::Scalar(scalar), inner) if scalar.is_integer() => {
            const_int(inner, scope)
        }
        ExprKind::Binary(op, lhs, rhs) => {
            let (a, b) = (const_int(lhs, scope)?, const_int(rhs, scope)?);
            match op {
                BinaryOp::Add => a.checked_add(b),
                BinaryOp::Sub => a.checked_sub(b),
                BinaryOp::Mul => a.checked_mul(b),
                BinaryOp::Div => a.checked_div(b),
                BinaryOp::Rem => a.checked_rem(b),
                BinaryOp::Shl => a.checked_shl(u32::try_from(b).ok()?),
                BinaryOp::Shr => a.checked_shr(u32::try_from(b).ok()?),
                BinaryOp::BitAnd => Some(a & b),
                BinaryOp::BitOr => Some(a | b),
                BinaryOp::BitXor => Some(a ^ b),
                _ => None,
            }
        }
        _ => None,
    }
}

// ----- the dynamic half -----

/// A run of fusible loads of one warp at one site, waiting for its next element.
#[derive(Clone, Debug)]
struct Pending {
    warp: u32,
    site: usize,
    first: MemRecord,
    /// Lane addresses of the latest element.
    last: [Option<u64>; crate::access::WARP_LANES],
    count: u32,
    /// Elements in the widest load the run can become.
    target: u32,
}

/// How many loaded values a warp keeps for reuse before the oldest are forgotten: registers are
/// finite (an estimate; a kernel that reloads one of more distinct values is rare).
pub const KEPT_LOADS: usize = 16;

/// Drops the loads nvcc does not issue again: `sqrtf(in[i]) * expf(in[i]) + sinf(in[i])` reads
/// `in[i]` once in the SASS (Nsight Compute counts one request a warp where the source makes
/// three), and a value loaded before a loop that does not store is not loaded in every iteration.
/// A load is reused when the same warp loaded the same addresses with the same width before, with
/// no store, atomic, barrier or fence of the warp in between (the compiler cannot keep a value
/// across any of them, as another thread may change it). A global load whose address was computed
/// from loaded data is always issued: equal addresses there are a coincidence of the data, which
/// the compiler cannot see. Addresses are compared by a 64-bit hash of the lanes.
#[derive(Clone, Debug, Default)]
pub struct LoadReuse {
    /// The class of each load site's address form (`kernel::issue::load_classes`): only loads of
    /// one class can reuse each other's values, as the compiler sees the expressions, not the
    /// addresses they come to (`s[256 + t]` and `s[256 + (3 * t & 255)]` are different loads
    /// even where lane 0 reads the same word with both).
    classes: IntegerHashMap<(u32, u32), u32>,
    /// Per warp: the fences it had passed when the kept values were loaded, and their keys.
    warps: IntegerHashMap<u32, (u32, Vec<u64>)>,
    reused: u64,
    /// The active lanes of the reused loads, which issue no thread instructions either.
    reused_lanes: u64,
}

/// The loads `LoadReuse` dropped: warp instructions, and their active lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReusedLoads {
    pub instructions: u64,
    pub lanes: u64,
}

impl LoadReuse {
    /// Reuse among the load sites of each class of `classes`.
    pub fn new(classes: std::collections::HashMap<(u32, u32), u32>) -> LoadReuse {
        LoadReuse {
            classes: classes.into_iter().collect(),
            ..LoadReuse::default()
        }
    }

    /// The key the loads at `span` are compared under: their address class, or the site alone.
    pub(crate) fn class_of_site(&self, span: Span) -> u64 {
        let site = (span.line, span.col);
        self.classes
            .get(&site)
            .map_or(u64::from(site.0) << 32 | u64::from(site.1) | 1 << 63, |c| {
                u64::from(*c)
            })
    }

    /// The loads not issued again so far, and their active lanes (`take_reused` clears them).
    pub(crate) fn reused_so_far(&self) -> ReusedLoads {
        ReusedLoads {
            instructions: self.reused,
            lanes: self.reused_lanes,
        }
    }

    /// Counts loads another warp's records showed to be reused (`simulate`'s warps shown alike).
    pub(crate) fn add_reused(&mut self, reused: ReusedLoads) {
        self.reused += reused.instructions;
        self.reused_lanes += reused.lanes;
    }

    /// Passes `record` on unless it reloads a value its warp still holds.
    pub fn push(&mut self, record: &MemRecord, emit: &mut dyn FnMut(&MemRecord)) {
        let access = &record.access;
        let class = if access.kind == AccessKind::Load {
            self.class_of_site(record.span)
        } else {
            0
        };
        let (fences, kept) = self.warps.entry(record.warp).or_default();
        if *fences != record.fences_passed {
            *fences = record.fences_passed;
            kept.clear();
        }
        if access.kind != AccessKind::Load {
            kept.clear();
            emit(record);
            return;
        }
        let data_dependent = access.space != Space::Shared && record.order.waits_for != 0;
        // A site without a class (a read-modify-write's read) is a class of its own.
        let key = reuse_key(record, class);
        if !data_dependent && kept.contains(&key) {
            self.reused += 1;
            self.reused_lanes += u64::from(access.n_active());
            return;
        }
        if kept.len() >= KEPT_LOADS {
            kept.remove(0);
        }
        kept.push(key);
        emit(record);
    }

    /// Whether `record`, were it pushed now, could reuse a value its warp loaded before: it is a
    /// load, and the warp keeps values loaded since its last fence, store or atomic.
    pub(crate) fn may_reuse(&self, record: &MemRecord) -> bool {
        record.access.kind == AccessKind::Load
            && self
                .warps
                .get(&record.warp)
                .is_some_and(|(fences, kept)| *fences == record.fences_passed && !kept.is_empty())
    }

    /// Loads not issued again since the last `take_reused`.
    pub(crate) fn take_reused(&mut self) -> ReusedLoads {
        self.warps.clear();
        ReusedLoads {
            instructions: std::mem::take(&mut self.reused),
            lanes: std::mem::take(&mut self.reused_lanes),
        }
    }
}

/// A hash of what a load reads: its address class, space, width and every lane's address. Four
/// lanes are mixed side by side into four words, joined at the end: a single chain of 34
/// dependent multiplies was a twentieth of a matmul's simulation.
fn reuse_key(record: &MemRecord, class: u64) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mix = |h: u64, v: u64| (h ^ v).wrapping_mul(PRIME).rotate_left(29);
    let access = &record.access;
    let seed = 0xcbf2_9ce4_8422_2325u64 ^ u64::from(access.width.bytes());
    let mut h = [
        mix(seed, class),
        mix(seed ^ 1, access.space as u64),
        seed ^ 2,
        seed ^ 3,
    ];
    for lanes in access.lanes.chunks_exact(4) {
        for (h, lane) in h.iter_mut().zip(lanes) {
            *h = mix(*h, lane.map_or(u64::MAX, |a| a));
        }
    }
    h.into_iter().fold(seed, mix)
}

/// Adds `after - before` (two `LoadFuser::tally_into`s) to `total`: the loads and instructions in
/// between summed, and the widest load, where one wider than before was made in between.
pub(crate) fn add_tally_difference(
    total: &mut Vec<(u64, u64, u32)>,
    before: &[(u64, u64, u32)],
    after: &[(u64, u64, u32)],
) {
    total.resize(after.len(), (0, 0, 0));
    for ((t, b), a) in total.iter_mut().zip(before).zip(after) {
        t.0 += a.0 - b.0;
        t.1 += a.1 - b.1;
        if a.2 > b.2 {
            t.2 = t.2.max(a.2);
        }
    }
}

/// One site's change of the fuser's tally: (site, loads in, instructions out, widest bytes made
/// in between or 0).
pub type TallyChange = (usize, u64, u64, u32);

/// The sites whose tally changed between two `LoadFuser::tally_into`s, as `TallyChange`s. A
/// record changes one site's tally at most, nearly always, so up to two are kept in place: the
/// iteration logs keep one of these per record, and a vector each was most of a matmul's
/// allocations.
#[derive(Clone, Debug, Default)]
pub struct TallyChanges {
    kept: [TallyChange; 2],
    len: usize,
    more: Vec<TallyChange>,
}

impl TallyChanges {
    /// The changes from `before` to `after`.
    pub fn between(before: &[(u64, u64, u32)], after: &[(u64, u64, u32)]) -> TallyChanges {
        let mut changes = TallyChanges::default();
        for (site, (b, a)) in before.iter().zip(after).enumerate() {
            if b != a {
                let widest = if a.2 > b.2 { a.2 } else { 0 };
                changes.push((site, a.0 - b.0, a.1 - b.1, widest));
            }
        }
        changes
    }

    fn push(&mut self, change: TallyChange) {
        if self.more.is_empty() && self.len < self.kept.len() {
            self.kept[self.len] = change;
            self.len += 1;
        } else {
            if self.more.is_empty() {
                self.more.extend_from_slice(&self.kept[..self.len]);
            }
            self.more.push(change);
        }
    }
}

impl std::ops::Deref for TallyChanges {
    type Target = [TallyChange];

    fn deref(&self) -> &[TallyChange] {
        if self.more.is_empty() {
            &self.kept[..self.len]
        } else {
            &self.more
        }
    }
}

/// Adds `changes` (`TallyChanges`) to `total`: the loads and instructions of each site that
/// changed, and its widest load where one was made.
pub(crate) fn add_tally_changes(
    total: &mut Vec<(u64, u64, u32)>,
    changes: &[(usize, u64, u64, u32)],
) {
    add_tally_changes_times(total, changes, 1);
}

/// Adds `changes` `times` over: the loads and instructions multiplied, the widest load once.
pub(crate) fn add_tally_changes_times(
    total: &mut Vec<(u64, u64, u32)>,
    changes: &[(usize, u64, u64, u32)],
    times: u64,
) {
    for &(site, loads, instructions, widest) in changes {
        if total.len() <= site {
            total.resize(site + 1, (0, 0, 0));
        }
        let t = &mut total[site];
        t.0 += loads * times;
        t.1 += instructions * times;
        if times > 0 {
            t.2 = t.2.max(widest);
        }
    }
}

/// Merges the recorded loads of fusible sites into wide loads, one block at a time.
///
/// Feed it a block's records in execution order with `push`, then call `finish`; every record
/// comes out through `emit`, fused or as it was.
#[derive(Clone, Debug)]
pub struct LoadFuser {
    sites: Vec<FusibleLoad>,
    pending: Vec<Pending>,
    /// Per site: (loads in, instructions out, widest bytes).
    tally: Vec<(u64, u64, u32)>,
}

impl LoadFuser {
    pub fn new(sites: Vec<FusibleLoad>) -> LoadFuser {
        let tally = vec![(0, 0, 0); sites.len()];
        LoadFuser {
            sites,
            pending: Vec::new(),
            tally,
        }
    }

    /// Takes one record; emits whatever is decided.
    pub fn push(&mut self, record: &MemRecord, emit: &mut dyn FnMut(&MemRecord)) {
        let access = &record.access;
        if access.space == Space::Shared && access.kind != AccessKind::Load {
            // A write of the warp may alias the pending reads: they are issued before it.
            self.flush_warp(record.warp, emit);
            emit(record);
            return;
        }
        let site = self.sites.iter().position(|site| {
            site.span == record.span
                && access.space == Space::Shared
                && access.width.bytes() == site.elem_bytes
        });
        let Some(site) = site else {
            emit(record);
            return;
        };
        self.tally[site].0 += 1;
        let elem = u64::from(self.sites[site].elem_bytes);
        if let Some(index) = self
            .pending
            .iter()
            .position(|p| p.warp == record.warp && p.site == site)
        {
            if continues(&self.pending[index].last, &access.lanes, elem) {
                let pending = &mut self.pending[index];
                pending.last = access.lanes;
                pending.count += 1;
                if pending.count == pending.target {
                    let done = self.pending.swap_remove(index);
                    self.emit_run(done, emit);
                }
                return;
            }
            let done = self.pending.swap_remove(index);
            self.emit_run(done, emit);
        }
        let target =
            widest_aligned(&access.lanes, u64::from(self.sites[site].max_width), elem) / elem;
        if target >= 2 {
            self.pending.push(Pending {
                warp: record.warp,
                site,
                first: *record,
                last: access.lanes,
                count: 1,
                target: target as u32,
            });
        } else {
            self.tally[site].1 += 1;
            self.tally[site].2 = self.tally[site].2.max(self.sites[site].elem_bytes);
            emit(record);
        }
    }

    /// Emits every pending run (call at the end of a block).
    pub fn finish(&mut self, emit: &mut dyn FnMut(&MemRecord)) {
        for pending in std::mem::take(&mut self.pending) {
            self.emit_run(pending, emit);
        }
    }

    /// What fusion did at each site so far: (site, loads in, instructions out, widest bytes).
    pub(crate) fn tally(&self) -> impl Iterator<Item = (&FusibleLoad, u64, u64, u32)> + '_ {
        self.sites
            .iter()
            .zip(&self.tally)
            .map(|(site, &(loads, instructions, widest))| (site, loads, instructions, widest))
    }

    /// The tally so far, per site (loads in, instructions out, widest bytes), into `out`.
    pub(crate) fn tally_into(&self, out: &mut Vec<(u64, u64, u32)>) {
        out.clear();
        out.extend_from_slice(&self.tally);
    }

    /// Adds another warp's part of the tally (`add_tally_difference`): its loads and
    /// instructions, and its widest load.
    pub(crate) fn add_tally(&mut self, part: &[(u64, u64, u32)]) {
        for (t, p) in self.tally.iter_mut().zip(part) {
            t.0 += p.0;
            t.1 += p.1;
            t.2 = t.2.max(p.2);
        }
    }

    /// Adds a part of the tally given per site that changed (`tally_changes`), `times` over.
    pub(crate) fn add_tally_at_times(&mut self, changes: &[(usize, u64, u64, u32)], times: u64) {
        add_tally_changes_times(&mut self.tally, changes, times);
    }

    /// Whether reads of `warp` wait to be fused.
    pub(crate) fn has_pending(&self, warp: u32) -> bool {
        self.pending.iter().any(|p| p.warp == warp)
    }

    /// The widest load a read at `span` may be fused into, if it is a fusible site.
    pub(crate) fn max_width_at(&self, span: Span) -> Option<u32> {
        self.sites
            .iter()
            .filter(|site| site.span == span)
            .map(|site| site.max_width)
            .max()
    }

    /// Clears the tally, keeping the sites.
    pub(crate) fn reset_tally(&mut self) {
        self.tally.iter_mut().for_each(|t| *t = (0, 0, 0));
    }

    /// Emits the pending runs of `warp` (before its shared store, and its part of `finish`).
    pub(crate) fn flush_warp(&mut self, warp: u32, emit: &mut dyn FnMut(&MemRecord)) {
        let mut index = 0;
        while index < self.pending.len() {
            if self.pending[index].warp == warp {
                let done = self.pending.swap_remove(index);
                self.emit_run(done, emit);
            } else {
                index += 1;
            }
        }
    }

    /// Emits a run of `count` consecutive elements as the widest aligned loads that cover it.
    fn emit_run(&mut self, run: Pending, emit: &mut dyn FnMut(&MemRecord)) {
        let elem = u64::from(self.sites[run.site].elem_bytes);
        let mut done = 0u64;
        let count = u64::from(run.count);
        while done < count {
            let lanes = shifted(&run.first.access.lanes, done * elem);
            let mut width = widest_aligned(&lanes, u64::from(run.target) * elem, elem);
            while width / elem > count - done {
                width /= 2;
            }
            let mut record = run.first;
            record.access.lanes = lanes;
            record.access.width = AccessWidth::new(width as u32).unwrap_or(record.access.width);
            let width = u64::from(record.access.width.bytes());
            let tally = &mut self.tally[run.site];
            tally.1 += 1;
            tally.2 = tally.2.max(width as u32);
            emit(&record);
            done += (width / elem).max(1);
        }
    }
}

/// Whether every active lane of `next` reads one element after `last`, with the same lanes active.
fn continues(
    last: &[Option<u64>; crate::access::WARP_LANES],
    next: &[Option<u64>; crate::access::WARP_LANES],
    elem: u64,
) -> bool {
    last.iter().zip(next).all(|(a, b)| match (a, b) {
        (Some(a), Some(b)) => a.checked_add(elem) == Some(*b),
        (None, None) => true,
        _ => false,
    })
}

/// The widest power-of-two width from `max` down to `elem` at which every active lane is aligned.
fn widest_aligned(lanes: &[Option<u64>; crate::access::WARP_LANES], max: u64, elem: u64) -> u64 {
    let mut width = max.max(elem);
    while width > elem
        && lanes
            .iter()
            .flatten()
            .any(|&address| !is_multiple(address, width))
    {
        width /= 2;
    }
    width.max(elem)
}

/// `address % width == 0`, with a mask for the power-of-two widths loads have: this runs for
/// every lane of every fusible load, and a 64-bit division per lane was a fair part of the
/// simulation's time.
fn is_multiple(address: u64, width: u64) -> bool {
    if width.is_power_of_two() {
        address & (width - 1) == 0
    } else {
        address.checked_rem(width).is_none_or(|rest| rest == 0)
    }
}

fn shifted(
    lanes: &[Option<u64>; crate::access::WARP_LANES],
    bytes: u64,
) -> [Option<u64>; crate::access::WARP_LANES] {
    let mut out = *lanes;
    for address in out.iter_mut().flatten() {
        *address = address.saturating_add(bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::WarpAccess;
    use crate::kernel::parse;

    use crate::lesson_kernels::{BANKS, MATMUL};

    /// The candidate reads of `source` as (source text, widest bytes).
    fn check(source: &str, defines: &[(&str, &str)], expected: &[(&str, u32)]) {
        let defines: Vec<(String, String)> = defines
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let unit = parse(source, &defines).expect("the source parses");
        let program = crate::kernel::sema::check(&unit).expect("the source checks");
        let found: Vec<(String, u32)> = fusible_loads(&unit, &program)
            .into_iter()
            .map(|load| {
                let text = source
                    .get(load.span.start as usize..load.span.end as usize)
                    .unwrap_or("?")
                    .to_string();
                (text, load.max_width)
            })
            .collect();
        let expected: Vec<(String, u32)> = expected
            .iter()
            .map(|(text, width)| (text.to_string(), *width))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn tiled_matmul_row_reads_may_become_128_bit_loads() {
        check(
            MATMUL,
            &[("TILE_WIDTH", "16"), ("PAD", "0")],
            &[("sa[ty][k]", 16)],
        );
        check(
            MATMUL,
            &[("TILE_WIDTH", "8"), ("PAD", "0")],
            &[("sa[ty][k]", 16)],
        );
    }

    #[test]
    fn padded_rows_are_not_aligned_so_nothing_fuses() {
        check(MATMUL, &[("TILE_WIDTH", "16"), ("PAD", "1")], &[]);
        check(MATMUL, &[("TILE_WIDTH", "32"), ("PAD", "1")], &[]);
    }

    #[test]
    fn a_pad_of_two_allows_64_bit_loads() {
        check(
            MATMUL,
            &[("TILE_WIDTH", "16"), ("PAD", "2")],
            &[("sa[ty][k]", 8)],
        );
    }

    #[test]
    fn a_runtime_trip_count_is_not_unrolled() {
        // smem_stride reads `s[idx]` in `for (it = 0; it < iters; ...)`; row_per_thread's
        // `s[t][j]` is in a 32-trip loop.
        check(BANKS, &[], &[("s[t][j]", 16)]);
    }

    #[test]
    fn a_trip_count_from_a_const_variable_unrolls_and_fuses_as_a_literal_does() {
        // The unrolling is the front end's decision, which folds `const int`: the loop over
        // `k < T` is unrolled fully, so its row reads fuse as `k < 16`'s do.
        let source = "__global__ void f(float* o) {\n\
                      const int T = 16;\n\
                      __shared__ float s[16][16];\n\
                      float r = 0.0f;\n\
                      for (int k = 0; k < T; ++k) r += s[threadIdx.y][k];\n\
                      o[threadIdx.x] = r; }";
        check(source, &[], &[("s[threadIdx.y][k]", 16)]);
    }

    #[test]
    fn a_barrier_or_a_store_in_the_loop_stops_fusion() {
        let barrier = "__global__ void f(float* o) { __shared__ float s[64]; float r = 0;
            for (int k = 0; k < 8; ++k) { r += s[k]; __syncthreads(); } o[0] = r; }";
        check(barrier, &[], &[]);
        let store = "__global__ void f(float* o) { __shared__ float s[64]; float r = 0;
            for (int k = 0; k < 8; ++k) { r += s[k]; s[k + 8] = r; } o[0] = r; }";
        check(store, &[], &[]);
        let conditional = "__global__ void f(float* o) { __shared__ float s[64]; float r = 0;
            for (int k = 0; k < 8; ++k) { if (r < 4) r += s[k]; } o[0] = r; }";
        check(conditional, &[], &[]);
        let plain = "__global__ void f(float* o) { __shared__ float s[64]; float r = 0;
            for (int k = 0; k < 8; ++k) { r += s[k]; } o[0] = r; }";
        check(plain, &[], &[("s[k]", 16)]);
    }

    fn load(warp: u32, span: Span, address: impl Fn(u32) -> Option<u64>) -> MemRecord {
        MemRecord {
            order: Default::default(),
            fences_passed: 0,
            access: WarpAccess::from_fn(
                Space::Shared,
                AccessKind::Load,
                AccessWidth::FOUR,
                address,
            ),
            span,
            block: [0, 0, 0],
            warp,
        }
    }

    fn fuse(site_width: u32, records: &[MemRecord]) -> Vec<(u32, u64)> {
        let site = FusibleLoad {
            span: records[0].span,
            array: "s".to_string(),
            elem_bytes: 4,
            max_width: site_width,
        };
        let mut fuser = LoadFuser::new(vec![site]);
        let mut out = Vec::new();
        for record in records {
            fuser.push(record, &mut |r| {
                out.push((r.access.width.bytes(), r.access.lanes[0].unwrap_or(0)))
            });
        }
        fuser.finish(&mut |r| out.push((r.access.width.bytes(), r.access.lanes[0].unwrap_or(0))));
        out.sort_unstable_by_key(|&(_, address)| address);
        out
    }

    #[test]
    fn sixteen_row_reads_become_four_128_bit_loads() {
        let span = Span {
            line: 1,
            col: 1,
            start: 0,
            end: 9,
        };
        let records: Vec<MemRecord> = (0..16)
            .map(|k| load(0, span, move |lane| Some(u64::from(lane / 16) * 64 + 4 * k)))
            .collect();
        assert_eq!(
            fuse(16, &records),
            vec![(16, 0), (16, 16), (16, 32), (16, 48)]
        );
    }

    #[test]
    fn a_misaligned_lane_keeps_the_loads_apart() {
        let span = Span {
            line: 1,
            col: 1,
            start: 0,
            end: 9,
        };
        // Rows of 17 floats: the second row starts at byte 68, not a multiple of 16 or 8.
        let records: Vec<MemRecord> = (0..4)
            .map(|k| load(0, span, move |lane| Some(u64::from(lane / 16) * 68 + 4 * k)))
            .collect();
        assert_eq!(fuse(16, &records), vec![(4, 0), (4, 4), (4, 8), (4, 12)]);
    }

    #[test]
    fn a_run_of_six_becomes_one_128_bit_and_one_64_bit_load() {
        let span = Span {
            line: 1,
            col: 1,
            start: 0,
            end: 9,
        };
        let records: Vec<MemRecord> = (0..6)
            .map(|k| load(0, span, move |_| Some(4 * k)))
            .collect();
        assert_eq!(fuse(16, &records), vec![(16, 0), (8, 16)]);
    }

    /// The global load requests of a one-warp launch of `source`'s kernel `k` (buffers `a` and
    /// `b` of 1 KB, `n` = 32), as compiled and as written.
    fn global_loads(source: &str) -> (f64, f64) {
        let requests = |compile: CompileEffects| {
            let mut input =
                crate::simulate::SimulationInput::new(source, "k", crate::device::h100());
            input.grid = crate::kernel::Dim3::new(1, 1, 1);
            input.block = crate::kernel::Dim3::new(32, 1, 1);
            input.buffers = vec![("a".to_string(), 1024), ("b".to_string(), 1024)];
            input.compile = compile;
            crate::simulate::simulate(&input)
                .expect("the test kernel simulates")
                .counters
                .global_ld_requests
        };
        (
            requests(CompileEffects::AS_COMPILED),
            requests(CompileEffects::AS_WRITTEN),
        )
    }

    #[test]
    fn a_value_read_three_times_is_loaded_once_unless_a_store_comes_between() {
        // The students' `sqrtf(in[i]) * expf(in[i]) + sinf(in[i])`: one request a warp on the H100.
        let thrice = "__global__ void k(const float* a, float* b) {\n\
                      int i = threadIdx.x; b[i] = sqrtf(a[i]) * expf(a[i]) + sinf(a[i]); }";
        assert_eq!(global_loads(thrice), (1.0, 3.0));
        // A store may change what the next load reads: both are issued.
        let stored = "__global__ void k(float* a, float* b) {\n\
                      int i = threadIdx.x; float x = a[i]; a[i + 1] = 0.0f; b[i] = x + a[i]; }";
        assert_eq!(global_loads(stored), (2.0, 2.0));
        // Different expressions that come to the same addresses are different loads to nvcc.
        let coincide = "__global__ void k(const float* a, float* b) {\n\
                        int i = threadIdx.x; b[i] = a[i] + a[(i * 33) & 31]; }";
        assert_eq!(global_loads(coincide), (2.0, 2.0));
    }

    #[test]
    fn tally_changes_keep_the_sites_that_changed_in_order_however_many() {
        let check = |after: &[(u64, u64, u32)], expected: &[TallyChange]| {
            let before = [(4, 1, 16), (8, 2, 16), (0, 0, 0), (3, 3, 4)];
            assert_eq!(&*TallyChanges::between(&before, after), expected);
        };
        check(&[(4, 1, 16), (8, 2, 16), (0, 0, 0), (3, 3, 4)], &[]);
        // One fused load of 16 bytes at site 1: a load in, an instruction out, no wider load.
        check(
            &[(4, 1, 16), (9, 3, 16), (0, 0, 0), (3, 3, 4)],
            &[(1, 1, 1, 0)],
        );
        // Three sites changed: more than are kept in place, and a wider load at site 3.
        check(
            &[(5, 2, 16), (9, 3, 16), (0, 0, 0), (7, 4, 8)],
            &[(0, 1, 1, 0), (1, 1, 1, 0), (3, 4, 1, 8)],
        );
    }
}
