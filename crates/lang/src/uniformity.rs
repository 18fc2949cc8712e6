//! Which values nvcc can prove the same in every lane of a warp, and so which atomics it issues
//! once per warp.
//!
//! A global atomic whose lanes update one word costs the L2 one update per lane (probe group F:
//! `p_atom_global` with `mask` 0 sends 4,194,304 lanes to one word and takes 3.1 ms, 1.45 clocks
//! each), unless the compiler can prove the address warp-uniform: then it sums the lanes' values
//! in the warp and one lane updates the word (the lectures' `atomicAdd(result, in[i])` makes one
//! update per warp: 32,768 of them take 27.5 us on the H100, h100.json). What counts is what the
//! compiler can prove, not what the lanes happen to compute: `bins[(h & mask) * stride]` with
//! `mask` 0 is the same word in every lane, yet each lane updates it.
//!
//! The analysis is the usual divergence analysis of GPU compilers (Coutinho et al., "Divergence
//! analysis and optimizations", PACT 2011), kept conservative: `threadIdx` varies; a value
//! computed from a varying value varies; a register assigned under a condition that varies, or
//! after a lane may have left early, varies; a load varies if its address does; what a call or an
//! atomic returns varies. Kernel parameters, `blockIdx`, `blockDim`, `gridDim` and constants are
//! uniform. The fixpoint runs over the whole kernel, so a loop-carried value that varies is found.

use super::ir::{Ex, ExKind, FunctionIr, Op, Place, Reg, REG_THREAD_IDX};
use super::span::Span;
use crate::reg_set::RegSet;
use std::collections::HashSet;

/// The source places (line, column) of the atomics of `function` whose address every lane of a
/// warp provably shares.
pub fn uniform_atomic_sites(function: &FunctionIr) -> HashSet<(u32, u32)> {
    let mut analysis = Analysis {
        varying: (REG_THREAD_IDX..REG_THREAD_IDX + 3).collect(),
        uniform_atomics: HashSet::new(),
        changed: false,
    };
    // Each pass can only add varying registers, so the loop ends after at most as many passes
    // as the kernel has registers; real kernels settle in two or three.
    loop {
        analysis.changed = false;
        analysis.uniform_atomics.clear();
        analysis.pass(&function.code);
        if !analysis.changed {
            return analysis.uniform_atomics;
        }
    }
}

struct Analysis {
    varying: RegSet,
    uniform_atomics: HashSet<(u32, u32)>,
    changed: bool,
}

impl Analysis {
    fn pass(&mut self, code: &[Op]) {
        // One entry per open `if` or loop: whether its condition varies.
        let mut control: Vec<bool> = Vec::new();
        // Set once a lane may have left a loop or the kernel under a varying condition: from
        // there on, the lanes that are left are not known to be the whole warp.
        let mut diverged_exit = false;
        for (at, op) in code.iter().enumerate() {
            let under_varying = diverged_exit || control.iter().any(|&v| v);
            match op {
                Op::Eval(e) | Op::Return(Some(e)) => {
                    self.expression(e, under_varying);
                }
                Op::If { cond, .. } => {
                    let varies = self.expression(cond, under_varying);
                    control.push(varies);
                }
                Op::EndIf | Op::LoopEnd => {
                    control.pop();
                }
                Op::LoopBegin { end_at, .. } => {
                    let varies =
                        self.loop_condition_varies(&code[at + 1..*end_at.min(&code.len())]);
                    control.push(varies);
                }
                Op::LoopCond { cond, .. } => {
                    self.expression(cond, under_varying);
                }
                Op::Break | Op::Continue | Op::Return(None) => {
                    if under_varying {
                        diverged_exit = true;
                    }
                }
                Op::Else { .. }
                | Op::ContinuePoint
                | Op::Jump(_)
                | Op::SyncThreads
                | Op::SyncWarp => {}
            }
        }
    }

    /// Whether the condition of the loop whose body is `body` (up to its `LoopEnd`) varies: the
    /// first `LoopCond` at the loop's own level.
    fn loop_condition_varies(&mut self, body: &[Op]) -> bool {
        let mut depth = 0usize;
        for op in body {
            match op {
                Op::LoopBegin { .. } => depth += 1,
                Op::LoopEnd => depth = depth.saturating_sub(1),
                Op::LoopCond { cond, .. } if depth == 0 => return self.reads_varying(cond),
                _ => {}
            }
        }
        false
    }

    /// Whether `e` varies, without recording anything.
    fn reads_varying(&mut self, e: &Ex) -> bool {
        let saved = (self.changed, self.uniform_atomics.clone());
        let before = self.varying.clone();
        let varies = self.expression(e, false);
        self.varying = before;
        (self.changed, self.uniform_atomics) = saved;
        varies
    }

    fn mark(&mut self, reg: Reg, width: u8) {
        for k in 0..Reg::from(width.max(1)) {
            if self.varying.insert(reg + k) {
                self.changed = true;
            }
        }
    }

    /// Visits `e`, marking the registers it assigns; returns whether its value varies.
    fn expression(&mut self, e: &Ex, under_varying: bool) -> bool {
        match &e.kind {
            ExKind::Const(_) | ExKind::AddrOf(_) | ExKind::Fence => false,
            ExKind::Reg(r) => self.varying.contains(r),
            ExKind::Component(value, _)
            | ExKind::Convert { value, .. }
            | ExKind::Unary { value, .. } => self.expression(value, under_varying),
            ExKind::Binary { lhs, rhs, .. }
            | ExKind::Logical { lhs, rhs, .. }
            | ExKind::PtrDiff { lhs, rhs, .. }
            | ExKind::Comma(lhs, rhs) => {
                let a = self.expression(lhs, under_varying);
                self.expression(rhs, under_varying) || a
            }
            ExKind::Select { cond, a, b, .. } => {
                let c = self.expression(cond, under_varying);
                let a = self.expression(a, under_varying);
                self.expression(b, under_varying) || a || c
            }
            ExKind::Fma { a, b, c, .. } => {
                let x = self.expression(a, under_varying);
                let y = self.expression(b, under_varying);
                self.expression(c, under_varying) || x || y
            }
            // A warp primitive's result is another lane's value, or one made of every lane's,
            // and the clock moves on: taken to vary, whatever the operands.
            ExKind::Warp { args, .. } | ExKind::Output { args, .. } => {
                for arg in args {
                    self.expression(arg, under_varying);
                }
                true
            }
            ExKind::Math { args, .. } | ExKind::MakeVector { parts: args, .. } => {
                // Every argument is visited (no short circuit): each may assign registers.
                let mut varies = false;
                for arg in args {
                    varies |= self.expression(arg, under_varying);
                }
                varies
            }
            ExKind::Offset { base, terms, .. } => terms
                .iter()
                .fold(self.expression(base, under_varying), |v, term| {
                    self.expression(&term.index, under_varying) || v
                }),
            ExKind::Load { addr, .. } => self.expression(addr, under_varying),
            ExKind::Assign { place, value } => {
                let varies = self.expression(value, under_varying) || under_varying;
                self.assign(place, varies, under_varying)
            }
            ExKind::Compound { place, value, .. } => {
                let value_varies = self.expression(value, under_varying);
                let place_varies = match place {
                    Place::Reg { reg, .. } => self.varying.contains(reg),
                    Place::Mem { .. } => true,
                };
                self.assign(
                    place,
                    value_varies || place_varies || under_varying,
                    under_varying,
                )
            }
            ExKind::IncDec { place, .. } => {
                let place_varies = match place {
                    Place::Reg { reg, .. } => self.varying.contains(reg),
                    Place::Mem { .. } => true,
                };
                self.assign(place, place_varies || under_varying, under_varying)
            }
            ExKind::Atomic {
                addr,
                value,
                value2,
                ..
            } => {
                if !self.expression(addr, under_varying) {
                    self.uniform_atomics.insert(site(e.span));
                }
                self.expression(value, under_varying);
                if let Some(v2) = value2 {
                    self.expression(v2, under_varying);
                }
                true
            }
            ExKind::Call { args, .. } => {
                for arg in args {
                    self.expression(arg, under_varying);
                }
                true
            }
        }
    }

    fn assign(&mut self, place: &Place, varies: bool, under_varying: bool) -> bool {
        match place {
            Place::Reg { reg, elem } => {
                if varies {
                    self.mark(*reg, elem.n);
                }
            }
            Place::Mem { addr, .. } => {
                self.expression(addr, under_varying);
            }
        }
        varies
    }
}

fn site(span: Span) -> (u32, u32) {
    (span.line, span.col)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile;

    /// Checks whether the one atomic of kernel `k` in `body` is found warp-uniform.
    fn check(body: &str, expected_uniform: bool) {
        let source = format!("__global__ void k(int* out, int n) {{ {body} }}");
        let program = compile(&source, &[]).expect("the kernel compiles");
        let kernel = program.kernel_index("k").expect("kernel k exists");
        let sites = uniform_atomic_sites(&program.functions[kernel]);
        assert_eq!(
            sites.len(),
            usize::from(expected_uniform),
            "{body}: {sites:?}"
        );
    }

    #[test]
    fn a_parameter_address_is_uniform() {
        check("atomicAdd(out, threadIdx.x);", true);
    }

    #[test]
    fn an_address_from_block_indices_and_parameters_is_uniform() {
        check("int j = blockIdx.x * n + 3; atomicAdd(&out[j], 1);", true);
    }

    #[test]
    fn an_address_from_the_thread_index_varies() {
        check("atomicAdd(&out[threadIdx.x & n], 1);", false);
    }

    #[test]
    fn a_value_assigned_under_a_varying_condition_varies() {
        check(
            "int j = 0; if (threadIdx.x < 5) j = 1; atomicAdd(&out[j], 1);",
            false,
        );
    }

    #[test]
    fn a_loop_counter_bounded_by_the_thread_index_varies() {
        check(
            "int j = 0; for (int k = 0; k < threadIdx.x; ++k) j++; atomicAdd(&out[j], 1);",
            false,
        );
    }

    #[test]
    fn a_loop_carried_value_that_picks_up_the_thread_index_varies() {
        check(
            "int j = 0; for (int k = 0; k < n; ++k) { atomicAdd(&out[j], 1); j = threadIdx.x; }",
            false,
        );
    }

    #[test]
    fn a_loop_with_a_uniform_trip_count_keeps_its_counter_uniform() {
        check("for (int k = 0; k < n; ++k) atomicAdd(&out[k], 1);", true);
    }
}
