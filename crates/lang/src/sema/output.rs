//! What a kernel says outside its memory: device `printf` (CUDA C++ Programming Guide,
//! "Formatted Output"), `clock()` and `clock64()` ("Time Function") and `assert` ("Assertion").
//! Each becomes one `ExKind::Output`. A `printf`'s format is read here, once (`printf_format`),
//! and each argument is checked against its conversion and promoted as C's default argument
//! promotions do (a `float` passed as a `double`): nvcc only warns where a `%d` is given a
//! `float`, and the line it prints is then garbage, so memplay says why instead.

use super::{err, Sema};
use crate::ast::{Expr, ExprKind, Scalar, Type};
use crate::ir::{Ex, ExKind, OutputKind, PrintfCall, PrintfSlot};
use crate::printf_format::{parse_format, PrintfArgument, PrintfLength, PrintfPiece};
use crate::span::{Diagnostic, Span};
use std::sync::Arc;

impl Sema<'_> {
    /// `printf`, `clock`, `clock64` or `assert`, or `None` for any other name.
    pub(super) fn output_builtin(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        let (kind, ty, lowered) = match name {
            "printf" => match self.printf(name_span, args) {
                Ok((call, lowered)) => (
                    OutputKind::Printf(Arc::new(call)),
                    Type::Scalar(Scalar::I32),
                    lowered,
                ),
                Err(error) => return Some(Err(error)),
            },
            "clock" | "clock64" => {
                if let Err(error) = self.expect_args(name, name_span, args, 0) {
                    return Some(Err(error));
                }
                // `clock_t` is `long` on the 64-bit device, as `long long` is.
                (OutputKind::Clock, Type::Scalar(Scalar::I64), Vec::new())
            }
            "assert" => {
                let condition = self.expect_args(name, name_span, args, 1).and_then(|()| {
                    let (ex, ty) = self.rvalue(&args[0])?;
                    self.bool_of(ex, &ty, args[0].span)
                });
                match condition {
                    Ok(condition) => (OutputKind::Assert, Type::Void, vec![condition]),
                    Err(error) => return Some(Err(error)),
                }
            }
            _ => return None,
        };
        let width = u8::from(ty != Type::Void);
        Some(Ok((
            Ex::new(
                ExKind::Output {
                    kind,
                    args: lowered,
                },
                width,
                span,
            ),
            ty,
        )))
    }

    /// A `printf`'s format and its arguments, each converted to what its conversion reads.
    fn printf(
        &mut self,
        name_span: Span,
        args: &[Expr],
    ) -> Result<(PrintfCall, Vec<Ex>), Diagnostic> {
        let Some((format, rest)) = args.split_first() else {
            return err(name_span, "'printf' needs a format string");
        };
        let ExprKind::Str(text) = &format.kind else {
            return err(
                format.span,
                "printf's format must be a string literal: memplay reads it when it compiles the kernel",
            );
        };
        let pieces = parse_format(text).map_err(|message| Diagnostic::new(format.span, message))?;
        let conversions: Vec<_> = pieces
            .iter()
            .filter_map(|piece| match piece {
                PrintfPiece::Conversion(conversion) => Some(*conversion),
                PrintfPiece::Text(_) => None,
            })
            .collect();
        if conversions.len() != rest.len() {
            let plural = if conversions.len() == 1 { "" } else { "s" };
            return err(
                format.span,
                format!(
                    "the format has {} conversion{plural} but printf is given {} argument{} after it",
                    conversions.len(),
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                ),
            );
        }
        let mut slots = Vec::new();
        let mut lowered = Vec::new();
        for (conversion, arg) in conversions.iter().zip(rest) {
            let reads = conversion.argument();
            if let ExprKind::Str(text) = &arg.kind {
                if reads != PrintfArgument::String {
                    return err(
                        arg.span,
                        format!(
                            "`%{}` prints a number, not a string",
                            char::from(conversion.letter)
                        ),
                    );
                }
                slots.push(PrintfSlot::Text(text.clone()));
                continue;
            }
            let (ex, ty) = self.rvalue(arg)?;
            let long = conversion.length == PrintfLength::Long;
            let to = match (reads, &ty) {
                (PrintfArgument::SignedInteger, Type::Scalar(s)) if s.is_integer() => {
                    if long {
                        Scalar::I64
                    } else {
                        Scalar::I32
                    }
                }
                (PrintfArgument::UnsignedInteger, Type::Scalar(s)) if s.is_integer() => {
                    if long {
                        Scalar::U64
                    } else {
                        Scalar::U32
                    }
                }
                (PrintfArgument::Floating, Type::Scalar(Scalar::F32 | Scalar::F64)) => Scalar::F64,
                (PrintfArgument::Floating, Type::Scalar(s)) if s.is_half() => {
                    return err(
                        arg.span,
                        "printf cannot print a 16-bit float: convert it with __half2float (or __bfloat162float)",
                    );
                }
                (PrintfArgument::Pointer, Type::Pointer { .. }) => {
                    slots.push(PrintfSlot::Pointer);
                    lowered.push(ex);
                    continue;
                }
                (PrintfArgument::String, _) => {
                    return err(
                        arg.span,
                        format!(
                            "memplay prints a string literal with `%s`, not a value of type '{ty}'"
                        ),
                    );
                }
                _ => {
                    let wants = match reads {
                        PrintfArgument::SignedInteger | PrintfArgument::UnsignedInteger => {
                            "an integer"
                        }
                        PrintfArgument::Floating => "a float or double",
                        _ => "a pointer",
                    };
                    return err(
                        arg.span,
                        format!(
                            "`%{}` prints {wants}, not '{ty}': cast the argument to what the conversion reads",
                            char::from(conversion.letter)
                        ),
                    );
                }
            };
            let Type::Scalar(from) = ty else {
                return err(arg.span, "internal: printf argument");
            };
            slots.push(PrintfSlot::Value(to));
            lowered.push(self.convert_scalar(ex, from, to));
        }
        Ok((PrintfCall { pieces, slots }, lowered))
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{ExKind, Op, OutputKind, PrintfSlot};
    use crate::span::Diagnostic;

    /// The error of kernel `k` in `source`, if it has one.
    fn error(source: &str) -> Option<Diagnostic> {
        let program = match crate::compile(source, &[]) {
            Ok(program) => program,
            Err(error) => return Some(error),
        };
        let kernel = program.functions.iter().find(|f| f.name == "k")?;
        kernel.error.clone()
    }

    fn message(source: &str) -> String {
        error(source)
            .map(|e| format!("{}: {}", e.span, e.message))
            .unwrap_or_default()
    }

    #[test]
    fn a_printf_reads_its_format_and_promotes_a_float_to_a_double() {
        let source = "__global__ void k(float* a) {\n  printf(\"a[%d] = %5.2f %s\\n\", threadIdx.x, a[0], \"ok\");\n}";
        let program = crate::compile(source, &[]).unwrap();
        let kernel = program.functions.iter().find(|f| f.name == "k").unwrap();
        assert_eq!(kernel.error, None);
        let call = kernel.code.iter().find_map(|op| match op {
            Op::Eval(e) => match &e.kind {
                ExKind::Output {
                    kind: OutputKind::Printf(call),
                    args,
                } => Some((call.clone(), args.len())),
                _ => None,
            },
            _ => None,
        });
        let (call, values) = call.expect("the printf is one output node");
        assert_eq!(values, 2);
        assert_eq!(
            call.slots,
            vec![
                PrintfSlot::Value(crate::ast::Scalar::I32),
                PrintfSlot::Value(crate::ast::Scalar::F64),
                PrintfSlot::Text("ok".to_string()),
            ]
        );
    }

    #[test]
    fn a_printf_whose_arguments_do_not_match_its_conversions_is_an_error_in_words() {
        assert_eq!(
            message("__global__ void k() {\n  printf(\"%d %d\\n\", 1);\n}"),
            "2:10: the format has 2 conversions but printf is given 1 argument after it"
        );
        assert_eq!(
            message("__global__ void k(float* a) {\n  printf(\"%d\\n\", a[0]);\n}"),
            "2:18: `%d` prints an integer, not 'float': cast the argument to what the conversion reads"
        );
        assert_eq!(
            message("__global__ void k(int* a) {\n  printf(\"%f\\n\", a[0]);\n}"),
            "2:18: `%f` prints a float or double, not 'int': cast the argument to what the conversion reads"
        );
        assert_eq!(
            message("__global__ void k(const char* s) {\n  printf(s);\n}"),
            "2:10: printf's format must be a string literal: memplay reads it when it compiles the kernel"
        );
        assert_eq!(
            message("__global__ void k() {\n  printf(\"%n\\n\", 1);\n}"),
            "2:10: printf's `%n` conversion is not simulated"
        );
    }

    #[test]
    fn clock_and_clock64_are_long_and_assert_takes_one_condition() {
        assert_eq!(
            message("__global__ void k(long long* a) {\n  long long t = clock64();\n  a[0] = clock() - t;\n  assert(a[0] >= 0);\n}"),
            ""
        );
        assert_eq!(
            message("__global__ void k(int* a) {\n  assert(a[0], 1);\n}"),
            "2:3: 'assert' takes 1 argument, not 2"
        );
        assert_eq!(
            message("__global__ void k(int* a) {\n  a[0] = clock(1);\n}"),
            "2:10: 'clock' takes 0 arguments, not 1"
        );
    }

    #[test]
    fn a_string_literal_outside_printf_is_an_error_in_words() {
        assert_eq!(
            message("__global__ void k(int* a) {\n  a[0] = \"x\"[0];\n}"),
            "2:10: memplay reads a string literal only as a printf format or a `%s` argument"
        );
    }
}
