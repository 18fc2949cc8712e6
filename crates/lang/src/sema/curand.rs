//! The one builtin of memplay's `curand_kernel.h` (`toolkit_headers`) that the language cannot
//! write: `__memplay_xorwow_power(p, word, v0, v1, v2, v3, v4)`, word `word` of the XORWOW
//! state `v0..v4` after `2^p` draws, a product of the state with a power of the generator's
//! 160 x 160 bit matrix (cuRAND documentation, "Device API Overview": `curand_init`'s
//! subsequences are 2^67 draws apart). Every operand is an `unsigned int`.

use super::Sema;
use crate::ast::{Expr, Scalar, Type};
use crate::ir::{Ex, ExKind, MathFn};
use crate::span::{Diagnostic, Span};

impl Sema<'_> {
    /// The builtin above, or `None` for any other name.
    pub(super) fn curand_builtin(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Option<Result<(Ex, Type), Diagnostic>> {
        if name != "__memplay_xorwow_power" {
            return None;
        }
        let lowered = self.expect_args(name, name_span, args, 7).and_then(|()| {
            let mut words = Vec::with_capacity(7);
            for arg in args {
                let (ex, scalar) = self.scalar_arg(arg, name)?;
                words.push(self.convert_scalar(ex, scalar, Scalar::U32));
            }
            let kind = ExKind::Math {
                f: MathFn::XorwowPower,
                ty: Scalar::U32,
                args: words,
            };
            Ok((Ex::new(kind, 1, span), Type::Scalar(Scalar::U32)))
        });
        Some(lowered)
    }
}
