//! `__device__` functions that wait at `__syncthreads()`, lowered into their callers.
//!
//! The interpreter runs a warp until it reaches a barrier and resumes it there later, which it
//! can do between two statements of the kernel but not in the middle of an expression that is
//! evaluating a call. nvcc inlines such small `__device__` functions (and every function it can,
//! by default), so a call of one that waits at a barrier, directly or through the functions it
//! calls, is lowered as the kernel would read with the function's body written in place: its
//! parameters are fresh variables set from the arguments (or the argument's own register, where
//! the argument is a variable and the function never changes the parameter), its body is lowered
//! in a scope of its own, and a `return` at its end sets the call's value. The barrier is the
//! kernel's, so its divergence rule (every thread of the block reaches it) is checked exactly as
//! for one written in the kernel.
//!
//! Such a call must be a whole statement (`f(...);`), the right side of `=` in one (`x =
//! f(...);`) or a variable's initialiser (`T x = f(...);`): there it runs exactly once, before
//! the rest of the statement. The statement marks that one call by its span; a call anywhere
//! else (an argument, an operand, a branch of `?:`) may run conditionally or in another order,
//! and is refused by name. A `return` before the end of such a function is refused by name.

use super::consts::stmt_modifies;
use super::{err, width_of, Sema, Symbol};
use crate::ast::{
    Expr, ExprKind, Function, Initializer, Item, Stmt, StmtKind, TranslationUnit, Type,
};
use crate::ir::{Ex, ExKind, Op, Place};
use crate::limits::MAX_INLINED_CALL_DEPTH;
use crate::name_map::NameMap;
use crate::span::{Diagnostic, DiagnosticKind, Span};

/// Calls `found` with the name of every function the statement calls, nested ones included.
fn statement_calls(s: &Stmt, found: &mut dyn FnMut(&str)) {
    let mut expr = |e: &Expr| expression_calls(e, found);
    match &s.kind {
        StmtKind::Declaration(d) => {
            for x in &d.declarators {
                if let Some(Initializer::Expr(e)) = &x.init {
                    expr(e);
                }
            }
        }
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr(e),
        StmtKind::Block(inner) => inner.iter().for_each(|s| statement_calls(s, found)),
        StmtKind::If(c, a, b) => {
            expr(c);
            statement_calls(a, found);
            if let Some(b) = b {
                statement_calls(b, found);
            }
        }
        StmtKind::While(c, body) | StmtKind::DoWhile(body, c) | StmtKind::Switch(c, body) => {
            expr(c);
            statement_calls(body, found);
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
            ..
        } => {
            cond.iter().chain(step.iter()).for_each(expr);
            if let Some(init) = init {
                statement_calls(init, found);
            }
            statement_calls(body, found);
        }
        StmtKind::Case(_, s) => statement_calls(s, found),
        _ => {}
    }
}

fn expression_calls(e: &Expr, found: &mut dyn FnMut(&str)) {
    e.walk(&mut |inner| {
        if let ExprKind::Call { name, .. } = &inner.kind {
            found(name);
        }
    });
}

/// A `return` anywhere in the statements but as the last one, or a return nested in it.
fn returns_early(body: &[Stmt]) -> Option<Span> {
    fn any_return(s: &Stmt) -> Option<Span> {
        match &s.kind {
            StmtKind::Return(_) => Some(s.span),
            StmtKind::Block(inner) => inner.iter().find_map(any_return),
            StmtKind::If(_, a, b) => any_return(a).or_else(|| b.as_deref().and_then(any_return)),
            StmtKind::While(_, body)
            | StmtKind::DoWhile(body, _)
            | StmtKind::Switch(_, body)
            | StmtKind::Case(_, body)
            | StmtKind::For { body, .. } => any_return(body),
            _ => None,
        }
    }
    let (last, before) = body.split_last()?;
    before.iter().find_map(any_return).or(match &last.kind {
        StmtKind::Return(_) => None,
        _ => any_return(last),
    })
}

/// The parsed function named `name`.
fn function_ast<'u>(unit: &'u TranslationUnit, name: &str) -> Option<&'u Function> {
    unit.items.iter().find_map(|item| match item {
        Item::Function(f) if f.name == name => Some(f),
        _ => None,
    })
}

impl Sema<'_> {
    /// Whether the `__device__` function `name` waits at `__syncthreads()`, itself or through a
    /// function it calls. The call graph is walked with a list, each function once.
    pub(super) fn waits_at_barrier(&self, name: &str) -> bool {
        let mut pending = vec![name.to_string()];
        let mut seen: Vec<String> = Vec::new();
        while let Some(name) = pending.pop() {
            if seen.contains(&name) {
                continue;
            }
            let Some(f) = function_ast(self.unit, &name) else {
                continue;
            };
            let mut barrier = false;
            for s in &f.body {
                statement_calls(s, &mut |called| {
                    if called == "__syncthreads" {
                        barrier = true;
                    } else if self.function_index.contains_key(called) {
                        pending.push(called.to_string());
                    }
                });
            }
            if barrier {
                return true;
            }
            seen.push(name);
        }
        false
    }

    /// Lowers the call of `name` (its arguments lowered and converted already) in place, and
    /// gives its value: the register the body's final `return` set.
    pub(super) fn inline_call(
        &mut self,
        name: &str,
        args: Vec<Ex>,
        name_span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let Some(f) = function_ast(self.unit, name) else {
            return err(name_span, format!("'{name}' is declared but never defined"));
        };
        if self.inline_depth >= MAX_INLINED_CALL_DEPTH {
            return err(
                f.span,
                format!("'{name}' calls itself (recursion is not supported by the simulator)"),
            );
        }
        if let Some(span) = returns_early(&f.body) {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                span,
                format!("a 'return' before the end of '{name}', a __device__ function that calls __syncthreads(), is not simulated"),
            ));
        }
        let mut scope = NameMap::new();
        for (param, arg) in f.params.iter().zip(args) {
            let modified = f.body.iter().any(|s| stmt_modifies(s, &param.name));
            let reg = match arg.kind {
                ExKind::Reg(reg) if !modified => reg,
                _ => {
                    let width = width_of(&param.ty);
                    let reg = self.alloc(width);
                    if let Some(elem) = super::elem_of(&param.ty) {
                        let span = arg.span;
                        let copy = Ex::assign_reg(reg, elem, arg, width, span);
                        self.emit(Op::Eval(copy), span);
                    }
                    reg
                }
            };
            scope.insert(
                param.name.clone(),
                Symbol::Var {
                    reg,
                    ty: param.ty.clone(),
                    is_const: param.is_const,
                    const_value: None,
                },
            );
        }
        // The body sees its parameters and the file's names, not the caller's variables, and
        // its `break`s and `continue`s are its own.
        let caller_scopes = std::mem::replace(&mut self.scopes, vec![scope]);
        let caller_loops = std::mem::replace(&mut self.loop_depth, 0);
        let caller_switches = std::mem::take(&mut self.switches);
        self.inline_depth += 1;
        let result = self.inline_body(f);
        self.inline_depth -= 1;
        self.scopes = caller_scopes;
        self.loop_depth = caller_loops;
        self.switches = caller_switches;
        result
    }

    fn inline_body(&mut self, f: &Function) -> Result<(Ex, Type), Diagnostic> {
        let width = width_of(&f.ret);
        let result = self.alloc(width);
        for (k, s) in f.body.iter().enumerate() {
            match (&s.kind, super::elem_of(&f.ret)) {
                (StmtKind::Return(Some(value)), Some(elem)) if k + 1 == f.body.len() => {
                    let (ex, ty) = self.rvalue(value)?;
                    let ex = self.convert(ex, &ty, &f.ret, value.span)?;
                    let set = Ex::new(
                        ExKind::Assign {
                            place: Place::Reg { reg: result, elem },
                            value: Box::new(ex),
                        },
                        elem.n,
                        value.span,
                    );
                    self.emit(Op::Eval(set), s.span);
                }
                (StmtKind::Return(None), None) if k + 1 == f.body.len() => {}
                _ => self.statement(s)?,
            }
        }
        Ok((
            Ex::new(ExKind::Reg(result), width, f.end_span),
            f.ret.clone(),
        ))
    }

    /// Whether the call spanning `span` may lower a `__device__` function that waits at a
    /// barrier in place: it is the call the statement allows (`allow_inline_site`), not one in
    /// its arguments or elsewhere in the statement. The permission is used up.
    pub(super) fn take_inline_site(&mut self, span: Span) -> bool {
        let allowed = self.inline_site == Some(span);
        if allowed {
            self.inline_site = None;
        }
        allowed
    }

    /// Allows the call that `e` is, or that `e` assigns (`x = f(...)`), to be lowered in place;
    /// the statement clears the permission once it is lowered.
    pub(super) fn allow_inline_site(&mut self, e: &Expr) {
        let call = match &e.kind {
            ExprKind::Assign(None, _, value) => value,
            _ => e,
        };
        self.inline_site = matches!(call.kind, ExprKind::Call { .. }).then_some(call.span);
    }
}

/// The message for a call of a function that waits at a barrier where it cannot be lowered.
pub(super) fn not_at_statement(name: &str) -> String {
    format!("'{name}' calls __syncthreads(), so it is simulated only when called as a statement ('{name}(...);', 'x = {name}(...);' or 'T x = {name}(...);')")
}

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::Op;

    fn kernel_error(source: &str) -> String {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        match program.kernel("k") {
            Ok(_) => "compiles".to_string(),
            Err(d) => d.to_string(),
        }
    }

    #[test]
    fn a_device_function_with_a_barrier_is_lowered_into_the_kernel() {
        let program = compile(
            "__device__ void stage(float* tile, const float* g, int i) {\n\
               tile[i] = g[i];\n\
               __syncthreads();\n\
             }\n\
             __device__ float doubled(float x) { __syncwarp(); return 2.0f * x; }\n\
             __global__ void k(const float* g, float* out) {\n\
               __shared__ float tile[64];\n\
               int i = threadIdx.x;\n\
               stage(tile, g, i);\n\
               float v = doubled(tile[63 - i]);\n\
               out[i] = v;\n\
             }",
            &[],
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let kernel = program.kernel("k").unwrap_or_else(|d| panic!("{d}"));
        // `stage` is in the kernel's code, its barrier on line 3; `doubled` (no
        // `__syncthreads()`) stays a call.
        let barriers: Vec<u32> = (0..kernel.code.len())
            .filter(|&pc| matches!(kernel.code[pc], Op::SyncThreads))
            .map(|pc| kernel.spans[pc].line)
            .collect();
        assert_eq!(barriers, [3]);
        let doubled = program.functions.iter().position(|f| f.name == "doubled");
        assert_eq!(
            kernel.callees.iter().copied().map(Some).collect::<Vec<_>>(),
            [doubled]
        );
    }

    #[test]
    fn a_shared_array_of_a_helper_lowered_twice_is_one_array_of_the_block() {
        let program = compile(
            "__device__ void bump(int* out) {\n\
               __shared__ int scratch[32];\n\
               scratch[threadIdx.x] = 1;\n\
               __syncthreads();\n\
               out[threadIdx.x] += scratch[31 - threadIdx.x];\n\
             }\n\
             __global__ void k(int* out) { bump(out); bump(out); }",
            &[],
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let kernel = program.kernel_index("k");
        let in_kernel = program
            .objects
            .iter()
            .filter(|o| o.name == "scratch" && o.function == kernel)
            .count();
        assert_eq!(in_kernel, 1);
    }

    #[test]
    fn calls_of_a_barrier_function_that_cannot_be_lowered_in_place_are_named() {
        let cases = [
            (
                "__device__ int f(int x) { __syncthreads(); return x; }\n\
                 __global__ void k(int* a) { a[0] = 1 + f(2); }",
                "2:40: 'f' calls __syncthreads(), so it is simulated only when called as a statement ('f(...);', 'x = f(...);' or 'T x = f(...);')",
            ),
            (
                "__device__ void f(int x) { if (x) return; __syncthreads(); }\n\
                 __global__ void k(int* a) { f(a[0]); }",
                "1:35: a 'return' before the end of 'f', a __device__ function that calls __syncthreads(), is not simulated",
            ),
            (
                "__device__ void f(int x) { __syncthreads(); f(x); }\n\
                 __global__ void k(int* a) { f(a[0]); }",
                "1:17: 'f' calls itself (recursion is not supported by the simulator)",
            ),
            (
                "__device__ float f(float x) { __syncthreads(); return x; }\n\
                 __global__ void k(float* a) { a[1] = fminf(f(a[0]), 1.0f); }",
                "2:44: 'f' calls __syncthreads(), so it is simulated only when called as a statement ('f(...);', 'x = f(...);' or 'T x = f(...);')",
            ),
            (
                // A call on the left of `=` does not take the right side's permission.
                "__device__ int f(int x) { __syncthreads(); return x; }\n\
                 __global__ void k(int* a) { a[atomicAdd(&a[0], 1) & 7] = f(a[1]); }",
                "compiles",
            ),
            (
                "__device__ int f(int x) { __syncthreads(); return x + 1; }\n\
                 __global__ void k(int* a) { int y = f(a[0]); a[1] = f(y); a[2] = y; }",
                "compiles",
            ),
        ];
        for (source, expected) in cases {
            assert_eq!(kernel_error(source), expected, "{source}");
        }
    }
}
