//! `std::numeric_limits<T>` (C++ [numeric.limits], declared by `<limits>`; `cuda::std::` in
//! libcu++): the largest, smallest and lowest values of an arithmetic type, its epsilon, its
//! infinity and NaN, and its traits (`digits`, `is_integer`, `is_signed`, ...).
//!
//! A reduction written for any `T` starts from `std::numeric_limits<T>::lowest()`. nvcc folds
//! each to a constant, and so does this reader: `numeric_limits<float>::max()` is the literal
//! `3.40282347e38f` converted to `float`, at the place it is written, for the type the template
//! argument names there (a template parameter is read per instantiation, `template`).

use super::{Parser, Tree};
use crate::ast::{ExprKind, Scalar, Type, UnaryOp};
use crate::lexer::Punct;
use crate::span::{Diagnostic, DiagnosticKind, Span};

/// A member of `numeric_limits<T>`: a value of `T` or a trait.
enum Limit {
    Float(f64),
    Integer { magnitude: u64, negative: bool },
}

impl<'a> Parser<'a> {
    /// `numeric_limits<T>::member` or `numeric_limits<T>::member()` at the current position, read
    /// to its value, if that is what comes next.
    pub(super) fn numeric_limit(&mut self) -> Result<Option<Tree>, Diagnostic> {
        let Some((written, taken)) = self.peek_name() else {
            return Ok(None);
        };
        let name = written.trim_start_matches("::");
        let named = [
            "numeric_limits",
            "std::numeric_limits",
            "cuda::std::numeric_limits",
        ];
        if !named.contains(&name) || !self.peek_at(taken).is_some_and(|t| t.is_punct(Punct::Lt)) {
            return Ok(None);
        }
        let start = self.here();
        self.pos += taken + 1;
        let ty = self.type_name()?;
        self.expect(Punct::Gt)?;
        self.expect(Punct::ColonColon)?;
        let (member, member_span) = self.ident("a member of numeric_limits")?;
        let mut end = member_span;
        let called = self.eat(Punct::LParen);
        if called {
            end = self.expect(Punct::RParen)?;
        }
        let span = start.to(end);
        let Type::Scalar(scalar) = ty else {
            return Err(refusal(
                span,
                format!("numeric_limits<{ty}> is not simulated: it is defined for numbers only"),
            ));
        };
        let (limit, of_type) = match limit(scalar, &member) {
            Some(found) => found,
            None => {
                return Err(refusal(
                    span,
                    format!("numeric_limits<{ty}>::{member} is not simulated"),
                ))
            }
        };
        let literal = match limit {
            Limit::Float(value) => ExprKind::Float {
                value,
                single: false,
            },
            Limit::Integer { magnitude, .. } => ExprKind::Int {
                value: magnitude,
                unsigned: true,
                long: true,
                hex: false,
            },
        };
        let mut tree = self.node(literal, span, 0, span)?;
        if let Limit::Integer { negative: true, .. } = limit {
            let negated = ExprKind::Unary(UnaryOp::Neg, Box::new(tree.expr));
            tree = self.node(negated, span, 1, span)?;
        }
        let cast = ExprKind::Cast(Type::Scalar(of_type), Box::new(tree.expr));
        Ok(Some(self.node(cast, span, tree.depth, span)?))
    }
}

fn refusal(span: Span, message: String) -> Diagnostic {
    Diagnostic::of_kind(DiagnosticKind::NotSimulated, span, message)
}

/// The value of `numeric_limits<scalar>::member` and its type: `scalar` for a value, `int` or
/// `bool` for a trait; `None` for a member memplay does not know (or `half`'s).
fn limit(scalar: Scalar, member: &str) -> Option<(Limit, Scalar)> {
    let integer = |magnitude: u64, negative: bool| Limit::Integer {
        magnitude,
        negative,
    };
    let bits = scalar.size() * 8;
    let (digits, is_integer) = match scalar {
        Scalar::F32 => (24, false),
        Scalar::F64 => (53, false),
        Scalar::F16 | Scalar::BF16 => return None,
        Scalar::Bool => (1, true),
        s if s.is_signed() => (bits - 1, true),
        _ => (bits, true),
    };
    let trait_value = match member {
        "digits" => Some((integer(u64::from(digits), false), Scalar::I32)),
        "radix" => Some((integer(2, false), Scalar::I32)),
        "is_integer" | "is_exact" => Some((integer(u64::from(is_integer), false), Scalar::Bool)),
        "is_signed" => Some((
            integer(u64::from(!is_integer || scalar.is_signed()), false),
            Scalar::Bool,
        )),
        "has_infinity" | "has_quiet_NaN" | "is_iec559" => {
            Some((integer(u64::from(!is_integer), false), Scalar::Bool))
        }
        "is_specialized" | "is_bounded" => Some((integer(1, false), Scalar::Bool)),
        _ => None,
    };
    if trait_value.is_some() {
        return trait_value;
    }
    let value = match (scalar, member) {
        (Scalar::F32, _) => Limit::Float(match member {
            "max" => f64::from(f32::MAX),
            "lowest" => f64::from(f32::MIN),
            "min" => f64::from(f32::MIN_POSITIVE),
            "epsilon" => f64::from(f32::EPSILON),
            "denorm_min" => f64::from(f32::from_bits(1)),
            "round_error" => 0.5,
            "infinity" => f64::INFINITY,
            "quiet_NaN" | "signaling_NaN" => f64::NAN,
            _ => return None,
        }),
        (Scalar::F64, _) => Limit::Float(match member {
            "max" => f64::MAX,
            "lowest" => f64::MIN,
            "min" => f64::MIN_POSITIVE,
            "epsilon" => f64::EPSILON,
            "denorm_min" => f64::from_bits(1),
            "round_error" => 0.5,
            "infinity" => f64::INFINITY,
            "quiet_NaN" | "signaling_NaN" => f64::NAN,
            _ => return None,
        }),
        (_, "max") if scalar == Scalar::Bool => integer(1, false),
        (_, "max") => integer(u64::MAX >> (64 - digits), false),
        (_, "min" | "lowest") if scalar.is_signed() => integer(1 << digits, true),
        (_, "min" | "lowest" | "epsilon" | "round_error" | "denorm_min" | "infinity") => {
            integer(0, false)
        }
        (_, "quiet_NaN" | "signaling_NaN") => integer(0, false),
        _ => return None,
    };
    Some((value, scalar))
}

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::{ExKind, Op};

    /// The constants the functions of `source` assign, as the bits their registers hold.
    fn constants(source: &str) -> Vec<u64> {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        program
            .functions
            .iter()
            .flat_map(|f| f.code.iter())
            .filter_map(|op| match op {
                Op::Eval(e) => match &e.kind {
                    ExKind::Assign { value, .. } => match value.kind {
                        ExKind::Const(bits) => Some(bits),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_limits_of_float_int_and_unsigned_fold_to_their_constants() {
        let source = "#include <limits>\n\
            __global__ void k(float* f, int* i, unsigned* u) {\n\
              float a = std::numeric_limits<float>::max();\n\
              float b = std::numeric_limits<float>::lowest();\n\
              float c = std::numeric_limits<float>::infinity();\n\
              int d = std::numeric_limits<int>::min();\n\
              int e = std::numeric_limits<int>::max();\n\
              unsigned g = std::numeric_limits<unsigned>::max();\n\
              int h = std::numeric_limits<float>::digits;\n\
              f[0] = a + b + c; i[0] = d + e + h; u[0] = g;\n\
            }";
        assert_eq!(
            constants(source),
            [
                u64::from(f32::MAX.to_bits()),
                u64::from(f32::MIN.to_bits()),
                u64::from(f32::INFINITY.to_bits()),
                i64::from(i32::MIN) as u64,
                2147483647,
                4294967295,
                24,
            ]
        );
    }

    #[test]
    fn a_template_s_limits_are_those_of_its_argument() {
        let source = "template <typename T> __device__ void lowest(T* out) {\n\
              T v = std::numeric_limits<T>::lowest();\n\
              out[0] = v;\n\
            }\n\
            __global__ void k(double* out) { lowest<double>(out); }";
        assert_eq!(
            constants(source),
            [f64::MIN.to_bits()],
            "lowest<double> is -DBL_MAX"
        );
    }

    #[test]
    fn a_limit_of_a_struct_or_an_unknown_member_is_refused_in_words() {
        let refused = |source: &str| compile(source, &[]).err().map(|d| d.message);
        assert_eq!(
            refused("__global__ void k(float* f) { f[0] = std::numeric_limits<float>::tinyness_before(); }")
                .as_deref(),
            Some("numeric_limits<float>::tinyness_before is not simulated")
        );
    }
}
