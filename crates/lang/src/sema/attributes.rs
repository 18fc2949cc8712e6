//! What the simulator takes from attributes: `__launch_bounds__` on a kernel, evaluated (CUDA C++
//! Programming Guide, "Launch Bounds"), and `__attribute__((aligned(n)))` on a variable, which
//! raises its alignment as nvcc lays it out. Every other attribute is read and ignored (`parser`).

use super::consts::ConstValue;
use super::{err, Sema};
use crate::ast::{Expr, Function, FunctionKind};
use crate::ir::LaunchBounds;
use crate::span::Diagnostic;

impl Sema<'_> {
    /// The kernel's `__launch_bounds__`, each argument a positive integer constant expression (a
    /// `#define` or a constant). nvcc ignores them on a `__device__` function, with a warning.
    pub(super) fn launch_bounds(&self, f: &Function) -> Result<Option<LaunchBounds>, Diagnostic> {
        let Some(bounds) = &f.launch_bounds else {
            return Ok(None);
        };
        if f.kind != FunctionKind::Kernel {
            return Ok(None);
        }
        let positive = |e: &Expr, what: &str| match self.const_value(e) {
            Some(ConstValue::Int(v)) if v > 0 => Ok(u32::try_from(v).unwrap_or(u32::MAX)),
            _ => err(
                e.span,
                format!("the {what} of __launch_bounds__ must be a positive integer constant"),
            ),
        };
        let max_threads_per_block = positive(&bounds.max_threads, "threads per block")?;
        let min_blocks_per_multiprocessor = match &bounds.min_blocks {
            Some(e) => Some(positive(e, "blocks per multiprocessor")?),
            None => None,
        };
        Ok(Some(LaunchBounds {
            max_threads_per_block,
            min_blocks_per_multiprocessor,
        }))
    }
}

/// An object's alignment: its type's, raised to the `aligned(n)` written on it (a power of two
/// larger than the type's; nvcc refuses other values, and a smaller one leaves the type's).
pub(super) fn aligned(natural: u64, requested: Option<u64>) -> u64 {
    match requested {
        Some(n) if n.is_power_of_two() => natural.max(n),
        _ => natural,
    }
}
