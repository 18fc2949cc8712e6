//! What a compiled kernel asks of the hardware beyond plain loads, stores and arithmetic, and the
//! compute capability that first has it: a launch on a device without a feature its kernel uses
//! is refused before anything runs, as nvcc refuses to compile it for that architecture.
//!
//! Source: CUDA C++ Programming Guide, "Atomic Functions" (each function's availability) and
//! "Compute Capabilities", table "Feature Support per Compute Capability": 32-bit integer atomics
//! on global memory from 1.1; on shared memory, and 64-bit integer atomics on global memory, from
//! 1.2; 64-bit integer atomics on shared memory and `atomicAdd` on `float` from 2.0; `atomicAdd`
//! on `double` and `half2` from 6.0, on `half` from 7.0 and on `__nv_bfloat16` and
//! `__nv_bfloat162` from 8.0; the warp shuffles and votes from 3.0, `__match_any_sync` from 7.0 and
//! `__reduce_*_sync` from 8.0 (the Guide's sections on each); `printf` and `assert` in a kernel
//! from 2.0 ("Formatted Output", "Assertion"); `clock()` on every device ("Time Function");
//! `__syncthreads_count`, `__syncthreads_and` and `__syncthreads_or` from 2.0 ("Synchronization
//! Functions").
//!
//! The scan reads the kernel and every function it calls, whether a branch reaches the call or
//! not: nvcc compiles every call. An atomic's memory space is known where its address is taken
//! of a `__shared__` variable or array (`&partial`, `&bins[i]`); an address from a pointer
//! parameter or a register is taken as global memory, which is where a kernel's pointer
//! parameters point.

use crate::device::{ComputeCapability, DeviceId};
use crate::kernel::ast::Scalar;
use crate::kernel::ir::{AtomicOp, BinOp, Ex, ExKind, ObjectSpace, Op, OutputKind, WarpOp};
use crate::kernel::sema::Program;
use crate::kernel::Span;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A hardware feature a kernel may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Feature {
    /// 32-bit integer atomic functions on global memory.
    GlobalAtomic32,
    /// 32-bit integer atomic functions on shared memory.
    SharedAtomic32,
    /// 64-bit integer atomic functions on global memory.
    GlobalAtomic64,
    /// 64-bit integer atomic functions on shared memory.
    SharedAtomic64,
    /// `atomicAdd` on `float` (global or shared).
    FloatAtomicAdd,
    /// `atomicAdd` on `double`.
    DoubleAtomicAdd,
    /// `atomicAdd` on `half2`.
    HalfPairAtomicAdd,
    /// `atomicAdd` on `half`.
    HalfAtomicAdd,
    /// `atomicAdd` on `__nv_bfloat16` or `__nv_bfloat162`.
    Bfloat16AtomicAdd,
    /// The `*_sync` shuffles and votes (`__shfl_sync`, `__ballot_sync`, `__activemask`).
    WarpShuffle,
    /// `__match_any_sync`.
    WarpMatch,
    /// `__reduce_*_sync`.
    WarpReduce,
    /// `printf` in a kernel.
    Printf,
    /// `assert` in a kernel.
    Assert,
    /// `clock()` and `clock64()`.
    Clock,
    /// `__syncthreads_count`, `__syncthreads_and`, `__syncthreads_or`.
    BarrierVote,
}

impl Feature {
    /// The compute capability that first has the feature (the guide's table).
    pub fn required(self) -> ComputeCapability {
        let (major, minor) = match self {
            Feature::GlobalAtomic32 => (1, 1),
            Feature::SharedAtomic32 | Feature::GlobalAtomic64 => (1, 2),
            Feature::SharedAtomic64 | Feature::FloatAtomicAdd => (2, 0),
            Feature::DoubleAtomicAdd | Feature::HalfPairAtomicAdd => (6, 0),
            Feature::HalfAtomicAdd => (7, 0),
            Feature::Bfloat16AtomicAdd => (8, 0),
            Feature::WarpShuffle => (3, 0),
            Feature::WarpMatch => (7, 0),
            Feature::WarpReduce => (8, 0),
            Feature::Printf | Feature::Assert | Feature::BarrierVote => (2, 0),
            Feature::Clock => (1, 0),
        };
        ComputeCapability { major, minor }
    }

    /// The feature in words, after the function's name.
    pub fn describe(self) -> &'static str {
        match self {
            Feature::GlobalAtomic32 => "on a 32-bit integer in global memory",
            Feature::SharedAtomic32 => "on a 32-bit integer in shared memory",
            Feature::GlobalAtomic64 => "on a 64-bit integer in global memory",
            Feature::SharedAtomic64 => "on a 64-bit integer in shared memory",
            Feature::FloatAtomicAdd => "on a float",
            Feature::DoubleAtomicAdd => "on a double",
            Feature::HalfPairAtomicAdd => "on a half2",
            Feature::HalfAtomicAdd => "on a half",
            Feature::Bfloat16AtomicAdd => "on a __nv_bfloat16 or __nv_bfloat162",
            Feature::WarpShuffle => "(a warp shuffle or vote)",
            Feature::WarpMatch => "(a warp match)",
            Feature::WarpReduce => "(a warp reduction)",
            Feature::Printf => "(formatted output from a kernel)",
            Feature::Assert => "(an assertion in a kernel)",
            Feature::Clock => "(the SM's clock)",
            Feature::BarrierVote => "(a barrier that votes over the block)",
        }
    }

    /// Whether a use of it makes output that a warp or iteration left to reuse would not make:
    /// a line printed, a clock read, an assertion checked (`simulate::plan`); or a value that
    /// every warp of the block makes together, a barrier's vote, which a warp left to reuse
    /// would not cast.
    pub fn makes_output(self) -> bool {
        matches!(
            self,
            Feature::Printf | Feature::Assert | Feature::Clock | Feature::BarrierVote
        )
    }
}

/// One use of a feature in the kernel's source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureUse {
    pub feature: Feature,
    /// The function that uses it, as the source names it (`atomicAdd`).
    pub function: String,
    pub span: Span,
}

/// A feature the kernel uses that the device does not have.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unsupported {
    pub used: FeatureUse,
    pub device: DeviceId,
    pub has: ComputeCapability,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let needs = self.used.feature.required();
        write!(
            f,
            "'{}' {} needs compute capability {}.{}; the {} has {}.{}, so the kernel does not \
             compile for it",
            self.used.function,
            self.used.feature.describe(),
            needs.major,
            needs.minor,
            self.device.label(),
            self.has.major,
            self.has.minor
        )
    }
}

fn atomic_name(op: AtomicOp) -> &'static str {
    match op {
        AtomicOp::Add | AtomicOp::AddPair => "atomicAdd",
        AtomicOp::Sub => "atomicSub",
        AtomicOp::Exch => "atomicExch",
        AtomicOp::Min => "atomicMin",
        AtomicOp::Max => "atomicMax",
        AtomicOp::And => "atomicAnd",
        AtomicOp::Or => "atomicOr",
        AtomicOp::Xor => "atomicXor",
        AtomicOp::Cas => "atomicCAS",
        AtomicOp::Inc => "atomicInc",
        AtomicOp::Dec => "atomicDec",
    }
}

/// The object whose address an address expression starts from, if it is one.
fn base_object(addr: &Ex) -> Option<usize> {
    match &addr.kind {
        ExKind::AddrOf(object) => Some(*object),
        ExKind::Offset { base, .. } => base_object(base),
        _ => None,
    }
}

/// Every feature the kernel `kernel` (an index of `program.functions`) and the functions it
/// calls use, in source order.
pub(crate) fn features_used(program: &Program, kernel: usize) -> Vec<FeatureUse> {
    let mut seen = vec![false; program.functions.len()];
    let mut stack = vec![kernel];
    let mut uses = Vec::new();
    while let Some(index) = stack.pop() {
        let Some(function) = program.functions.get(index) else {
            continue;
        };
        if std::mem::replace(&mut seen[index], true) {
            continue;
        }
        stack.extend(function.callees.iter().copied());
        for op in &function.code {
            let root = match op {
                Op::Eval(e) | Op::If { cond: e, .. } | Op::LoopCond { cond: e, .. } => e,
                Op::Return(Some(e)) => e,
                _ => continue,
            };
            walk(root, &mut |e| {
                if let ExKind::Output { kind, .. } = &e.kind {
                    let (feature, function) = match kind {
                        OutputKind::Printf(_) => (Feature::Printf, "printf"),
                        OutputKind::Assert => (Feature::Assert, "assert"),
                        OutputKind::Clock => (Feature::Clock, "clock"),
                    };
                    uses.push(FeatureUse {
                        feature,
                        function: function.to_string(),
                        span: e.span,
                    });
                    return;
                }
                if let ExKind::Warp { op, .. } = &e.kind {
                    let feature = match op {
                        // The vote's result names the call; its first step adds nothing.
                        WarpOp::BlockVote => return,
                        WarpOp::BlockVoteResult(_) => Feature::BarrierVote,
                        WarpOp::MatchAny => Feature::WarpMatch,
                        WarpOp::Reduce(_) => Feature::WarpReduce,
                        _ => Feature::WarpShuffle,
                    };
                    uses.push(FeatureUse {
                        feature,
                        function: warp_name(*op).to_string(),
                        span: e.span,
                    });
                    return;
                }
                let ExKind::Atomic { op, ty, addr, .. } = &e.kind else {
                    return;
                };
                let shared = base_object(addr)
                    .and_then(|object| program.objects.get(object))
                    .is_some_and(|object| {
                        matches!(
                            object.space,
                            ObjectSpace::Shared | ObjectSpace::DynamicShared
                        )
                    });
                let wide = matches!(ty, Scalar::I64 | Scalar::U64);
                let feature = match (op, ty) {
                    (AtomicOp::Add, Scalar::F32) => Feature::FloatAtomicAdd,
                    (AtomicOp::Add, Scalar::F64) => Feature::DoubleAtomicAdd,
                    (AtomicOp::AddPair, Scalar::F16) => Feature::HalfPairAtomicAdd,
                    (AtomicOp::Add, Scalar::F16) => Feature::HalfAtomicAdd,
                    (_, Scalar::BF16) => Feature::Bfloat16AtomicAdd,
                    _ => match (shared, wide) {
                        (false, false) => Feature::GlobalAtomic32,
                        (true, false) => Feature::SharedAtomic32,
                        (false, true) => Feature::GlobalAtomic64,
                        (true, true) => Feature::SharedAtomic64,
                    },
                };
                uses.push(FeatureUse {
                    feature,
                    function: atomic_name(*op).to_string(),
                    span: e.span,
                });
            });
        }
    }
    crate::sorting::sort_by_key(&mut uses, |each| (each.span.start, each.feature));
    uses
}

/// The name a kernel calls a warp primitive by.
fn warp_name(op: WarpOp) -> &'static str {
    match op {
        WarpOp::Shfl => "__shfl_sync",
        WarpOp::ShflUp => "__shfl_up_sync",
        WarpOp::ShflDown => "__shfl_down_sync",
        WarpOp::ShflXor => "__shfl_xor_sync",
        WarpOp::Ballot => "__ballot_sync",
        WarpOp::Any => "__any_sync",
        WarpOp::All => "__all_sync",
        WarpOp::ActiveMask => "__activemask",
        WarpOp::MatchAny => "__match_any_sync",
        WarpOp::Reduce(_) => "__reduce_*_sync",
        WarpOp::BlockVoteResult(BinOp::Add) => "__syncthreads_count",
        WarpOp::BlockVoteResult(BinOp::BitAnd) => "__syncthreads_and",
        WarpOp::BlockVote | WarpOp::BlockVoteResult(_) => "__syncthreads_or",
    }
}

fn walk(e: &Ex, f: &mut dyn FnMut(&Ex)) {
    f(e);
    for child in e.children() {
        walk(child, f);
    }
}

/// The first feature of `uses` the device lacks, if any.
pub(crate) fn first_unsupported(
    uses: &[FeatureUse],
    device: DeviceId,
    has: ComputeCapability,
) -> Option<Unsupported> {
    uses.iter()
        .find(|each| {
            let needs = each.feature.required();
            (has.major, has.minor) < (needs.major, needs.minor)
        })
        .map(|each| Unsupported {
            used: each.clone(),
            device,
            has,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{Dim3, Value};
    use crate::lesson_kernels::ATOMICS;
    use crate::simulate::{simulate, SimulationError, SimulationInput};

    /// Launches `kernel` in four blocks of 64 threads, with `n` = 256 where it takes an `n` and a
    /// 1 KB buffer for each of its pointers.
    fn launch(source: &str, kernel: &str, device: DeviceId) -> Result<(), SimulationError> {
        let mut input = SimulationInput::new(source, kernel, device.device());
        input.grid = Dim3::new(4, 1, 1);
        input.block = Dim3::new(64, 1, 1);
        let header = source
            .lines()
            .find(|line| line.contains(&format!("void {kernel}(")))
            .expect("the kernel's line");
        if header.contains("int n") {
            input.args = vec![("n".to_string(), Value::Int(256))];
        }
        input.buffers = ["in", "result", "out"]
            .into_iter()
            .filter(|name| header.contains(&format!("* {name}")))
            .map(|name| (name.to_string(), 1024))
            .collect();
        simulate(&input).map(|_| ())
    }

    fn refusal(source: &str, kernel: &str, device: DeviceId) -> String {
        match launch(source, kernel, device) {
            Err(SimulationError::Unsupported(unsupported)) => unsupported.to_string(),
            other => panic!("{kernel} on {device}: expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn the_g80_refuses_both_atomics_lesson_kernels_with_the_reason() {
        assert_eq!(
            refusal(ATOMICS, "sum_global_atomic", DeviceId::G80),
            "'atomicAdd' on a 32-bit integer in global memory needs compute capability 1.1; \
             the G80 has 1.0, so the kernel does not compile for it"
        );
        // The hierarchical kernel's first atomic is the shared one.
        assert!(
            refusal(ATOMICS, "sum_hier_atomic", DeviceId::G80).starts_with(
                "'atomicAdd' on a 32-bit integer in shared memory needs compute capability 1.2"
            )
        );
    }

    #[test]
    fn the_gt200_runs_both_atomics_lesson_kernels() {
        assert_eq!(
            launch(ATOMICS, "sum_global_atomic", DeviceId::Gt200),
            Ok(())
        );
        assert_eq!(launch(ATOMICS, "sum_hier_atomic", DeviceId::Gt200), Ok(()));
    }

    const FLOATS: &str = "__global__ void add_float(float* out) { atomicAdd(&out[0], 1.0f); }\n\
                          __global__ void add_double(double* out) { atomicAdd(&out[0], 1.0); }\n\
                          __global__ void plain(float* out) { out[threadIdx.x] = 1.0f; }\n\
                          __global__ void never(float* out, int n) { if (n > 1000000) atomicAdd(&out[0], 1.0f); }\n";

    #[test]
    fn float_atomic_add_needs_fermi_and_double_needs_pascal() {
        assert!(refusal(FLOATS, "add_float", DeviceId::Gt200)
            .contains("'atomicAdd' on a float needs compute capability 2.0; the GT200 has 1.3"));
        assert_eq!(launch(FLOATS, "add_float", DeviceId::Fermi), Ok(()));
        assert!(refusal(FLOATS, "add_double", DeviceId::Fermi)
            .contains("on a double needs compute capability 6.0; the Fermi has 2.0"));
        assert_eq!(launch(FLOATS, "add_double", DeviceId::V100), Ok(()));
    }

    const HALVES: &str = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n\
                          __global__ void add_half2(half2* out) { atomicAdd(&out[0], __float2half2_rn(1.0f)); }\n\
                          __global__ void add_half(half* out) { atomicAdd(&out[0], __float2half(1.0f)); }\n\
                          __global__ void add_bfloat162(__nv_bfloat162* out) { atomicAdd(&out[0], __float2bfloat162_rn(1.0f)); }\n\
                          __global__ void add_bfloat16(__nv_bfloat16* out) { atomicAdd(&out[0], __float2bfloat16(1.0f)); }\n";

    #[test]
    fn half2_atomic_add_needs_pascal_half_volta_and_bfloat16_ampere() {
        assert_eq!(
            refusal(HALVES, "add_half2", DeviceId::Fermi),
            "'atomicAdd' on a half2 needs compute capability 6.0; the Fermi has 2.0, so the \
             kernel does not compile for it"
        );
        assert_eq!(launch(HALVES, "add_half2", DeviceId::V100), Ok(()));
        assert!(refusal(HALVES, "add_half", DeviceId::Fermi)
            .contains("'atomicAdd' on a half needs compute capability 7.0; the Fermi has 2.0"));
        assert_eq!(launch(HALVES, "add_half", DeviceId::V100), Ok(()));
        for kernel in ["add_bfloat162", "add_bfloat16"] {
            assert!(refusal(HALVES, kernel, DeviceId::V100).contains(
                "'atomicAdd' on a __nv_bfloat16 or __nv_bfloat162 needs compute capability 8.0; \
                 the V100 has 7.0"
            ));
            assert_eq!(launch(HALVES, kernel, DeviceId::A100), Ok(()));
        }
    }

    #[test]
    fn a_kernel_without_atomics_runs_on_the_g80_and_one_never_reached_is_still_refused() {
        assert_eq!(launch(FLOATS, "plain", DeviceId::G80), Ok(()));
        // nvcc compiles the call whether or not a launch reaches it.
        assert!(refusal(FLOATS, "never", DeviceId::Gt200).contains("on a float"));
    }
}
