//! `__device__` functions lowered into their callers: those that wait at `__syncthreads()`, and
//! those that take a reference.
//!
//! The interpreter runs a warp until it reaches a barrier and resumes it there later, which it
//! can do between two statements of the kernel but not in the middle of an expression that is
//! evaluating a call. nvcc inlines such small `__device__` functions (and every function it can,
//! by default), so a call of one that waits at a barrier, directly or through the functions it
//! calls, is lowered as the kernel would read with the function's body written in place: its
//! parameters are fresh variables set from the arguments (or the argument's own register, where
//! the argument is a variable that nothing in the call changes), its body is lowered in a scope
//! of its own, and a `return` sets the call's value. The barrier is the kernel's, so its
//! divergence rule (every thread of the block reaches it) is checked exactly as for one written
//! in the kernel. A function with a reference parameter is lowered the same way, so that the
//! parameter can be given its argument's place (`reference`).
//!
//! The body's code is emitted where the call is lowered, before the code of the statement around
//! it: the call runs before the rest of its full expression, which is one of the orders C++
//! allows, since a function's body is indeterminately sequenced with the evaluations around its
//! call ([intro.execution]). Where C++ sequences an operand before the call, or evaluates the call
//! only for some threads (`&&`, `||`, `?:`), `in_place` keeps that order.
//!
//! A `return` before the end of the body leaves it: the body is then a one-trip loop (as a
//! `switch` is, `switch`), the `return` sets the value and breaks out of it, and a `return`
//! inside a loop or `switch` of the body also sets a flag that breaks out of each loop around it
//! up to the body's. A thread that returned waits at the end of the body for the others and then
//! goes on with its caller: it reaches the caller's later barriers, and a barrier later in the
//! body that it skips is reached by only some threads, as on the GPU.

use super::consts::{each_expression, function_ast};
use super::{elem_of, err, width_of, Sema, Symbol};
use crate::ast::{Expr, ExprKind, Function, Scalar, Stmt, StmtKind, Type};
use crate::ir::{Elem, Ex, ExKind, Op, Place, Reg, Unroll};
use crate::limits::{MAX_INLINED_CALL_DEPTH, MAX_LOWERED_OPS};
use crate::name_map::NameMap;
use crate::span::{Diagnostic, Span};

/// Whether a `return` stands anywhere in the statements but as the last one.
fn returns_early(body: &[Stmt]) -> bool {
    fn any_return(s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Return(_) => true,
            StmtKind::Block(inner) => inner.iter().any(any_return),
            StmtKind::If(_, a, b) => any_return(a) || b.as_deref().is_some_and(any_return),
            StmtKind::While(_, body)
            | StmtKind::DoWhile(body, _)
            | StmtKind::Switch(_, body)
            | StmtKind::Case(_, body)
            | StmtKind::For { body, .. } => any_return(body),
            _ => false,
        }
    }
    let Some((last, before)) = body.split_last() else {
        return false;
    };
    before.iter().any(any_return) || !matches!(last.kind, StmtKind::Return(_)) && any_return(last)
}

/// An argument of a call lowered in place: the place a reference parameter names, or the value
/// of a value parameter.
enum Argument {
    Bound(Symbol),
    Value(Ex),
}

/// Where a `return` in the body being lowered in place leaves the call's value.
#[derive(Clone, Debug)]
pub(super) struct InlinedReturn {
    name: String,
    ty: Type,
    result: Reg,
    /// The flag a `return` inside a loop or `switch` of the body sets, once one does.
    flag: Option<Reg>,
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
                each_expression(s, &mut |e, _| {
                    e.walk(&mut |inner| {
                        let ExprKind::Call { name: called, .. } = &inner.kind else {
                            return;
                        };
                        // The barriers that vote (`__syncthreads_count`) wait as well.
                        if called == "__syncthreads" || called.starts_with("__syncthreads_") {
                            barrier = true;
                        } else if self.function_index.contains_key(called) {
                            pending.push(called.to_string());
                        }
                    })
                });
            }
            if barrier {
                return true;
            }
            seen.push(name);
        }
        false
    }

    /// Whether a call of `name` is lowered into its caller: the function takes a reference or
    /// waits at a barrier.
    pub(super) fn lowered_in_place(&self, name: &str) -> bool {
        function_ast(self.unit, name).is_some_and(|f| f.params.iter().any(|p| p.reference))
            || self.waits_at_barrier(name)
    }

    /// Lowers the call of `name` with `args` in place, and gives its value: the register the
    /// body's `return`s set.
    pub(super) fn inline_call(
        &mut self,
        name: &str,
        args: &[Expr],
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
        if self.code.len() > MAX_LOWERED_OPS {
            return err(
                name_span,
                format!(
                    "the functions written into this one make it longer than the simulator's \
                     limit of {MAX_LOWERED_OPS} operations"
                ),
            );
        }
        // The arguments, left to right: a reference parameter is bound to its argument's place,
        // a value converted to its parameter's type.
        let mut bound = Vec::new();
        for (param, arg) in f.params.iter().zip(args) {
            bound.push(if param.reference {
                Argument::Bound(self.bind_reference(arg, Some(&param.ty), param.is_const)?)
            } else {
                let (ex, ty) = self.rvalue(arg)?;
                Argument::Value(self.convert(ex, &ty, &param.ty, arg.span)?)
            });
        }
        // A register that a reference of the call may change is copied for a value parameter.
        let changes_registers = bound.iter().any(|b| {
            matches!(
                b,
                Argument::Bound(Symbol::Var {
                    is_const: false,
                    ..
                })
            )
        });
        let mut scope = NameMap::new();
        for (param, arg) in f.params.iter().zip(bound) {
            let symbol = match arg {
                Argument::Bound(symbol) => symbol,
                Argument::Value(arg) => {
                    let modified = changes_registers
                        || f.body.iter().any(|s| {
                            super::consts::stmt_modifies(s, &param.name)
                                || self.may_change(s, &param.name)
                        });
                    let reg = match arg.kind {
                        ExKind::Reg(reg) if !modified => reg,
                        _ => {
                            let width = width_of(&param.ty);
                            let reg = self.alloc(width);
                            if let Some(elem) = elem_of(&param.ty) {
                                let span = arg.span;
                                let copy = Ex::assign_reg(reg, elem, arg, width, span);
                                self.emit(Op::Eval(copy), span);
                            }
                            reg
                        }
                    };
                    Symbol::Var {
                        reg,
                        ty: param.ty.clone(),
                        is_const: param.is_const,
                        const_value: None,
                    }
                }
            };
            scope.insert(param.name.clone(), symbol);
        }
        // The body sees its parameters and the file's names, not the caller's variables, and
        // its `break`s, `continue`s and `return`s are its own.
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
        let early = returns_early(&f.body);
        let begin = early.then(|| {
            let open = Op::LoopBegin {
                end_at: 0,
                unroll: Unroll::Times(1),
                counter: None,
                switch: true,
            };
            self.emit(open, f.span)
        });
        let open = InlinedReturn {
            name: f.name.clone(),
            ty: f.ret.clone(),
            result,
            flag: None,
        };
        let caller_return = self.inline_return.replace(open);
        let mut lowered = Ok(());
        for (k, s) in f.body.iter().enumerate() {
            lowered = match &s.kind {
                // The final `return` needs no jump: the body ends there.
                StmtKind::Return(value) if k + 1 == f.body.len() => {
                    self.set_inlined_value(value.as_ref(), s.span)
                }
                _ => self.statement(s),
            };
            if lowered.is_err() {
                break;
            }
        }
        let open = std::mem::replace(&mut self.inline_return, caller_return);
        lowered?;
        if let Some(begin) = begin {
            self.finish_loop(begin, f.end_span, Some(Unroll::Times(1)), None);
        }
        // Every thread that set the flag is back: clear it for the body's next run.
        if let Some(flag) = open.and_then(|open| open.flag) {
            self.emit(Op::Eval(flag_set(flag, 0, f.end_span)), f.end_span);
        }
        Ok((
            Ex::new(ExKind::Reg(result), width, f.end_span),
            f.ret.clone(),
        ))
    }

    /// `return value;` in a body being lowered in place, as the value it sets.
    fn set_inlined_value(&mut self, value: Option<&Expr>, span: Span) -> Result<(), Diagnostic> {
        let Some(open) = self.inline_return.clone() else {
            return Ok(());
        };
        match (value, elem_of(&open.ty)) {
            (Some(value), Some(elem)) => {
                let (ex, ty) = self.rvalue(value)?;
                let ex = self.convert(ex, &ty, &open.ty, value.span)?;
                let set = Ex::new(
                    ExKind::Assign {
                        place: Place::Reg {
                            reg: open.result,
                            elem,
                        },
                        value: Box::new(ex),
                    },
                    elem.n,
                    value.span,
                );
                self.emit(Op::Eval(set), span);
                Ok(())
            }
            (None, None) => Ok(()),
            (Some(value), None) => err(
                value.span,
                format!("'{}' returns void, so 'return' takes no value", open.name),
            ),
            (None, Some(_)) => err(span, format!("'{}' must return a value", open.name)),
        }
    }

    /// A `return` before the end of a body lowered in place (`statement` calls this for every
    /// `return` while one is being lowered): the value is set and the body left, through the
    /// flag from inside a loop or `switch`. `false` outside such a body.
    pub(super) fn inlined_return(
        &mut self,
        value: Option<&Expr>,
        span: Span,
    ) -> Result<bool, Diagnostic> {
        if self.inline_return.is_none() {
            return Ok(false);
        }
        self.set_inlined_value(value, span)?;
        if self.loop_depth > 0 || !self.switches.is_empty() {
            let flag = match self.inline_return.as_ref().and_then(|open| open.flag) {
                Some(flag) => flag,
                None => {
                    let flag = self.alloc(1);
                    if let Some(open) = self.inline_return.as_mut() {
                        open.flag = Some(flag);
                    }
                    flag
                }
            };
            self.emit(Op::Eval(flag_set(flag, 1, span)), span);
        }
        self.emit(Op::Break, span);
        Ok(true)
    }

    /// After a loop or `switch` (from `begin` to its `LoopEnd` at `end`) of a body lowered in
    /// place in which a `return` set the flag: the threads that returned leave the loop around
    /// it too.
    pub(super) fn leave_returned_lanes(&mut self, begin: usize, end: usize, span: Span) {
        let Some(flag) = self.inline_return.as_ref().and_then(|open| open.flag) else {
            return;
        };
        let sets_flag = self.code[begin..end].iter().any(|op| {
            matches!(op, Op::Eval(Ex { kind: ExKind::Assign { place: Place::Reg { reg, .. }, .. }, .. }) if *reg == flag)
        });
        if !sets_flag {
            return;
        }
        let cond = Ex::new(ExKind::Reg(flag), 1, span);
        let if_at = self.emit(
            Op::If {
                cond,
                else_at: 0,
                predicated: None,
            },
            span,
        );
        self.emit(Op::Break, span);
        let end_if = self.emit(Op::EndIf, span);
        if let Op::If { else_at, .. } = &mut self.code[if_at] {
            *else_at = end_if;
        }
    }
}

/// `flag = value` in every active lane.
fn flag_set(flag: Reg, value: u64, span: Span) -> Ex {
    let value = Ex::new(ExKind::Const(value), 1, span);
    Ex::assign_reg(flag, Elem::scalar(Scalar::I32), value, 1, span)
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

    /// The kernel `k`'s ops, one letter each: `S` a barrier, `[`/`]` a loop, `?`/`:`/`;` an
    /// `if`, its `else` and its end, `b` a break, `c` a continue-point or condition, `e` an
    /// evaluation, `r` a return.
    fn shape(source: &str) -> String {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        let kernel = program.kernel("k").unwrap_or_else(|d| panic!("{d}"));
        kernel
            .code
            .iter()
            .map(|op| match op {
                Op::SyncThreads => 'S',
                Op::LoopBegin { .. } => '[',
                Op::LoopEnd => ']',
                Op::If { .. } => '?',
                Op::Else { .. } => ':',
                Op::EndIf => ';',
                Op::Break => 'b',
                Op::ContinuePoint | Op::LoopCond { .. } | Op::Continue => 'c',
                Op::Jump(_) => 'j',
                Op::Return(_) => 'r',
                Op::Eval(_) | Op::SyncWarp => 'e',
            })
            .collect()
    }

    #[test]
    fn a_barrier_helper_called_in_an_expression_runs_before_its_statement() {
        let helper = "__device__ int f(int x) { __syncthreads(); return x + 1; }\n";
        // The parameter's copy, the body (its barrier, then the value set) and then the
        // statement's store.
        let operand = format!("{helper}__global__ void k(int* a) {{ a[0] = 1 + 2 * f(a[1]); }}");
        assert_eq!(shape(&operand), "eSee");
        // A condition: the body runs before the `if`.
        let condition =
            format!("{helper}__global__ void k(int* a) {{ if (f(a[1]) > 0) a[0] = 1; }}");
        assert_eq!(shape(&condition), "eSe?e;");
        // A loop's condition: the body runs at the top of each iteration, where the jump back
        // goes.
        let looped =
            format!("{helper}__global__ void k(int* a) {{ while (f(a[0]) < 3) a[0] += 1; }}");
        assert_eq!(shape(&looped), "[eSececj]");
        let program = compile(&looped, &[]).unwrap();
        let code = &program.kernel("k").unwrap().code;
        assert!(matches!(code[7], Op::Jump(1)), "{:?}", code[7]);
        // An argument of a call, and the operands of a call to a function that is not lowered.
        let nested = format!(
            "{helper}__device__ int g(int p, int q) {{ return p - q; }}\n\
             __global__ void k(int* a) {{ a[0] = g(f(a[1]), f(a[2])); }}"
        );
        assert_eq!(shape(&nested), "eSeeSee");
        // `sizeof` does not evaluate its operand.
        let unevaluated =
            format!("{helper}__global__ void k(int* a) {{ a[0] = sizeof(f(a[1])); }}");
        assert_eq!(shape(&unevaluated), "e");
    }

    #[test]
    fn operators_that_order_or_choose_their_operands_keep_that_order_around_a_barrier_helper() {
        let helper = "__device__ int f(int x) { __syncthreads(); return x + 1; }\n";
        let kernel = |body: &str| shape(&format!("{helper}__global__ void k(int* a) {{ {body} }}"));
        // `&&`: t = a[0]; if (t) { x = a[2]; f's body; t = ... }.
        assert_eq!(kernel("a[1] = a[0] && f(a[2]);"), "e?eSee;e");
        assert_eq!(kernel("a[1] = a[0] || f(a[2]);"), "e?eSee;e");
        // The left operand decides nothing: `f` runs first, in every thread.
        assert_eq!(kernel("a[1] = f(a[2]) && a[0];"), "eSee");
        // `?:`: the condition held, each side in its branch and held there.
        assert_eq!(kernel("a[1] = a[0] > 0 ? f(a[2]) : a[3];"), "e?eSee:e;e");
        // `,`: the left operand first, as a statement of its own.
        assert_eq!(kernel("a[1] = (a[0] = 4, f(a[0]));"), "eeSee");
        // `<<`: the left operand held before the call; `+` leaves it to the statement.
        assert_eq!(kernel("a[1] = a[0] << f(a[2]);"), "eeSee");
        assert_eq!(kernel("a[1] = a[0] + f(a[2]);"), "eSee");
        // `=` with a call on the left: the right side is taken first.
        assert_eq!(kernel("a[f(0)] = a[1];"), "eeSee");
    }

    #[test]
    fn an_early_return_of_a_barrier_helper_leaves_a_one_trip_loop() {
        let early = "__device__ int f(int* a, int n) {\n\
                       __syncthreads();\n\
                       if (threadIdx.x >= n) return 0;\n\
                       a[threadIdx.x] += 1;\n\
                       return a[0];\n\
                     }\n\
                     __global__ void k(int* a) { a[1] = f(a, 8); __syncthreads(); }";
        // `n`'s copy, the loop, the barrier, the `if` whose body sets the value and breaks, the
        // add, the last value; the store and the caller's barrier.
        assert_eq!(shape(early), "e[S?eb;ee]eS");
        // A `return` in a loop of the body sets a flag; after the loop, the threads that set
        // it break out of the body's loop, and after the body the flag is cleared.
        let in_loop = "__device__ void f(int* a) {\n\
                         for (int i = 0; i < 4; i++) { if (a[i] < 0) return; a[i] += 1; }\n\
                         __syncthreads();\n\
                       }\n\
                       __global__ void k(int* a) { f(a); }";
        assert_eq!(shape(in_loop), "[e[c?eb;ecej]?b;S]e");
    }

    #[test]
    fn a_helper_that_calls_itself_is_named() {
        let source = "__device__ void f(int x) { __syncthreads(); f(x); }\n\
                      __global__ void k(int* a) { f(a[0]); }";
        assert_eq!(
            kernel_error(source),
            "1:17: 'f' calls itself (recursion is not supported by the simulator)"
        );
        // A call on the left of `=` in a statement whose right side calls the helper.
        let source = "__device__ int f(int x) { __syncthreads(); return x; }\n\
                      __global__ void k(int* a) { a[atomicAdd(&a[0], 1) & 7] = f(a[1]); }";
        assert_eq!(kernel_error(source), "compiles");
    }

    #[test]
    fn barrier_helpers_nested_ninety_deep_in_their_arguments_compile_on_a_small_stack() {
        // A browser gives WebAssembly a 1 MB stack; the parser bounds the nesting of calls
        // (`limits::MAX_NESTING`, 96 levels).
        let depth = 90;
        let source = format!(
            "__device__ int f(int x) {{ __syncthreads(); return x + 1; }}\n\
             __global__ void k(int* a) {{ a[0] = {}0{}; a[1] = a[0]{}; }}",
            "f(".repeat(depth),
            ")".repeat(depth),
            " && f(a[2]) > 0".repeat(depth)
        );
        let outcome = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || match compile(&source, &[]) {
                Ok(program) => program.kernel("k").map(|_| ()).map_err(|d| d.to_string()),
                Err(d) => Err(d.to_string()),
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(outcome, Ok(()));
    }

    #[test]
    fn a_value_parameter_that_the_body_changes_is_a_copy_of_its_argument() {
        let kernel = |body: &str| {
            shape(&format!(
                "__device__ float f(float4 p) {{ {body} __syncthreads(); return p.y; }}\n\
                 __global__ void k(float* a) {{ float4 v = make_float4(1, 2, 3, 4); a[0] = f(v) + v.x; }}"
            ))
        };
        // `v`'s own registers when nothing changes `p`; a copy when a component is assigned or
        // a reference to it is bound.
        assert_eq!(kernel(""), "eSee");
        assert_eq!(kernel("p.x = 9;"), "eeeSee");
        assert_eq!(kernel("float &r = p.x; r = 9;"), "eeeSee");
    }

    #[test]
    fn helpers_that_multiply_into_millions_of_copies_stop_at_the_limit() {
        let mut source = "__device__ void f0(int* a) { __syncthreads(); a[0] += 1; }\n".to_string();
        for level in 1..7 {
            let calls = format!("f{}(a); ", level - 1).repeat(10);
            source += &format!("__device__ void f{level}(int* a) {{ {calls}}}\n");
        }
        source += "__global__ void k(int* a) { f6(a); }";
        let error = kernel_error(&source);
        assert!(
            error.ends_with(
                "the functions written into this one make it longer than the simulator's limit \
                 of 200000 operations"
            ),
            "{error}"
        );
    }
}
