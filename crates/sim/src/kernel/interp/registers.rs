//! A warp's registers, 32 lanes each, and which of them hold one value in every lane.
//!
//! Much of a kernel's arithmetic computes the same value in every lane of a warp: the indices
//! made of `blockIdx` and the kernel's parameters, a loop counter and its test, a tile's offset
//! (the "uniform" values of GPU compilers, which keep them in uniform registers: NVIDIA's Turing
//! and later have a uniform datapath for them, "Dissecting the NVIDIA Turing T4 GPU via
//! Microbenchmarking", Jia et al., 2019). The interpreter computes such a value once and fills
//! the lanes with it, rather than 32 times.
//!
//! What makes this safe is that a register is known uniform only when a write made it so: every
//! write through `IndexMut` (or through `pair` and `regs3`) forgets it, and only `fill` and
//! `copy` set it, for a register whose 32 lanes they give one value. A write that does not know
//! about uniform values therefore costs speed, never a result. Debug builds check the invariant
//! each time it is asked for (`is_uniform`).
//!
//! Only what the lanes hold counts, not what a compiler could prove (`kernel::uniformity` does
//! that for atomics): a value computed under a partial mask (the last warp of a block of 48
//! threads, a divergent branch) is not uniform here, and is computed lane by lane as before.

use super::lanes::Lanes;
use crate::access::WARP_LANES;
use std::ops::{Index, IndexMut};

#[derive(Debug, Default)]
pub(super) struct Registers {
    lanes: Vec<Lanes>,
    /// `uniform[r]`: every lane of register `r` holds the same bits.
    uniform: Vec<bool>,
}

impl Registers {
    /// `n` registers of zeros (uniform).
    pub(super) fn zeroed(n: usize) -> Registers {
        Registers {
            lanes: vec![[0; WARP_LANES]; n],
            uniform: vec![true; n],
        }
    }

    /// Whether every lane of register `r` holds the same bits, as far as the writes to it show.
    #[inline(always)]
    pub(super) fn is_uniform(&self, r: usize) -> bool {
        let uniform = self.uniform.get(r).copied().unwrap_or(false);
        // The invariant every fast path relies on, checked wherever the tests run (the fuzz
        // target's generated kernels among them).
        debug_assert!(
            !uniform || self.lanes[r].iter().all(|&v| v == self.lanes[r][0]),
            "register {r} is taken as uniform but its lanes differ: {:?}",
            self.lanes[r]
        );
        uniform
    }

    /// The same bits in every lane of register `r`.
    #[inline(always)]
    pub(super) fn fill(&mut self, r: usize, bits: u64) {
        self.lanes[r] = [bits; WARP_LANES];
        self.uniform[r] = true;
    }

    /// Register `to` becomes a copy of register `from`, every lane, and uniform if it is.
    #[inline(always)]
    pub(super) fn copy(&mut self, from: usize, to: usize) {
        self.lanes[to] = self.lanes[from];
        self.uniform[to] = self.uniform[from];
    }

    /// Registers `a` and `b` to read and `dst` to write, when `dst` is neither of them (and all
    /// exist). `dst` is no longer known uniform.
    #[inline(always)]
    pub(super) fn regs3(
        &mut self,
        a: usize,
        b: usize,
        dst: usize,
    ) -> Option<(&Lanes, &Lanes, &mut Lanes)> {
        *self.uniform.get_mut(dst)? = false;
        split_three(&mut self.lanes, a, b, dst)
    }

    /// Register `a` to read and register `dst` to write, when they differ (and both exist).
    /// `dst` is no longer known uniform.
    #[inline(always)]
    pub(super) fn pair(&mut self, a: usize, dst: usize) -> Option<(&Lanes, &mut Lanes)> {
        *self.uniform.get_mut(dst)? = false;
        split_pair(&mut self.lanes, a, dst)
    }
}

/// Registers `a` and `b` to read and `dst` to write, when `dst` is neither of them.
fn split_three(
    regs: &mut [Lanes],
    a: usize,
    b: usize,
    dst: usize,
) -> Option<(&Lanes, &Lanes, &mut Lanes)> {
    if a == dst || b == dst {
        return None;
    }
    let (below, rest) = regs.split_at_mut(dst);
    let (out, above) = rest.split_first_mut()?;
    let (below, above): (&[Lanes], &[Lanes]) = (below, above);
    let pick = |i: usize| {
        if i < dst {
            below.get(i)
        } else {
            above.get(i - dst - 1)
        }
    };
    Some((pick(a)?, pick(b)?, out))
}

/// Register `a` to read and register `dst` to write, when they differ (and both exist).
fn split_pair(regs: &mut [Lanes], a: usize, dst: usize) -> Option<(&Lanes, &mut Lanes)> {
    if a < dst {
        let (below, above) = regs.split_at_mut(dst);
        Some((below.get(a)?, above.first_mut()?))
    } else if a > dst {
        let (below, above) = regs.split_at_mut(a);
        Some((above.first()?, below.get_mut(dst)?))
    } else {
        None
    }
}

impl Index<usize> for Registers {
    type Output = Lanes;

    #[inline(always)]
    fn index(&self, r: usize) -> &Lanes {
        &self.lanes[r]
    }
}

impl IndexMut<usize> for Registers {
    /// A write the caller makes lane by lane: the register is no longer known uniform.
    #[inline(always)]
    fn index_mut(&mut self, r: usize) -> &mut Lanes {
        self.uniform[r] = false;
        &mut self.lanes[r]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether register 1 is known uniform after `write` on registers of zeros.
    fn check(write: impl Fn(&mut Registers), expected: bool) {
        let mut regs = Registers::zeroed(3);
        write(&mut regs);
        assert_eq!(regs.is_uniform(1), expected);
    }

    #[test]
    fn zeroed_registers_are_uniform() {
        check(|_| {}, true);
    }

    #[test]
    fn a_lane_written_alone_forgets_uniform() {
        check(|regs| regs[1][5] = 7, false);
    }

    #[test]
    fn fill_makes_uniform_again() {
        check(
            |regs| {
                regs[1][5] = 7;
                regs.fill(1, 9);
            },
            true,
        );
    }

    #[test]
    fn copy_carries_what_its_source_is() {
        check(
            |regs| {
                regs[0][3] = 1;
                regs.copy(0, 1);
            },
            false,
        );
        check(
            |regs| {
                regs[1][3] = 1;
                regs.copy(2, 1);
            },
            true,
        );
    }

    #[test]
    fn a_pair_or_triple_written_forgets_uniform() {
        check(
            |regs| {
                regs.pair(0, 1);
            },
            false,
        );
        check(
            |regs| {
                regs.regs3(0, 2, 1);
            },
            false,
        );
    }
}
