//! The kernel language: the CUDA C subset memplay's kernels are written in, read and checked,
//! and lowered to the IR that `memplay-sim`'s interpreter runs.
//!
//! The lecture kernels (seeds 000-004 and `tests/reference/kernels/*.cu`) are written in a small
//! part of CUDA C++: `__global__` kernels over `threadIdx`/`blockIdx`, `__shared__` tiles,
//! `__syncthreads()`, atomics, `#define`d tile sizes. This crate reads such kernels:
//!
//! - `preprocess` + `lexer`: source to tokens, with `#define`/`#ifndef` and `-D` overrides;
//! - `parser`: tokens to the syntax tree of `ast`;
//! - `sema`: names, types and C conversions checked, lowered to the `ir` the interpreter runs;
//! - `issue`: what nvcc makes of it: each loop's unrolling and the SASS instructions of each op;
//! - `uniformity` and `block_shift`: what the IR shows before anything runs, which values are
//!   the same in every lane, and how a block's addresses move from one block to the next.
//!
//! Every error is a `Diagnostic` with a line and column; no input makes this crate panic.
//!
//! It is a crate of its own because it runs once per kernel, not per warp: the page's build
//! compiles it for size (`Cargo.toml`, `profile.web.package.memplay-lang`), while the interpreter
//! and the counting in `memplay-sim`, which run for every warp access, are compiled for speed.
//! Like `memplay-sim`, it does no IO and knows nothing of the DOM.

pub mod ast;
pub mod block_shift;
mod cooperative_groups;
pub mod decimal;
pub mod header_names;
pub mod ir;
pub mod issue;
pub mod launches;
pub mod lexer;
pub mod limits;
pub mod math_library;
pub mod name_map;
pub mod parser;
pub mod preprocess;
pub mod printf_format;
pub mod record;
pub mod refused;
pub mod reg_set;
pub mod registers;
pub mod sema;
pub mod sorting;
pub mod span;
pub mod templates;
mod toolkit_headers;
pub mod uniformity;

pub use sema::Program;
pub use span::{Diagnostic, DiagnosticKind, MemoryObject, Span};

/// Preprocesses and parses `source` (`defines` are `-D NAME=VALUE` overrides).
pub fn parse(
    source: &str,
    defines: &[(String, String)],
) -> Result<ast::TranslationUnit, Diagnostic> {
    let tokens = lexer::lex(source)?;
    let tokens = preprocess::preprocess(tokens, defines)?;
    let tokens = cooperative_groups::with_header(tokens)?;
    parser::parse(&tokens).map_err(|error| refused::explain(error, &tokens))
}

/// Preprocesses, parses and checks `source`: the program is ready to run.
pub fn compile(source: &str, defines: &[(String, String)]) -> Result<Program, Diagnostic> {
    sema::check(&parse(source, defines)?)
}

/// The name of the variable `constant_expression` evaluates its expression into.
const LAUNCH_VALUE: &str = "__memplay_launch_value";

/// A place in a one-line expression: line 1, column `col`.
fn expression_span(col: u32) -> Span {
    Span {
        line: 1,
        col,
        ..Span::default()
    }
}

/// The value of an integer constant expression written against `source`'s `#define`s (with the
/// `defines` overrides), as a student writes a launch's grid, block, arguments and buffer sizes
/// (`(N + 255) / 256`): the preprocessor expands the macros and the front end folds the result
/// as it folds an array size, with C's integer rules. The error names the expression's own
/// column (line 1) when the expression is at fault.
pub fn constant_expression(
    source: &str,
    defines: &[(String, String)],
    expression: &str,
) -> Result<i64, Diagnostic> {
    constant_expressions(source, defines, &[expression])
        .pop()
        .unwrap_or_else(|| Err(Diagnostic::new(expression_span(1), "the value is empty")))
}

/// `constant_expression` for each of `expressions`, with one pass of the front end over the source
/// when all of them are well formed (a launch has a dozen values; each pass parses the whole
/// source), and one pass each to place the errors when some are not.
pub fn constant_expressions(
    source: &str,
    defines: &[(String, String)],
    expressions: &[&str],
) -> Vec<Result<i64, Diagnostic>> {
    constant_bits(source, defines, expressions, "long long")
        .into_iter()
        .map(|bits| bits.map(|bits| bits as i64))
        .collect()
}

/// `constant_expressions` for values of a `float` or `double` parameter: each expression folded
/// as a `double` initialiser is, with C's arithmetic conversions (`N / 2.0`, `1.5f`, `#define`s).
pub fn constant_float_expressions(
    source: &str,
    defines: &[(String, String)],
    expressions: &[&str],
) -> Vec<Result<f64, Diagnostic>> {
    constant_bits(source, defines, expressions, "double")
        .into_iter()
        .map(|bits| bits.map(f64::from_bits))
        .collect()
}

/// The bits of each expression folded as the initialiser of a `__constant__` of type `ty` (an
/// 8-byte type).
fn constant_bits(
    source: &str,
    defines: &[(String, String)],
    expressions: &[&str],
    ty: &str,
) -> Vec<Result<u64, Diagnostic>> {
    let shape: Vec<Result<(), Diagnostic>> = expressions.iter().map(|e| well_formed(e)).collect();
    if shape.iter().all(Result::is_ok) {
        let head = format!("{source}\n\n");
        let mut text = head;
        for (index, expression) in expressions.iter().enumerate() {
            text.push_str(&format!(
                "__constant__ {ty} {LAUNCH_VALUE}{index} = ({expression});\n"
            ));
        }
        if let Ok(program) = compile(&text, defines) {
            let values: Vec<Option<u64>> = (0..expressions.len())
                .map(|index| launch_value(&program, &format!("{LAUNCH_VALUE}{index}")))
                .collect();
            if values.iter().all(Option::is_some) {
                return values.into_iter().map(|v| Ok(v.unwrap_or(0))).collect();
            }
        }
    }
    expressions
        .iter()
        .zip(shape)
        .map(|(expression, shape)| {
            shape.and_then(|()| one_expression(source, defines, expression, ty))
        })
        .collect()
}

/// What a value must be before the front end sees it: one expression on one line.
fn well_formed(expression: &str) -> Result<(), Diagnostic> {
    if expression.trim().is_empty() {
        return Err(Diagnostic::new(expression_span(1), "the value is empty"));
    }
    if expression.contains(['\n', ';', '{', '}']) {
        return Err(Diagnostic::new(
            expression_span(1),
            "a value is one expression on one line, without ';' or braces",
        ));
    }
    Ok(())
}

/// The 64-bit value the front end folded into the `__constant__` variable `name`.
fn launch_value(program: &Program, name: &str) -> Option<u64> {
    program
        .objects
        .iter()
        .find(|object| object.name == name)
        .and_then(|object| match &object.init {
            ir::ObjectInit::Bytes(bytes) => {
                let mut le = [0u8; 8];
                le.copy_from_slice(bytes.get(..8)?);
                Some(u64::from_le_bytes(le))
            }
            _ => None,
        })
}

/// One expression in a pass of its own, its errors placed in the expression.
fn one_expression(
    source: &str,
    defines: &[(String, String)],
    expression: &str,
    ty: &str,
) -> Result<u64, Diagnostic> {
    let prefix = format!("__constant__ {ty} {LAUNCH_VALUE} = (");
    let head = format!("{source}\n\n");
    let line = head.matches('\n').count() as u32 + 1;
    let text = format!("{head}{prefix}{expression});\n");
    let at_expression = |diagnostic: Diagnostic| {
        if diagnostic.span.line != line {
            return diagnostic;
        }
        let col = diagnostic
            .span
            .col
            .saturating_sub(prefix.len() as u32)
            .max(1);
        let message = if diagnostic.kind == DiagnosticKind::NotConstant {
            let what = if ty == "double" { "" } else { " integer" };
            format!(
                "the value is not a constant{what} expression (a name that is no #define, a \
                 division by zero, or a call)"
            )
        } else {
            diagnostic.message
        };
        Diagnostic::new(expression_span(col), message)
    };
    let program = compile(&text, defines).map_err(at_expression)?;
    launch_value(&program, LAUNCH_VALUE)
        .ok_or_else(|| Diagnostic::new(expression_span(1), "the value is not a constant"))
}
