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
        let Some(bounds) = f.launch_bounds.as_deref() else {
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

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::LaunchBounds;

    #[test]
    fn attributes_are_read_and_ignored_but_aligned_and_launch_bounds() {
        let source = "__device__ __attribute__((always_inline)) inline float twice(float x) { return 2.0f * x; }\n\
            __device__ float same(float x __attribute__((unused))) __attribute__((noinline)) { return x; }\n\
            __global__ void __launch_bounds__(2 * 128, MIN_BLOCKS) k(float* a) {\n\
              __shared__ __attribute__((aligned(16))) float s[4];\n\
              __shared__ float t[3] __attribute__((aligned(64)));\n\
              alignas(32) __shared__ float u[2];\n\
              __shared__ __align__(8) float v[2];\n\
              [[maybe_unused]] int unused = 0;\n\
              if (threadIdx.x < 4) [[likely]] { s[threadIdx.x] = twice(a[threadIdx.x]); }\n\
              t[0] = same(s[0]) + u[0] + v[0];\n\
            }\n\
            __global__ __launch_bounds__(1024) void one(float* a) { a[0] = 1.0f; }";
        let defines = [("MIN_BLOCKS".to_string(), "4".to_string())];
        let program = compile(source, &defines).unwrap_or_else(|d| panic!("{d}"));
        let align = |name: &str| {
            program
                .objects
                .iter()
                .find(|o| o.name == name)
                .map(|o| o.align)
        };
        assert_eq!(
            [align("s"), align("t"), align("u"), align("v")],
            [Some(16), Some(64), Some(32), Some(8)]
        );
        let bounds = |name: &str| program.kernel(name).ok().and_then(|k| k.launch_bounds);
        assert_eq!(
            bounds("k"),
            Some(LaunchBounds {
                max_threads_per_block: 256,
                min_blocks_per_multiprocessor: Some(4),
            })
        );
        assert_eq!(
            bounds("one"),
            Some(LaunchBounds {
                max_threads_per_block: 1024,
                min_blocks_per_multiprocessor: None,
            })
        );
    }

    #[test]
    fn launch_bounds_that_are_not_positive_constants_are_named() {
        let program = compile(
            "__global__ void __launch_bounds__(0) k(int* a) { a[0] = 1; }\n\
             __global__ void __launch_bounds__(256, n) m(int* a, int n) { a[0] = n; }",
            &[],
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let error = |name: &str| program.kernel(name).err().map(|d| d.to_string());
        assert_eq!(
            error("k"),
            Some("1:35: the threads per block of __launch_bounds__ must be a positive integer constant".to_string())
        );
        assert_eq!(
            error("m"),
            Some("2:40: the blocks per multiprocessor of __launch_bounds__ must be a positive integer constant".to_string())
        );
    }
}
