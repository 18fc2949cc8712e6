//! C++ references (`T&`, `const T&`): locals, and parameters of `__device__` functions.
//!
//! A reference is another name for the place it is bound to, and it is bound once, where it is
//! declared or where its function is called (C++ [dcl.ref], [dcl.init.ref]). The check gives the
//! name that place and nothing new:
//!
//! - bound to a register variable (a local, a parameter, a component of a vector variable,
//!   `threadIdx.x`), the name is given the variable's own registers: a read or a write through it
//!   is one of the variable;
//! - bound to a place in memory (an element of a global, shared, local or constant array, what a
//!   pointer points to, a component of a vector there), the place's address is computed once,
//!   where the reference is bound, into a register of its own, and every use of the name is a
//!   load or a store at that address, as `float* p = &place;` and `*p` would be. The accesses are
//!   those of the place written out at every use, at the address the place had when the
//!   reference was bound, even if the variables of its index change later. A read through the
//!   name carries the span of the place as written where it was bound (`read_span`), so that
//!   the per-line counters show it there and `memplay_sim::compile_effects` fuses the reads of a
//!   tile through a helper's `const float&` as it fuses the tile's reads written out;
//! - a `const T&` bound to a value (a temporary, or a value converted to `T`) gets the value in
//!   a register of its own, which the name reads: the temporary lives as long as the reference.
//!
//! Nothing here depends on the place's type beyond the rule that a reference to a non-`const`
//! `T` names a place of exactly the type `T` that is not `const`. A function that takes a
//! reference is lowered into its caller (`inline`), as nvcc inlines it, and each reference
//! parameter is bound to its argument's place as a local reference would be.

use super::consts::{const_elements, each_expression, function_ast, is_ident};
use super::{elem_of, err, width_of, Lv, Sema, Symbol};
use crate::ast::{Declaration, Expr, ExprKind, Initializer, Scalar, Stmt, Storage, Type, UnaryOp};
use crate::ir::{Elem, Ex, Op};
use crate::span::{Diagnostic, DiagnosticKind, Span};

/// The refusal of a kernel's reference parameter: its argument would be host memory.
pub(super) const KERNEL_PARAMETER: &str =
    "a reference parameter of a __global__ kernel is not simulated; pass a pointer to device \
     memory";

/// The variable whose place `e` is: `name`, or a component of it (`name.x`).
fn names_variable(e: &Expr, name: &str) -> bool {
    match &e.kind {
        ExprKind::Member { base, .. } => names_variable(base, name),
        _ => is_ident(e, name),
    }
}

impl Sema<'_> {
    /// Whether the statement may change the variable `name` in a way that
    /// `consts::stmt_modifies`, which reads assignments to the name itself, does not see: it
    /// binds a reference to a non-`const` place to it or to a component of it (`float& r =
    /// name;`, `name` passed to a function's `float&` parameter), or assigns a component of it
    /// (`name.x = 1`).
    pub(super) fn may_change(&self, s: &Stmt, name: &str) -> bool {
        let mut found = false;
        each_expression(s, &mut |e, initialises_reference| {
            found |= initialises_reference && names_variable(e, name);
            e.walk(&mut |inner| match &inner.kind {
                ExprKind::Call {
                    name: called, args, ..
                } => {
                    if let Some(f) = function_ast(self.unit, called) {
                        found |= f.params.iter().zip(args).any(|(p, arg)| {
                            p.reference && !p.is_const && names_variable(arg, name)
                        });
                    }
                }
                ExprKind::Assign(_, target, _)
                | ExprKind::Unary(
                    UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec,
                    target,
                ) => found |= names_variable(target, name),
                _ => {}
            });
        });
        found
    }

    /// The span the value of `e` is read at: the place a reference to memory names, if `e` is
    /// one, so that its loads are the loads of the place written out
    /// (`memplay_sim::compile_effects` fuses a loop's reads of a shared array by their span).
    pub(super) fn read_span(&self, e: &Expr) -> Span {
        match (&e.kind, self.symbol_of(e)) {
            (ExprKind::Ident(_), Some(Symbol::Ref { place, .. })) => *place,
            _ => e.span,
        }
    }

    fn symbol_of(&self, e: &Expr) -> Option<&Symbol> {
        match &e.kind {
            ExprKind::Ident(name) => self.lookup(name),
            _ => None,
        }
    }

    /// What a reference of type `ty` (`None`: `auto&`, the place's own type), `const` or not,
    /// bound to `init` (an initialiser or an argument) names: the module doc's three cases.
    pub(super) fn bind_reference(
        &mut self,
        init: &Expr,
        ty: Option<&Type>,
        is_const: bool,
    ) -> Result<Symbol, Diagnostic> {
        let place = self.read_span(init);
        let span = init.span;
        let lv = self.lower(init)?;
        let (place_ty, place_const) = match &lv {
            Lv::Var { ty, is_const, .. } | Lv::Mem { ty, is_const, .. } => {
                (Some(ty.clone()), *is_const)
            }
            Lv::Value(..) => (None, false),
        };
        let ty = match (ty, &place_ty, &lv) {
            (Some(ty), ..) => ty.clone(),
            (None, Some(place), _) => place.clone(),
            (None, None, Lv::Value(_, value)) => value.clone(),
            (None, None, _) => Type::Void,
        };
        if place_ty.as_ref() == Some(&ty) && (is_const || !place_const) {
            let is_const = is_const || place_const;
            match lv {
                Lv::Var { reg, .. } => {
                    return Ok(Symbol::Var {
                        reg,
                        ty,
                        is_const,
                        const_value: None,
                    })
                }
                Lv::Mem { addr, .. } => {
                    let reg = self.alloc(1);
                    let at = Ex::assign_reg(reg, Elem::scalar(Scalar::U64), addr, 1, span);
                    self.emit(Op::Eval(at), span);
                    return Ok(Symbol::Ref {
                        addr: reg,
                        ty,
                        is_const,
                        place,
                    });
                }
                Lv::Value(..) => {}
            }
        }
        let what = match &place_ty {
            Some(place) if place_const && place == &ty => {
                return err(
                    span,
                    format!("'{ty}&' cannot name a const place; write 'const {ty}&'"),
                )
            }
            Some(place) => format!("a place of type '{place}'"),
            None => "a value".to_string(),
        };
        let Some(elem) = elem_of(&ty).filter(|_| is_const) else {
            return err(
                span,
                format!(
                    "'{ty}&' names a variable or an element of type '{ty}', not {what} (a \
                     'const {ty}&' can hold a value)"
                ),
            );
        };
        // A `const T&` bound to a value holds the value, converted to `T`.
        let (value, from) = self.rvalue_of(lv, span);
        let value = self.convert(value, &from, &ty, span)?;
        let width = width_of(&ty);
        let reg = self.alloc(width);
        self.emit(
            Op::Eval(Ex::assign_reg(reg, elem, value, width, span)),
            span,
        );
        Ok(Symbol::Var {
            reg,
            ty,
            is_const: true,
            const_value: None,
        })
    }

    /// A local declaration with a reference among its declarators (`float a = 1, &r = a;`):
    /// each reference is bound, each other declarator declared as it would be alone.
    pub(super) fn declaration_with_references(
        &mut self,
        decl: &Declaration,
    ) -> Result<(), Diagnostic> {
        for d in &decl.declarators {
            if !d.reference {
                let alone = Declaration {
                    declarators: vec![d.clone()],
                    ..decl.clone()
                };
                self.local_declaration(&alone)?;
                continue;
            }
            if decl.storage != Storage::Automatic {
                return Err(Diagnostic::of_kind(
                    DiagnosticKind::NotSimulated,
                    d.span,
                    "a reference is not a variable of a memory space; declare it without \
                     __shared__ or static",
                ));
            }
            let init = match &d.init {
                Some(Initializer::Expr(e)) => Some(e),
                Some(Initializer::List(items, _)) => match items.as_slice() {
                    [Initializer::Expr(e)] => Some(e),
                    _ => None,
                },
                None => None,
            };
            let Some(init) = init.filter(|_| d.dims.is_empty()) else {
                return err(
                    d.span,
                    format!(
                        "the reference '{}' needs an initialiser: the place it names",
                        d.name
                    ),
                );
            };
            let ty = (!decl.is_auto).then_some(&d.ty);
            let symbol = self.bind_reference(init, ty, const_elements(decl, d))?;
            self.declare(&d.name, d.span, symbol)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::compile;
    use crate::ir::Unroll;

    /// The first error of the kernel `k` in `source`, as `line:col: message`, or "compiles".
    pub(in crate::sema) fn kernel_error(source: &str) -> String {
        let program = match compile(source, &[]) {
            Ok(program) => program,
            Err(error) => return error.to_string(),
        };
        match program.kernel("k") {
            Ok(_) => "compiles".to_string(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn references_bind_variables_elements_targets_and_const_values() {
        let source = "__device__ void add(float &out, const float &v) { out += v; }\n\
                      __device__ void swap(float *&p, float *&q) { float* t = p; p = q; q = t; }\n\
                      __global__ void k(float* a, float* b) {\n\
                      \x20 __shared__ float s[4][32];\n\
                      \x20 float4 v4 = make_float4(1, 2, 3, 4);\n\
                      \x20 float &y = v4.y, &e(s[1][threadIdx.x]);\n\
                      \x20 const double &d = y;\n\
                      \x20 add(y, 2);\n\
                      \x20 add(e, s[0][0]);\n\
                      \x20 add(*a, d);\n\
                      \x20 swap(a, b);\n\
                      \x20 a[0] = v4.y + e;\n}";
        assert_eq!(kernel_error(source), "compiles");
    }

    #[test]
    fn a_reference_that_cannot_bind_is_named() {
        let kernel =
            |body: &str| kernel_error(&format!("__global__ void k(float* a) {{ {body} }}"));
        assert_eq!(
            kernel("float &r = a[0] + 1;"),
            "1:42: 'float&' names a variable or an element of type 'float', not a value (a \
             'const float&' can hold a value)"
        );
        assert_eq!(
            kernel("int &r = a[0];"),
            "1:40: 'int&' names a variable or an element of type 'int', not a place of type \
             'float' (a 'const int&' can hold a value)"
        );
        assert_eq!(
            kernel("const float* c = a; float &r = c[0];"),
            "1:62: 'float&' cannot name a const place; write 'const float&'"
        );
        assert_eq!(
            kernel("float &r;"),
            "1:38: the reference 'r' needs an initialiser: the place it names"
        );
        assert_eq!(
            kernel("__shared__ float &r = a[0];"),
            "1:49: a reference is not a variable of a memory space; declare it without \
             __shared__ or static"
        );
        assert_eq!(
            kernel_error(
                "__device__ void f(float &x) { x = 1; }\n\
                 __global__ void k(float* a) { f(threadIdx.x); }"
            ),
            "2:33: 'float&' names a variable or an element of type 'float', not a place of \
             type 'unsigned int' (a 'const float&' can hold a value)"
        );
    }

    #[test]
    fn a_loop_whose_counter_a_reference_changes_is_not_a_constant_trip_loop() {
        let unroll = |body: &str| {
            let source = format!(
                "__device__ void skip(int &k) {{ k++; }}\n\
                 __global__ void k(int* a) {{ for (int i = 0; i < 8; i++) {{ {body} }} }}"
            );
            let program = compile(&source, &[]).unwrap_or_else(|d| panic!("{d}"));
            let kernel = program.kernel("k").unwrap_or_else(|d| panic!("{d}"));
            kernel.code.iter().find_map(|op| match op {
                crate::ir::Op::LoopBegin { unroll, .. } => Some(*unroll),
                _ => None,
            })
        };
        assert_eq!(unroll("a[i] = 1;"), Some(Unroll::Full));
        assert_ne!(unroll("skip(i);"), Some(Unroll::Full));
        assert_ne!(unroll("int &j = i; j += 2;"), Some(Unroll::Full));
        // A `const` reference cannot change it.
        assert_eq!(unroll("const int &j = i; a[j] = 1;"), Some(Unroll::Full));
    }
}
