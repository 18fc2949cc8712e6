//! The two C++11 statements the parser keeps as calls (`parser/cpp_statements.rs`): a
//! `static_assert`, folded as a constant expression (C++ [dcl.pre]: a false one makes the
//! program ill-formed, and the compiler quotes its message), and the extent of a range-based
//! `for`'s array, folded to the number of elements so that the loop has a constant trip count
//! (C++ [stmt.ranged]: over an array `a` of `N` elements the loop runs from `a` to `a + N`).

use super::consts::ConstValue;
use super::Sema;
use crate::ast::{Expr, ExprKind, Type};
use crate::parser::ARRAY_EXTENT;
use crate::span::{Diagnostic, DiagnosticKind};

/// The condition and message of `e` when it is a `static_assert` the parser kept.
pub(super) fn static_assert_parts(e: &Expr) -> Option<(&Expr, Option<&str>)> {
    let ExprKind::Call { name, args, .. } = &e.kind else {
        return None;
    };
    if name != "static_assert" {
        return None;
    }
    let message = args.get(1).and_then(|m| match &m.kind {
        ExprKind::Str(text) => Some(text.as_str()),
        _ => None,
    });
    Some((args.first()?, message))
}

impl Sema<'_> {
    /// Folds the `static_assert` `e`: nothing when it holds, an error at the assertion that
    /// quotes its message when it does not or when its condition is not a constant expression.
    pub(super) fn static_assertion(&self, e: &Expr) -> Result<(), Diagnostic> {
        let Some((condition, message)) = static_assert_parts(e) else {
            return Ok(());
        };
        let holds = match self.const_value(condition) {
            Some(ConstValue::Int(value)) => value != 0,
            Some(ConstValue::Float(value)) => value != 0.0,
            None => {
                return Err(Diagnostic::of_kind(
                    DiagnosticKind::NotConstant,
                    condition.span,
                    "the condition of 'static_assert' is not a constant expression",
                ))
            }
        };
        if holds {
            return Ok(());
        }
        Err(Diagnostic::new(
            e.span,
            match message {
                Some(text) => format!("static assertion failed: {text}"),
                None => "static assertion failed".to_string(),
            },
        ))
    }

    /// The condition `cond` of a range-based `for` with its array's extent folded to a literal;
    /// `None` for any other loop's condition. A range that is not an array of known size is
    /// refused: a pointer does not say how many elements follow it.
    pub(super) fn range_condition(&mut self, cond: &Expr) -> Result<Option<Expr>, Diagnostic> {
        let ExprKind::Binary(op, index, extent) = &cond.kind else {
            return Ok(None);
        };
        let ExprKind::Call { name, args, .. } = &extent.kind else {
            return Ok(None);
        };
        let [range] = args.as_slice() else {
            return Ok(None);
        };
        if name != ARRAY_EXTENT {
            return Ok(None);
        }
        let elements = match self.unevaluated_type(range)? {
            Type::Array(_, Some(elements)) => elements,
            other => {
                let what = match other {
                    Type::Array(..) => "an array of unknown size".to_string(),
                    Type::Pointer { .. } => format!("a pointer ('{other}')"),
                    _ => format!("'{other}'"),
                };
                return Err(Diagnostic::of_kind(
                    DiagnosticKind::NotSimulated,
                    range.span,
                    format!(
                        "a range-based 'for' is simulated over an array of known size; this \
                         range is {what}: write an index loop"
                    ),
                ));
            }
        };
        let literal = Expr {
            kind: ExprKind::Int {
                value: u64::from(elements),
                unsigned: false,
                long: false,
                hex: false,
            },
            span: extent.span,
        };
        Ok(Some(Expr {
            kind: ExprKind::Binary(*op, index.clone(), Box::new(literal)),
            span: cond.span,
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::{Op, Unroll};
    use crate::sema::reference::tests::kernel_error;

    #[test]
    fn a_static_assert_that_holds_compiles_at_file_scope_in_a_struct_and_in_a_body() {
        let source = "#define BLOCK 256\n\
                      static_assert(BLOCK % 32 == 0, \"block\");\n\
                      constexpr int TILE = 16;\n\
                      struct P { float x, y; static_assert(sizeof(float) == 4); };\n\
                      __global__ void k(float* a) {\n\
                      \x20 static_assert(TILE * TILE <= BLOCK, \"tile\");\n\
                      \x20 a[threadIdx.x] = 0;\n}";
        assert_eq!(kernel_error(source), "compiles");
    }

    #[test]
    fn a_false_static_assert_quotes_its_message_at_its_place() {
        assert_eq!(
            kernel_error(
                "#define BLOCK 100\n\
                 static_assert(BLOCK % 32 == 0, \"block\");\n\
                 __global__ void k(float* a) { a[0] = 1; }"
            ),
            "2:1: static assertion failed: block"
        );
        assert_eq!(
            kernel_error("__global__ void k(float* a) {\n  static_assert(sizeof(float) == 8);\n}"),
            "2:3: static assertion failed"
        );
        assert_eq!(
            kernel_error("__global__ void k(int n) { static_assert(n > 0, \"n\"); }"),
            "1:42: the condition of 'static_assert' is not a constant expression"
        );
    }

    #[test]
    fn a_static_assert_in_a_template_is_checked_per_instantiation() {
        let with = |width: u32| {
            kernel_error(&format!(
                "template <int B> __device__ void fill(float* a) {{\n\
                 \x20 static_assert(B % 32 == 0, \"whole warps\");\n\
                 \x20 a[threadIdx.x] = B;\n}}\n\
                 __global__ void k(float* a) {{ fill<{width}>(a); }}"
            ))
        };
        assert_eq!(with(64), "compiles");
        assert_eq!(with(48), "2:3: static assertion failed: whole warps");
    }

    #[test]
    fn a_range_for_over_an_array_is_an_unrolled_index_loop() {
        let source = "__global__ void k(float* a) {\n\
                      \x20 float v[4] = {1, 2, 3, 4};\n\
                      \x20 float s = 0;\n\
                      \x20 for (float x : v) s += x;\n\
                      \x20 for (auto& x : v) x *= 2;\n\
                      \x20 for (const auto& x : v) s += x;\n\
                      \x20 a[threadIdx.x] = s;\n}";
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        let kernel = program.kernel("k").unwrap_or_else(|d| panic!("{d}"));
        let unrolls: Vec<Unroll> = kernel
            .code
            .iter()
            .filter_map(|op| match op {
                Op::LoopBegin { unroll, .. } => Some(*unroll),
                _ => None,
            })
            .collect();
        assert_eq!(unrolls, [Unroll::Full; 3]);
    }

    #[test]
    fn a_range_for_binds_structs_rows_and_nested_loops() {
        let source = "struct P { float x, m; };\n\
                      __shared__ P ps[8];\n\
                      __global__ void k(float* a) {\n\
                      \x20 float grid[2][3] = {{1, 2, 3}, {4, 5, 6}};\n\
                      \x20 float s = 0;\n\
                      \x20 for (P& p : ps) p.m = 1;\n\
                      \x20 for (const P p : ps) s += p.x;\n\
                      \x20 for (auto& row : grid) for (float v : row) s += v;\n\
                      \x20 for (auto&& v : grid[1]) for (float w : grid[0]) s += v * w;\n\
                      \x20 a[threadIdx.x] = s;\n}";
        assert_eq!(kernel_error(source), "compiles");
    }

    #[test]
    fn a_range_for_over_a_pointer_is_refused_in_words() {
        assert_eq!(
            kernel_error("__global__ void k(float* a) { float s = 0; for (float x : a) s += x; }"),
            "1:59: a range-based 'for' is simulated over an array of known size; this range is \
             a pointer ('float*'): write an index loop"
        );
    }
}
